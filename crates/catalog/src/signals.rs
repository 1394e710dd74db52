//! The table of logical signals and, for each, the metric families that can
//! carry it, in resolution order (`vllm-formulas.md` §8 and
//! `dcgm-metrics.md`).

use serde::Serialize;

/// A logical signal: one thing the analyses want to know, whatever the
/// release calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Signal {
    // vLLM engine
    KvUsage,
    PrefixHits,
    PrefixQueries,
    PrefixHitRateLifetime,
    CachedPromptTokens,
    Ttft,
    InterTokenLatency,
    QueueTime,
    PrefillTime,
    DecodeTime,
    InferenceTime,
    E2eTime,
    FinishedRequests,
    PromptTokens,
    GenerationTokens,
    PromptThroughputGauge,
    GenerationThroughputGauge,
    IterationTokens,
    MaxTokens,
    RequestPromptTokens,
    RequestGenerationTokens,
    Preemptions,
    Swapped,
    Running,
    Waiting,
    WaitingCapacity,
    EstimatedFlops,
    EstimatedReadBytes,
    EstimatedWriteBytes,
    RequestPreemptions,
    RecomputedPromptTokens,
    SpecDecodeDraftTokens,
    AdmissionRejections,
    // API server and process
    HttpRequests,
    HttpDuration,
    ProcessStart,
    // DCGM
    GpuUtil,
    MemCopyUtil,
    FbUsed,
    FbFree,
    FbReserved,
    Power,
    Energy,
    GpuTemp,
    MemoryTemp,
    SmClock,
    MemClock,
    GrEngineActive,
    SmActive,
    TensorActive,
    DramActive,
    PcieTx,
    PcieRx,
    NvlinkBandwidth,
    Xid,
    EccDbe,
    UncorrectableRemappedRows,
    RowRemapFailure,
    ClockEventReasons,
}

/// Who exposes a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// vLLM's engine families (`vllm:*`).
    Vllm,
    /// The API server's HTTP instrumentation and the process collector.
    Server,
    /// dcgm-exporter (or a GPU dump mapped onto its names).
    Dcgm,
}

/// How a family's values behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A value sampled at scrape time.
    Gauge,
    /// A monotonic count: read through reset-aware increases.
    Counter,
    /// Cumulative buckets, count and sum.
    Histogram,
    /// A histogram's `_count` read as a counter (a fallback).
    HistogramCount,
    /// A rate computed by the exporter (NVLink bandwidth): never `rate()` it.
    RateGauge,
    /// A code (the last XID), not a quantity.
    Code,
    /// A Unix timestamp in seconds (process start).
    Timestamp,
}

/// The unit of a family's raw values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// 0..1 of a whole (vLLM KV usage).
    Fraction,
    /// 0..100.
    Percent,
    /// 0..1 (DCGM PROF activity).
    Ratio,
    /// Seconds.
    Seconds,
    /// Tokens.
    Tokens,
    /// Tokens before 0.9.0, KV blocks earlier (`gpu_prefix_cache_*`).
    TokensOrBlocks,
    /// Requests.
    Requests,
    /// Events (preemptions, HTTP requests).
    Count,
    /// Tokens per second (V0 throughput gauges).
    TokensPerSecond,
    /// MiB.
    Mebibytes,
    /// Watts.
    Watts,
    /// Millijoules.
    Millijoules,
    /// Degrees Celsius.
    Celsius,
    /// MHz.
    Megahertz,
    /// Bytes per second.
    BytesPerSecond,
    /// Floating-point operations.
    Flops,
    /// Bytes.
    Bytes,
    /// About 1.024 MB/s per unit (NVLink KiB/s ÷ 1000).
    NvlinkUnits,
    /// Unix seconds.
    UnixSeconds,
    /// A code.
    Code,
    /// A bitmask of flags.
    Bitmask,
}

impl Unit {
    /// Factor from the raw value to the unit analyses use: percent for
    /// fractions and ratios, joules for millijoules; 1 otherwise.
    pub fn to_display_factor(self) -> f64 {
        match self {
            Unit::Fraction | Unit::Ratio => 100.0,
            Unit::Millijoules => 0.001,
            _ => 1.0,
        }
    }
}

/// How the series of a signal combine across engines, replicas and GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// Add them (counts, tokens, requests, MiB, watts, joules).
    Sum,
    /// Average them (fractions, percentages, temperatures, clocks).
    Mean,
    /// Do not combine (codes, timestamps).
    None,
}

/// One family that can carry a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The exposed name (`vllm:` form, counters with `_total`).
    pub name: &'static str,
    /// How its values behave.
    pub kind: Kind,
    /// Raw unit.
    pub unit: Unit,
    /// Only series whose label has one of these values.
    pub filter: Option<(&'static str, &'static [&'static str])>,
    /// Releases that define it.
    pub versions: &'static str,
    /// What a reader should know when this candidate is used.
    pub note: &'static str,
    /// True for an old or new *name* of the same metric (it can appear
    /// beside the preferred one under `--show-hidden-metrics-for-version`);
    /// false for a different metric used as a substitute.
    pub rename: bool,
}

/// Everything about one signal.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SignalInfo {
    /// The signal.
    pub signal: Signal,
    /// Stable identifier (`kv_usage`).
    pub key: &'static str,
    /// What it is, in words.
    pub title: &'static str,
    /// Who exposes it.
    pub source: Source,
    /// How its series combine.
    pub aggregate: Aggregate,
    /// Families in resolution order: the first present wins.
    pub candidates: &'static [Candidate],
}

const fn c(name: &'static str, kind: Kind, unit: Unit, versions: &'static str) -> Candidate {
    Candidate {
        name,
        kind,
        unit,
        filter: None,
        versions,
        note: "",
        rename: true,
    }
}

const fn cn(
    name: &'static str,
    kind: Kind,
    unit: Unit,
    versions: &'static str,
    note: &'static str,
) -> Candidate {
    Candidate {
        name,
        kind,
        unit,
        filter: None,
        versions,
        note,
        rename: true,
    }
}

/// A different metric used as a substitute when the signal's own is absent.
const fn sub(
    name: &'static str,
    kind: Kind,
    unit: Unit,
    versions: &'static str,
    note: &'static str,
) -> Candidate {
    Candidate {
        name,
        kind,
        unit,
        filter: None,
        versions,
        note,
        rename: false,
    }
}

use Aggregate as A;
use Kind as K;
use Source as S;
use Unit as U;

const fn s(
    signal: Signal,
    key: &'static str,
    title: &'static str,
    source: Source,
    aggregate: Aggregate,
    candidates: &'static [Candidate],
) -> SignalInfo {
    SignalInfo {
        signal,
        key,
        title,
        source,
        aggregate,
        candidates,
    }
}

// long: the catalogue: one signal per entry, each with its names per release (rustfmt spreads an entry over several lines)
/// Every signal, in the order reports list them.
pub const SIGNALS: &[SignalInfo] = &[
    s(
        Signal::KvUsage,
        "kv_usage",
        "KV-cache usage",
        S::Vllm,
        A::Mean,
        &[
            c(
                "vllm:kv_cache_usage_perc",
                K::Gauge,
                U::Fraction,
                "V1 0.9.2+",
            ),
            cn(
                "vllm:gpu_cache_usage_perc",
                K::Gauge,
                U::Fraction,
                "V0 all; V1 0.7.1–0.11.2",
                "deprecated name (hidden from 0.11)",
            ),
        ],
    ),
    s(
        Signal::PrefixHits,
        "prefix_cache_hits",
        "Prefix-cache hits",
        S::Vllm,
        A::Sum,
        &[
            c(
                "vllm:prefix_cache_hits_total",
                K::Counter,
                U::Tokens,
                "V1 0.9.2+",
            ),
            cn(
                "vllm:gpu_prefix_cache_hits_total",
                K::Counter,
                U::TokensOrBlocks,
                "V1 0.7.3–0.11.2",
                "counts KV blocks before 0.9.0 and tokens after: hit rates compare, counts do not",
            ),
        ],
    ),
    s(
        Signal::PrefixQueries,
        "prefix_cache_queries",
        "Prefix-cache queries",
        S::Vllm,
        A::Sum,
        &[
            c(
                "vllm:prefix_cache_queries_total",
                K::Counter,
                U::Tokens,
                "V1 0.9.2+",
            ),
            cn(
                "vllm:gpu_prefix_cache_queries_total",
                K::Counter,
                U::TokensOrBlocks,
                "V1 0.7.3–0.11.2",
                "counts KV blocks before 0.9.0 and tokens after: hit rates compare, counts do not",
            ),
        ],
    ),
    s(
        Signal::PrefixHitRateLifetime,
        "prefix_cache_hit_rate_lifetime",
        "Prefix-cache hit rate since start (V0)",
        S::Vllm,
        A::Mean,
        &[cn(
            "vllm:gpu_prefix_cache_hit_rate",
            K::Gauge,
            U::Fraction,
            "V0 0.5.5–0.9.0.1",
            "a lifetime ratio, not windowable; −1 means prefix caching is off",
        )],
    ),
    s(
        Signal::CachedPromptTokens,
        "cached_prompt_tokens",
        "Prompt tokens served from cache",
        S::Vllm,
        A::Sum,
        &[
            c(
                "vllm:prompt_tokens_cached_total",
                K::Counter,
                U::Tokens,
                "0.16.0+",
            ),
            Candidate {
                name: "vllm:prompt_tokens_by_source_total",
                kind: K::Counter,
                unit: U::Tokens,
                filter: Some(("source", &["local_cache_hit", "external_kv_transfer"])),
                versions: "0.16.0+",
                note: "sum of the local_cache_hit and external_kv_transfer sources",
                rename: false,
            },
            sub(
                "vllm:prefix_cache_hits_total",
                K::Counter,
                U::Tokens,
                "V1 0.9.2+",
                "local prefix-cache hits only (no KV-connector tokens)",
            ),
            sub(
                "vllm:gpu_prefix_cache_hits_total",
                K::Counter,
                U::TokensOrBlocks,
                "V1 0.9.0–0.11.2",
                "local prefix-cache hits; blocks, not tokens, before 0.9.0",
            ),
        ],
    ),
    s(
        Signal::Ttft,
        "ttft",
        "Time to first token",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:time_to_first_token_seconds",
            K::Histogram,
            U::Seconds,
            "all",
        )],
    ),
    s(
        Signal::InterTokenLatency,
        "inter_token_latency",
        "Inter-token latency",
        S::Vllm,
        A::Sum,
        &[
            c(
                "vllm:inter_token_latency_seconds",
                K::Histogram,
                U::Seconds,
                "0.10.2+",
            ),
            cn(
                "vllm:time_per_output_token_seconds",
                K::Histogram,
                U::Seconds,
                "V0 all; V1 0.7.1–0.14.1",
                "old name, same semantics (one observation per token after the first)",
            ),
        ],
    ),
    s(
        Signal::QueueTime,
        "queue_time",
        "Time in queue",
        S::Vllm,
        A::Sum,
        &[
            c(
                "vllm:request_queue_time_seconds",
                K::Histogram,
                U::Seconds,
                "V0 0.6.4–0.10.2; V1 0.7.3+",
            ),
            cn(
                "vllm:time_in_queue_requests",
                K::Histogram,
                U::Seconds,
                "V0 0.6.4–0.9.0.1",
                "deprecated V0 name",
            ),
        ],
    ),
    s(
        Signal::PrefillTime,
        "prefill_time",
        "Prefill time",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:request_prefill_time_seconds",
            K::Histogram,
            U::Seconds,
            "V0 0.6.4+; V1 0.7.3+",
        )],
    ),
    s(
        Signal::DecodeTime,
        "decode_time",
        "Decode time",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:request_decode_time_seconds",
            K::Histogram,
            U::Seconds,
            "V0 0.6.4+; V1 0.7.3+",
        )],
    ),
    s(
        Signal::InferenceTime,
        "inference_time",
        "Inference time (prefill + decode)",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:request_inference_time_seconds",
            K::Histogram,
            U::Seconds,
            "V0 0.6.4+; V1 0.7.3+",
        )],
    ),
    s(
        Signal::E2eTime,
        "e2e_time",
        "End-to-end request latency",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:e2e_request_latency_seconds",
            K::Histogram,
            U::Seconds,
            "all",
        )],
    ),
    s(
        Signal::FinishedRequests,
        "finished_requests",
        "Finished requests (by finished_reason)",
        S::Vllm,
        A::Sum,
        &[
            c(
                "vllm:request_success_total",
                K::Counter,
                U::Requests,
                "V0 0.4.2+; V1 0.7.2+",
            ),
            sub(
                "vllm:e2e_request_latency_seconds",
                K::HistogramCount,
                U::Requests,
                "all",
                "from the e2e latency histogram's _count: no finished_reason",
            ),
        ],
    ),
    s(
        Signal::PromptTokens,
        "prompt_tokens",
        "Prompt tokens",
        S::Vllm,
        A::Sum,
        &[c("vllm:prompt_tokens_total", K::Counter, U::Tokens, "all")],
    ),
    s(
        Signal::GenerationTokens,
        "generation_tokens",
        "Generated tokens",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:generation_tokens_total",
            K::Counter,
            U::Tokens,
            "all",
        )],
    ),
    s(
        Signal::PromptThroughputGauge,
        "prompt_throughput_gauge",
        "Prompt throughput (server's 5 s average, V0)",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:avg_prompt_throughput_toks_per_s",
            K::Gauge,
            U::TokensPerSecond,
            "V0 ≤0.6.6",
            "the server's own ~5 s average at scrape time",
        )],
    ),
    s(
        Signal::GenerationThroughputGauge,
        "generation_throughput_gauge",
        "Generation throughput (server's 5 s average, V0)",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:avg_generation_throughput_toks_per_s",
            K::Gauge,
            U::TokensPerSecond,
            "V0 ≤0.6.6",
            "the server's own ~5 s average at scrape time",
        )],
    ),
    s(
        Signal::IterationTokens,
        "iteration_tokens",
        "Tokens per engine step",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:iteration_tokens_total",
            K::Histogram,
            U::Tokens,
            "V0 0.6.4+; V1 0.7.3+",
            "may be wrong with --api-server-count > 1",
        )],
    ),
    s(
        Signal::MaxTokens,
        "max_tokens",
        "Requested max_tokens",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:request_params_max_tokens",
            K::Histogram,
            U::Tokens,
            "V0 0.6.4+; V1 0.8.0+",
            "V1 0.9.2+ observes only requests that set max_tokens",
        )],
    ),
    s(
        Signal::RequestPromptTokens,
        "request_prompt_tokens",
        "Prompt tokens per request",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:request_prompt_tokens",
            K::Histogram,
            U::Tokens,
            "V0 0.4.2+; V1 0.7.1+",
        )],
    ),
    s(
        Signal::RequestGenerationTokens,
        "request_generation_tokens",
        "Generated tokens per request",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:request_generation_tokens",
            K::Histogram,
            U::Tokens,
            "V0 0.4.2+; V1 0.7.1+",
        )],
    ),
    s(
        Signal::Preemptions,
        "preemptions",
        "Preemptions",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:num_preemptions_total",
            K::Counter,
            U::Count,
            "V0 0.4.3+; V1 0.8.0+",
        )],
    ),
    s(
        Signal::Swapped,
        "swapped",
        "Swapped requests (V0)",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:num_requests_swapped",
            K::Gauge,
            U::Requests,
            "V0 0.4.0–0.9.0.1",
            "requests swapped to CPU at scrape time (V0's preemption state)",
        )],
    ),
    s(
        Signal::Running,
        "running",
        "Running requests",
        S::Vllm,
        A::Sum,
        &[c("vllm:num_requests_running", K::Gauge, U::Requests, "all")],
    ),
    s(
        Signal::Waiting,
        "waiting",
        "Waiting requests",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:num_requests_waiting",
            K::Gauge,
            U::Requests,
            "all",
            "includes deferred requests from 0.20",
        )],
    ),
    s(
        Signal::WaitingCapacity,
        "waiting_capacity",
        "Requests waiting for capacity (not deferred)",
        S::Vllm,
        A::Sum,
        &[Candidate {
            name: "vllm:num_requests_waiting_by_reason",
            kind: K::Gauge,
            unit: U::Requests,
            filter: Some(("reason", &["capacity"])),
            versions: "0.20.0+",
            note: "waiting for a slot or KV blocks; deferred requests (reason=\"deferred\") are left out",
            rename: false,
        }],
    ),
    s(
        Signal::EstimatedFlops,
        "estimated_flops",
        "Estimated FLOPs per GPU (model-shape estimate)",
        S::Vllm,
        A::Mean,
        &[cn(
            "vllm:estimated_flops_per_gpu_total",
            K::Counter,
            U::Flops,
            "0.17.0+",
            "an analytic estimate from the model's shape; moves only with --enable-mfu-metrics",
        )],
    ),
    s(
        Signal::EstimatedReadBytes,
        "estimated_read_bytes",
        "Estimated bytes read per GPU (model-shape estimate)",
        S::Vllm,
        A::Mean,
        &[cn(
            "vllm:estimated_read_bytes_per_gpu_total",
            K::Counter,
            U::Bytes,
            "0.17.0+",
            "an analytic estimate; moves only with --enable-mfu-metrics",
        )],
    ),
    s(
        Signal::EstimatedWriteBytes,
        "estimated_write_bytes",
        "Estimated bytes written per GPU (model-shape estimate)",
        S::Vllm,
        A::Mean,
        &[cn(
            "vllm:estimated_write_bytes_per_gpu_total",
            K::Counter,
            U::Bytes,
            "0.17.0+",
            "an analytic estimate; moves only with --enable-mfu-metrics",
        )],
    ),
    s(
        Signal::RequestPreemptions,
        "request_preemptions",
        "Preemptions per request",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:request_num_preemptions",
            K::Histogram,
            U::Count,
            "V1 0.30.0+",
        )],
    ),
    s(
        Signal::RecomputedPromptTokens,
        "recomputed_prompt_tokens",
        "Prompt tokens recomputed after preemption",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:prompt_tokens_recomputed_total",
            K::Counter,
            U::Tokens,
            "0.16.0–0.19.1",
        )],
    ),
    s(
        Signal::SpecDecodeDraftTokens,
        "spec_decode_draft_tokens",
        "Speculative-decoding draft tokens",
        S::Vllm,
        A::Sum,
        &[c(
            "vllm:spec_decode_num_draft_tokens_total",
            K::Counter,
            U::Tokens,
            "V0 0.5.3–0.9.2; V1 0.8.3+",
        )],
    ),
    s(
        Signal::AdmissionRejections,
        "admission_rejections",
        "Requests turned away by the queue limits",
        S::Vllm,
        A::Sum,
        &[cn(
            "vllm:admission_rejections_total",
            K::Counter,
            U::Count,
            "0.32.0+",
            "by reason: max_num_queued_reqs or max_num_queued_tokens; labels model_name and reason only (no engine)",
        )],
    ),
    s(
        Signal::HttpRequests,
        "http_requests",
        "HTTP requests (by handler and status)",
        S::Server,
        A::Sum,
        &[cn(
            "http_requests_total",
            K::Counter,
            U::Count,
            "0.8.3+",
            "prometheus-fastapi-instrumentator; absent on V0 multiprocess servers",
        )],
    ),
    s(
        Signal::HttpDuration,
        "http_duration",
        "HTTP request duration, every handler but /metrics",
        S::Server,
        A::Sum,
        &[c(
            "http_request_duration_highr_seconds",
            K::Histogram,
            U::Seconds,
            "prometheus-fastapi-instrumentator; no handler label; a streamed answer's whole stream",
        )],
    ),
    s(
        Signal::ProcessStart,
        "process_start",
        "Process start time",
        S::Server,
        A::None,
        &[c(
            "process_start_time_seconds",
            K::Timestamp,
            U::UnixSeconds,
            "single-process servers",
        )],
    ),
    s(
        Signal::GpuUtil,
        "gpu_util",
        "GPU utilisation (any kernel running)",
        S::Dcgm,
        A::Mean,
        &[
            c("DCGM_FI_DEV_GPU_UTIL", K::Gauge, U::Percent, "all"),
            cn(
                "DCGM_FI_DEV_GPU_UTIL_RATIO",
                K::Gauge,
                U::Percent,
                "DCGM 4.6+ field name",
                "still an integer percent 0..100 despite the name",
            ),
            c(
                "dcgm_gpu_utilization",
                K::Gauge,
                U::Percent,
                "1.x namespace",
            ),
        ],
    ),
    s(
        Signal::MemCopyUtil,
        "mem_copy_util",
        "Memory-copy utilisation",
        S::Dcgm,
        A::Mean,
        &[
            c("DCGM_FI_DEV_MEM_COPY_UTIL", K::Gauge, U::Percent, "all"),
            c(
                "dcgm_mem_copy_utilization",
                K::Gauge,
                U::Percent,
                "1.x namespace",
            ),
        ],
    ),
    s(
        Signal::FbUsed,
        "fb_used",
        "VRAM used",
        S::Dcgm,
        A::Sum,
        &[
            c("DCGM_FI_DEV_FB_USED", K::Gauge, U::Mebibytes, "all"),
            c("dcgm_fb_used", K::Gauge, U::Mebibytes, "1.x namespace"),
        ],
    ),
    s(
        Signal::FbFree,
        "fb_free",
        "VRAM free",
        S::Dcgm,
        A::Sum,
        &[
            c("DCGM_FI_DEV_FB_FREE", K::Gauge, U::Mebibytes, "all"),
            c("dcgm_fb_free", K::Gauge, U::Mebibytes, "1.x namespace"),
        ],
    ),
    s(
        Signal::FbReserved,
        "fb_reserved",
        "VRAM reserved by the driver",
        S::Dcgm,
        A::Sum,
        &[cn(
            "DCGM_FI_DEV_FB_RESERVED",
            K::Gauge,
            U::Mebibytes,
            "exporter 4.3.1-4.4.0+, driver R510+",
            "absent with older drivers or exporters and the 4.5.3 Helm chart",
        )],
    ),
    s(
        Signal::Power,
        "power",
        "Power draw",
        S::Dcgm,
        A::Sum,
        &[
            c("DCGM_FI_DEV_POWER_USAGE", K::Gauge, U::Watts, "all"),
            c(
                "DCGM_FI_DEV_BOARD_POWER_WATTS",
                K::Gauge,
                U::Watts,
                "DCGM 4.6+ field name",
            ),
            c("dcgm_power_usage", K::Gauge, U::Watts, "1.x namespace"),
        ],
    ),
    s(
        Signal::Energy,
        "energy",
        "Energy consumed",
        S::Dcgm,
        A::Sum,
        &[
            cn(
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                K::Counter,
                U::Millijoules,
                "all",
                "mJ since the driver was loaded; resets on driver reload",
            ),
            c(
                "dcgm_total_energy_consumption",
                K::Counter,
                U::Millijoules,
                "1.x namespace",
            ),
        ],
    ),
    s(
        Signal::GpuTemp,
        "gpu_temp",
        "GPU temperature",
        S::Dcgm,
        A::Mean,
        &[
            c("DCGM_FI_DEV_GPU_TEMP", K::Gauge, U::Celsius, "all"),
            c(
                "DCGM_FI_DEV_GPU_TEMP_CELSIUS",
                K::Gauge,
                U::Celsius,
                "DCGM 4.6+ field name",
            ),
            c("dcgm_gpu_temp", K::Gauge, U::Celsius, "1.x namespace"),
        ],
    ),
    s(
        Signal::MemoryTemp,
        "memory_temp",
        "Memory temperature",
        S::Dcgm,
        A::Mean,
        &[
            cn(
                "DCGM_FI_DEV_MEMORY_TEMP",
                K::Gauge,
                U::Celsius,
                "all",
                "reads 0 on GDDR boards (T4, L4, L40S): 0 means unknown",
            ),
            c("dcgm_memory_temp", K::Gauge, U::Celsius, "1.x namespace"),
        ],
    ),
    s(
        Signal::SmClock,
        "sm_clock",
        "SM clock",
        S::Dcgm,
        A::Mean,
        &[
            c("DCGM_FI_DEV_SM_CLOCK", K::Gauge, U::Megahertz, "all"),
            c("dcgm_sm_clock", K::Gauge, U::Megahertz, "1.x namespace"),
        ],
    ),
    s(
        Signal::MemClock,
        "mem_clock",
        "Memory clock",
        S::Dcgm,
        A::Mean,
        &[
            c("DCGM_FI_DEV_MEM_CLOCK", K::Gauge, U::Megahertz, "all"),
            c("dcgm_memory_clock", K::Gauge, U::Megahertz, "1.x namespace"),
        ],
    ),
    s(
        Signal::GrEngineActive,
        "gr_engine_active",
        "Graphics engine active",
        S::Dcgm,
        A::Mean,
        &[
            c(
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                K::Gauge,
                U::Ratio,
                "PROF fields",
            ),
            c(
                "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO",
                K::Gauge,
                U::Ratio,
                "DCGM 4.6+ field name",
            ),
        ],
    ),
    s(
        Signal::SmActive,
        "sm_active",
        "SM active",
        S::Dcgm,
        A::Mean,
        &[
            c(
                "DCGM_FI_PROF_SM_ACTIVE",
                K::Gauge,
                U::Ratio,
                "PROF fields (off by default)",
            ),
            c(
                "DCGM_FI_PROF_SM_UTIL_RATIO",
                K::Gauge,
                U::Ratio,
                "DCGM 4.6+ field name",
            ),
        ],
    ),
    s(
        Signal::TensorActive,
        "tensor_active",
        "Tensor pipes active",
        S::Dcgm,
        A::Mean,
        &[
            c(
                "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                K::Gauge,
                U::Ratio,
                "PROF fields",
            ),
            c(
                "DCGM_FI_PROF_TENSOR_UTIL_RATIO",
                K::Gauge,
                U::Ratio,
                "DCGM 4.6+ field name",
            ),
        ],
    ),
    s(
        Signal::DramActive,
        "dram_active",
        "DRAM interface active",
        S::Dcgm,
        A::Mean,
        &[
            c(
                "DCGM_FI_PROF_DRAM_ACTIVE",
                K::Gauge,
                U::Ratio,
                "PROF fields",
            ),
            c(
                "DCGM_FI_PROF_DRAM_UTIL_RATIO",
                K::Gauge,
                U::Ratio,
                "DCGM 4.6+ field name",
            ),
        ],
    ),
    s(
        Signal::PcieTx,
        "pcie_tx",
        "PCIe transmit",
        S::Dcgm,
        A::Sum,
        &[cn(
            "DCGM_FI_PROF_PCIE_TX_BYTES",
            K::Gauge,
            U::BytesPerSecond,
            "PROF fields",
            "bytes per second, even where typed counter (exporters ≤ 3.3.9)",
        )],
    ),
    s(
        Signal::PcieRx,
        "pcie_rx",
        "PCIe receive",
        S::Dcgm,
        A::Sum,
        &[cn(
            "DCGM_FI_PROF_PCIE_RX_BYTES",
            K::Gauge,
            U::BytesPerSecond,
            "PROF fields",
            "bytes per second, even where typed counter (exporters ≤ 3.3.9)",
        )],
    ),
    s(
        Signal::NvlinkBandwidth,
        "nvlink_bandwidth",
        "NVLink bandwidth",
        S::Dcgm,
        A::Sum,
        &[
            cn(
                "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                K::RateGauge,
                U::NvlinkUnits,
                "NVLink GPUs",
                "already a rate although typed counter: never rate() it",
            ),
            cn(
                "DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL",
                K::RateGauge,
                U::NvlinkUnits,
                "DCGM 4.6+ field name",
                "already a rate",
            ),
        ],
    ),
    s(
        Signal::Xid,
        "xid",
        "Last XID error",
        S::Dcgm,
        A::None,
        &[cn(
            "DCGM_FI_DEV_XID_ERRORS",
            K::Code,
            U::Code,
            "all",
            "the last XID code, not a count; absent until one occurs",
        )],
    ),
    s(
        Signal::EccDbe,
        "ecc_dbe",
        "Double-bit ECC errors",
        S::Dcgm,
        A::None,
        &[
            cn(
                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                K::Counter,
                U::Count,
                "custom field list",
                "uncorrectable (double-bit) errors since the driver loaded; read point by point",
            ),
            sub(
                "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
                K::Counter,
                U::Count,
                "custom field list",
                "the board's lifetime count, where the volatile one is not exported",
            ),
        ],
    ),
    s(
        Signal::UncorrectableRemappedRows,
        "uncorrectable_remapped_rows",
        "Rows remapped after uncorrectable errors",
        S::Dcgm,
        A::None,
        &[cn(
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            K::Counter,
            U::Count,
            "HBM GPUs (A100, H100, …)",
            "a count over the board's life; absent where unsupported (GDDR boards, vGPU)",
        )],
    ),
    s(
        Signal::RowRemapFailure,
        "row_remap_failure",
        "Row remapping failed",
        S::Dcgm,
        A::None,
        &[cn(
            "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            K::Code,
            U::Code,
            "HBM GPUs (A100, H100, …)",
            "1 when remapping a row failed, else 0",
        )],
    ),
    s(
        Signal::ClockEventReasons,
        "clock_event_reasons",
        "Why the clocks are held down",
        S::Dcgm,
        A::None,
        &[
            cn(
                "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                K::Code,
                U::Bitmask,
                "custom field list",
                "a bitmask: 0x8 hw_slowdown, 0x20 sw_thermal, 0x40 hw_thermal, 0x80 hw_power_brake are faults; 0x1 idle, 0x4 sw_power_cap are not",
            ),
            cn(
                "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                K::Code,
                U::Bitmask,
                "older exporters",
                "the same bitmask under its old name",
            ),
        ],
    ),
];

impl Signal {
    /// The signal's table entry.
    pub fn info(self) -> &'static SignalInfo {
        SIGNALS
            .iter()
            .find(|i| i.signal == self)
            .expect("every signal has a table entry")
    }

    /// Stable identifier.
    pub fn key(self) -> &'static str {
        self.info().key
    }
}

/// Known `vllm:*` family names beyond the candidates above (exposed names),
/// so that only really unknown families are listed as such.
pub const OTHER_KNOWN_VLLM: &[&str] = &[
    "vllm:num_requests_kv_fetch_by_stage",
    "vllm:cpu_cache_usage_perc",
    "vllm:cpu_prefix_cache_hit_rate",
    "vllm:engine_sleep_state",
    "vllm:spec_decode_draft_acceptance_rate",
    "vllm:spec_decode_efficiency",
    "vllm:cache_config_info",
    "vllm:lora_requests_info",
    "vllm:tokens_total",
    "vllm:external_prefix_cache_queries_total",
    "vllm:external_prefix_cache_hits_total",
    "vllm:mm_cache_queries_total",
    "vllm:mm_cache_hits_total",
    "vllm:prompt_tokens_cached_by_source_total",
    "vllm:corrupted_requests_total",
    "vllm:watermark_requests_total",
    "vllm:spec_decode_num_accepted_tokens_total",
    "vllm:spec_decode_num_emitted_tokens_total",
    "vllm:spec_decode_num_drafts_total",
    "vllm:spec_decode_num_accepted_tokens_per_pos_total",
    "vllm:diffusion_num_denoising_steps_total",
    "vllm:diffusion_num_canvas_positions_total",
    "vllm:diffusion_num_committed_tokens_total",
    "vllm:request_time_per_output_token_seconds",
    "vllm:model_forward_time_milliseconds",
    "vllm:model_execute_time_milliseconds",
    "vllm:request_max_num_generation_tokens",
    "vllm:request_params_n",
    "vllm:request_params_best_of",
    "vllm:request_prefill_kv_computed_tokens",
    "vllm:kv_block_lifetime_seconds",
    "vllm:kv_block_idle_before_evict_seconds",
    "vllm:kv_block_reuse_gap_seconds",
    "vllm:websocket_connections_active",
    "vllm:websocket_connections_total",
    "vllm:websocket_connection_duration_seconds",
    "vllm:tool_call_parser_invocations_total",
    "vllm:sleep_mode_operation_duration_seconds",
    "vllm:sleep_mode_operations_in_flight",
    "vllm:rl_weight_update_operation_duration_seconds",
    "vllm:rl_weight_update_operations_in_flight",
    "vllm:request_render_duration_seconds",
];

/// Prefixes of the optional KV-connector and offload families (known, only
/// present with that feature configured).
pub const CONNECTOR_PREFIXES: &[&str] = &[
    "vllm:nixl_",
    "vllm:kv_offload_",
    "vllm:simple_kv_offload_",
    "vllm:mooncake_",
    "vllm:hf3fs_",
    "vllm:umbp_",
    "vllm:hisparse_",
];
