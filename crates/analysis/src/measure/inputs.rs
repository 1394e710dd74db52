//! What the rows are computed from: per scope (the fleet or one replica)
//! and per window, the counters, histograms and gauges of every signal,
//! read once through the engine; and the same merged over the whole
//! capture for the summary.

use std::collections::BTreeMap;

use vllm_lens_catalog::{Aggregate, Signal};
use vllm_lens_query::{
    Buckets, Combine, GaugeStats, HistWindow, Query, Scope, WindowIncrease, gauge::combine,
};

/// Counter signals read into the rows.
pub(crate) const COUNTERS: [Signal; 8] = [
    Signal::PromptTokens,
    Signal::GenerationTokens,
    Signal::FinishedRequests,
    Signal::Preemptions,
    Signal::PrefixHits,
    Signal::PrefixQueries,
    Signal::CachedPromptTokens,
    Signal::HttpRequests,
];

/// Histogram signals read into the rows.
pub(crate) const HISTOGRAMS: [Signal; 12] = [
    Signal::QueueTime,
    Signal::PrefillTime,
    Signal::DecodeTime,
    Signal::InferenceTime,
    Signal::E2eTime,
    Signal::Ttft,
    Signal::InterTokenLatency,
    Signal::IterationTokens,
    Signal::RequestPromptTokens,
    Signal::RequestGenerationTokens,
    Signal::MaxTokens,
    Signal::HttpDuration,
];

/// Gauge signals of the engine read into the rows.
pub(crate) const GAUGES: [Signal; 7] = [
    Signal::Running,
    Signal::Waiting,
    Signal::KvUsage,
    Signal::Swapped,
    Signal::PrefixHitRateLifetime,
    Signal::PromptThroughputGauge,
    Signal::GenerationThroughputGauge,
];

/// DCGM gauges read per GPU.
pub(crate) const GPU_GAUGES: [Signal; 11] = [
    Signal::GpuUtil,
    Signal::MemCopyUtil,
    Signal::FbUsed,
    Signal::FbFree,
    Signal::FbReserved,
    Signal::Power,
    Signal::GpuTemp,
    Signal::SmClock,
    Signal::GrEngineActive,
    Signal::TensorActive,
    Signal::DramActive,
];

/// One window (or the whole capture) of one scope.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inputs {
    pub counters: BTreeMap<Signal, WindowIncrease>,
    pub reasons: BTreeMap<String, WindowIncrease>,
    pub http_status: BTreeMap<String, WindowIncrease>,
    pub http_handler: BTreeMap<(String, String), WindowIncrease>,
    pub hists: BTreeMap<Signal, HistWindow>,
    pub gauges: BTreeMap<Signal, GaugeStats>,
}

/// One window (or the whole capture) of one GPU or group of GPUs.
#[derive(Clone, Debug, Default)]
pub(crate) struct GpuInputs {
    pub gauges: BTreeMap<Signal, GaugeStats>,
    pub energy: Option<WindowIncrease>,
}

/// Every window of a scope, and which signals it has at all.
pub(crate) struct ScopeInputs {
    pub windows: Vec<Inputs>,
    /// Histograms whose instances have different bucket layouts here.
    pub layout_mismatch: Vec<Signal>,
}

fn merge_hist(a: &mut HistWindow, b: &HistWindow) {
    if a.buckets.les == b.buckets.les {
        for (x, y) in a.buckets.counts.iter_mut().zip(&b.buckets.counts) {
            *x += y;
        }
    } else {
        // Different layouts are never summed: keep the average only.
        a.buckets = Buckets::default();
    }
    a.count += b.count;
    a.sum += b.sum;
    a.covered_ms = a.covered_ms.max(b.covered_ms);
    a.resets += b.resets;
}

/// Reads a scope window by window.
pub(crate) fn read_scope(q: &Query<'_>, scope: Scope<'_>) -> ScopeInputs {
    let n = q.grid().count;
    let mut windows = vec![Inputs::default(); n];
    for signal in COUNTERS {
        let c = q.counter_in(signal, scope);
        if c.series == 0 {
            continue;
        }
        for (w, x) in c.windows.iter().enumerate() {
            if let Some(x) = x {
                windows[w].counters.insert(signal, *x);
            }
        }
    }
    for (reason, c) in q.counter_by_in(Signal::FinishedRequests, &["finished_reason"], scope) {
        if reason.is_empty() {
            continue; // the e2e-count fallback has no reason
        }
        for (w, x) in c.windows.iter().enumerate() {
            if let Some(x) = x {
                windows[w].reasons.insert(reason.clone(), *x);
            }
        }
    }
    for (key, c) in q.counter_by_in(Signal::HttpRequests, &["handler", "status"], scope) {
        let (handler, status) = key.split_once(',').unwrap_or((&key, ""));
        for (w, x) in c.windows.iter().enumerate() {
            if let Some(x) = x {
                windows[w]
                    .http_handler
                    .insert((handler.to_string(), status.to_string()), *x);
                windows[w]
                    .http_status
                    .entry(status.to_string())
                    .or_default()
                    .add(x);
            }
        }
    }
    let mut layout_mismatch = Vec::new();
    for signal in HISTOGRAMS {
        let h = q.histogram_in(signal, scope);
        if h.groups.is_empty() {
            continue;
        }
        if h.groups.len() > 1 {
            layout_mismatch.push(signal);
        }
        for g in &h.groups {
            for (w, x) in g.windows.iter().enumerate() {
                if let Some(x) = x {
                    match windows[w].hists.get_mut(&signal) {
                        Some(have) => merge_hist(have, x),
                        None => {
                            windows[w].hists.insert(signal, x.clone());
                        }
                    }
                }
            }
        }
    }
    for signal in GAUGES {
        if let Some(g) = q.gauge_in(signal, scope) {
            for (w, x) in g.iter().enumerate() {
                if let Some(x) = x {
                    windows[w].gauges.insert(signal, *x);
                }
            }
        }
    }
    ScopeInputs {
        windows,
        layout_mismatch,
    }
}

fn merge_counter_time(a: &mut WindowIncrease, b: &WindowIncrease) {
    a.increase += b.increase;
    a.covered_ms += b.covered_ms;
    a.intervals += b.intervals;
    a.resets += b.resets;
    a.bridged += b.bridged;
    a.per_sec = if a.covered_ms > 0 {
        a.increase / (a.covered_ms as f64 / 1000.0)
    } else {
        0.0
    };
}

fn merge_gauge_time(a: &mut GaugeStats, b: &GaugeStats) {
    let n = f64::from(a.points + b.points);
    a.mean = (a.mean * f64::from(a.points) + b.mean * f64::from(b.points)) / n;
    a.min = a.min.min(b.min);
    a.max = a.max.max(b.max);
    a.last = b.last;
    a.points += b.points;
}

/// The whole capture of a scope: counters and histograms summed over the
/// windows, gauges' extremes and point-weighted means.
pub(crate) fn over_time(windows: &[Inputs]) -> Inputs {
    let mut out = Inputs::default();
    for w in windows {
        for (k, x) in &w.counters {
            match out.counters.get_mut(k) {
                Some(a) => merge_counter_time(a, x),
                None => {
                    out.counters.insert(*k, *x);
                }
            }
        }
        for (map_out, map_in) in [
            (&mut out.reasons, &w.reasons),
            (&mut out.http_status, &w.http_status),
        ] {
            for (k, x) in map_in {
                match map_out.get_mut(k) {
                    Some(a) => merge_counter_time(a, x),
                    None => {
                        map_out.insert(k.clone(), *x);
                    }
                }
            }
        }
        for (k, x) in &w.http_handler {
            match out.http_handler.get_mut(k) {
                Some(a) => merge_counter_time(a, x),
                None => {
                    out.http_handler.insert(k.clone(), *x);
                }
            }
        }
        for (k, x) in &w.hists {
            match out.hists.get_mut(k) {
                Some(a) => {
                    let covered = a.covered_ms + x.covered_ms;
                    merge_hist(a, x);
                    a.covered_ms = covered;
                }
                None => {
                    out.hists.insert(*k, x.clone());
                }
            }
        }
        for (k, x) in &w.gauges {
            match out.gauges.get_mut(k) {
                Some(a) => merge_gauge_time(a, x),
                None => {
                    out.gauges.insert(*k, *x);
                }
            }
        }
    }
    out
}

/// GPU gauges and energy per GPU key, window by window.
pub(crate) fn read_gpus(q: &Query<'_>) -> BTreeMap<String, Vec<GpuInputs>> {
    let n = q.grid().count;
    let mut out: BTreeMap<String, Vec<GpuInputs>> = BTreeMap::new();
    for signal in GPU_GAUGES {
        for (key, windows) in q.gauge_series(signal) {
            let slot = out
                .entry(key)
                .or_insert_with(|| vec![GpuInputs::default(); n]);
            for (w, x) in windows.iter().enumerate() {
                if let Some(x) = x {
                    slot[w].gauges.insert(signal, *x);
                }
            }
        }
    }
    for (key, c) in q.counter_per_unit(Signal::Energy) {
        let slot = out
            .entry(key)
            .or_insert_with(|| vec![GpuInputs::default(); n]);
        for (w, x) in c.windows.iter().enumerate() {
            slot[w].energy = *x;
        }
    }
    out
}

/// Several GPUs as one: sums for MiB and watts, means for percentages,
/// temperatures and clocks; energy summed.
pub(crate) fn combine_gpus(gpus: &[&Vec<GpuInputs>], windows: usize) -> Vec<GpuInputs> {
    (0..windows)
        .map(|w| {
            let mut out = GpuInputs::default();
            for signal in GPU_GAUGES {
                let how = match signal.info().aggregate {
                    Aggregate::Sum => Combine::Sum,
                    _ => Combine::Mean,
                };
                let series: Vec<Vec<Option<GaugeStats>>> = gpus
                    .iter()
                    .map(|g| vec![g[w].gauges.get(&signal).copied()])
                    .collect();
                if let Some(Some(x)) = combine(&series, how, 1).first() {
                    out.gauges.insert(signal, *x);
                }
            }
            for g in gpus {
                if let Some(e) = &g[w].energy {
                    out.energy
                        .get_or_insert_with(WindowIncrease::default)
                        .add(e);
                }
            }
            out
        })
        .collect()
}

/// A GPU's (or group's) whole capture.
pub(crate) fn gpu_over_time(windows: &[GpuInputs]) -> GpuInputs {
    let mut out = GpuInputs::default();
    for w in windows {
        for (k, x) in &w.gauges {
            match out.gauges.get_mut(k) {
                Some(a) => merge_gauge_time(a, x),
                None => {
                    out.gauges.insert(*k, *x);
                }
            }
        }
        if let Some(e) = &w.energy {
            match &mut out.energy {
                Some(a) => merge_counter_time(a, e),
                None => out.energy = Some(*e),
            }
        }
    }
    out
}

/// How often DCGM's energy counter moves when it moves more slowly than it
/// is scraped: the median time between changes of its value, over every
/// GPU, where that is more than 1.5 × the median time between its points
/// (dcgm-exporter collects every 30 s by default, whatever the scrape
/// interval). `None` when it moves at every point (a pushdown export's
/// windows, a collect interval at or under the scrape interval) or with
/// fewer than three changes.
pub(crate) fn energy_refresh_ms(
    store: &vllm_lens_store::Store,
    cat: &vllm_lens_catalog::Catalogue,
) -> Option<i64> {
    let mut gaps: Vec<i64> = Vec::new();
    let mut steps: Vec<i64> = Vec::new();
    for sid in cat.get(Signal::Energy).series() {
        let s = store.series(sid);
        steps.extend(s.times().windows(2).map(|w| w[1] - w[0]));
        let mut last: Option<(i64, f64)> = None;
        for (&t, &v) in s.times().iter().zip(s.values()) {
            match last {
                Some((lt, lv)) if v != lv => {
                    gaps.push(t - lt);
                    last = Some((t, v));
                }
                None => last = Some((t, v)),
                _ => {}
            }
        }
    }
    if gaps.len() < 3 || steps.is_empty() {
        return None;
    }
    gaps.sort_unstable();
    steps.sort_unstable();
    let (refresh, step) = (gaps[gaps.len() / 2], steps[steps.len() / 2]);
    (2 * refresh > 3 * step).then_some(refresh)
}
