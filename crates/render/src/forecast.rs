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
        (Some(l), Some(h)) if p.unit == "requests" && (h - l).abs() < 0.5 => {
            format!("queues from {} in flight", num(l.min(h)))
        }
        (Some(l), Some(h)) if p.unit == "requests" => {
            format!("queues from {}–{} in flight", num(l.min(h)), num(l.max(h)))
        }
        (Some(l), None) if p.unit == "requests" => format!(
            "queues from {} in flight, or not up to twice --max-num-seqs",
            num(l)
        ),
        (Some(l), Some(h)) => format!("{}–{} {}", num(l), num(h), p.unit),
        _ if p.unit == "requests" => "no queueing up to twice --max-num-seqs".into(),
        _ => "not modelled".into(),
    }
}

/// The sweep's row in words.
pub fn sweep_text(r: &SweepRow) -> String {
    match (r.max_load_x, r.at_top) {
        (Some(x), true) => format!(
            "{}: both latency objectives still hold at {}× the peak (~{} in flight, ~{} requests/min): the sweep's top",
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
            "{}: not even 1/8 of the peak meets both latency objectives",
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
    if let Some(o) = &s.other_shape {
        let _ = writeln!(out, "{}{}", if md { "\n" } else { "  " }, o.explanation);
    }
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
            "Model: a step costs {}–{} ms + {}–{} ms per decoding sequence + {}–{} ms per 1,000 {}{}; the front end adds {} ms to TTFT. {}.",
            num(m.step_base_ms.low),
            num(m.step_base_ms.high),
            num(m.per_decode_seq_ms.low),
            num(m.per_decode_seq_ms.high),
            num(m.per_1k_prefill_tokens_ms.low),
            num(m.per_1k_prefill_tokens_ms.high),
            if m.roofline {
                "tokens computed, overlapped with the weights' read"
            } else {
                "prefill tokens"
            },
            m.floor_ms.map_or(String::new(), |x| if m.roofline {
                format!(
                    " (a roofline: that term is never under {} ms, the weights read once)",
                    num(x)
                )
            } else {
                format!(", never under {} ms (the weights read once)", num(x))
            }),
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

fn status_class(s: SloStatus) -> &'static str {
    match s {
        SloStatus::Pass => "pass",
        SloStatus::Fail => "fail",
        SloStatus::CannotTell => "cannot_tell",
        SloStatus::NotExercised => "not_exercised",
    }
}

fn forecast_status_word(s: ForecastStatus) -> &'static str {
    match s {
        ForecastStatus::Calibrated => "Calibrated",
        ForecastStatus::NotCalibrated => "Not calibrated: nothing is predicted",
        ForecastStatus::CannotForecast => "Cannot forecast",
    }
}

/// The predicted figure of one objective in a scenario, with its status.
fn slo_cell(s: &ForecastScenario, id: vllm_lens_model::ids::SloId) -> maud::Markup {
    match s.slo.iter().find(|p| p.id == id) {
        Some(p) => maud::html! {
            td class=(format!("fc {}", status_class(p.status))) {
                (figure(p)) br; span.m { (crate::words::status_mark(p.status)) }
            }
        },
        None => maud::html! { td.missing title="not predicted" { "—" } },
    }
}

fn range(r: vllm_lens_model::forecast::Range, unit: &str) -> String {
    if (r.high - r.low).abs() <= 1e-9 * r.high.abs().max(1.0) {
        format!("{} {unit}", num(r.low))
    } else {
        format!("{}–{} {unit}", num(r.low), num(r.high))
    }
}

fn backtest_cell(
    measured: Option<f64>,
    bucket: Option<vllm_lens_model::report::Bounds>,
    predicted: Option<f64>,
    hit: Option<bool>,
) -> maud::Markup {
    let Some(m) = measured else {
        return maud::html! { td.missing title="missing" { "—" } };
    };
    let b = bucket.map_or(String::new(), |b| match b.high {
        Some(h) => format!(" ({}–{})", num(b.low), num(h)),
        None => format!(" (above {})", num(b.low)),
    });
    maud::html! {
        td class=(match hit { Some(true) => "fc pass", Some(false) => "fc fail", None => "fc" }) {
            (num(m)) (b) " → " (predicted.map_or("—".into(), num))
            @if hit == Some(false) { " ✖" }
        }
    }
}

/// The explanation's status word (bold on the page) and the rest.
fn split_status(f: &Forecast) -> (String, String) {
    // The misses are listed under it on the page.
    let text = match f.explanation.find(" Misses: ") {
        Some(i) if !f.calibration.misses.is_empty() => &f.explanation[..i],
        _ => &f.explanation,
    };
    for w in ["Calibrated", "Not calibrated", "Cannot forecast"] {
        if let Some(rest) = text.strip_prefix(w) {
            return (w.to_string(), rest.to_string());
        }
    }
    (
        forecast_status_word(f.status).to_string(),
        format!(". {text}"),
    )
}

/// The sweep's row without the scenario's title (the table's row has it).
pub fn sweep_short(r: &SweepRow) -> String {
    match (r.max_load_x, r.at_top) {
        (Some(x), true) => format!("at least {}× the peak (the sweep's top)", num(x)),
        (Some(x), false) => format!(
            "{}× the peak (~{} in flight, ~{}/min); then {} fails",
            num(x),
            num(r.in_flight.unwrap_or(0.0)),
            num(r.requests_per_min.unwrap_or(0.0)),
            r.limiting.map_or("an objective", slo_name)
        ),
        (None, _) => "under 1/8 of the peak".into(),
    }
}

/// The forecast as the HTML report's section (`#forecast`).
pub fn html(f: &Forecast) -> maud::Markup {
    use vllm_lens_model::ids::SloId;
    let cal = &f.calibration;
    let e = &cal.error;
    maud::html! {
        section id="forecast" {
            h2 { "Forecast: what each change would give" }
            p.note { "A model of this server fitted on the capture's own windows, replayed first at each window's load (the back-test) and, only if that holds, under each change at the capture's peak load level. Ranges cover what the windows cannot tell apart. "
                code { "vllm-lens forecast BUNDLE --set max-num-seqs=N --load 2x" } " replays any other change." }
            p class=(format!("fstatus {}", match f.status { ForecastStatus::Calibrated => "pass", ForecastStatus::NotCalibrated => "fail", ForecastStatus::CannotForecast => "not_exercised" })) {
                @let (word, rest) = split_status(f);
                strong { (word) } (rest)
            }
            @if !cal.misses.is_empty() {
                p { "What missed:" }
                ul.limits.misses { @for m in &cal.misses { li { (m) } } }
            }
            @if !f.scenarios.is_empty() {
                div.scroll { table.forecast {
                    thead { tr {
                        th.text { "Scenario" }
                        th { "TTFT p95 (in the engine)" }
                        th { "inter-token p95" }
                        th { "queueing" }
                        th { "throughput" }
                        th.text { "largest load meeting the latency objectives (best fit, widened by the back-test's error)" }
                    } }
                    tbody {
                        @for s in &f.scenarios {
                            @let row = f.sweep.iter().find(|r| r.scenario == s.id);
                            tr {
                                td.text {
                                    strong { (s.title) }
                                    @if let Some(r) = &s.recommendation { " " a href=(format!("#rec-{}", r.as_str())) { "(recommendation)" } }
                                    br; span.m { "at " (num(s.load.factor)) "× the peak: " (num(s.load.in_flight)) " " (match s.load.shape { vllm_lens_model::forecast::LoadShape::Closed => "users (the most requests the engine held at one scrape)", vllm_lens_model::forecast::LoadShape::Open => "in flight" }) }
                                    @if let Some(o) = s.other_shape.as_ref().filter(|o| o.differs) {
                                        br; span.m.shape { (o.explanation) }
                                    }
                                }
                                (slo_cell(s, SloId::TtftP95))
                                (slo_cell(s, SloId::ItlP95))
                                (slo_cell(s, SloId::QueueAtConcurrency))
                                td { (range(s.throughput.requests_per_min, "/min")) br; span.m { (range(s.throughput.generated_tokens_per_s, "tokens/s")) } }
                                td.text { (row.map_or("—".into(), sweep_short)) }
                            }
                        }
                    }
                } }
                @for r in f.sweep.iter().filter(|r| !f.scenarios.iter().any(|s| s.id == r.scenario)) {
                    p { "Load sweep: " (sweep_text(r)) }
                }
            }
            @if let Some(m) = &f.model {
                details {
                    summary { "The model, fitted on " (m.windows) " windows" }
                    table.facts { tbody {
                        tr { th.text { "Step time" } td.text {
                            @if m.roofline {
                                (range(m.step_base_ms, "ms")) " per step + " (range(m.per_decode_seq_ms, "ms")) " per decoding sequence + the larger of the weights' read (" (m.floor_ms.map_or("?".into(), num)) " ms) and " (range(m.per_1k_prefill_tokens_ms, "ms")) " per 1,000 tokens computed (a roofline: prompt tokens ride along a decode step until their arithmetic outlasts the read)"
                            } @else {
                                (range(m.step_base_ms, "ms")) " per step + " (range(m.per_decode_seq_ms, "ms")) " per decoding sequence + " (range(m.per_1k_prefill_tokens_ms, "ms")) " per 1,000 prefill tokens"
                                @if let Some(x) = m.floor_ms { ", never under " (num(x)) " ms (the weights read once)" }
                            }
                            @if m.first_token_lag_steps > 0.0 { "; the first token comes one step after the prompt's last chunk (async scheduling)" }
                        } }
                        tr { th.text { "Front end" } td.text { (num(m.front_end_ms)) " ms of TTFT outside queue and prefill" } }
                        tr { th.text { "Load" } td.text { (m.load_shape_evidence) } }
                        tr { th.text { "Configuration replayed" } td.text {
                            "--max-num-seqs " (m.settings.max_num_seqs) ", --max-num-batched-tokens " (m.settings.max_num_batched_tokens)
                            ", " (m.settings.kv_blocks) " KV blocks of " (m.settings.block_size) " tokens, prefix caching "
                            (if m.settings.prefix_caching { "on" } else { "off" }) ", " (m.settings.replicas) " replica" (if m.settings.replicas == 1 { "" } else { "s" })
                        } }
                        tr { th.text { "Workload replayed" } td.text {
                            "mean prompt " (num(m.workload.prompt_tokens)) " tokens, mean answer " (num(m.workload.generated_tokens)) " tokens, prefix-cache hits " (num(m.workload.prefix_hit_pct)) " %"
                            @if let Some(p) = m.workload.shared_prefix_tokens { ", a shared prefix of " (num(p)) " tokens" }
                        } }
                        @if !m.assumed.is_empty() {
                            tr { th.text { "Assumed" } td.text { ul.limits { @for a in &m.assumed { li { (a) } } } } }
                        }
                    } }
                }
            }
            @if !cal.backtest.is_empty() {
                details {
                    summary { "The back-test: " (cal.backtest.len()) (if cal.backtest.len() == 1 { " window" } else { " windows" }) " replayed at their own load (TTFT " (e.ttft_hits) " of " (e.ttft_windows) ", inter-token " (e.itl_hits) " of " (e.itl_windows) ", load " (e.load_hits) " of " (e.windows) ")" }
                    p.m { "Held to: " (cal.tolerance) ". Each cell reads measured (its bucket) → replayed."
                        @if let (Some(a), Some(b)) = (e.queueing_starts_at, e.predicted_queueing_starts_at) { " Queueing starts at " (num(a)) " in flight, replayed " (num(b)) "." }
                    }
                    div.scroll { table.backtest {
                        thead { tr { th { "window (UTC)" } th { "in flight" } th { "requests/min" } th { "TTFT p95 ms" } th { "inter-token p95 ms" } th { "replayed load" } } }
                        tbody { @for b in &cal.backtest { tr {
                            td.mono { (crate::svg::hhmm(b.window_start_ms)) }
                            td { (num(b.in_flight)) }
                            td { (num(b.requests_per_min)) }
                            (backtest_cell(b.ttft_p95_ms, b.ttft_bucket, b.predicted_ttft_p95_ms, b.ttft_hit))
                            (backtest_cell(b.itl_p95_ms, b.itl_bucket, b.predicted_itl_p95_ms, b.itl_hit))
                            td class=(if b.load_hit { "fc pass" } else { "fc fail" }) {
                                (num(b.predicted_in_flight)) " in flight, " (num(b.predicted_requests_per_min)) "/min" @if !b.load_hit { " ✖" }
                            }
                        } } }
                    } }
                }
            }
        }
    }
}
