//! The report as Markdown for pasting into a ticket: header facts, the SLO
//! scorecard, the top recommendations with their evidence, and the key
//! findings and figures. No links, no images. Text from the bundle is
//! escaped so it cannot turn into Markdown or HTML.

use std::fmt::Write as _;

use vllm_lens_analysis::model::*;
use vllm_lens_analysis::time::{format_duration, format_rfc3339};

use crate::html::num;

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

/// The Markdown summary.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let b = &r.bundle;
    let d = &r.deployment;
    let _ = writeln!(
        o,
        "## vLLM Lens report: {} on {} × {}\n",
        escape(d.model.as_deref().unwrap_or("vLLM")),
        d.gpus,
        escape(d.gpu_model.as_deref().unwrap_or("GPU"))
    );
    let _ = writeln!(o, "- Bundle: {}", escape(&b.name));
    if let Some(h) = &b.sha256 {
        let _ = writeln!(o, "- SHA-256: {}", escape(h));
    }
    if let (Some(a), Some(z)) = (b.start_ms, b.end_ms) {
        let _ = writeln!(
            o,
            "- Captured: {} → {} ({}), every {} s",
            format_rfc3339(a),
            format_rfc3339(z),
            format_duration(z - a),
            b.scrape_interval_ms
                .map_or("?".into(), |ms| num(ms as f64 / 1000.0))
        );
    }
    let _ = writeln!(
        o,
        "- vLLM {} ({} engine, inferred from the data); tool: vLLM Lens {}\n",
        escape(d.vllm_versions.as_deref().unwrap_or("version unknown")),
        escape(&d.vllm_engine.to_string()),
        escape(&r.tool_version)
    );
    let _ = writeln!(o, "### SLO scorecard\n");
    let _ = writeln!(o, "| SLO | verdict | value | headroom |");
    let _ = writeln!(o, "|---|---|---|---|");
    for s in &r.slo {
        let verdict = match s.status {
            SloStatus::Pass => "✔ pass",
            SloStatus::Fail => "✖ FAIL",
            SloStatus::NotExercised => "– not exercised",
        };
        let _ = writeln!(
            o,
            "| {} | {verdict} | {} | {} |",
            escape(&s.title),
            val(s.value, &s.unit),
            val(s.headroom, &s.unit)
        );
    }
    let _ = writeln!(o, "\n### What to do\n");
    if r.recommendations.is_empty() {
        let _ = writeln!(o, "Nothing: no rule found its evidence in this capture.");
    }
    for rec in r.recommendations.iter().take(5) {
        let conf = match rec.confidence {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        };
        let _ = writeln!(
            o,
            "{}. **{}** ({conf} confidence)",
            rec.rank,
            escape(&rec.title)
        );
        let _ = writeln!(o, "   - Why: {}", escape(&rec.rationale));
        let _ = writeln!(o, "   - Do: {}", escape(&rec.action));
        for e in &rec.evidence {
            let _ = writeln!(
                o,
                "   - Evidence: {} = {}{}",
                escape(&e.label),
                val(e.value, &e.unit),
                if e.metrics.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", escape(&e.metrics.join(", ")))
                }
            );
        }
    }
    let _ = writeln!(o, "\n### Findings\n");
    for a in &r.analyses {
        let _ = writeln!(o, "**{}**\n", escape(&a.title));
        for f in &a.findings {
            let tag = match f.severity {
                Severity::Fail => "✖ fail",
                Severity::Warn => "▲ warn",
                Severity::Pass => "✔ pass",
                Severity::Info => "ℹ info",
                Severity::NotApplicable => "– n/a",
            };
            let _ = writeln!(o, "- {tag}: {}", escape(&f.title));
        }
        let _ = writeln!(o);
    }
    let s = &r.summary;
    let _ = writeln!(o, "### Key figures (whole capture)\n");
    let _ = writeln!(o, "| figure | value |");
    let _ = writeln!(o, "|---|---|");
    let rows: [(&str, Option<f64>, &str); 14] = [
        ("queue / prefill / decode (avg)", None, ""),
        ("TTFT p95", s.latency.ttft_p95_ms, "ms"),
        ("inter-token p95", s.latency.itl_p95_ms, "ms"),
        ("decode share", s.latency.decode_share_pct, "%"),
        ("generated tokens/s", s.efficiency.gen_tokens_per_sec, ""),
        ("prefix-cache hit", s.efficiency.prefix_cache_hit_pct, "%"),
        ("running (max)", s.efficiency.running, ""),
        ("waiting (max)", s.efficiency.waiting, ""),
        ("KV pool (max)", s.efficiency.kv_cache_pct, "%"),
        ("requests/min", s.workload.requests_per_min, ""),
        ("error + abort", s.outcomes.error_abort_pct, "%"),
        ("GPU util / tensor / DRAM (mean)", None, ""),
        ("VRAM used (max)", s.memory.vram_used_pct, "%"),
        ("tokens per joule", s.memory.tokens_per_joule, ""),
    ];
    for (label, v, unit) in rows {
        let text = match label {
            "queue / prefill / decode (avg)" => format!(
                "{} / {} / {}",
                val(s.latency.queue_ms, "ms"),
                val(s.latency.prefill_ms, "ms"),
                val(s.latency.decode_ms, "ms")
            ),
            "GPU util / tensor / DRAM (mean)" => format!(
                "{} / {} / {}",
                val(s.gpu.gpu_util_pct_avg, "%"),
                val(s.gpu.tensor_active_pct_avg, "%"),
                val(s.gpu.dram_active_pct_avg, "%")
            ),
            _ => val(v, unit),
        };
        let _ = writeln!(o, "| {label} | {text} |");
    }
    let _ = writeln!(
        o,
        "\n_Data quality: {}; {} note(s). Full report: the HTML file made from the same bundle._",
        escape(&r.data_quality.vllm_version),
        r.data_quality.notes.len()
    );
    o
}
