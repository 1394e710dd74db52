//! The forecast as text: the terminal's and Markdown's (the same lines;
//! Markdown adds tables). Used by `vllm-lens forecast` and by the report's
//! Markdown summary.

use std::fmt::Write as _;

use vllm_lens_model::forecast::{Forecast, ForecastScenario, ForecastStatus, SweepRow};
use vllm_lens_model::report::SloStatus;
use vllm_lens_model::text::num;

fn status_word(s: SloStatus) -> &'static str {
    match s {
        SloStatus::Pass => "pass",
        SloStatus::Fail => "FAIL",
        SloStatus::CannotTell => "cannot tell",
        SloStatus::NotExercised => "not predicted / not exercised",
    }
}

fn slo_name(id: vllm_lens_model::ids::SloId) -> &'static str {
    use vllm_lens_model::ids::SloId;
    match id {
        SloId::TtftP95 => "TTFT p95 (in the engine)",
        SloId::ItlP95 => "inter-token p95 (in the engine)",
        SloId::QueueAtConcurrency => "no queueing at N in flight",
        SloId::ErrorAbortRate => "errors + aborts",
    }
}

fn figure(p: &vllm_lens_model::forecast::PredictedSlo) -> String {
    match (p.low, p.high) {
        (Some(l), Some(h)) if p.unit == "requests" => {
            format!("queues from {} in flight", num(l.min(h)))
        }
        (Some(l), Some(h)) => format!("{}–{} {}", num(l), num(h), p.unit),
        _ if p.unit == "requests" => "no queueing up to twice --max-num-seqs".into(),
        _ => "not modelled".into(),
    }
}

/// The sweep's row in words.
pub fn sweep_text(r: &SweepRow) -> String {
    match (r.max_load_x, r.at_top) {
        (Some(x), true) => format!(
            "{}: every objective still holds at {}× the peak (~{} in flight, ~{} requests/min): the sweep's top",
            r.title,
            num(x),
            num(r.in_flight.unwrap_or(0.0)),
            num(r.requests_per_min.unwrap_or(0.0))
        ),
        (Some(x), false) => format!(
            "{}: up to {}× the peak (~{} in flight, ~{} requests/min), then {} fails first",
            r.title,
            num(x),
            num(r.in_flight.unwrap_or(0.0)),
            num(r.requests_per_min.unwrap_or(0.0)),
            r.limiting.map_or("an objective", slo_name)
        ),
        (None, _) => format!(
            "{}: not even 1/8 of the peak meets every objective",
            r.title
        ),
    }
}

/// One scenario, as lines.
pub fn scenario_text(s: &ForecastScenario, sweep: Option<&SweepRow>, md: bool) -> String {
    let mut out = String::new();
    let h = if md { "### " } else { "" };
    let _ = writeln!(
        out,
        "{h}{} at {}× the peak load",
        s.title,
        num(s.load.factor)
    );
    for c in &s.changes {
        let _ = writeln!(out, "  {}: {} → {}", c.setting, c.from, c.to);
    }
    if md {
        let _ = writeln!(
            out,
            "\n| Objective | Predicted | Objective | Status |\n|---|---|---|---|"
        );
    }
    for p in &s.slo {
        let objective = if p.unit == "requests" {
            format!("{} in flight", num(p.objective))
        } else {
            format!("{} {}", num(p.objective), p.unit)
        };
        if md {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                slo_name(p.id),
                figure(p),
                objective,
                status_word(p.status)
            );
        } else {
            let _ = writeln!(
                out,
                "  {:<34} {:<34} against {:<16} {}",
                slo_name(p.id),
                figure(p),
                objective,
                status_word(p.status)
            );
        }
    }
    let t = &s.throughput;
    let _ = writeln!(
        out,
        "{}throughput {}–{} requests/min, {}–{} generated tokens/s, {}–{} requests in the engine per replica",
        if md { "\n" } else { "  " },
        num(t.requests_per_min.low),
        num(t.requests_per_min.high),
        num(t.generated_tokens_per_s.low),
        num(t.generated_tokens_per_s.high),
        num(t.in_flight_per_replica.low),
        num(t.in_flight_per_replica.high)
    );
    if let Some(r) = sweep {
        let _ = writeln!(
            out,
            "{}load sweep: {}",
            if md { "\n" } else { "  " },
            sweep_text(r)
        );
    }
    out
}

/// The forecast, as lines (for the terminal or Markdown).
pub fn render(f: &Forecast, md: bool) -> String {
    let mut out = String::new();
    let h = if md { "## " } else { "" };
    let _ = writeln!(
        out,
        "{h}Forecast ({})",
        match f.status {
            ForecastStatus::Calibrated => "calibrated",
            ForecastStatus::NotCalibrated => "not calibrated",
            ForecastStatus::CannotForecast => "cannot forecast",
        }
    );
    let _ = writeln!(out, "{}\n", f.explanation);
    if let Some(m) = &f.model {
        let _ = writeln!(
            out,
            "Model: a step costs {}–{} ms + {}–{} ms per decoding sequence + {}–{} ms per 1,000 prefill tokens{}; the front end adds {} ms to TTFT. {}.",
            num(m.step_base_ms.low),
            num(m.step_base_ms.high),
            num(m.per_decode_seq_ms.low),
            num(m.per_decode_seq_ms.high),
            num(m.per_1k_prefill_tokens_ms.low),
            num(m.per_1k_prefill_tokens_ms.high),
            m.floor_ms.map_or(String::new(), |x| format!(
                ", never under {} ms (the weights read once)",
                num(x)
            )),
            num(m.front_end_ms),
            m.load_shape_evidence
        );
        for a in &m.assumed {
            let _ = writeln!(out, "{}assumed: {a}", if md { "- " } else { "  " });
        }
        let _ = writeln!(out);
    }
    for s in &f.scenarios {
        let row = f.sweep.iter().find(|r| r.scenario == s.id);
        let _ = writeln!(out, "{}", scenario_text(s, row, md));
    }
    for r in f
        .sweep
        .iter()
        .filter(|r| !f.scenarios.iter().any(|s| s.id == r.scenario))
    {
        let _ = writeln!(
            out,
            "{}load sweep: {}",
            if md { "- " } else { "" },
            sweep_text(r)
        );
    }
    out
}
