//! Step 4: outcomes. Errors and aborts, the stop/length mix, errors at the
//! gateway that never reach the engine, and what this release cannot see.

use vllm_lens_catalog::Signal;

use super::{Ctx, finding, missing};
use crate::model::{Finding, Severity};

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let o = &ctx.summary.outcomes;
    match o.error_abort_pct {
        Some(p) => {
            let windows =
                ctx.windows_where(|w| w.outcomes.error_abort_pct.is_some_and(|x| x >= 0.5));
            out.push(finding(
                if p >= 0.5 { "outcomes.errors_aborts" } else { "outcomes.errors_aborts_low" },
                if p >= 0.5 { Severity::Fail } else { Severity::Pass },
                format!("{p:.2} % of finished requests ended in error or abort"),
                "finished_reason=\"error\" and \"abort\" are requests the engine failed or cancelled; users saw no (complete) answer.".into(),
                vec![
                    ctx.ev("error + abort", Some(p), "%", &[Signal::FinishedRequests]),
                    ctx.ev_at("windows at ≥ 0.5 %", Some(windows.len() as f64), "windows", &[Signal::FinishedRequests], windows),
                ],
                if p >= 0.5 { "Read the server log around the windows listed; check client timeouts and request validation." } else { "" },
            ));
        }
        None => out.push(missing(
            "outcomes.reasons_missing",
            "Finished requests by reason",
            &[Signal::FinishedRequests],
        )),
    }
    // stop/length mix drift.
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
    if ratios.len() >= 4 {
        let mid = ratios.len() / 2;
        let a = ratios[..mid].iter().map(|x| x.0).sum::<f64>() / mid as f64;
        let b = ratios[mid..].iter().map(|x| x.0).sum::<f64>() / (ratios.len() - mid) as f64;
        if b - a >= 0.2 {
            out.push(finding(
                "outcomes.drift_to_length",
                Severity::Warn,
                format!("More answers end on length later in the capture: {:.0} % → {:.0} %", a * 100.0, b * 100.0),
                "A growing share of answers is cut at max_tokens: the prompts or the model's answers got longer.".into(),
                vec![ctx.ev_at("length share, second half", Some(b * 100.0), "%", &[Signal::FinishedRequests], vec![ratios[mid].1])],
                "Check max_tokens against the answers clients now expect.",
            ));
        }
    }
    // Gateway errors.
    match o.http_error_pct {
        Some(h) if h > 0.0 => {
            let engine = o.error_abort_pct.unwrap_or(0.0);
            out.push(finding(
                "outcomes.http_errors",
                if h >= 1.0 { Severity::Fail } else { Severity::Warn },
                format!("{h:.2} % of HTTP requests answered 4xx or 5xx"),
                if h > engine * 1.5 {
                    "More requests fail at the HTTP layer than in the engine: some never reached it (validation errors, rejected or malformed requests, overload).".into()
                } else {
                    "HTTP errors track the engine's own errors.".into()
                },
                vec![
                    ctx.ev("HTTP 4xx + 5xx", Some(h), "%", &[Signal::HttpRequests]),
                    ctx.ev("engine error + abort", o.error_abort_pct, "%", &[Signal::FinishedRequests]),
                ],
                "Group the HTTP errors by handler and status in the table below; fix the client for 4xx, the server for 5xx.",
            ));
        }
        Some(_) => out.push(finding(
            "outcomes.http_ok",
            Severity::Pass,
            "No HTTP errors".into(),
            "Every HTTP request answered 2xx.".into(),
            vec![ctx.ev("HTTP 4xx + 5xx", Some(0.0), "%", &[Signal::HttpRequests])],
            "",
        )),
        None => out.push(finding(
            "outcomes.http_missing",
            Severity::NotApplicable,
            "HTTP status counts are not in this capture".into(),
            "http_requests_total exists from vLLM 0.8.3 and is missing on V0 servers with the multiprocessing front end; errors that never reach the engine cannot be counted.".into(),
            Vec::new(),
            "",
        )),
    }
    // Blind spots.
    if ctx.engine_v1 {
        out.push(finding(
            "outcomes.client_aborts_uncounted",
            Severity::Info,
            "Client disconnects are not counted as aborts".into(),
            "In V1 a client that disconnects mid-answer goes through an abort path that records no per-request statistics: finished_reason=\"abort\" stays 0 for it and it is missing from the latency histograms, while its prompt still counts in prompt tokens. Compare HTTP requests with finished requests to see them.".into(),
            Vec::new(),
            "",
        ));
    }
    out
}
