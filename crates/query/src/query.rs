//! Signals read through the grid: sums over engines, replicas and GPUs,
//! histograms with their layouts checked, gauges combined the right way,
//! and the scrape coverage of every target.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use vllm_lens_catalog::{Aggregate, Catalogue, Kind, Resolution, Signal, Source, gpu::gpu_key};
use vllm_lens_store::{Role, SeriesId, Store, TargetId};

use crate::counter::{CounterPath, CounterRules, KnownResets, WindowIncrease, drops, increases};
use crate::gauge::{Combine, GaugeStats, combine, gauge_windows, pushed_windows};
use crate::grid::{BadWidth, Grid};
use crate::quantile::{Buckets, Quantile};

/// Which targets a figure covers: `None` for all of them (the fleet).
pub type Scope<'s> = Option<&'s [TargetId]>;

/// How the engine reads a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Window width, ms (15 s to 1 h).
    pub window_ms: i64,
    /// Count the first value of a vLLM or HTTP counter series that appears
    /// mid-capture as an increase from zero (it was created at zero after
    /// the previous scrape). Prometheus' `increase()` does not; vLLM's lazy
    /// V0 series and the HTTP instrumentator's new status series need it.
    pub count_series_births: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            window_ms: crate::grid::DEFAULT_WINDOW_MS,
            count_series_births: true,
        }
    }
}

/// One window of one target's scrapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WindowCoverage {
    /// Successful scrapes (distinct sample times) in the window.
    pub scrapes: u32,
    /// Scrapes the manifest records as failed in the window.
    pub failed: u32,
    /// Scrapes expected at the target's usual interval while it was being
    /// captured.
    pub expected: u32,
    /// Longest interval between successful scrapes ending in the window, ms.
    pub longest_interval_ms: i64,
    /// Intervals ending in the window longer than 1.5 × the usual one (a
    /// scrape is missing, recorded as failed or not).
    pub long_intervals: u32,
}

impl WindowCoverage {
    /// True when a scrape is missing or failed in the window (jitter that
    /// moves a scrape across a window edge is not a gap).
    pub fn has_gap(&self) -> bool {
        self.failed > 0 || self.long_intervals > 0 || (self.scrapes == 0 && self.expected > 0)
    }
}

/// A target's scrapes window by window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetCoverage {
    /// Target name.
    pub target: String,
    /// `vllm`, `dcgm` or `other`.
    pub kind: String,
    /// Usual interval between scrapes (median), ms.
    pub nominal_ms: i64,
    /// Per window.
    pub windows: Vec<WindowCoverage>,
    /// Each stretch without a successful scrape, in time order, at the
    /// times the scrapes were due or failed (a window's coverage sees a
    /// missing scrape only at the next one, which may lie in the next
    /// window).
    pub gaps: Vec<Gap>,
}

/// A stretch of one target without successful scrapes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// The last successful scrape before it, if any.
    pub after_ms: Option<i64>,
    /// The next successful scrape, if any.
    pub before_ms: Option<i64>,
    /// When the first scrape went missing or failed: the first failed
    /// scrape where it was due (within half an interval of the last good
    /// one plus the usual interval), else that due time.
    pub first_ms: i64,
    /// Scrapes due at the usual interval that did not succeed (failed or
    /// absent).
    pub missing: u32,
    /// Of those, scrapes recorded as failed.
    pub failed: u32,
}

/// The gaps of one target: intervals longer than 1.5 × the usual one, and
/// failed scrapes outside them.
fn gaps(times: &[i64], failed: &[i64], nominal: i64) -> Vec<Gap> {
    let mut out: Vec<Gap> = Vec::new();
    let nominal = nominal.max(1);
    let in_range = |a: Option<i64>, b: Option<i64>| {
        failed
            .iter()
            .copied()
            .filter(move |&t| a.is_none_or(|a| t > a) && b.is_none_or(|b| t < b))
    };
    let mut bounds: Vec<(Option<i64>, Option<i64>)> = Vec::new();
    if let Some(&first) = times.first() {
        bounds.push((None, Some(first)));
        for w in times.windows(2) {
            bounds.push((Some(w[0]), Some(w[1])));
        }
        bounds.push((times.last().copied(), None));
    } else {
        bounds.push((None, None));
    }
    for (a, b) in bounds {
        let f: Vec<i64> = in_range(a, b).collect();
        let long = match (a, b) {
            (Some(a), Some(b)) => (b - a) * 2 > nominal * 3,
            _ => false,
        };
        if !long && f.is_empty() {
            continue;
        }
        let due = match (a, b) {
            (Some(a), Some(b)) if long => {
                (((b - a) as f64 / nominal as f64).round() as u32).saturating_sub(1)
            }
            _ => 0,
        };
        // A recorded failure where the first scrape was due is the
        // evidence itself; else the due time.
        let first = match (a, f.first()) {
            (Some(a), Some(&t)) if long && t * 2 > (a + nominal) * 2 + nominal => a + nominal,
            (Some(a), None) => a + nominal,
            (_, Some(&t)) => t,
            (None, None) => continue,
        };
        out.push(Gap {
            after_ms: a,
            before_ms: b,
            first_ms: first,
            missing: due.max(f.len() as u32),
            failed: f.len() as u32,
        });
    }
    out
}

/// A counter signal summed over its series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterSignal {
    /// Per window; `None` where no series had an interval ending there.
    pub windows: Vec<Option<WindowIncrease>>,
    /// Reset-aware increase over the whole capture.
    pub total: f64,
    /// Increase over gaps, not attributed to any window.
    pub unattributed: f64,
    /// Resets seen (all series).
    pub resets: usize,
    /// Series read.
    pub series: usize,
}

/// One window of a histogram (summed over instances with one layout).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistWindow {
    /// Cumulative bucket increases by upper bound.
    pub buckets: Buckets,
    /// Increase of `_count` (or of the `+Inf` bucket when `_count` is absent).
    pub count: f64,
    /// Increase of `_sum`.
    pub sum: f64,
    /// Time covered, ms.
    pub covered_ms: i64,
    /// Intervals across a reset.
    pub resets: u32,
}

impl HistWindow {
    /// Δsum ÷ Δcount; `None` when nothing was observed.
    pub fn avg(&self) -> Option<f64> {
        (self.count > 0.0).then(|| self.sum / self.count)
    }

    /// The q-quantile (Prometheus' `histogram_quantile`); `None` without
    /// observations.
    pub fn quantile(&self, q: f64) -> Option<Quantile> {
        if self.count <= 0.0 && self.buckets.total().unwrap_or(0.0) <= 0.0 {
            return None;
        }
        self.buckets.quantile(q)
    }

    fn add(&mut self, other: &HistWindow) {
        if self.buckets.les.is_empty() {
            self.buckets = other.buckets.clone();
        } else {
            for (c, o) in self.buckets.counts.iter_mut().zip(&other.buckets.counts) {
                *c += o;
            }
        }
        self.count += other.count;
        self.sum += other.sum;
        self.covered_ms = self.covered_ms.max(other.covered_ms);
        self.resets += other.resets;
    }
}

/// Histogram instances sharing one bucket layout, summed per `le`.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutGroup {
    /// Upper bounds (the last is `+Inf`).
    pub les: Vec<f64>,
    /// Instances in the group: `target{labels}`.
    pub instances: Vec<String>,
    /// Per window.
    pub windows: Vec<Option<HistWindow>>,
}

/// A histogram signal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistogramSignal {
    /// One group per distinct bucket layout; normally exactly one.
    pub groups: Vec<LayoutGroup>,
}

impl HistogramSignal {
    /// The per-window histogram of all instances, when they share one
    /// layout; `None` when the signal is missing or layouts differ (then
    /// read [`HistogramSignal::groups`] one by one).
    pub fn combined(&self) -> Option<&[Option<HistWindow>]> {
        match self.groups.as_slice() {
            [one] => Some(&one.windows),
            _ => None,
        }
    }

    /// A warning for the reader when layouts differ.
    pub fn layout_warning(&self) -> Option<String> {
        (self.groups.len() > 1).then(|| {
            format!(
                "{} bucket layouts among the instances ({}): they are never summed; each is read on its own",
                self.groups.len(),
                self.groups
                    .iter()
                    .map(|g| g.instances.join(", "))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        })
    }
}

/// The engine over one bundle.
pub struct Query<'a> {
    store: &'a Store,
    catalogue: &'a Catalogue,
    grid: Grid,
    settings: Settings,
    coverage: Vec<TargetCoverage>,
    rules: Vec<CounterRules>,
    restarts: Vec<Vec<i64>>,
    /// Per target: when each new process started (`process_start_time_seconds`), ms.
    started: Vec<Vec<i64>>,
    created: BTreeMap<(TargetId, String, String), SeriesId>,
}

/// Labels of a series except `le` and the target's own labels, as text.
fn instance_key(store: &Store, sid: SeriesId) -> String {
    let target = store.series(sid).target();
    let own: BTreeSet<&str> = store.target_labels(target).map(|(k, _)| k).collect();
    let mut out = String::new();
    for (k, v) in store.labels(sid) {
        if k == "le" || own.contains(k) {
            continue;
        }
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(k);
        out.push_str("=\"");
        out.push_str(v);
        out.push('"');
    }
    out
}

fn median_interval(times: &[i64]) -> Option<i64> {
    let mut d: Vec<i64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&x| x > 0)
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_unstable();
    Some(d[d.len() / 2])
}

/// The times a series' value changed, and the new values read as Unix
/// seconds (a start time: `process_start_time_seconds`, `_created`), ms.
fn starts(times: &[i64], values: &[f64]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut prev: Option<f64> = None;
    for (&t, &v) in times.iter().zip(values) {
        if !v.is_finite() {
            continue;
        }
        if let Some(p) = prev
            && p != v
        {
            out.push((t, (v * 1000.0).round() as i64));
        }
        prev = Some(v);
    }
    out
}

impl<'a> Query<'a> {
    /// Sets the engine up: the grid over every target's samples, each
    /// target's usual interval and coverage, restarts from
    /// `process_start_time_seconds`, and the `_created` series.
    pub fn new(
        store: &'a Store,
        catalogue: &'a Catalogue,
        settings: Settings,
    ) -> Result<Query<'a>, BadWidth> {
        let first = store
            .targets()
            .iter()
            .filter_map(|t| t.sample_times().first().copied())
            .min()
            .unwrap_or(0);
        let last = store
            .targets()
            .iter()
            .filter_map(|t| t.sample_times().last().copied())
            .max()
            .unwrap_or(0);
        let grid = Grid::covering(settings.window_ms, first, last)?;
        let mut coverage = Vec::new();
        let mut rules = Vec::new();
        // A pushdown export holds one value per window (raw samples only
        // where a counter reset or began): its windows are the interval.
        let pushed = store.pushed_width_ms();
        for t in store.targets() {
            let times = t.sample_times();
            let nominal = pushed
                .or_else(|| median_interval(times))
                .unwrap_or(settings.window_ms);
            rules.push(CounterRules::for_interval(nominal));
            let mut windows = vec![WindowCoverage::default(); grid.count];
            for (i, &time) in times.iter().enumerate() {
                if let Some(w) = grid.index(time) {
                    windows[w].scrapes += 1;
                    if i > 0 {
                        let dt = time - times[i - 1];
                        windows[w].longest_interval_ms = windows[w].longest_interval_ms.max(dt);
                        if dt * 2 > nominal * 3 {
                            windows[w].long_intervals += 1;
                        }
                    }
                }
            }
            for s in t.scrapes().iter().filter(|s| !s.up) {
                if let Some(w) = grid.index(s.time_ms) {
                    windows[w].failed += 1;
                }
            }
            if let (Some(&a), Some(&b)) = (times.first(), times.last()) {
                for (w, cov) in windows.iter_mut().enumerate() {
                    let (ws, we) = grid.bounds(w);
                    let lo = ws.max(a);
                    let hi = we.min(b + nominal);
                    if hi > lo {
                        cov.expected = ((hi - lo) as f64 / nominal as f64).round() as u32;
                    }
                }
            }
            let mut failed: Vec<i64> = t
                .scrapes()
                .iter()
                .filter(|s| !s.up)
                .map(|s| s.time_ms)
                .collect();
            failed.sort_unstable();
            coverage.push(TargetCoverage {
                target: t.name().to_string(),
                kind: t.kind().as_str().to_string(),
                nominal_ms: nominal,
                windows,
                gaps: gaps(times, &failed, nominal),
            });
        }
        let mut restarts = vec![Vec::new(); store.targets().len()];
        let mut started = vec![Vec::new(); store.targets().len()];
        for sid in catalogue.get(Signal::ProcessStart).series() {
            let s = store.series(sid);
            for (seen, start) in starts(s.times(), s.values()) {
                restarts[s.target().0 as usize].push(seen);
                started[s.target().0 as usize].push(start);
            }
        }
        for r in restarts.iter_mut().chain(started.iter_mut()) {
            r.sort_unstable();
            r.dedup();
        }
        let mut created = BTreeMap::new();
        for (i, s) in store.all_series().iter().enumerate() {
            if s.role() == Role::Created {
                let sid = SeriesId(i as u32);
                let name = store.series_name(sid).replace(':', "_");
                let base = name.strip_suffix("_created").unwrap_or(&name).to_string();
                created.insert((s.target(), base, instance_key(store, sid)), sid);
            }
        }
        Ok(Query {
            store,
            catalogue,
            grid,
            settings,
            coverage,
            rules,
            restarts,
            started,
            created,
        })
    }

    /// The windows.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Every target's scrapes per window.
    pub fn coverage(&self) -> &[TargetCoverage] {
        &self.coverage
    }

    /// The catalogue the engine reads through.
    pub fn catalogue(&self) -> &Catalogue {
        self.catalogue
    }

    /// Times at which `target`'s process restarted (its
    /// `process_start_time_seconds` changed).
    pub fn restarts(&self, target: TargetId) -> &[i64] {
        &self.restarts[target.0 as usize]
    }

    /// Known resets of one counter series: its target's restarts and changes
    /// of its own `_created`, with the new processes' start times.
    pub fn known_resets(&self, sid: SeriesId) -> KnownResets {
        let s = self.store.series(sid);
        let mut out = self.restarts[s.target().0 as usize].clone();
        let mut started = self.started[s.target().0 as usize].clone();
        // `_created` is named after the counter without `_total`, or after
        // the histogram as is (`vllm:iteration_tokens_total_created`).
        let family = self.store.family(s.family()).name().replace(':', "_");
        let key = instance_key(self.store, sid);
        let found = [family.clone(), vllm_lens_catalog::canonical(&family)]
            .into_iter()
            .find_map(|base| self.created.get(&(s.target(), base, key.clone())));
        if let Some(&c) = found {
            let cs = self.store.series(c);
            for (seen, start) in starts(cs.times(), cs.values()) {
                out.push(seen);
                started.push(start);
            }
        }
        out.sort_unstable();
        out.dedup();
        started.sort_unstable();
        started.dedup();
        KnownResets { seen: out, started }
    }

    fn birth(&self, sid: SeriesId, source: Source) -> Option<i64> {
        if !self.settings.count_series_births || source == Source::Dcgm {
            return None;
        }
        let s = self.store.series(sid);
        let first = *s.times().first()?;
        let times = self.store.target(s.target()).sample_times();
        let i = times.partition_point(|&t| t < first);
        (i > 0).then(|| times[i - 1])
    }

    /// One counter series through the grid.
    pub fn counter_series(&self, sid: SeriesId, source: Source) -> CounterPath {
        self.counter_series_with(sid, source, &self.known_resets(sid))
    }

    fn counter_series_with(
        &self,
        sid: SeriesId,
        source: Source,
        forced: &KnownResets,
    ) -> CounterPath {
        let s = self.store.series(sid);
        increases(
            s.times(),
            s.values(),
            &self.grid,
            &self.rules[s.target().0 as usize],
            forced,
            self.birth(sid, source),
        )
    }

    fn sum_paths<'p>(&self, paths: impl Iterator<Item = &'p CounterPath>) -> CounterSignal {
        let mut out = CounterSignal {
            windows: vec![None; self.grid.count],
            ..CounterSignal::default()
        };
        for p in paths {
            out.series += 1;
            out.total += p.total;
            out.unattributed += p.unattributed;
            out.resets += p.resets.len();
            for (slot, w) in out.windows.iter_mut().zip(&p.windows) {
                if let Some(w) = w {
                    slot.get_or_insert_with(WindowIncrease::default).add(w);
                }
            }
        }
        out
    }

    fn in_scope(&self, sid: SeriesId, scope: Scope<'_>) -> bool {
        scope.is_none_or(|targets| targets.contains(&self.store.series(sid).target()))
    }

    fn counter_paths(&self, r: &Resolution, scope: Scope<'_>) -> Vec<(SeriesId, CounterPath)> {
        r.series()
            .filter(|&sid| self.in_scope(sid, scope))
            .map(|sid| (sid, self.counter_series(sid, r.source)))
            .collect()
    }

    /// A counter signal summed over every series (engines, replicas, GPUs,
    /// label values). An empty result (`series == 0`) means missing.
    pub fn counter(&self, signal: Signal) -> CounterSignal {
        self.counter_in(signal, None)
    }

    /// [`Query::counter`] over the series of some targets only.
    pub fn counter_in(&self, signal: Signal, scope: Scope<'_>) -> CounterSignal {
        let r = self.catalogue.get(signal);
        let paths = self.counter_paths(r, scope);
        self.sum_paths(paths.iter().map(|(_, p)| p))
    }

    /// A counter signal summed per value of `labels` (e.g. `finished_reason`;
    /// `status`; `handler` and `status`), keyed by the values joined with
    /// `,` (a missing label reads as empty).
    pub fn counter_by(&self, signal: Signal, labels: &[&str]) -> BTreeMap<String, CounterSignal> {
        self.counter_by_in(signal, labels, None)
    }

    /// [`Query::counter_by`] over the series of some targets only.
    pub fn counter_by_in(
        &self,
        signal: Signal,
        labels: &[&str],
        scope: Scope<'_>,
    ) -> BTreeMap<String, CounterSignal> {
        let r = self.catalogue.get(signal);
        let paths = self.counter_paths(r, scope);
        let mut groups: BTreeMap<String, Vec<&CounterPath>> = BTreeMap::new();
        for (sid, p) in &paths {
            let key = labels
                .iter()
                .map(|l| self.store.label(*sid, l).unwrap_or(""))
                .collect::<Vec<_>>()
                .join(",");
            groups.entry(key).or_default().push(p);
        }
        groups
            .into_iter()
            .map(|(k, ps)| (k, self.sum_paths(ps.into_iter())))
            .collect()
    }

    /// A counter signal per GPU (DCGM) or per target (vLLM).
    pub fn counter_per_unit(&self, signal: Signal) -> BTreeMap<String, CounterSignal> {
        let r = self.catalogue.get(signal);
        let paths = self.counter_paths(r, None);
        let mut groups: BTreeMap<String, Vec<&CounterPath>> = BTreeMap::new();
        for (sid, p) in &paths {
            groups
                .entry(self.unit_key(*sid, r.source))
                .or_default()
                .push(p);
        }
        groups
            .into_iter()
            .map(|(k, ps)| (k, self.sum_paths(ps.into_iter())))
            .collect()
    }

    fn unit_key(&self, sid: SeriesId, source: Source) -> String {
        match source {
            Source::Dcgm => gpu_key(self.store, sid),
            _ => self
                .store
                .target(self.store.series(sid).target())
                .name()
                .to_string(),
        }
    }

    /// A histogram signal: instances (target × labels other than `le`)
    /// summed per `le` within each bucket layout.
    pub fn histogram(&self, signal: Signal) -> HistogramSignal {
        self.histogram_in(signal, None)
    }

    /// [`Query::histogram`] over the series of some targets only.
    pub fn histogram_in(&self, signal: Signal, scope: Scope<'_>) -> HistogramSignal {
        let r = self.catalogue.get(signal);
        let series: Vec<SeriesId> = r.series().filter(|&s| self.in_scope(s, scope)).collect();
        self.histogram_of(r, &series)
    }

    /// A histogram signal per target (replica), each summed over its own
    /// instances (engines, label sets).
    pub fn histogram_per_target(&self, signal: Signal) -> BTreeMap<String, HistogramSignal> {
        let r = self.catalogue.get(signal);
        r.targets
            .iter()
            .map(|t| (t.target_name.clone(), self.histogram_of(r, &t.series)))
            .collect()
    }

    fn histogram_of(&self, r: &Resolution, series: &[SeriesId]) -> HistogramSignal {
        let signal = r.signal;
        let counts_only = r
            .targets
            .iter()
            .all(|t| signal.info().candidates[t.candidate].kind == Kind::HistogramCount);
        if r.is_missing() || counts_only {
            return HistogramSignal::default();
        }
        struct Instance {
            name: String,
            buckets: Vec<(f64, SeriesId)>,
            count: Option<SeriesId>,
            sum: Option<SeriesId>,
        }
        let mut instances: BTreeMap<(TargetId, String), Instance> = BTreeMap::new();
        for &sid in series {
            let s = self.store.series(sid);
            let key = instance_key(self.store, sid);
            let target_name = self.store.target(s.target()).name();
            let inst = instances
                .entry((s.target(), key.clone()))
                .or_insert_with(|| Instance {
                    name: if key.is_empty() {
                        target_name.to_string()
                    } else {
                        format!("{target_name}{{{key}}}")
                    },
                    buckets: Vec::new(),
                    count: None,
                    sum: None,
                });
            match s.role() {
                Role::Bucket => {
                    let le = self.store.label(sid, "le").and_then(parse_le);
                    if let Some(le) = le {
                        inst.buckets.push((le, sid));
                    }
                }
                Role::Count => inst.count = Some(sid),
                Role::Sum => inst.sum = Some(sid),
                _ => {}
            }
        }
        let mut groups: Vec<LayoutGroup> = Vec::new();
        for inst in instances.into_values() {
            let mut buckets = inst.buckets;
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            buckets.dedup_by(|a, b| a.0 == b.0);
            if buckets.last().is_none_or(|b| b.0 != f64::INFINITY) {
                continue;
            }
            let parts: Vec<SeriesId> = buckets
                .iter()
                .map(|b| b.1)
                .chain(inst.count)
                .chain(inst.sum)
                .collect();
            // One reset for the whole instance: any part dropping, or a
            // known restart / `_created` change.
            let mut forced = self.known_resets(parts[0]);
            for &p in &parts {
                let s = self.store.series(p);
                if s.role() != Role::Sum {
                    forced.seen.extend(drops(s.times(), s.values()));
                }
            }
            forced.seen.sort_unstable();
            forced.seen.dedup();
            let path = |sid: SeriesId| self.counter_series_with(sid, r.source, &forced);
            let bucket_paths: Vec<CounterPath> = buckets.iter().map(|b| path(b.1)).collect();
            let count_path = inst.count.map(path);
            let sum_path = inst.sum.map(path);
            let les: Vec<f64> = buckets.iter().map(|b| b.0).collect();
            let windows: Vec<Option<HistWindow>> = (0..self.grid.count)
                .map(|w| {
                    let inf = bucket_paths.last()?.windows[w]?;
                    let counts: Vec<f64> = bucket_paths
                        .iter()
                        .map(|p| p.windows[w].map_or(0.0, |x| x.increase))
                        .collect();
                    let count = count_path
                        .as_ref()
                        .and_then(|p| p.windows[w])
                        .map_or(inf.increase, |x| x.increase);
                    let sum = sum_path
                        .as_ref()
                        .and_then(|p| p.windows[w])
                        .map_or(0.0, |x| x.increase);
                    Some(HistWindow {
                        buckets: Buckets {
                            les: les.clone(),
                            counts,
                        },
                        count,
                        sum,
                        covered_ms: inf.covered_ms,
                        resets: inf.resets,
                    })
                })
                .collect();
            match groups.iter_mut().find(|g| g.les == les) {
                Some(g) => {
                    g.instances.push(inst.name);
                    for (slot, w) in g.windows.iter_mut().zip(windows) {
                        if let Some(w) = w {
                            match slot {
                                Some(s) => s.add(&w),
                                None => *slot = Some(w),
                            }
                        }
                    }
                }
                None => groups.push(LayoutGroup {
                    les,
                    instances: vec![inst.name],
                    windows,
                }),
            }
        }
        HistogramSignal { groups }
    }

    /// Per-window statistics of each series of a gauge signal, keyed by
    /// GPU (DCGM) or `target{labels}` (others).
    pub fn gauge_series(&self, signal: Signal) -> BTreeMap<String, Vec<Option<GaugeStats>>> {
        self.gauge_series_in(signal, None)
    }

    /// [`Query::gauge_series`] over the series of some targets only.
    pub fn gauge_series_in(
        &self,
        signal: Signal,
        scope: Scope<'_>,
    ) -> BTreeMap<String, Vec<Option<GaugeStats>>> {
        let r = self.catalogue.get(signal);
        let mut out = BTreeMap::new();
        for sid in r.series().filter(|&s| self.in_scope(s, scope)) {
            let s = self.store.series(sid);
            let key = match r.source {
                Source::Dcgm => gpu_key(self.store, sid),
                _ => {
                    let k = instance_key(self.store, sid);
                    let t = self.store.target(s.target()).name();
                    if k.is_empty() {
                        t.to_string()
                    } else {
                        format!("{t}{{{k}}}")
                    }
                }
            };
            let stats = if let Some(p) = s.pushed().filter(|p| p.has_stats()) {
                let temp = signal == Signal::MemoryTemp;
                pushed_windows(p, s.times(), s.values(), &self.grid, |x| {
                    !(temp && x == 0.0)
                })
            } else if signal == Signal::MemoryTemp {
                // GDDR boards report 0 °C: unknown, not cold.
                let v: Vec<f64> = s
                    .values()
                    .iter()
                    .map(|&x| if x == 0.0 { f64::NAN } else { x })
                    .collect();
                gauge_windows(s.times(), &v, &self.grid)
            } else {
                gauge_windows(s.times(), s.values(), &self.grid)
            };
            out.insert(key, stats);
        }
        out
    }

    /// Every point of each series of a signal, keyed as
    /// [`Query::gauge_series`]: codes, bitmasks and fault counts are read
    /// point by point (the time each value was seen), never averaged or
    /// rated. A pushdown export's gauge gives each window's maximum at the
    /// window's end.
    pub fn points(&self, signal: Signal) -> Vec<Points> {
        let r = self.catalogue.get(signal);
        r.series()
            .map(|sid| {
                let s = self.store.series(sid);
                let points = match s.pushed().filter(|p| !p.max.is_empty()) {
                    Some(p) => p.max.clone(),
                    None => s
                        .times()
                        .iter()
                        .copied()
                        .zip(s.values().iter().copied())
                        .collect(),
                };
                Points {
                    key: self.unit_key(sid, r.source),
                    sid,
                    points,
                    target_first_ms: self
                        .store
                        .target(s.target())
                        .sample_times()
                        .first()
                        .copied(),
                }
            })
            .collect()
    }

    /// A label of a series (`err_msg` on an XID series).
    pub fn label(&self, sid: SeriesId, name: &str) -> Option<&'a str> {
        self.store.label(sid, name)
    }

    /// A gauge signal combined over its series: summed for counts (running,
    /// waiting, MiB, watts), averaged for fractions and percentages.
    /// `None` when the signal is missing, and for codes and timestamps (the
    /// last XID, the process start), which are never combined: read those
    /// with [`Query::gauge_series`].
    pub fn gauge(&self, signal: Signal) -> Option<Vec<Option<GaugeStats>>> {
        self.gauge_in(signal, None)
    }

    /// [`Query::gauge`] over the series of some targets only.
    pub fn gauge_in(&self, signal: Signal, scope: Scope<'_>) -> Option<Vec<Option<GaugeStats>>> {
        let r = self.catalogue.get(signal);
        if r.is_missing() {
            return None;
        }
        let how = match signal.info().aggregate {
            Aggregate::Sum => Combine::Sum,
            Aggregate::Mean => Combine::Mean,
            Aggregate::None => return None,
        };
        let series: Vec<Vec<Option<GaugeStats>>> =
            self.gauge_series_in(signal, scope).into_values().collect();
        if series.is_empty() {
            return None;
        }
        Some(combine(&series, how, self.grid.count))
    }
}

/// One series' points ([`Query::points`]).
#[derive(Debug, Clone)]
pub struct Points {
    /// The GPU (DCGM) or target (others).
    pub key: String,
    /// The series.
    pub sid: SeriesId,
    /// `(time ms, value)` in time order.
    pub points: Vec<(i64, f64)>,
    /// The first scrape of the series' target: a series that begins
    /// later appeared during the capture.
    pub target_first_ms: Option<i64>,
}

/// Reads an `le` label (`"0.5"`, `"1e+06"`, `"+Inf"`).
pub fn parse_le(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        _ => text.parse::<f64>().ok().filter(|v| !v.is_nan()),
    }
}
