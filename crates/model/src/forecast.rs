//! The forecast (`forecast` in the report's JSON): a model of this server
//! calibrated on the capture, back-tested against the capture's own
//! windows, and replayed under changed settings and loads
//! (`docs/forecast.md`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{RecId, SloId};
use crate::report::{Bounds, SloStatus};

/// What each change would give.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Forecast {
    /// `calibrated`, `not_calibrated` (the back-test missed: nothing is
    /// predicted) or `cannot_forecast` (the capture lacks what the model
    /// needs).
    pub status: ForecastStatus,
    /// One paragraph, in plain words.
    pub explanation: String,
    /// The fitted model; `null` when nothing could be fitted.
    pub model: Option<EngineFit>,
    /// The back-test: the capture's configuration replayed at each
    /// window's load, against what the window measured.
    pub calibration: Calibration,
    /// Predicted scorecards: today's configuration and each change, at
    /// the capture's peak load level (or the load asked for).
    pub scenarios: Vec<ForecastScenario>,
    /// The largest load meeting the latency objectives (TTFT and
    /// inter-token p95; the queue objective belongs to the configuration
    /// and is judged in its scenario), today and after each
    /// change.
    pub sweep: Vec<SweepRow>,
}

/// Whether the forecast predicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForecastStatus {
    /// The back-test held: scenarios are predicted.
    Calibrated,
    /// The back-test missed: no scenario is predicted.
    NotCalibrated,
    /// The capture lacks what the model needs (no load, no latency).
    #[default]
    CannotForecast,
}

/// How the capture's load arrives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadShape {
    /// Users who wait for each answer: the concurrency holds, the rate
    /// follows the latency.
    #[default]
    Closed,
    /// Arrivals whatever the latency: the rate holds, the concurrency
    /// follows the latency.
    Open,
}

/// A range a figure lies in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Range {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// The model fitted on the capture.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineFit {
    /// A step's fixed cost, ms (the range the windows allow).
    pub step_base_ms: Range,
    /// Each decoding sequence's cost per step, ms.
    pub per_decode_seq_ms: Range,
    /// Each prompt token's cost, ms per 1,000 tokens.
    pub per_1k_prefill_tokens_ms: Range,
    /// The parameter sets replayed, `[per step ms, per decoding sequence
    /// ms, per 1,000 prefill tokens ms]`: the best fit, then the cheapest
    /// and the costliest per decoding sequence, then per prefill token
    /// (the ends of what the windows allow).
    pub step_costs: Vec<[f64; 3]>,
    /// The least a step takes (the weights read once), ms; `null` when
    /// the hardware is unknown.
    pub floor_ms: Option<f64>,
    /// Time to first token the engine's histogram counts outside queue and
    /// prefill (tokenisation, the front end's hand-off), ms.
    pub front_end_ms: f64,
    /// Steps between a prompt's last chunk and its first token: 1 where
    /// the capture's prefill times fit async scheduling better, else 0.
    #[serde(default)]
    pub first_token_lag_steps: f64,
    /// The step's form: `false`, `a + b × decoding sequences + c × prefill
    /// tokens` (never under the floor); `true`, the roofline `a + b ×
    /// decoding sequences + max(floor, c × every token computed)` (the
    /// weights' read and the arithmetic overlap; kept when it fits the
    /// windows better, on a GPU). `c` is then per token computed.
    #[serde(default)]
    pub roofline: bool,
    /// Which load the capture looks like.
    pub load_shape: LoadShape,
    /// Why.
    pub load_shape_evidence: String,
    /// Windows the fit used.
    pub windows: usize,
    /// The configuration replayed as "today" (per replica).
    pub settings: EngineSettings,
    /// The workload replayed.
    pub workload: WorkloadFit,
    /// What was assumed where the capture does not say.
    pub assumed: Vec<String>,
}

/// A configuration the model replays (per replica).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineSettings {
    /// `--max-num-seqs`.
    pub max_num_seqs: u32,
    /// `--max-num-batched-tokens`.
    pub max_num_batched_tokens: u32,
    /// KV blocks per replica.
    pub kv_blocks: u32,
    /// Tokens per block.
    pub block_size: u32,
    /// Prefix caching.
    pub prefix_caching: bool,
    /// Replicas sharing the load.
    pub replicas: u32,
}

/// The workload replayed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadFit {
    /// Mean prompt tokens.
    pub prompt_tokens: f64,
    /// Mean generated tokens.
    pub generated_tokens: f64,
    /// Share of prompt tokens the prefix cache served, %.
    pub prefix_hit_pct: f64,
    /// Tokens every prompt shares (stated with --shared-prefix-tokens, or
    /// from the hit rate); `null` when nothing is shared.
    pub shared_prefix_tokens: Option<f64>,
    /// Think time between a user's answer and their next request, s
    /// (closed loop).
    pub think_s: f64,
    /// Prompt lengths over the capture: `[upper bound, requests]` per
    /// bucket of `vllm:request_prompt_tokens` (an infinite last bound is
    /// written as the context length).
    pub prompt_buckets: Vec<[f64; 2]>,
    /// Generated lengths, the same way (`vllm:request_generation_tokens`).
    pub generation_buckets: Vec<[f64; 2]>,
}

/// The back-test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    /// One row per window replayed.
    pub backtest: Vec<Backtest>,
    /// How far the replay was from the capture.
    pub error: CalibrationError,
    /// What missed, in words (empty when calibrated).
    pub misses: Vec<String>,
    /// The tolerance the back-test is held to, in words.
    pub tolerance: String,
}

/// One window replayed at its own load.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Backtest {
    /// Window start, ms since the Unix epoch.
    pub window_start_ms: i64,
    /// Window end.
    pub window_end_ms: i64,
    /// Requests in flight the window measured (per replica).
    pub in_flight: f64,
    /// Requests finished per minute the window measured (per replica).
    pub requests_per_min: f64,
    /// The window's TTFT p95 (interpolated), ms.
    pub ttft_p95_ms: Option<f64>,
    /// The bucket it lies in.
    pub ttft_bucket: Option<Bounds>,
    /// The replay's TTFT p95, ms.
    pub predicted_ttft_p95_ms: Option<f64>,
    /// Within tolerance.
    pub ttft_hit: Option<bool>,
    /// The window's inter-token p95, ms.
    pub itl_p95_ms: Option<f64>,
    /// The bucket it lies in.
    pub itl_bucket: Option<Bounds>,
    /// The replay's inter-token p95, ms.
    pub predicted_itl_p95_ms: Option<f64>,
    /// Within tolerance.
    pub itl_hit: Option<bool>,
    /// The replay's requests in flight (open loop) or finished per minute
    /// (closed loop), whichever the load does not fix.
    pub predicted_in_flight: f64,
    /// The replay's requests finished per minute.
    pub predicted_requests_per_min: f64,
    /// Within tolerance (in flight or per minute, whichever the replay
    /// predicted).
    pub load_hit: bool,
}

/// How far the replay was from the capture.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CalibrationError {
    /// Windows replayed.
    pub windows: usize,
    /// Windows whose TTFT p95 was within tolerance, of those with one.
    pub ttft_hits: usize,
    /// Windows with a TTFT p95.
    pub ttft_windows: usize,
    /// Median relative error of the TTFT p95, %.
    pub ttft_p95_pct: Option<f64>,
    /// Windows whose inter-token p95 was within tolerance.
    pub itl_hits: usize,
    /// Windows with an inter-token p95.
    pub itl_windows: usize,
    /// Median relative error of the inter-token p95, %.
    pub itl_p95_pct: Option<f64>,
    /// Windows whose load figure was within tolerance.
    pub load_hits: usize,
    /// The in-flight count at which requests start to wait: measured.
    pub queueing_starts_at: Option<f64>,
    /// The same, predicted.
    pub predicted_queueing_starts_at: Option<f64>,
}

/// One scenario's predicted scorecard.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForecastScenario {
    /// `today`, a change's id (`max_num_seqs`, `max_num_batched_tokens`,
    /// `prefix_caching`, `replicas`, `kv_cache_memory`), or `custom`.
    pub id: String,
    /// In words.
    pub title: String,
    /// The settings changed from the capture's.
    pub changes: Vec<Change>,
    /// The recommendation this scenario predicts, if one.
    pub recommendation: Option<RecId>,
    /// The load replayed.
    pub load: ForecastLoad,
    /// Each objective, predicted.
    pub slo: Vec<PredictedSlo>,
    /// Requests in flight per replica from which requests wait, with the
    /// best fit: read from the replay's scrapes at this load by the
    /// report's rule where they saw queueing, otherwise the closed loop's
    /// start beyond the load (`null`: none wait up to twice the cap).
    pub queueing_starts_at: Option<f64>,
    /// What the server would carry.
    pub throughput: ForecastThroughput,
    /// One line: "predicted: TTFT p95 10–20 ms, ...".
    pub summary: String,
    /// The same scenario replayed as an open loop (arrivals at the peak's
    /// rate × the factor, whatever the latency), best fit only: the other
    /// shape a capture's load could have. `null` when not replayed.
    #[serde(default)]
    pub other_shape: Option<OtherShape>,
}

/// A scenario under the other load shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OtherShape {
    /// The shape replayed here.
    pub shape: LoadShape,
    /// Fleet-wide requests per minute offered.
    pub requests_per_min: f64,
    /// Its TTFT p95, ms (`null`: no first token in the replay).
    pub ttft_p95_ms: Option<f64>,
    /// Its inter-token p95, ms.
    pub itl_p95_ms: Option<f64>,
    /// Mean requests in the engine per replica.
    pub in_flight_per_replica: f64,
    /// The two shapes disagree: a TTFT or inter-token p95, or the requests
    /// in flight, more than 25 % apart, or a latency objective met under
    /// one and missed under the other.
    pub differs: bool,
    /// In words.
    pub explanation: String,
}

/// A setting changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// The flag or setting (`--max-num-seqs`, `replicas`, ...).
    pub setting: String,
    /// Its value in the capture.
    pub from: String,
    /// Its value in the scenario.
    pub to: String,
}

/// The load a scenario replays.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForecastLoad {
    /// × the capture's peak load level.
    pub factor: f64,
    /// Closed (users) or open (arrivals).
    pub shape: LoadShape,
    /// Fleet-wide users (closed) or mean requests in flight (open).
    pub in_flight: f64,
    /// Fleet-wide requests per minute offered (open) or carried (closed).
    pub requests_per_min: f64,
}

/// One objective, predicted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PredictedSlo {
    /// The objective.
    pub id: SloId,
    /// `pass` when even `high` meets it, `fail` when even `low` misses,
    /// `cannot_tell` between, `not_exercised` when not predicted.
    pub status: SloStatus,
    /// The predicted figure's range: its low end.
    pub low: Option<f64>,
    /// Its high end.
    pub high: Option<f64>,
    /// `ms`, `requests` or `%`.
    pub unit: String,
    /// The objective's threshold.
    pub objective: f64,
}

/// What a scenario would carry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForecastThroughput {
    /// Fleet-wide requests finished per minute.
    pub requests_per_min: Range,
    /// Fleet-wide generated tokens per second.
    pub generated_tokens_per_s: Range,
    /// Mean requests in the engine per replica.
    pub in_flight_per_replica: Range,
}

/// The largest load meeting the latency objectives (TTFT and
/// inter-token p95).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepRow {
    /// The scenario (an id of `scenarios`, or `replicas_N`).
    pub scenario: String,
    /// In words.
    pub title: String,
    /// × the capture's peak load level; `null` when not even the smallest
    /// load tried meets them.
    pub max_load_x: Option<f64>,
    /// That load in fleet-wide requests in flight.
    pub in_flight: Option<f64>,
    /// That load in fleet-wide requests per minute.
    pub requests_per_min: Option<f64>,
    /// The objective that fails first beyond it; `null` when every
    /// objective still held at the sweep's top (`at_top`).
    pub limiting: Option<SloId>,
    /// Every objective still held at the largest load tried.
    pub at_top: bool,
}
