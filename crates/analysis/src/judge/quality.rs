//! Data quality: what each analysis rests on, and everything that makes a
//! figure less certain (missing metrics, fallbacks, resets, gaps, clock
//! skew, duplicates, bucket layouts, known bugs of the release, repeated
//! DCGM values, unreadable lines).

use std::collections::BTreeMap;

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Engine, Signal, Source, Status, Version};
use vllm_lens_query::Query;

use crate::judge::analyses::RUNS;
use crate::measure::inputs::{COUNTERS, HISTOGRAMS};
use crate::model::{AnalysisInputs, DataQuality, MetricStatus, QualityKind, QualityNote};

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Found => "found",
        Status::Aliased => "aliased",
        Status::Missing => "missing",
    }
}

fn note(kind: QualityKind, subject: &str, message: String) -> QualityNote {
    QualityNote {
        kind,
        subject: subject.to_string(),
        message,
    }
}

/// Share of consecutive equal values in a series.
fn repeats(values: &[f64]) -> f64 {
    if values.len() < 3 {
        return 0.0;
    }
    let same = values.windows(2).filter(|w| w[0] == w[1]).count();
    same as f64 / (values.len() - 1) as f64
}

/// The histograms whose buckets were not cumulative somewhere (Prometheus
/// forces them monotonic before reading a quantile).
pub(crate) fn non_cumulative(whole: &crate::measure::inputs::Inputs) -> Vec<Signal> {
    let mut out: Vec<Signal> = whole
        .hists
        .iter()
        .filter(|(_, h)| {
            [0.5, 0.95, 0.99]
                .iter()
                .any(|&p| h.quantile(p).is_some_and(|x| x.forced_monotonic))
        })
        .map(|(s, _)| *s)
        .collect();
    out.sort();
    out
}

/// What the figures rest on, stage by stage.
pub(crate) fn data_quality(
    loaded: &Loaded,
    cat: &Catalogue,
    q: &Query<'_>,
    layout_mismatch: &[Signal],
    non_cumulative: &[Signal],
    requested_window_ms: i64,
    restarts: &[&str],
) -> DataQuality {
    let store = &loaded.store;
    let mut notes = Vec::new();
    let version = version(loaded, cat);
    provenance(loaded, q, requested_window_ms, &mut notes);
    releases(cat, &mut notes);
    let inputs = inputs(cat);
    signals(loaded, cat, &mut notes);
    let resets = resets(q, restarts, &mut notes);
    let gap_windows = gaps(q, &mut notes);
    store_notes(store, layout_mismatch, non_cumulative, &mut notes);
    known_bugs(cat, stated_version(loaded), &mut notes);
    collect_interval(store, cat, q, &mut notes);
    let diagnostics = loaded.diagnostics.len();
    for d in loaded.diagnostics.iter().take(10) {
        notes.push(note(QualityKind::Diagnostic, &d.file, d.to_string()));
    }
    let inventory = cat
        .signals
        .iter()
        .map(|r| MetricStatus {
            signal: r.key.to_string(),
            status: status_word(r.status).to_string(),
            used: r.used.iter().map(|n| n.to_string()).collect(),
            notes: r.notes.clone(),
        })
        .collect();
    DataQuality {
        vllm_version: version,
        inputs,
        inventory,
        notes,
        resets,
        restarts: restarts.len(),
        gap_windows,
        diagnostics,
    }
}

/// The release, inferred and as the server states it.
fn version(loaded: &Loaded, cat: &Catalogue) -> String {
    let era = &cat.era;
    let version = match (era.engine, era.range_text()) {
        (Engine::V0, Some(r)) => format!("V0 engine, vLLM {r}"),
        (Engine::V1, Some(r)) => format!("V1 engine, vLLM {r}"),
        (_, Some(r)) => format!("vLLM {r}"),
        (_, None) if era.mixed => "mixed: targets of different releases".to_string(),
        _ => "unknown".to_string(),
    };
    // What the server said of itself (collect.sh asks `/version`).
    let stated = loaded
        .manifest
        .as_ref()
        .and_then(|m| m.environment.as_ref())
        .and_then(|e| e.vllm_version.as_deref());
    match stated {
        Some(v) => format!("{version}; the server says {v}"),
        None => version,
    }
}

/// Where the data came from: Prometheus API answers, a pushdown export.
fn provenance(
    loaded: &Loaded,
    q: &Query<'_>,
    requested_window_ms: i64,
    notes: &mut Vec<QualityNote>,
) {
    if loaded.api_answers > 0 {
        notes.push(note(
            QualityKind::PrometheusExport,
            "bundle",
            format!(
                "read from {} Prometheus API answer(s), not from scrapes: Prometheus keeps no HELP or TYPE (counters and histograms are recognised by their names) and no capture manifest (targets are named by their instance; the vLLM version, model and GPUs come from the series alone)",
                loaded.api_answers
            ),
        ));
    }
    if let Some(p) = loaded.store.pushed_width_ms() {
        let width = q.grid().width_ms;
        let raised = if width != requested_window_ms {
            format!(
                "; the report's windows are {} (the {} asked for, rounded up to whole exported windows)",
                crate::text::prom_duration(width),
                crate::text::prom_duration(requested_window_ms)
            )
        } else {
            String::new()
        };
        notes.push(note(
            QualityKind::Pushdown,
            "bundle",
            format!(
                "pushed down at {}: Prometheus computed each gauge's min, max, mean and point count per {} window and each counter came as its last value per window (raw samples only in windows where a counter reset or began), so increases, rates and quantiles are exact but per-scrape detail is gone: gaps shorter than about two windows are not seen, \"queued at two consecutive scrapes\" reads two consecutive windows, and the alert checks replay {}-spaced points{}",
                crate::text::prom_duration(p),
                crate::text::prom_duration(p),
                crate::text::prom_duration(p),
                raised
            ),
        ));
    }
}

/// Releases that differ between targets or contradict themselves.
fn releases(cat: &Catalogue, notes: &mut Vec<QualityNote>) {
    let era = &cat.era;
    if era.mixed {
        notes.push(note(
            QualityKind::Version,
            "bundle",
            "vLLM targets of different releases share this bundle; fleet figures mix them".into(),
        ));
    }
    for t in &era.targets {
        if !t.consistent {
            notes.push(note(
                QualityKind::Version,
                &t.target,
                format!(
                    "the version markers of {} contradict each other (edited or merged data?)",
                    t.target
                ),
            ));
        }
    }
}

/// What each analysis reads, and whether it was found.
fn inputs(cat: &Catalogue) -> Vec<AnalysisInputs> {
    let inputs: Vec<AnalysisInputs> = RUNS
        .iter()
        .map(|step| AnalysisInputs {
            analysis: step.id,
            metrics: step
                .inputs
                .iter()
                .map(|s| {
                    let r = cat.get(*s);
                    MetricStatus {
                        signal: r.key.to_string(),
                        status: status_word(r.status).to_string(),
                        used: r.used.iter().map(|n| n.to_string()).collect(),
                        notes: r.notes.clone(),
                    }
                })
                .collect(),
        })
        .collect();
    inputs
}

/// Fallbacks, duplicates, a CPU server, and missing inputs.
fn signals(loaded: &Loaded, cat: &Catalogue, notes: &mut Vec<QualityNote>) {
    for r in &cat.signals {
        if r.status == Status::Aliased {
            notes.push(note(
                QualityKind::Fallback,
                r.key,
                format!("{} read from {}", r.title, r.used.join(", ")),
            ));
        }
        for n in &r.notes {
            if n.contains("duplicate series") {
                notes.push(note(QualityKind::DuplicateSeries, r.key, n.clone()));
            }
        }
    }
    // A CPU server (as the manifest states): no GPU, so no DCGM; one note
    // instead of one per GPU figure.
    let cpu = loaded
        .manifest
        .as_ref()
        .and_then(|m| m.environment.as_ref())
        .and_then(|e| e.device.as_deref())
        == Some("cpu")
        && !cat
            .signals
            .iter()
            .any(|r| r.source == Source::Dcgm && r.status != Status::Missing);
    if cpu {
        notes.push(note(
            QualityKind::CpuServer,
            "device",
            "A CPU server (the manifest says device: cpu): no GPU, so the DCGM figures (GPU activity, VRAM, power, energy) do not apply".into(),
        ));
    }
    for step in &RUNS {
        let analysis = step.id;
        for s in step.inputs {
            let r = cat.get(*s);
            if cpu && r.source == Source::Dcgm {
                continue;
            }
            // Absent by design: no XID so far, fault fields where the GPU
            // or the field list has none; the V0 lifetime gauge where the
            // windowed counters exist.
            let expected_absent = matches!(
                s,
                Signal::Xid
                    | Signal::EccDbe
                    | Signal::UncorrectableRemappedRows
                    | Signal::RowRemapFailure
                    | Signal::ClockEventReasons
            ) || (*s == Signal::PrefixHitRateLifetime
                && cat.get(Signal::PrefixHits).status != Status::Missing);
            if r.status == Status::Missing && !expected_absent {
                notes.push(note(
                    QualityKind::MissingMetric,
                    r.key,
                    format!(
                        "{} ({analysis}) is not in the capture: shown as missing, not as 0",
                        r.title
                    ),
                ));
            }
        }
    }
    notes.dedup();
}

/// Counter resets, and counters that drop far too often. The note counts
/// restarts per process (`restarts`: the replica of each); the series that
/// reset come after, as what the restarts did.
fn resets(q: &Query<'_>, restarts: &[&str], notes: &mut Vec<QualityNote>) -> usize {
    // Resets.
    let mut resets = 0;
    // Scrapes of the busiest target: a counter that drops at a quarter of
    // them is no counter (restarts are rare), whatever Prometheus makes of it.
    let scrapes: u32 = q
        .coverage()
        .iter()
        .map(|c| c.windows.iter().map(|w| w.scrapes).sum::<u32>())
        .max()
        .unwrap_or(0);
    for s in COUNTERS {
        let c = q.counter(s);
        resets += c.resets;
        // Per series: a signal of many series counts each one's drops.
        let n = c.resets / c.series.max(1);
        if n >= 3 && n as u64 * 4 >= u64::from(scrapes) {
            notes.push(note(QualityKind::CounterBackwards,
                s.key(),
                format!(
                    "{}: the counter went backwards {n} times per series in {scrapes} scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)",
                    s.info().title
                ),
            ));
        }
    }
    for s in HISTOGRAMS {
        for g in q.histogram(s).groups {
            resets += g
                .windows
                .iter()
                .flatten()
                .map(|w| w.resets as usize)
                .sum::<usize>();
        }
    }
    if let Some(text) = reset_text(restarts, resets) {
        notes.push(note(QualityKind::Reset, "bundle", text));
    }
    resets
}

/// Windows with missing or failed scrapes, per target.
fn gaps(q: &Query<'_>, notes: &mut Vec<QualityNote>) -> BTreeMap<String, usize> {
    // Gaps.
    let mut gap_windows = BTreeMap::new();
    for cov in q.coverage() {
        let n = cov.windows.iter().filter(|w| w.has_gap()).count();
        gap_windows.insert(cov.target.clone(), n);
        if n > 0 {
            let failed: u32 = cov.windows.iter().map(|w| w.failed).sum();
            notes.push(note(QualityKind::Gap, &cov.target, format!("{n} window(s) with missing or failed scrapes ({failed} failed scrapes recorded); figures there cover less time and outages are not bridged")));
        }
    }
    gap_windows
}

/// Clock skew between targets, duplicate series, bucket layouts, buckets
/// that are not cumulative, non-finite samples.
fn store_notes(
    store: &vllm_lens_store::Store,
    layout_mismatch: &[Signal],
    non_cumulative: &[Signal],
    notes: &mut Vec<QualityNote>,
) {
    // Clock skew between targets: the typical offset between their scrapes.
    let targets = store.targets();
    if targets.len() > 1 {
        let base = targets[0].sample_times();
        for t in &targets[1..] {
            let times = t.sample_times();
            let mut offsets: Vec<i64> = times
                .iter()
                .filter_map(|&x| {
                    let i = base.partition_point(|&b| b < x);
                    [i.checked_sub(1), Some(i)]
                        .into_iter()
                        .flatten()
                        .filter_map(|j| base.get(j))
                        .map(|&b| x - b)
                        .min_by_key(|d| d.abs())
                })
                .collect();
            offsets.sort_unstable();
            if let Some(&median) = offsets.get(offsets.len() / 2)
                && median.abs() >= 5_000
            {
                notes.push(note(QualityKind::ClockSkew, t.name(), format!("{} is scraped {:.1} s apart from {} on median: per-window figures joining the two are offset by that much", t.name(), median as f64 / 1000.0, targets[0].name())));
            }
        }
    }
    for w in store.warnings() {
        notes.push(note(QualityKind::DuplicateSeries, "store", w.to_string()));
    }
    for s in layout_mismatch {
        notes.push(note(QualityKind::BucketLayouts, s.key(), format!("{}: instances with different bucket layouts; quantiles are computed per layout, never across", s.info().title)));
    }
    for s in non_cumulative {
        notes.push(note(QualityKind::NonCumulative, s.key(), format!("{}: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken", s.info().title)));
    }
    if store.non_finite_samples() > 0 {
        notes.push(note(
            QualityKind::NonFinite,
            "bundle",
            format!(
                "{} sample(s) are NaN or ±Inf; figures that rest on them are shown as missing",
                store.non_finite_samples()
            ),
        ));
    }
}

/// The release the server states (`/version` in the manifest), when it
/// reads as one.
fn stated_version(loaded: &Loaded) -> Option<Version> {
    let v = loaded
        .manifest
        .as_ref()?
        .environment
        .as_ref()?
        .vllm_version
        .as_deref()?;
    let mut parts = v
        .trim()
        .trim_start_matches('v')
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u16>().ok());
    Some(Version(
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// Known bugs of the release: the one the server states, else the range
/// the data fits.
fn known_bugs(cat: &Catalogue, stated: Option<Version>, notes: &mut Vec<QualityNote>) {
    let era = &cat.era;
    let range = match stated {
        Some(v) => (Some(v), Some(v)),
        None => (era.min_version, era.max_version),
    };
    if let (Some(lo), Some(hi)) = range {
        let within = |v: Version| lo <= v && v <= hi;
        let overlaps = |a: Version, b: Version| lo <= b && a <= hi;
        if within(Version(0, 5, 1)) {
            notes.push(note(
                QualityKind::KnownBug,
                "ttft",
                "vLLM 0.5.1 reports time to first token as ≈ 0 s (vllm#6337)".into(),
            ));
        }
        if within(Version(0, 5, 3)) {
            notes.push(note(QualityKind::KnownBug, "ttft", "vLLM 0.5.3 counts more TTFT observations than finished requests (vllm#8115): TTFT _count is not a request count".into()));
        }
        if era.engine == Engine::V1 && overlaps(Version(0, 10, 0), Version(0, 34, 0)) {
            notes.push(note(QualityKind::KnownBug, "finished_requests", "client disconnects are not counted as aborts and are missing from per-request histograms (vllm#31503, #55634)".into()));
        }
        if overlaps(Version(0, 20, 0), Version(0, 20, 99)) {
            notes.push(note(
                QualityKind::KnownBug,
                "request_generation_tokens",
                "generated tokens per request drift slightly from the counter in 0.20 (vllm#41368)"
                    .into(),
            ));
        }
    }
}

/// dcgm-exporter's collect interval longer than the scrape interval.
fn collect_interval(
    store: &vllm_lens_store::Store,
    cat: &Catalogue,
    q: &Query<'_>,
    notes: &mut Vec<QualityNote>,
) {
    // dcgm-exporter's collect interval longer than the scrape interval.
    for s in [Signal::Power, Signal::Energy] {
        for sid in cat.get(s).series() {
            let series = store.series(sid);
            let r = repeats(series.values());
            if r >= 0.3 {
                let energy = match (s, crate::measure::inputs::energy_refresh_ms(store, cat)) {
                    (Signal::Energy, Some(ms)) if 2 * ms > q.grid().width_ms => format!(
                        "; the energy counter moves every {}, so tokens per joule is given for the capture and its phases, not for windows shorter than two of its steps",
                        crate::text::ms_text(ms as f64)
                    ),
                    _ => String::new(),
                };
                notes.push(note(QualityKind::CollectInterval, s.key(), format!("{:.0} % of consecutive {} scrapes repeat the last value: dcgm-exporter's collect interval (default 30 s) is longer than the scrape interval, so per-window GPU figures move in steps{energy}", r * 100.0, store.series_name(sid))));
                break;
            }
        }
    }
}

/// The reset note: restarts per process first, then the counter resets
/// they made (every series resets once per restart); resets with no
/// restart seen are said apart.
fn reset_text(restarts: &[&str], resets: usize) -> Option<String> {
    let drops = match resets {
        1 => "1 counter reset".to_string(),
        n => format!("{n} counter resets"),
    };
    if restarts.is_empty() {
        return (resets > 0).then(|| {
            format!(
                "{drops} with no new process seen (no changed process_start_time_seconds): read as restarts from zero, never as negative increases"
            )
        });
    }
    let mut by_replica: Vec<(&str, usize)> = Vec::new();
    for r in restarts {
        match by_replica.iter_mut().find(|(name, _)| name == r) {
            Some((_, n)) => *n += 1,
            None => by_replica.push((r, 1)),
        }
    }
    let who = by_replica
        .iter()
        .map(|(r, n)| match n {
            1 => (*r).to_string(),
            n => format!("{r} {n} times"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let count = match restarts.len() {
        1 => "1 restart of a process".to_string(),
        n => format!("{n} restarts of a process"),
    };
    Some(format!(
        "{count} ({who}), which reset its counters: {drops} across the series (each series once per restart), read as restarts from zero, never as negative increases"
    ))
}

#[cfg(test)]
mod tests {
    use super::reset_text;

    #[test]
    fn restarts_are_counted_per_process_and_series_apart() {
        assert_eq!(
            reset_text(&["vllm-0"], 23).unwrap(),
            "1 restart of a process (vllm-0), which reset its counters: 23 counter resets across the series (each series once per restart), read as restarts from zero, never as negative increases"
        );
        assert!(
            reset_text(&["vllm-0", "vllm-1", "vllm-0"], 40)
                .unwrap()
                .starts_with("3 restarts of a process (vllm-0 2 times, vllm-1), which reset")
        );
        assert!(
            reset_text(&[], 2)
                .unwrap()
                .starts_with("2 counter resets with no new process seen")
        );
        assert_eq!(reset_text(&[], 0), None);
    }
}
