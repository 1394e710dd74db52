//! Recommendations: each rule fires only when its own evidence is in the
//! capture, names what it `addresses` (failing or undecided objectives
//! first, then capacity, efficiency, cost, reliability, quality), and is
//! ranked by its expected effect on those: a failing objective outweighs
//! an undecided one, which outweighs waste or risk, and within an
//! objective a lever weighs by the share of the objective's breakdown it
//! acts on (queue, prefill or frontend time for TTFT).
//!
//! Rules never contradict the scorecard; [`contradiction`] lists the
//! cases, and a rule that hits one is dropped (docs/report-schema.md lists
//! them, and `tests/it/report.rs` checks every sample).

use vllm_lens_catalog::Signal;

use crate::analyses::{Ctx, workload};
use crate::ids::{Addresses as A, RecId, SloId};
use crate::model::{Analysis, Confidence, Evidence, FindingId, Recommendation, SloStatus, Snippet};
use crate::prose;
use crate::snippets::{self, Checker};
use crate::text::{ms_text, num};
use crate::thresholds::*;

/// One fired rule before ranking.
struct Rule {
    id: RecId,
    /// What it acts on, with the share of each it can move (0..=1).
    effect: Vec<(A, f64)>,
    vars: Vec<(&'static str, String)>,
    confidence: Confidence,
    evidence: Vec<Evidence>,
    snippets: Vec<Snippet>,
}

/// How much a target weighs, by its status.
fn weight(ctx: &Ctx<'_>, a: A) -> f64 {
    match a.slo().and_then(|s| ctx.slo(s)) {
        Some(SloStatus::Fail) => WEIGHT_FAILING,
        Some(SloStatus::CannotTell) => WEIGHT_UNDECIDED,
        Some(_) => 0.0,
        None => match a {
            A::Reliability => WEIGHT_RELIABILITY,
            A::Quality => WEIGHT_QUALITY,
            A::Capacity => WEIGHT_CAPACITY,
            A::Efficiency => WEIGHT_EFFICIENCY,
            A::Cost => WEIGHT_COST,
            _ => 0.0,
        },
    }
}

fn confidence_factor(c: Confidence) -> f64 {
    match c {
        Confidence::High => 1.0,
        Confidence::Medium => 0.8,
        Confidence::Low => 0.6,
    }
}

/// Shares of TTFT's mean breakdown: (queue, prefill, frontend), 0..=1.
fn ttft_shares(ctx: &Ctx<'_>) -> Option<(f64, f64, f64)> {
    let slo = ctx.slo.iter().find(|s| s.id == SloId::TtftP95)?;
    let part = |prefix: &str| {
        slo.breakdown
            .iter()
            .find(|e| e.label.starts_with(prefix))
            .and_then(|e| e.value)
    };
    let (q, p) = (part("queue")?, part("prefill")?);
    let f = part("frontend").or(part("rest"))?;
    let total = q + p + f;
    (total > 0.0).then(|| (q / total, p / total, f / total))
}

/// What the contradiction rules look at.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts {
    /// Each objective's status, in [`SloId::ALL`] order.
    pub slo: [Option<SloStatus>; 4],
    /// The KV cache's peak, %.
    pub kv_max: Option<f64>,
    /// Preemptions were seen.
    pub preempting: bool,
    /// Something queued.
    pub queued: bool,
}

impl Facts {
    fn of(ctx: &Ctx<'_>) -> Facts {
        let mut slo = [None; 4];
        for (i, id) in SloId::ALL.iter().enumerate() {
            slo[i] = ctx.slo(*id);
        }
        Facts {
            slo,
            kv_max: ctx.summary.efficiency.kv_cache_pct,
            preempting: ctx
                .summary
                .efficiency
                .preemptions_per_min
                .is_some_and(|p| p > 0.0),
            queued: ctx.queue.queueing_starts_at().is_some(),
        }
    }

    fn in_doubt(&self, id: SloId) -> bool {
        let i = SloId::ALL.iter().position(|x| *x == id).unwrap_or(0);
        matches!(
            self.slo[i],
            Some(SloStatus::Fail) | Some(SloStatus::CannotTell)
        )
    }
}

/// The contradiction rules: a recommendation that hits one is never shown
/// (docs/report-schema.md lists them; each has a test).
///
/// - **C1** It addresses an objective that passes (or was not exercised).
/// - **C2** It advises against prefill work (`stop_optimising_prefill`)
///   while TTFT fails or cannot be told.
/// - **C3** It raises `--max-num-seqs` while the KV cache is full (≥ 90 %)
///   or preempting: more sequences would preempt more.
/// - **C4** It adds capacity or autoscaling (`move_to_kserve`,
///   `set_autoscaling_trigger`) while nothing queued and the KV cache
///   stayed under 60 %.
/// - **C5** Its action lowers `--max-num-batched-tokens` (smaller prefill
///   chunks raise TTFT) while TTFT fails or cannot be told.
/// - **C6** Its action lowers `--max-num-seqs` (moving the wait to the
///   queue) while the queue or TTFT objective fails or cannot be told.
pub(crate) fn contradiction(
    f: &Facts,
    id: RecId,
    addresses: &[A],
    action: &str,
) -> Option<&'static str> {
    let ttft_doubt = f.in_doubt(SloId::TtftP95);
    if addresses
        .iter()
        .filter_map(|a| a.slo())
        .any(|s| !f.in_doubt(s))
    {
        return Some("C1: addresses an objective that passes");
    }
    if id == RecId::StopOptimisingPrefill && ttft_doubt {
        return Some("C2: TTFT fails or cannot be told, and prefill is part of it");
    }
    if id == RecId::RaiseMaxNumSeqs && (f.kv_max.is_some_and(|k| k >= KV_FULL_PCT) || f.preempting)
    {
        return Some("C3: the KV cache is full or preempting");
    }
    if matches!(id, RecId::MoveToKserve | RecId::SetAutoscalingTrigger)
        && !f.queued
        && f.kv_max.is_none_or(|k| k < KV_WARN_PCT)
    {
        return Some("C4: nothing queued and the KV cache stayed below 60 %");
    }
    if ttft_doubt && lowers(action, "--max-num-batched-tokens") {
        return Some("C5: smaller prefill chunks would raise a TTFT in doubt");
    }
    if (f.in_doubt(SloId::QueueAtConcurrency) || ttft_doubt) && lowers(action, "--max-num-seqs") {
        return Some("C6: fewer sequences would queue more while queueing or TTFT is in doubt");
    }
    None
}

/// True when `action` advises lowering `flag`.
pub(crate) fn lowers(action: &str, flag: &str) -> bool {
    action.split(['.', ';']).any(|sentence| {
        let s = sentence.to_ascii_lowercase();
        s.contains(flag) && (s.contains("lower") || s.contains("smaller") || s.contains("reduce"))
    })
}

/// A fired rule; its rationale is [`prose::RecText::why`] filled with
/// `vars`.
fn rule(
    id: RecId,
    effect: Vec<(A, f64)>,
    vars: Vec<(&'static str, String)>,
    confidence: Confidence,
) -> Rule {
    Rule {
        id,
        effect,
        vars,
        confidence,
        evidence: Vec::new(),
        snippets: Vec::new(),
    }
}

/// A percentage with one decimal, or `?`.
fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |x| format!("{x:.1} %"))
}

/// The objectives among `slos` that fail or cannot be told, as targets.
fn doubtful(ctx: &Ctx<'_>, slos: &[SloId], share: f64) -> Vec<(A, f64)> {
    slos.iter()
        .filter(|s| ctx.slo_in_doubt(**s))
        .map(|s| (A::from(*s), share))
        .collect()
}

pub(crate) fn recommend(
    ctx: &Ctx<'_>,
    analyses: &[Analysis],
    checker: &Checker<'_>,
    model: Option<&str>,
) -> Vec<Recommendation> {
    let fired = |f: FindingId| {
        analyses
            .iter()
            .flat_map(|a| a.findings.iter())
            .any(|x| x.id == f)
    };
    let s = ctx.summary;
    let n = ctx.settings.slo.queue_concurrency;
    let q = ctx.queue;
    let shares = ttft_shares(ctx);
    let (queue_share, prefill_share, frontend_share) = shares.unwrap_or((1.0, 0.0, 0.0));
    let kv = s.efficiency.kv_cache_pct;
    let preempting = s.efficiency.preemptions_per_min.is_some_and(|p| p > 0.0);
    let queued = q.queueing_starts_at();
    let mut rules: Vec<Rule> = Vec::new();

    // The admission cap is a setting, below the objective, with room in KV.
    if let (Some(cap), Some(start)) = (q.admission_cap(), queued)
        && cap < n
        && kv.is_some_and(|k| k < KV_WARN_PCT)
        && !preempting
    {
        let mut r = rule(
            RecId::RaiseMaxNumSeqs,
            [
                doubtful(ctx, &[SloId::QueueAtConcurrency], 1.0),
                doubtful(ctx, &[SloId::TtftP95], queue_share),
            ]
            .concat(),
            vec![
                ("cap", num(cap)),
                ("start", num(start)),
                ("target", num(n.max(cap + 1.0))),
                ("kv", pct(kv)),
                ("n", num(n)),
            ],
            Confidence::High,
        );
        r.evidence = vec![
            ctx.ev_admission_cap(Some(cap)),
            ctx.ev_queueing_starts(Some(start)),
            ctx.ev_kv_max(kv),
        ];
        r.snippets
            .extend(snippets::queue_alert(ctx, checker, model));
        rules.push(r);
    }

    // Preemptions: the KV cache runs out.
    if preempting {
        let mut r = rule(
            RecId::TunePreemptions,
            [
                doubtful(ctx, &[SloId::QueueAtConcurrency, SloId::ItlP95], 0.5),
                doubtful(ctx, &[SloId::TtftP95], queue_share.max(0.5)),
                vec![(A::Efficiency, 1.0)],
            ]
            .concat(),
            vec![
                (
                    "preemptions",
                    num(s.efficiency.preemptions_per_min.unwrap_or_default()),
                ),
                ("kv", pct(kv)),
                (
                    "lower",
                    if ctx.slo_in_doubt(SloId::QueueAtConcurrency)
                        || ctx.slo_in_doubt(SloId::TtftP95)
                    {
                        String::new()
                    } else {
                        prose::LOWER_MAX_NUM_SEQS.to_string()
                    },
                ),
            ],
            Confidence::High,
        );
        r.evidence = vec![
            ctx.ev(
                "preemptions",
                s.efficiency.preemptions_per_min,
                "per min",
                &[Signal::Preemptions],
            ),
            ctx.ev_kv_max(kv),
        ];
        r.snippets.extend(snippets::kv_alert(ctx, checker, model));
        rules.push(r);
    }

    // Queueing that an objective pays for: add replicas. Not while the
    // admission cap is a setting below the objective with the KV cache
    // nearly empty: raising it admits the load on this server.
    let setting_caps = rules.iter().any(|r| r.id == RecId::RaiseMaxNumSeqs);
    let capacity_fails = !setting_caps
        && (ctx.slo(SloId::QueueAtConcurrency) == Some(SloStatus::Fail)
            || (ctx.slo_in_doubt(SloId::TtftP95)
                && queue_share >= QUEUE_SHARE_FOR_REPLICAS
                && queued.is_some()));
    if capacity_fails {
        let mut r = rule(
            RecId::MoveToKserve,
            [
                doubtful(ctx, &[SloId::QueueAtConcurrency], 1.0),
                doubtful(ctx, &[SloId::TtftP95], queue_share),
                vec![(A::Capacity, 1.0)],
            ]
            .concat(),
            vec![
                ("start", queued.map_or("?".into(), num)),
                (
                    "cap",
                    q.admission_cap().map_or("an unknown number of".into(), num),
                ),
                (
                    "ttft",
                    if ctx.slo_in_doubt(SloId::TtftP95) && shares.is_some() {
                        prose::fill(
                            prose::QUEUE_SHARE_OF_TTFT,
                            &[("share", format!("{:.0} %", 100.0 * queue_share))],
                        )
                    } else {
                        String::new()
                    },
                ),
            ],
            Confidence::Medium,
        );
        r.evidence = vec![
            ctx.ev_queueing_starts(queued),
            ctx.ev_admission_cap(q.admission_cap()),
        ];
        r.snippets
            .extend(snippets::in_flight_trigger(ctx, checker, model));
        if kv.is_some_and(|k| k >= KV_WARN_PCT) {
            r.snippets.extend(snippets::kv_trigger(ctx, checker, model));
        }
        rules.push(r);
    } else if queued.is_some() || kv.is_some_and(|k| k >= KV_WARN_PCT) {
        // Pressure without a failing objective: scale before it fails.
        let mut r = rule(
            RecId::SetAutoscalingTrigger,
            vec![(A::Capacity, 1.0)],
            vec![
                (
                    "pressure",
                    match queued {
                        Some(start) => prose::fill(
                            prose::PRESSURE_QUEUED,
                            &[("start", num(start)), ("n", num(n))],
                        ),
                        None => prose::fill(prose::PRESSURE_KV, &[("kv", pct(kv))]),
                    },
                ),
                ("n", num(n)),
            ],
            Confidence::Medium,
        );
        r.evidence = vec![ctx.ev_queueing_starts(queued), ctx.ev_kv_max(kv)];
        r.snippets
            .extend(snippets::in_flight_trigger(ctx, checker, model));
        rules.push(r);
    }

    // Restarts.
    if let Some(first) = ctx.restarts.first() {
        let mut r = rule(
            RecId::InvestigateRestart,
            [
                doubtful(ctx, &[SloId::ErrorAbortRate], 0.5),
                vec![(A::Reliability, 1.0)],
            ]
            .concat(),
            vec![
                ("replica", first.replica.clone()),
                (
                    "times",
                    crate::text::plural(ctx.restarts.len(), "time", "times"),
                ),
                (
                    "down",
                    first.down_ms().map_or("?".into(), |d| ms_text(d as f64)),
                ),
                ("lost", first.in_flight_lost.map_or("?".into(), num)),
                ("time", crate::time::format_rfc3339(first.when_ms())),
            ],
            Confidence::High,
        );
        r.evidence = ctx
            .restarts
            .iter()
            .map(|x| {
                ctx.ev_at(
                    &format!("{} in flight lost", x.replica),
                    x.in_flight_lost,
                    "requests",
                    &[Signal::ProcessStart, Signal::Running, Signal::Waiting],
                    vec![x.seen_ms],
                )
            })
            .collect();
        rules.push(r);
    }

    // Error bursts.
    if let Some(p) = ctx
        .phases
        .iter()
        .find(|p| p.kind == crate::ids::PhaseKind::Burst)
    {
        let o = &p.figures.outcomes;
        let mut r = rule(
            RecId::InvestigateErrorBurst,
            [
                doubtful(ctx, &[SloId::ErrorAbortRate], 1.0),
                vec![(A::Reliability, 1.0)],
            ]
            .concat(),
            vec![
                ("from", crate::time::format_rfc3339(p.start_ms)),
                ("to", crate::time::format_rfc3339(p.end_ms)),
                ("errors", pct(o.error_abort_pct)),
                ("http", pct(o.http_error_pct)),
                ("overall", pct(s.outcomes.error_abort_pct)),
            ],
            Confidence::High,
        );
        r.evidence = vec![
            ctx.ev_at(
                "error + abort in the burst",
                o.error_abort_pct,
                "%",
                &[Signal::FinishedRequests],
                vec![p.start_ms],
            ),
            ctx.ev_at(
                "HTTP 4xx + 5xx in the burst",
                o.http_error_pct,
                "%",
                &[Signal::HttpRequests],
                vec![p.start_ms],
            ),
        ];
        rules.push(r);
    }

    // HTTP errors beyond the objective's line, outside an error burst (the
    // burst has its own advice).
    let severity = |id: FindingId| crate::model::severity_of(analyses, id);
    let o = &s.outcomes;
    let burst = ctx
        .phases
        .iter()
        .any(|p| p.kind == crate::ids::PhaseKind::Burst);
    if severity(FindingId::OutcomesHttpErrors) == Some(crate::model::Severity::Fail) && !burst {
        let per = |k: &str| o.http_per_min_by_status.get(k).copied();
        let engine = o.error_abort_pct.unwrap_or(0.0);
        let where_ = if o.http_error_pct.is_some_and(|h| h > engine * 1.5) {
            "more requests fail at the HTTP layer than in the engine, so most never reached it."
        } else {
            "the HTTP errors track the engine's own."
        };
        let mut r = rule(
            RecId::InvestigateHttpErrors,
            vec![(A::Reliability, 1.0)],
            vec![
                ("http", pct(o.http_error_pct)),
                ("r4xx", per("4xx").map_or("0".into(), num)),
                ("r5xx", per("5xx").map_or("0".into(), num)),
                ("engine", pct(o.error_abort_pct)),
                ("where", where_.to_string()),
            ],
            Confidence::High,
        );
        // The finding's own evidence.
        r.evidence = crate::model::finding_of(analyses, FindingId::OutcomesHttpErrors)
            .map(|f| f.evidence.clone())
            .unwrap_or_default();
        rules.push(r);
    }

    // Clients that hang up before their answers finish: the finding's own
    // evidence (the estimate and its share of finished requests).
    if let Some(f) = crate::model::finding_of(analyses, FindingId::OutcomesClientDisconnects)
        .filter(|f| f.severity == crate::model::Severity::Warn)
        && let Some(n) = o.client_disconnects
    {
        let share = f.evidence.get(1).and_then(|e| e.value);
        let itl = s.latency.inter_token_ms;
        let mut r = rule(
            RecId::AlignClientTimeouts,
            vec![(A::Reliability, 1.0), (A::Quality, 1.0)],
            vec![
                ("n", num(n.round())),
                ("share", pct(share)),
                ("ttft", s.latency.ttft_ms.map_or("?".into(), ms_text)),
                ("itl", itl.map_or("?".into(), ms_text)),
                (
                    "per_second",
                    itl.filter(|i| *i > 0.0)
                        .map_or("?".into(), |i| num((1000.0 / i).round())),
                ),
            ],
            Confidence::Medium,
        );
        r.evidence = f.evidence.iter().take(2).cloned().collect();
        r.evidence.push(ctx.ev(
            "inter-token latency (mean)",
            itl,
            "ms",
            &[Signal::InterTokenLatency],
        ));
        rules.push(r);
    }

    // The API server.
    if fired(FindingId::LatencyFrontendOverhead) && ctx.slo_in_doubt(SloId::TtftP95) {
        let mut r = rule(
            RecId::ScaleApiServer,
            doubtful(ctx, &[SloId::TtftP95], frontend_share),
            vec![("share", format!("{:.0} %", 100.0 * frontend_share))],
            Confidence::Medium,
        );
        r.evidence = vec![ctx.ev("TTFT (mean)", s.latency.ttft_ms, "ms", &[Signal::Ttft])];
        rules.push(r);
    }

    // Decode speed: fewer bytes per token.
    let tensor = s.gpu.tensor_active_pct_avg;
    let dram = s.gpu.dram_active_pct_avg;
    let dcgm_bound = matches!((tensor, dram), (Some(t), Some(d)) if d >= MEMORY_BOUND_DRAM_PCT && t < TENSOR_IDLE_PCT);
    // Without DCGM's profiling fields, vLLM's own estimates can tell.
    let estimated = crate::analyses::hardware::estimated_utilisation(ctx.capacity)
        .filter(|_| tensor.is_none() || dram.is_none());
    let estimate_bound =
        estimated.is_some_and(|(mfu, mbu)| mbu >= MEMORY_BOUND_DRAM_PCT && mfu < TENSOR_IDLE_PCT);
    let memory_bound = dcgm_bound || estimate_bound;
    let kv_bound = preempting || kv.is_some_and(|k| k >= KV_FULL_PCT);
    let below_floor = ctx
        .capacity
        .floor
        .as_ref()
        .is_some_and(|f| f.infeasible.contains(&SloId::ItlP95));
    if (memory_bound && (ctx.slo_in_doubt(SloId::ItlP95) || kv_bound)) || below_floor {
        let mut effect = doubtful(ctx, &[SloId::ItlP95], 0.6);
        if kv_bound {
            effect.extend(doubtful(ctx, &[SloId::TtftP95], queue_share * 0.5));
            effect.push((A::Capacity, 1.0));
        }
        let mut r = rule(
            RecId::QuantizeBeforeBuying,
            effect,
            vec![
                (
                    "floor",
                    ctx.capacity.floor.as_ref().map_or(String::new(), |f| {
                        prose::fill(
                            prose::FLOOR_PART,
                            &[
                                ("floor", ms_text(f.ms)),
                                ("gpu", f.gpu.clone()),
                                ("half", ms_text(f.ms / 2.0)),
                            ],
                        )
                    }),
                ),
                (
                    "bound",
                    if dcgm_bound {
                        prose::fill(
                            prose::BOUND_DCGM,
                            &[
                                ("dram", format!("{:.0} %", dram.unwrap_or_default())),
                                ("tensor", format!("{:.0} %", tensor.unwrap_or_default())),
                            ],
                        )
                    } else if let Some((mfu, mbu)) = estimated.filter(|_| estimate_bound) {
                        prose::fill(
                            prose::BOUND_ESTIMATES,
                            &[
                                ("mbu", format!("{mbu:.0} %")),
                                ("mfu", format!("{mfu:.0} %")),
                            ],
                        )
                    } else {
                        prose::BOUND_FLOOR.to_string()
                    },
                ),
                (
                    "kv",
                    if kv_bound {
                        prose::FREES_KV.to_string()
                    } else {
                        String::new()
                    },
                ),
            ],
            Confidence::Medium,
        );
        r.evidence = Vec::new();
        if dram.is_some() || tensor.is_some() {
            r.evidence
                .push(ctx.ev("DRAM active (mean)", dram, "%", &[Signal::DramActive]));
            r.evidence
                .push(ctx.ev("tensor active (mean)", tensor, "%", &[Signal::TensorActive]));
        }
        if let Some((mfu, mbu)) = estimated {
            r.evidence.push(ctx.ev(
                "MBU (vLLM's estimate)",
                Some(mbu),
                "%",
                &[Signal::EstimatedReadBytes, Signal::EstimatedWriteBytes],
            ));
            r.evidence.push(ctx.ev(
                "MFU (vLLM's estimate)",
                Some(mfu),
                "%",
                &[Signal::EstimatedFlops],
            ));
        }
        if let Some(f) = &ctx.capacity.floor {
            r.evidence
                .push(ctx.ev("decode floor", Some(f.ms), "ms", &[]));
        }
        r.evidence.extend([ctx.ev(
            "inter-token latency (mean)",
            s.latency.inter_token_ms,
            "ms",
            &[Signal::InterTokenLatency],
        )]);
        rules.push(r);
    }

    // Decode dominates and only the inter-token objective is in doubt.
    let prefill_heavy = s
        .workload
        .gen_to_prompt_ratio
        .is_some_and(|r| r < PREFILL_HEAVY_RATIO);
    if let Some(d) = s.latency.decode_share_pct
        && d >= DECODE_DOMINATES_PCT
        && !prefill_heavy
        && ctx.slo_in_doubt(SloId::ItlP95)
    {
        let mut r = rule(
            RecId::StopOptimisingPrefill,
            doubtful(ctx, &[SloId::ItlP95], 0.3),
            vec![("share", format!("{d:.0} %"))],
            Confidence::High,
        );
        r.evidence = vec![ctx.ev(
            "decode share",
            Some(d),
            "%",
            &[Signal::QueueTime, Signal::PrefillTime, Signal::DecodeTime],
        )];
        rules.push(r);
    }

    // Prefill interference, or prefixes spread across replicas.
    let itl = (s.latency.itl_p95_ms, s.latency.itl_p50_ms);
    if prefill_heavy
        && s.latency
            .decode_share_pct
            .is_some_and(|d| d >= INTERFERENCE_DECODE_PCT)
        && ctx.slo_in_doubt(SloId::ItlP95)
        && let (Some(p95), Some(p50)) = itl
        && p95 >= INTERFERENCE_P95_OVER_P50 * p50
    {
        let ttft_doubt = ctx.slo_in_doubt(SloId::TtftP95);
        let mut r = rule(
            RecId::MoveToLlmD,
            doubtful(ctx, &[SloId::ItlP95], 0.6),
            vec![
                (
                    "why",
                    prose::fill(
                        prose::INTERFERENCE_WHY,
                        &[
                            ("p95", ms_text(p95.round())),
                            ("p50", ms_text(p50.round())),
                            (
                                "share",
                                format!("{:.0} %", s.latency.decode_share_pct.unwrap_or_default()),
                            ),
                        ],
                    ),
                ),
                (
                    "action",
                    if ttft_doubt {
                        prose::DISAGGREGATE_ONLY
                    } else {
                        prose::SMALLER_CHUNKS_THEN_DISAGGREGATE
                    }
                    .to_string(),
                ),
                ("caveat", prose::DISAGGREGATE_CAVEAT.to_string()),
            ],
            Confidence::Medium,
        );
        r.evidence = vec![
            ctx.ev(
                "inter-token latency p95",
                Some(p95),
                "ms",
                &[Signal::InterTokenLatency],
            ),
            ctx.ev(
                "inter-token latency p50",
                Some(p50),
                "ms",
                &[Signal::InterTokenLatency],
            ),
            ctx.ev(
                "generated ÷ prompt tokens",
                s.workload.gen_to_prompt_ratio,
                "",
                &[Signal::GenerationTokens, Signal::PromptTokens],
            ),
        ];
        rules.push(r);
    } else if ctx.replicas >= 2
        && let Some(hit) = s.efficiency.prefix_cache_hit_pct
        && hit < ROUTING_HIT_PCT
        && s.workload
            .avg_prompt_tokens
            .is_some_and(|p| p >= ROUTING_PROMPT_TOKENS)
        && ctx.slo_in_doubt(SloId::TtftP95)
    {
        let mut r = rule(
            RecId::MoveToLlmD,
            [
                doubtful(ctx, &[SloId::TtftP95], prefill_share),
                vec![(A::Efficiency, 1.0)],
            ]
            .concat(),
            vec![
                (
                    "why",
                    prose::fill(
                        prose::ROUTING_WHY,
                        &[
                            ("replicas", ctx.replicas.to_string()),
                            (
                                "prompt",
                                num(s.workload.avg_prompt_tokens.unwrap_or_default().round()),
                            ),
                            ("hit", format!("{hit:.0} %")),
                            ("share", format!("{:.0} %", 100.0 * prefill_share)),
                        ],
                    ),
                ),
                ("action", prose::ROUTE_BY_PREFIX.to_string()),
                ("caveat", prose::ROUTING_CAVEAT.to_string()),
            ],
            Confidence::Medium,
        );
        r.evidence = vec![
            ctx.ev_prefix_hit_rate(Some(hit)),
            ctx.ev(
                "average prompt",
                s.workload.avg_prompt_tokens,
                "tokens",
                &[Signal::RequestPromptTokens],
            ),
        ];
        rules.push(r);
    }

    // Prefill is most of a TTFT that misses.
    if ctx.slo_in_doubt(SloId::TtftP95)
        && shares.is_some()
        && prefill_share >= PREFILL_SHARE_FOR_PREFILL
    {
        let mut r = rule(
            RecId::SpeedUpPrefill,
            doubtful(ctx, &[SloId::TtftP95], prefill_share),
            vec![
                ("share", format!("{:.0} %", 100.0 * prefill_share)),
                (
                    "prompt",
                    s.workload
                        .avg_prompt_tokens
                        .map_or("?".into(), |p| num(p.round())),
                ),
                ("queue", format!("{:.0} %", 100.0 * queue_share)),
            ],
            Confidence::Medium,
        );
        r.evidence = vec![
            ctx.ev(
                "prefill (mean)",
                s.latency.prefill_ms,
                "ms",
                &[Signal::PrefillTime],
            ),
            ctx.ev(
                "average prompt",
                s.workload.avg_prompt_tokens,
                "tokens",
                &[Signal::RequestPromptTokens],
            ),
            ctx.ev_prefix_hit_rate(s.efficiency.prefix_cache_hit_pct),
        ];
        rules.push(r);
    }

    // The prefix cache, only against the shared prefix the user states:
    // prompt text is not in /metrics, so a low hit rate alone cannot tell
    // prompts that share little text from a prefix that is not cached.
    let pc = &ctx.capacity.prefix;
    if let (Some(shared), Some(block)) = (pc.shared_prefix_tokens, pc.block_size) {
        let prefill_targets = [
            doubtful(ctx, &[SloId::TtftP95], prefill_share * 0.5),
            vec![(A::Efficiency, 1.0)],
        ]
        .concat();
        if pc.shorter_than_a_block {
            let mut r = rule(
                RecId::ShrinkBlockSize,
                prefill_targets,
                vec![
                    ("shared", format!("{shared:.0}")),
                    ("block", format!("{block:.0}")),
                ],
                Confidence::High,
            );
            r.evidence = vec![
                ctx.ev("shared prefix (stated)", Some(shared), "tokens", &[]),
                ctx.ev("block size", Some(block), "tokens", &[]),
                ctx.ev_prefix_hit_rate(pc.hit_pct),
            ];
            rules.push(r);
        } else if let (Some(hit), Some(ceiling)) = (pc.hit_pct, pc.ceiling_pct)
            && hit < 0.7 * ceiling
        {
            let mut r = rule(
                RecId::StandardisePromptPrefix,
                prefill_targets,
                vec![
                    ("hit", format!("{hit:.0} %")),
                    ("ceiling", format!("{ceiling:.0} %")),
                    ("shared", format!("{shared:.0}")),
                ],
                Confidence::Medium,
            );
            r.evidence = vec![
                ctx.ev_prefix_hit_rate(Some(hit)),
                ctx.ev("ceiling from the shared prefix", Some(ceiling), "%", &[]),
            ];
            rules.push(r);
        }
    }
    if fired(FindingId::EfficiencyPrefixOff) && (ctx.slo_in_doubt(SloId::TtftP95) || prefill_heavy)
    {
        let mut r = rule(
            RecId::EnablePrefixCaching,
            [
                doubtful(ctx, &[SloId::TtftP95], prefill_share.max(0.2)),
                vec![(A::Efficiency, 1.0)],
            ]
            .concat(),
            Vec::new(),
            Confidence::Medium,
        );
        r.evidence = vec![ctx.ev(
            "lifetime hit rate gauge",
            ctx.prefix_lifetime,
            "",
            &[Signal::PrefixHitRateLifetime],
        )];
        rules.push(r);
    }

    // Answers cut at max_tokens: users see it whatever the objectives.
    if workload::truncated(ctx) {
        let share = workload::length_share(ctx);
        let util = s.workload.max_tokens_utilisation_pct;
        let mut r = rule(
            RecId::RaiseMaxTokens,
            vec![(A::Quality, 1.0)],
            vec![
                ("length", share.map_or("?".into(), |l| format!("{l:.0} %"))),
                ("used", util.map_or("?".into(), |u| format!("{u:.0} %"))),
            ],
            Confidence::High,
        );
        r.evidence = vec![
            ctx.ev(
                "share ending on length",
                share,
                "%",
                &[Signal::FinishedRequests],
            ),
            ctx.ev(
                "max_tokens used",
                util,
                "%",
                &[Signal::RequestGenerationTokens, Signal::MaxTokens],
            ),
        ];
        rules.push(r);
    }

    // The workload changed shape.
    if let Some((a, b, at)) = workload::shape_change(ctx) {
        let mut r = rule(
            RecId::RevisitOnShapeChange,
            vec![(A::Efficiency, 1.0)],
            vec![("from", format!("{a:.2}")), ("to", format!("{b:.2}"))],
            Confidence::Medium,
        );
        r.evidence = vec![ctx.ev_at(
            "generated ÷ prompt, second half vs first",
            Some(b / a),
            "×",
            &[Signal::GenerationTokens, Signal::PromptTokens],
            vec![at],
        )];
        rules.push(r);
    }

    // Rank: expected effect on what fails, then confidence, then id.
    let facts = Facts::of(ctx);
    let mut ranked: Vec<(f64, Rule)> = rules
        .into_iter()
        .filter_map(|mut r| {
            r.effect
                .retain(|(a, share)| *share > 0.0 && weight(ctx, *a) > 0.0);
            if r.effect.is_empty() {
                return None;
            }
            let addresses: Vec<A> = r.effect.iter().map(|(a, _)| *a).collect();
            let action = prose::fill(prose::rec(r.id).action, &r.vars);
            if contradiction(&facts, r.id, &addresses, &action).is_some() {
                return None;
            }
            let score: f64 = r
                .effect
                .iter()
                .map(|(a, share)| weight(ctx, *a) * share)
                .sum::<f64>()
                * confidence_factor(r.confidence);
            Some((score, r))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    ranked
        .into_iter()
        .enumerate()
        .map(|(i, (_, r))| {
            let text = prose::rec(r.id);
            let mut addresses: Vec<A> = Vec::new();
            let mut effect = r.effect.clone();
            effect.sort_by(|a, b| (weight(ctx, b.0) * b.1).total_cmp(&(weight(ctx, a.0) * a.1)));
            for (a, _) in effect {
                if !addresses.contains(&a) {
                    addresses.push(a);
                }
            }
            Recommendation {
                id: r.id,
                addresses,
                rank: i as u32 + 1,
                title: text.title.to_string(),
                rationale: prose::fill(text.why, &r.vars),
                action: prose::fill(text.action, &r.vars),
                confidence: r.confidence,
                caveat: prose::fill(text.caveat, &r.vars),
                evidence: r.evidence,
                snippets: r.snippets,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(ttft: SloStatus, queue: SloStatus) -> Facts {
        Facts {
            slo: [
                Some(ttft),
                Some(SloStatus::Pass),
                Some(queue),
                Some(SloStatus::Pass),
            ],
            kv_max: Some(10.0),
            preempting: false,
            queued: false,
        }
    }

    #[test]
    fn c1_an_objective_that_passes_is_not_addressed() {
        let f = facts(SloStatus::Pass, SloStatus::Pass);
        assert!(contradiction(&f, RecId::SpeedUpPrefill, &[A::TtftP95], "").is_some());
        let f = facts(SloStatus::CannotTell, SloStatus::Pass);
        assert!(contradiction(&f, RecId::SpeedUpPrefill, &[A::TtftP95], "").is_none());
        assert!(contradiction(&f, RecId::RaiseMaxTokens, &[A::Quality], "").is_none());
    }

    #[test]
    fn c2_no_advice_against_prefill_while_ttft_is_in_doubt() {
        for ttft in [SloStatus::Fail, SloStatus::CannotTell] {
            let f = facts(ttft, SloStatus::Pass);
            assert!(contradiction(&f, RecId::StopOptimisingPrefill, &[], "").is_some());
        }
        let f = facts(SloStatus::Pass, SloStatus::Pass);
        assert!(contradiction(&f, RecId::StopOptimisingPrefill, &[], "").is_none());
    }

    #[test]
    fn c3_no_more_sequences_while_the_kv_cache_caps_them() {
        let mut f = facts(SloStatus::Fail, SloStatus::Fail);
        assert!(contradiction(&f, RecId::RaiseMaxNumSeqs, &[], "").is_none());
        f.kv_max = Some(95.0);
        assert!(contradiction(&f, RecId::RaiseMaxNumSeqs, &[], "").is_some());
        f.kv_max = Some(10.0);
        f.preempting = true;
        assert!(contradiction(&f, RecId::RaiseMaxNumSeqs, &[], "").is_some());
    }

    #[test]
    fn c4_no_capacity_without_pressure() {
        let mut f = facts(SloStatus::Pass, SloStatus::Pass);
        for id in [RecId::MoveToKserve, RecId::SetAutoscalingTrigger] {
            assert!(contradiction(&f, id, &[A::Capacity], "").is_some());
        }
        f.queued = true;
        assert!(contradiction(&f, RecId::MoveToKserve, &[A::Capacity], "").is_none());
        f.queued = false;
        f.kv_max = Some(70.0);
        assert!(contradiction(&f, RecId::SetAutoscalingTrigger, &[A::Capacity], "").is_none());
    }

    #[test]
    fn c5_no_smaller_prefill_chunks_while_ttft_is_in_doubt() {
        let action = "Lower --max-num-batched-tokens (smaller prefill chunks per step).";
        let f = facts(SloStatus::Fail, SloStatus::Pass);
        assert!(contradiction(&f, RecId::MoveToLlmD, &[], action).is_some());
        let f = facts(SloStatus::Pass, SloStatus::Pass);
        assert!(contradiction(&f, RecId::MoveToLlmD, &[], action).is_none());
    }

    #[test]
    fn c6_no_fewer_sequences_while_queueing_or_ttft_is_in_doubt() {
        let action =
            "Give the KV cache more room. Or lower --max-num-seqs so admitted requests fit.";
        for (ttft, queue) in [
            (SloStatus::Fail, SloStatus::Pass),
            (SloStatus::Pass, SloStatus::Fail),
        ] {
            let f = facts(ttft, queue);
            assert!(contradiction(&f, RecId::TunePreemptions, &[], action).is_some());
        }
        let f = facts(SloStatus::Pass, SloStatus::Pass);
        assert!(contradiction(&f, RecId::TunePreemptions, &[], action).is_none());
        assert!(!lowers("Raise --max-num-seqs to 16.", "--max-num-seqs"));
    }
}
