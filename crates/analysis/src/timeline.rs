//! The timeline for a post-incident review: the moments that matter, in
//! order, each with its evidence.

use vllm_lens_catalog::Signal;
use vllm_lens_query::Query;
use vllm_lens_store::{Store, TargetId};

use crate::analyses::{Ctx, FleetWindow, workload::halves};
use crate::model::{SloThresholds, TimelineEvent};

#[allow(clippy::too_many_arguments)]
fn event(
    ctx: &Ctx<'_>,
    time_ms: i64,
    kind: &str,
    subject: &str,
    description: String,
    label: &str,
    value: Option<f64>,
    unit: &str,
    signals: &[Signal],
) -> TimelineEvent {
    TimelineEvent {
        time_ms,
        kind: kind.to_string(),
        subject: subject.to_string(),
        description,
        evidence: vec![ctx.ev_at(label, value, unit, signals, vec![time_ms])],
    }
}

/// Breaches and recoveries of a per-window threshold.
fn crossings(
    ctx: &Ctx<'_>,
    out: &mut Vec<TimelineEvent>,
    what: &str,
    f: impl Fn(&FleetWindow) -> Option<f64>,
    threshold: f64,
    unit: &str,
    signal: Signal,
) {
    let mut above = false;
    for w in ctx.windows {
        let Some(v) = f(w) else { continue };
        if !above && v >= threshold {
            above = true;
            out.push(event(
                ctx,
                w.start_ms,
                "slo_breached",
                "fleet",
                format!("{what} reached {v:.1} {unit} (SLO {threshold} {unit})"),
                what,
                Some(v),
                unit,
                &[signal],
            ));
        } else if above && v < threshold {
            above = false;
            out.push(event(
                ctx,
                w.start_ms,
                "slo_recovered",
                "fleet",
                format!("{what} back to {v:.1} {unit}"),
                what,
                Some(v),
                unit,
                &[signal],
            ));
        }
    }
}

fn first_window(
    ctx: &Ctx<'_>,
    f: impl Fn(&FleetWindow) -> Option<f64>,
    threshold: f64,
) -> Option<(i64, f64)> {
    ctx.windows
        .iter()
        .find_map(|w| f(w).filter(|v| *v >= threshold).map(|v| (w.start_ms, v)))
}

pub(crate) fn timeline(
    ctx: &Ctx<'_>,
    q: &Query<'_>,
    store: &Store,
    t: &SloThresholds,
) -> Vec<TimelineEvent> {
    let mut out = Vec::new();
    crossings(
        ctx,
        &mut out,
        "TTFT p95",
        |w| w.latency.ttft_p95_ms,
        t.ttft_p95_ms,
        "ms",
        Signal::Ttft,
    );
    crossings(
        ctx,
        &mut out,
        "inter-token p95",
        |w| w.latency.itl_p95_ms,
        t.itl_p95_ms,
        "ms",
        Signal::InterTokenLatency,
    );
    crossings(
        ctx,
        &mut out,
        "error + abort",
        |w| w.outcomes.error_abort_pct,
        t.error_abort_pct,
        "%",
        Signal::FinishedRequests,
    );
    if let Some((at, v)) = first_window(ctx, |w| w.efficiency.waiting, f64::MIN_POSITIVE) {
        out.push(event(
            ctx,
            at,
            "waiting_started",
            "fleet",
            format!("Requests first waited for a slot (up to {v:.0})"),
            "waiting max",
            Some(v),
            "requests",
            &[Signal::Waiting],
        ));
    }
    if let Some((at, v)) =
        first_window(ctx, |w| w.efficiency.preemptions_per_min, f64::MIN_POSITIVE)
    {
        out.push(event(
            ctx,
            at,
            "preemptions_started",
            "fleet",
            format!("Preemptions started ({v:.1} per minute)"),
            "preemptions",
            Some(v),
            "per min",
            &[Signal::Preemptions],
        ));
    }
    for (threshold, kind) in [(60.0, "kv_above_60"), (90.0, "kv_above_90")] {
        if let Some((at, v)) = first_window(ctx, |w| w.efficiency.kv_cache_pct, threshold) {
            out.push(event(
                ctx,
                at,
                kind,
                "fleet",
                format!("KV-cache pool crossed {threshold:.0} % ({v:.1} %)"),
                "KV cache max",
                Some(v),
                "%",
                &[Signal::KvUsage],
            ));
        }
    }
    for (i, target) in store.targets().iter().enumerate() {
        for &at in q.restarts(TargetId(i as u32)) {
            out.push(event(
                ctx,
                at,
                "restart",
                target.name(),
                format!(
                    "{} restarted: process_start_time_seconds changed, counters reset",
                    target.name()
                ),
                "restart",
                None,
                "",
                &[Signal::ProcessStart],
            ));
        }
    }
    for cov in q.coverage() {
        let mut run: Option<(usize, u32)> = None;
        let flush = |run: &mut Option<(usize, u32)>, end: usize, out: &mut Vec<TimelineEvent>| {
            if let Some((start, failed)) = run.take() {
                let at = q.grid().bounds(start).0;
                out.push(TimelineEvent {
                    time_ms: at,
                    kind: "scrape_gap".into(),
                    subject: cov.target.clone(),
                    description: format!(
                        "{}: scrapes missing or failed in {} window{} ({} failed scrape{} recorded)",
                        cov.target,
                        end - start,
                        if end - start == 1 { "" } else { "s" },
                        failed,
                        if failed == 1 { "" } else { "s" }
                    ),
                    evidence: Vec::new(),
                });
            }
        };
        for (w, c) in cov.windows.iter().enumerate() {
            if c.has_gap() {
                let slot = run.get_or_insert((w, 0));
                slot.1 += c.failed;
            } else {
                flush(&mut run, w, &mut out);
            }
        }
        flush(&mut run, cov.windows.len(), &mut out);
    }
    if let Some((a, b, at)) = halves(ctx)
        && a > 0.0
        && b > 0.0
        && (a / b >= 2.0 || b / a >= 2.0)
    {
        out.push(event(
            ctx,
            at,
            "shape_change",
            "fleet",
            format!("The workload changed shape: generated/prompt {a:.2} → {b:.2}"),
            "ratio change",
            Some(b / a),
            "×",
            &[Signal::GenerationTokens, Signal::PromptTokens],
        ));
    }
    for (key, windows) in q.gauge_series(Signal::Xid) {
        if let Some((w, stats)) = windows
            .iter()
            .enumerate()
            .find_map(|(w, s)| s.filter(|s| s.max > 0.0).map(|s| (w, s)))
        {
            out.push(event(
                ctx,
                q.grid().bounds(w).0,
                "xid",
                &key,
                format!("GPU {key} reported XID {}", stats.last),
                "XID code",
                Some(stats.last),
                "",
                &[Signal::Xid],
            ));
        }
    }
    out.sort_by(|a, b| a.time_ms.cmp(&b.time_ms).then_with(|| a.kind.cmp(&b.kind)));
    out
}
