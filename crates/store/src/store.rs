//! The store proper: targets, families, label sets, series and points.

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use vllm_lens_expo::{Diagnostic, Event, KeyShape, Labels, MetricType, Parser, unescape_help};

use crate::intern::{Interner, Sym};

/// Index of a target in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetId(pub u32);
/// Index of a family in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FamilyId(pub u32);
/// Index of a series in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesId(pub u32);
/// Index of an interned label set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelSetId(pub u32);

/// What a target exposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TargetKind {
    /// A vLLM server's `/metrics`.
    Vllm,
    /// dcgm-exporter, or a GPU dump mapped onto DCGM field names.
    Dcgm,
    /// Anything else.
    Other,
}

impl TargetKind {
    /// `vllm`, `dcgm` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Vllm => "vllm",
            TargetKind::Dcgm => "dcgm",
            TargetKind::Other => "other",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The part a series plays in its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A plain value: gauge, untyped, or a counter exposed without `_total`.
    Value,
    /// A counter's `_total` sample.
    Total,
    /// A histogram's `_bucket` (with `le`).
    Bucket,
    /// A histogram's or summary's `_count`.
    Count,
    /// A histogram's or summary's `_sum`.
    Sum,
    /// A `_created` sample: a Unix timestamp in seconds, never a quantity.
    Created,
    /// A summary's quantile sample (with `quantile`).
    Quantile,
    /// A gauge histogram's `_gcount`.
    GaugeCount,
    /// A gauge histogram's `_gsum`.
    GaugeSum,
    /// An info metric's `_info` sample.
    Info,
}

/// One metric family.
#[derive(Clone, Debug)]
pub struct Family {
    name: String,
    kind: MetricType,
    declared: bool,
    help: Option<String>,
    unit: Option<String>,
    series: Vec<SeriesId>,
}

impl Family {
    /// The family name as declared (or the sample name when undeclared).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The declared type; [`MetricType::Untyped`] when no TYPE line was seen.
    pub fn kind(&self) -> MetricType {
        self.kind
    }
    /// True when a `# TYPE` line declared the family.
    pub fn declared(&self) -> bool {
        self.declared
    }
    /// The HELP text, unescaped, as first seen.
    pub fn help(&self) -> Option<&str> {
        self.help.as_deref()
    }
    /// The OpenMetrics UNIT, if any.
    pub fn unit(&self) -> Option<&str> {
        self.unit.as_deref()
    }
    /// The series of the family, all targets.
    pub fn series(&self) -> &[SeriesId] {
        &self.series
    }
}

/// One successful or failed scrape of a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScrapeRecord {
    /// Capture time in milliseconds since the Unix epoch.
    pub time_ms: i64,
    /// The bundle member it came from (empty for a failed scrape without file).
    pub file: String,
    /// False for a scrape recorded as failed (`up: 0`).
    pub up: bool,
    /// Why the scrape failed.
    pub error: Option<String>,
    /// Samples read from it.
    pub samples: u32,
}

/// One scraped endpoint.
#[derive(Clone, Debug)]
pub struct Target {
    name: String,
    kind: TargetKind,
    labels: Vec<(Sym, Sym)>,
    scrapes: Vec<ScrapeRecord>,
    times: Vec<i64>,
    expected_points: usize,
}

impl Target {
    /// The target's name (from the manifest, the folder or the file name).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// What it exposes.
    pub fn kind(&self) -> TargetKind {
        self.kind
    }
    /// Its scrapes in time order (after [`Store::finish`]).
    pub fn scrapes(&self) -> &[ScrapeRecord] {
        &self.scrapes
    }
    /// The distinct times at which the target produced samples, sorted
    /// (after [`Store::finish`]). With per-sample timestamps this can be
    /// more than the number of files.
    pub fn sample_times(&self) -> &[i64] {
        &self.times
    }
}

/// One series: a sample name and label set of one target, with its points.
#[derive(Clone, Debug)]
pub struct Series {
    target: TargetId,
    family: FamilyId,
    name: Sym,
    labels: LabelSetId,
    role: Role,
    times: Vec<i64>,
    values: Vec<f64>,
    sorted: bool,
    pushed: Option<Box<Pushed>>,
}

/// A per-window statistic that Prometheus computed for a pushdown export
/// (`collect.sh --from-prometheus --window 5m`): `max_over_time`,
/// `min_over_time`, `avg_over_time` or `count_over_time` of a gauge over one
/// window, stamped at the window's last millisecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WindowStat {
    /// `min_over_time`.
    Min,
    /// `max_over_time`.
    Max,
    /// `avg_over_time`.
    Avg,
    /// `count_over_time`: the raw points the window held.
    Count,
    /// `timestamp()` of the series' latest sample at the window's end: the
    /// real time of the window's last value, which the store moves that
    /// point to.
    Time,
}

impl WindowStat {
    /// The stat named in an export (`min`, `max`, `avg`, `count`).
    pub fn from_name(name: &str) -> Option<WindowStat> {
        Some(match name {
            "min" => WindowStat::Min,
            "max" => WindowStat::Max,
            "avg" => WindowStat::Avg,
            "count" => WindowStat::Count,
            "time" => WindowStat::Time,
            _ => return None,
        })
    }
}

/// The pushed-down statistics of one series: per stat, `(time, value)`
/// sorted by time after [`Store::finish`] (time = the window's last ms).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pushed {
    /// `min_over_time` per window.
    pub min: Vec<(i64, f64)>,
    /// `max_over_time` per window.
    pub max: Vec<(i64, f64)>,
    /// `avg_over_time` per window.
    pub avg: Vec<(i64, f64)>,
    /// `count_over_time` per window.
    pub count: Vec<(i64, f64)>,
    /// `timestamp()` per window (seconds since the epoch, as Prometheus
    /// answers).
    pub time: Vec<(i64, f64)>,
}

impl Pushed {
    /// True when Prometheus computed this series' gauge statistics (a
    /// counter brings only the time of each window's last value).
    pub fn has_stats(&self) -> bool {
        !(self.max.is_empty() && self.min.is_empty() && self.avg.is_empty())
    }

    fn column(&mut self, stat: WindowStat) -> &mut Vec<(i64, f64)> {
        match stat {
            WindowStat::Min => &mut self.min,
            WindowStat::Max => &mut self.max,
            WindowStat::Avg => &mut self.avg,
            WindowStat::Count => &mut self.count,
            WindowStat::Time => &mut self.time,
        }
    }

    fn finish(&mut self) {
        for stat in [
            WindowStat::Min,
            WindowStat::Max,
            WindowStat::Avg,
            WindowStat::Count,
            WindowStat::Time,
        ] {
            let c = self.column(stat);
            c.sort_by_key(|p| p.0);
            c.dedup_by_key(|p| p.0);
            c.shrink_to_fit();
        }
    }
}

impl Series {
    /// The per-window statistics Prometheus computed for this series, when
    /// the bundle is a pushdown export; `None` for raw points.
    pub fn pushed(&self) -> Option<&Pushed> {
        self.pushed.as_deref()
    }
    /// The target that exposed it.
    pub fn target(&self) -> TargetId {
        self.target
    }
    /// Its family.
    pub fn family(&self) -> FamilyId {
        self.family
    }
    /// The interned sample name.
    pub fn name_sym(&self) -> Sym {
        self.name
    }
    /// The interned label set (target labels included).
    pub fn label_set(&self) -> LabelSetId {
        self.labels
    }
    /// Its part in the family.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Point times, milliseconds since the Unix epoch, ascending.
    pub fn times(&self) -> &[i64] {
        &self.times
    }
    /// Point values, aligned with [`Series::times`].
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// Number of points.
    pub fn len(&self) -> usize {
        self.times.len()
    }
    /// True when the series has no point.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

/// Bounds that protect memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of distinct series; samples of further new series are
    /// dropped with one warning.
    pub max_series: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_series: 500_000,
        }
    }
}

/// Something the store noticed that the reader should know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreWarning {
    /// A family was declared with two different types; the first is kept.
    TypeConflict {
        /// Family name.
        family: String,
        /// The type kept.
        kept: MetricType,
        /// The other type seen.
        other: MetricType,
    },
    /// Points with the same series and time; the last one read was kept.
    DuplicatePoints {
        /// How many points were dropped.
        dropped: u64,
    },
    /// The series limit was reached; samples of further new series dropped.
    SeriesLimit {
        /// The limit.
        limit: usize,
        /// Samples dropped.
        dropped_samples: u64,
    },
}

impl fmt::Display for StoreWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreWarning::TypeConflict {
                family,
                kept,
                other,
            } => write!(
                f,
                "family `{family}` is declared both {kept} and {other}; read as {kept}"
            ),
            StoreWarning::DuplicatePoints { dropped } => write!(
                f,
                "{dropped} points repeat a series at a time already seen; the last one read was kept"
            ),
            StoreWarning::SeriesLimit {
                limit,
                dropped_samples,
            } => write!(
                f,
                "more than {limit} distinct series (a cardinality bomb?): {dropped_samples} samples of further series were dropped"
            ),
        }
    }
}

/// What [`Store::ingest`] read from one scrape.
#[derive(Clone, Debug, Default)]
pub struct Ingested {
    /// Samples stored.
    pub samples: u32,
    /// Samples skipped because neither they nor the scrape had a time.
    pub untimed: u32,
    /// Samples that carried their own timestamp.
    pub timestamped: u32,
    /// Families declared or seen.
    pub families: u32,
    /// The parser's diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// Earliest and latest point time stored from this scrape.
    pub time_range: Option<(i64, i64)>,
}

/// Per target, the raw sample keys (name and label block as written) seen so
/// far, and the order of the last scrape. A target prints its series in
/// the same order every scrape, so the n-th sample is nearly always the
/// series the n-th sample was last time: one comparison, instead of
/// scanning the line's labels and hashing its key (the parser takes the
/// hint, [`Parser::next_hinted`]). Only speeds up ingest; dropped by [`Store::finish`].
#[derive(Debug, Default)]
struct KeyCache {
    map: FxHashMap<Arc<str>, SeriesId>,
    order: Vec<(Arc<str>, KeyShape, SeriesId)>,
}

impl KeyCache {
    /// The key, shape and series of the `position`-th sample last time.
    fn hint(&self, position: usize) -> Option<(&str, KeyShape, SeriesId)> {
        self.order
            .get(position)
            .map(|(k, shape, id)| (&**k, *shape, *id))
    }

    fn record(&mut self, position: usize, key: &str, shape: KeyShape, id: SeriesId) {
        let shared = match self.map.get_key_value(key) {
            Some((k, _)) => Arc::clone(k),
            None => Arc::from(key),
        };
        if position < self.order.len() {
            self.order[position] = (shared, shape, id);
        } else if position == self.order.len() {
            self.order.push((shared, shape, id));
        }
    }
}

/// The series store. See the crate documentation.
#[derive(Debug, Default)]
pub struct Store {
    strings: Interner,
    label_sets: Vec<Box<[(Sym, Sym)]>>,
    label_set_ids: FxHashMap<Box<[(Sym, Sym)]>, LabelSetId>,
    families: Vec<Family>,
    family_ids: FxHashMap<String, FamilyId>,
    underscored: FxHashMap<String, FamilyId>,
    series: Vec<Series>,
    series_ids: FxHashMap<(TargetId, Sym, LabelSetId), SeriesId>,
    targets: Vec<Target>,
    raw_keys: Vec<KeyCache>,
    limits: Limits,
    warnings: Vec<StoreWarning>,
    dropped_samples: u64,
    non_finite: u64,
    points: u64,
    pushed_width: Option<i64>,
}

impl Store {
    /// An empty store with the given limits.
    pub fn with_limits(limits: Limits) -> Store {
        Store {
            limits,
            ..Store::default()
        }
    }

    /// Registers a target. `labels` are its identity labels; `job` (the
    /// kind) and `instance` (the name) are added when not given.
    pub fn add_target(
        &mut self,
        name: &str,
        kind: TargetKind,
        labels: &[(&str, &str)],
    ) -> TargetId {
        let id = TargetId(self.targets.len() as u32);
        let mut own: Vec<(Sym, Sym)> = Vec::new();
        for (k, v) in labels {
            if !k.is_empty() && !own.iter().any(|(n, _)| self.strings.resolve(*n) == *k) {
                own.push((self.strings.intern(k), self.strings.intern(v)));
            }
        }
        for (k, v) in [("job", kind.as_str()), ("instance", name)] {
            if !own.iter().any(|(n, _)| self.strings.resolve(*n) == k) {
                own.push((self.strings.intern(k), self.strings.intern(v)));
            }
        }
        let strings = &self.strings;
        own.sort_by(|a, b| strings.resolve(a.0).cmp(strings.resolve(b.0)));
        self.targets.push(Target {
            name: name.to_string(),
            kind,
            labels: own,
            scrapes: Vec::new(),
            times: Vec::new(),
            expected_points: 0,
        });
        self.raw_keys.push(KeyCache::default());
        id
    }

    /// Tells the store how many scrapes of `target` are coming, so that each
    /// new series of it reserves that many points at once instead of
    /// growing by doubling (which can hold twice the points' memory at the
    /// peak). A hint only: series grow past it if they must.
    pub fn expect_points(&mut self, target: TargetId, points: usize) {
        if let Some(t) = self.targets.get_mut(target.0 as usize) {
            t.expected_points = points;
        }
    }

    /// Changes a target's kind (e.g. once its content has been sniffed).
    pub fn set_target_kind(&mut self, target: TargetId, kind: TargetKind) {
        if let Some(t) = self.targets.get_mut(target.0 as usize) {
            t.kind = kind;
        }
    }

    /// Records a scrape (successful or failed) of a target.
    pub fn record_scrape(&mut self, target: TargetId, record: ScrapeRecord) {
        if let Some(t) = self.targets.get_mut(target.0 as usize) {
            t.scrapes.push(record);
        }
    }

    /// Parses one scrape of `target` and stores its samples. Samples without
    /// their own timestamp take `default_time_ms`; when that is `None` they
    /// are counted in [`Ingested::untimed`] and not stored.
    pub fn ingest(
        &mut self,
        target: TargetId,
        text: &str,
        default_time_ms: Option<i64>,
    ) -> Ingested {
        self.ingest_inner(target, text, default_time_ms, false)
    }

    /// Stores, at `time_ms`, only the samples of a scrape that carry no
    /// timestamp of their own: the second pass after an [`Store::ingest`]
    /// without a default time reported [`Ingested::untimed`] samples and a
    /// fallback time was found. Merges into `first` and returns it.
    pub fn ingest_untimed(
        &mut self,
        target: TargetId,
        text: &str,
        time_ms: i64,
        first: Ingested,
    ) -> Ingested {
        let second = self.ingest_inner(target, text, Some(time_ms), true);
        let mut out = first;
        out.samples += second.samples;
        out.untimed = 0;
        out.time_range = match (out.time_range, second.time_range) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            (a, b) => a.or(b),
        };
        out
    }

    /// Stores one pushed-down statistic per sample of `text` (exposition
    /// text with a timestamp on every sample, as a pushdown export's answers
    /// become): each sample's series gets `stat` at that time, kept apart
    /// from its points. Returns the diagnostics and the samples stored.
    pub fn ingest_window_stats(
        &mut self,
        target: TargetId,
        text: &str,
        stat: WindowStat,
    ) -> Ingested {
        let mut out = Ingested::default();
        let mut parser = Parser::new(text);
        while let Some(event) = parser.next_hinted(None) {
            let Event::Sample(sample) = event else {
                continue;
            };
            let Some(time) = sample.timestamp_ms else {
                out.untimed += 1;
                continue;
            };
            let Some(id) = self.series_for(target, sample.key, sample.name, &sample.labels) else {
                self.dropped_samples += 1;
                continue;
            };
            let series = &mut self.series[id.0 as usize];
            series
                .pushed
                .get_or_insert_with(Box::default)
                .column(stat)
                .push((time, sample.value));
            out.samples += 1;
            out.timestamped += 1;
        }
        out.diagnostics = parser.into_diagnostics();
        out
    }

    /// The width of the windows of a pushdown export, ms (after
    /// [`Store::finish`]): the smallest step between two pushed-down
    /// statistics of one series. `None` when the bundle holds raw points
    /// only.
    pub fn pushed_width_ms(&self) -> Option<i64> {
        self.pushed_width
    }

    fn find_pushed_width(&self) -> Option<i64> {
        self.series
            .iter()
            .filter_map(|s| s.pushed.as_deref())
            .flat_map(|p| {
                [&p.max, &p.min, &p.avg, &p.count, &p.time]
                    .into_iter()
                    .flat_map(|c| c.windows(2).map(|w| w[1].0 - w[0].0))
            })
            .filter(|&d| d > 0)
            .min()
    }

    fn ingest_inner(
        &mut self,
        target: TargetId,
        text: &str,
        default_time_ms: Option<i64>,
        only_untimed: bool,
    ) -> Ingested {
        let mut out = Ingested::default();
        let mut parser = Parser::new(text);
        let mut min_t = i64::MAX;
        let mut max_t = i64::MIN;
        let mut own_times: Vec<i64> = Vec::new();
        // The n-th stored sample of this scrape, for KeyCache::predict.
        let mut position = 0usize;
        loop {
            let hint = self
                .raw_keys
                .get(target.0 as usize)
                .and_then(|c| c.hint(position));
            let Some(event) = parser.next_hinted(hint.map(|(k, shape, _)| (k, shape))) else {
                break;
            };
            let predicted = match hint {
                Some((_, _, id)) if parser.hint_matched() => Some(id),
                _ => None,
            };
            match event {
                Event::Type { name, kind, .. } => {
                    out.families += 1;
                    self.declare(name, Some(kind), None, None);
                }
                Event::Help { name, text, .. } => {
                    self.declare(name, None, Some(text), None);
                }
                Event::Unit { name, unit, .. } => {
                    self.declare(name, None, None, Some(unit));
                }
                Event::Sample(sample) => {
                    let time = match (sample.timestamp_ms, default_time_ms) {
                        (Some(_), _) if only_untimed => continue,
                        (Some(t), _) => {
                            out.timestamped += 1;
                            if own_times.last() != Some(&t) {
                                own_times.push(t);
                            }
                            t
                        }
                        (None, Some(t)) => t,
                        (None, None) => {
                            out.untimed += 1;
                            continue;
                        }
                    };
                    let id = match predicted {
                        Some(id) => id,
                        None => {
                            let Some(id) =
                                self.series_for(target, sample.key, sample.name, &sample.labels)
                            else {
                                self.dropped_samples += 1;
                                continue;
                            };
                            self.raw_keys[target.0 as usize].record(
                                position,
                                sample.key,
                                sample.shape(),
                                id,
                            );
                            id
                        }
                    };
                    position += 1;
                    let series = &mut self.series[id.0 as usize];
                    if let Some(&last) = series.times.last()
                        && time <= last
                    {
                        series.sorted = false;
                    }
                    series.times.push(time);
                    series.values.push(sample.value);
                    if !sample.value.is_finite() {
                        self.non_finite += 1;
                    }
                    self.points += 1;
                    out.samples += 1;
                    min_t = min_t.min(time);
                    max_t = max_t.max(time);
                }
            }
        }
        out.diagnostics = parser.into_diagnostics();
        if out.samples > 0 {
            out.time_range = Some((min_t, max_t));
        }
        if let Some(t) = self.targets.get_mut(target.0 as usize) {
            if out.samples > out.timestamped
                && let Some(d) = default_time_ms
            {
                t.times.push(d);
            }
            t.times.extend(own_times);
        }
        out
    }

    /// Sorts points, drops duplicate points (keeping the last read), sorts
    /// scrape records and releases slack capacity. Call once after ingest.
    pub fn finish(&mut self) {
        let mut dropped = 0u64;
        let width = self.find_pushed_width();
        self.pushed_width = width;
        for series in &mut self.series {
            // Points moved to a time a raw sample of a pushdown export also
            // has: the same sample twice, not a duplicate to report.
            let mut moved: Vec<i64> = Vec::new();
            if let (Some(p), Some(w)) = (&mut series.pushed, width) {
                p.finish();
                // A pushdown export's last value of each window is stamped
                // at the window's end; its real time came beside it.
                if !p.time.is_empty() {
                    for t in series.times.iter_mut() {
                        if let Ok(i) = p.time.binary_search_by_key(t, |x| x.0) {
                            let real = (p.time[i].1 * 1000.0).round() as i64;
                            if real <= *t && real > *t - w {
                                *t = real;
                                moved.push(real);
                                series.sorted = false;
                            }
                        }
                    }
                }
                moved.sort_unstable();
            }
            if !series.sorted {
                let mut idx: Vec<usize> = (0..series.times.len()).collect();
                // Stable: equal times keep their read order, so "last" is last.
                idx.sort_by_key(|&i| series.times[i]);
                let times: Vec<i64> = idx.iter().map(|&i| series.times[i]).collect();
                let values: Vec<f64> = idx.iter().map(|&i| series.values[i]).collect();
                let mut t_out: Vec<i64> = Vec::with_capacity(times.len());
                let mut v_out: Vec<f64> = Vec::with_capacity(times.len());
                for (t, v) in times.into_iter().zip(values) {
                    if t_out.last() == Some(&t) {
                        if moved.binary_search(&t).is_err() {
                            dropped += 1;
                        }
                        if let Some(last) = v_out.last_mut() {
                            *last = v;
                        }
                    } else {
                        t_out.push(t);
                        v_out.push(v);
                    }
                }
                series.times = t_out;
                series.values = v_out;
                series.sorted = true;
            }
            series.times.shrink_to_fit();
            series.values.shrink_to_fit();
        }
        self.points = self.series.iter().map(|s| s.times.len() as u64).sum();
        if dropped > 0 {
            self.warnings
                .push(StoreWarning::DuplicatePoints { dropped });
        }
        if self.dropped_samples > 0 {
            self.warnings.push(StoreWarning::SeriesLimit {
                limit: self.limits.max_series,
                dropped_samples: self.dropped_samples,
            });
            self.dropped_samples = 0;
        }
        for target in &mut self.targets {
            target
                .scrapes
                .sort_by(|a, b| a.time_ms.cmp(&b.time_ms).then_with(|| a.file.cmp(&b.file)));
            target.times.sort_unstable();
            target.times.dedup();
            target.times.shrink_to_fit();
        }
        // The raw-key caches only speed up ingest.
        for keys in &mut self.raw_keys {
            *keys = KeyCache::default();
        }
        self.series_ids.shrink_to_fit();
    }

    /// Keeps only points, scrape records and scrape times within
    /// `from ..= to` (call after [`Store::finish`]); returns the scrape
    /// records dropped, with their target's name, for the loader's message.
    pub fn retain_times(&mut self, from: i64, to: i64) -> Vec<(String, ScrapeRecord)> {
        let inside = |t: i64| (from..=to).contains(&t);
        for series in &mut self.series {
            let lo = series.times.partition_point(|&t| t < from);
            let hi = series.times.partition_point(|&t| t <= to);
            if lo > 0 || hi < series.times.len() {
                series.times.truncate(hi);
                series.values.truncate(hi);
                series.times.drain(..lo);
                series.values.drain(..lo);
                series.times.shrink_to_fit();
                series.values.shrink_to_fit();
            }
        }
        self.points = self.series.iter().map(|s| s.times.len() as u64).sum();
        let mut dropped = Vec::new();
        for target in &mut self.targets {
            target.times.retain(|&t| inside(t));
            let (keep, gone): (Vec<_>, Vec<_>) =
                target.scrapes.drain(..).partition(|s| inside(s.time_ms));
            target.scrapes = keep;
            dropped.extend(gone.into_iter().map(|s| (target.name.clone(), s)));
        }
        dropped
    }

    fn declare(
        &mut self,
        name: &str,
        kind: Option<MetricType>,
        help: Option<&str>,
        unit: Option<&str>,
    ) {
        let id = self.family_id(name);
        let family = &mut self.families[id.0 as usize];
        if let Some(kind) = kind {
            if !family.declared {
                family.kind = kind;
                family.declared = true;
                // Once, when first declared (every scrape declares it
                // again: a String per TYPE line was most of the load's
                // allocations).
                if name.contains(':') {
                    self.underscored.entry(name.replace(':', "_")).or_insert(id);
                }
            } else if family.kind != kind {
                let warning = StoreWarning::TypeConflict {
                    family: name.to_string(),
                    kept: family.kind,
                    other: kind,
                };
                if !self.warnings.contains(&warning) {
                    self.warnings.push(warning);
                }
            }
        }
        if family.help.is_none()
            && let Some(help) = help
        {
            family.help = Some(unescape_help(help).into_owned());
        }
        if family.unit.is_none()
            && let Some(unit) = unit
        {
            family.unit = Some(unit.to_string());
        }
    }

    fn family_id(&mut self, name: &str) -> FamilyId {
        if let Some(&id) = self.family_ids.get(name) {
            return id;
        }
        let id = FamilyId(self.families.len() as u32);
        self.families.push(Family {
            name: name.to_string(),
            kind: MetricType::Untyped,
            declared: false,
            help: None,
            unit: None,
            series: Vec::new(),
        });
        self.family_ids.insert(name.to_string(), id);
        id
    }

    /// The declared family `name` names: exactly, or with `:` written as `_`
    /// (OpenMetrics from recent `prometheus_client` declares
    /// `vllm:request_success` and prints samples as `vllm_request_success_total`).
    fn declared(&self, name: &str) -> Option<FamilyId> {
        let declared = |id: &FamilyId| self.families[id.0 as usize].declared;
        if let Some(id) = self.family_ids.get(name).filter(|id| declared(id)) {
            return Some(*id);
        }
        if name.contains(':') {
            return None;
        }
        self.underscored.get(name).copied()
    }

    fn declared_kind(&self, name: &str) -> Option<MetricType> {
        self.declared(name)
            .map(|id| self.families[id.0 as usize].kind)
    }

    /// True when `base` names a counter, histogram or summary, so that
    /// `base_created` holds its creation timestamp.
    fn has_created_parent(&self, base: &str) -> bool {
        matches!(
            self.declared_kind(base),
            Some(
                MetricType::Counter
                    | MetricType::Histogram
                    | MetricType::Summary
                    | MetricType::GaugeHistogram
            )
        ) || self.declared_kind(&format!("{base}_total")) == Some(MetricType::Counter)
    }

    /// Decides the family and role of a sample name.
    fn classify(&mut self, name: &str, labels: &Labels<'_>) -> (FamilyId, Role) {
        use MetricType as T;
        if let Some(id) = self.declared(name) {
            let kind = self.families[id.0 as usize].kind;
            let role = match kind {
                T::Counter if name.ends_with("_total") => Role::Total,
                T::Summary if labels.iter().any(|l| l.name == "quantile") => Role::Quantile,
                T::Info => Role::Info,
                T::Gauge | T::Untyped
                    if name
                        .strip_suffix("_created")
                        .is_some_and(|b| self.has_created_parent(b)) =>
                {
                    Role::Created
                }
                _ => Role::Value,
            };
            return (id, role);
        }
        const SUFFIXES: [(&str, Role, &[MetricType]); 8] = [
            ("_bucket", Role::Bucket, &[T::Histogram, T::GaugeHistogram]),
            ("_count", Role::Count, &[T::Histogram, T::Summary]),
            ("_sum", Role::Sum, &[T::Histogram, T::Summary]),
            ("_gcount", Role::GaugeCount, &[T::GaugeHistogram]),
            ("_gsum", Role::GaugeSum, &[T::GaugeHistogram]),
            (
                "_created",
                Role::Created,
                &[T::Counter, T::Histogram, T::Summary, T::GaugeHistogram],
            ),
            ("_total", Role::Total, &[T::Counter]),
            ("_info", Role::Info, &[T::Info]),
        ];
        for (suffix, role, kinds) in SUFFIXES {
            if let Some(base) = name.strip_suffix(suffix)
                && let Some(id) = self.declared(base)
                && kinds.contains(&self.families[id.0 as usize].kind)
            {
                return (id, role);
            }
        }
        let role = if name
            .strip_suffix("_created")
            .is_some_and(|b| self.has_created_parent(b))
        {
            Role::Created
        } else {
            Role::Value
        };
        (self.family_id(name), role)
    }

    fn series_for(
        &mut self,
        target: TargetId,
        key: &str,
        name: &str,
        labels: &Labels<'_>,
    ) -> Option<SeriesId> {
        let keys = self.raw_keys.get(target.0 as usize)?;
        if let Some(&id) = keys.map.get(key) {
            return Some(id);
        }
        // Slow path: canonical label set, target labels attached.
        let target_labels = self.targets[target.0 as usize].labels.clone();
        let mut set: Vec<(Sym, Sym)> = Vec::new();
        for label in labels.iter() {
            let mut label_name = label.name.to_string();
            if target_labels
                .iter()
                .any(|(n, _)| self.strings.resolve(*n) == label_name)
            {
                label_name = format!("exported_{label_name}");
            }
            let n = self.strings.intern(&label_name);
            let v = self.strings.intern(&label.value());
            match set.iter_mut().find(|(k, _)| *k == n) {
                Some(slot) => slot.1 = v,
                None => set.push((n, v)),
            }
        }
        set.extend(target_labels);
        let strings = &self.strings;
        set.sort_by(|a, b| strings.resolve(a.0).cmp(strings.resolve(b.0)));
        let labels_id = self.label_set_id(set);
        let name_sym = self.strings.intern(name);
        let id = match self.series_ids.get(&(target, name_sym, labels_id)) {
            Some(&id) => id,
            None => {
                if self.series.len() >= self.limits.max_series {
                    return None;
                }
                let (family, role) = self.classify(name, labels);
                let id = SeriesId(self.series.len() as u32);
                self.series.push(Series {
                    target,
                    family,
                    name: name_sym,
                    labels: labels_id,
                    role,
                    times: Vec::with_capacity(self.targets[target.0 as usize].expected_points),
                    values: Vec::with_capacity(self.targets[target.0 as usize].expected_points),
                    sorted: true,
                    pushed: None,
                });
                self.families[family.0 as usize].series.push(id);
                self.series_ids.insert((target, name_sym, labels_id), id);
                id
            }
        };
        self.raw_keys[target.0 as usize].map.insert(key.into(), id);
        Some(id)
    }

    fn label_set_id(&mut self, set: Vec<(Sym, Sym)>) -> LabelSetId {
        if let Some(&id) = self.label_set_ids.get(set.as_slice()) {
            return id;
        }
        let id = LabelSetId(self.label_sets.len() as u32);
        let boxed: Box<[(Sym, Sym)]> = set.into_boxed_slice();
        self.label_sets.push(boxed.clone());
        self.label_set_ids.insert(boxed, id);
        id
    }

    // ----- reading -----

    /// All targets, in registration order.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// One target.
    pub fn target(&self, id: TargetId) -> &Target {
        &self.targets[id.0 as usize]
    }

    /// The identity labels of a target.
    pub fn target_labels(&self, id: TargetId) -> impl Iterator<Item = (&str, &str)> {
        self.targets[id.0 as usize]
            .labels
            .iter()
            .map(|(k, v)| (self.strings.resolve(*k), self.strings.resolve(*v)))
    }

    /// All families, in the order first seen.
    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// One family.
    pub fn family(&self, id: FamilyId) -> &Family {
        &self.families[id.0 as usize]
    }

    /// The family with this name.
    pub fn find_family(&self, name: &str) -> Option<FamilyId> {
        self.family_ids.get(name).copied()
    }

    /// All series.
    pub fn all_series(&self) -> &[Series] {
        &self.series
    }

    /// One series.
    pub fn series(&self, id: SeriesId) -> &Series {
        &self.series[id.0 as usize]
    }

    /// The sample name of a series.
    pub fn series_name(&self, id: SeriesId) -> &str {
        self.strings.resolve(self.series[id.0 as usize].name)
    }

    /// The labels of a series (target labels included), sorted by name.
    pub fn labels(&self, id: SeriesId) -> impl Iterator<Item = (&str, &str)> {
        let set = &self.label_sets[self.series[id.0 as usize].labels.0 as usize];
        set.iter()
            .map(|(k, v)| (self.strings.resolve(*k), self.strings.resolve(*v)))
    }

    /// The value of one label of a series.
    pub fn label(&self, id: SeriesId, name: &str) -> Option<&str> {
        let sym = self.strings.get(name)?;
        let set = &self.label_sets[self.series[id.0 as usize].labels.0 as usize];
        set.iter()
            .find(|(k, _)| *k == sym)
            .map(|(_, v)| self.strings.resolve(*v))
    }

    /// Finds a series by sample name and exactly the given sample labels
    /// (target labels need not be given); the first match over targets.
    pub fn find_series(&self, name: &str, labels: &[(&str, &str)]) -> Option<SeriesId> {
        let name_sym = self.strings.get(name)?;
        self.series.iter().enumerate().find_map(|(i, s)| {
            if s.name != name_sym {
                return None;
            }
            let id = SeriesId(i as u32);
            let target_names: Vec<&str> = self.target_labels(s.target).map(|(k, _)| k).collect();
            let own: Vec<(&str, &str)> = self
                .labels(id)
                .filter(|(k, _)| !target_names.contains(k))
                .collect();
            let mut want: Vec<(&str, &str)> = labels.to_vec();
            want.sort();
            (own == want).then_some(id)
        })
    }

    /// Warnings gathered so far (complete after [`Store::finish`]).
    pub fn warnings(&self) -> &[StoreWarning] {
        &self.warnings
    }

    /// Samples read whose value is NaN or ±Inf.
    pub fn non_finite_samples(&self) -> u64 {
        self.non_finite
    }

    /// Total points stored.
    pub fn points(&self) -> u64 {
        self.points
    }

    /// Approximate heap bytes held by the store.
    pub fn heap_bytes(&self) -> usize {
        let points: usize = self
            .series
            .iter()
            .map(|s| {
                s.times.capacity() * 8
                    + s.values.capacity() * 8
                    + s.pushed.as_deref().map_or(0, |p| {
                        (p.min.capacity()
                            + p.max.capacity()
                            + p.avg.capacity()
                            + p.count.capacity()
                            + p.time.capacity())
                            * 16
                    })
            })
            .sum();
        let series = self.series.capacity() * std::mem::size_of::<Series>()
            + self.series_ids.capacity() * 24;
        let label_sets: usize = self
            .label_sets
            .iter()
            .map(|s| s.len() * 8 * 2 + 16)
            .sum::<usize>()
            + self.label_set_ids.capacity() * 24;
        let raw_keys: usize = self
            .raw_keys
            .iter()
            .map(|m| {
                m.map.capacity() * 24
                    + m.map.keys().map(|k| k.len()).sum::<usize>()
                    + m.order.capacity() * 24
            })
            .sum();
        let families: usize = self
            .families
            .iter()
            .map(|f| {
                f.name.len() * 2
                    + f.help.as_ref().map_or(0, String::len)
                    + f.series.capacity() * 4
                    + std::mem::size_of::<Family>()
                    + 24
            })
            .sum();
        let targets: usize = self
            .targets
            .iter()
            .map(|t| {
                t.scrapes.capacity() * std::mem::size_of::<ScrapeRecord>()
                    + t.scrapes.iter().map(|s| s.file.len()).sum::<usize>()
                    + t.times.capacity() * 8
            })
            .sum();
        points + series + label_sets + raw_keys + families + targets + self.strings.heap_bytes()
    }
}

#[cfg(test)]
mod tests;
