//! Step 1: where latency goes. Queue, prefill and decode shares say which
//! levers can matter; queueing (defined once, in [`crate::measure::queue`]) is the
//! first sign of saturation; p99 stalls are what users feel as stutter.

use vllm_lens_catalog::Signal;
use vllm_lens_query::Verdict;

use crate::ids::{FindingId as F, SloId};
use crate::judge::ctx::{Ctx, finding, missing};
use crate::measure::thresholds::{
    DECODE_DOMINATES_PCT, FRONTEND_GAP_MS, FRONTEND_GAP_SHARE, INTERFERENCE_DECODE_PCT,
    PREFILL_DOMINATES_PCT, PREFILL_HEAVY_RATIO, STALL_FACTOR,
};
use crate::model::{Finding, Severity, SloStatus};
use crate::text::{bucket_text, ms_text};

const PHASES: [Signal; 3] = [Signal::QueueTime, Signal::PrefillTime, Signal::DecodeTime];

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    split(ctx, &mut out);
    queueing(ctx, &mut out);
    frontend(ctx, &mut out);
    stalls(ctx, &mut out);
    floor(ctx, &mut out);
    out
}

/// The decode floor: the weights streamed once per step.
fn floor(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(f) = &ctx.capacity.floor else {
        return;
    };
    let vars = vec![
        (
            "weights",
            format!(
                "{} GB",
                crate::text::num(f.weight_bytes / 1e9 / f.tensor_parallel)
            ),
        ),
        (
            "bandwidth",
            format!("{} GB/s", crate::text::num(f.bandwidth / 1e9)),
        ),
        ("gpu", f.gpu.clone()),
        ("floor", ms_text(f.ms)),
        ("objective", ms_text(ctx.settings.slo.itl_p95_ms)),
        ("measured", f.measured_ms.map_or("missing".into(), ms_text)),
        (
            "over",
            f.measured_ms
                .map_or("?".into(), |m| ms_text((m - f.ms).max(0.0))),
        ),
    ];
    let evidence = vec![
        ctx.ev("decode floor per step", Some(f.ms), "ms", &[]),
        ctx.ev(
            "inter-token latency (mean)",
            f.measured_ms,
            "ms",
            &[Signal::InterTokenLatency],
        ),
        ctx.ev(
            "weight bytes per GPU",
            Some(f.weight_bytes / f.tensor_parallel),
            "B",
            &[],
        ),
    ];
    if f.infeasible.contains(&crate::ids::SloId::ItlP95) {
        out.push(finding(
            F::LatencyBelowFloor,
            Severity::Fail,
            format!(
                "The {} inter-token objective is out of reach with these weights on this hardware: the decode floor is {} per step",
                ms_text(ctx.settings.slo.itl_p95_ms),
                ms_text(f.ms)
            ),
            evidence,
            &vars,
        ));
    } else {
        out.push(finding(
            F::LatencyFloor,
            Severity::Info,
            format!(
                "Decode floor {} per step on {}; measured {} per token",
                ms_text(f.ms),
                f.gpu,
                f.measured_ms.map_or("missing".into(), ms_text)
            ),
            evidence,
            &vars,
        ));
    }
}

/// Queue, prefill and decode shares.
fn split(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let l = &ctx.summary.latency;
    let (Some(queue), Some(prefill), Some(decode)) = (l.queue_ms, l.prefill_ms, l.decode_ms) else {
        out.push(missing(
            F::LatencyPhasesMissing,
            "Queue / prefill / decode split",
            &PHASES,
        ));
        return;
    };
    let total = queue + prefill + decode;
    let share = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
    let mut evidence = vec![
        ctx.ev("queue", Some(queue), "ms", &[Signal::QueueTime]),
        ctx.ev("prefill", Some(prefill), "ms", &[Signal::PrefillTime]),
        ctx.ev("decode", Some(decode), "ms", &[Signal::DecodeTime]),
        ctx.ev("decode share", Some(share(decode)), "%", &PHASES),
    ];
    for p in ctx.steady_phases() {
        evidence.push(ctx.ev_at(
            &format!(
                "decode at ~{:.0} in flight",
                p.in_flight_avg.unwrap_or_default()
            ),
            p.figures.latency.decode_ms,
            "ms",
            &[Signal::DecodeTime],
            vec![p.start_ms],
        ));
    }
    let prefill_heavy = ctx
        .summary
        .workload
        .gen_to_prompt_ratio
        .is_some_and(|r| r < PREFILL_HEAVY_RATIO);
    if prefill_heavy && share(decode) >= INTERFERENCE_DECODE_PCT {
        let generated = ctx
            .summary
            .workload
            .avg_generated_tokens
            .map_or("few".into(), |g| format!("{g:.0}"));
        out.push(finding(
            F::LatencyPrefillInterference,
            Severity::Warn,
            format!(
                "Decode takes {decode:.0} ms for {generated} generated tokens: other requests' prefill slows it down"
            ),
            vec![
                ctx.ev("decode", Some(decode), "ms", &[Signal::DecodeTime]),
                ctx.ev(
                    "inter-token latency p95",
                    l.itl_p95_ms,
                    "ms",
                    &[Signal::InterTokenLatency],
                ),
                ctx.ev(
                    "inter-token latency p50",
                    l.itl_p50_ms,
                    "ms",
                    &[Signal::InterTokenLatency],
                ),
                ctx.ev(
                    "generated ÷ prompt tokens",
                    ctx.summary.workload.gen_to_prompt_ratio,
                    "",
                    &[Signal::GenerationTokens, Signal::PromptTokens],
                ),
            ],
            &[],
        ));
    } else if share(decode) >= DECODE_DOMINATES_PCT {
        out.push(finding(
            F::LatencyDecodeDominates,
            Severity::Info,
            format!(
                "Decode is {:.0} % of the time a request spends in the engine",
                share(decode)
            ),
            evidence,
            &[],
        ));
    } else if share(prefill) >= PREFILL_DOMINATES_PCT {
        out.push(finding(
            F::LatencyPrefillDominates,
            Severity::Info,
            format!(
                "Prefill is {:.0} % of the time a request spends in the engine",
                share(prefill)
            ),
            evidence,
            &[],
        ));
    } else {
        out.push(finding(
            F::LatencyBalanced,
            Severity::Info,
            format!(
                "Queue {:.0} %, prefill {:.0} %, decode {:.0} % of engine time",
                share(queue),
                share(prefill),
                share(decode)
            ),
            evidence,
            &[],
        ));
    }
}

/// Queueing, with the queue SLO's definition.
fn queueing(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let q = ctx.queue;
    if !q.measured {
        return;
    }
    let waiting = q.waiting_metric.clone().unwrap_or_default();
    let signals = [Signal::Running, Signal::Waiting, Signal::QueueTime];
    let windows: Vec<i64> = q
        .queued_windows()
        .iter()
        .map(|&w| ctx.windows[w].start_ms)
        .collect();
    let excluded = if q.excluded.is_empty() {
        String::new()
    } else {
        format!(
            " {} warm-up or restart window(s) are left out.",
            q.excluded.len()
        )
    };
    match q.queue_start() {
        Some(first) => {
            let start = first.at;
            let worst = ctx.max_of(|w| w.latency.queue_ms);
            let failing = ctx.slo(SloId::QueueAtConcurrency) == Some(SloStatus::Fail);
            let cap = q.admission_cap();
            out.push(finding(
                F::LatencyQueueing,
                if failing {
                    Severity::Fail
                } else {
                    Severity::Warn
                },
                format!(
                    "Requests queued in {} of {} windows, from {start:.0} requests in flight ({}){}",
                    windows.len(),
                    ctx.windows.len(),
                    first.evidence(ctx.settings.slo.queue_negligible_ms),
                    cap.filter(|c| start > *c).map_or(String::new(), |c| format!(
                        "; at most {c:.0} ran at once while others waited"
                    ))
                ),
                vec![
                    ctx.ev_at(
                        "queueing starts at",
                        Some(start),
                        "requests in flight",
                        &signals,
                        windows.clone(),
                    ),
                    ctx.ev_admission_cap(cap),
                    ctx.ev_at(
                        "worst mean queue time",
                        worst.map(|x| x.0),
                        "ms",
                        &[Signal::QueueTime],
                        worst.map(|x| vec![x.1]).unwrap_or_default(),
                    ),
                ],
                &[
                    ("waiting", waiting),
                    (
                        "negligible",
                        format!("{}", ctx.settings.slo.queue_negligible_ms),
                    ),
                    ("excluded", excluded),
                ],
            ));
        }
        None => {
            let peak = q.peak_in_flight();
            let worst = ctx.max_of(|w| w.latency.queue_ms);
            out.push(finding(
                F::LatencyNoQueueing,
                Severity::Pass,
                format!(
                    "Nothing queued{}",
                    peak.map_or(String::new(), |p| format!(
                        ", up to {p:.0} requests in flight on a replica"
                    ))
                ),
                vec![
                    ctx.ev(
                        "most requests in flight",
                        peak,
                        "requests",
                        &[Signal::Running, Signal::Waiting],
                    ),
                    ctx.ev(
                        "worst mean queue time in a window",
                        worst.map(|x| x.0),
                        "ms",
                        &[Signal::QueueTime],
                    ),
                ],
                &[
                    ("waiting", waiting),
                    (
                        "negligible",
                        format!("{}", ctx.settings.slo.queue_negligible_ms),
                    ),
                    ("excluded", excluded),
                ],
            ));
        }
    }
}

/// TTFT against queue + prefill: the API server.
fn frontend(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let l = &ctx.summary.latency;
    let (Some(ttft), Some(queue), Some(prefill)) = (l.ttft_ms, l.queue_ms, l.prefill_ms) else {
        return;
    };
    // Only where TTFT and queue count the same requests (they are recorded
    // at the first token and at the end respectively).
    let count = |s: Signal| ctx.hists.get(&s).map(|h| h.count);
    if let (Some(a), Some(b)) = (count(Signal::Ttft), count(Signal::QueueTime))
        && (b <= 0.0 || (a - b).abs() > 0.1 * b)
    {
        return;
    }
    let gap = ttft - queue - prefill;
    if gap > FRONTEND_GAP_MS && gap > FRONTEND_GAP_SHARE * ttft {
        out.push(finding(
            F::LatencyFrontendOverhead,
            Severity::Warn,
            format!("{gap:.0} ms of time to first token is spent outside the engine"),
            vec![
                ctx.ev("TTFT (mean)", Some(ttft), "ms", &[Signal::Ttft]),
                ctx.ev(
                    "queue + prefill (mean)",
                    Some(queue + prefill),
                    "ms",
                    &[Signal::QueueTime, Signal::PrefillTime],
                ),
            ],
            &[],
        ));
    }
}

/// p99 proven at [`STALL_FACTOR`] × the objective or more.
fn stalls(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let t = &ctx.settings.slo;
    for (id, signal, objective, what) in [
        (
            F::LatencyTtftStall,
            Signal::Ttft,
            t.ttft_p95_ms,
            "time to first token",
        ),
        (
            F::LatencyItlStall,
            Signal::InterTokenLatency,
            t.itl_p95_ms,
            "inter-token latency",
        ),
    ] {
        let Some(h) = ctx.hists.get(&signal) else {
            continue;
        };
        let line = STALL_FACTOR * objective;
        let Some(proof) = h.buckets.prove(0.99, line / 1000.0) else {
            continue;
        };
        if proof.verdict != Verdict::Beyond {
            continue;
        }
        let p99 = h.quantile(0.99);
        let bucket = p99.map(|q| bucket_text(q.lower * 1000.0, q.upper * 1000.0));
        let within = 100.0 * proof.share_above;
        // The share beyond the line, from the buckets: at least what lies
        // above the edge at or above it, at most what lies above the edge
        // at or below it.
        let (lo, hi) = (
            100.0 * (1.0 - proof.share_above),
            100.0 * (1.0 - proof.share_below),
        );
        let share = if (hi - lo).abs() < 0.05 {
            format!("{} %", num_pct(lo))
        } else {
            format!("between {} and {} %", num_pct(lo), num_pct(hi))
        };
        out.push(finding(
            id,
            Severity::Warn,
            format!(
                "{share} of {what} takes longer than {}: p99 {}, over {STALL_FACTOR:.0}× the {} objective",
                ms_text(line),
                bucket.clone().unwrap_or_default(),
                ms_text(objective)
            ),
            vec![
                ctx.ev(
                    &format!("share within {}", ms_text(proof.edge_above * 1000.0)),
                    Some(within),
                    "%",
                    &[signal],
                ),
                ctx.ev(
                    "p99 (interpolated)",
                    p99.map(|q| q.value * 1000.0),
                    "ms",
                    &[signal],
                ),
            ],
            &[
                ("what", what.to_string()),
                ("bucket", bucket.unwrap_or_default()),
                ("objective", ms_text(objective)),
            ],
        ));
    }
}

/// A share, %, with the digits it needs (never "0" for a share above 0).
fn num_pct(p: f64) -> String {
    if p > 0.0 && p < 0.1 {
        "under 0.1".into()
    } else if p < 10.0 {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}
