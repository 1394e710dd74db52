//! The report model: what the analyses produce, serialised as the report's
//! JSON (`docs/report-schema.md`; the JSON Schema in
//! `docs/report-schema.json` is generated from these types). Fields are only
//! ever added; `schema_version` changes if one ever has to change meaning.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::ids::{
    Addresses, FindingId, FollowUpId, GpuId, LookNextId, PhaseKind, QualityKind, RecId, Scope,
    SloId, StepId, TimelineKind,
};
pub use crate::levers::{Direction, Knob, Lever, Platform};

/// Version of the JSON layout. 2: `queue_at_concurrency` is judged in
/// requests in flight (was ms of queue time); SLO `cannot_tell`; the
/// verdict, phases, quantile bounds, `addresses` and snippet checks.
pub const SCHEMA_VERSION: u32 = 2;

/// Windows (or a load phase's windows) within 10 % of a concurrency that
/// must prove a latency objective before the report says it was met up to
/// that concurrency. A model constant because the renderers say it ("3 are
/// needed") beside the capacity figures the analysis made with it.
pub const MEETING_MIN_WINDOWS: usize = 3;

/// Consecutive scrapes with waiting > 0 that make "queued" (one alone is
/// an arrival caught between two engine steps): the queue objective, and
/// the forecast that reads its replays the same way.
pub const QUEUED_CONSECUTIVE_SCRAPES: usize = 2;
/// Where queueing starts is the fewest in flight seen queued this many
/// times (the third-lowest sighting): one odd reading does not set it.
pub const QUEUEING_SEEN_TIMES: usize = 3;

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// Version of this layout.
    pub schema_version: u32,
    /// The tool version that wrote it.
    pub tool_version: String,
    /// What was read.
    pub bundle: BundleInfo,
    /// What was deployed, as far as the data says.
    pub deployment: Deployment,
    /// The settings the report was made with.
    pub settings: Settings,
    /// The bottom line: healthy, at risk or failing, and why.
    pub verdict: Verdict,
    /// The capture split into stretches that differ: load levels,
    /// restarts, down time, error bursts, idle time.
    pub phases: Vec<Phase>,
    /// How much more fits, what binds first, the hardware floor, achieved
    /// utilisation, cost, and what-ifs.
    pub capacity: Capacity,
    /// Per-window rows, per replica and for the fleet.
    pub rows: Rows,
    /// The whole capture, fleet-wide, with the same fields as the rows.
    pub summary: Summary,
    /// The six analyses in the walk-through's order.
    pub analyses: Vec<Analysis>,
    /// The four SLOs.
    pub slo: Vec<SloResult>,
    /// What to do, ranked by the effect on what fails.
    pub recommendations: Vec<Recommendation>,
    /// Rules that fired but are not shown, each with the reason (a lever
    /// this capture forbids, an opposite lever ranked higher, nothing in
    /// doubt to address).
    #[serde(default)]
    pub withheld: Vec<Withheld>,
    /// Alert rules and autoscaling triggers for this server (its metric
    /// names), each checked against the capture: what to watch whatever
    /// the verdict.
    pub alerts: Vec<Snippet>,
    /// The moments that matter, in time order.
    pub timeline: Vec<TimelineEvent>,
    /// Hardware faults the GPUs reported (XIDs, uncorrectable memory
    /// errors, clocks held down by heat or a hardware signal), per GPU and
    /// kind; empty when none did. Each one puts the verdict at risk.
    #[serde(default)]
    pub gpu_faults: Vec<GpuFault>,
    /// What the figures rest on and what is missing.
    pub data_quality: DataQuality,
    /// What each change would give: a model of this server calibrated on
    /// the capture, back-tested on its windows, replayed under changed
    /// settings and loads (`docs/forecast.md`).
    #[serde(default)]
    pub forecast: crate::forecast::Forecast,
}

/// The bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BundleInfo {
    /// File or folder name as given.
    pub name: String,
    /// SHA-256 of the bundle's bytes (hex), when the shell computed it.
    pub sha256: Option<String>,
    /// `zip`, `tar.gz`, `files`, ...
    pub container: String,
    /// Files read as scrapes.
    pub scrape_files: usize,
    /// First sample, ms since the Unix epoch.
    pub start_ms: Option<i64>,
    /// Last sample, ms since the Unix epoch.
    pub end_ms: Option<i64>,
    /// `end_ms − start_ms`.
    pub duration_ms: Option<i64>,
    /// Usual scrape interval (median over targets), ms.
    pub scrape_interval_ms: Option<i64>,
    /// The window width of a pushdown export (`collect.sh --window`), ms:
    /// the figures come from per-window statistics Prometheus computed,
    /// not from every scrape, and `scrape_interval_ms` is that width.
    /// Absent for scrapes and raw exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushdown_ms: Option<i64>,
    /// Every target.
    pub targets: Vec<TargetInfo>,
}

/// One scraped endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetInfo {
    /// Target name.
    pub name: String,
    /// `vllm`, `dcgm` or `other`.
    pub kind: String,
    /// Successful scrapes.
    pub scrapes: usize,
    /// Failed scrapes (manifest `up: 0`).
    pub failed_scrapes: usize,
    /// Usual interval, ms.
    pub interval_ms: i64,
}

/// The deployment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Deployment {
    /// `v0`, `v1` or `unknown`.
    pub vllm_engine: String,
    /// Release range inferred from the data (`0.20.0 – 0.29.x`).
    pub vllm_versions: Option<String>,
    /// The release the manifest states, if any.
    pub vllm_version_stated: Option<String>,
    /// Served model (`model_name` label or manifest).
    pub model: Option<String>,
    /// GPU model (`modelName` label or manifest).
    pub gpu_model: Option<String>,
    /// GPUs seen.
    pub gpus: usize,
    /// vLLM replicas (targets).
    pub replicas: Vec<String>,
    /// GPU UUID → replica, from the manifest or pod/node labels.
    pub gpu_to_replica: BTreeMap<String, Scope>,
    /// Engine arguments from the manifest.
    pub engine_args: BTreeMap<String, String>,
    /// What vLLM runs on, as the manifest states it (`gpu`, `cpu`);
    /// `null` when unstated.
    pub device: Option<String>,
    /// Every model the replicas serve (`model_name`), the busiest first.
    /// With more than one, the report judges only the one marked `judged`
    /// (one scorecard over two models would mix their latencies).
    #[serde(default)]
    pub models: Vec<ModelServed>,
    /// What the server was told: the key settings first (missing ones with
    /// no value), then every other label of vLLM's info families and every
    /// other flag, each with its source (`docs/capacity.md`).
    #[serde(default)]
    pub configuration: Vec<ConfigSetting>,
}

/// One setting of the server's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigSetting {
    /// vLLM's name for it (`max_num_batched_tokens`), or the label's or
    /// flag's own name.
    pub name: String,
    /// The flag that sets it (`--max-num-batched-tokens`), where one does.
    pub flag: Option<String>,
    /// The value as its source states it; an inferred bound reads `≥ 129`;
    /// `null` when nothing states or bounds it.
    pub value: Option<String>,
    /// Where the value comes from; `null` when missing.
    pub source: Option<ConfigSource>,
    /// A setting the judgement reads (shown first, even when missing).
    pub key: bool,
    /// What else was read: the evidence of an inferred bound, a source
    /// that states another value.
    pub note: Option<String>,
}

/// Where a setting's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfigSource {
    /// A label of `vllm:cache_config_info`.
    CacheConfigInfo,
    /// A label of `vllm:kv_offload_config_info`.
    KvOffloadConfigInfo,
    /// A label of `vllm:simple_kv_offload_info`.
    SimpleKvOffloadInfo,
    /// A label of `vllm:lora_requests_info` (its latest series).
    LoraRequestsInfo,
    /// vLLM's `/server_info` (`VLLM_SERVER_DEV_MODE=1`).
    ServerInfo,
    /// The command line `collect.sh` read (`meta/cmdline/`).
    CommandLine,
    /// The manifest's `engine_args`.
    Manifest,
    /// vLLM's `/v1/models`.
    Models,
    /// vLLM's `/version`.
    Version,
    /// A bound the metrics give (the row's note says which).
    Inferred,
}

impl ConfigSource {
    /// In words, for the table.
    pub fn describe(self) -> &'static str {
        match self {
            ConfigSource::CacheConfigInfo => "vllm:cache_config_info",
            ConfigSource::KvOffloadConfigInfo => "vllm:kv_offload_config_info",
            ConfigSource::SimpleKvOffloadInfo => "vllm:simple_kv_offload_info",
            ConfigSource::LoraRequestsInfo => "vllm:lora_requests_info",
            ConfigSource::ServerInfo => "/server_info",
            ConfigSource::CommandLine => "the command line",
            ConfigSource::Manifest => "the manifest",
            ConfigSource::Models => "/v1/models",
            ConfigSource::Version => "/version",
            ConfigSource::Inferred => "inferred from the metrics",
        }
    }
}

/// A model the bundle serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelServed {
    /// The `model_name` label.
    pub model: String,
    /// The replicas serving it.
    pub replicas: Vec<String>,
    /// Requests it finished over the capture.
    pub finished: f64,
    /// The report's figures, objectives and advice are this model's.
    pub judged: bool,
}

impl Deployment {
    /// What it runs on, for a title: `1 × NVIDIA L4`, `CPU` (a CPU server
    /// as the manifest states it), `2 × GPU (model not reported)`, or `no
    /// GPU metrics` when nothing says.
    pub fn hardware(&self) -> String {
        match (self.gpus, self.device.as_deref(), &self.gpu_model) {
            (0, Some("cpu"), _) => "CPU".into(),
            (0, _, Some(m)) => format!("{m} (no GPU metrics)"),
            (0, _, None) => "hardware not reported (no GPU metrics)".into(),
            (n, _, Some(m)) => format!("{n} × {m}"),
            (n, _, None) => format!("{n} × GPU (model not reported)"),
        }
    }

    /// The release, for a header: what the server states (collect.sh asks
    /// `/version`) with the range its metrics fit, or the inferred range.
    pub fn version_text(&self) -> String {
        match &self.vllm_version_stated {
            Some(v) => format!(
                "{v} (as the server says; {} engine, its metrics fit {})",
                self.vllm_engine,
                self.vllm_versions.as_deref().unwrap_or("no known release")
            ),
            None => format!(
                "{} ({} engine, inferred)",
                self.vllm_versions.as_deref().unwrap_or("version unknown"),
                self.vllm_engine
            ),
        }
    }
}

/// How a report is made: the window, the SLO objectives and what the user
/// knows that `/metrics` does not say. The one definition both shells use:
/// the CLI builds it from its flags, the page deserialises it from its form
/// (missing fields take the defaults), and the report echoes it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Settings {
    /// Window width, ms (15 s to 1 h).
    pub window_ms: i64,
    /// SLO thresholds.
    pub slo: SloThresholds,
    /// The weights' size in bytes, when the user knows it better than the
    /// model table (`--model-bytes`).
    pub model_bytes: Option<f64>,
    /// Tokens every prompt shares at its start (`--shared-prefix-tokens`):
    /// prompt text is not in `/metrics`.
    pub shared_prefix_tokens: Option<f64>,
    /// What one GPU costs per hour (`--gpu-hour-cost`).
    pub gpu_hour_cost: Option<f64>,
}

/// The default window width, ms: the query engine's
/// (`vllm_lens_query::grid::DEFAULT_WINDOW_MS`, held equal by a test in the
/// analysis crate; the model reads no bundle, so it does not depend on it).
pub const DEFAULT_WINDOW_MS: i64 = 60_000;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            window_ms: DEFAULT_WINDOW_MS,
            slo: SloThresholds::default(),
            model_bytes: None,
            shared_prefix_tokens: None,
            gpu_hour_cost: None,
        }
    }
}

/// SLO thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SloThresholds {
    /// TTFT p95 must stay below this, ms.
    pub ttft_p95_ms: f64,
    /// Inter-token latency p95 must stay below this, ms.
    pub itl_p95_ms: f64,
    /// No queueing at this many concurrent requests.
    pub queue_concurrency: f64,
    /// A window's mean queue time at or above this counts as queueing, ms.
    /// vLLM schedules a new request at the next engine step, so even an
    /// idle server shows up to half a step (tens of ms) of queue time.
    pub queue_negligible_ms: f64,
    /// Errors + aborts must stay below this share of finished requests, %.
    pub error_abort_pct: f64,
}

impl Default for SloThresholds {
    fn default() -> SloThresholds {
        SloThresholds {
            ttft_p95_ms: 300.0,
            itl_p95_ms: 50.0,
            queue_concurrency: 12.0,
            queue_negligible_ms: 50.0,
            error_abort_pct: 0.5,
        }
    }
}

/// Where a row belongs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RowKey {
    /// Window start, ms since the Unix epoch.
    pub window_start_ms: i64,
    /// Window end (exclusive), ms.
    pub window_end_ms: i64,
    /// Replica (target name), or `fleet` for the aggregate.
    pub replica: Scope,
}

/// Step 1: where latency goes (averages per finished request, ms).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    /// Average time queued before first scheduled.
    pub queue_ms: Option<f64>,
    /// Average prefill time.
    pub prefill_ms: Option<f64>,
    /// Average decode time.
    pub decode_ms: Option<f64>,
    /// Average inference time (prefill + decode).
    pub inference_ms: Option<f64>,
    /// Average end-to-end latency.
    pub e2e_ms: Option<f64>,
    /// Average time to first token.
    pub ttft_ms: Option<f64>,
    /// TTFT median.
    pub ttft_p50_ms: Option<f64>,
    /// TTFT 95th percentile.
    pub ttft_p95_ms: Option<f64>,
    /// TTFT 99th percentile.
    pub ttft_p99_ms: Option<f64>,
    /// Average inter-token latency.
    pub inter_token_ms: Option<f64>,
    /// Inter-token latency median.
    pub itl_p50_ms: Option<f64>,
    /// Inter-token latency 95th percentile.
    pub itl_p95_ms: Option<f64>,
    /// Inter-token latency 99th percentile.
    pub itl_p99_ms: Option<f64>,
    /// Decode's share of queue + prefill + decode, %.
    pub decode_share_pct: Option<f64>,
    /// The bucket each quantile above lies in, ms: the interpolated
    /// figure is Prometheus' guess inside it.
    pub bounds: LatencyBounds,
}

/// A histogram bucket: the quantile is above `low` and at most `high`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bounds {
    /// Lower edge (0 for the first bucket).
    pub low: f64,
    /// Upper edge; `null` for the `+Inf` bucket (the quantile is above
    /// `low`, by how much the buckets cannot say).
    pub high: Option<f64>,
}

/// The buckets of the latency quantiles, ms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyBounds {
    /// TTFT median.
    pub ttft_p50_ms: Option<Bounds>,
    /// TTFT p95.
    pub ttft_p95_ms: Option<Bounds>,
    /// TTFT p99.
    pub ttft_p99_ms: Option<Bounds>,
    /// Inter-token median.
    pub itl_p50_ms: Option<Bounds>,
    /// Inter-token p95.
    pub itl_p95_ms: Option<Bounds>,
    /// Inter-token p99.
    pub itl_p99_ms: Option<Bounds>,
}

/// Step 2: engine efficiency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Efficiency {
    /// Prefix-cache hits ÷ queries in the window, %.
    pub prefix_cache_hit_pct: Option<f64>,
    /// Cached prompt tokens ÷ prompt tokens, %.
    pub cached_prompt_share_pct: Option<f64>,
    /// Average tokens per engine step.
    pub tokens_per_iteration: Option<f64>,
    /// Engine steps per second that finished a prompt: the
    /// `vllm:iteration_tokens_total` observations above the bucket that
    /// holds the window's most running requests (a step without a prompt
    /// carries one token per decoding request; vLLM counts a prompt's tokens
    /// in the step that gives its first token). `null` without the
    /// histogram or the running gauge, or where the prompts are too short to
    /// stand out (under twice that bucket's bound).
    #[serde(default)]
    pub prompt_steps_per_sec: Option<f64>,
    /// Generated tokens per second.
    pub gen_tokens_per_sec: Option<f64>,
    /// Prompt tokens per second.
    pub prompt_tokens_per_sec: Option<f64>,
    /// Running requests, window maximum.
    pub running: Option<f64>,
    /// Running requests, window mean.
    pub running_avg: Option<f64>,
    /// Waiting requests, window maximum.
    pub waiting: Option<f64>,
    /// Waiting requests, window mean.
    pub waiting_avg: Option<f64>,
    /// KV-cache block pool in use, window maximum, %.
    pub kv_cache_pct: Option<f64>,
    /// KV-cache block pool in use, window mean, %.
    pub kv_cache_pct_avg: Option<f64>,
    /// Preemptions per minute.
    pub preemptions_per_min: Option<f64>,
}

/// Step 3: the workload's shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Workload {
    /// Finished requests per minute.
    pub requests_per_min: Option<f64>,
    /// Average prompt tokens per finished request.
    pub avg_prompt_tokens: Option<f64>,
    /// Average generated tokens per finished request.
    pub avg_generated_tokens: Option<f64>,
    /// Average `max_tokens` of requests that set it.
    pub avg_max_tokens: Option<f64>,
    /// Generated ÷ prompt tokens (token flow).
    pub gen_to_prompt_ratio: Option<f64>,
    /// Average generated ÷ average `max_tokens`, %.
    pub max_tokens_utilisation_pct: Option<f64>,
}

/// Step 4: outcomes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcomes {
    /// Finished requests per minute by `finished_reason`.
    pub completions_per_min: BTreeMap<String, f64>,
    /// (error + abort) ÷ finished, %.
    pub error_abort_pct: Option<f64>,
    /// stop ÷ length.
    pub stop_to_length_ratio: Option<f64>,
    /// HTTP requests per minute by status class (`2xx`, `4xx`, `5xx`).
    pub http_per_min_by_status: BTreeMap<String, f64>,
    /// HTTP requests per minute by handler and status class.
    pub http_per_min_by_handler: BTreeMap<String, BTreeMap<String, f64>>,
    /// (4xx + 5xx) ÷ all HTTP requests, %.
    pub http_error_pct: Option<f64>,
    /// Estimated client disconnects per minute: HTTP 2xx on the completion
    /// handlers minus finished requests, clamped at 0 (a disconnected
    /// stream still answered 200 but never finished in the engine's
    /// statistics). `null` without `http_requests_total`.
    pub client_disconnects_per_min: Option<f64>,
    /// The same as a count over the window (or the capture).
    pub client_disconnects: Option<f64>,
}

/// Step 5: the GPU as witness (per GPU or aggregated).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gpu {
    /// GPU utilisation (any kernel running), max, %.
    pub gpu_util_pct: Option<f64>,
    /// Mean.
    pub gpu_util_pct_avg: Option<f64>,
    /// Memory-copy utilisation, max, %.
    pub mem_copy_util_pct: Option<f64>,
    /// Mean.
    pub mem_copy_util_pct_avg: Option<f64>,
    /// VRAM used, max, MiB.
    pub vram_used_mib: Option<f64>,
    /// Mean.
    pub vram_used_mib_avg: Option<f64>,
    /// VRAM free, minimum, MiB.
    pub vram_free_mib: Option<f64>,
    /// Mean.
    pub vram_free_mib_avg: Option<f64>,
    /// VRAM used ÷ (used + free + reserved), max, %.
    pub vram_used_pct: Option<f64>,
    /// Mean.
    pub vram_used_pct_avg: Option<f64>,
    /// Power, max, W.
    pub power_w: Option<f64>,
    /// Mean.
    pub power_w_avg: Option<f64>,
    /// GPU temperature, max, °C.
    pub temp_c: Option<f64>,
    /// Mean.
    pub temp_c_avg: Option<f64>,
    /// SM clock, max, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// Mean.
    pub sm_clock_mhz_avg: Option<f64>,
    /// Graphics engine active, max, %.
    pub gr_engine_active_pct: Option<f64>,
    /// Mean.
    pub gr_engine_active_pct_avg: Option<f64>,
    /// Tensor pipes active, max, %.
    pub tensor_active_pct: Option<f64>,
    /// Mean.
    pub tensor_active_pct_avg: Option<f64>,
    /// DRAM interface active, max, %.
    pub dram_active_pct: Option<f64>,
    /// Mean.
    pub dram_active_pct_avg: Option<f64>,
    /// Energy consumed in the window, J.
    pub energy_j: Option<f64>,
}

/// Step 6: KV pool against VRAM, and energy efficiency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Memory {
    /// KV-cache pool in use, max, %.
    pub kv_cache_pct: Option<f64>,
    /// Mean.
    pub kv_cache_pct_avg: Option<f64>,
    /// VRAM used, max, %.
    pub vram_used_pct: Option<f64>,
    /// Mean.
    pub vram_used_pct_avg: Option<f64>,
    /// Generated tokens per second per watt of mean power.
    pub tokens_per_watt: Option<f64>,
    /// Generated tokens per joule of the energy counter.
    pub tokens_per_joule: Option<f64>,
}

/// A row of one section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Row<T> {
    /// Window and replica.
    #[serde(flatten)]
    pub key: RowKey,
    /// The figures.
    #[serde(flatten)]
    pub fields: T,
}

/// A GPU row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuRow {
    /// Window and replica.
    #[serde(flatten)]
    pub key: RowKey,
    /// GPU UUID, or `all` for an aggregate.
    pub gpu: GpuId,
    /// The figures.
    #[serde(flatten)]
    pub fields: Gpu,
}

/// Every per-window row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rows {
    /// Step 1.
    pub latency: Vec<Row<Latency>>,
    /// Step 2.
    pub efficiency: Vec<Row<Efficiency>>,
    /// Step 3.
    pub workload: Vec<Row<Workload>>,
    /// Step 4.
    pub outcomes: Vec<Row<Outcomes>>,
    /// Step 5, per GPU and aggregated.
    pub gpu: Vec<GpuRow>,
    /// Step 6.
    pub memory: Vec<Row<Memory>>,
}

/// The whole capture, fleet-wide.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Capture start and end, `fleet`.
    pub window_start_ms: i64,
    /// See above.
    pub window_end_ms: i64,
    /// Step 1.
    pub latency: Latency,
    /// Step 2.
    pub efficiency: Efficiency,
    /// Step 3.
    pub workload: Workload,
    /// Step 4.
    pub outcomes: Outcomes,
    /// Step 5, all GPUs.
    pub gpu: Gpu,
    /// Step 6.
    pub memory: Memory,
}

/// How a finding reads.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Something is wrong.
    Fail,
    /// Worth attention.
    Warn,
    /// Good.
    Pass,
    /// For understanding.
    Info,
    /// The data cannot say (a metric is missing).
    NotApplicable,
}

/// A figure with the metric it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// What the figure is.
    pub label: String,
    /// The figure.
    pub value: Option<f64>,
    /// Its unit.
    pub unit: String,
    /// The metric names as captured.
    pub metrics: Vec<String>,
    /// Window starts it refers to (empty: the whole capture).
    pub windows: Vec<i64>,
}

/// One finding of an analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Stable identifier (`latency.decode_dominates`).
    pub id: FindingId,
    /// How it reads.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// What it means, in plain words.
    pub explanation: String,
    /// The figures behind it.
    pub evidence: Vec<Evidence>,
    /// What to do (empty when nothing).
    pub action: String,
}

/// One of the six analyses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Analysis {
    /// `latency`, `efficiency`, `workload`, `outcomes`, `hardware`, `memory`.
    pub id: StepId,
    /// Its heading.
    pub title: String,
    /// Its findings, most severe first.
    pub findings: Vec<Finding>,
}

/// An SLO's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SloStatus {
    /// Met.
    Pass,
    /// Missed.
    Fail,
    /// The capture never put it to the test (or the metric is missing).
    NotExercised,
    /// The histogram's buckets cannot decide: the objective lies inside
    /// the bucket that holds the quantile (see `bounds`).
    CannotTell,
}

/// One SLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SloResult {
    /// `ttft_p95`, `itl_p95`, `queue_at_concurrency`, `error_abort_rate`.
    pub id: SloId,
    /// What it says.
    pub title: String,
    /// Verdict.
    pub status: SloStatus,
    /// The measured value over the capture. Quantiles: Prometheus'
    /// interpolation (read `bounds`). `queue_at_concurrency`: where
    /// queueing begins (`queueing_starts_at`), or the most requests in
    /// flight seen without queueing.
    pub value: Option<f64>,
    /// The threshold.
    pub threshold: f64,
    /// The margin the data proves, in the SLO's unit (percentage points
    /// for a percentage; negative when missed). Quantiles: from the bucket
    /// edges (`threshold − bounds.high` when met, `threshold − bounds.low`
    /// when missed), `null` when the buckets cannot tell.
    pub headroom: Option<f64>,
    /// The unit of value, threshold and headroom.
    pub unit: String,
    /// Quantile SLOs: the bucket the quantile lies in, in the SLO's unit.
    pub bounds: Option<Bounds>,
    /// `queue_at_concurrency`: the most requests a replica ran at once
    /// while others queued (`--max-num-seqs` or the KV cache); `null` when
    /// nothing queued.
    pub admission_cap: Option<f64>,
    /// `queue_at_concurrency`: the fewest requests in flight (running +
    /// waiting) seen with queueing; `null` when nothing queued.
    pub queueing_starts_at: Option<f64>,
    /// `queue_at_concurrency`: what decided `queueing_starts_at`; `null`
    /// when nothing queued.
    #[serde(default)]
    pub queueing_decided_by: Option<QueueingDecidedBy>,
    /// Windows that missed it, proven (start times, ms).
    pub failing_windows: Vec<i64>,
    /// Windows whose own buckets could not tell (start times, ms).
    pub cannot_tell_windows: Vec<i64>,
    /// Windows left out of the judgement (warm-up), start times, ms.
    pub excluded_windows: Vec<i64>,
    /// Where a missed objective comes from: its parts (means), largest
    /// first. Empty when met.
    pub breakdown: Vec<Evidence>,
    /// How it was judged.
    pub explanation: String,
}

/// What decided where queueing starts (`queueing_starts_at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueingDecidedBy {
    /// The admission cap + 1: fewer than three sightings of queueing had
    /// as few in flight as the cap's requests and one waiting.
    AdmissionCap,
    /// Requests waiting on two or more consecutive scrapes, the third-lowest
    /// such sighting.
    WaitingScrapes,
    /// A window's mean queue time at or above the negligible level.
    QueueTime,
}

/// How sure a recommendation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// The evidence is direct.
    High,
    /// The evidence is indirect or partial.
    Medium,
    /// A heuristic.
    Low,
}

/// A ready-to-paste snippet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Snippet {
    /// `prometheus-rule` or `keda`.
    pub kind: String,
    /// The alert's name, or what the trigger scales on.
    pub name: String,
    /// The text.
    pub text: String,
    /// The PromQL expression (an alert's `expr`, a KEDA trigger's `query`).
    pub expr: String,
    /// What the snippet would have done over this capture, evaluated by
    /// the tool's own engine.
    pub check: SnippetCheck,
}

/// A snippet evaluated over the capture at each window's end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SnippetCheck {
    /// Windows at whose end it fired: an alert firing (its `expr` held for
    /// its `for:` at every evaluation), a trigger asking for more than one
    /// replica per replica now running.
    pub windows_fired: usize,
    /// Windows evaluated.
    pub windows_total: usize,
    /// Ends of the windows it fired at, ms.
    pub fired_at: Vec<i64>,
    /// How it was evaluated.
    pub method: String,
}

/// One thing to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Recommendation {
    /// Stable identifier.
    pub id: RecId,
    /// What it addresses: failing objectives (SLO ids) first, then
    /// `capacity`, `efficiency`, `cost`, `reliability`, `quality`.
    pub addresses: Vec<Addresses>,
    /// Rank, 1 first.
    pub rank: u32,
    /// One line.
    pub title: String,
    /// Why, in plain words.
    pub rationale: String,
    /// What to do.
    pub action: String,
    /// How sure.
    pub confidence: Confidence,
    /// Why this might be wrong.
    pub caveat: String,
    /// The figures behind it.
    pub evidence: Vec<Evidence>,
    /// Snippets (alert rules, autoscaling triggers).
    pub snippets: Vec<Snippet>,
    /// The settings it turns and which way (docs/report-schema.md,
    /// "Levers"). Empty for an investigation.
    #[serde(default)]
    pub levers: Vec<Lever>,
    /// Objectives its words say hold (each passes on the scorecard).
    #[serde(default)]
    pub claims_hold: Vec<SloId>,
    /// The forecast's predicted scorecard after this change at the
    /// capture's peak load level (`forecast.scenarios[]` whose
    /// `recommendation` is this id), in one line; `null` when the change
    /// is not modelled or the forecast is not calibrated.
    #[serde(default)]
    pub predicted: Option<String>,
}

/// A rule that fired but is not shown, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Withheld {
    /// The recommendation it would have made.
    pub id: RecId,
    /// The levers it would have turned.
    pub levers: Vec<Lever>,
    /// Why not: a lever rule (`L1`…), a rule check (`R1`…), in words.
    pub reason: String,
}

/// A moment that matters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimelineEvent {
    /// When, ms since the Unix epoch (a window start, or a scrape time).
    pub time_ms: i64,
    /// `slo_breached`, `slo_recovered`, `waiting_started`,
    /// `preemptions_started`, `kv_above_60`, `kv_above_90`, `restart`,
    /// `scrape_gap`, `shape_change`, `xid`, `load_step`, `error_burst`.
    pub kind: TimelineKind,
    /// Whom it concerns: `fleet` for all, else the replica's or target's
    /// name (a GPU's key for an XID).
    pub subject: Scope,
    /// What happened.
    pub description: String,
    /// The figures.
    pub evidence: Vec<Evidence>,
}

/// A hardware fault one GPU reported ([`Report::gpu_faults`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuFault {
    /// The GPU's key (`host/UUID`, as in the catalogue's GPUs).
    pub gpu: String,
    /// The GPU in words: "GPU 0 (NVIDIA A10G) on ip-10-0-1-23".
    pub name: String,
    /// `xid`, `ecc_double_bit`, `uncorrectable_remapped_rows`,
    /// `row_remap_failure`, `clocks_held`.
    pub kind: crate::ids::GpuFaultKind,
    /// The value that shows it: the XID code, the error or row count at
    /// the last scrape, 1 for a failed remap, the bitmask's fault bits
    /// seen (ORed).
    pub value: f64,
    /// The increase over the capture, for counts (errors or rows that
    /// appeared while it ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<f64>,
    /// When it was first seen: the time of the scrape that showed it (ms).
    pub seen_ms: i64,
    /// True when the first scrape of the series already showed it: it
    /// began before the capture.
    pub before_capture: bool,
    /// Scrapes that showed it, and the series' scrapes.
    pub scrapes: u32,
    /// The series' scrapes.
    pub of: u32,
    /// What it is: "XID 79 (GPU has fallen off the bus)", "hw_thermal".
    pub detail: String,
    /// The metric read.
    pub metric: String,
}

/// A signal's resolution, for the reader.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricStatus {
    /// Signal key (`kv_usage`).
    pub signal: String,
    /// `found`, `aliased`, `missing`.
    pub status: String,
    /// Names read.
    pub used: Vec<String>,
    /// Notes (fallback semantics, duplicates).
    pub notes: Vec<String>,
}

/// Metrics per analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AnalysisInputs {
    /// Analysis id.
    pub analysis: StepId,
    /// Its signals.
    pub metrics: Vec<MetricStatus>,
}

/// A data-quality note.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QualityNote {
    /// `missing_metric`, `reset`, `gap`, `clock_skew`, `duplicate_series`,
    /// `bucket_layouts`, `known_bug`, `collect_interval`, `diagnostic`,
    /// `version`, `fallback`, `non_cumulative`, `non_finite`,
    /// `counter_backwards`.
    pub kind: QualityKind,
    /// Target or signal concerned.
    pub subject: String,
    /// What it means.
    pub message: String,
}

/// What the figures rest on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DataQuality {
    /// `v0`, `v1`, `unknown`, with the release range.
    pub vllm_version: String,
    /// Per analysis.
    pub inputs: Vec<AnalysisInputs>,
    /// Every signal of the catalogue: found, aliased (which name) or missing.
    pub inventory: Vec<MetricStatus>,
    /// Notes, most important first.
    pub notes: Vec<QualityNote>,
    /// Counter resets seen, each series' drops counted (one restart of a
    /// process resets every counter series it exports once).
    pub resets: usize,
    /// Restarts of a process (a changed `process_start_time_seconds`, or
    /// without it a drop of the generated tokens counter), each counted
    /// once whatever the number of series it reset.
    #[serde(default)]
    pub restarts: usize,
    /// Windows with a missing or failed scrape, per target.
    pub gap_windows: BTreeMap<String, usize>,
    /// Bundle diagnostics (lines or files that could not be read).
    pub diagnostics: usize,
}

/// The bottom line.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VerdictStatus {
    /// No objective fails and nothing puts them at risk.
    Healthy,
    /// No objective fails, but one cannot be told, a p99 stalls, a server
    /// restarted, errors burst, or proven headroom is under 20 %.
    AtRisk,
    /// An objective fails.
    Failing,
    /// The bundle cannot support a verdict: no vLLM metrics, or too few
    /// scrapes for a rate (the headline says what is missing).
    CannotTell,
}

/// The report's first line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// `healthy`, `at_risk` or `failing`.
    pub status: VerdictStatus,
    /// One line: the status and why.
    pub headline: String,
    /// What decided it, one line each, most serious first.
    pub reasons: Vec<String>,
    /// A few lines on what happened: phases, restarts, bursts, with their
    /// times.
    pub narrative: Vec<String>,
    /// Where to look next, most likely first: outside the engine when every
    /// engine objective holds (`front_end`, `gateway_or_network`), the
    /// workload (`client_max_tokens`, `prompt_prefix`), or the `engine`.
    #[serde(default)]
    pub look_next: Vec<LookNext>,
    /// The tuning guide's follow-ups for a deployment whose engine meets
    /// its objectives, each where the capture's data supports it (none on
    /// a failing capture: the recommendations come first).
    #[serde(default)]
    pub follow_ups: Vec<FollowUp>,
}

/// One of the tuning guide's follow-ups, with the figures that support it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FollowUp {
    /// `stop_optimising_prefill`, `quantize_before_buying`,
    /// `raise_max_tokens`, `standardise_prompt_prefix`,
    /// `set_autoscaling_trigger`, `alert_on_queue_time`,
    /// `watch_generation_to_prompt`.
    pub id: FollowUpId,
    /// In the guide's terms.
    pub title: String,
    /// The figures that support it here.
    pub evidence: String,
    /// The recommendation that carries it further, when one fired.
    pub recommendation: Option<RecId>,
}

/// A place to look next, with the evidence that points there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LookNext {
    /// `front_end`, `gateway_or_network`, `client_max_tokens`,
    /// `prompt_prefix` or `engine`.
    pub id: LookNextId,
    /// One line: where, and why.
    pub title: String,
    /// The figures that point there.
    pub evidence: String,
    /// How to measure it there.
    pub how: String,
}

/// A stretch of the capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    /// First window's start, ms since the Unix epoch.
    pub start_ms: i64,
    /// Last window's end (exclusive), ms.
    pub end_ms: i64,
    /// `warmup`, `steady`, `ramp`, `restart`, `down`, `burst` or `idle`.
    pub kind: PhaseKind,
    /// One line.
    pub description: String,
    /// The phase's figures, with the summary's field names, computed the
    /// same way over the phase's windows only.
    pub figures: Summary,
    /// Requests in flight (running + waiting), mean over the phase.
    pub in_flight_avg: Option<f64>,
    /// The standard error of `in_flight_avg`: the spread of the gauges'
    /// scrapes ÷ √ the effective scrapes (neighbouring scrapes correlate),
    /// combined over the phase's windows. `null` where a window has fewer
    /// than two scrapes.
    #[serde(default)]
    pub in_flight_se: Option<f64>,
    /// Requests in the engine by Little's law: finished per second × the
    /// engine's mean end-to-end latency over the phase
    /// (`vllm:e2e_request_latency_seconds`). Where it and `in_flight_avg`
    /// differ by more than 2× and by more than 2 requests (or 3 ×
    /// `in_flight_se` and half a request), finding
    /// `data_quality.gauges_disagree` says so and the description uses this
    /// figure. `null` without the latency histogram or a rate.
    #[serde(default)]
    pub in_flight_from_latency: Option<f64>,
    /// Load levels (`steady`, `ramp`, `overload`): how the queue moved
    /// across the phase; `null` for other kinds or without the gauges.
    #[serde(default)]
    pub queue_trend: Option<QueueTrend>,
}

/// How the queue moved across a phase: the mean over its first third of
/// windows against the mean over its last third.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueueTrend {
    /// Requests waiting (mean over the windows).
    pub waiting: Option<FirstLast>,
    /// Mean queue time, ms.
    pub queue_ms: Option<FirstLast>,
}

/// A figure at the start and at the end of a stretch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FirstLast {
    /// At the start.
    pub first: f64,
    /// At the end.
    pub last: f64,
}

/// What limits concurrency first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BindingLimit {
    /// Requests queued while the engine ran at its `--max-num-seqs` with
    /// the KV cache far from full.
    MaxNumSeqs,
    /// The KV cache filled (≥ 90 %) or preempted while others waited.
    KvCache,
    /// Requests queued well below the sequence cap with the KV cache far
    /// from full: the scheduler's token budget per step
    /// (`--max-num-batched-tokens`) held them back.
    TokenBudget,
    /// Nothing queued: no limit was reached; the client's own concurrency
    /// set the load.
    NoneSeen,
    /// Requests queued and no limit's evidence is in the capture.
    Unexplained,
}

impl BindingLimit {
    /// In words.
    pub fn words(self) -> &'static str {
        match self {
            BindingLimit::KvCache => "the KV cache",
            BindingLimit::MaxNumSeqs => "--max-num-seqs",
            BindingLimit::TokenBudget => "the token budget per step (--max-num-batched-tokens)",
            BindingLimit::NoneSeen => {
                "no limit reached (the client's own concurrency set the load)"
            }
            BindingLimit::Unexplained => {
                "none explains the queueing (no limit's evidence in the capture)"
            }
        }
    }
}

/// One limit checked against its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LimitCheck {
    /// The limit.
    pub limit: BindingLimit,
    /// True when its evidence says it held requests back.
    pub binds: bool,
    /// The evidence, with its metrics and figures.
    pub evidence: String,
}

/// The largest concurrency that met each latency objective.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConcurrencyMeeting {
    /// Requests in flight (running + waiting, mean of a window) at which
    /// TTFT p95 was proven within its objective; `null` when no window was.
    pub ttft_p95: Option<f64>,
    /// Running requests (the batch, mean of a window) at which inter-token
    /// p95 was proven within its objective.
    pub itl_p95: Option<f64>,
    /// Windows behind each figure: windows proving the objective within
    /// 10 % of that concurrency, or the windows of the load phase whose
    /// own p95 proves it there (`ttft_p95_from`).
    pub ttft_p95_windows: usize,
    /// See `ttft_p95_windows`.
    pub itl_p95_windows: usize,
    /// The highest concurrency above the figure at which the objective was
    /// proved by too few windows (fewer than 3 near it, or a shorter load
    /// phase): shown, never counted. With no figure, it is why: "not
    /// enough windows".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p95_too_few: Option<TooFew>,
    /// See `ttft_p95_too_few`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_p95_too_few: Option<TooFew>,
    /// What decided the TTFT figure: `windows` (3 or more windows within
    /// 10 % of it) or `phase` (a load phase of 3 windows or more whose own
    /// p95 lies within the objective at that mean concurrency, higher than
    /// the windows show); `null` when there is no figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p95_from: Option<MeetingFrom>,
    /// See `ttft_p95_from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_p95_from: Option<MeetingFrom>,
}

/// A concurrency at which too few windows proved an objective.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TooFew {
    /// The concurrency (mean requests in flight, or running).
    pub at: f64,
    /// The windows that proved it there.
    pub windows: usize,
}

/// What a concurrency meeting an objective rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MeetingFrom {
    /// Windows within 10 % of the figure, each proving the objective.
    Windows,
    /// A load phase whose own p95 proves the objective at its mean.
    Phase,
}

/// One window of one replica, for the latency-against-concurrency chart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConcurrencyPoint {
    /// Window start, ms.
    pub window_start_ms: i64,
    /// Replica.
    pub replica: Scope,
    /// Running requests, window mean.
    pub running: Option<f64>,
    /// Running + waiting, window mean.
    pub in_flight: Option<f64>,
    /// The TTFT p95's bucket, ms.
    pub ttft_p95: Option<Bounds>,
    /// The inter-token p95's bucket, ms.
    pub itl_p95: Option<Bounds>,
}

/// The decode floor: the weights streamed once per step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Floor {
    /// Weight bytes per replica.
    pub weight_bytes: f64,
    /// How they were known: the model table (name, parameters, bytes per
    /// weight) or `--model-bytes`.
    pub weight_source: String,
    /// Tensor-parallel degree (GPUs a replica's weights are split over).
    pub tensor_parallel: f64,
    /// The GPU's peak memory bandwidth, bytes/s.
    pub bandwidth: f64,
    /// The GPU it is for.
    pub gpu: String,
    /// Weight bytes ÷ tensor parallel ÷ bandwidth, ms per step.
    pub ms: f64,
    /// The measured mean inter-token latency, ms.
    pub measured_ms: Option<f64>,
    /// Objectives below the floor: out of reach with these weights on this hardware.
    pub infeasible: Vec<SloId>,
    /// Speculative decoding is on: several tokens per step can beat the
    /// per-step floor per token.
    pub speculative: bool,
}

/// Requests turned away by `--max-num-queued-reqs` or
/// `--max-num-queued-tokens`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rejections {
    /// Over the capture, all replicas.
    pub total: f64,
    /// Per minute of capture.
    pub per_min: Option<f64>,
    /// By `reason` label, where any were rejected.
    pub by_reason: BTreeMap<String, f64>,
}

/// What the prefix cache could serve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrefixCeiling {
    /// KV block size, tokens.
    pub block_size: Option<f64>,
    /// Prompt tokens served from cache per request (hit rate × prompt).
    pub cached_tokens_per_request: Option<f64>,
    /// Average prompt tokens per request.
    pub prompt_tokens: Option<f64>,
    /// The shared prefix given (`--shared-prefix-tokens`).
    pub shared_prefix_tokens: Option<f64>,
    /// The hit rate the shared prefix allows (whole blocks only), %.
    pub ceiling_pct: Option<f64>,
    /// The hit rate measured, %.
    pub hit_pct: Option<f64>,
    /// The shared prefix is shorter than one block: never reused.
    pub shorter_than_a_block: bool,
    /// The measured hit rate exceeds `ceiling_pct` by more than 2 points:
    /// prompts share more than the stated prefix, so it is no ceiling (and
    /// a stated prefix shorter than a block says nothing about reuse).
    #[serde(default)]
    pub exceeded: bool,
    /// Prefix caching as `vllm:cache_config_info{enable_prefix_caching}`
    /// states it; `null` where no release label says.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// Where MFU and MBU come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UtilisationSource {
    /// vLLM's `estimated_*` counters ÷ the GPU's datasheet peaks.
    VllmEstimates,
    /// DCGM's tensor-pipe and DRAM activity (upper bounds, not MFU/MBU).
    Dcgm,
}

/// What preemptions cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreemptionCost {
    /// Preemptions per minute.
    pub per_min: Option<f64>,
    /// Mean preemptions per finished request (`request_num_preemptions`,
    /// 0.30+).
    pub per_request: Option<f64>,
    /// Prompt tokens recomputed per minute (`prompt_tokens_recomputed_total`,
    /// 0.16–0.19).
    pub recomputed_tokens_per_min: Option<f64>,
    /// Estimated GPU time recomputing per minute, ms: tokens recomputed ×
    /// prefill time per prompt token (an estimate).
    pub recompute_ms_per_min: Option<f64>,
}

/// Energy and money per token.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Economics {
    /// Generated tokens per joule.
    pub generated_tokens_per_joule: Option<f64>,
    /// Computed tokens (prompt tokens not served from cache + generated)
    /// per joule.
    pub computed_tokens_per_joule: Option<f64>,
    /// GPU cost per million generated tokens at the load seen.
    pub cost_per_million_generated: Option<f64>,
    /// GPU cost per million computed tokens at the load seen.
    pub cost_per_million_computed: Option<f64>,
}

/// One what-if, always an estimate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WhatIf {
    /// `add_replica`, `fp8_weights`, `fp8_kv_cache`, `more_seqs`,
    /// `tensor_parallel_2`.
    pub id: String,
    /// What changes.
    pub title: String,
    /// Requests of the observed size the KV cache would hold at once, per
    /// replica (fleet for `add_replica`).
    pub kv_requests: Option<f64>,
    /// The decode floor afterwards, ms.
    pub itl_floor_ms: Option<f64>,
    /// What the estimate assumes.
    pub assumptions: String,
}

/// Over, fits, under: the deployment against the load it carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProvisioningStatus {
    /// Every dimension has at least twice today's peak load of headroom.
    Over,
    /// The peak load is met with less than 2× headroom somewhere.
    Fits,
    /// An objective fails or requests queue at the peak load.
    Under,
    /// No load level with the figures to tell.
    #[default]
    CannotTell,
}

/// One dimension's headroom at the peak load level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Headroom {
    /// `ttft_p95`, `itl_p95`, `kv_cache`, `max_num_seqs`, `queueing`.
    pub id: String,
    /// The load it allows over the peak load (× requests in flight);
    /// below 1 where it is already exceeded.
    pub headroom_x: f64,
    /// The figures behind it, and what it assumes.
    pub evidence: String,
}

/// Something an over-provisioned deployment could give back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GiveBack {
    /// `fewer_replicas`, `fewer_gpus_per_replica`, `smaller_gpu`.
    pub id: String,
    /// One line: from what to what.
    pub title: String,
    /// Why it would still carry the peak, and what it rests on.
    pub evidence: String,
}

/// Whether the deployment is sized for its load (`capacity.provisioning`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provisioning {
    /// `over`, `fits`, `under` or `cannot_tell`.
    pub status: ProvisioningStatus,
    /// The smallest headroom over every dimension (× the peak load);
    /// `null` when it cannot be told.
    pub headroom_x: Option<f64>,
    /// The dimension with the smallest headroom (a `dimensions` id).
    pub limiting: Option<String>,
    /// The peak load level: requests in flight (fleet, mean of the phase).
    pub peak_in_flight: Option<f64>,
    /// The peak load level's requests finished per minute (fleet).
    pub peak_requests_per_min: Option<f64>,
    /// One paragraph, in plain words.
    pub explanation: String,
    /// Every dimension's headroom.
    pub dimensions: Vec<Headroom>,
    /// What could be given back (only when `over`).
    pub give_back: Vec<GiveBack>,
    /// What the capture cannot prove.
    pub cannot_prove: Vec<String>,
}

/// How much more fits, and what would help.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Capacity {
    /// Tokens the KV cache holds per replica (`null` when unknown).
    pub kv_tokens: Option<f64>,
    /// Requests of the observed size (prompt + generated, in whole blocks)
    /// the KV cache holds at once per replica.
    pub kv_requests: Option<f64>,
    /// The most requests run at once while others waited (the queue
    /// objective's figure).
    pub admission_cap: Option<f64>,
    /// What limits concurrency first.
    pub binding_limit: BindingLimit,
    /// Every limit that binds, the first being `binding_limit` (two when
    /// two bind at once).
    #[serde(default)]
    pub binding_limits: Vec<BindingLimit>,
    /// Every limit checked, with its evidence: the KV cache,
    /// `--max-num-seqs`, the step's token budget, the client.
    #[serde(default)]
    pub limits: Vec<LimitCheck>,
    /// What `mfu_pct` and `mbu_pct` come from: `vllm_estimates` (vLLM's
    /// `estimated_*` counters ÷ the GPU's peaks) or `dcgm` (tensor and DRAM
    /// activity standing in); `null` when neither.
    #[serde(default)]
    pub utilisation_from: Option<UtilisationSource>,
    /// `vllm:cache_config_info` sets `num_gpu_blocks_override`: the KV
    /// pool's size is fixed, whatever the memory.
    #[serde(default)]
    pub blocks_overridden: bool,
    /// The fewest requests in flight seen with queueing.
    pub queueing_starts_at: Option<f64>,
    /// The largest concurrency that met each latency objective.
    pub max_concurrency_meeting: ConcurrencyMeeting,
    /// The decode floor, ms per step (`null` without a known model size or
    /// GPU).
    pub itl_floor_ms: Option<f64>,
    /// Achieved FLOP/s per GPU, from `vllm:estimated_flops_per_gpu_total`.
    pub achieved_flops_per_s: Option<f64>,
    /// Achieved bytes/s per GPU (reads + writes), from
    /// `vllm:estimated_*_bytes_per_gpu_total`.
    pub achieved_bytes_per_s: Option<f64>,
    /// Model FLOP utilisation, % of the GPU's dense peak.
    pub mfu_pct: Option<f64>,
    /// Memory bandwidth utilisation, % of the GPU's peak.
    pub mbu_pct: Option<f64>,
    /// The metric or table behind each figure, by field name.
    pub sources: BTreeMap<String, String>,
    /// True when `kv_tokens` is an estimate (resident tokens ÷ usage).
    pub kv_estimated: bool,
    /// KV block size, tokens.
    pub block_size: Option<f64>,
    /// Average tokens per request (prompt + generated).
    pub request_tokens: Option<f64>,
    /// The most requests in flight on one replica.
    pub peak_in_flight: Option<f64>,
    /// Replicas.
    pub replicas: usize,
    /// Windows by replica: concurrency and latency buckets.
    pub points: Vec<ConcurrencyPoint>,
    /// The decode floor and what it rests on.
    pub floor: Option<Floor>,
    /// What the prefix cache could serve.
    pub prefix: PrefixCeiling,
    /// What preemptions cost, when any happened.
    pub preemption: Option<PreemptionCost>,
    /// Energy and money per token.
    pub economics: Economics,
    /// Estimates of other set-ups.
    pub what_ifs: Vec<WhatIf>,
    /// Requests the queue limits turned away (`null` when
    /// `vllm:admission_rejections_total` is not exported, before 0.32).
    pub rejections: Option<Rejections>,
    /// Whether the deployment is sized for the load the capture saw: the
    /// headroom at its peak load level against every objective, the KV
    /// pool and the sequence cap, and what could be given back.
    #[serde(default)]
    pub provisioning: Provisioning,
    /// Why figures are missing, and what they rest on.
    pub notes: Vec<String>,
}

/// Finding `id` among `analyses`, if it fired.
pub fn finding_of(analyses: &[Analysis], id: FindingId) -> Option<&Finding> {
    analyses
        .iter()
        .flat_map(|a| a.findings.iter())
        .find(|f| f.id == id)
}

/// The severity of finding `id` among `analyses`, if it fired.
pub fn severity_of(analyses: &[Analysis], id: FindingId) -> Option<Severity> {
    finding_of(analyses, id).map(|f| f.severity)
}
