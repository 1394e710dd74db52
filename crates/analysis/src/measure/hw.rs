//! What the capacity model knows about hardware and models, as documented
//! tables (`docs/capacity.md` lists them with their sources): GPUs by the
//! name DCGM reports (`../shared/reference/gpu-specs.md`), and models by
//! the name vLLM serves, with their parameter counts (MoE: the active ones
//! per token) and KV-cache shape. A model or GPU not in a table is unknown:
//! nothing is guessed from a name's "7B" alone.

/// A GPU's datasheet figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSpec {
    /// Display name.
    pub name: &'static str,
    /// Substrings of DCGM's `modelName` (lower case, dashes for spaces)
    /// that identify it; the first table entry with all of them wins.
    pub matches: &'static [&'static str],
    /// Peak memory bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Dense BF16 (FP16 where no BF16) tensor FLOP/s; `None` where no
    /// datasheet gives it.
    pub peak_flops: Option<f64>,
    /// Memory the driver reports, MiB.
    pub memory_mib: Option<f64>,
    /// Native FP8 tensor cores (Ada, Hopper).
    pub fp8: bool,
}

const fn gpu(
    name: &'static str,
    matches: &'static [&'static str],
    bandwidth_gbs: f64,
    tflops: Option<f64>,
    memory_mib: Option<f64>,
    fp8: bool,
) -> GpuSpec {
    GpuSpec {
        name,
        matches,
        bandwidth: bandwidth_gbs * 1e9,
        peak_flops: match tflops {
            Some(t) => Some(t * 1e12),
            None => None,
        },
        memory_mib,
        fp8,
    }
}

/// The GPU table (gpu-specs.md §1–2; dense figures).
pub const GPUS: &[GpuSpec] = &[
    gpu("H200", &["h200"], 4800.0, Some(989.0), None, true),
    gpu(
        "H100 NVL",
        &["h100", "nvl"],
        3900.0,
        Some(835.0),
        None,
        true,
    ),
    gpu(
        "H100 PCIe",
        &["h100", "pcie"],
        2000.0,
        Some(756.0),
        None,
        true,
    ),
    gpu(
        "H100 SXM",
        &["h100"],
        3350.0,
        Some(989.0),
        Some(81559.0),
        true,
    ),
    gpu(
        "A100 80GB PCIe",
        &["a100", "80gb", "pcie"],
        1935.0,
        Some(312.0),
        None,
        false,
    ),
    gpu(
        "A100 80GB SXM",
        &["a100", "80gb"],
        2039.0,
        Some(312.0),
        Some(81920.0),
        false,
    ),
    gpu(
        "A100 40GB PCIe",
        &["a100", "pcie"],
        1555.0,
        Some(312.0),
        None,
        false,
    ),
    gpu(
        "A100 40GB SXM",
        &["a100"],
        1555.0,
        Some(312.0),
        Some(40960.0),
        false,
    ),
    gpu("L40S", &["l40s"], 864.0, Some(362.05), Some(46068.0), true),
    gpu("L4", &["l4"], 300.0, Some(121.0), Some(23034.0), true),
    gpu("A10G", &["a10g"], 600.0, None, Some(23028.0), false),
    gpu("A10", &["a10"], 600.0, Some(125.0), None, false),
    gpu("A30", &["a30"], 933.0, Some(165.0), None, false),
    gpu("T4", &["t4"], 320.0, Some(65.0), Some(15360.0), false),
    gpu("V100 32GB", &["v100"], 900.0, Some(125.0), None, false),
];

/// The GPU a DCGM `modelName` names, if the table has it.
pub fn find_gpu(model_name: &str) -> Option<&'static GpuSpec> {
    let n = model_name.to_ascii_lowercase().replace(' ', "-");
    // Words of the name, so "l4" does not match "l40s".
    let words: Vec<&str> = n.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    GPUS.iter().find(|g| {
        g.matches
            .iter()
            .all(|m| words.contains(m) || (m.len() > 3 && n.contains(m)))
    })
}

/// A model's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelSpec {
    /// Display name.
    pub name: &'static str,
    /// Lower-case keys, one of which must appear in the served name as a
    /// whole word sequence.
    pub keys: &'static [&'static str],
    /// Parameters.
    pub params: f64,
    /// Parameters active per token (MoE); equal to `params` when dense.
    pub active_params: f64,
    /// Layers, KV heads and head dimension, for KV bytes per token
    /// (`None` for attention the formula does not fit, such as MLA).
    pub kv_shape: Option<(u32, u32, u32)>,
}

const fn model(
    name: &'static str,
    keys: &'static [&'static str],
    params_b: f64,
    active_b: f64,
    kv_shape: Option<(u32, u32, u32)>,
) -> ModelSpec {
    ModelSpec {
        name,
        keys,
        params: params_b * 1e9,
        active_params: active_b * 1e9,
        kv_shape,
    }
}

// long: a table, one documented model per entry (docs/capacity.md lists them with sources)
/// The model table (parameter counts and `config.json` shapes as
/// published by each model's authors).
pub const MODELS: &[ModelSpec] = &[
    model(
        "Qwen2.5-0.5B",
        &["qwen2.5-0.5b"],
        0.49,
        0.49,
        Some((24, 2, 64)),
    ),
    model(
        "Qwen2.5-1.5B",
        &["qwen2.5-1.5b"],
        1.54,
        1.54,
        Some((28, 2, 128)),
    ),
    model(
        "Qwen2.5-3B",
        &["qwen2.5-3b"],
        3.09,
        3.09,
        Some((36, 2, 128)),
    ),
    model(
        "Qwen2.5-7B",
        &["qwen2.5-7b"],
        7.62,
        7.62,
        Some((28, 4, 128)),
    ),
    model(
        "Qwen2.5-14B",
        &["qwen2.5-14b"],
        14.7,
        14.7,
        Some((48, 8, 128)),
    ),
    model(
        "Qwen2.5-32B",
        &["qwen2.5-32b"],
        32.5,
        32.5,
        Some((64, 8, 128)),
    ),
    model(
        "Qwen2.5-72B",
        &["qwen2.5-72b"],
        72.7,
        72.7,
        Some((80, 8, 128)),
    ),
    model("Qwen3-8B", &["qwen3-8b"], 8.19, 8.19, Some((36, 8, 128))),
    model(
        "Qwen3-30B-A3B",
        &["qwen3-30b-a3b"],
        30.5,
        3.3,
        Some((48, 4, 128)),
    ),
    model(
        "Qwen3-235B-A22B",
        &["qwen3-235b-a22b"],
        235.0,
        22.0,
        Some((94, 4, 128)),
    ),
    model(
        "Llama-3.2-1B",
        &["llama-3.2-1b"],
        1.24,
        1.24,
        Some((16, 8, 64)),
    ),
    model(
        "Llama-3.2-3B",
        &["llama-3.2-3b"],
        3.21,
        3.21,
        Some((28, 8, 128)),
    ),
    model(
        "Llama-3.1-8B",
        &[
            "llama-3.1-8b",
            "llama-3-8b",
            "meta-llama-3.1-8b",
            "meta-llama-3-8b",
        ],
        8.03,
        8.03,
        Some((32, 8, 128)),
    ),
    model(
        "Llama-3.1-70B",
        &[
            "llama-3.1-70b",
            "llama-3.3-70b",
            "llama-3-70b",
            "meta-llama-3-70b",
        ],
        70.6,
        70.6,
        Some((80, 8, 128)),
    ),
    model(
        "Llama-3.1-405B",
        &["llama-3.1-405b"],
        405.8,
        405.8,
        Some((126, 8, 128)),
    ),
    model(
        "Mistral-7B",
        &["mistral-7b"],
        7.24,
        7.24,
        Some((32, 8, 128)),
    ),
    model(
        "Mixtral-8x7B",
        &["mixtral-8x7b"],
        46.7,
        12.9,
        Some((32, 8, 128)),
    ),
    model(
        "Mixtral-8x22B",
        &["mixtral-8x22b"],
        141.0,
        39.0,
        Some((56, 8, 128)),
    ),
    model(
        "Gemma-2-9B",
        &["gemma-2-9b"],
        9.24,
        9.24,
        Some((42, 8, 256)),
    ),
    model(
        "Gemma-2-27B",
        &["gemma-2-27b"],
        27.2,
        27.2,
        Some((46, 16, 128)),
    ),
    model(
        "Phi-3-mini",
        &["phi-3-mini"],
        3.82,
        3.82,
        Some((32, 32, 96)),
    ),
    model(
        "DeepSeek-V3",
        &["deepseek-v3", "deepseek-r1"],
        671.0,
        37.0,
        None,
    ),
];

/// The model a served name names, if the table has it: a key must appear
/// with no letter or digit right after it ("qwen2.5-3b" is not in
/// "qwen2.5-32b").
pub fn find_model(served: &str) -> Option<&'static ModelSpec> {
    let n = served.to_ascii_lowercase().replace(['_', ' '], "-");
    MODELS.iter().find(|m| {
        m.keys.iter().any(|k| {
            n.match_indices(k).any(|(i, _)| {
                let after = n[i + k.len()..].chars().next();
                let before = n[..i].chars().last();
                after.is_none_or(|c| !c.is_ascii_alphanumeric())
                    && before.is_none_or(|c| !c.is_ascii_alphanumeric())
            })
        })
    })
}

/// Bytes per weight the served name or the engine arguments imply, with
/// how it was read: FP8 and INT8 1, 4-bit schemes 0.5 (plus their scales,
/// about 6 %), otherwise BF16 2.
pub fn bytes_per_param(served: &str, quantization: Option<&str>) -> (f64, &'static str) {
    let s = format!(
        "{} {}",
        served.to_ascii_lowercase(),
        quantization.unwrap_or("").to_ascii_lowercase()
    );
    if ["awq", "gptq", "int4", "w4a16", "4bit", "nf4", "marlin"]
        .iter()
        .any(|k| s.contains(k))
    {
        (0.53, "4-bit weights (name or --quantization)")
    } else if ["fp8", "int8", "w8a8", "w8a16", "8bit"]
        .iter()
        .any(|k| s.contains(k))
    {
        (1.0, "8-bit weights (name or --quantization)")
    } else {
        (2.0, "16-bit weights (BF16/FP16, vLLM's default)")
    }
}

impl ModelSpec {
    /// KV-cache bytes per token at `bytes` per element: layers × (K and V)
    /// × KV heads × head dimension × bytes.
    pub fn kv_bytes_per_token(&self, bytes: f64) -> Option<f64> {
        self.kv_shape
            .map(|(l, h, d)| f64::from(l) * 2.0 * f64::from(h) * f64::from(d) * bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_by_dcgm_name() {
        assert_eq!(find_gpu("NVIDIA A10G").map(|g| g.name), Some("A10G"));
        assert_eq!(find_gpu("NVIDIA L4").map(|g| g.name), Some("L4"));
        assert_eq!(find_gpu("NVIDIA L40S").map(|g| g.name), Some("L40S"));
        assert_eq!(
            find_gpu("NVIDIA A100-SXM4-80GB").map(|g| g.name),
            Some("A100 80GB SXM")
        );
        assert_eq!(
            find_gpu("NVIDIA A100 80GB PCIe").map(|g| g.name),
            Some("A100 80GB PCIe")
        );
        assert_eq!(
            find_gpu("NVIDIA H100 80GB HBM3").map(|g| g.name),
            Some("H100 SXM")
        );
        assert_eq!(find_gpu("Tesla T4").map(|g| g.name), Some("T4"));
        assert_eq!(find_gpu("NVIDIA-A10G").map(|g| g.name), Some("A10G"));
        assert_eq!(find_gpu("cpu"), None);
    }

    #[test]
    fn models_by_served_name() {
        let m = find_model("Qwen/Qwen2.5-3B-Instruct").expect("3B");
        assert_eq!(m.name, "Qwen2.5-3B");
        assert_eq!(m.kv_bytes_per_token(2.0), Some(36864.0));
        assert_eq!(
            find_model("Qwen/Qwen2.5-32B-Instruct").map(|m| m.name),
            Some("Qwen2.5-32B")
        );
        assert_eq!(
            find_model("meta-llama/Llama-3.1-8B-Instruct").map(|m| m.name),
            Some("Llama-3.1-8B")
        );
        assert_eq!(
            find_model("meta-llama/Llama-3.1-70B-Instruct").map(|m| m.name),
            Some("Llama-3.1-70B")
        );
        let moe = find_model("mistralai/Mixtral-8x7B-Instruct-v0.1").expect("moe");
        assert!(moe.active_params < moe.params);
        assert_eq!(find_model("tiny-random-llama"), None);
        assert_eq!(bytes_per_param("Qwen/Qwen2.5-7B-Instruct-FP8", None).0, 1.0);
        assert_eq!(
            bytes_per_param("Qwen/Qwen2.5-7B-Instruct-AWQ", None).0,
            0.53
        );
        assert_eq!(bytes_per_param("m", Some("fp8")).0, 1.0);
        assert_eq!(bytes_per_param("Qwen/Qwen2.5-7B-Instruct", None).0, 2.0);
    }
}
