//! The six steps of the walk-through as the report shows them, one table:
//! each step's id, title, the findings it may produce, and how it is drawn
//! (charts, the per-window table, "how to read this"). The renderers read
//! this table; the analysis crate's `judge::analyses::RUNS` adds what each
//! step reads and the function that produces its findings.

use crate::ids::{FindingId, StepId};
use crate::report::{Bounds, Efficiency, Gpu, Latency, Memory, Outcomes, Workload};

/// A per-window figure of the fleet, by section.
#[derive(Clone, Copy)]
pub enum Field {
    /// From the latency rows.
    Latency(fn(&Latency) -> Option<f64>),
    /// From the efficiency rows.
    Efficiency(fn(&Efficiency) -> Option<f64>),
    /// From the workload rows.
    Workload(fn(&Workload) -> Option<f64>),
    /// From the outcomes rows.
    Outcomes(fn(&Outcomes) -> Option<f64>),
    /// From the fleet's GPU rows (all GPUs together).
    Gpu(fn(&Gpu) -> Option<f64>),
    /// From the memory rows.
    Memory(fn(&Memory) -> Option<f64>),
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A line.
    Line,
    /// A dashed line.
    Dashed,
    /// A band of a stacked area.
    Stacked,
}

/// A horizontal line on a chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Line {
    /// The TTFT objective.
    TtftObjective,
    /// The inter-token objective.
    ItlObjective,
    /// A fixed value with its label.
    Fixed(f64, &'static str),
}

/// One series of a chart. A series with no value in any window is left out.
#[derive(Clone, Copy)]
pub struct SeriesSpec {
    /// Legend.
    pub name: &'static str,
    /// Its values.
    pub field: Field,
    /// How it is drawn.
    pub style: Style,
    /// Palette index.
    pub color: usize,
}

/// A chart.
#[derive(Clone, Copy)]
pub struct ChartSpec {
    /// Title.
    pub title: &'static str,
    /// Unit of the y axis.
    pub unit: &'static str,
    /// Fixed top of the y axis (percentages).
    pub y_max: Option<f64>,
    /// Series.
    pub series: &'static [SeriesSpec],
    /// Horizontal lines.
    pub lines: &'static [Line],
}

/// What a table cell shows.
#[derive(Clone, Copy)]
pub enum Cell {
    /// A figure.
    Value(Field),
    /// A latency quantile as the bucket it lies in ("250–500").
    Bucket(fn(&Latency) -> Option<Bounds>),
}

/// A column of the per-window table. A column with no value in any window
/// is left out.
#[derive(Clone, Copy)]
pub struct Column {
    /// Header.
    pub head: &'static str,
    /// Cell.
    pub cell: Cell,
}

/// One step of the walk-through.
pub struct StepDef {
    /// Its id.
    pub id: StepId,
    /// Its heading.
    pub title: &'static str,
    /// Every finding it can produce.
    pub findings: &'static [FindingId],
    /// Its charts.
    pub charts: &'static [ChartSpec],
    /// "How to read this".
    pub howto: &'static str,
    /// The per-window table.
    pub table: &'static [Column],
}

const fn line(name: &'static str, field: Field, color: usize) -> SeriesSpec {
    SeriesSpec {
        name,
        field,
        style: Style::Line,
        color,
    }
}

const fn dashed(name: &'static str, field: Field, color: usize) -> SeriesSpec {
    SeriesSpec {
        name,
        field,
        style: Style::Dashed,
        color,
    }
}

const fn stacked(name: &'static str, field: Field, color: usize) -> SeriesSpec {
    SeriesSpec {
        name,
        field,
        style: Style::Stacked,
        color,
    }
}

const fn col(head: &'static str, field: Field) -> Column {
    Column {
        head,
        cell: Cell::Value(field),
    }
}

const fn bucket(head: &'static str, f: fn(&Latency) -> Option<Bounds>) -> Column {
    Column {
        head,
        cell: Cell::Bucket(f),
    }
}

use Field as F;

fn reason(o: &Outcomes, r: &str) -> Option<f64> {
    o.completions_per_min.get(r).copied()
}

fn status(o: &Outcomes, s: &str) -> Option<f64> {
    o.http_per_min_by_status.get(s).copied()
}

/// The six steps, in the walk-through's order.
pub static STEPS: [StepDef; 6] = [LATENCY, EFFICIENCY, WORKLOAD, OUTCOMES, HARDWARE, MEMORY];

/// Step 1.
const LATENCY: StepDef = StepDef {
    id: StepId::Latency,
    title: "1. Where latency goes",
    findings: &[
        FindingId::LatencyPhasesMissing,
        FindingId::LatencyPrefillInterference,
        FindingId::LatencyDecodeDominates,
        FindingId::LatencyPrefillDominates,
        FindingId::LatencyBalanced,
        FindingId::LatencyQueueing,
        FindingId::LatencyNoQueueing,
        FindingId::LatencyFrontendOverhead,
        FindingId::LatencyTtftStall,
        FindingId::LatencyItlStall,
        FindingId::LatencyBelowFloor,
        FindingId::LatencyFloor,
    ],
    charts: &[
        ChartSpec {
            title: "Where a request's engine time goes",
            unit: "ms per request",
            y_max: None,
            series: &[
                stacked("queue", F::Latency(|l| l.queue_ms), 4),
                stacked("prefill", F::Latency(|l| l.prefill_ms), 1),
                stacked("decode", F::Latency(|l| l.decode_ms), 0),
            ],
            lines: &[],
        },
        ChartSpec {
            title: "Time to first token",
            unit: "ms",
            y_max: None,
            series: &[
                line("p50", F::Latency(|l| l.ttft_p50_ms), 2),
                line("p95", F::Latency(|l| l.ttft_p95_ms), 0),
                dashed("average", F::Latency(|l| l.ttft_ms), 3),
            ],
            lines: &[Line::TtftObjective],
        },
        ChartSpec {
            title: "Inter-token latency",
            unit: "ms",
            y_max: None,
            series: &[
                line("p50", F::Latency(|l| l.itl_p50_ms), 2),
                line("p95", F::Latency(|l| l.itl_p95_ms), 0),
                dashed("average", F::Latency(|l| l.inter_token_ms), 3),
            ],
            lines: &[Line::ItlObjective],
        },
    ],
    howto: "The stacked chart splits the average time a finished request spent in the engine: waiting in the queue, reading the prompt (prefill) and writing the answer (decode). Whichever band is largest is where tuning pays. vLLM records all three when a request finishes, so a window's queue time belongs to the requests that finished in it. Time to first token is what users feel before text appears; inter-token latency is the pace of the streamed answer. Percentiles come from vLLM's histograms: the lines are Prometheus' interpolation inside a bucket, and the table gives the bucket itself, which is all the data really knows.",
    table: &[
        col("queue ms", F::Latency(|l| l.queue_ms)),
        col("prefill ms", F::Latency(|l| l.prefill_ms)),
        col("decode ms", F::Latency(|l| l.decode_ms)),
        col("e2e ms", F::Latency(|l| l.e2e_ms)),
        col("TTFT ms", F::Latency(|l| l.ttft_ms)),
        bucket("TTFT p95", |l| l.bounds.ttft_p95_ms),
        bucket("TTFT p99", |l| l.bounds.ttft_p99_ms),
        col("ITL ms", F::Latency(|l| l.inter_token_ms)),
        bucket("ITL p95", |l| l.bounds.itl_p95_ms),
        bucket("ITL p99", |l| l.bounds.itl_p99_ms),
        col("decode %", F::Latency(|l| l.decode_share_pct)),
    ],
};

/// Step 2.
const EFFICIENCY: StepDef = StepDef {
    id: StepId::Efficiency,
    title: "2. Does the engine use the GPU well",
    findings: &[
        FindingId::EfficiencyPrefixLow,
        FindingId::EfficiencyPrefixOk,
        FindingId::EfficiencyPrefixCeiling,
        FindingId::EfficiencyPrefixAboveStated,
        FindingId::EfficiencyPrefixOff,
        FindingId::EfficiencyPrefixLifetimeOnly,
        FindingId::EfficiencyPrefixMissing,
        FindingId::EfficiencyBatchingBroken,
        FindingId::EfficiencyBatchingOk,
        FindingId::EfficiencyBatchingMissing,
        FindingId::EfficiencyKvUsage,
        FindingId::EfficiencyKvMissing,
        FindingId::EfficiencyPreemptions,
        FindingId::EfficiencyNoPreemptions,
        FindingId::EfficiencyWaiting,
        FindingId::DataQualityGaugesDisagree,
    ],
    charts: &[
        ChartSpec {
            title: "Prefix-cache hits and KV-cache pool",
            unit: "%",
            y_max: Some(100.0),
            series: &[
                line(
                    "prefix-cache hit %",
                    F::Efficiency(|e| e.prefix_cache_hit_pct),
                    0,
                ),
                line("KV pool used (max)", F::Efficiency(|e| e.kv_cache_pct), 1),
            ],
            lines: &[Line::Fixed(60.0, "KV ≈ 60 %")],
        },
        ChartSpec {
            title: "Batching: tokens per step against requests",
            unit: "count",
            y_max: None,
            series: &[
                line(
                    "tokens per step",
                    F::Efficiency(|e| e.tokens_per_iteration),
                    0,
                ),
                line("running (max)", F::Efficiency(|e| e.running), 2),
                line("waiting (max)", F::Efficiency(|e| e.waiting), 4),
            ],
            lines: &[],
        },
    ],
    howto: "With continuous batching every running request adds a token to every engine step, so tokens per step should track the running requests (plus prompt chunks). Waiting requests mean the engine had no room. The prefix-cache hit rate is the share of prompt tokens served from cache. KV-cache usage is the share of the block pool allocated at start-up, not of VRAM.",
    table: &[
        col("hit %", F::Efficiency(|e| e.prefix_cache_hit_pct)),
        col("cached %", F::Efficiency(|e| e.cached_prompt_share_pct)),
        col("tokens/step", F::Efficiency(|e| e.tokens_per_iteration)),
        col("gen tok/s", F::Efficiency(|e| e.gen_tokens_per_sec)),
        col("prompt tok/s", F::Efficiency(|e| e.prompt_tokens_per_sec)),
        col("running", F::Efficiency(|e| e.running)),
        col("waiting", F::Efficiency(|e| e.waiting)),
        col("KV %", F::Efficiency(|e| e.kv_cache_pct)),
        col("KV % avg", F::Efficiency(|e| e.kv_cache_pct_avg)),
        col("preempt/min", F::Efficiency(|e| e.preemptions_per_min)),
    ],
};

/// Step 3.
const WORKLOAD: StepDef = StepDef {
    id: StepId::Workload,
    title: "3. The workload's shape",
    findings: &[
        FindingId::WorkloadPrefillHeavy,
        FindingId::WorkloadDecodeHeavy,
        FindingId::WorkloadMixed,
        FindingId::WorkloadTokensMissing,
        FindingId::WorkloadTruncated,
        FindingId::WorkloadPartlyTruncated,
        FindingId::WorkloadNotTruncated,
        FindingId::WorkloadShapeChanged,
    ],
    charts: &[
        ChartSpec {
            title: "Token flow: prompt against generated",
            unit: "tokens/s",
            y_max: None,
            series: &[
                line("prompt", F::Efficiency(|e| e.prompt_tokens_per_sec), 1),
                line("generated", F::Efficiency(|e| e.gen_tokens_per_sec), 0),
            ],
            lines: &[],
        },
        ChartSpec {
            title: "Requests finished",
            unit: "per minute",
            y_max: None,
            series: &[line("requests/min", F::Workload(|w| w.requests_per_min), 0)],
            lines: &[],
        },
    ],
    howto: "Prompt tokens are read once per request (prefill); generated tokens one engine step each (decode). A workload with far more prompt than generated tokens is prefill-heavy (retrieval, extraction); the opposite is decode-heavy (chat, generation). Answers that use nearly all of max_tokens, or mostly end on length, are being cut off.",
    table: &[
        col("requests/min", F::Workload(|w| w.requests_per_min)),
        col("prompt tok", F::Workload(|w| w.avg_prompt_tokens)),
        col("generated tok", F::Workload(|w| w.avg_generated_tokens)),
        col("max_tokens", F::Workload(|w| w.avg_max_tokens)),
        col("gen/prompt", F::Workload(|w| w.gen_to_prompt_ratio)),
        col(
            "max_tokens used %",
            F::Workload(|w| w.max_tokens_utilisation_pct),
        ),
    ],
};

/// Step 4.
const OUTCOMES: StepDef = StepDef {
    id: StepId::Outcomes,
    title: "4. Outcomes",
    findings: &[
        FindingId::OutcomesErrorsAborts,
        FindingId::OutcomesErrorsAbortsLow,
        FindingId::OutcomesErrorBurst,
        FindingId::OutcomesReasonsMissing,
        FindingId::OutcomesDriftToLength,
        FindingId::OutcomesHttpErrors,
        FindingId::OutcomesHttpOk,
        FindingId::OutcomesHttpMissing,
        FindingId::OutcomesClientDisconnects,
        FindingId::OutcomesClientAbortsUncounted,
        FindingId::OutcomesRestart,
        FindingId::OutcomesAdmissionRejected,
    ],
    charts: &[ChartSpec {
        title: "Completions by finished_reason",
        unit: "per minute",
        y_max: None,
        series: &[
            stacked("stop", F::Outcomes(|o| reason(o, "stop")), 0),
            stacked("length", F::Outcomes(|o| reason(o, "length")), 1),
            stacked("abort", F::Outcomes(|o| reason(o, "abort")), 3),
            stacked("error", F::Outcomes(|o| reason(o, "error")), 4),
            stacked("repetition", F::Outcomes(|o| reason(o, "repetition")), 2),
        ],
        lines: &[],
    }],
    howto: "stop is an answer that ended on its own, length one cut at max_tokens, abort and error requests the engine cancelled or failed. HTTP status classes count every request the API server answered, including those rejected before the engine. In V1, clients that disconnect are not counted as aborts: HTTP 2xx on the completion handlers beyond the finished requests estimates them.",
    table: &[
        col("stop/min", F::Outcomes(|o| reason(o, "stop"))),
        col("length/min", F::Outcomes(|o| reason(o, "length"))),
        col("abort/min", F::Outcomes(|o| reason(o, "abort"))),
        col("error/min", F::Outcomes(|o| reason(o, "error"))),
        col("repetition/min", F::Outcomes(|o| reason(o, "repetition"))),
        col("error+abort %", F::Outcomes(|o| o.error_abort_pct)),
        col("HTTP 2xx/min", F::Outcomes(|o| status(o, "2xx"))),
        col("HTTP 4xx/min", F::Outcomes(|o| status(o, "4xx"))),
        col("HTTP 5xx/min", F::Outcomes(|o| status(o, "5xx"))),
        col("HTTP error %", F::Outcomes(|o| o.http_error_pct)),
        col(
            "disconnects/min (est.)",
            F::Outcomes(|o| o.client_disconnects_per_min),
        ),
    ],
};

/// Step 5.
const HARDWARE: StepDef = StepDef {
    id: StepId::Hardware,
    title: "5. The GPU as witness",
    findings: &[
        FindingId::HardwareDcgmMissing,
        FindingId::HardwareIdle,
        FindingId::HardwareMemoryBound,
        FindingId::HardwareComputeBound,
        FindingId::HardwareStarved,
        FindingId::HardwareMixed,
        FindingId::HardwareProfMissing,
        FindingId::HardwareUtilIsResidency,
        FindingId::HardwareHot,
        FindingId::HardwareXid,
        FindingId::HardwareMemoryErrors,
        FindingId::HardwareClocksHeld,
    ],
    charts: &[
        ChartSpec {
            title: "What the GPU is doing",
            unit: "%",
            y_max: Some(100.0),
            series: &[
                line("GPU util", F::Gpu(|g| g.gpu_util_pct_avg), 3),
                line(
                    "GR engine active",
                    F::Gpu(|g| g.gr_engine_active_pct_avg),
                    2,
                ),
                line("tensor active", F::Gpu(|g| g.tensor_active_pct_avg), 1),
                line("DRAM active", F::Gpu(|g| g.dram_active_pct_avg), 0),
            ],
            lines: &[],
        },
        ChartSpec {
            title: "Power",
            unit: "W",
            y_max: None,
            series: &[
                line("power (mean)", F::Gpu(|g| g.power_w_avg), 0),
                dashed("power (max)", F::Gpu(|g| g.power_w), 1),
            ],
            lines: &[],
        },
    ],
    howto: "GPU util only says that some kernel was running: one small kernel reads 100 %. The profiling fields say what kind of work it was: high DRAM activity with idle tensor cores is memory-bound decode (quantization helps), busy tensor cores are compute-bound prefill or large batches. Values are window means across GPUs.",
    table: &[
        col("util %", F::Gpu(|g| g.gpu_util_pct_avg)),
        col("GR %", F::Gpu(|g| g.gr_engine_active_pct_avg)),
        col("tensor %", F::Gpu(|g| g.tensor_active_pct_avg)),
        col("DRAM %", F::Gpu(|g| g.dram_active_pct_avg)),
        col("VRAM MiB", F::Gpu(|g| g.vram_used_mib)),
        col("VRAM %", F::Gpu(|g| g.vram_used_pct)),
        col("W", F::Gpu(|g| g.power_w_avg)),
        col("°C", F::Gpu(|g| g.temp_c)),
        col("SM MHz", F::Gpu(|g| g.sm_clock_mhz_avg)),
        col("energy J", F::Gpu(|g| g.energy_j)),
    ],
};

/// Step 6.
const MEMORY: StepDef = StepDef {
    id: StepId::Memory,
    title: "6. KV cache against VRAM, and energy",
    findings: &[
        FindingId::MemoryKvVsVram,
        FindingId::MemoryPoolOversized,
        FindingId::MemoryKvMissing,
        FindingId::MemoryVramMissing,
        FindingId::MemoryEnergy,
        FindingId::MemoryEnergyMissing,
    ],
    charts: &[
        ChartSpec {
            title: "KV-cache pool against VRAM",
            unit: "%",
            y_max: Some(100.0),
            series: &[
                line("VRAM used", F::Memory(|m| m.vram_used_pct), 3),
                line("KV pool used (max)", F::Memory(|m| m.kv_cache_pct), 0),
                dashed("KV pool used (mean)", F::Memory(|m| m.kv_cache_pct_avg), 2),
            ],
            lines: &[Line::Fixed(60.0, "KV ≈ 60 %")],
        },
        ChartSpec {
            title: "Energy efficiency",
            unit: "tokens/s per W",
            y_max: None,
            series: &[line(
                "tokens/s per watt",
                F::Memory(|m| m.tokens_per_watt),
                0,
            )],
            lines: &[],
        },
    ],
    howto: "vLLM takes its share of VRAM at start-up, so VRAM reads nearly full whatever the load; the KV-cache pool inside it is what fills with load. Autoscale on the KV pool and requests in flight, plan capacity on VRAM, never alert on VRAM. Tokens per watt compare the energy cost of the work before and after a change.",
    table: &[
        col("KV %", F::Memory(|m| m.kv_cache_pct)),
        col("KV % avg", F::Memory(|m| m.kv_cache_pct_avg)),
        col("VRAM %", F::Memory(|m| m.vram_used_pct)),
        col("VRAM % avg", F::Memory(|m| m.vram_used_pct_avg)),
        col("tokens/s/W", F::Memory(|m| m.tokens_per_watt)),
        col("tokens/J", F::Memory(|m| m.tokens_per_joule)),
    ],
};

/// The step of an id.
pub fn step(id: StepId) -> &'static StepDef {
    STEPS
        .iter()
        .find(|s| s.id == id)
        .expect("every step id has a table entry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_once_in_order_and_every_finding_listed_by_its_step() {
        let ids: Vec<StepId> = STEPS.iter().map(|s| s.id).collect();
        assert_eq!(ids, StepId::ALL);
        for f in FindingId::ALL {
            let owners: Vec<StepId> = STEPS
                .iter()
                .filter(|s| s.findings.contains(f))
                .map(|s| s.id)
                .collect();
            assert_eq!(owners, [f.step()], "{f} must be listed by its step only");
        }
    }
}
