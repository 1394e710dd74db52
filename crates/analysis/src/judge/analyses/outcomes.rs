//! Step 4: outcomes. Errors and aborts against the objective, bursts of
//! them, restarts and the requests they lost, the stop/length mix, errors
//! at the gateway that never reach the engine, and client disconnects the
//! engine does not count.

use vllm_lens_catalog::Signal;

use crate::ids::{FindingId as F, PhaseKind, SloId};
use crate::judge::ctx::{Ctx, finding, missing};
use crate::measure::thresholds::HTTP_ERROR_FAIL_PCT;
use crate::model::{Finding, Severity, SloStatus};
use crate::text::{ms_text, num};
use crate::time::format_rfc3339;

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    errors(ctx, &mut out);
    bursts(ctx, &mut out);
    restarts(ctx, &mut out);
    rejections(ctx, &mut out);
    drift(ctx, &mut out);
    http(ctx, &mut out);
    disconnects(ctx, &mut out);
    out
}

fn errors(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let o = &ctx.summary.outcomes;
    let objective = ctx.settings.slo.error_abort_pct;
    let Some(p) = o.error_abort_pct else {
        out.push(missing(
            F::OutcomesReasonsMissing,
            "Finished requests by reason",
            &[Signal::FinishedRequests],
        ));
        return;
    };
    let windows = ctx.windows_where(|w| w.outcomes.error_abort_pct.is_some_and(|x| x >= objective));
    let failing = ctx.slo(SloId::ErrorAbortRate) == Some(SloStatus::Fail);
    let per = |r: &str| o.completions_per_min.get(r).copied();
    out.push(finding(
        if failing {
            F::OutcomesErrorsAborts
        } else {
            F::OutcomesErrorsAbortsLow
        },
        if failing {
            Severity::Fail
        } else {
            Severity::Pass
        },
        format!("{p:.2} % of finished requests ended in error or abort"),
        vec![
            ctx.ev("error + abort", Some(p), "%", &[Signal::FinishedRequests]),
            ctx.ev(
                "error",
                per("error"),
                "per min",
                &[Signal::FinishedRequests],
            ),
            ctx.ev(
                "abort",
                per("abort"),
                "per min",
                &[Signal::FinishedRequests],
            ),
            ctx.ev_at(
                &format!("windows at ≥ {objective} %"),
                Some(windows.len() as f64),
                "windows",
                &[Signal::FinishedRequests],
                windows,
            ),
        ],
        &[],
    ));
}

fn bursts(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for p in ctx.phases.iter().filter(|p| p.kind == PhaseKind::Burst) {
        let o = &p.figures.outcomes;
        let minutes = (p.end_ms - p.start_ms) as f64 / 60_000.0;
        let count = |r: &str| o.completions_per_min.get(r).map(|x| x * minutes);
        let status = |s: &str| o.http_per_min_by_status.get(s).map(|x| x * minutes);
        out.push(finding(
            F::OutcomesErrorBurst,
            Severity::Fail,
            format!(
                "Errors burst from {} to {}: {}",
                format_rfc3339(p.start_ms),
                format_rfc3339(p.end_ms),
                p.description
            ),
            vec![
                ctx.ev_at(
                    "error + abort",
                    o.error_abort_pct,
                    "%",
                    &[Signal::FinishedRequests],
                    vec![p.start_ms],
                ),
                ctx.ev_at(
                    "error",
                    count("error"),
                    "requests",
                    &[Signal::FinishedRequests],
                    vec![p.start_ms],
                ),
                ctx.ev_at(
                    "abort",
                    count("abort"),
                    "requests",
                    &[Signal::FinishedRequests],
                    vec![p.start_ms],
                ),
                ctx.ev_at(
                    "HTTP 4xx",
                    status("4xx"),
                    "requests",
                    &[Signal::HttpRequests],
                    vec![p.start_ms],
                ),
                ctx.ev_at(
                    "HTTP 5xx",
                    status("5xx"),
                    "requests",
                    &[Signal::HttpRequests],
                    vec![p.start_ms],
                ),
            ],
            &[],
        ));
    }
}

/// Requests the queue limits turned away (vLLM 0.32+).
fn rejections(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if let Some(rj) = ctx.capacity.rejections.as_ref().filter(|r| r.total > 0.0) {
        let reasons: Vec<String> = rj
            .by_reason
            .iter()
            .map(|(k, v)| format!("{} {k}", num(*v)))
            .collect();
        let finished: f64 = ctx.summary.outcomes.completions_per_min.values().sum();
        let finished = (finished > 0.0).then_some(finished);
        out.push(finding(
            F::OutcomesAdmissionRejected,
            Severity::Warn,
            format!(
                "{} requests turned away by the queue limits ({}){}",
                num(rj.total),
                reasons.join(", "),
                rj.per_min
                    .zip(finished)
                    .map_or(String::new(), |(r, f)| format!(
                        ": {} per minute against {} finished per minute",
                        num(r),
                        num(f)
                    ))
            ),
            vec![
                ctx.ev(
                    "rejected",
                    Some(rj.total),
                    "requests",
                    &[Signal::AdmissionRejections],
                ),
                ctx.ev(
                    "rejected",
                    rj.per_min,
                    "per min",
                    &[Signal::AdmissionRejections],
                ),
                ctx.ev("finished", finished, "per min", &[Signal::FinishedRequests]),
            ],
            &[],
        ));
    }
}

fn restarts(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for r in ctx.restarts {
        let down = r.down_ms();
        let lost = r.in_flight_lost;
        out.push(finding(
            F::OutcomesRestart,
            Severity::Warn,
            format!(
                "{} restarted at {}{}{}",
                r.replica,
                format_rfc3339(r.when_ms()),
                down.map_or(String::new(), |d| format!(
                    ": unreachable for at most {}",
                    ms_text(d as f64)
                )),
                r.lost_words()
                    .map_or(String::new(), |l| format!(", {l} lost"))
            ),
            vec![
                ctx.ev_at(
                    "down (last scrape of the old process to the new one)",
                    down.map(|d| d as f64 / 1000.0),
                    "s",
                    &[Signal::ProcessStart],
                    vec![r.seen_ms],
                ),
                ctx.ev_at(
                    if r.lost_by_little {
                        "in flight on average over the old process's last window (finished per second × mean latency)"
                    } else {
                        "in flight at the old process's last scrape"
                    },
                    lost,
                    "requests",
                    r.lost_signals(),
                    r.last_old_ms.into_iter().collect(),
                ),
            ],
            &[("replica", r.replica.clone())],
        ));
    }
}

fn drift(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let ratios: Vec<(f64, i64)> = ctx
        .windows
        .iter()
        .filter_map(|w| {
            let l = w
                .outcomes
                .completions_per_min
                .get("length")
                .copied()
                .unwrap_or(0.0);
            let all: f64 = w.outcomes.completions_per_min.values().sum();
            (all > 0.0).then(|| (l / all, w.start_ms))
        })
        .collect();
    if ratios.len() < 4 {
        return;
    }
    let mid = ratios.len() / 2;
    let a = ratios[..mid].iter().map(|x| x.0).sum::<f64>() / mid as f64;
    let b = ratios[mid..].iter().map(|x| x.0).sum::<f64>() / (ratios.len() - mid) as f64;
    if b - a >= crate::measure::thresholds::LENGTH_DRIFT {
        out.push(finding(
            F::OutcomesDriftToLength,
            Severity::Warn,
            format!(
                "More answers end on length later in the capture: {:.0} % → {:.0} %",
                a * 100.0,
                b * 100.0
            ),
            vec![ctx.ev_at(
                "length share, second half",
                Some(b * 100.0),
                "%",
                &[Signal::FinishedRequests],
                vec![ratios[mid].1],
            )],
            &[],
        ));
    }
}

fn http(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let o = &ctx.summary.outcomes;
    match o.http_error_pct {
        Some(h) if h > 0.0 => {
            let engine = o.error_abort_pct.unwrap_or(0.0);
            let per = |s: &str| o.http_per_min_by_status.get(s).copied();
            let where_ = if h > engine * 1.5 {
                "More requests fail at the HTTP layer than in the engine: some never reached it (validation errors, rejected or malformed requests, overload)."
            } else {
                "HTTP errors track the engine's own errors."
            };
            out.push(finding(
                F::OutcomesHttpErrors,
                if h >= HTTP_ERROR_FAIL_PCT {
                    Severity::Fail
                } else {
                    Severity::Warn
                },
                format!("{h:.2} % of HTTP requests answered 4xx or 5xx"),
                vec![
                    ctx.ev("HTTP 4xx + 5xx", Some(h), "%", &[Signal::HttpRequests]),
                    ctx.ev("HTTP 4xx", per("4xx"), "per min", &[Signal::HttpRequests]),
                    ctx.ev("HTTP 5xx", per("5xx"), "per min", &[Signal::HttpRequests]),
                    ctx.ev(
                        "engine error + abort",
                        o.error_abort_pct,
                        "%",
                        &[Signal::FinishedRequests],
                    ),
                ],
                &[("where", where_.to_string())],
            ));
        }
        Some(_) => out.push(finding(
            F::OutcomesHttpOk,
            Severity::Pass,
            "No HTTP errors".into(),
            vec![ctx.ev("HTTP 4xx + 5xx", Some(0.0), "%", &[Signal::HttpRequests])],
            &[],
        )),
        None => out.push(finding(
            F::OutcomesHttpMissing,
            Severity::NotApplicable,
            "HTTP status counts are not in this capture".into(),
            Vec::new(),
            &[],
        )),
    }
}

fn disconnects(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let o = &ctx.summary.outcomes;
    match o.client_disconnects {
        Some(n) if n < 1.0 => {}
        Some(n) => {
            let windows =
                ctx.windows_where(|w| w.outcomes.client_disconnects.is_some_and(|x| x >= 1.0));
            // Of every request that came to an end: finished or hung up.
            let share = ctx
                .finished
                .filter(|f| f + n > 0.0)
                .map(|f| 100.0 * n / (f + n));
            out.push(finding(
                F::OutcomesClientDisconnects,
                if share.is_some_and(|s| s >= ctx.settings.slo.error_abort_pct) {
                    Severity::Warn
                } else {
                    Severity::Info
                },
                format!(
                    "At least {n:.0} client disconnect{} (a lower bound): answered 2xx but never finished in the engine",
                    if n.round() == 1.0 { "" } else { "s" }
                ),
                vec![
                    ctx.ev(
                        "HTTP 2xx on completion handlers − finished requests",
                        Some(n),
                        "requests",
                        &[Signal::HttpRequests, Signal::FinishedRequests],
                    ),
                    ctx.ev(
                        "share of requests (finished + disconnected)",
                        share,
                        "%",
                        &[Signal::HttpRequests, Signal::FinishedRequests],
                    ),
                    ctx.ev_at(
                        "windows with at least one",
                        Some(windows.len() as f64),
                        "windows",
                        &[Signal::HttpRequests],
                        windows,
                    ),
                ],
                &[],
            ));
        }
        None if ctx.engine_v1 => out.push(finding(
            F::OutcomesClientAbortsUncounted,
            Severity::Info,
            "Client disconnects are not counted as aborts".into(),
            Vec::new(),
            &[],
        )),
        None => {}
    }
}
