//! The report as one self-contained HTML file: inline CSS, inline SVG
//! charts, no script, no external reference, a strict Content-Security-
//! Policy, and the report's JSON embedded so the tool can read the file
//! back. Laid out like a Lighthouse report: header, SLO scorecard, what to
//! do, the six steps, timeline, data quality, appendix.
//!
//! Every string from the bundle goes through maud, which escapes it; the
//! only unescaped text is our own stylesheet and the embedded JSON, which
//! [`crate::embed`] escapes for a `<script>` element.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use vllm_lens_analysis::model::*;
use vllm_lens_analysis::time::{format_duration, format_rfc3339};

use crate::embed;
use crate::svg::{self, Chart, Kind, Series, Threshold};

/// The page's Content-Security-Policy: nothing may load, no script may run;
/// inline styles and `data:` images only.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// The report's stylesheet (also used by the comparison page).
pub(crate) const STYLE: &str = include_str!("style.css");

/// A figure for humans: 3 significant digits, no needless decimals.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        return "—".into();
    }
    if a >= 1000.0 {
        let s = format!("{v:.0}");
        // Thousands separators.
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn val(v: Option<f64>, unit: &str) -> Markup {
    html! {
        @match v {
            Some(v) => { (num(v)) @if !unit.is_empty() { " " (unit) } }
            None => span.missing title="not in this capture" { "missing" }
        }
    }
}

fn cell(v: Option<f64>) -> Markup {
    html! {
        @match v {
            Some(v) => td { (num(v)) }
            None => td.missing title="missing" { "—" }
        }
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Fail => "fail",
        Severity::Warn => "warn",
        Severity::Pass => "pass",
        Severity::Info => "info",
        Severity::NotApplicable => "not_applicable",
    }
}

fn severity_label(s: Severity) -> &'static str {
    match s {
        Severity::Fail => "✖ fail",
        Severity::Warn => "▲ warn",
        Severity::Pass => "✔ pass",
        Severity::Info => "ℹ info",
        Severity::NotApplicable => "– n/a",
    }
}

fn evidence(ev: &[Evidence]) -> Markup {
    html! {
        @for e in ev {
            div.evidence {
                (e.label) ": " strong { (val(e.value, &e.unit)) }
                @if !e.metrics.is_empty() {
                    " · " span.m { (e.metrics.join(", ")) }
                }
                @if !e.windows.is_empty() && e.windows.len() <= 6 {
                    " · at " (e.windows.iter().map(|w| format_rfc3339(*w)).collect::<Vec<_>>().join(", "))
                } @else if !e.windows.is_empty() {
                    " · " (e.windows.len()) " windows from " (format_rfc3339(e.windows[0]))
                }
            }
        }
    }
}

fn header(r: &Report) -> Markup {
    let b = &r.bundle;
    let d = &r.deployment;
    let title = format!(
        "{} on {} × {}",
        d.model.as_deref().unwrap_or("vLLM"),
        d.gpus,
        d.gpu_model.as_deref().unwrap_or("GPU")
    );
    html! {
        header {
            div.brand { "vLLM Lens · tuning report" }
            h1 { (title) }
            dl.meta {
                dt { "Bundle" } dd.mono { (b.name) }
                @if let Some(h) = &b.sha256 { dt { "SHA-256" } dd.mono { (h) } }
                dt { "Time range" } dd {
                    @match (b.start_ms, b.end_ms) {
                        (Some(a), Some(z)) => { (format_rfc3339(a)) " → " (format_rfc3339(z)) }
                        _ => "—",
                    }
                }
                dt { "Duration" } dd { (b.duration_ms.map_or("—".into(), format_duration)) }
                dt { "Scrape interval" } dd { (b.scrape_interval_ms.map_or("—".into(), |ms| format!("{} s", num(ms as f64 / 1000.0)))) }
                dt { "Targets" } dd {
                    @for (i, t) in b.targets.iter().enumerate() {
                        @if i > 0 { ", " }
                        span.mono { (t.name) } " (" (t.kind) ", " (t.scrapes) " scrapes"
                        @if t.failed_scrapes > 0 { ", " (t.failed_scrapes) " failed" }
                        ")"
                    }
                }
                dt { "vLLM" } dd {
                    (d.vllm_versions.as_deref().unwrap_or("version unknown")) " (" (d.vllm_engine) " engine, inferred from the data)"
                    @if let Some(v) = &d.vllm_version_stated { "; manifest says " (v) }
                }
                dt { "Model" } dd.mono { (d.model.as_deref().unwrap_or("—")) }
                dt { "GPU" } dd { (d.gpus) " × " (d.gpu_model.as_deref().unwrap_or("—")) }
                @if d.replicas.len() > 1 { dt { "Replicas" } dd.mono { (d.replicas.join(", ")) } }
                dt { "Windows" } dd { (format_duration(r.settings.window_ms)) ", aligned to the clock (UTC)" }
                dt { "Tool" } dd { "vLLM Lens " (r.tool_version) }
            }
        }
    }
}

fn scorecard(r: &Report) -> Markup {
    html! {
        section id="scorecard" {
            h2 { "SLO scorecard" }
            div.tiles {
                @for s in &r.slo {
                    @let (class, word) = match s.status {
                        SloStatus::Pass => ("pass", "✔ pass"),
                        SloStatus::Fail => ("fail", "✖ fail"),
                        SloStatus::NotExercised => ("not_exercised", "– not exercised"),
                    };
                    div class=(format!("tile {class}")) {
                        div.verdict { (word) }
                        div.value { (val(s.value, &s.unit)) }
                        div.what { (s.title) }
                        div.head {
                            @match s.headroom {
                                Some(h) if h >= 0.0 => { "headroom " (num(h)) " " (s.unit) }
                                Some(h) => { "over by " (num(-h)) " " (s.unit) }
                                None => "no headroom to judge",
                            }
                            @if !s.failing_windows.is_empty() { " · " (s.failing_windows.len()) " failing window(s)" }
                        }
                    }
                }
            }
            details {
                summary { "How the SLOs are judged" }
                ul { @for s in &r.slo { li { strong { (s.title) } ": " (s.explanation) } } }
            }
        }
    }
}

fn recommendations(r: &Report) -> Markup {
    html! {
        section id="what-to-do" {
            h2 { "What to do" }
            @if r.recommendations.is_empty() {
                p { "No recommendation: none of the rules found its evidence in this capture." }
            }
            ol.recs {
                @for rec in &r.recommendations {
                    @let conf = match rec.confidence { Confidence::High => "high", Confidence::Medium => "medium", Confidence::Low => "low" };
                    li {
                        div.rec-title { (rec.title) span class=(format!("badge {conf}")) { (conf) " confidence" } }
                        p.explain { (rec.rationale) }
                        p.action { (rec.action) }
                        p.caveat { "Might be wrong if: " (rec.caveat) }
                        details {
                            summary { "Evidence" @if !rec.snippets.is_empty() { " and snippets" } }
                            (evidence(&rec.evidence))
                            @for s in &rec.snippets {
                                h3 { (s.kind) }
                                pre { (s.text) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn findings(a: &Analysis) -> Markup {
    html! {
        ul.findings {
            @for f in &a.findings {
                li class=(severity_word(f.severity)) {
                    span.sev { (severity_label(f.severity)) }
                    span.ftitle { (f.title) }
                    p.explain { (f.explanation) }
                    (evidence(&f.evidence))
                    @if !f.action.is_empty() { p.action { (f.action) } }
                }
            }
        }
    }
}

/// The fleet's rows of one section.
fn fleet<T>(rows: &[Row<T>]) -> Vec<&Row<T>> {
    rows.iter().filter(|r| r.key.replica == "fleet").collect()
}

fn chart_or_note(c: Chart) -> Markup {
    let title = c.title.clone();
    html! {
        @match svg::render(&c) {
            Some(m) => (m),
            None => p.nodata { (title) ": no data in this capture." },
        }
    }
}

fn series(name: &str, values: Vec<Option<f64>>, kind: Kind, color: usize) -> Series {
    Series {
        name: name.to_string(),
        values,
        kind,
        color,
    }
}

struct Ctx<'a> {
    r: &'a Report,
    times: Vec<i64>,
}

impl Ctx<'_> {
    fn chart(
        &self,
        title: &str,
        unit: &str,
        y_max: Option<f64>,
        series: Vec<Series>,
        thresholds: Vec<Threshold>,
    ) -> Markup {
        chart_or_note(Chart {
            title: title.into(),
            unit: unit.into(),
            y_max,
            times: self.times.clone(),
            window_ms: self.r.settings.window_ms,
            series,
            thresholds,
        })
    }
}

/// Most rows a per-window table shows; longer captures are grouped.
const MAX_TABLE_ROWS: usize = 360;

fn table(head: &[&str], rows: Vec<(i64, Vec<Option<f64>>)>) -> Markup {
    let n = rows.len();
    if n > MAX_TABLE_ROWS {
        let k = n.div_ceil(MAX_TABLE_ROWS);
        let grouped: Vec<(i64, Vec<Option<f64>>)> = rows
            .chunks(k)
            .map(|c| {
                let cols = c[0].1.len();
                let cells = (0..cols)
                    .map(|j| {
                        let v: Vec<f64> = c
                            .iter()
                            .filter_map(|r| r.1.get(j).copied().flatten())
                            .collect();
                        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                    })
                    .collect();
                (c[0].0, cells)
            })
            .collect();
        return html! {
            p.note { (n) " windows: each row is the mean of " (k) " consecutive windows (the charts show their range; every window is in the report's JSON)." }
            (table(head, grouped))
        };
    }
    html! {
        div.scroll {
            table {
                thead { tr { th { "window (UTC)" } @for h in head { th { (h) } } } }
                tbody {
                    @for (t, cells) in rows {
                        tr { td.mono { (svg::hhmm(t)) } @for c in cells { (cell(c)) } }
                    }
                }
            }
        }
    }
}

fn step(ctx: &Ctx<'_>, a: &Analysis) -> Markup {
    let r = ctx.r;
    let slo = &r.settings.slo;
    let (charts, howto, tbl): (Markup, &str, Markup) = match a.id.as_str() {
        "latency" => {
            let rows = fleet(&r.rows.latency);
            let g = |f: fn(&Latency) -> Option<f64>| {
                rows.iter().map(|x| f(&x.fields)).collect::<Vec<_>>()
            };
            (
                html! {
                    (ctx.chart("Where a request's engine time goes", "ms per request", None, vec![
                        series("queue", g(|l| l.queue_ms), Kind::Stacked, 4),
                        series("prefill", g(|l| l.prefill_ms), Kind::Stacked, 1),
                        series("decode", g(|l| l.decode_ms), Kind::Stacked, 0),
                    ], vec![]))
                    (ctx.chart("Time to first token", "ms", None, vec![
                        series("p50", g(|l| l.ttft_p50_ms), Kind::Line, 2),
                        series("p95", g(|l| l.ttft_p95_ms), Kind::Line, 0),
                        series("average", g(|l| l.ttft_ms), Kind::Dashed, 3),
                    ], vec![Threshold { value: slo.ttft_p95_ms, label: format!("SLO p95 < {} ms", num(slo.ttft_p95_ms)) }]))
                    (ctx.chart("Inter-token latency", "ms", None, vec![
                        series("p50", g(|l| l.itl_p50_ms), Kind::Line, 2),
                        series("p95", g(|l| l.itl_p95_ms), Kind::Line, 0),
                        series("average", g(|l| l.inter_token_ms), Kind::Dashed, 3),
                    ], vec![Threshold { value: slo.itl_p95_ms, label: format!("SLO p95 < {} ms", num(slo.itl_p95_ms)) }]))
                },
                "The stacked chart splits the average time a finished request spent in the engine: waiting in the queue, reading the prompt (prefill) and writing the answer (decode). Whichever band is largest is where tuning pays. Queue time is the earliest sign of saturation: it grows before anything else. Time to first token is what users feel before text appears; inter-token latency is the pace of the streamed answer. Percentiles come from vLLM's histograms (interpolated inside buckets, as Prometheus does).",
                table(
                    &[
                        "queue ms",
                        "prefill ms",
                        "decode ms",
                        "e2e ms",
                        "TTFT ms",
                        "TTFT p95",
                        "TTFT p99",
                        "ITL ms",
                        "ITL p95",
                        "ITL p99",
                        "decode %",
                    ],
                    rows.iter()
                        .map(|x| {
                            let l = &x.fields;
                            (
                                x.key.window_start_ms,
                                vec![
                                    l.queue_ms,
                                    l.prefill_ms,
                                    l.decode_ms,
                                    l.e2e_ms,
                                    l.ttft_ms,
                                    l.ttft_p95_ms,
                                    l.ttft_p99_ms,
                                    l.inter_token_ms,
                                    l.itl_p95_ms,
                                    l.itl_p99_ms,
                                    l.decode_share_pct,
                                ],
                            )
                        })
                        .collect(),
                ),
            )
        }
        "efficiency" => {
            let rows = fleet(&r.rows.efficiency);
            let g = |f: fn(&Efficiency) -> Option<f64>| {
                rows.iter().map(|x| f(&x.fields)).collect::<Vec<_>>()
            };
            (
                html! {
                    (ctx.chart("Prefix-cache hits and KV-cache pool", "%", Some(100.0), vec![
                        series("prefix-cache hit %", g(|e| e.prefix_cache_hit_pct), Kind::Line, 0),
                        series("KV pool used (max)", g(|e| e.kv_cache_pct), Kind::Line, 1),
                    ], vec![Threshold { value: 60.0, label: "autoscale at KV ≈ 60 %".into() }]))
                    (ctx.chart("Batching: tokens per step against requests", "count", None, vec![
                        series("tokens per step", g(|e| e.tokens_per_iteration), Kind::Line, 0),
                        series("running (max)", g(|e| e.running), Kind::Line, 2),
                        series("waiting (max)", g(|e| e.waiting), Kind::Line, 4),
                    ], vec![]))
                },
                "With continuous batching every running request adds a token to every engine step, so tokens per step should track the running requests (plus prompt chunks). Waiting requests mean the engine had no room. The prefix-cache hit rate is the share of prompt tokens served from cache. KV-cache usage is the share of the block pool allocated at start-up, not of VRAM.",
                table(
                    &[
                        "hit %",
                        "cached %",
                        "tokens/step",
                        "gen tok/s",
                        "prompt tok/s",
                        "running",
                        "waiting",
                        "KV %",
                        "KV % avg",
                        "preempt/min",
                    ],
                    rows.iter()
                        .map(|x| {
                            let e = &x.fields;
                            (
                                x.key.window_start_ms,
                                vec![
                                    e.prefix_cache_hit_pct,
                                    e.cached_prompt_share_pct,
                                    e.tokens_per_iteration,
                                    e.gen_tokens_per_sec,
                                    e.prompt_tokens_per_sec,
                                    e.running,
                                    e.waiting,
                                    e.kv_cache_pct,
                                    e.kv_cache_pct_avg,
                                    e.preemptions_per_min,
                                ],
                            )
                        })
                        .collect(),
                ),
            )
        }
        "workload" => {
            let rows = fleet(&r.rows.workload);
            let eff = fleet(&r.rows.efficiency);
            let g = |f: fn(&Workload) -> Option<f64>| {
                rows.iter().map(|x| f(&x.fields)).collect::<Vec<_>>()
            };
            (
                html! {
                    (ctx.chart("Token flow: prompt against generated", "tokens/s", None, vec![
                        series("prompt", eff.iter().map(|x| x.fields.prompt_tokens_per_sec).collect(), Kind::Line, 1),
                        series("generated", eff.iter().map(|x| x.fields.gen_tokens_per_sec).collect(), Kind::Line, 0),
                    ], vec![]))
                    (ctx.chart("Requests finished", "per minute", None, vec![
                        series("requests/min", g(|w| w.requests_per_min), Kind::Line, 0),
                    ], vec![]))
                },
                "More prompt than generated tokens means a prefill-heavy workload (retrieval, classification); the reverse is decode-heavy (chat, writing). When the average answer is about as long as max_tokens, answers are being cut off. A ratio that moves during the capture means the traffic changed.",
                table(
                    &[
                        "req/min",
                        "prompt tok",
                        "generated tok",
                        "max_tokens",
                        "gen ÷ prompt",
                        "max_tokens used %",
                    ],
                    rows.iter()
                        .map(|x| {
                            let w = &x.fields;
                            (
                                x.key.window_start_ms,
                                vec![
                                    w.requests_per_min,
                                    w.avg_prompt_tokens,
                                    w.avg_generated_tokens,
                                    w.avg_max_tokens,
                                    w.gen_to_prompt_ratio,
                                    w.max_tokens_utilisation_pct,
                                ],
                            )
                        })
                        .collect(),
                ),
            )
        }
        "outcomes" => {
            let rows = fleet(&r.rows.outcomes);
            let reasons = ["stop", "length", "abort", "error", "repetition"];
            let present: Vec<&str> = reasons
                .iter()
                .copied()
                .filter(|k| {
                    rows.iter()
                        .any(|x| x.fields.completions_per_min.contains_key(*k))
                })
                .collect();
            let mut statuses: Vec<String> = rows
                .iter()
                .flat_map(|x| x.fields.http_per_min_by_status.keys().cloned())
                .collect();
            statuses.sort();
            statuses.dedup();
            let mut head: Vec<String> = present.iter().map(|k| format!("{k}/min")).collect();
            head.push("error+abort %".into());
            for s in &statuses {
                head.push(format!("HTTP {s}/min"));
            }
            head.push("HTTP error %".into());
            let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
            (
                html! {
                    (ctx.chart("Completions by finished_reason", "per minute", None,
                        present.iter().enumerate().map(|(i, k)| series(k, rows.iter().map(|x| x.fields.completions_per_min.get(*k).copied()).collect(), Kind::Stacked, [0, 1, 3, 4, 2][i % 5])).collect(),
                        vec![]))
                },
                "stop is an answer that ended on its own, length one cut at max_tokens, abort and error requests the engine cancelled or failed. HTTP status classes count every request the API server answered, including those rejected before the engine. In V1, clients that disconnect are not counted as aborts.",
                table(
                    &head_refs,
                    rows.iter()
                        .map(|x| {
                            let o = &x.fields;
                            let mut v: Vec<Option<f64>> = present
                                .iter()
                                .map(|k| o.completions_per_min.get(*k).copied())
                                .collect();
                            v.push(o.error_abort_pct);
                            for s in &statuses {
                                v.push(o.http_per_min_by_status.get(s).copied());
                            }
                            v.push(o.http_error_pct);
                            (x.key.window_start_ms, v)
                        })
                        .collect(),
                ),
            )
        }
        "hardware" => {
            let rows: Vec<&GpuRow> = r
                .rows
                .gpu
                .iter()
                .filter(|x| x.key.replica == "fleet" && x.gpu == "all")
                .collect();
            let g =
                |f: fn(&Gpu) -> Option<f64>| rows.iter().map(|x| f(&x.fields)).collect::<Vec<_>>();
            (
                html! {
                    (ctx.chart("What the GPU is doing", "%", Some(100.0), vec![
                        series("GPU util", g(|x| x.gpu_util_pct_avg), Kind::Line, 3),
                        series("GR engine active", g(|x| x.gr_engine_active_pct_avg), Kind::Line, 2),
                        series("tensor active", g(|x| x.tensor_active_pct_avg), Kind::Line, 1),
                        series("DRAM active", g(|x| x.dram_active_pct_avg), Kind::Line, 0),
                    ], vec![]))
                    (ctx.chart("Power", "W", None, vec![
                        series("power (mean)", g(|x| x.power_w_avg), Kind::Line, 0),
                        series("power (max)", g(|x| x.power_w), Kind::Dashed, 1),
                    ], vec![]))
                },
                "GPU util only says that some kernel was running: one small kernel reads 100 %. The profiling fields say what kind of work it was: high DRAM activity with idle tensor cores is memory-bound decode (quantization helps), busy tensor cores are compute-bound prefill or large batches. Values are window means across GPUs.",
                table(
                    &[
                        "util %", "GR %", "tensor %", "DRAM %", "VRAM MiB", "VRAM %", "W", "°C",
                        "SM MHz", "energy J",
                    ],
                    rows.iter()
                        .map(|x| {
                            let g = &x.fields;
                            (
                                x.key.window_start_ms,
                                vec![
                                    g.gpu_util_pct_avg,
                                    g.gr_engine_active_pct_avg,
                                    g.tensor_active_pct_avg,
                                    g.dram_active_pct_avg,
                                    g.vram_used_mib,
                                    g.vram_used_pct,
                                    g.power_w_avg,
                                    g.temp_c,
                                    g.sm_clock_mhz_avg,
                                    g.energy_j,
                                ],
                            )
                        })
                        .collect(),
                ),
            )
        }
        _ => {
            let rows = fleet(&r.rows.memory);
            let g = |f: fn(&Memory) -> Option<f64>| {
                rows.iter().map(|x| f(&x.fields)).collect::<Vec<_>>()
            };
            (
                html! {
                    (ctx.chart("KV-cache pool against VRAM", "%", Some(100.0), vec![
                        series("VRAM used", g(|m| m.vram_used_pct), Kind::Line, 3),
                        series("KV pool used (max)", g(|m| m.kv_cache_pct), Kind::Line, 0),
                        series("KV pool used (mean)", g(|m| m.kv_cache_pct_avg), Kind::Dashed, 2),
                    ], vec![Threshold { value: 60.0, label: "KV ≈ 60 %".into() }]))
                    (ctx.chart("Energy efficiency", "tokens/s per W", None, vec![
                        series("tokens/s per watt", g(|m| m.tokens_per_watt), Kind::Line, 0),
                    ], vec![]))
                },
                "vLLM takes its share of VRAM at start-up, so VRAM reads nearly full whatever the load; the KV-cache pool inside it is what fills with load. Autoscale on the KV pool and waiting requests, plan capacity on VRAM, never alert on VRAM. Tokens per watt compare the energy cost of the work before and after a change.",
                table(
                    &[
                        "KV %",
                        "KV % avg",
                        "VRAM %",
                        "VRAM % avg",
                        "tokens/s/W",
                        "tokens/J",
                    ],
                    rows.iter()
                        .map(|x| {
                            let m = &x.fields;
                            (
                                x.key.window_start_ms,
                                vec![
                                    m.kv_cache_pct,
                                    m.kv_cache_pct_avg,
                                    m.vram_used_pct,
                                    m.vram_used_pct_avg,
                                    m.tokens_per_watt,
                                    m.tokens_per_joule,
                                ],
                            )
                        })
                        .collect(),
                ),
            )
        }
    };
    html! {
        section id=(format!("step-{}", a.id)) {
            h2 { (a.title) }
            (findings(a))
            div.charts { (charts) }
            details { summary { "How to read this" } p.howto { (howto) } }
            details { summary { "Per-window figures (fleet)" } (tbl) }
        }
    }
}

fn timeline(r: &Report) -> Markup {
    html! {
        section id="timeline" {
            h2 { "Timeline" }
            @if r.timeline.is_empty() {
                p { "Nothing happened worth a line: no SLO breach, no waiting, no preemption, no restart, no gap." }
            } @else {
                div.scroll {
                    table {
                        thead { tr { th { "when (UTC)" } th.text { "what" } th.text { "where" } } }
                        tbody {
                            @for e in &r.timeline {
                                tr { td.mono { (format_rfc3339(e.time_ms)) } td.text { (e.description) } td.text.mono { (e.subject) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn data_quality(r: &Report) -> Markup {
    let q = &r.data_quality;
    html! {
        section id="data-quality" {
            h2 { "Data quality" }
            p { "vLLM: " strong { (q.vllm_version) } ". "
                (q.resets) " counter reset(s); "
                (q.diagnostics) " unreadable line(s) or file(s)." }
            @if !q.notes.is_empty() {
                ul {
                    @for n in &q.notes {
                        li { span.mono { "[" (n.kind) "] " } (n.message) }
                    }
                }
            }
            details {
                summary { "What each analysis reads" }
                div.scroll {
                    table {
                        thead { tr { th.text { "analysis" } th.text { "signal" } th.text { "status" } th.text { "read from" } } }
                        tbody {
                            @for a in &q.inputs {
                                @for m in &a.metrics {
                                    tr { td.text { (a.analysis) } td.text.mono { (m.signal) } td.text { (m.status) } td.text.mono { (m.used.join(", ")) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn appendix(r: &Report) -> Markup {
    let s = &r.settings;
    html! {
        section id="appendix" {
            h2 { "Appendix" }
            details {
                summary { "Metric inventory: " (r.data_quality.inventory.iter().filter(|m| m.status == "found").count()) " found, "
                    (r.data_quality.inventory.iter().filter(|m| m.status == "aliased").count()) " aliased, "
                    (r.data_quality.inventory.iter().filter(|m| m.status == "missing").count()) " missing" }
                div.scroll {
                    table {
                        thead { tr { th.text { "signal" } th.text { "status" } th.text { "read from" } th.text { "notes" } } }
                        tbody {
                            @for m in &r.data_quality.inventory {
                                tr { td.text.mono { (m.signal) } td.text { (m.status) } td.text.mono { (m.used.join(", ")) } td.text { (m.notes.join(" · ")) } }
                            }
                        }
                    }
                }
            }
            details {
                summary { "Settings" }
                table {
                    tbody {
                        tr { td.text { "window" } td { (format_duration(s.window_ms)) } }
                        tr { td.text { "SLO: TTFT p95 below" } td { (num(s.slo.ttft_p95_ms)) " ms" } }
                        tr { td.text { "SLO: inter-token p95 below" } td { (num(s.slo.itl_p95_ms)) " ms" } }
                        tr { td.text { "SLO: no queueing at" } td { (num(s.slo.queue_concurrency)) " concurrent (queue under " (num(s.slo.queue_negligible_ms)) " ms)" } }
                        tr { td.text { "SLO: errors + aborts below" } td { (num(s.slo.error_abort_pct)) " %" } }
                    }
                }
                @if !r.deployment.engine_args.is_empty() {
                    h3 { "Engine arguments (from the manifest)" }
                    table { tbody { @for (k, v) in &r.deployment.engine_args { tr { td.text.mono { (k) } td.text.mono { (v) } } } } }
                }
            }
            details {
                summary { "Glossary" }
                dl.meta {
                    dt { "TTFT" } dd { "Time to first token: from the request's arrival to its first generated token." }
                    dt { "Inter-token latency (ITL)" } dd { "Time between two consecutive generated tokens of one answer." }
                    dt { "Queue / prefill / decode" } dd { "Waiting to be scheduled; computing the prompt's KV cache; generating the answer token by token." }
                    dt { "Prefix cache" } dd { "KV blocks of prompt text already computed for an earlier request and reused." }
                    dt { "KV-cache pool" } dd { "The blocks of GPU memory vLLM sets aside at start-up for the attention cache of running requests." }
                    dt { "Preemption" } dd { "A running request evicted because the KV pool ran out; it is recomputed later." }
                    dt { "GPU util" } dd { "Share of time any kernel ran (DCGM_FI_DEV_GPU_UTIL); not how much of the GPU was used." }
                    dt { "Tensor / DRAM active" } dd { "Share of cycles the tensor cores, or the memory interface, were busy (DCGM profiling fields)." }
                    dt { "p50 / p95 / p99" } dd { "The value half, 95 % or 99 % of observations stay below, interpolated within histogram buckets." }
                    dt { "Window" } dd { "A clock-aligned slice of the capture; a counter's increase belongs to the window of its later scrape." }
                }
            }
        }
    }
}

/// The whole page.
pub fn render(r: &Report) -> String {
    let times: Vec<i64> = fleet(&r.rows.latency)
        .iter()
        .map(|x| x.key.window_start_ms)
        .collect();
    let ctx = Ctx { r, times };
    let title = format!(
        "vLLM Lens report: {}",
        r.deployment.model.as_deref().unwrap_or(&r.bundle.name)
    );
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                meta name="generator" content=(format!("vLLM Lens {}", r.tool_version));
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                main {
                    (header(r))
                    nav.toc {
                        a href="#scorecard" { "Scorecard" }
                        a href="#what-to-do" { "What to do" }
                        @for a in &r.analyses { a href=(format!("#step-{}", a.id)) { (a.title) } }
                        a href="#timeline" { "Timeline" }
                        a href="#data-quality" { "Data quality" }
                        a href="#appendix" { "Appendix" }
                    }
                    (scorecard(r))
                    (recommendations(r))
                    @for a in &r.analyses { (step(&ctx, a)) }
                    (timeline(r))
                    (data_quality(r))
                    (appendix(r))
                    footer {
                        "Made by vLLM Lens " (r.tool_version) " entirely on the machine that read the bundle: nothing was sent anywhere. "
                        "The report's data is embedded in this file (" code { "script#vllm-lens-report" } ") and can be read back with the tool."
                    }
                }
                (embed::script(r))
            }
        }
    };
    page.into_string()
}
