//! Every threshold the analyses, the SLO judgement, the phases and the
//! recommendations use, in one place. The SLO objectives themselves are
//! the user's ([`crate::SloThresholds`]); these are the tool's own lines,
//! each with the reason it sits where it does.

// Step 1: where latency goes.

/// Decode's share of queue + prefill + decode at or above which decode
/// "dominates" (prefill work can win at most a fifth).
pub const DECODE_DOMINATES_PCT: f64 = 80.0;
/// Prefill's share at or above which it is a main lever.
pub const PREFILL_DOMINATES_PCT: f64 = 40.0;
/// Decode share above which long-prompt workloads show prefill interference.
pub const INTERFERENCE_DECODE_PCT: f64 = 50.0;
/// TTFT − (queue + prefill) above this many ms, and above half of TTFT, is
/// time spent outside the engine.
pub const FRONTEND_GAP_MS: f64 = 50.0;
/// See [`FRONTEND_GAP_MS`].
pub const FRONTEND_GAP_SHARE: f64 = 0.5;
/// A p99 proven at this multiple of a latency objective is a stall users see.
pub const STALL_FACTOR: f64 = 3.0;

// Step 2: efficiency.

/// Prefix-cache hit rate below which prompts share little cached text.
pub const PREFIX_LOW_PCT: f64 = 30.0;
/// KV pool use (window maximum) that calls for scaling out before it fills.
pub const KV_WARN_PCT: f64 = 60.0;
/// KV pool use at which admission stalls and preemption begins.
pub const KV_FULL_PCT: f64 = 90.0;
/// Running requests (mean) from which one token per step means batching
/// is broken.
pub const BATCHING_MIN_RUNNING: f64 = 4.0;
/// Tokens per step below which batching is broken (with the above).
pub const BATCHING_BROKEN_TOKENS: f64 = 1.5;

// Step 3: workload.

/// Generated ÷ prompt tokens below which the workload is prefill-heavy.
pub const PREFILL_HEAVY_RATIO: f64 = 0.1;
/// Generated ÷ prompt tokens from which it is decode-heavy.
pub const DECODE_HEAVY_RATIO: f64 = 1.0;
/// Answers using this share of max_tokens on average are being cut.
pub const TRUNCATION_UTIL_PCT: f64 = 90.0;
/// A majority ending on `length` means truncation.
pub const LENGTH_SHARE_PCT: f64 = 50.0;
/// The token mix moving by this factor between halves is a shape change.
pub const SHAPE_CHANGE_FACTOR: f64 = 2.0;

// Step 4: outcomes.

/// HTTP error share at which HTTP errors fail rather than warn, %.
pub const HTTP_ERROR_FAIL_PCT: f64 = 1.0;
/// A burst needs at least this many failures in a window: one or two
/// are noise whatever their share.
pub const BURST_MIN_EVENTS: f64 = 3.0;
/// ...and the capture's own base rate must make that many failures in the
/// window's requests this unlikely (a one-sided binomial test).
pub const BURST_P_VALUE: f64 = 0.01;

// Step 5: the GPU.

/// GPU util below which the GPU is idle.
pub const GPU_IDLE_UTIL_PCT: f64 = 10.0;
/// GPU util below which kernels leave gaps (starved).
pub const GPU_STARVED_UTIL_PCT: f64 = 60.0;
/// DRAM activity from which, with idle tensor cores, decode is memory-bound.
pub const MEMORY_BOUND_DRAM_PCT: f64 = 50.0;
/// Tensor activity below which the tensor cores are idle.
pub const TENSOR_IDLE_PCT: f64 = 30.0;
/// Tensor activity from which the GPU is compute-bound.
pub const COMPUTE_BOUND_TENSOR_PCT: f64 = 50.0;
/// GPU util from which it reads "full" (residency, not work).
pub const UTIL_RESIDENCY_PCT: f64 = 90.0;
/// Temperature at which GPUs throttle.
pub const HOT_C: f64 = 85.0;

// Step 6: memory.

/// VRAM reading this full is vLLM's pre-allocation, not load.
pub const VRAM_PREALLOCATED_PCT: f64 = 80.0;
/// KV pool peak below which most of the pool is idle.
pub const POOL_OVERSIZED_KV_PCT: f64 = 25.0;

// Capacity.

/// KV usage (window mean) from which resident tokens ÷ usage estimates the
/// pool: below it one block of rounding moves the estimate a lot, %.
pub const KV_ESTIMATE_FLOOR_PCT: f64 = 5.0;

// The queue SLO.

/// Consecutive scrapes with waiting > 0 that make "queued", and the
/// sightings that set where queueing starts: in the model, since the
/// forecast reads its replays by the same rule.
pub use vllm_lens_model::report::{QUEUED_CONSECUTIVE_SCRAPES, QUEUEING_SEEN_TIMES};

// Phases.

/// Two load levels differ when the larger is at least this factor of the
/// smaller...
pub const LOAD_STEP_FACTOR: f64 = 1.5;
/// ...and the difference is at least this many standard deviations of a
/// Poisson count at the larger level (so noise on light load is not a step).
pub const LOAD_STEP_SIGMAS: f64 = 3.0;
/// A stretch at one load level at least this long is a plateau: a level
/// shorter than that between two others is a stair of a ramp, ms.
pub const PLATEAU_MS: i64 = 120_000;
/// A load level is an overload when requests waiting grow across it by at
/// least this many (mean of its last third of windows against its first)...
pub const OVERLOAD_WAITING_RISE: f64 = 3.0;
/// ...and to at least this factor of the start; or when the mean queue
/// time grows by this factor and by at least [`OVERLOAD_QUEUE_RISE_MS`].
pub const OVERLOAD_FACTOR: f64 = 2.0;
/// See [`OVERLOAD_FACTOR`], ms.
pub const OVERLOAD_QUEUE_RISE_MS: f64 = 1000.0;
/// In-flight requests (mean) below which a window is idle.
pub const IDLE_IN_FLIGHT: f64 = 0.5;

// The verdict.

/// Headroom under this share of an objective (proven) puts the deployment
/// at risk.
pub const AT_RISK_HEADROOM: f64 = 0.2;

// Recommendations.

/// Queueing's share of a failing TTFT from which adding replicas is
/// advised.
pub const QUEUE_SHARE_FOR_REPLICAS: f64 = 0.3;
/// Prefill's share of a failing TTFT from which shortening prefill is
/// advised.
pub const PREFILL_SHARE_FOR_PREFILL: f64 = 0.4;
/// Below this prefix-cache hit rate several replicas sharing long prompts
/// are read as routing that scatters prefixes, %.
pub const ROUTING_HIT_PCT: f64 = 50.0;
/// Prompts at least this long on average make prefix routing worth it.
pub const ROUTING_PROMPT_TOKENS: f64 = 500.0;
/// Inter-token p95 at this multiple of the median marks other requests'
/// prefill in the decode steps.
pub const INTERFERENCE_P95_OVER_P50: f64 = 2.0;
/// ...or, with generated ÷ prompt tokens under this (answers a quarter of
/// their prompts or shorter)...
pub const INTERFERENCE_TAIL_RATIO: f64 = 0.25;
/// ...at this multiple: a tail no decode step alone makes.
pub const INTERFERENCE_TAIL_P95_OVER_P50: f64 = 4.0;
/// A growing share of answers ending on length by this much (0..1)
/// between the halves of the capture is drift.
pub const LENGTH_DRIFT: f64 = 0.2;

/// How much a target weighs when ranking: a failing objective, an
/// undecided one, then waste and risk.
pub const WEIGHT_FAILING: f64 = 100.0;
/// See [`WEIGHT_FAILING`].
pub const WEIGHT_UNDECIDED: f64 = 50.0;
/// See [`WEIGHT_FAILING`].
pub const WEIGHT_RELIABILITY: f64 = 30.0;
/// See [`WEIGHT_FAILING`].
pub const WEIGHT_QUALITY: f64 = 20.0;
/// See [`WEIGHT_FAILING`].
pub const WEIGHT_CAPACITY: f64 = 15.0;
/// See [`WEIGHT_FAILING`].
pub const WEIGHT_EFFICIENCY: f64 = 10.0;
/// See [`WEIGHT_FAILING`].
pub const WEIGHT_COST: f64 = 5.0;

/// Share of requests ending on `length` from which the report says so
/// as a warning, short of calling the answers cut off (`LENGTH_SHARE_PCT`).
pub const LENGTH_NOTABLE_PCT: f64 = 10.0;

/// Requests ending on length and use of max_tokens (both, %) from which
/// answers look fixed in length by a load test rather than cut short.
pub const FIXED_LENGTH_PCT: f64 = 99.0;

/// max_tokens that `/v1/completions` gives a request that sets none (the
/// OpenAI legacy API's default, which vLLM follows); chat completions give
/// max_model_len − prompt instead.
pub const COMPLETIONS_DEFAULT_MAX_TOKENS: f64 = 16.0;

/// Points by which the measured prefix-cache hit rate must exceed the
/// ceiling from the stated shared prefix before that ceiling is called
/// wrong (the ceiling uses the mean prompt; hits count per token).
pub const PREFIX_CEILING_MARGIN_PP: f64 = 2.0;

/// Windows (or a load phase's windows) within 10 % of a concurrency that
/// must prove a latency objective before the report says it was met up to
/// that concurrency (defined in the model, which the renderers read).
pub use vllm_lens_model::MEETING_MIN_WINDOWS;

// Little's law against the gauges.

/// The running + waiting gauges and Little's law (finished per second ×
/// the engine's mean end-to-end latency) disagree when the larger is more
/// than this factor of the smaller...
pub const GAUGES_DISAGREE_FACTOR: f64 = 2.0;
/// ...and more than this many requests apart (on a light load one request
/// more or less is a factor of two).
pub const GAUGES_DISAGREE_REQUESTS: f64 = 2.0;
/// ...or, where the gauges' mean has a known standard error, more than
/// this many of it...
pub const GAUGES_DISAGREE_SE: f64 = 3.0;
/// ...and at least this many requests apart.
pub const GAUGES_DISAGREE_MIN_REQUESTS: f64 = 0.5;
/// Windows that must disagree before the report calls the gauges wrong
/// (one window straddles a load step; three do not).
pub const GAUGES_DISAGREE_WINDOWS: usize = 3;

/// The prefix-cache hit rate a deployment with a standard prompt prefix
/// reaches, as the tuning guide states it: a benchmark, not a measurement
/// of any capture's prompts.
pub const GUIDE_PREFIX_HIT_PCT: f64 = 70.0;
