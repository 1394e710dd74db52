//! The report as Markdown for pasting into a ticket, short enough to read
//! there (under about 60 lines): the verdict first, then what happened
//! (phases, restarts, bursts with their times), the scorecard, the top
//! actions, the key figures per phase and the timeline's key events. No
//! links, no images. Text from the bundle is escaped so it cannot turn
//! into Markdown or HTML.

use std::fmt::Write as _;

use vllm_lens_model::report::*;
use vllm_lens_model::text::{bucket_cell, num};
use vllm_lens_model::time::{format_duration, format_rfc3339};

use crate::words;

/// Escapes Markdown and HTML syntax in text that came from the bundle.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '<' | '>' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '&' => out.push_str("&amp;"),
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn val(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(v) if unit.is_empty() => num(v),
        Some(v) => format!("{} {}", num(v), escape(unit)),
        None => "missing".into(),
    }
}

/// Most recommendations, narrative lines and timeline events shown.
const MAX_RECS: usize = 4;
const MAX_NARRATIVE: usize = 6;
const MAX_EVENTS: usize = 5;

/// Key figures of one column (a phase or the whole capture).
fn key_figures(s: &Summary, in_flight: Option<f64>, cpu: bool) -> Vec<String> {
    // A CPU server has no GPU to read: its GPU figures do not apply.
    let gpu_val = |v: Option<f64>, unit: &str| {
        if cpu && v.is_none() {
            "n/a (CPU)".to_string()
        } else {
            val(v, unit)
        }
    };
    let l = &s.latency;
    let e = &s.efficiency;
    let g = &s.gpu;
    let bucket = |b: Option<Bounds>| b.map_or("missing".into(), |b| bucket_cell(b.low, b.high));
    vec![
        in_flight.map_or("missing".into(), |x| num(x.round())),
        val(s.workload.requests_per_min, ""),
        bucket(l.bounds.ttft_p95_ms),
        bucket(l.bounds.itl_p95_ms),
        format!(
            "{} / {} / {}",
            val(l.queue_ms, "ms"),
            val(l.prefill_ms, "ms"),
            val(l.decode_ms, "ms")
        ),
        val(e.gen_tokens_per_sec, ""),
        val(e.kv_cache_pct, "%"),
        if cpu && g.tensor_active_pct_avg.is_none() && g.dram_active_pct_avg.is_none() {
            "n/a (CPU)".to_string()
        } else {
            format!(
                "{} / {}",
                val(g.tensor_active_pct_avg, "%"),
                val(g.dram_active_pct_avg, "%")
            )
        },
        gpu_val(s.memory.tokens_per_joule, ""),
        val(s.outcomes.error_abort_pct, "%"),
    ]
}

const FIGURE_NAMES: [&str; 10] = [
    "requests in flight (mean)",
    "finished requests/min",
    "TTFT p95 (bucket)",
    "inter-token p95 (bucket)",
    "queue / prefill / decode (mean)",
    "generated tokens/s",
    "KV cache (max)",
    "tensor / DRAM active (mean)",
    "generated tokens per joule",
    "engine errors + aborts",
];

/// The Markdown summary.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let b = &r.bundle;
    let d = &r.deployment;
    let _ = writeln!(
        o,
        "## vLLM Lens: {} on {}: {}\n",
        escape(d.model.as_deref().unwrap_or("vLLM")),
        escape(&d.hardware()),
        words::verdict_word(r.verdict.status)
    );
    let _ = writeln!(o, "**{}**\n", escape(&r.verdict.headline));
    let captured = match (b.start_ms, b.end_ms) {
        (Some(a), Some(z)) => format!(
            "{} → {} ({}), {}",
            format_rfc3339(a),
            format_rfc3339(z),
            format_duration(z - a),
            match b.pushdown_ms {
                Some(ms) => format!("pushed down to {} s windows", num(ms as f64 / 1000.0)),
                None => format!(
                    "every {} s",
                    b.scrape_interval_ms
                        .map_or("?".into(), |ms| num(ms as f64 / 1000.0))
                ),
            }
        ),
        _ => "time unknown".into(),
    };
    let _ = writeln!(
        o,
        "Bundle {}{}, {captured}; vLLM {}; vLLM Lens {}.\n",
        escape(&b.name),
        b.sha256.as_deref().map_or(String::new(), |h| format!(
            " (SHA-256 {})",
            escape(h.get(..12).unwrap_or(h))
        )),
        escape(&d.version_text()),
        escape(&r.tool_version)
    );
    if !r.verdict.narrative.is_empty() {
        let _ = writeln!(o, "### What happened\n");
        for line in r.verdict.narrative.iter().take(MAX_NARRATIVE) {
            let _ = writeln!(o, "- {}", escape(line));
        }
        let _ = writeln!(o);
    }
    look_next(&mut o, r);
    scorecard(&mut o, r);
    what_to_do(&mut o, r);
    figures_table(&mut o, r);
    capacity(&mut o, r);
    forecast(&mut o, r);
    closing(&mut o, r);
    o
}

/// Where to look next, one line each (what a recommendation already says
/// is named, not repeated), and the guide's follow-ups in one line (their
/// figures are in the HTML report and the JSON).
fn look_next(o: &mut String, r: &Report) {
    let v = &r.verdict;
    if !v.look_next.is_empty() {
        let _ = writeln!(o, "### Where to look next\n");
        for (i, x) in v.look_next.iter().enumerate() {
            // Named, not repeated, only where What to do shows the
            // recommendation that says it (a partly truncated workload has
            // no raise_max_tokens).
            let shown = |ids: &[&str]| {
                r.recommendations
                    .iter()
                    .take(MAX_RECS)
                    .any(|rec| ids.contains(&rec.id.as_str()))
            };
            let said = match x.id {
                LookNextId::ClientMaxTokens => shown(&["raise_max_tokens"]),
                LookNextId::PromptPrefix => {
                    shown(&["standardise_prompt_prefix", "shrink_block_size"])
                }
                _ => false,
            };
            if said {
                let _ = writeln!(o, "{}. **{}** (see What to do)", i + 1, escape(&x.title));
            } else {
                let _ = writeln!(
                    o,
                    "{}. **{}**: {}",
                    i + 1,
                    escape(&x.title),
                    escape(&x.evidence)
                );
            }
        }
        let _ = writeln!(o);
    }
    if !v.follow_ups.is_empty() {
        let titles: Vec<String> = v.follow_ups.iter().map(|x| escape(&x.title)).collect();
        let _ = writeln!(
            o,
            "The tuning guide's follow-ups this capture supports (each with its figures in the HTML report): {}.\n",
            titles.join("; ")
        );
    }
}

/// The scorecard's table.
fn scorecard(o: &mut String, r: &Report) {
    let _ = writeln!(o, "### Scorecard\n");
    let _ = writeln!(o, "| objective | verdict | measured | headroom | minutes |");
    let _ = writeln!(o, "|---|---|---|---|---|");
    for s in &r.slo {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            escape(&s.title),
            words::status_mark(s.status),
            escape(&words::slo_value(s)),
            escape(&words::slo_headroom(s)),
            escape(&words::slo_windows(s))
        );
    }
}

/// The recommendations, then the alerts.
fn what_to_do(o: &mut String, r: &Report) {
    let _ = writeln!(o, "\n### What to do\n");
    if r.recommendations.is_empty() {
        let _ = writeln!(o, "{}", escape(&words::no_recommendation(r)));
    }
    for rec in r.recommendations.iter().take(MAX_RECS) {
        let addresses: Vec<&str> = rec.addresses.iter().map(|a| a.as_str()).collect();
        let turns = if rec.levers.is_empty() {
            String::new()
        } else {
            format!("; levers: {}", words::levers(r, &rec.levers))
        };
        let _ = writeln!(
            o,
            "{}. **{}** (for {}; {} confidence{}). {}",
            rec.rank,
            escape(&rec.title),
            escape(&addresses.join(", ")),
            words::confidence_word(rec.confidence),
            escape(&turns),
            escape(&rec.action)
        );
        let _ = writeln!(o, "   - Why: {}", escape(&rec.rationale));
        if let Some(p) = &rec.predicted {
            let _ = writeln!(o, "   - Forecast: {}", escape(p));
        }
    }
    if r.recommendations.len() > MAX_RECS {
        let _ = writeln!(
            o,
            "\n({} more in the HTML report.)",
            r.recommendations.len() - MAX_RECS
        );
    }
    if !r.alerts.is_empty() {
        let _ = writeln!(
            o,
            "\nWhat to watch (checked against this capture): {}.",
            escape(&words::alerts_line(&r.alerts))
        );
    }
}

/// The key figures, per level phase when there are several.
fn figures_table(o: &mut String, r: &Report) {
    // Key figures: per level phase (steady or overload) when there are
    // several.
    let steady: Vec<&Phase> = r
        .phases
        .iter()
        .filter(|p| matches!(p.kind, PhaseKind::Steady | PhaseKind::Overload))
        .collect();
    let cpu = r.deployment.gpus == 0 && r.deployment.device.as_deref() == Some("cpu");
    let columns: Vec<(String, Vec<String>)> = if steady.len() > 1 {
        steady
            .iter()
            .map(|p| {
                (
                    words::phase_label(p),
                    key_figures(&p.figures, p.in_flight_avg, cpu),
                )
            })
            .collect()
    } else {
        // Running + waiting, averaged over the whole capture.
        let e = &r.summary.efficiency;
        let in_flight = e
            .running_avg
            .zip(e.waiting_avg)
            .map(|(run, wait)| run + wait)
            .or_else(|| {
                r.phases
                    .first()
                    .filter(|_| r.phases.len() == 1)
                    .and_then(|p| p.in_flight_avg)
            });
        vec![(
            "whole capture".to_string(),
            key_figures(&r.summary, in_flight, cpu),
        )]
    };
    let _ = writeln!(o, "\n### Key figures\n");
    let _ = writeln!(
        o,
        "| figure | {} |",
        columns
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(o, "|---|{}", "---|".repeat(columns.len()));
    for (i, name) in FIGURE_NAMES.iter().enumerate() {
        let _ = writeln!(
            o,
            "| {name} | {} |",
            columns
                .iter()
                .map(|c| c.1[i].as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
}

/// Capacity, in one line.
fn capacity(o: &mut String, r: &Report) {
    // Capacity, in one line.
    let c = &r.capacity;
    let mut cap: Vec<String> = Vec::new();
    if let Some(n) = c.kv_requests {
        cap.push(format!(
            "KV cache {}{} requests at once at their full observed length",
            if c.kv_estimated { "≈ " } else { "" },
            num(n)
        ));
    }
    let p = &c.provisioning;
    if p.status != vllm_lens_model::ProvisioningStatus::CannotTell {
        cap.push(format!(
            "provisioning: {}{}",
            match p.status {
                vllm_lens_model::ProvisioningStatus::Over => "over",
                vllm_lens_model::ProvisioningStatus::Fits => "fits",
                _ => "under",
            },
            p.headroom_x.map_or(String::new(), |x| format!(
                " ({x:.1}× headroom at the peak load)"
            ))
        ));
        for g in &p.give_back {
            cap.push(format!("could give back: {}", g.title));
        }
    }
    cap.push(format!(
        "binds first: {}",
        c.binding_limits
            .iter()
            .map(|b| b.words())
            .collect::<Vec<_>>()
            .join(" and ")
    ));
    if let Some(f) = &c.floor {
        cap.push(format!(
            "decode floor {} ms per step{}",
            num(f.ms),
            if f.infeasible.is_empty() {
                String::new()
            } else {
                format!(
                    ", above the {} ms inter-token objective: out of reach with these weights on this hardware",
                    num(r.settings.slo.itl_p95_ms)
                )
            }
        ));
    }
    if let Some(rj) = c.rejections.as_ref().filter(|r| r.total > 0.0) {
        cap.push(format!(
            "{} requests turned away by the queue limits (all replicas)",
            num(rj.total)
        ));
    }
    let binds: Vec<String> = c
        .limits
        .iter()
        .filter(|l| l.binds && l.limit != BindingLimit::NoneSeen)
        .map(|l| {
            format!(
                " {}: {}.",
                vllm_lens_model::text::capitalise(l.limit.words()),
                l.evidence
            )
        })
        .collect();
    let told: Vec<String> = r
        .deployment
        .configuration
        .iter()
        .filter(|c| c.key)
        .map(|c| {
            format!(
                "{} {}{}",
                c.flag.as_deref().unwrap_or(&c.name),
                c.value.as_deref().unwrap_or("missing"),
                c.source
                    .map_or(String::new(), |s| format!(" ({})", s.describe()))
            )
        })
        .collect();
    let _ = writeln!(
        o,
        "\nCapacity per replica: {}.{}{}",
        escape(&cap.join("; ")),
        escape(&binds.concat()),
        if told.is_empty() {
            String::new()
        } else {
            format!(" What the server was told: {}.", escape(&told.join("; ")))
        }
    );
}

/// The forecast: its status and back-test in one line, then one row per
/// scenario predicted (the full model is in the HTML report and
/// `vllm-lens forecast --md`).
fn forecast(o: &mut String, r: &Report) {
    use vllm_lens_model::forecast::ForecastStatus;
    let f = &r.forecast;
    if f.explanation.is_empty() {
        return;
    }
    let e = &f.calibration.error;
    let held = format!(
        "back-test on {} window{}: TTFT {} of {}, inter-token {} of {}, load {} of {}",
        e.windows,
        if e.windows == 1 { "" } else { "s" },
        e.ttft_hits,
        e.ttft_windows,
        e.itl_hits,
        e.itl_windows,
        e.load_hits,
        e.windows
    );
    match f.status {
        ForecastStatus::CannotForecast => {
            let _ = writeln!(o, "\n### Forecast\n\n{}", escape(&f.explanation));
            return;
        }
        ForecastStatus::NotCalibrated => {
            let _ = writeln!(
                o,
                "\n### Forecast (not calibrated: nothing is predicted)\n\nThe {held}; missed: {}.",
                escape(&f.calibration.misses.join("; "))
            );
            return;
        }
        ForecastStatus::Calibrated => {}
    }
    let _ = writeln!(
        o,
        "\n### Forecast (calibrated, {held})\n\n| Scenario | Predicted | Largest load meeting the latency objectives |\n|---|---|---|"
    );
    for s in &f.scenarios {
        let row = f.sweep.iter().find(|w| w.scenario == s.id);
        let summary = s.summary.strip_prefix("predicted ").unwrap_or(&s.summary);
        let _ = writeln!(
            o,
            "| {} | {} | {} |",
            escape(&s.title),
            escape(summary),
            row.map_or("–".into(), |w| escape(&crate::forecast::sweep_short(w)))
        );
    }
    for w in f
        .sweep
        .iter()
        .filter(|w| !f.scenarios.iter().any(|s| s.id == w.scenario))
    {
        let _ = writeln!(
            o,
            "| {} | (the sweep only) | {} |",
            escape(&w.title),
            escape(&crate::forecast::sweep_short(w))
        );
    }
}

/// The timeline's key events and the data-quality line.
fn closing(o: &mut String, r: &Report) {
    // The timeline's key events.
    let key: Vec<&TimelineEvent> = r
        .timeline
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                TimelineKind::LoadStep
                    | TimelineKind::Restart
                    | TimelineKind::ErrorBurst
                    | TimelineKind::SloBreached
                    | TimelineKind::WaitingStarted
                    | TimelineKind::PreemptionsStarted
                    | TimelineKind::KvAbove90
                    | TimelineKind::ScrapeGap
                    | TimelineKind::Xid
                    | TimelineKind::GpuFault
            )
        })
        .collect();
    if !key.is_empty() {
        let _ = writeln!(o, "\n### Timeline (UTC)\n");
        for e in key.iter().take(MAX_EVENTS) {
            let _ = writeln!(o, "- {} {}", words::hhmm(e.time_ms), escape(&e.description));
        }
        if key.len() > MAX_EVENTS {
            let _ = writeln!(o, "- … {} more in the HTML report", key.len() - MAX_EVENTS);
        }
    }
    let _ = writeln!(
        o,
        "\n_Data quality: {}; {} note(s). Figures are whole-window; quantiles are the histogram bucket they lie in. Full report: the HTML file made from the same bundle._",
        escape(&r.data_quality.vllm_version),
        r.data_quality.notes.len()
    );
}
