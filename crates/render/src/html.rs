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
use vllm_lens_model::report::*;
use vllm_lens_model::time::{format_duration, format_rfc3339};

use vllm_lens_model::steps::{
    self as registry, Cell, ChartSpec, Column, Field, Line, StepDef, Style,
};

use crate::embed;
use crate::svg::{self, Chart, Kind, Series, Threshold};
use crate::words;

/// The page's Content-Security-Policy: nothing may load, no script may run;
/// inline styles and `data:` images only.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// The report's stylesheet (also used by the comparison page).
pub(crate) const STYLE: &str = include_str!("style.css");

/// A figure for humans: 3 significant digits, no needless decimals.
pub fn num(v: f64) -> String {
    vllm_lens_model::text::num(v)
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
        "{} on {}",
        d.model.as_deref().unwrap_or("vLLM"),
        d.hardware()
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
                @if let Some(ms) = b.pushdown_ms {
                    dt { "Resolution" } dd { "pushed down to " (num(ms as f64 / 1000.0)) " s windows (a Prometheus export)" }
                } @else {
                    dt { "Scrape interval" } dd { (b.scrape_interval_ms.map_or("—".into(), |ms| format!("{} s", num(ms as f64 / 1000.0)))) }
                }
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
                dt { "Hardware" } dd { (d.hardware()) @if d.device.as_deref() == Some("cpu") { " (a CPU server: no GPU, no DCGM)" } }
                @if d.replicas.len() > 1 { dt { "Replicas" } dd.mono { (d.replicas.join(", ")) } }
                dt { "Windows" } dd { (format_duration(r.settings.window_ms)) ", aligned to the clock (UTC)" }
                dt { "Tool" } dd { "vLLM Lens " (r.tool_version) }
            }
        }
    }
}

fn verdict(r: &Report) -> Markup {
    let v = &r.verdict;
    let class = match v.status {
        VerdictStatus::Healthy => "pass",
        VerdictStatus::AtRisk => "warn",
        VerdictStatus::Failing => "fail",
        VerdictStatus::CannotTell => "na",
    };
    html! {
        section id="verdict" class=(format!("verdict {class}")) {
            div.status { (words::verdict_word(v.status)) }
            p.headline { (v.headline) }
            @if v.reasons.len() > 1 {
                ul.reasons { @for x in &v.reasons { li { (x) } } }
            }
            @if !v.narrative.is_empty() {
                h3 { "What happened" }
                ul.narrative { @for x in &v.narrative { li { (x) } } }
            }
            @if !v.look_next.is_empty() {
                h3 { "Where to look next" }
                ol.look-next { @for x in &v.look_next {
                    li id=(format!("look-{}", x.id)) { strong { (x.title) } " — " (x.evidence) br; span.m { "How: " (x.how) } }
                } }
            }
            @if !v.follow_ups.is_empty() {
                h3 { "The tuning guide's follow-ups" }
                ul.follow-ups { @for x in &v.follow_ups {
                    li id=(format!("follow-{}", x.id)) { strong { (x.title) } ": " (x.evidence)
                        @if let Some(r) = &x.recommendation { " " a href=(format!("#rec-{r}")) { "(recommendation)" } } }
                } }
            }
        }
    }
}

fn phases(r: &Report) -> Markup {
    if r.phases.len() < 2 {
        return html! {};
    }
    let bucket = |b: Option<Bounds>| {
        b.map_or("—".to_string(), |b| {
            vllm_lens_model::text::bucket_cell(b.low, b.high)
        })
    };
    html! {
        section id="phases" {
            h2 { "Phases" }
            p.note { "The capture split where it changed: load levels, restarts, error bursts, idle time (each described under the verdict). Whole-capture figures blend them; each phase's own figures are here (quantiles as the bucket they lie in)." }
            div.scroll {
                table {
                    thead { tr {
                        th.text { "when (UTC)" } th.text { "phase" } th { "in flight" } th { "req/min" }
                        th { "TTFT p95" } th { "ITL p95" } th { "queue ms" } th { "decode ms" } th { "gen tok/s" }
                        th { "KV % max" } th { "tensor %" } th { "DRAM %" } th { "tok/J" } th { "err+abort %" }
                    } }
                    tbody {
                        @for p in &r.phases {
                            @let f = &p.figures;
                            tr {
                                td.mono { (words::hhmm(p.start_ms)) "–" (words::hhmm(p.end_ms)) }
                                td.text title=(p.description) { strong { (words::phase_kind(p)) } }
                                (cell(p.in_flight_avg))
                                (cell(f.workload.requests_per_min))
                                td { (bucket(f.latency.bounds.ttft_p95_ms)) }
                                td { (bucket(f.latency.bounds.itl_p95_ms)) }
                                (cell(f.latency.queue_ms))
                                (cell(f.latency.decode_ms))
                                (cell(f.efficiency.gen_tokens_per_sec))
                                (cell(f.efficiency.kv_cache_pct))
                                (cell(f.gpu.tensor_active_pct_avg))
                                (cell(f.gpu.dram_active_pct_avg))
                                (cell(f.memory.tokens_per_joule))
                                (cell(f.outcomes.error_abort_pct))
                            }
                        }
                    }
                }
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
                    @let class = match s.status {
                        SloStatus::Pass => "pass",
                        SloStatus::Fail => "fail",
                        SloStatus::NotExercised => "not_exercised",
                        SloStatus::CannotTell => "cannot_tell",
                    };
                    div class=(format!("tile {class}")) {
                        div.verdict { (words::status_mark(s.status)) }
                        div.value { (words::slo_value(s)) }
                        div.what { (s.title) }
                        div.head {
                            "headroom: " (words::slo_headroom(s))
                            @let w = words::slo_windows(s);
                            @if !w.is_empty() { " · " (w) }
                        }
                    }
                }
            }
            @for s in r.slo.iter().filter(|s| !s.breakdown.is_empty()) {
                div.breakdown {
                    h3 { "What the miss is made of: " (s.title) }
                    (evidence(&s.breakdown))
                }
            }
            details {
                summary { "How the SLOs are judged" }
                ul { @for s in &r.slo { li { strong { (s.title) } ": " (s.explanation) } } }
            }
        }
    }
}

fn config_row(c: &vllm_lens_model::ConfigSetting) -> Markup {
    html! {
        tr {
            td.text.mono { (c.flag.as_deref().unwrap_or(&c.name)) }
            td.text.mono { (c.value.as_deref().unwrap_or("missing")) }
            td.text {
                (c.source.map_or("no source states it", |s| s.describe()))
                @if let Some(n) = &c.note { span.m { " · " (n) } }
            }
        }
    }
}

fn binding_words(b: BindingLimit) -> &'static str {
    b.words()
}

fn opt_num(v: Option<f64>, unit: &str) -> String {
    v.map_or("missing".into(), |v| {
        if unit.is_empty() {
            num(v)
        } else {
            format!("{} {unit}", num(v))
        }
    })
}

/// 1.2e12 → "1.2 T".
fn si(v: f64) -> String {
    let (scale, p) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(s, _)| v.abs() >= *s)
        .unwrap_or((1.0, ""));
    format!("{} {p}", num(v / scale))
}

/// The capacity section's two charts: inter-token p95 against the batch
/// (with the objective and the decode floor), TTFT p95 against requests in
/// flight.
fn capacity_charts(r: &Report) -> (Option<Markup>, Option<Markup>) {
    let c = &r.capacity;
    let slo = &r.settings.slo;
    let itl_points: Vec<svg::RangePoint> = c
        .points
        .iter()
        .filter_map(|p| {
            Some(svg::RangePoint {
                x: p.running?,
                low: p.itl_p95?.low,
                high: p.itl_p95?.high,
            })
        })
        .collect();
    let ttft_points: Vec<svg::RangePoint> = c
        .points
        .iter()
        .filter_map(|p| {
            Some(svg::RangePoint {
                x: p.in_flight?,
                low: p.ttft_p95?.low,
                high: p.ttft_p95?.high,
            })
        })
        .collect();
    let mut itl_lines = vec![Threshold {
        value: slo.itl_p95_ms,
        label: format!("objective {} ms", num(slo.itl_p95_ms)),
    }];
    if let Some(f) = &c.floor {
        itl_lines.push(Threshold {
            value: f.ms,
            label: format!("decode floor {} ms", num(f.ms)),
        });
    }
    let itl_chart = svg::render_ranges(&svg::RangeChart {
        title: "Inter-token p95 against the batch".into(),
        x_label: "running requests (window mean)".into(),
        unit: "ms".into(),
        points: itl_points,
        lines: itl_lines,
    });
    let ttft_chart = svg::render_ranges(&svg::RangeChart {
        title: "TTFT p95 against requests in flight".into(),
        x_label: "requests in flight (running + waiting, window mean)".into(),
        unit: "ms".into(),
        points: ttft_points,
        lines: vec![Threshold {
            value: slo.ttft_p95_ms,
            label: format!("objective {} ms", num(slo.ttft_p95_ms)),
        }],
    });
    (itl_chart, ttft_chart)
}

fn provisioning_word(s: vllm_lens_model::ProvisioningStatus) -> &'static str {
    use vllm_lens_model::ProvisioningStatus as P;
    match s {
        P::Over => "Over-provisioned",
        P::Fits => "Sized for its load",
        P::Under => "Under-provisioned",
        P::CannotTell => "Cannot tell",
    }
}

fn capacity(r: &Report) -> Markup {
    let c = &r.capacity;
    let slo = &r.settings.slo;
    let source = |k: &str| c.sources.get(k).cloned().unwrap_or_default();
    let (itl_chart, ttft_chart) = capacity_charts(r);
    let m = &c.max_concurrency_meeting;
    html! {
        section id="capacity" {
            h2 { "Capacity" }
            p.note { "How much more fits on this deployment and what binds first, per replica"
                @if c.replicas > 1 { " (" (c.replicas) " replicas)" } ", from the bundle's own figures; estimates say so." }
            table.facts {
                tbody {
                    tr { th.text { "KV cache" } td.text {
                        @if c.kv_estimated { "about " }
                        (opt_num(c.kv_tokens, "tokens"))
                        @if let Some(n) = c.kv_requests { ": about " (num(n)) " requests at once at their full observed length (" (opt_num(c.request_tokens.map(f64::round), "tokens")) " each, whole " (c.block_size.map_or("?".into(), num)) "-token blocks)" }
                        span.m { " · " (source("kv_tokens")) }
                    } }
                    tr { th.text { "Concurrency" } td.text {
                        "at most " (opt_num(c.peak_in_flight, "")) " requests in flight on a replica"
                        @if let Some(q) = c.queueing_starts_at { "; queueing from " (num(q)) " in flight" }
                        @if let Some(a) = c.admission_cap { "; at most " (num(a)) " ran while others waited" }
                        @if let Some(rj) = c.rejections.as_ref().filter(|r| r.total > 0.0) {
                            strong { "; " (num(rj.total)) " requests turned away by the queue limits" }
                            " (" (rj.by_reason.iter().map(|(k, v)| format!("{} {k}", num(*v))).collect::<Vec<_>>().join(", ")) ")"
                        }
                    } }
                    tr { th.text { "Binds first" } td.text {
                        (c.binding_limits.iter().map(|b| binding_words(*b)).collect::<Vec<_>>().join(" and "))
                        @if c.binding_limits.len() > 1 { " (both bind)" }
                        @if !c.limits.is_empty() {
                            ul.limits { @for l in &c.limits {
                                li { strong { (binding_words(l.limit)) ": " @if l.binds { "binds" } @else { "does not bind" } } " — " (l.evidence) }
                            } }
                        }
                    } }
                    tr { th.text { "Provisioning" } td.text {
                        strong { (provisioning_word(c.provisioning.status)) }
                        @if let Some(x) = c.provisioning.headroom_x { " (" (format!("{x:.1}")) "× headroom at the peak load)" }
                        ": " (c.provisioning.explanation)
                        @if !c.provisioning.dimensions.is_empty() {
                            ul.limits { @for d in &c.provisioning.dimensions {
                                li { strong { (d.id) ": " (format!("{:.1}", d.headroom_x)) "×" } " — " (d.evidence) }
                            } }
                        }
                        @if !c.provisioning.give_back.is_empty() {
                            "Could give back:"
                            ul.limits { @for g in &c.provisioning.give_back { li { strong { (g.title) } " — " (g.evidence) } } }
                        }
                        @if !c.provisioning.cannot_prove.is_empty() {
                            span.m { "What the capture cannot prove: " (c.provisioning.cannot_prove.join(" ")) }
                        }
                    } }
                    tr { th.text { "Met the objectives up to" } td.text {
                        "TTFT p95: " (met_words(m.ttft_p95, m.ttft_p95_windows, m.ttft_p95_from, m.ttft_p95_too_few, "in flight", c.points.iter().any(|p| p.ttft_p95.is_some())))
                        "; inter-token p95: " (met_words(m.itl_p95, m.itl_p95_windows, m.itl_p95_from, m.itl_p95_too_few, "running", c.points.iter().any(|p| p.itl_p95.is_some())))
                        "; observed, not extrapolated"
                    } }
                    tr { th.text { "Decode floor" } td.text {
                        @match &c.floor {
                            Some(f) => {
                                (num(f.ms)) " ms per step (measured mean inter-token latency " (opt_num(f.measured_ms, "ms")) ")"
                                @if !f.infeasible.is_empty() { strong { "; the " (num(slo.itl_p95_ms)) " ms inter-token objective is out of reach with these weights on this hardware" } }
                                span.m { " · " (source("itl_floor_ms")) }
                            }
                            None => "unknown (see the notes)",
                        }
                    } }
                    tr { th.text { "Achieved" } td.text {
                        @match (c.achieved_flops_per_s, c.achieved_bytes_per_s) {
                            (None, None) => "FLOP/s and bytes/s missing (no vllm:estimated_* counters with --enable-mfu-metrics)",
                            (f, b) => { (f.map_or("FLOP/s missing".into(), |v| format!("{}FLOP/s", si(v)))) ", " (b.map_or("bytes/s missing".into(), |v| format!("{}B/s", si(v)))) " per GPU (vLLM's estimates)" }
                        }
                        @if from_dcgm(c) { "; tensor pipes active " (opt_num(c.mfu_pct, "%")) " (an upper bound on MFU)" } @else { "; MFU " (opt_num(c.mfu_pct, "%")) }
                        @if from_dcgm(c) { ", DRAM active " (opt_num(c.mbu_pct, "%")) " (≈ MBU)" } @else { ", MBU " (opt_num(c.mbu_pct, "%")) }
                        @if let Some(s) = c.sources.get("mfu_pct") { span.m { " · MFU: " (s) } }
                        @if let Some(s) = c.sources.get("mbu_pct") { span.m { " · MBU: " (s) } }
                    } }
                    tr { th.text { "Prefix cache" } td.text {
                        (opt_num(c.prefix.cached_tokens_per_request.map(f64::round), "tokens")) " of " (opt_num(c.prefix.prompt_tokens.map(f64::round), "prompt tokens")) " per request served from cache"
                        @if let Some(ceiling) = c.prefix.ceiling_pct.filter(|_| !c.prefix.exceeded) { "; the " (c.prefix.shared_prefix_tokens.map_or("?".into(), |t| format!("{}-token", num(t)))) " shared prefix allows " (num(ceiling)) " % in whole blocks" }
                        @if let Some(ceiling) = c.prefix.ceiling_pct.filter(|_| c.prefix.exceeded) { strong { "; the stated " (c.prefix.shared_prefix_tokens.map_or("?".into(), |t| format!("{}-token", num(t)))) " shared prefix allows only " (num(ceiling)) " % in whole blocks, less than was served: prompts share more than stated" } }
                        @if c.prefix.shorter_than_a_block && !c.prefix.exceeded { strong { "; the shared prefix is shorter than one block: never reused" } }
                        @if c.prefix.shared_prefix_tokens.is_none() { " (give --shared-prefix-tokens to compare with what prompts share)" }
                    } }
                    @if let Some(p) = &c.preemption {
                        tr { th.text { "Preemptions" } td.text {
                            (opt_num(p.per_min, "per min"))
                            @if let Some(x) = p.per_request { "; " (num(x)) " per request" }
                            @if let Some(x) = p.recompute_ms_per_min { "; about " (num(x)) " ms of recomputation per minute (estimate)" }
                        } }
                    }
                    tr { th.text { "Energy and cost" } td.text {
                        (opt_num(c.economics.generated_tokens_per_joule, "generated tokens/J")) ", "
                        (opt_num(c.economics.computed_tokens_per_joule, "computed tokens/J"))
                        @if let Some(x) = c.economics.cost_per_million_generated { "; " (num(x)) " per million generated tokens, " (opt_num(c.economics.cost_per_million_computed, "per million computed")) " at the load seen" }
                        @if r.settings.gpu_hour_cost.is_none() { " (give --gpu-hour-cost for cost per token)" }
                    } }
                }
            }
            div.charts {
                @match itl_chart { Some(m) => (m), None => p.nodata { "Inter-token p95 against the batch: no data in this capture." } }
                @match ttft_chart { Some(m) => (m), None => p.nodata { "TTFT p95 against requests in flight: no data in this capture." } }
            }
            @if !c.what_ifs.is_empty() {
                h3 { "What if (estimates)" }
                div.scroll {
                    table {
                        thead { tr { th.text { "change" } th { "KV requests at once" } th { "decode floor ms" } th.text { "assumes" } } }
                        tbody {
                            @for w in &c.what_ifs {
                                tr { td.text { (w.title) } (cell(w.kv_requests)) (cell(w.itl_floor_ms)) td.text.wrap { (w.assumptions) } }
                            }
                        }
                    }
                }
            }
            @if !c.notes.is_empty() {
                ul.notes { @for n in &c.notes { li { (n) } } }
            }
        }
    }
}

/// A capacity figure that came from DCGM activity, not vLLM's estimates.
fn from_dcgm(c: &vllm_lens_model::Capacity) -> bool {
    c.utilisation_from == Some(vllm_lens_model::UtilisationSource::Dcgm)
}

/// The largest concurrency that met an objective, or why there is none.
fn met_words(
    at: Option<f64>,
    windows: usize,
    from: Option<MeetingFrom>,
    too_few: Option<TooFew>,
    what: &str,
    any_points: bool,
) -> String {
    let min = vllm_lens_model::MEETING_MIN_WINDOWS;
    let windows_word = |n: usize| if n == 1 { "window" } else { "windows" };
    let mut s = match at {
        Some(n) if from == Some(MeetingFrom::Phase) => format!(
            "{} {what} (a load phase of {windows} windows whose own p95 met it)",
            num(n)
        ),
        Some(n) => format!("{} {what} ({windows} windows within 10 % of it)", num(n)),
        None if too_few.is_some() => "not enough windows".into(),
        None if any_points => return "no window proved it met".into(),
        None => return "missing (no window had both figures)".into(),
    };
    if let Some(t) = too_few {
        s.push_str(&format!(
            "{}at {} {what} only {} {} proved it, too few to count ({min} are needed)",
            if at.is_some() { "; " } else { ": " },
            num(t.at),
            t.windows,
            windows_word(t.windows)
        ));
    }
    s
}

fn snippet(s: &Snippet) -> Markup {
    html! {
        h3 { (s.name) " (" (s.kind) ")" }
        p.check { (words::snippet_check(s)) }
        pre { (s.text) }
    }
}

fn recommendations(r: &Report) -> Markup {
    html! {
        section id="what-to-do" {
            h2 { "What to do" }
            @if r.recommendations.is_empty() {
                p { (words::no_recommendation(r)) }
            }
            ol.recs {
                @for rec in &r.recommendations {
                    @let conf = words::confidence_word(rec.confidence);
                    li id=(format!("rec-{}", rec.id.as_str())) {
                        div.rec-title { (rec.title) span class=(format!("badge {conf}")) { (conf) " confidence" } }
                        p.addresses { "For: " (rec.addresses.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ")) }
                        p.explain { (rec.rationale) }
                        p.action { (rec.action) }
                        @if let Some(p) = &rec.predicted { p.predicted { a href="#forecast" { "Forecast" } ": " (p) } }
                        p.caveat { "Might be wrong if: " (rec.caveat) }
                        @if !rec.levers.is_empty() { p.levers { "Levers: " (words::levers(r, &rec.levers)) } }
                        details {
                            summary { "Evidence" @if !rec.snippets.is_empty() { " and snippets" } }
                            (evidence(&rec.evidence))
                            @for s in &rec.snippets { (snippet(s)) }
                        }
                    }
                }
            }
            @if !r.withheld.is_empty() {
                details.withheld {
                    summary { "Held back (" (r.withheld.len()) "): rules that fired but do not fit this capture" }
                    ul {
                        @for w in &r.withheld {
                            li { span.mono { (w.id.as_str()) } ": " (w.reason) }
                        }
                    }
                }
            }
        }
    }
}

fn alerts(r: &Report) -> Markup {
    if r.alerts.is_empty() {
        return html! {};
    }
    html! {
        section id="what-to-watch" {
            h2 { "What to watch" }
            p.note { "Alert rules and an autoscaling trigger written with this server's metric names, each evaluated over this capture with Prometheus' semantics." }
            details {
                summary { (r.alerts.len()) " snippets: "
                    (r.alerts.iter().map(|s| format!("{}: {} of {} windows", s.name, s.check.windows_fired, s.check.windows_total)).collect::<Vec<_>>().join("; ")) }
                @for s in &r.alerts { (snippet(s)) }
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
    rows.iter().filter(|r| r.key.replica.is_fleet()).collect()
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

struct Ctx<'a> {
    r: &'a Report,
    times: Vec<i64>,
}

impl Ctx<'_> {
    /// A registry field over the fleet's windows.
    fn values(&self, f: Field) -> Vec<Option<f64>> {
        let r = self.r;
        match f {
            Field::Latency(g) => fleet(&r.rows.latency)
                .iter()
                .map(|x| g(&x.fields))
                .collect(),
            Field::Efficiency(g) => fleet(&r.rows.efficiency)
                .iter()
                .map(|x| g(&x.fields))
                .collect(),
            Field::Workload(g) => fleet(&r.rows.workload)
                .iter()
                .map(|x| g(&x.fields))
                .collect(),
            Field::Outcomes(g) => fleet(&r.rows.outcomes)
                .iter()
                .map(|x| g(&x.fields))
                .collect(),
            Field::Memory(g) => fleet(&r.rows.memory).iter().map(|x| g(&x.fields)).collect(),
            Field::Gpu(g) => {
                // The fleet's all-GPU row of each window, looked up by time
                // (a scan per window was quadratic: 8 of a week's 14 s).
                let mut by_time = std::collections::HashMap::new();
                for x in r
                    .rows
                    .gpu
                    .iter()
                    .filter(|x| x.key.replica.is_fleet() && x.gpu.is_all())
                {
                    by_time.entry(x.key.window_start_ms).or_insert(x);
                }
                self.times
                    .iter()
                    .map(|t| by_time.get(t).and_then(|x| g(&x.fields)))
                    .collect()
            }
        }
    }

    fn chart(&self, spec: &ChartSpec) -> Markup {
        let slo = &self.r.settings.slo;
        let series: Vec<Series> = spec
            .series
            .iter()
            .map(|s| Series {
                name: s.name.to_string(),
                values: self.values(s.field),
                kind: match s.style {
                    Style::Line => Kind::Line,
                    Style::Dashed => Kind::Dashed,
                    Style::Stacked => Kind::Stacked,
                },
                color: s.color,
            })
            .filter(|s| s.values.iter().any(Option::is_some))
            .collect();
        let thresholds = spec
            .lines
            .iter()
            .map(|l| match l {
                Line::TtftObjective => Threshold {
                    value: slo.ttft_p95_ms,
                    label: format!("SLO p95 ≤ {} ms", num(slo.ttft_p95_ms)),
                },
                Line::ItlObjective => Threshold {
                    value: slo.itl_p95_ms,
                    label: format!("SLO p95 ≤ {} ms", num(slo.itl_p95_ms)),
                },
                Line::Fixed(v, label) => Threshold {
                    value: *v,
                    label: label.to_string(),
                },
            })
            .collect();
        chart_or_note(Chart {
            title: spec.title.into(),
            unit: spec.unit.into(),
            y_max: spec.y_max,
            times: self.times.clone(),
            window_ms: self.r.settings.window_ms,
            series,
            thresholds,
        })
    }

    /// One column's cells, as text.
    fn column(&self, c: &Column) -> Vec<Option<String>> {
        match c.cell {
            Cell::Value(f) => self.values(f).into_iter().map(|v| v.map(num)).collect(),
            Cell::Bucket(g) => fleet(&self.r.rows.latency)
                .iter()
                .map(|x| g(&x.fields).map(|b| vllm_lens_model::text::bucket_cell(b.low, b.high)))
                .collect(),
        }
    }
}

/// Most rows a per-window table shows; longer captures are grouped.
const MAX_TABLE_ROWS: usize = 360;

fn table(head: &[&str], rows: Vec<(i64, Vec<Option<String>>)>) -> Markup {
    html! {
        div.scroll {
            table {
                thead { tr { th { "window (UTC)" } @for h in head { th { (h) } } } }
                tbody {
                    @for (t, cells) in rows {
                        tr {
                            td.mono { (svg::hhmm(t)) }
                            @for c in cells {
                                @match c {
                                    Some(v) => td { (v) },
                                    None => td.missing title="missing" { "—" },
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The per-window table of a step: its columns with data; long captures
/// grouped into means of consecutive windows (buckets are not averaged:
/// the group shows the first window's).
fn step_table(ctx: &Ctx<'_>, def: &StepDef) -> Markup {
    let mut head: Vec<&str> = Vec::new();
    // Per column: the cells as text, and the raw values (empty for buckets).
    type Col = (Vec<Option<String>>, Vec<Option<f64>>);
    let mut cols: Vec<Col> = Vec::new();
    for c in def.table {
        let text = ctx.column(c);
        if text.iter().all(Option::is_none) {
            continue;
        }
        let raw = match c.cell {
            Cell::Value(f) => ctx.values(f),
            Cell::Bucket(_) => Vec::new(),
        };
        head.push(c.head);
        cols.push((text, raw));
    }
    // Every column as long as the time axis (a hand-made model may hold
    // rows of unequal length).
    let n = ctx.times.len();
    for (text, raw) in &mut cols {
        text.resize(n, None);
        if !raw.is_empty() {
            raw.resize(n, None);
        }
    }
    if n > MAX_TABLE_ROWS {
        let k = n.div_ceil(MAX_TABLE_ROWS);
        let rows: Vec<(i64, Vec<Option<String>>)> = (0..n)
            .step_by(k)
            .map(|start| {
                let end = (start + k).min(n);
                let cells = cols
                    .iter()
                    .map(|(text, raw)| {
                        if raw.is_empty() {
                            return text[start].clone();
                        }
                        let v: Vec<f64> = raw[start..end].iter().flatten().copied().collect();
                        (!v.is_empty()).then(|| num(v.iter().sum::<f64>() / v.len() as f64))
                    })
                    .collect();
                (ctx.times[start], cells)
            })
            .collect();
        return html! {
            p.note { (n) " windows: each row is the mean of " (k) " consecutive windows (buckets: the first window's; the charts show the range; every window is in the report's JSON)." }
            (table(&head, rows))
        };
    }
    let rows = (0..n)
        .map(|w| {
            (
                ctx.times[w],
                cols.iter().map(|(t, _)| t[w].clone()).collect(),
            )
        })
        .collect();
    table(&head, rows)
}

fn step(ctx: &Ctx<'_>, a: &Analysis) -> Markup {
    let def = registry::step(a.id);
    html! {
        section id=(format!("step-{}", a.id)) {
            h2 { (a.title) }
            (findings(a))
            div.charts { @for c in def.charts { (ctx.chart(c)) } }
            details { summary { "How to read this" } p.howto { (def.howto) } }
            details { summary { "Per-window figures (fleet)" } (step_table(ctx, def)) }
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

/// Restarts per process, then the counter series they reset.
fn restarts_text(restarts: usize, resets: usize) -> String {
    let p = match restarts {
        0 => "no restart".to_string(),
        1 => "1 restart".to_string(),
        n => format!("{n} restarts"),
    };
    match resets {
        0 => p,
        1 => format!("{p} (1 counter reset)"),
        n => format!("{p} ({n} counter resets across the series)"),
    }
}

fn data_quality(r: &Report) -> Markup {
    let q = &r.data_quality;
    html! {
        section id="data-quality" {
            h2 { "Data quality" }
            p { "vLLM: " strong { (q.vllm_version) } ". "
                (restarts_text(q.restarts, q.resets)) "; "
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
                @if !r.deployment.configuration.is_empty() {
                    h3 { "What the server was told" }
                    table.config {
                        thead { tr { th.text { "Setting" } th.text { "Value" } th.text { "Source" } } }
                        tbody {
                            @for c in r.deployment.configuration.iter().filter(|c| c.key) { (config_row(c)) }
                        }
                    }
                    @let others: Vec<_> = r.deployment.configuration.iter().filter(|c| !c.key).collect();
                    @if !others.is_empty() {
                        details {
                            summary { "Every other setting the bundle states (" (others.len()) ")" }
                            table.config { tbody { @for c in others { (config_row(c)) } } }
                        }
                    }
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

/// A page's head: the CSP that lets nothing load, the viewport, both
/// colour schemes, the tool that wrote it, the title and the style sheet.
/// The report and the comparison share it.
pub(crate) fn page_head(title: &str, tool_version: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta http-equiv="Content-Security-Policy" content=(CSP);
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="color-scheme" content="light dark";
            meta name="generator" content=(format!("vLLM Lens {tool_version}"));
            title { (title) }
            style { (PreEscaped(STYLE)) }
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
            (page_head(&title, &r.tool_version))
            body {
                main {
                    (header(r))
                    nav.toc {
                        a href="#verdict" { "Verdict" }
                        a href="#scorecard" { "Scorecard" }
                        a href="#what-to-do" { "What to do" }
                        @if r.phases.len() > 1 { a href="#phases" { "Phases" } }
                        a href="#capacity" { "Capacity" }
                        @if !r.forecast.explanation.is_empty() { a href="#forecast" { "Forecast" } }
                        @if !r.alerts.is_empty() { a href="#what-to-watch" { "What to watch" } }
                        @for a in &r.analyses { a href=(format!("#step-{}", a.id)) { (a.title) } }
                        a href="#timeline" { "Timeline" }
                        a href="#data-quality" { "Data quality" }
                        a href="#appendix" { "Appendix" }
                    }
                    (verdict(r))
                    (scorecard(r))
                    (recommendations(r))
                    (phases(r))
                    (capacity(r))
                    @if !r.forecast.explanation.is_empty() { (crate::forecast::html(&r.forecast)) }
                    (alerts(r))
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
