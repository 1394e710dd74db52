//! The before/after comparison as one self-contained HTML page, Markdown
//! and JSON: the comparability guard first, then both scorecards, every key
//! figure's change and direction, the main series overlaid on a relative
//! time axis, and the recommendations that appeared or went away.

use std::fmt::Write as _;

use maud::{DOCTYPE, Markup, html};
use vllm_lens_model::compare::{Comparison, Direction, Fairness, Side};
use vllm_lens_model::time::{format_duration, format_rfc3339};
use vllm_lens_model::{RecId, SloStatus};

use crate::embed;
use crate::html::{num, page_head};
use crate::md::escape;
use crate::svg::{self, Chart, Kind, Series};

fn fairness_words(f: Fairness) -> (&'static str, &'static str) {
    match f {
        Fairness::Comparable => ("pass", "Comparable: the same model, hardware and workload"),
        Fairness::Weak => (
            "warn",
            "A weak comparison: something besides the change differs",
        ),
        Fairness::NotComparable => ("fail", "Not comparable: these captures cannot be compared"),
    }
}

fn direction_words(d: Direction) -> (&'static str, &'static str) {
    match d {
        Direction::Better => ("pass", "▲ better"),
        Direction::Worse => ("fail", "▼ worse"),
        Direction::NoClearChange => ("info", "= no clear change"),
        Direction::Missing => ("not_applicable", "– missing"),
    }
}

fn slo_word(s: SloStatus) -> &'static str {
    crate::words::status_mark(s)
}

fn ids(v: &[RecId]) -> String {
    v.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ")
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or("missing".into(), |v| {
        format!("{} {}", num(v), escape(unit))
            .trim_end()
            .to_string()
    })
}

fn side_facts(s: &Side) -> Markup {
    html! {
        div.mono { (s.bundle) }
        div { (s.model.as_deref().unwrap_or("?")) " on " (s.gpu) }
        div { "vLLM " (s.vllm_versions.as_deref().unwrap_or("?")) }
        div { (s.start_ms.map_or("?".into(), format_rfc3339)) ", " (s.duration_ms.map_or("?".into(), format_duration)) }
    }
}

/// The comparison page.
pub fn html(c: &Comparison) -> String {
    let (class, headline) = fairness_words(c.fairness);
    let n = c
        .overlays
        .iter()
        .map(|o| o.before.len().max(o.after.len()))
        .max()
        .unwrap_or(0);
    let times: Vec<i64> = (0..n as i64).map(|i| i * c.window_ms).collect();
    let pad = |v: &Vec<Option<f64>>| {
        let mut v = v.clone();
        v.resize(n, None);
        v
    };
    let json = serde_json::to_string(c).expect("the comparison serialises");
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            (page_head("vLLM Lens: before and after", &c.tool_version))
            body {
                main {
                    header {
                        div.brand { "vLLM Lens · before and after" }
                        h1 { "Did the change help?" }
                        dl.meta {
                            dt { "Before" } dd { (side_facts(&c.before)) }
                            dt { "After" } dd { (side_facts(&c.after)) }
                            dt { "Tool" } dd { "vLLM Lens " (c.tool_version) }
                        }
                    }
                    section id="fairness" {
                        h2 { "Is the comparison fair?" }
                        ul.findings {
                            li class=(class) {
                                span.ftitle { (headline) }
                                @if c.reasons.is_empty() {
                                    p.explain { "Model, hardware, vLLM release, scrape interval, prompt lengths and concurrency match: differences below are the change's." }
                                }
                                @for r in &c.reasons { p.explain { (r) } }
                            }
                        }
                    }
                    section id="scorecards" {
                        h2 { "SLO scorecards" }
                        table {
                            thead { tr { th.text { "SLO" } th { "before" } th { "after" } } }
                            tbody {
                                @for (b, a) in c.before.slo.iter().zip(&c.after.slo) {
                                    tr {
                                        td.text.mono { (b.0) }
                                        td { (slo_word(b.1)) " · " (opt(b.2, &b.3)) }
                                        td { (slo_word(a.1)) " · " (opt(a.2, &a.3)) }
                                    }
                                }
                            }
                        }
                    }
                    section id="figures" {
                        h2 { "Key figures" }
                        p.caveat { "A change counts as better or worse only when the per-window values of the two captures do not overlap; otherwise it is within their own variation." }
                        div.scroll {
                            table {
                                thead { tr { th.text { "figure" } th { "before" } th { "after" } th { "change" } th.text { "verdict" } th { "before windows" } th { "after windows" } } }
                                tbody {
                                    @for f in &c.figures {
                                        @let (cls, word) = direction_words(f.direction);
                                        tr {
                                            td.text { (f.label) }
                                            td { (opt(f.before, &f.unit)) }
                                            td { (opt(f.after, &f.unit)) }
                                            td { (f.change_pct.map_or("—".into(), |p| format!("{p:+.1} %"))) }
                                            td.text { span class=(format!("sev {cls}")) { (word) } }
                                            td { (f.before_range.map_or("—".into(), |r| format!("{} – {}", num(r[0]), num(r[1])))) }
                                            td { (f.after_range.map_or("—".into(), |r| format!("{} – {}", num(r[0]), num(r[1])))) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    section id="overlays" {
                        h2 { "Over time, from each capture's start" }
                        div.charts {
                            @for o in &c.overlays {
                                @match svg::render(&Chart {
                                    title: o.title.clone(),
                                    unit: o.unit.clone(),
                                    y_max: None,
                                    times: times.clone(),
                                    window_ms: c.window_ms,
                                    series: vec![
                                        Series { name: "before".into(), values: pad(&o.before), kind: Kind::Dashed, color: 1 },
                                        Series { name: "after".into(), values: pad(&o.after), kind: Kind::Line, color: 0 },
                                    ],
                                    thresholds: vec![],
                                }) {
                                    Some(m) => (m),
                                    None => p.nodata { (o.title) ": no data." },
                                }
                            }
                        }
                        p.note { "The time axis counts from each capture's first window (00:00)." }
                    }
                    section id="recommendations" {
                        h2 { "Recommendations" }
                        p { "Appeared after the change: "
                            @if c.recommendations_appeared.is_empty() { "none" } @else { span.mono { (ids(&c.recommendations_appeared)) } } }
                        p { "Went away: "
                            @if c.recommendations_gone.is_empty() { "none" } @else { span.mono { (ids(&c.recommendations_gone)) } } }
                    }
                    footer { "Made by vLLM Lens " (c.tool_version) " on this machine; nothing was sent anywhere." }
                }
                (embed::script_json(&json))
            }
        }
    };
    page.into_string()
}

/// The comparison as Markdown.
pub fn markdown(c: &Comparison) -> String {
    let mut o = String::new();
    let (_, headline) = fairness_words(c.fairness);
    let _ = writeln!(o, "## vLLM Lens: before and after\n");
    let _ = writeln!(
        o,
        "- Before: {} ({})",
        escape(&c.before.bundle),
        escape(c.before.model.as_deref().unwrap_or("?"))
    );
    let _ = writeln!(
        o,
        "- After: {} ({})\n",
        escape(&c.after.bundle),
        escape(c.after.model.as_deref().unwrap_or("?"))
    );
    let _ = writeln!(o, "**{headline}**\n");
    for r in &c.reasons {
        let _ = writeln!(o, "- {}", escape(r));
    }
    let _ = writeln!(o, "\n| figure | before | after | change | verdict |");
    let _ = writeln!(o, "|---|---|---|---|---|");
    for f in &c.figures {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            escape(&f.label),
            opt(f.before, &f.unit),
            opt(f.after, &f.unit),
            f.change_pct.map_or("—".into(), |p| format!("{p:+.1} %")),
            direction_words(f.direction).1
        );
    }
    let _ = writeln!(
        o,
        "\nRecommendations appeared: {}; went away: {}.",
        if c.recommendations_appeared.is_empty() {
            "none".into()
        } else {
            escape(&ids(&c.recommendations_appeared))
        },
        if c.recommendations_gone.is_empty() {
            "none".into()
        } else {
            escape(&ids(&c.recommendations_gone))
        }
    );
    o
}

/// The comparison as pretty JSON.
pub fn json(c: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("the comparison serialises");
    s.push('\n');
    s
}
