//! The models and GPUs the simulator knows: architecture figures of the
//! models (public model cards) and datasheet figures of the GPUs
//! (`../shared/reference/gpu-specs.md`), plus the few coefficients of the
//! activity and power model, which are calibrated, not measured.

/// A served model's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The Hugging Face ID, also vLLM's default `model_name`.
    pub id: &'static str,
    /// Parameter count.
    pub params: f64,
    /// Transformer layers.
    pub layers: u32,
    /// Key/value heads (grouped-query attention).
    pub kv_heads: u32,
    /// Dimension of one head.
    pub head_dim: u32,
    /// Hidden size.
    pub hidden: u32,
}

/// The models a scenario may name.
pub const MODELS: &[Model] = &[
    Model {
        id: "Qwen/Qwen2.5-3B-Instruct",
        params: 3.09e9,
        layers: 36,
        kv_heads: 2,
        head_dim: 128,
        hidden: 2048,
    },
    Model {
        id: "Qwen/Qwen2.5-7B-Instruct",
        params: 7.62e9,
        layers: 28,
        kv_heads: 4,
        head_dim: 128,
        hidden: 3584,
    },
    Model {
        id: "meta-llama/Llama-3.1-8B-Instruct",
        params: 8.03e9,
        layers: 32,
        kv_heads: 8,
        head_dim: 128,
        hidden: 4096,
    },
];

impl Model {
    /// Looks a model up by ID.
    pub fn find(id: &str) -> Option<&'static Model> {
        MODELS.iter().find(|m| m.id == id)
    }

    /// KV-cache bytes per token: layers × (K and V) × KV heads × head dim ×
    /// bytes per element.
    pub fn kv_bytes_per_token(&self, kv_dtype_bytes: f64) -> f64 {
        f64::from(self.layers)
            * 2.0
            * f64::from(self.kv_heads)
            * f64::from(self.head_dim)
            * kv_dtype_bytes
    }
}

/// A GPU's datasheet figures and the activity/power coefficients.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// Short key used in scenario files.
    pub key: &'static str,
    /// NVML `modelName`.
    pub model_name: &'static str,
    /// Driver-visible memory, MiB (what FB used + free + reserved adds up to).
    pub memory_mib: u64,
    /// Memory the driver keeps for itself (`FB_RESERVED`), MiB.
    pub reserved_mib: u64,
    /// Peak memory bandwidth, bytes per second.
    pub bandwidth: f64,
    /// BF16 dense tensor throughput, FLOP/s.
    pub bf16_flops: f64,
    /// Enforced power limit, W.
    pub power_limit_w: f64,
    /// Board power when idle with a model loaded, W.
    pub idle_w: f64,
    /// Boost SM clock and idle SM clock, MHz.
    pub sm_clock_mhz: (u32, u32),
    /// Memory clock, MHz.
    pub mem_clock_mhz: u32,
    /// HBM boards report a memory temperature and remapped rows; GDDR boards
    /// print memory temperature 0 and have no row remapping.
    pub hbm: bool,
}

/// The GPUs a scenario may name.
pub const GPUS: &[Gpu] = &[
    Gpu {
        key: "a10g",
        model_name: "NVIDIA A10G",
        memory_mib: 23028,
        reserved_mib: 443,
        bandwidth: 600e9,
        bf16_flops: 70e12,
        power_limit_w: 300.0,
        idle_w: 58.0,
        sm_clock_mhz: (1710, 210),
        mem_clock_mhz: 6251,
        hbm: false,
    },
    Gpu {
        key: "l4",
        model_name: "NVIDIA L4",
        memory_mib: 23034,
        reserved_mib: 437,
        bandwidth: 300e9,
        bf16_flops: 121e12,
        power_limit_w: 72.0,
        idle_w: 16.0,
        sm_clock_mhz: (2040, 210),
        mem_clock_mhz: 6251,
        hbm: false,
    },
    Gpu {
        key: "a100-80gb",
        model_name: "NVIDIA A100-SXM4-80GB",
        memory_mib: 81920,
        reserved_mib: 629,
        bandwidth: 2039e9,
        bf16_flops: 312e12,
        power_limit_w: 400.0,
        idle_w: 62.0,
        sm_clock_mhz: (1410, 210),
        mem_clock_mhz: 1593,
        hbm: true,
    },
    Gpu {
        key: "h100",
        model_name: "NVIDIA H100 80GB HBM3",
        memory_mib: 81559,
        reserved_mib: 545,
        bandwidth: 3350e9,
        bf16_flops: 989e12,
        power_limit_w: 700.0,
        idle_w: 72.0,
        sm_clock_mhz: (1980, 345),
        mem_clock_mhz: 2619,
        hbm: true,
    },
];

impl Gpu {
    /// Looks a GPU up by its scenario key.
    pub fn find(key: &str) -> Option<&'static Gpu> {
        GPUS.iter().find(|g| g.key == key)
    }
}
