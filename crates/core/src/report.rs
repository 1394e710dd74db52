//! The report's gist as plain text for a terminal: the verdict first, what
//! happened, the SLO scorecard, what to do, and each analysis' findings.
//! (The full report is HTML, Markdown or JSON.)

use std::fmt::Write as _;

use vllm_lens_model::{Report, Severity};
use vllm_lens_render::words;

use crate::time::{format_duration, format_rfc3339};

/// The report as text.
pub fn to_text(r: &Report) -> String {
    let mut out = String::new();
    let b = &r.bundle;
    let d = &r.deployment;
    let _ = writeln!(
        out,
        "{}  {}",
        words::verdict_word(r.verdict.status),
        r.verdict.headline
    );
    let _ = writeln!(out, "\nvLLM Lens report: {}", b.name);
    let _ = writeln!(
        out,
        "  {} from {}, {}; vLLM {}, model {}, {}",
        b.duration_ms.map_or("?".into(), format_duration),
        b.start_ms.map_or("?".into(), format_rfc3339),
        match (b.pushdown_ms, b.scrape_interval_ms) {
            (Some(ms), _) => format!("pushed down to {:.0} s windows", ms as f64 / 1000.0),
            (None, Some(ms)) => format!("every {:.0} s", ms as f64 / 1000.0),
            (None, None) => "?".into(),
        },
        d.version_text(),
        d.model.as_deref().unwrap_or("?"),
        d.hardware(),
    );
    if !r.verdict.narrative.is_empty() {
        let _ = writeln!(out, "\nWhat happened");
        for line in &r.verdict.narrative {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out, "\nSLO scorecard");
    for s in &r.slo {
        let windows = words::slo_windows(s);
        let _ = writeln!(
            out,
            "  {:<14} {:<46} {}; headroom {}{}",
            words::status_word(s.status),
            s.title,
            words::slo_value(s),
            words::slo_headroom(s),
            if windows.is_empty() {
                String::new()
            } else {
                format!(" ({windows})")
            }
        );
    }
    for s in r.slo.iter().filter(|s| !s.breakdown.is_empty()) {
        let parts: Vec<String> = s
            .breakdown
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e.label,
                    e.value.map_or("missing".into(), |v| format!(
                        "{}{}",
                        vllm_lens_model::text::num(v),
                        if e.unit.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", e.unit)
                        }
                    ))
                )
            })
            .collect();
        let _ = writeln!(out, "    {}: {}", s.id, parts.join("; "));
    }
    let _ = writeln!(out, "\nWhat to do");
    if r.recommendations.is_empty() {
        let _ = writeln!(
            out,
            "  nothing needs to change: no rule's evidence is present"
        );
    }
    for rec in &r.recommendations {
        let addresses: Vec<&str> = rec.addresses.iter().map(|a| a.as_str()).collect();
        let _ = writeln!(
            out,
            "  {}. {} (for {}; {} confidence)",
            rec.rank,
            rec.title,
            addresses.join(", "),
            words::confidence_word(rec.confidence)
        );
        let _ = writeln!(out, "     {}", rec.action);
    }
    if !r.alerts.is_empty() {
        let _ = writeln!(
            out,
            "\nWhat to watch (the HTML and JSON hold the rules)\n  {}",
            words::alerts_line(&r.alerts).replace("; ", "\n  ")
        );
    }
    for a in &r.analyses {
        let _ = writeln!(out, "\n{}", a.title);
        for f in &a.findings {
            let tag = match f.severity {
                Severity::Fail => "fail",
                Severity::Warn => "warn",
                Severity::Pass => "pass",
                Severity::Info => "info",
                Severity::NotApplicable => "n/a",
            };
            let _ = writeln!(out, "  [{tag}] {}", f.title);
        }
    }
    if !r.timeline.is_empty() {
        let _ = writeln!(out, "\nTimeline");
        for e in &r.timeline {
            let _ = writeln!(out, "  {}  {}", format_rfc3339(e.time_ms), e.description);
        }
    }
    let _ = writeln!(
        out,
        "\nData quality: {}; {} note(s), {} reset(s), {} unreadable line(s) or file(s)",
        r.data_quality.vllm_version,
        r.data_quality.notes.len(),
        r.data_quality.resets,
        r.data_quality.diagnostics
    );
    out
}
