//! The timeline for a post-incident review: the moments that matter, in
//! order, each with its evidence. Objective breaches are the windows the
//! buckets prove over (never an interpolation), load steps are the
//! phases' boundaries.

use vllm_lens_catalog::Signal;
use vllm_lens_query::Query;

use crate::ids::{PhaseKind, Scope, TimelineKind as K};
use crate::judge::ctx::Ctx;
use crate::model::TimelineEvent;
use crate::text::{ms_text, num};

#[allow(clippy::too_many_arguments)]
fn event(
    ctx: &Ctx<'_>,
    time_ms: i64,
    kind: K,
    subject: Scope,
    description: String,
    label: &str,
    value: Option<f64>,
    unit: &str,
    signals: &[Signal],
) -> TimelineEvent {
    TimelineEvent {
        time_ms,
        kind,
        subject,
        description,
        evidence: vec![ctx.ev_at(label, value, unit, signals, vec![time_ms])],
    }
}

fn first_window(
    ctx: &Ctx<'_>,
    f: impl Fn(&crate::measure::scopes::FleetWindow) -> Option<f64>,
    threshold: f64,
) -> Option<(i64, f64)> {
    ctx.windows
        .iter()
        .find_map(|w| f(w).filter(|v| *v >= threshold).map(|v| (w.start_ms, v)))
}

/// The moments that matter, in order of time (then kind).
pub(crate) fn timeline(ctx: &Ctx<'_>, q: &Query<'_>) -> Vec<TimelineEvent> {
    let mut out = Vec::new();
    slo_events(ctx, &mut out);
    queue_event(ctx, &mut out);
    threshold_events(ctx, &mut out);
    restart_events(ctx, &mut out);
    gap_events(ctx, q, &mut out);
    phase_events(ctx, &mut out);
    shape_event(ctx, &mut out);
    fault_events(ctx, &mut out);
    out.sort_by(|a, b| a.time_ms.cmp(&b.time_ms).then_with(|| a.kind.cmp(&b.kind)));
    out
}

/// Proven breaches and recoveries of each objective.
fn slo_events(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    // Proven breaches and recoveries of each objective: a window the
    // buckets cannot decide, or without data, changes nothing.
    for slo in ctx.slo {
        let def = crate::slo::registry::slo(slo.id);
        let signal = def.breach_signal;
        let has_data = def.has_data;
        let mut above = false;
        for w in ctx.windows {
            let failing = slo.failing_windows.contains(&w.start_ms);
            let undecided = slo.cannot_tell_windows.contains(&w.start_ms)
                || slo.excluded_windows.contains(&w.start_ms)
                || !has_data(w);
            if failing && !above {
                above = true;
                out.push(event(
                    ctx,
                    w.start_ms,
                    K::SloBreached,
                    Scope::Fleet,
                    format!(
                        "{}: proven missed from this window{}",
                        slo.title,
                        breach_context(ctx, slo, w.start_ms)
                    ),
                    &slo.title,
                    None,
                    "",
                    &[signal],
                ));
            } else if !failing && !undecided && above {
                above = false;
                out.push(event(
                    ctx,
                    w.start_ms,
                    K::SloRecovered,
                    Scope::Fleet,
                    format!("{}: met again", slo.title),
                    &slo.title,
                    None,
                    "",
                    &[signal],
                ));
            }
        }
    }
}

/// Where a breach falls in a new process's first minutes (warm-up, or a
/// restart) and the objective still holds over the capture, say so: the
/// headline's pass and this window's miss are both true.
fn breach_context(ctx: &Ctx<'_>, slo: &crate::model::SloResult, at_ms: i64) -> &'static str {
    if slo.status != crate::model::SloStatus::Pass {
        return "";
    }
    match ctx
        .phases
        .iter()
        .find(|p| p.start_ms <= at_ms && at_ms < p.end_ms)
        .map(|p| p.kind)
    {
        Some(PhaseKind::Warmup) => {
            " (a new process's warm-up: its first requests are slow; over the whole capture the objective is met)"
        }
        Some(PhaseKind::Restart) => " (a restart: over the whole capture the objective is met)",
        _ => "",
    }
}

/// The first time requests queued.
fn queue_event(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    // Queueing as the queue objective defines it (waiting on two
    // consecutive scrapes, or a window's mean queue time), at the time of
    // its first sighting: one request caught between two engine steps is
    // not the start of queueing.
    let first = ctx
        .queue
        .replicas
        .iter()
        .flat_map(|r| r.queued.iter().map(move |x| (r, x)))
        .min_by_key(|(_, x)| x.time_ms);
    if let Some((r, x)) = first {
        let (text, value, signals): (String, f64, &[Signal]) = match x.by {
            crate::measure::queue::QueuedBy::Waiting => (
                format!(
                    "Requests first queued on {}: {} waiting beside {} running, on consecutive scrapes",
                    r.name,
                    num(x.in_flight - x.running),
                    num(x.running)
                ),
                x.in_flight - x.running,
                &[Signal::Waiting, Signal::Running],
            ),
            crate::measure::queue::QueuedBy::QueueTime => (
                format!(
                    "Requests first queued on {}: the window's mean queue time reached {} ms (up to {} in flight)",
                    r.name,
                    num(ctx.settings.slo.queue_negligible_ms),
                    num(x.in_flight)
                ),
                x.in_flight,
                &[Signal::QueueTime],
            ),
        };
        out.push(event(
            ctx,
            x.time_ms,
            K::WaitingStarted,
            Scope::Replica(r.name.clone()),
            text,
            "waiting",
            Some(value),
            "requests",
            signals,
        ));
    }
}

/// Preemptions starting and the KV cache crossing its warning lines.
fn threshold_events(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    if let Some((at, v)) =
        first_window(ctx, |w| w.efficiency.preemptions_per_min, f64::MIN_POSITIVE)
    {
        out.push(event(
            ctx,
            at,
            K::PreemptionsStarted,
            Scope::Fleet,
            format!("Preemptions started ({v:.1} per minute)"),
            "preemptions",
            Some(v),
            "per min",
            &[Signal::Preemptions],
        ));
    }
    for (threshold, kind) in [
        (crate::measure::thresholds::KV_WARN_PCT, K::KvAbove60),
        (crate::measure::thresholds::KV_FULL_PCT, K::KvAbove90),
    ] {
        if let Some((at, v)) = first_window(ctx, |w| w.efficiency.kv_cache_pct, threshold) {
            out.push(event(
                ctx,
                at,
                kind,
                Scope::Fleet,
                format!("KV-cache pool crossed {threshold:.0} % ({v:.1} %)"),
                "KV cache max",
                Some(v),
                "%",
                &[Signal::KvUsage],
            ));
        }
    }
}

/// Restarts, with the time unreachable and the requests lost.
fn restart_events(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    for r in ctx.restarts {
        let mut text = format!("{} restarted: a new process, counters reset", r.replica);
        if let Some(d) = r.down_ms() {
            text.push_str(&format!("; unreachable for up to {}", ms_text(d as f64)));
        }
        if let Some(l) = r.lost_words() {
            text.push_str(&format!("; {l} lost"));
        }
        out.push(event(
            ctx,
            r.when_ms(),
            K::Restart,
            Scope::Replica(r.replica.clone()),
            text,
            "in flight lost",
            r.in_flight_lost,
            "requests",
            r.lost_signals(),
        ));
    }
}

/// Load steps between phases, and error bursts.
fn phase_events(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    // Load steps between phases, and error bursts.
    let mut previous: Option<&crate::model::Phase> = None;
    for p in ctx.phases {
        match p.kind {
            k if k.is_load() => {
                if let (Some(prev), Some(now)) = (previous, p.in_flight_avg)
                    && let Some(before) = prev.in_flight_avg
                    && crate::judge::phases::differs(before, now)
                {
                    out.push(event(
                        ctx,
                        p.start_ms,
                        K::LoadStep,
                        Scope::Fleet,
                        format!(
                            "The load moved from ~{} to ~{} requests in flight",
                            num(before.round()),
                            num(now.round())
                        ),
                        "requests in flight (mean)",
                        Some(now),
                        "requests",
                        &[Signal::Running, Signal::Waiting],
                    ));
                }
                previous = Some(p);
            }
            PhaseKind::Burst => out.push(event(
                ctx,
                p.start_ms,
                K::ErrorBurst,
                Scope::Fleet,
                format!("Errors burst: {}", p.description),
                "error + abort",
                p.figures.outcomes.error_abort_pct,
                "%",
                &[Signal::FinishedRequests, Signal::HttpRequests],
            )),
            _ => {}
        }
    }
}

/// A change of the workload's shape.
fn shape_event(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    if let Some((a, b, at)) = crate::judge::analyses::workload::shape_change(ctx) {
        out.push(event(
            ctx,
            at,
            K::ShapeChange,
            Scope::Fleet,
            format!("The workload changed shape: generated/prompt {a:.2} → {b:.2}"),
            "ratio change",
            Some(b / a),
            "×",
            &[Signal::GenerationTokens, Signal::PromptTokens],
        ));
    }
}

/// Scrape gaps, at the time the first scrape went missing or failed.
fn gap_events(ctx: &Ctx<'_>, q: &Query<'_>, out: &mut Vec<TimelineEvent>) {
    // Scrape gaps, at the time the first scrape went missing or failed
    // (gaps less than a window apart read as one).
    for cov in q.coverage() {
        let mut merged: Vec<vllm_lens_query::Gap> = Vec::new();
        for g in &cov.gaps {
            match merged.last_mut() {
                Some(m)
                    if g.first_ms - m.before_ms.unwrap_or(m.first_ms) <= ctx.settings.window_ms =>
                {
                    m.before_ms = g.before_ms;
                    m.missing += g.missing;
                    m.failed += g.failed;
                }
                _ => merged.push(g.clone()),
            }
        }
        for g in merged {
            let until = g.before_ms.map_or_else(
                || "none successful after it".to_string(),
                |t| format!("the next successful one at {}", crate::time::hhmmss(t)),
            );
            let failed = if g.failed > 0 {
                format!(
                    " ({} failed scrape{} recorded)",
                    g.failed,
                    if g.failed == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            };
            out.push(TimelineEvent {
                time_ms: g.first_ms,
                kind: K::ScrapeGap,
                subject: Scope::Replica(cov.target.clone()),
                description: format!(
                    "{}: {} missing or failed from {}, {until}{failed}",
                    cov.target,
                    crate::text::plural(g.missing.max(1) as usize, "scrape", "scrapes"),
                    crate::time::hhmmss(g.first_ms),
                ),
                evidence: Vec::new(),
            });
        }
    }
}

/// Hardware faults at the scrape that first showed them.
fn fault_events(ctx: &Ctx<'_>, out: &mut Vec<TimelineEvent>) {
    // Hardware faults at the scrape that first showed them.
    for f in ctx.faults {
        let kind = if f.kind == crate::ids::GpuFaultKind::Xid {
            K::Xid
        } else {
            K::GpuFault
        };
        let signal = crate::measure::faults::signal(f.kind);
        out.push(event(
            ctx,
            f.seen_ms,
            kind,
            Scope::Replica(f.gpu.clone()),
            crate::measure::faults::words(f),
            &f.detail,
            Some(f.value),
            "",
            &[signal],
        ));
    }
}
