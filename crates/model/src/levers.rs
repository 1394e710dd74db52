//! Levers: the settings a recommendation turns, and which way, and where
//! each knob exists ([`Knob::platforms`]).
//!
//! Every recommendation declares its levers (a [`Knob`] and a
//! [`Direction`]); the checks that keep advice consistent are made on
//! them, never on words, by the analysis crate's advice layer
//! (`advise::levers`):
//!
//! - **Opposites.** No report holds two levers on the same knob in opposite
//!   directions: the lower-ranked recommendation is withheld.
//! - **The server's state.** Each knob says, per direction, what in the
//!   capture forbids turning it (`State::blocks`): more sequences while
//!   the KV cache is full, a longer `max_tokens` while the KV cache runs
//!   out, smaller prefill chunks while time to first token is in doubt...
//! - **The platform.** Each knob says where it exists ([`Knob::platforms`]):
//!   no `--gpu-memory-utilization` or tensor parallelism on a CPU server.
//! - **The configuration.** A KV pool fixed by `num_gpu_blocks_override`
//!   does not grow with memory; prefix caching already on is not turned on.
//!
//! `docs/report-schema.md` has the table.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::report::Deployment;

/// What the server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// A GPU was seen (DCGM, nvidia-smi) or the manifest names one.
    Gpu,
    /// The manifest says CPU and no GPU was seen.
    Cpu,
    /// Nothing says (a plain scrape of `/metrics` without DCGM).
    Unknown,
}

impl Platform {
    /// The platform as the bundle tells it.
    pub fn of(d: &Deployment) -> Platform {
        match d.device.as_deref() {
            _ if d.gpus > 0 => Platform::Gpu,
            Some("cpu") => Platform::Cpu,
            Some(_) => Platform::Gpu,
            None if d.gpu_model.is_some() => Platform::Gpu,
            None => Platform::Unknown,
        }
    }
}

macro_rules! knobs {
    ($( $(#[$m:meta])* $var:ident = $s:literal, )*) => {
        /// A setting a recommendation can turn.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum Knob {
            $( $(#[$m])* #[serde(rename = $s)] $var, )*
        }

        impl Knob {
            /// Every knob.
            pub const ALL: &'static [Knob] = &[$(Knob::$var,)*];

            /// The JSON string.
            pub fn as_str(self) -> &'static str {
                match self { $(Knob::$var => $s,)* }
            }
        }
    };
}

knobs! {
    /// `--max-num-seqs`: sequences the engine runs at once.
    MaxNumSeqs = "max_num_seqs",
    /// `--max-num-batched-tokens`: the token budget of one engine step.
    MaxNumBatchedTokens = "max_num_batched_tokens",
    /// The KV cache's memory: `--gpu-memory-utilization` on a GPU,
    /// `VLLM_CPU_KVCACHE_SPACE` on a CPU.
    KvCacheMemory = "kv_cache_memory",
    /// Bytes per KV element (`--kv-cache-dtype fp8`: down).
    KvCacheBytes = "kv_cache_bytes",
    /// Bytes per weight (FP8 or INT4 weights: down).
    WeightBytes = "weight_bytes",
    /// `--tensor-parallel-size`.
    TensorParallel = "tensor_parallel",
    /// `--num-gpu-blocks-override` (down: removed, the pool sized by memory).
    BlocksOverride = "num_gpu_blocks_override",
    /// Replicas behind the load balancer (or an autoscaler's target).
    Replicas = "replicas",
    /// `--enable-prefix-caching` (up: on).
    PrefixCaching = "prefix_caching",
    /// `--block-size`.
    BlockSize = "block_size",
    /// `--api-server-count`, or the API server's CPU.
    ApiServers = "api_servers",
    /// Prefix- or session-aware routing across replicas (up: on).
    PrefixRouting = "prefix_routing",
    /// Prefill and decode on separate workers (up: on).
    Disaggregation = "disaggregation",
    /// The client's `max_tokens`.
    ClientMaxTokens = "client_max_tokens",
    /// The client's time-out.
    ClientTimeout = "client_timeout",
    /// Prompt tokens per request (trimmed history, retrieved text).
    PromptTokens = "prompt_tokens",
    /// Shared text first in the prompt, byte-identical (up: standardised).
    PromptPrefixOrder = "prompt_prefix_order",
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way a lever turns a knob (on is up, off is down).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// More, larger, on.
    Up,
    /// Fewer, smaller, off.
    Down,
}

impl Direction {
    /// The other way.
    pub fn opposite(self) -> Direction {
        match self {
            Direction::Up => Direction::Down,
            Direction::Down => Direction::Up,
        }
    }
}

/// A knob turned one way.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub struct Lever {
    /// The setting.
    pub knob: Knob,
    /// Which way.
    pub direction: Direction,
}

/// Shorthand for a lever.
pub const fn up(knob: Knob) -> Lever {
    Lever {
        knob,
        direction: Direction::Up,
    }
}

/// Shorthand for a lever.
pub const fn down(knob: Knob) -> Lever {
    Lever {
        knob,
        direction: Direction::Down,
    }
}

impl Knob {
    /// Where the knob exists. A knob for GPUs only is also offered where the
    /// platform is unknown (most vLLM servers run on GPUs), never on a CPU
    /// server.
    pub fn platforms(self) -> &'static [Platform] {
        const ALL: &[Platform] = &[Platform::Gpu, Platform::Cpu, Platform::Unknown];
        const GPU: &[Platform] = &[Platform::Gpu, Platform::Unknown];
        match self {
            Knob::KvCacheBytes | Knob::WeightBytes | Knob::TensorParallel => GPU,
            _ => ALL,
        }
    }

    /// How the knob is set on this platform, in the words of the action.
    pub fn setting(self, platform: Platform) -> &'static str {
        match (self, platform) {
            (Knob::MaxNumSeqs, _) => "--max-num-seqs",
            (Knob::MaxNumBatchedTokens, _) => "--max-num-batched-tokens",
            (Knob::KvCacheMemory, Platform::Gpu) => "--gpu-memory-utilization",
            (Knob::KvCacheMemory, Platform::Cpu) => "VLLM_CPU_KVCACHE_SPACE",
            (Knob::KvCacheMemory, Platform::Unknown) => {
                "the KV cache's memory (--gpu-memory-utilization on a GPU, VLLM_CPU_KVCACHE_SPACE on a CPU)"
            }
            (Knob::KvCacheBytes, _) => "--kv-cache-dtype fp8",
            (Knob::WeightBytes, _) => "FP8 or INT4 weights",
            (Knob::TensorParallel, _) => "--tensor-parallel-size",
            (Knob::BlocksOverride, _) => "--num-gpu-blocks-override",
            (Knob::Replicas, _) => "replicas",
            (Knob::PrefixCaching, _) => "--enable-prefix-caching",
            (Knob::BlockSize, _) => "--block-size",
            (Knob::ApiServers, _) => "--api-server-count",
            (Knob::PrefixRouting, _) => "prefix-aware routing",
            (Knob::Disaggregation, _) => "disaggregated prefill",
            (Knob::ClientMaxTokens, _) => "the client's max_tokens",
            (Knob::ClientTimeout, _) => "the client's time-out",
            (Knob::PromptTokens, _) => "prompt tokens",
            (Knob::PromptPrefixOrder, _) => "the prompt's shared prefix",
        }
    }
}

impl Lever {
    /// The lever in words, for a reader: "a higher --max-num-seqs", "an FP8
    /// KV cache (--kv-cache-dtype fp8)", "more replicas".
    pub fn words(self, platform: Platform) -> String {
        use Direction::{Down, Up};
        let setting = self.knob.setting(platform);
        match (self.knob, self.direction) {
            (Knob::MaxNumSeqs | Knob::BlockSize, Up) => format!("a higher {setting}"),
            (Knob::MaxNumSeqs | Knob::BlockSize, Down) => format!("a lower {setting}"),
            (Knob::MaxNumBatchedTokens, Up) => format!("a larger {setting}"),
            (Knob::MaxNumBatchedTokens, Down) => format!("a smaller {setting}"),
            (Knob::KvCacheMemory, Up) => format!("more KV cache memory ({setting})"),
            (Knob::KvCacheMemory, Down) => format!("less KV cache memory ({setting})"),
            (Knob::KvCacheBytes, Down) => "an FP8 KV cache (--kv-cache-dtype fp8)".into(),
            (Knob::KvCacheBytes, Up) => "a wider KV cache dtype".into(),
            (Knob::WeightBytes, Down) => "FP8 or INT4 weights".into(),
            (Knob::WeightBytes, Up) => "wider weights".into(),
            (Knob::TensorParallel, Up) => format!("more tensor parallelism ({setting})"),
            (Knob::TensorParallel, Down) => format!("less tensor parallelism ({setting})"),
            (Knob::BlocksOverride, Down) => "no --num-gpu-blocks-override".into(),
            (Knob::BlocksOverride, Up) => "a larger --num-gpu-blocks-override".into(),
            (Knob::Replicas, Up) => "more replicas".into(),
            (Knob::Replicas, Down) => "fewer replicas".into(),
            (Knob::PrefixCaching, Up) => format!("prefix caching on ({setting})"),
            (Knob::PrefixCaching, Down) => "prefix caching off".into(),
            (Knob::ApiServers, Up) => format!("more API server processes ({setting})"),
            (Knob::ApiServers, Down) => format!("fewer API server processes ({setting})"),
            (Knob::PrefixRouting, Up) => "prefix-aware routing".into(),
            (Knob::PrefixRouting, Down) => "routing without regard to prefixes".into(),
            (Knob::Disaggregation, Up) => "prefill and decode on separate workers".into(),
            (Knob::Disaggregation, Down) => "prefill and decode on the same workers".into(),
            (Knob::ClientMaxTokens, Up) => "a higher max_tokens in the client".into(),
            (Knob::ClientMaxTokens, Down) => "a lower max_tokens in the client".into(),
            (Knob::ClientTimeout, Up) => "a longer client time-out".into(),
            (Knob::ClientTimeout, Down) => "a shorter client time-out".into(),
            (Knob::PromptTokens, Up) => "more prompt tokens".into(),
            (Knob::PromptTokens, Down) => "fewer prompt tokens".into(),
            (Knob::PromptPrefixOrder, Up) => "the shared prompt text first, byte-identical".into(),
            (Knob::PromptPrefixOrder, Down) => "the shared prompt text anywhere".into(),
        }
    }

    /// True when `other` turns the same knob the other way.
    pub fn opposes(self, other: Lever) -> bool {
        self.knob == other.knob && self.direction == other.direction.opposite()
    }
}
