//! Scenario files: a small declarative TOML description of a deployment, its
//! workload and what happens during the capture. `samples/scenarios/*.toml`
//! are the committed ones; every field is documented in
//! `samples/scenarios/README.md`.

use serde::{Deserialize, Serialize};

use crate::hw::{Gpu, Model};
use crate::rng::Rng;

/// A whole scenario.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// File-name-safe name; the bundle is `<name>.zip`.
    pub name: String,
    /// One paragraph for `samples/README.md`.
    pub description: String,
    /// Seed of every random stream.
    pub seed: u64,
    /// Capture start, RFC 3339 UTC (`2026-11-16T14:00:00Z`).
    pub start: String,
    /// Capture length, seconds.
    pub duration_s: f64,
    /// Seconds the server runs (same workload as at the start) before the
    /// capture starts, so counters are not at zero and caches are warm.
    #[serde(default = "default_warmup")]
    pub warmup_s: f64,
    /// Scrape interval, seconds.
    #[serde(default = "default_interval")]
    pub scrape_interval_s: f64,
    /// Capture imperfections.
    #[serde(default)]
    pub capture: Capture,
    /// The vLLM deployment.
    pub server: Server,
    /// dcgm-exporter.
    #[serde(default)]
    pub exporter: Exporter,
    /// The load.
    pub workload: Workload,
    /// Things that happen during the capture.
    #[serde(default)]
    pub events: Vec<Event>,
}

fn default_warmup() -> f64 {
    120.0
}
fn default_interval() -> f64 {
    15.0
}

/// Capture imperfections.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// Each scrape happens up to ± this many seconds off its slot.
    #[serde(default)]
    pub jitter_s: f64,
    /// Scrapes that fail (recorded in the manifest with `up: 0`).
    #[serde(default)]
    pub missed: Vec<Missed>,
    /// Periods in which a target cannot be reached at all.
    #[serde(default)]
    pub down: Vec<Down>,
}

/// One failed scrape: the slot nearest `at_s` of `target`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Missed {
    /// Target name (`vllm-0`, `dcgm-0`).
    pub target: String,
    /// Seconds from the capture start.
    pub at_s: f64,
    /// The error text the collector recorded.
    #[serde(default = "default_miss_error")]
    pub error: String,
}

fn default_miss_error() -> String {
    "curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received".into()
}

/// A target unreachable from `from_s` to `to_s`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Down {
    /// Target name.
    pub target: String,
    /// Seconds from the capture start.
    pub from_s: f64,
    /// Seconds from the capture start.
    pub to_s: f64,
}

/// The vLLM deployment.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    /// vLLM release, e.g. `0.23.0`; decides names, labels and buckets.
    pub vllm_version: String,
    /// Model ID (see `hw::MODELS`).
    pub model: String,
    /// Weight bytes per parameter: 2 for bf16, 1 for FP8.
    #[serde(default = "default_weight_bytes")]
    pub weight_bytes: f64,
    /// GPU key (see `hw::GPUS`).
    pub gpu: String,
    /// Independent replicas (one vLLM target each).
    #[serde(default = "one")]
    pub replicas: u32,
    /// GPUs per replica.
    #[serde(default = "one")]
    pub tensor_parallel: u32,
    /// How a load balancer spreads requests over replicas.
    #[serde(default)]
    pub router: Router,
    /// `--max-model-len`.
    pub max_model_len: u32,
    /// `--max-num-seqs`.
    #[serde(default = "default_max_num_seqs")]
    pub max_num_seqs: u32,
    /// `--max-num-batched-tokens`.
    #[serde(default = "default_batched_tokens")]
    pub max_num_batched_tokens: u32,
    /// `--gpu-memory-utilization`.
    #[serde(default = "default_gmu")]
    pub gpu_memory_utilization: f64,
    /// `--block-size`.
    #[serde(default = "default_block")]
    pub block_size: u32,
    /// `--enable-prefix-caching`.
    #[serde(default = "yes")]
    pub enable_prefix_caching: bool,
    /// Async scheduling: the scheduler plans step k+1 while step k runs, so
    /// a request admitted at a step boundary computes one step later.
    /// Default: on from vLLM 0.11.
    #[serde(default)]
    pub async_scheduling: Option<bool>,
    /// Engine timing calibration.
    #[serde(default)]
    pub perf: Perf,
    /// Stale load gauges, as a real vLLM 0.23 with `--api-server-count 2`
    /// and a CPU-starved engine exported them: `vllm:num_requests_running`
    /// and `vllm:num_requests_waiting` read 0 at every scrape but one in
    /// `stale_gauges` (the rest of `/metrics` is true). `0`: off.
    #[serde(default)]
    pub stale_gauges: u32,
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_weight_bytes() -> f64 {
    2.0
}
fn default_max_num_seqs() -> u32 {
    256
}
fn default_batched_tokens() -> u32 {
    2048
}
fn default_gmu() -> f64 {
    0.9
}
fn default_block() -> u32 {
    16
}

/// Load-balancing policy in front of several replicas.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    /// Each request to the next replica in turn.
    #[default]
    RoundRobin,
    /// Every request of a session to the same replica.
    Session,
}

/// The engine's timing model. A step takes the fixed overhead, plus the
/// larger of memory time and compute time, plus `decode_token_ms` per
/// decoded sequence, plus `mixed_batch_ms` when the step carries prefill,
/// plus the all-reduce. Memory time is (weights and KV read) over
/// (bandwidth × `mem_efficiency`); compute time is FLOPs over (peak ×
/// `prefill_efficiency`). Small batches are memory-bound (the weights are
/// streamed once per step whatever the batch); long prefills are
/// compute-bound.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Perf {
    /// Fixed host-side cost of a step, ms.
    pub step_overhead_ms: f64,
    /// Share of peak bandwidth the decode kernels reach.
    pub mem_efficiency: f64,
    /// Extra cost per decoded sequence (sampling, attention launch), ms.
    pub decode_token_ms: f64,
    /// Share of peak tensor FLOP/s reached when a step is compute-bound.
    pub prefill_efficiency: f64,
    /// Extra cost of a step that carries a prefill chunk (piecewise CUDA
    /// graphs instead of a full graph), ms.
    pub mixed_batch_ms: f64,
    /// Per step all-reduce cost with tensor parallelism, ms per extra GPU.
    pub allreduce_ms: f64,
    /// API server time before the engine sees a request (tokenise, IPC), ms.
    pub frontend_in_ms: f64,
    /// Time from the engine's token to the client (detokenise, stream), ms.
    pub frontend_out_ms: f64,
    /// Memory vLLM's profiling reserves outside the KV pool inside its
    /// budget: activations, CUDA graphs, sampler and compile workspaces, MiB.
    pub activation_mib: f64,
    /// CUDA context and allocator slack outside vLLM's budget, MiB.
    pub context_mib: f64,
}

impl Default for Perf {
    fn default() -> Self {
        Perf {
            step_overhead_ms: 0.63,
            mem_efficiency: 0.72,
            decode_token_ms: 0.08,
            prefill_efficiency: 0.5,
            mixed_batch_ms: 6.0,
            allreduce_ms: 1.6,
            frontend_in_ms: 6.0,
            frontend_out_ms: 1.0,
            activation_mib: 4000.0,
            context_mib: 930.0,
        }
    }
}

/// dcgm-exporter settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Exporter {
    /// Whether profiling (`DCGM_FI_PROF_*`) fields are collected.
    pub prof: bool,
    /// `-c/--collect-interval`, ms.
    pub collect_interval_ms: u32,
    /// Label spelling of the host: `Hostname` (≤ 4.5.3) or `hostname`.
    pub hostname_label: String,
    /// Whether `FB_RESERVED` is exported.
    pub fb_reserved: bool,
    /// Driver version printed as the `DCGM_FI_DRIVER_VERSION` label.
    pub driver_version: String,
}

impl Default for Exporter {
    fn default() -> Self {
        Exporter {
            prof: true,
            collect_interval_ms: 30_000,
            hostname_label: "Hostname".into(),
            fb_reserved: true,
            driver_version: "570.124.06".into(),
        }
    }
}

/// The load.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// How requests arrive.
    pub arrivals: Arrivals,
    /// Prompt length in tokens (the part after the shared prefix).
    pub prompt_tokens: Dist,
    /// Tokens of a system prompt every request starts with.
    #[serde(default)]
    pub shared_prefix_tokens: u32,
    /// The client's `max_tokens`.
    pub max_tokens: Dist,
    /// How long the answer would be if nothing cut it (ends on stop).
    pub natural_output_tokens: Dist,
    /// Multi-turn chat: each turn's prompt is the whole conversation so far.
    #[serde(default)]
    pub session_turns: Option<u32>,
    /// Share of requests the server ends on `repetition` (0.17+).
    #[serde(default)]
    pub repetition_share: f64,
}

/// Arrival processes.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// N users, each sending its next request when the last one finished
    /// and a think time passed.
    Closed {
        /// `(at_s, users)` steps, seconds from the capture start.
        phases: Vec<(f64, u32)>,
        /// Think time between a response and the next request, ms.
        think_ms: Dist,
    },
    /// Poisson arrivals.
    Open {
        /// `(at_s, requests per second)` steps.
        phases: Vec<(f64, f64)>,
        /// Diurnal modulation: the rate is multiplied by
        /// `trough + (1 − trough) × (1 + cos(2π (hour − peak_hour)/24))/2`.
        #[serde(default)]
        diurnal: Option<Diurnal>,
    },
}

/// Daily load curve.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Diurnal {
    /// UTC hour of the peak.
    pub peak_hour: f64,
    /// Rate at the trough relative to the peak.
    pub trough: f64,
}

/// A distribution of a non-negative quantity.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    /// Always this value.
    Fixed(f64),
    /// Uniform on `[lo, hi]`.
    Uniform(f64, f64),
    /// Log-normal: median, sigma of the log, clamped to `[min, max]`.
    Lognormal {
        /// Median.
        median: f64,
        /// Sigma of the log.
        sigma: f64,
        /// Lower clamp.
        min: f64,
        /// Upper clamp.
        max: f64,
    },
}

impl Dist {
    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform(lo, hi) => rng.uniform(lo, hi),
            Dist::Lognormal {
                median,
                sigma,
                min,
                max,
            } => rng.lognormal(median, sigma).clamp(min, max),
        }
    }

    /// One draw rounded to a whole number of tokens, at least 1.
    pub fn tokens(&self, rng: &mut Rng) -> u32 {
        self.sample(rng).round().max(1.0) as u32
    }
}

/// Something that happens during the capture.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A replica's pod restarts: requests in flight fail, the server is
    /// unreachable for `down_s`, then starts from zero counters.
    Restart {
        /// Replica index.
        replica: u32,
        /// Seconds from the capture start.
        at_s: f64,
        /// Seconds until `/metrics` answers again.
        down_s: f64,
    },
    /// A period with trouble: shares of the requests arriving in it.
    Burst {
        /// Seconds from the capture start.
        from_s: f64,
        /// Seconds from the capture start.
        to_s: f64,
        /// The client disconnects mid-answer (vLLM records no per-request
        /// stats for these, only token counters).
        #[serde(default)]
        client_disconnect: f64,
        /// The engine aborts the request (`finished_reason="abort"`).
        #[serde(default)]
        abort: f64,
        /// The engine fails the request (`finished_reason="error"` from
        /// 0.13; HTTP 5xx).
        #[serde(default)]
        error: f64,
        /// The gateway rejects the request before the engine (HTTP 4xx).
        #[serde(default)]
        rejected: f64,
    },
}

/// A scenario with its references resolved.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The file's content.
    pub scenario: Scenario,
    /// The model.
    pub model: &'static Model,
    /// The GPU.
    pub gpu: &'static Gpu,
    /// vLLM version as numbers.
    pub version: crate::Version,
    /// Capture start, Unix ms.
    pub start_ms: i64,
}

impl Scenario {
    /// Parses a scenario file.
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Checks references and ranges.
    pub fn resolve(self) -> Result<Resolved, String> {
        let model = Model::find(&self.server.model).ok_or_else(|| {
            format!(
                "unknown model {:?}; known: {:?}",
                self.server.model,
                crate::hw::MODELS.iter().map(|m| m.id).collect::<Vec<_>>()
            )
        })?;
        let gpu = Gpu::find(&self.server.gpu).ok_or_else(|| {
            format!(
                "unknown gpu {:?}; known: {:?}",
                self.server.gpu,
                crate::hw::GPUS.iter().map(|g| g.key).collect::<Vec<_>>()
            )
        })?;
        let version = crate::Version::parse(&self.server.vllm_version)
            .ok_or_else(|| format!("bad vllm_version {:?}", self.server.vllm_version))?;
        let start_ms = parse_rfc3339_utc(&self.start)
            .ok_or_else(|| format!("bad start {:?}: want 2026-11-16T14:00:00Z", self.start))?;
        if !(self.duration_s > 0.0 && self.scrape_interval_s > 0.0 && self.warmup_s >= 0.0) {
            return Err(
                "duration_s and scrape_interval_s must be positive, warmup_s not negative".into(),
            );
        }
        if self.server.replicas == 0 || self.server.tensor_parallel == 0 {
            return Err("replicas and tensor_parallel must be at least 1".into());
        }
        if !self
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!("name {:?} must be [A-Za-z0-9_-]", self.name));
        }
        Ok(Resolved {
            scenario: self,
            model,
            gpu,
            version,
            start_ms,
        })
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` to Unix ms.
fn parse_rfc3339_utc(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'Z'
    {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d, h, mi, se) = (
        n(0..4)?,
        n(5..7)?,
        n(8..10)?,
        n(11..13)?,
        n(14..16)?,
        n(17..19)?,
    );
    let days = crate::days_from_civil(y, mo as u32, d as u32);
    Some(((days * 24 + h) * 60 + mi) * 60_000 + se * 1000)
}
