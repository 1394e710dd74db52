//! Typed identifiers. Every finding, recommendation, SLO, phase kind,
//! timeline event and data-quality note has one, and code compares the
//! types, never strings. In the JSON they are the strings listed here (a
//! public contract: other tools match on them), and
//! `tests/it/report.rs` fails when an expectation file, a golden or
//! `docs/report-schema.md` names one that does not exist.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An enum whose JSON form is a fixed string per variant.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $var:ident = $s:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $var, )*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var,)*];

            /// The JSON string.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $s,)*
                }
            }

            /// The value for a JSON string.
            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($s => Some($name::$var),)*
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = Cow::<'de, str>::deserialize(d)?;
                $name::parse(&s).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        concat!("unknown ", stringify!($name), " `{}`"),
                        s
                    ))
                })
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "enum": [$($s,)*]
                })
            }
        }
    };
}

string_enum! {
    /// One of the six analyses of the walk-through.
    pub enum StepId {
        /// 1. Where latency goes.
        Latency = "latency",
        /// 2. Does the engine use the GPU well.
        Efficiency = "efficiency",
        /// 3. The workload's shape.
        Workload = "workload",
        /// 4. Outcomes.
        Outcomes = "outcomes",
        /// 5. The GPU as witness.
        Hardware = "hardware",
        /// 6. KV cache against VRAM, and energy.
        Memory = "memory",
    }
}

string_enum! {
    /// A finding. The part before the dot is its analysis, or
    /// `data_quality` for one about the data (see [`FindingId::step`]).
    pub enum FindingId {
        /// Queue, prefill or decode time is not exported.
        LatencyPhasesMissing = "latency.phases_missing",
        /// Long prompts' prefill slows running answers.
        LatencyPrefillInterference = "latency.prefill_interference",
        /// Decode is most of engine time.
        LatencyDecodeDominates = "latency.decode_dominates",
        /// Prefill is a large part of engine time.
        LatencyPrefillDominates = "latency.prefill_dominates",
        /// No phase dominates.
        LatencyBalanced = "latency.balanced",
        /// Requests queued (the queue SLO's definition).
        LatencyQueueing = "latency.queueing",
        /// Nothing queued.
        LatencyNoQueueing = "latency.no_queueing",
        /// TTFT exceeds queue + prefill by much: the API server.
        LatencyFrontendOverhead = "latency.frontend_overhead",
        /// Inter-token p99 proven at 3× the objective or more.
        LatencyItlStall = "latency.itl_p99_stall",
        /// The inter-token objective is below the hardware's decode floor.
        LatencyBelowFloor = "latency.objective_below_floor",
        /// Measured decode against the hardware's floor.
        LatencyFloor = "latency.decode_floor",
        /// TTFT p99 proven at 3× the objective or more.
        LatencyTtftStall = "latency.ttft_p99_stall",
        /// Continuous batching is not happening.
        EfficiencyBatchingBroken = "efficiency.batching_broken",
        /// Tokens per engine step are not exported.
        EfficiencyBatchingMissing = "efficiency.batching_missing",
        /// Continuous batching works.
        EfficiencyBatchingOk = "efficiency.batching_ok",
        /// KV usage is not exported.
        EfficiencyKvMissing = "efficiency.kv_missing",
        /// KV pool usage.
        EfficiencyKvUsage = "efficiency.kv_usage",
        /// No preemptions.
        EfficiencyNoPreemptions = "efficiency.no_preemptions",
        /// Preemptions happened.
        EfficiencyPreemptions = "efficiency.preemptions",
        /// Only the V0 lifetime hit rate is exported.
        EfficiencyPrefixLifetimeOnly = "efficiency.prefix_cache_lifetime_only",
        /// The prefix-cache hit rate is low.
        EfficiencyPrefixLow = "efficiency.prefix_cache_low",
        /// No prefix-cache metric.
        EfficiencyPrefixMissing = "efficiency.prefix_cache_missing",
        /// The prefix-cache hit rate is good.
        EfficiencyPrefixOk = "efficiency.prefix_cache_ok",
        /// The hit rate against what the stated shared prefix allows.
        EfficiencyPrefixCeiling = "efficiency.prefix_ceiling",
        /// The hit rate exceeds what the stated shared prefix allows: the
        /// statement is short of what prompts share.
        EfficiencyPrefixAboveStated = "efficiency.prefix_above_stated",
        /// Prefix caching is off (V0 gauge at −1).
        EfficiencyPrefixOff = "efficiency.prefix_caching_off",
        /// Requests waited for a slot.
        EfficiencyWaiting = "efficiency.waiting",
        /// The running + waiting gauges contradict Little's law over the
        /// engine's own latency histogram (shown in step 2, beside the
        /// gauges it questions).
        DataQualityGaugesDisagree = "data_quality.gauges_disagree",
        /// Short prompts, long answers.
        WorkloadDecodeHeavy = "workload.decode_heavy",
        /// Neither dominates.
        WorkloadMixed = "workload.mixed",
        /// Answers end on their own.
        WorkloadNotTruncated = "workload.not_truncated",
        /// Long prompts, short answers.
        WorkloadPrefillHeavy = "workload.prefill_heavy",
        /// The token mix changed during the capture.
        WorkloadShapeChanged = "workload.shape_changed",
        /// No token counters.
        WorkloadTokensMissing = "workload.tokens_missing",
        /// Answers are cut at max_tokens.
        WorkloadTruncated = "workload.truncated",
        /// A notable share of requests ends on length, short of most.
        WorkloadPartlyTruncated = "workload.partly_truncated",
        /// V1 does not count client disconnects as aborts.
        OutcomesClientAbortsUncounted = "outcomes.client_aborts_uncounted",
        /// Client disconnects estimated from HTTP 2xx against finished requests.
        OutcomesClientDisconnects = "outcomes.client_disconnects",
        /// More answers end on length later in the capture.
        OutcomesDriftToLength = "outcomes.drift_to_length",
        /// Errors + aborts at or above the objective.
        OutcomesErrorsAborts = "outcomes.errors_aborts",
        /// Errors + aborts below the objective.
        OutcomesErrorsAbortsLow = "outcomes.errors_aborts_low",
        /// Errors and aborts concentrated in a few minutes.
        OutcomesErrorBurst = "outcomes.error_burst",
        /// HTTP 4xx/5xx answers.
        OutcomesHttpErrors = "outcomes.http_errors",
        /// No HTTP status counts.
        OutcomesHttpMissing = "outcomes.http_missing",
        /// Every HTTP request answered 2xx.
        OutcomesHttpOk = "outcomes.http_ok",
        /// No finished-request counts.
        OutcomesReasonsMissing = "outcomes.reasons_missing",
        /// The server restarted during the capture.
        OutcomesRestart = "outcomes.restart",
        /// The queue limits turned requests away before the engine.
        OutcomesAdmissionRejected = "outcomes.admission_rejected",
        /// Tensor cores busy.
        HardwareComputeBound = "hardware.compute_bound",
        /// No DCGM data.
        HardwareDcgmMissing = "hardware.dcgm_missing",
        /// The GPU ran hot.
        HardwareHot = "hardware.hot",
        /// The GPU is mostly idle.
        HardwareIdle = "hardware.idle",
        /// DRAM busy, tensor cores idle.
        HardwareMemoryBound = "hardware.memory_bound",
        /// Neither saturated.
        HardwareMixed = "hardware.mixed",
        /// No DCGM profiling fields.
        HardwareProfMissing = "hardware.prof_missing",
        /// Kernels leave gaps.
        HardwareStarved = "hardware.starved",
        /// GPU util reads high while tensor cores idle.
        HardwareUtilIsResidency = "hardware.util_is_residency",
        /// XID errors.
        HardwareXid = "hardware.xid",
        /// Uncorrectable memory errors: double-bit ECC, rows remapped after
        /// them, a failed remap.
        HardwareMemoryErrors = "hardware.memory_errors",
        /// Clocks held down by a thermal or hardware reason.
        HardwareClocksHeld = "hardware.clocks_held",
        /// Tokens per joule.
        MemoryEnergy = "memory.energy",
        /// No energy or power data.
        MemoryEnergyMissing = "memory.energy_missing",
        /// KV usage is not exported.
        MemoryKvMissing = "memory.kv_missing",
        /// KV pool and VRAM on one axis.
        MemoryKvVsVram = "memory.kv_vs_vram",
        /// The KV pool is mostly idle.
        MemoryPoolOversized = "memory.pool_oversized",
        /// No VRAM data.
        MemoryVramMissing = "memory.vram_missing",
    }
}

impl FindingId {
    /// The analysis it belongs to (the part before the dot; a finding
    /// about the data itself, `data_quality.*`, is shown in step 2 beside
    /// the running and waiting gauges it questions).
    pub fn step(self) -> StepId {
        let prefix = self.as_str().split('.').next().unwrap_or_default();
        if prefix == "data_quality" {
            return StepId::Efficiency;
        }
        StepId::parse(prefix).expect("every finding id starts with a step id")
    }
}

/// A recommendation's id: the name of the rule that made it
/// (`raise_max_num_seqs`). The set is open, so that a rule is its own file
/// and a line in the table: the analysis's table of rules
/// (`vllm_lens_analysis::rules::RULES`) lists the ids this version makes,
/// and the JSON Schema it writes enumerates them. A report from another
/// version may carry others; any snake_case word reads back.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecId(Cow<'static, str>);

impl RecId {
    /// The id of a rule (a snake_case word, checked by the rules' tests).
    pub const fn new(id: &'static str) -> RecId {
        RecId(Cow::Borrowed(id))
    }

    /// The JSON string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the words an id may be: `[a-z0-9_]+`, starting with a letter.
    pub fn is_valid(s: &str) -> bool {
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    }
}

impl fmt::Display for RecId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RecId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RecId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RecId, D::Error> {
        let s = String::deserialize(d)?;
        if RecId::is_valid(&s) {
            Ok(RecId(Cow::Owned(s)))
        } else {
            Err(serde::de::Error::custom(format!(
                "not a recommendation id `{s}`"
            )))
        }
    }
}

impl JsonSchema for RecId {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("RecId")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^[a-z][a-z0-9_]*$"
        })
    }
}

string_enum! {
    /// One of the four SLOs.
    pub enum SloId {
        /// Time to first token, p95.
        TtftP95 = "ttft_p95",
        /// Inter-token latency, p95.
        ItlP95 = "itl_p95",
        /// No queueing at N requests in flight.
        QueueAtConcurrency = "queue_at_concurrency",
        /// Errors + aborts share of finished requests.
        ErrorAbortRate = "error_abort_rate",
    }
}

string_enum! {
    /// What a recommendation addresses: a failing objective, or a kind of
    /// waste or risk.
    pub enum Addresses {
        /// The TTFT objective.
        TtftP95 = "ttft_p95",
        /// The inter-token objective.
        ItlP95 = "itl_p95",
        /// The queueing objective.
        QueueAtConcurrency = "queue_at_concurrency",
        /// The error + abort objective.
        ErrorAbortRate = "error_abort_rate",
        /// Room for more load.
        Capacity = "capacity",
        /// GPU time or memory spent on work that need not be done.
        Efficiency = "efficiency",
        /// Money or energy.
        Cost = "cost",
        /// Restarts, errors, lost requests, alerting.
        Reliability = "reliability",
        /// What users receive: answers cut short.
        Quality = "quality",
    }
}

/// How an objective is measured, which decides how its value and its
/// margin are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SloKind {
    /// A latency quantile, judged by its histogram's bucket edges.
    Quantile,
    /// Where queueing starts, in requests in flight.
    Queue,
    /// A share of finished requests, %.
    Rate,
}

impl SloId {
    /// How the objective is measured.
    pub fn kind(self) -> SloKind {
        match self {
            SloId::TtftP95 | SloId::ItlP95 => SloKind::Quantile,
            SloId::QueueAtConcurrency => SloKind::Queue,
            SloId::ErrorAbortRate => SloKind::Rate,
        }
    }
}

impl From<SloId> for Addresses {
    fn from(s: SloId) -> Addresses {
        match s {
            SloId::TtftP95 => Addresses::TtftP95,
            SloId::ItlP95 => Addresses::ItlP95,
            SloId::QueueAtConcurrency => Addresses::QueueAtConcurrency,
            SloId::ErrorAbortRate => Addresses::ErrorAbortRate,
        }
    }
}

impl PhaseKind {
    /// In words, for a phase's line.
    pub fn words(self) -> &'static str {
        match self {
            PhaseKind::Steady => "steady",
            PhaseKind::Ramp => "ramp",
            PhaseKind::Overload => "overload",
            PhaseKind::Restart => "restart",
            PhaseKind::Down => "down",
            PhaseKind::Burst => "error burst",
            PhaseKind::Idle => "idle",
            PhaseKind::Warmup => "warm-up",
        }
    }

    /// A load level (steady, a ramp or an overload) rather than an event.
    pub fn is_load(self) -> bool {
        matches!(
            self,
            PhaseKind::Steady | PhaseKind::Ramp | PhaseKind::Overload
        )
    }
}

impl Addresses {
    /// The SLO, when it is one.
    pub fn slo(self) -> Option<SloId> {
        SloId::parse(self.as_str())
    }
}

string_enum! {
    /// Where the verdict sends the reader next (`verdict.look_next[].id`).
    pub enum LookNextId {
        /// An engine objective fails: the engine.
        Engine = "engine",
        /// The API server in front of the engine.
        FrontEnd = "front_end",
        /// What lies between the user and the API server.
        GatewayOrNetwork = "gateway_or_network",
        /// The client's max_tokens cuts answers.
        ClientMaxTokens = "client_max_tokens",
        /// Prompts recompute what a shared prefix would serve.
        PromptPrefix = "prompt_prefix",
    }
}

string_enum! {
    /// The tuning guide's follow-ups (`verdict.follow_ups[].id`).
    pub enum FollowUpId {
        /// Prefill is a small share of the request.
        StopOptimisingPrefill = "stop_optimising_prefill",
        /// Decode is memory-bound: quantize before more GPUs.
        QuantizeBeforeBuying = "quantize_before_buying",
        /// Answers end at max_tokens.
        RaiseMaxTokens = "raise_max_tokens",
        /// The hit rate is under what the prompts allow.
        StandardisePromptPrefix = "standardise_prompt_prefix",
        /// The load to scale out at, set before it is needed.
        SetAutoscalingTrigger = "set_autoscaling_trigger",
        /// VRAM stays high whatever the load: alert on queue time.
        AlertOnQueueTime = "alert_on_queue_time",
        /// The token mix this report's limits hold for.
        WatchGenerationToPrompt = "watch_generation_to_prompt",
    }
}

string_enum! {
    /// What kind of stretch of the capture a phase is.
    pub enum PhaseKind {
        /// A process's first minutes (after a start or restart).
        Warmup = "warmup",
        /// A steady load level.
        Steady = "steady",
        /// Between two load levels.
        Ramp = "ramp",
        /// A load level whose queue grows across it: more arrives than the
        /// server serves.
        Overload = "overload",
        /// The window in which a server restarted.
        Restart = "restart",
        /// A server could not be scraped.
        Down = "down",
        /// Errors or aborts far above the rest of the capture.
        Burst = "burst",
        /// No load.
        Idle = "idle",
    }
}

string_enum! {
    /// A timeline event.
    pub enum TimelineKind {
        /// An objective proven missed in a window.
        SloBreached = "slo_breached",
        /// Back within it.
        SloRecovered = "slo_recovered",
        /// Requests first queued (the queue objective's definition).
        WaitingStarted = "waiting_started",
        /// Preemptions first seen.
        PreemptionsStarted = "preemptions_started",
        /// KV pool above 60 %.
        KvAbove60 = "kv_above_60",
        /// KV pool above 90 %.
        KvAbove90 = "kv_above_90",
        /// A process restarted.
        Restart = "restart",
        /// Scrapes missing or failed.
        ScrapeGap = "scrape_gap",
        /// The token mix changed.
        ShapeChange = "shape_change",
        /// A GPU reported an XID.
        Xid = "xid",
        /// A GPU reported another hardware fault (memory errors, clocks
        /// held down).
        GpuFault = "gpu_fault",
        /// The load moved to another level.
        LoadStep = "load_step",
        /// Errors or aborts burst.
        ErrorBurst = "error_burst",
    }
}

string_enum! {
    /// A hardware fault a GPU reported.
    pub enum GpuFaultKind {
        /// An XID (`DCGM_FI_DEV_XID_ERRORS`, the last code).
        Xid = "xid",
        /// Double-bit (uncorrectable) ECC errors.
        EccDoubleBit = "ecc_double_bit",
        /// Rows remapped after uncorrectable errors.
        UncorrectableRemappedRows = "uncorrectable_remapped_rows",
        /// Remapping a row failed.
        RowRemapFailure = "row_remap_failure",
        /// Clocks held down by hw_slowdown, sw_thermal, hw_thermal or
        /// hw_power_brake.
        ClocksHeld = "clocks_held",
    }
}

string_enum! {
    /// A data-quality note.
    pub enum QualityKind {
        /// A signal the analyses read is missing.
        MissingMetric = "missing_metric",
        /// Counters reset.
        Reset = "reset",
        /// Scrapes missing or failed.
        Gap = "gap",
        /// Times disagree.
        ClockSkew = "clock_skew",
        /// The same series twice.
        DuplicateSeries = "duplicate_series",
        /// Histograms with different bucket layouts.
        BucketLayouts = "bucket_layouts",
        /// A known bug of the release.
        KnownBug = "known_bug",
        /// The capture interval.
        CollectInterval = "collect_interval",
        /// Unreadable lines or files.
        Diagnostic = "diagnostic",
        /// The release.
        Version = "version",
        /// A fallback metric was read.
        Fallback = "fallback",
        /// Buckets that are not cumulative.
        NonCumulative = "non_cumulative",
        /// NaN or infinite samples.
        NonFinite = "non_finite",
        /// A counter that drops often.
        CounterBackwards = "counter_backwards",
        /// A CPU server: the GPU figures do not apply.
        CpuServer = "cpu_server",
        /// Read from Prometheus API answers, not from scrapes.
        PrometheusExport = "prometheus_export",
        /// A pushdown export: per-window statistics computed by Prometheus.
        Pushdown = "pushdown",
    }
}

/// Whom a row or event concerns: the whole fleet, or one replica (a vLLM
/// target); a GPU that no replica could be matched with is `Unassigned`.
/// In the JSON, `"fleet"`, `"unassigned"` or the target's name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Every replica together.
    Fleet,
    /// One replica (target name).
    Replica(String),
    /// A GPU's rows when no replica owns it.
    Unassigned,
}

impl Scope {
    /// The JSON string.
    pub fn as_str(&self) -> &str {
        match self {
            Scope::Fleet => "fleet",
            Scope::Replica(name) => name,
            Scope::Unassigned => "unassigned",
        }
    }

    /// The replica's name, for a replica.
    pub fn replica(&self) -> Option<&str> {
        match self {
            Scope::Replica(name) => Some(name),
            _ => None,
        }
    }

    /// True for the fleet.
    pub fn is_fleet(&self) -> bool {
        matches!(self, Scope::Fleet)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scope, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "fleet" => Scope::Fleet,
            "unassigned" => Scope::Unassigned,
            _ => Scope::Replica(s),
        })
    }
}

impl JsonSchema for Scope {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Scope")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "`fleet` for every replica together, a replica's target name, or `unassigned` for a GPU no replica could be matched with."
        })
    }
}

/// Which GPU a row is: one (its UUID, or the tool's key where DCGM gives
/// none), or every GPU of its scope together. In the JSON, the UUID or
/// `"all"`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuId {
    /// Every GPU of the row's scope.
    All,
    /// One GPU.
    One(String),
}

impl GpuId {
    /// The JSON string.
    pub fn as_str(&self) -> &str {
        match self {
            GpuId::All => "all",
            GpuId::One(uuid) => uuid,
        }
    }

    /// True for an aggregate.
    pub fn is_all(&self) -> bool {
        matches!(self, GpuId::All)
    }
}

impl fmt::Display for GpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for GpuId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GpuId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<GpuId, D::Error> {
        let s = String::deserialize(d)?;
        Ok(if s == "all" {
            GpuId::All
        } else {
            GpuId::One(s)
        })
    }
}

impl JsonSchema for GpuId {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("GpuId")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "A GPU's UUID, or `all` for every GPU of the row's scope together."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_and_are_unique() {
        fn check<T: Copy + PartialEq + fmt::Debug>(
            all: &[T],
            s: fn(T) -> &'static str,
            p: fn(&str) -> Option<T>,
        ) {
            let mut seen = std::collections::BTreeSet::new();
            for &x in all {
                assert!(seen.insert(s(x)), "{} twice", s(x));
                assert_eq!(p(s(x)), Some(x));
            }
        }
        check(StepId::ALL, StepId::as_str, StepId::parse);
        check(FindingId::ALL, FindingId::as_str, FindingId::parse);
        check(SloId::ALL, SloId::as_str, SloId::parse);
        check(Addresses::ALL, Addresses::as_str, Addresses::parse);
        check(PhaseKind::ALL, PhaseKind::as_str, PhaseKind::parse);
        check(TimelineKind::ALL, TimelineKind::as_str, TimelineKind::parse);
        check(QualityKind::ALL, QualityKind::as_str, QualityKind::parse);
        for f in FindingId::ALL {
            let _ = f.step();
        }
        for s in SloId::ALL {
            assert_eq!(Addresses::from(*s).slo(), Some(*s));
        }
    }

    #[test]
    fn json_forms() {
        assert_eq!(
            serde_json::to_string(&FindingId::LatencyQueueing).unwrap(),
            "\"latency.queueing\""
        );
        assert_eq!(
            serde_json::from_str::<RecId>("\"move_to_kserve\"").unwrap(),
            RecId::new("move_to_kserve")
        );
        assert!(serde_json::from_str::<RecId>("\"Not an id\"").is_err());
        assert_eq!(
            serde_json::to_string(&Scope::Replica("vllm-0".into())).unwrap(),
            "\"vllm-0\""
        );
        assert_eq!(
            serde_json::from_str::<Scope>("\"fleet\"").unwrap(),
            Scope::Fleet
        );
    }
}
