//! The report's gist as plain text for a terminal: the SLO scorecard, what
//! to do, and each analysis' findings. (The full report is HTML, Markdown
//! or JSON.)

use std::fmt::Write as _;

use vllm_lens_analysis::model::{Report, Severity, SloStatus};

use crate::time::{format_duration, format_rfc3339};

fn fmt_value(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(v) if v.abs() >= 100.0 => format!("{v:.0} {unit}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1} {unit}"),
        Some(v) => format!("{v:.2} {unit}"),
        None => "missing".into(),
    }
}

/// The report as text.
pub fn to_text(r: &Report) -> String {
    let mut out = String::new();
    let b = &r.bundle;
    let d = &r.deployment;
    let _ = writeln!(out, "vLLM Lens report: {}", b.name);
    let _ = writeln!(
        out,
        "  {} from {}, {}; vLLM {} ({}), model {}, {} × {}",
        b.duration_ms.map_or("?".into(), format_duration),
        b.start_ms.map_or("?".into(), format_rfc3339),
        b.scrape_interval_ms.map_or("?".into(), |ms| format!(
            "every {:.0} s",
            ms as f64 / 1000.0
        )),
        d.vllm_versions.as_deref().unwrap_or("version unknown"),
        d.vllm_engine,
        d.model.as_deref().unwrap_or("?"),
        d.gpus,
        d.gpu_model.as_deref().unwrap_or("GPU ?"),
    );
    let _ = writeln!(out, "\nSLO scorecard");
    for s in &r.slo {
        let verdict = match s.status {
            SloStatus::Pass => "PASS",
            SloStatus::Fail => "FAIL",
            SloStatus::NotExercised => "not exercised",
        };
        let _ = writeln!(
            out,
            "  {:<14} {:<46} value {}, headroom {}",
            verdict,
            s.title,
            fmt_value(s.value, &s.unit),
            fmt_value(s.headroom, &s.unit)
        );
    }
    let _ = writeln!(out, "\nWhat to do");
    if r.recommendations.is_empty() {
        let _ = writeln!(out, "  nothing: no rule's evidence is present");
    }
    for rec in &r.recommendations {
        let _ = writeln!(
            out,
            "  {}. {} ({:?} confidence)",
            rec.rank, rec.title, rec.confidence
        );
        let _ = writeln!(out, "     {}", rec.action);
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
