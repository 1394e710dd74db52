//! Real Prometheus as the oracle. Each sample bundle is written as
//! OpenMetrics with timestamps, backfilled with `promtool tsdb
//! create-blocks-from openmetrics`, served by `prometheus` on 127.0.0.1, and
//! every per-window figure of ours is held against the PromQL an SRE would
//! type: `increase`, `rate`, `histogram_quantile(q, sum by (le) (increase(…)))`,
//! `sum(increase(_sum)) / sum(increase(_count))`, `max_over_time`,
//! `avg_over_time`, evaluated at the window's last sample.
//!
//! The range of each query is the span our window really covers: for
//! counters from the sample before the window (the start of the first
//! interval attributed to it) to its last sample; for gauges from the
//! window's first to its last sample (Prometheus 2.42 ranges include both
//! ends). On aligned captures that is `[1m]` for every full window; the
//! first window and windows after a failed scrape differ, and there `[1m]`
//! would extrapolate (see docs/decisions.md, "Our windows and Prometheus'").
//! Where an interval is too long to bridge (a starved collector's 24 s step
//! among 5 s ones), ours leaves it out and Prometheus does not: such a
//! window is compared run by run, each run's increase at its own end (the
//! `@` modifier), summed.
//!
//! Needs `promtool` and `prometheus` (Debian's `prometheus` package, 2.42).
//! Without them the tests say so and pass, unless `VLLM_LENS_ORACLE=require`
//! (set by `scripts/test.sh`, so CI always runs them).

use std::collections::BTreeMap;

use vllm_lens_core::catalog::{Catalogue, Kind, Signal};
use vllm_lens_core::query::{Query, Settings};
use vllm_lens_core::store::{SeriesId, Store, TargetId};

use crate::engine::load_sample;
use crate::support::{lacks, temp_dir};
use vllm_lens_oracle::RangeSeries;

/// False (recorded as skipped) when Prometheus is not installed and not
/// required (`VLLM_LENS_ORACLE=require`, `CI` or `VLLM_LENS_REQUIRE_TOOLS`).
fn oracle_available() -> bool {
    let required = std::env::var("VLLM_LENS_ORACLE").is_ok_and(|v| v == "require");
    let tools = ["promtool", "prometheus"];
    if required {
        assert!(
            !crate::support::lacks_quietly(&tools),
            "VLLM_LENS_ORACLE=require but promtool/prometheus are not installed (apt-get install prometheus)"
        );
        return true;
    }
    !lacks("oracle (Prometheus 2.42)", &tools)
}

/// The local Prometheus (`vllm_lens_oracle`) with the tests' manners: a
/// failure to start or to answer fails the test.
struct Prometheus(vllm_lens_oracle::Prometheus);

impl Prometheus {
    /// Backfills `store` and serves it.
    fn start(name: &str, store: &Store) -> Prometheus {
        let dir = temp_dir(&format!("oracle-{name}"));
        Prometheus(
            vllm_lens_oracle::Prometheus::start(store, &dir).unwrap_or_else(|e| panic!("{e}")),
        )
    }

    /// An instant query: `(labels, value)` per result series.
    fn query(&self, expr: &str, at_ms: i64) -> Vec<(BTreeMap<String, String>, f64)> {
        self.0.query(expr, at_ms).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A range query: per result series, its labels and `(time ms, value)`
    /// at each step.
    fn query_range(
        &self,
        expr: &str,
        start_ms: i64,
        end_ms: i64,
        step_ms: i64,
    ) -> Vec<RangeSeries> {
        self.0
            .query_range(expr, start_ms, end_ms, step_ms)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn scalar(&self, expr: &str, at_ms: i64) -> Option<f64> {
        let r = self.query(expr, at_ms);
        assert!(r.len() <= 1, "{expr}: {} results", r.len());
        r.first().map(|x| x.1)
    }
}

fn labels_of(store: &Store, sid: SeriesId) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = store
        .labels(sid)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    m.insert("__name__".into(), store.series_name(sid).to_string());
    m
}

fn instance_of(store: &Store, target: TargetId) -> String {
    store
        .target_labels(target)
        .find(|(k, _)| *k == "instance")
        .map(|(_, v)| v.to_string())
        .expect("every target has an instance label")
}

fn selector(name: &str, store: &Store, target: TargetId) -> String {
    format!(
        "{{__name__=\"{name}\",instance=\"{}\"}}",
        instance_of(store, target)
    )
}

fn close(ours: f64, theirs: f64) -> bool {
    if ours == theirs {
        return true;
    }
    let scale = ours.abs().max(theirs.abs());
    (ours - theirs).abs() <= 1e-9 * scale
}

/// What one bundle's comparison found.
#[derive(Default)]
struct Tally {
    compared: usize,
    by_kind: BTreeMap<&'static str, usize>,
    reset_windows: usize,
    /// Windows whose new process started inside them after the server was
    /// down: ours counts from that start, Prometheus from the old process's
    /// last point (the drop makes it count the new value from zero).
    restart_windows: usize,
    /// Windows with a gap ours does not bridge (an interval too long), compared
    /// run by run.
    gap_windows: usize,
    mismatches: Vec<String>,
}

impl Tally {
    fn check(&mut self, kind: &'static str, what: &str, ours: Option<f64>, theirs: Option<f64>) {
        self.compared += 1;
        *self.by_kind.entry(kind).or_default() += 1;
        let ok = match (ours, theirs) {
            (Some(a), Some(b)) => close(a, b) || (a.is_nan() && b.is_nan()),
            (None, None) => true,
            // Prometheus answers NaN where we say "no data".
            (None, Some(b)) => b.is_nan(),
            (Some(_), None) => false,
        };
        if !ok {
            self.mismatches
                .push(format!("{what}: ours {ours:?}, Prometheus {theirs:?}"));
        }
    }
}

/// The Prometheus range that holds what ours counts in window `w` (last
/// point `t`) of a series whose new process started inside the window after
/// the server was down: from the old process's last point, so that the drop
/// makes Prometheus count the new value from zero, as ours does from the
/// start. `None` for every other window (the range is then what ours covers).
fn restart_span(
    q: &Query,
    sid: SeriesId,
    path: &vllm_lens_core::query::counter::CounterPath,
    w: usize,
    t: i64,
) -> Option<i64> {
    let known = q.known_resets(sid);
    let grid = q.grid();
    path.gaps.iter().find_map(|&(pt, t1)| {
        let latest = known.started.iter().copied().rfind(|&s| s <= t1);
        let started_here = latest.is_some_and(|s| s > pt && grid.index(s) == Some(w));
        (grid.index(t1) == Some(w) && started_here).then_some(t - pt)
    })
}

/// The runs of intervals ours attributes to window `w` (those ending in
/// it), split where a gap (an interval too long to bridge) lies: `(from,
/// to)` per run. Prometheus bridges every gap, so a window with one is
/// compared run by run.
fn runs(times: &[i64], gaps: &[(i64, i64)], q: &Query, w: usize) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for pair in times.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if q.grid().index(b) != Some(w) || gaps.contains(&(a, b)) {
            continue;
        }
        match out.last_mut() {
            Some(r) if r.1 == a => r.1 = b,
            _ => out.push((a, b)),
        }
    }
    out
}

/// True when a gap ends in window `w`: ours then leaves it out.
fn gap_in(gaps: &[(i64, i64)], q: &Query, w: usize) -> bool {
    gaps.iter().any(|&(_, b)| q.grid().index(b) == Some(w))
}

/// `increase(sel[…])` over `runs` as one PromQL expression: each run's
/// increase at its own end (the `@` modifier), summed.
fn increase_over(sel: &str, runs: &[(i64, i64)]) -> String {
    runs.iter()
        .map(|&(a, b)| {
            format!(
                "increase({sel}[{}ms] @ {}.{:03})",
                b - a,
                b / 1000,
                b % 1000
            )
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The last sample time of `target` in window `w`.
fn last_in_window(store: &Store, target: TargetId, q: &Query, w: usize) -> Option<i64> {
    let (a, b) = q.grid().bounds(w);
    store
        .target(target)
        .sample_times()
        .iter()
        .copied()
        .rfind(|&t| t >= a && t < b)
}

fn first_in_window(times: &[i64], q: &Query, w: usize) -> Option<i64> {
    let (a, b) = q.grid().bounds(w);
    times.iter().copied().find(|&t| t >= a && t < b)
}

const COUNTERS: [Signal; 11] = [
    Signal::PromptTokens,
    Signal::EstimatedFlops,
    Signal::EstimatedReadBytes,
    Signal::AdmissionRejections,
    Signal::GenerationTokens,
    Signal::FinishedRequests,
    Signal::Preemptions,
    Signal::PrefixHits,
    Signal::PrefixQueries,
    Signal::HttpRequests,
    Signal::Energy,
];

const HISTOGRAMS: [Signal; 9] = [
    Signal::Ttft,
    Signal::PrefillTime,
    Signal::DecodeTime,
    Signal::RequestPromptTokens,
    Signal::RequestGenerationTokens,
    Signal::InterTokenLatency,
    Signal::QueueTime,
    Signal::E2eTime,
    Signal::IterationTokens,
];

const GAUGES: [Signal; 9] = [
    Signal::Running,
    Signal::Waiting,
    Signal::WaitingCapacity,
    Signal::FbUsed,
    Signal::TensorActive,
    Signal::DramActive,
    Signal::KvUsage,
    Signal::GpuUtil,
    Signal::Power,
];

/// The engine read as Prometheus reads: a series born mid-capture is not
/// counted from zero (docs/decisions.md, "Our windows and Prometheus'").
fn as_prometheus<'a>(store: &'a Store, catalogue: &'a Catalogue) -> Query<'a> {
    let settings = Settings {
        count_series_births: false,
        ..Settings::default()
    };
    Query::new(store, catalogue, settings).expect("grid")
}

/// Compares every figure of one bundle; returns the tally.
fn compare(name: &str) -> Tally {
    let loaded = load_sample(name);
    let store = &loaded.store;
    let catalogue = Catalogue::resolve(store);
    let q = as_prometheus(store, &catalogue);
    let prom = Prometheus::start(name, store);
    let mut tally = Tally::default();

    // Counters, series by series: increase and rate.
    for signal in COUNTERS {
        let r = catalogue.get(signal);
        if r.targets
            .iter()
            .any(|t| signal.info().candidates[t.candidate].kind != Kind::Counter)
        {
            continue;
        }
        for choice in &r.targets {
            let sname_of = |sid: SeriesId| store.series_name(sid).to_string();
            let mut names: Vec<String> = choice.series.iter().map(|&s| sname_of(s)).collect();
            names.sort();
            names.dedup();
            let path: BTreeMap<SeriesId, _> = choice
                .series
                .iter()
                .map(|&s| (s, q.counter_series(s, r.source)))
                .collect();
            for w in q.grid().windows() {
                let Some(t) = last_in_window(store, choice.target, &q, w) else {
                    continue;
                };
                for sname in &names {
                    let ours: Vec<(SeriesId, _, Option<i64>)> = path
                        .iter()
                        .filter(|(s, _)| sname_of(**s) == *sname)
                        .filter_map(|(s, p)| {
                            p.windows[w].map(|x| (*s, x, restart_span(&q, *s, p, w, t)))
                        })
                        .collect();
                    let sel = selector(sname, store, choice.target);
                    // One query per range: series of this name whose last
                    // point is `t` and that cover the same span share it.
                    let mut answers: BTreeMap<i64, (Vec<_>, Vec<_>)> = BTreeMap::new();
                    for (sid, x, restart) in &ours {
                        let gaps = &path[sid].gaps;
                        if restart.is_none() && gap_in(gaps, &q, w) {
                            // A gap ours does not bridge: Prometheus, run by run.
                            let rs = runs(store.series(*sid).times(), gaps, &q, w);
                            let covered: i64 = rs.iter().map(|r| r.1 - r.0).sum();
                            let what = format!(
                                "{name} w{w} increase {} (runs around a gap)",
                                want_label_text(&labels_of(store, *sid))
                            );
                            tally.check(
                                "span",
                                &what,
                                Some(x.covered_ms as f64),
                                Some(covered as f64),
                            );
                            let inc = increase_over(&selector(sname, store, choice.target), &rs);
                            let mut want = labels_of(store, *sid);
                            want.remove("__name__");
                            let theirs = prom
                                .query(&inc, t)
                                .into_iter()
                                .find(|(l, _)| *l == want)
                                .map(|x| x.1);
                            tally.check("increase", &what, Some(x.increase), theirs);
                            tally.check(
                                "rate",
                                &format!("{what} (rate)"),
                                x.rate(),
                                theirs.map(|v| v / (covered as f64 / 1000.0)),
                            );
                            tally.gap_windows += 1;
                            continue;
                        }
                        let span = restart.unwrap_or(x.covered_ms);
                        let (inc, rate) = answers.entry(span).or_insert_with(|| {
                            (
                                prom.query(&format!("increase({sel}[{span}ms])"), t),
                                prom.query(&format!("rate({sel}[{span}ms])"), t),
                            )
                        });
                        let want = labels_of(store, *sid);
                        let mut want_no_name = want.clone();
                        want_no_name.remove("__name__");
                        let find = |v: &[(BTreeMap<String, String>, f64)]| {
                            v.iter().find(|(l, _)| *l == want_no_name).map(|x| x.1)
                        };
                        let what = format!("{name} w{w} increase {}", want_label_text(&want));
                        tally.check("increase", &what, Some(x.increase), find(inc));
                        if restart.is_some() {
                            // Ours is a rate over the new process's life in
                            // the window; Prometheus' includes the down time.
                            tally.restart_windows += 1;
                        } else {
                            tally.check("rate", &format!("{what} (rate)"), x.rate(), find(rate));
                        }
                        tally.reset_windows += usize::from(x.resets > 0);
                    }
                }
            }
        }
    }

    // Histograms per replica, summed over its instances: average and quantiles.
    for signal in HISTOGRAMS {
        let r = catalogue.get(signal);
        for (target_name, h) in q.histogram_per_target(signal) {
            let choice = r
                .targets
                .iter()
                .find(|t| t.target_name == target_name)
                .expect("target");
            let Some(windows) = h.combined() else {
                continue;
            };
            let family = &choice.family;
            let inst = format!("instance=\"{}\"", instance_of(store, choice.target));
            for (w, hw) in windows.iter().enumerate() {
                let Some(hw) = hw else { continue };
                let Some(t) = last_in_window(store, choice.target, &q, w) else {
                    continue;
                };
                let restart = choice
                    .series
                    .first()
                    .and_then(|&sid| restart_span(&q, sid, &q.counter_series(sid, r.source), w, t));
                let span = restart.unwrap_or(hw.covered_ms);
                // A gap ours does not bridge: Prometheus, run by run.
                let gapped = restart.is_none().then(|| {
                    let sid = *choice.series.first()?;
                    let gaps = q.counter_series(sid, r.source).gaps;
                    gap_in(&gaps, &q, w).then(|| runs(store.series(sid).times(), &gaps, &q, w))
                });
                let inc = |sel: String| match gapped.clone().flatten() {
                    Some(rs) => increase_over(&sel, &rs),
                    None => format!("increase({sel}[{span}ms])"),
                };
                if gapped.clone().flatten().is_some() {
                    tally.gap_windows += 1;
                }
                let sum = format!(
                    "sum({})",
                    inc(format!("{{__name__=\"{family}_sum\",{inst}}}"))
                );
                let count = format!(
                    "sum({})",
                    inc(format!("{{__name__=\"{family}_count\",{inst}}}"))
                );
                tally.check(
                    "histogram average",
                    &format!("{name} {target_name} w{w} avg {family}"),
                    hw.avg(),
                    prom.scalar(&format!("{sum} / {count}"), t)
                        .filter(|v| !v.is_nan()),
                );
                for quant in [0.5, 0.95, 0.99] {
                    let expr = format!(
                        "histogram_quantile({quant}, sum by (le) ({}))",
                        inc(format!("{{__name__=\"{family}_bucket\",{inst}}}"))
                    );
                    tally.check(
                        "histogram quantile",
                        &format!("{name} {target_name} w{w} p{} {family}", quant * 100.0),
                        hw.quantile(quant).map(|x| x.value),
                        prom.scalar(&expr, t),
                    );
                }
            }
        }
    }

    // Gauges, series by series: max and mean over the window's samples.
    for signal in GAUGES {
        let r = catalogue.get(signal);
        for sid in r.series() {
            let s = store.series(sid);
            let stats =
                vllm_lens_core::query::gauge::gauge_windows(s.times(), s.values(), q.grid());
            let mut want = labels_of(store, sid);
            let sname = want.remove("__name__").unwrap_or_default();
            let sel = format!(
                "{{__name__=\"{sname}\",{}}}",
                want.iter()
                    .map(|(k, v)| format!(
                        "{k}=\"{}\"",
                        v.replace('\\', "\\\\").replace('"', "\\\"")
                    ))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            for (w, st) in stats.iter().enumerate() {
                let Some(st) = st else { continue };
                let t = s
                    .times()
                    .iter()
                    .copied()
                    .rfind(|&x| q.grid().index(x) == Some(w))
                    .expect("a point in the window");
                let first = first_in_window(s.times(), &q, w).expect("first");
                let span = (t - first).max(1);
                tally.check(
                    "max_over_time",
                    &format!("{name} w{w} max {sname}"),
                    Some(st.max),
                    prom.scalar(&format!("max_over_time({sel}[{span}ms])"), t),
                );
                tally.check(
                    "avg_over_time",
                    &format!("{name} w{w} mean {sname}"),
                    Some(st.mean),
                    prom.scalar(&format!("avg_over_time({sel}[{span}ms])"), t),
                );
            }
        }
    }
    tally
}

fn want_label_text(l: &BTreeMap<String, String>) -> String {
    l.iter()
        .filter(|(k, _)| !["job", "model_name"].contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn run(name: &str) -> Option<Tally> {
    if !oracle_available() {
        return None;
    }
    let tally = compare(name);
    println!(
        "oracle {name}: {} figures compared ({}), {} counter windows across a reset ({} after a restart from down), {} windows around a gap compared run by run, {} differ",
        tally.compared,
        tally
            .by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", "),
        tally.reset_windows,
        tally.restart_windows,
        tally.gap_windows,
        tally.mismatches.len()
    );
    for kind in [
        "increase",
        "rate",
        "histogram average",
        "histogram quantile",
        "max_over_time",
        "avg_over_time",
    ] {
        assert!(
            tally.by_kind.get(kind).copied().unwrap_or(0) >= 20,
            "{name}: too few {kind} figures compared: {:?}",
            tally.by_kind
        );
    }
    assert!(
        tally.mismatches.is_empty(),
        "{name}: {} of {} figures differ from Prometheus:\n{}",
        tally.mismatches.len(),
        tally.compared,
        tally.mismatches[..tally.mismatches.len().min(20)].join("\n")
    );
    Some(tally)
}

#[test]
fn prometheus_agrees_on_the_reference_ramp() {
    run("a10g-qwen3b-ramp");
}

#[test]
fn prometheus_agrees_across_the_pod_restart() {
    if let Some(t) = run("pod-restart") {
        assert!(
            t.reset_windows >= 5,
            "the restart was compared: {}",
            t.reset_windows
        );
    }
}

#[test]
fn prometheus_agrees_on_the_saturated_server() {
    run("saturated");
}

#[test]
fn prometheus_agrees_on_errors_and_aborts() {
    run("errors-aborts");
}

#[test]
fn prometheus_agrees_on_two_replicas() {
    run("two-replicas-rr");
}

/// On a jittered capture with gaps, `increase(x[1m])` extrapolates to the
/// range's edges; ours covers exactly the intervals that end in the window.
/// This prints how far apart the two are (docs/decisions.md explains).
#[test]
fn jitter_gaps_extrapolation_is_measured() {
    if !oracle_available() {
        return;
    }
    let name = "jitter-gaps";
    let loaded = load_sample(name);
    let store = &loaded.store;
    let catalogue = Catalogue::resolve(store);
    let q = Query::new(store, &catalogue, Settings::default()).expect("grid");
    let prom = Prometheus::start(name, store);
    // The largest difference per family, %.
    let mut worst: BTreeMap<String, f64> = BTreeMap::new();
    let mut lines = Vec::new();
    for signal in [Signal::GenerationTokens, Signal::Energy] {
        let ours = q.counter(signal);
        let r = catalogue.get(signal);
        let choice = &r.targets[0];
        let fam = store.series_name(choice.series[0]).to_string();
        for w in q.grid().windows() {
            let Some(t) = last_in_window(store, choice.target, &q, w) else {
                lines.push(format!(
                    "{fam} w{w}: no scrape (ours: gap; Prometheus: nothing)"
                ));
                continue;
            };
            let Some(x) = ours.windows[w] else { continue };
            let theirs = prom.scalar(
                &format!("sum(rate({}[1m]))", selector(&fam, store, choice.target)),
                t,
            );
            let ours_rate = x.rate().expect("rate");
            if let Some(theirs) = theirs {
                let d = (theirs - ours_rate) / ours_rate * 100.0;
                let e = worst.entry(fam.clone()).or_default();
                *e = e.max(d.abs());
                lines.push(format!(
                    "{fam} w{w}: ours {ours_rate:.3}/s over {:.1} s, Prometheus rate[1m] {theirs:.3}/s ({d:+.2} %)",
                    x.covered_ms as f64 / 1000.0
                ));
            }
        }
    }
    println!("{}", lines.join("\n"));
    println!("jitter-gaps: largest difference from Prometheus' rate[1m]: {worst:.2?} %");
    // What docs/decisions.md states: generated tokens/s within 1.1 % (the
    // jitter alone), DCGM energy up to 35 % (its 30-s refresh), and never 0:
    // the comparison saw the extrapolation it documents.
    let generated = worst["vllm:generation_tokens_total"];
    let energy = worst["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"];
    assert!(
        generated > 0.0 && generated <= 1.1,
        "generated tokens/s: {generated} %"
    );
    assert!(energy > 5.0 && energy <= 35.0, "energy: {energy} %");
}

/// The parts of a snippet's text the oracle needs: an alert's `for:` (ms)
/// or a trigger's `metricType` and `threshold`.
fn snippet_params(text: &str) -> (Option<i64>, Option<(String, f64)>) {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(key)
                .map(|v| v.trim().trim_matches('"').to_string())
        })
    };
    let for_ms = field("for:").map(|v| {
        let (n, unit) = v.split_at(v.len() - 1);
        let n: i64 = n.parse().expect("a duration");
        n * match unit {
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => panic!("unit {unit}"),
        }
    });
    let trigger = field("metricType:").map(|t| {
        (
            t,
            field("threshold:")
                .expect("a threshold")
                .parse()
                .expect("a number"),
        )
    });
    (for_ms, trigger)
}

/// Every alert rule and autoscaling trigger the report offers passes
/// `promtool check rules` (rules), and Prometheus 2.42, range-querying its
/// `expr` (or the trigger's `query`) at the window's step, at each window's
/// end, over the
/// backfilled capture, fires it in exactly the windows the report says
/// (`check.fired_at`): an alert once its `expr` held for its `for:`, a
/// trigger when the HPA formula (10 % tolerance, 5-minute scale-down
/// stabilisation) asks for more replicas than the capture had. The queue
/// alert fires on `saturated` and never on `a10g-qwen3b-ramp`.
#[test]
fn snippets_fire_where_prometheus_says() {
    if !oracle_available() {
        return;
    }
    let dir = temp_dir("oracle-rules");
    let mut rules_checked = 0;
    let mut compared = 0;
    let mut queue_alert: BTreeMap<&str, usize> = BTreeMap::new();
    for name in [
        "saturated",
        "a10g-qwen3b-ramp",
        "pod-restart",
        "two-replicas-rr",
        "v0-legacy",
        "rag-prefill-bound",
    ] {
        let loaded = load_sample(name);
        let report = vllm_lens_core::analysis::analyse(
            &loaded,
            &vllm_lens_core::analysis::BundleMeta::default(),
            &vllm_lens_core::analysis::Settings::default(),
        )
        .expect("report");
        let snippets: Vec<_> = report
            .alerts
            .iter()
            .chain(
                report
                    .recommendations
                    .iter()
                    .flat_map(|r| r.snippets.iter()),
            )
            .collect();
        for (i, s) in snippets.iter().enumerate() {
            if s.kind != "prometheus-rule" {
                continue;
            }
            let path = dir.join(format!("{name}-{i}.yml"));
            std::fs::write(&path, &s.text).expect("write rule");
            let out = std::process::Command::new("promtool")
                .args(["check", "rules"])
                .arg(&path)
                .output()
                .expect("promtool runs");
            assert!(
                out.status.success(),
                "{name}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                s.text
            );
            rules_checked += 1;
        }
        let prom = Prometheus::start(&format!("snippets-{name}"), &loaded.store);
        let ends: Vec<i64> = report
            .rows
            .latency
            .iter()
            .filter(|r| r.key.replica.is_fleet())
            .map(|r| r.key.window_end_ms)
            .collect();
        let replicas = report.deployment.replicas.len().max(1) as f64;
        for s in &snippets {
            let (for_ms, trigger) = snippet_params(&s.text);
            // One range query over the window ends, at the window's step.
            let step = report.settings.window_ms;
            let matrix = prom.query_range(&s.expr, ends[0], ends[ends.len() - 1], step);
            let at = |t: i64| -> Vec<(String, f64)> {
                matrix
                    .iter()
                    .filter_map(|(labels, points)| {
                        points
                            .iter()
                            .find(|p| p.0 == t)
                            .map(|p| (format!("{labels:?}"), p.1))
                    })
                    .collect()
            };
            let mut fired = Vec::new();
            if s.kind == "prometheus-rule" {
                let for_ms = for_ms.expect("an alert has for:");
                let mut active: BTreeMap<String, i64> = BTreeMap::new();
                for &t in &ends {
                    let holds: Vec<String> = at(t).into_iter().map(|x| x.0).collect();
                    active.retain(|k, _| holds.contains(k));
                    for k in holds {
                        active.entry(k).or_insert(t);
                    }
                    if active.values().any(|&since| t - since >= for_ms) {
                        fired.push(t);
                    }
                }
                if s.name == "VllmRequestsQueueing" {
                    queue_alert.insert(name, fired.len());
                }
            } else {
                let (kind, target) = trigger.expect("a trigger has metricType and threshold");
                let mut desired: Vec<(i64, u64)> = Vec::new();
                for &t in &ends {
                    let values = at(t);
                    assert!(values.len() <= 1, "{}: one value per time", s.expr);
                    let Some(v) = values.first().map(|x| x.1) else {
                        continue;
                    };
                    let (ratio, want) = match kind.as_str() {
                        "AverageValue" => ((v / replicas) / target, (v / target).ceil()),
                        "Value" => (v / target, (replicas * v / target).ceil()),
                        other => panic!("metricType {other}"),
                    };
                    let d = if (ratio - 1.0).abs() <= 0.1 {
                        replicas
                    } else {
                        want.max(1.0)
                    };
                    desired.push((t, d as u64));
                    let held = desired
                        .iter()
                        .filter(|(u, _)| *u > t - 300_000)
                        .map(|x| x.1)
                        .max()
                        .unwrap_or(0);
                    if held > replicas as u64 {
                        fired.push(t);
                    }
                }
            }
            assert_eq!(
                fired, s.check.fired_at,
                "{name}: {} `{}`: Prometheus fires at {fired:?}, the report says {:?}",
                s.kind, s.expr, s.check.fired_at
            );
            assert_eq!(s.check.windows_fired, fired.len());
            assert_eq!(s.check.windows_total, ends.len());
            compared += 1;
        }
    }
    println!(
        "snippets: {compared} compared with Prometheus, {rules_checked} rule files checked; queue alert windows fired: {queue_alert:?}"
    );
    assert!(
        rules_checked >= 10,
        "only {rules_checked} rule files checked"
    );
    assert!(
        queue_alert.get("saturated").is_some_and(|&n| n > 0),
        "{queue_alert:?}"
    );
    assert_eq!(
        queue_alert.get("a10g-qwen3b-ramp"),
        Some(&0),
        "{queue_alert:?}"
    );
}

/// The committed captures from a real vLLM server (`samples/real/`).
fn real_captures() -> Vec<String> {
    let dir = crate::support::root().join("samples/real");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_suffix(".zip").map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Every real capture, figure by figure; the restart's windows included.
#[test]
fn prometheus_agrees_on_the_real_captures() {
    let names = real_captures();
    assert!(names.len() >= 6, "real captures: {names:?}");
    for name in names {
        let Some(t) = run(&format!("real/{name}")) else {
            return;
        };
        if name == "restart" {
            assert!(
                t.reset_windows >= 1 && t.restart_windows >= 1,
                "the restart was compared: {} reset windows, {} after the down time",
                t.reset_windows,
                t.restart_windows
            );
        }
    }
}

/// A capture across a restart after down time: the old process counted to
/// `old_last` (scrapes every 5 s from 0 to 60 s), nothing answered from 65
/// to 120 s, and the new process started at 122 s, first scraped at 125 s
/// with `new_first`, then counting 2 per scrape.
fn restart_bundle(old_last: f64, new_first: f64) -> vllm_lens_core::Loaded {
    use crate::support::{T0, zip};
    let scrape = |count: f64, start_s: i64| {
        format!(
            "# HELP vllm:request_success_total Count of successfully processed requests.\n\
             # TYPE vllm:request_success_total counter\n\
             vllm:request_success_total{{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"}} {count:?}\n\
             # HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n\
             # TYPE process_start_time_seconds gauge\n\
             process_start_time_seconds {start_s}.0\n"
        )
    };
    let mut files = Vec::new();
    let old_start = (T0 - 300_000) / 1000;
    for i in 0..=12 {
        let t = T0 + i * 5_000;
        let v = old_last - 2.0 * (12 - i) as f64;
        files.push((format!("vllm/{t}.prom"), scrape(v, old_start).into_bytes()));
    }
    let new_start = (T0 + 122_000) / 1000;
    for i in 0..=10 {
        let t = T0 + 125_000 + i * 5_000;
        let v = new_first + 2.0 * i as f64;
        files.push((format!("vllm/{t}.prom"), scrape(v, new_start).into_bytes()));
    }
    vllm_lens_core::load(
        vllm_lens_core::Input::Bytes {
            name: "restart.zip",
            bytes: &zip(&files, true),
            mtime_ms: None,
        },
        &vllm_lens_core::Options::default(),
    )
    .expect("loads")
}

/// Ours and Prometheus' increase of the finished-requests counter in the
/// window of the new process's start (120–180 s), Prometheus' range reaching
/// back to the old process's last point (60 s).
fn restart_window_increase(old_last: f64, new_first: f64) -> (f64, Option<f64>) {
    use crate::support::T0;
    let loaded = restart_bundle(old_last, new_first);
    let store = &loaded.store;
    let catalogue = Catalogue::resolve(store);
    let q = as_prometheus(store, &catalogue);
    let r = catalogue.get(Signal::FinishedRequests);
    let sid = r.series().next().expect("the counter");
    let path = q.counter_series(sid, r.source);
    let w = q.grid().index(T0 + 122_000).expect("a window");
    let ours = path.windows[w].expect("the window counts the new process");
    let t = T0 + 175_000;
    assert_eq!(restart_span(&q, sid, &path, w, t), Some(t - (T0 + 60_000)));
    if !oracle_available() {
        return (ours.increase, None);
    }
    let prom = Prometheus::start("restart-exception", store);
    let sel = selector("vllm:request_success_total", store, r.targets[0].target);
    let theirs = prom
        .scalar(&format!("sum(increase({sel}[{}ms]))", t - (T0 + 60_000)), t)
        .expect("Prometheus answers");
    (ours.increase, Some(theirs))
}

/// Where the new process's first value is below the old one's last,
/// Prometheus sees the drop and counts the new value from zero, as ours
/// does from the process start; where it is not below, Prometheus 2.42
/// (which ignores `_created` and `process_start_time_seconds`) takes the
/// difference, and the two differ by the old value. docs/semantics.md
/// records this exception.
#[test]
fn a_restart_agrees_with_prometheus_only_when_the_counter_drops() {
    // Dropped: old 124, new first 3 → both 3 + 10 × 2 = 23 in 125–175 s.
    let (ours, theirs) = restart_window_increase(124.0, 3.0);
    assert_eq!(ours, 23.0);
    if let Some(theirs) = theirs {
        assert!(close(theirs, 23.0), "Prometheus says {theirs}");
    }
    // Not dropped: old 24, new first 30 → ours 30 + 20 = 50 from zero;
    // Prometheus (30 − 24) + 20 = 26.
    let (ours, theirs) = restart_window_increase(24.0, 30.0);
    assert_eq!(ours, 50.0);
    if let Some(theirs) = theirs {
        assert!(close(theirs, 26.0), "Prometheus says {theirs}");
    }
}
