//! Which vLLM engine and release range produced a target's scrapes, read
//! from markers in the data (`vllm-metrics.md` §7), and what kind of
//! dcgm-exporter produced the GPU series.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Serialize, Serializer};
use vllm_lens_store::{Role, Store, TargetId};

use crate::resolve::{FamilyIndex, canonical};

/// A vLLM release, `major.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u16, pub u16, pub u16);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The oldest and newest release the catalogue knows.
pub const OLDEST: Version = Version(0, 4, 0);
/// See [`OLDEST`].
pub const NEWEST: Version = Version(0, 34, 0);

/// The engine generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// The V0 engine (0.4 – 0.10).
    V0,
    /// The V1 engine (0.7.1+, default from 0.8).
    V1,
    /// Not enough evidence.
    Unknown,
}

/// One piece of evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Marker {
    /// What was seen.
    pub seen: String,
    /// What it implies.
    pub implies: String,
}

/// Era of one vLLM target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetEra {
    /// Target name.
    pub target: String,
    /// Engine generation.
    pub engine: Engine,
    /// Oldest release consistent with the markers.
    pub min_version: Version,
    /// Newest release consistent with the markers.
    pub max_version: Version,
    /// False when the markers contradict each other (mixed or edited data).
    pub consistent: bool,
    /// The evidence.
    pub markers: Vec<Marker>,
}

/// What kind of dcgm-exporter produced the GPU series.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DcgmFlavour {
    /// `Hostname` (≤ 4.5.3), `hostname` (newer) or none (`--no-hostname`).
    pub hostname_label: Option<String>,
    /// Profiling (`DCGM_FI_PROF_*`) fields present.
    pub prof_fields: bool,
    /// `FB_RESERVED` present.
    pub fb_reserved: bool,
    /// DCGM 4.6 field names (`*_UTIL_RATIO`) seen.
    pub dcgm_46_names: bool,
    /// The 1.x lowercase namespace (`dcgm_gpu_temp`) seen.
    pub namespace_1x: bool,
}

/// Era of the whole bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Era {
    /// Engine generation common to all vLLM targets (`unknown` if mixed).
    pub engine: Engine,
    /// Range common to all vLLM targets (`None` when they disagree or
    /// there is none).
    pub min_version: Option<Version>,
    /// See `min_version`.
    pub max_version: Option<Version>,
    /// True when vLLM targets of different eras share the bundle.
    pub mixed: bool,
    /// Per vLLM target.
    pub targets: Vec<TargetEra>,
    /// The GPU exporter.
    pub dcgm: Option<DcgmFlavour>,
}

impl Era {
    /// `0.20.0 – 0.29.x`-style range for humans.
    pub fn range_text(&self) -> Option<String> {
        Some(range_text(self.min_version?, self.max_version?))
    }
}

/// `0.20.0 – 0.29.x`, or one version when both ends agree.
pub fn range_text(lo: Version, hi: Version) -> String {
    let hi_text = if hi.2 == 99 {
        format!("{}.{}.x", hi.0, hi.1)
    } else {
        hi.to_string()
    };
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo} – {hi_text}")
    }
}

struct Evidence {
    engine_v0: Vec<String>,
    engine_v1: Vec<String>,
    lo: Version,
    hi: Version,
    markers: Vec<Marker>,
}

impl Evidence {
    fn at_least(&mut self, v: Version, seen: &str) {
        self.lo = self.lo.max(v);
        self.markers.push(Marker {
            seen: seen.to_string(),
            implies: format!("≥ {v}"),
        });
    }
    fn at_most(&mut self, v: Version, seen: &str) {
        self.hi = self.hi.min(v);
        self.markers.push(Marker {
            seen: seen.to_string(),
            implies: format!("≤ {}", range_text(v, v).replace(".99", ".x")),
        });
    }
    fn between(&mut self, lo: Version, hi: Version, seen: &str) {
        self.lo = self.lo.max(lo);
        self.hi = self.hi.min(hi);
        self.markers.push(Marker {
            seen: seen.to_string(),
            implies: range_text(lo, hi),
        });
    }
}

/// A V1 target with at least this many `vllm:*` families is taken to be a
/// whole scrape, so that a family it lacks really is absent (V1 creates all
/// its default series at start-up; 0.8 servers already have more than 20).
const WHOLE_SCRAPE_FAMILIES: usize = 15;

const fn v(a: u16, b: u16, c: u16) -> Version {
    Version(a, b, c)
}

pub(crate) fn infer_era(store: &Store, index: &FamilyIndex) -> Era {
    let mut targets = Vec::new();
    for (i, t) in store.targets().iter().enumerate() {
        let id = TargetId(i as u32);
        let present = families_on(store, id);
        if !present.iter().any(|n| n.starts_with("vllm_")) {
            continue;
        }
        targets.push(target_era(store, index, id, t.name(), &present));
    }
    let engines: BTreeSet<&str> = targets
        .iter()
        .map(|t| match t.engine {
            Engine::V0 => "v0",
            Engine::V1 => "v1",
            Engine::Unknown => "?",
        })
        .collect();
    let engine = match (engines.len(), targets.first()) {
        (1, Some(t)) => t.engine,
        _ => Engine::Unknown,
    };
    let lo = targets.iter().map(|t| t.min_version).max();
    let hi = targets.iter().map(|t| t.max_version).min();
    let all_consistent = targets.iter().all(|t| t.consistent);
    let disjoint = lo.zip(hi).is_some_and(|(lo, hi)| lo > hi);
    let mixed = targets.len() > 1 && (engines.len() > 1 || disjoint);
    let (min_version, max_version) = if all_consistent && !mixed {
        (lo, hi)
    } else {
        (None, None)
    };
    Era {
        engine,
        min_version,
        max_version,
        mixed,
        targets,
        dcgm: dcgm_flavour(store),
    }
}

/// Canonical names of the families with at least one series on the target.
fn families_on(store: &Store, target: TargetId) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in store.families() {
        if f.series().iter().any(|&s| {
            let s = store.series(s);
            s.target() == target && !s.is_empty()
        }) {
            out.insert(canonical(f.name()));
        }
    }
    out
}

fn target_era(
    store: &Store,
    index: &FamilyIndex,
    target: TargetId,
    name: &str,
    present: &BTreeSet<String>,
) -> TargetEra {
    let has = |n: &str| present.contains(&canonical(n));
    let mut e = Evidence {
        engine_v0: Vec::new(),
        engine_v1: Vec::new(),
        lo: OLDEST,
        hi: NEWEST,
        markers: Vec::new(),
    };
    // HELP of the running gauge.
    for &fid in index.families("vllm:num_requests_running") {
        if let Some(help) = store.family(fid).help() {
            if help.contains("currently running on GPU") {
                e.engine_v0
                    .push("HELP of num_requests_running says \"running on GPU\"".into());
            } else if help.contains("model execution batches") {
                e.engine_v1
                    .push("HELP of num_requests_running says \"model execution batches\"".into());
            }
        }
    }
    // Labels and _created series.
    let mut engine_label = false;
    let mut created = false;
    let mut reasons: BTreeSet<(String, String)> = BTreeSet::new();
    let mut engines: BTreeSet<String> = BTreeSet::new();
    let mut ttft_top: Option<f64> = None;
    for (i, series) in store.all_series().iter().enumerate() {
        if series.target() != target || series.is_empty() {
            continue;
        }
        let sid = vllm_lens_store::SeriesId(i as u32);
        let fname = canonical(store.family(series.family()).name());
        if !fname.starts_with("vllm_") {
            continue;
        }
        if let Some(engine) = store.label(sid, "engine") {
            engine_label = true;
            engines.insert(engine.to_string());
        }
        if series.role() == Role::Created {
            created = true;
        }
        if fname == "vllm_request_success"
            && let Some(r) = store.label(sid, "finished_reason")
        {
            reasons.insert((
                store.label(sid, "engine").unwrap_or("").to_string(),
                r.to_string(),
            ));
        }
        if fname == "vllm_time_to_first_token_seconds"
            && series.role() == Role::Bucket
            && let Some(le) = store.label(sid, "le").and_then(|l| l.parse::<f64>().ok())
            && le.is_finite()
        {
            ttft_top = Some(ttft_top.map_or(le, |t: f64| t.max(le)));
        }
    }
    if engine_label {
        e.engine_v1.push("`engine` label on vllm:* series".into());
    }
    if created {
        e.engine_v1
            .push("`_created` series (V0 never exports them)".into());
    }
    let v1_only = [
        "vllm:kv_cache_usage_perc",
        "vllm:inter_token_latency_seconds",
        "vllm:engine_sleep_state",
        "vllm:prefix_cache_queries_total",
        "vllm:gpu_prefix_cache_queries_total",
        "vllm:request_time_per_output_token_seconds",
    ];
    for n in v1_only {
        if has(n) {
            e.engine_v1.push(format!("{n} (V1 only)"));
            break;
        }
    }
    let v0_only = [
        "vllm:avg_generation_throughput_toks_per_s",
        "vllm:gpu_prefix_cache_hit_rate",
        "vllm:num_requests_swapped",
        "vllm:cpu_cache_usage_perc",
    ];
    for n in v0_only {
        if has(n) {
            e.engine_v0.push(format!("{n} (V0 only)"));
            break;
        }
    }
    let engine = match (e.engine_v0.is_empty(), e.engine_v1.is_empty()) {
        (false, true) => Engine::V0,
        (true, false) => Engine::V1,
        _ => Engine::Unknown,
    };
    let mut consistent =
        !(engine == Engine::Unknown && !e.engine_v0.is_empty() && !e.engine_v1.is_empty());
    match engine {
        Engine::V0 => e.at_most(v(0, 10, 2), &e.engine_v0[0].clone()),
        Engine::V1 => e.at_least(v(0, 7, 1), &e.engine_v1[0].clone()),
        Engine::Unknown => {}
    }
    if engine_label {
        e.at_least(v(0, 8, 3), "`engine` label");
    }
    release_bounds(&mut e, &has);
    if engine == Engine::V1 {
        v1_bounds(&mut e, &has, present, &engines, &reasons);
    }
    if let Some(top) = ttft_top {
        if top == 10.0 {
            e.at_most(v(0, 8, 3), "TTFT buckets end at 10 s");
        } else if top >= 2560.0 {
            e.at_least(v(0, 8, 4), "TTFT buckets reach 2560 s");
        }
    }
    if e.lo > e.hi {
        consistent = false;
    }
    TargetEra {
        target: name.to_string(),
        engine,
        min_version: e.lo,
        max_version: e.hi,
        consistent,
        markers: e.markers,
    }
}

/// Bounds from families that appeared in a release or went away.
fn release_bounds(e: &mut Evidence, has: &dyn Fn(&str) -> bool) {
    // Families that appeared in a release.
    let since: [(&str, Version); 12] = [
        ("vllm:request_queue_time_seconds", v(0, 6, 4)),
        ("vllm:iteration_tokens_total", v(0, 6, 4)),
        ("http_requests_total", v(0, 8, 3)),
        ("vllm:kv_cache_usage_perc", v(0, 9, 2)),
        ("vllm:inter_token_latency_seconds", v(0, 10, 2)),
        ("vllm:request_time_per_output_token_seconds", v(0, 11, 0)),
        ("vllm:engine_sleep_state", v(0, 11, 1)),
        ("vllm:request_prefill_kv_computed_tokens", v(0, 13, 0)),
        ("vllm:prompt_tokens_cached_total", v(0, 16, 0)),
        ("vllm:num_requests_waiting_by_reason", v(0, 20, 0)),
        ("vllm:request_num_preemptions", v(0, 30, 0)),
        ("vllm:admission_rejections_total", v(0, 32, 0)),
    ];
    for (n, ver) in since {
        if has(n) {
            e.at_least(ver, n);
        }
    }
    // Families that went away.
    let until: [(&str, Version, Version); 4] = [
        (
            "vllm:avg_generation_throughput_toks_per_s",
            v(0, 4, 0),
            v(0, 6, 6),
        ),
        ("vllm:gpu_prefix_cache_hit_rate", v(0, 5, 5), v(0, 9, 0)),
        ("vllm:time_in_queue_requests", v(0, 6, 4), v(0, 9, 0)),
        (
            "vllm:prompt_tokens_recomputed_total",
            v(0, 16, 0),
            v(0, 19, 1),
        ),
    ];
    for (n, lo, hi) in until {
        if has(n) {
            e.between(lo, hi, n);
        }
    }
}

/// Bounds only the V1 engine gives: families it renamed, the default
/// families it pre-creates, and its `finished_reason` values.
fn v1_bounds(
    e: &mut Evidence,
    has: &dyn Fn(&str) -> bool,
    present: &BTreeSet<String>,
    engines: &BTreeSet<String>,
    reasons: &BTreeSet<(String, String)>,
) {
    if has("vllm:time_per_output_token_seconds") {
        e.at_most(v(0, 14, 1), "vllm:time_per_output_token_seconds on V1");
    }
    if has("vllm:gpu_cache_usage_perc") {
        e.at_most(v(0, 11, 2), "vllm:gpu_cache_usage_perc on V1");
    }
    if has("vllm:gpu_prefix_cache_queries_total") {
        e.between(
            v(0, 7, 3),
            v(0, 11, 2),
            "vllm:gpu_prefix_cache_queries_total",
        );
    }
    // V1 pre-creates every series: an absent default family means the
    // release predates it.
    let defaults: [(&str, Version); 7] = [
        ("vllm:kv_cache_usage_perc", v(0, 9, 1)),
        ("vllm:inter_token_latency_seconds", v(0, 10, 1)),
        ("vllm:request_time_per_output_token_seconds", v(0, 10, 99)),
        ("vllm:engine_sleep_state", v(0, 11, 0)),
        ("vllm:request_prefill_kv_computed_tokens", v(0, 12, 99)),
        ("vllm:prompt_tokens_cached_total", v(0, 15, 99)),
        ("vllm:request_num_preemptions", v(0, 29, 99)),
    ];
    // Only a whole scrape says what is absent: a filtered export (a
    // federation or a Prometheus query) holds a few families.
    let vllm_families = present.iter().filter(|n| n.starts_with("vllm_")).count();
    if has("vllm:num_requests_running") && vllm_families >= WHOLE_SCRAPE_FAMILIES {
        for (n, hi) in defaults {
            if !has(n) {
                e.at_most(hi, &format!("no {n}"));
            }
        }
        if has("vllm:kv_cache_usage_perc") && !has("vllm:gpu_cache_usage_perc") {
            e.at_least(
                v(0, 11, 0),
                "vllm:kv_cache_usage_perc without the old gpu_cache_usage_perc",
            );
        }
        if has("vllm:inter_token_latency_seconds") && !has("vllm:time_per_output_token_seconds") {
            e.at_least(
                v(0, 12, 0),
                "vllm:inter_token_latency_seconds without the old time_per_output_token_seconds",
            );
        }
    }
    // finished_reason values per engine: 3, 4 or 5.
    let per_engine = engines
        .iter()
        .map(|en| reasons.iter().filter(|(e2, _)| e2 == en).count())
        .max()
        .unwrap_or(reasons.len());
    match per_engine {
        3 => e.at_most(
            v(0, 12, 99),
            "3 finished_reason values (stop, length, abort)",
        ),
        4 => e.between(
            v(0, 13, 0),
            v(0, 16, 99),
            "4 finished_reason values (+ error)",
        ),
        5 => e.at_least(v(0, 17, 0), "5 finished_reason values (+ repetition)"),
        _ => {}
    }
}

fn dcgm_flavour(store: &Store) -> Option<DcgmFlavour> {
    let mut out = DcgmFlavour::default();
    let mut any = false;
    for f in store.families() {
        let n = f.name();
        if f.series().is_empty() {
            continue;
        }
        if n.starts_with("DCGM_FI_") || n.starts_with("dcgm_") {
            any = true;
        } else {
            continue;
        }
        out.prof_fields |= n.starts_with("DCGM_FI_PROF_");
        out.fb_reserved |= n == "DCGM_FI_DEV_FB_RESERVED";
        out.dcgm_46_names |= n.ends_with("_UTIL_RATIO") || n == "DCGM_FI_DEV_BOARD_POWER_WATTS";
        out.namespace_1x |= n.starts_with("dcgm_");
        if out.hostname_label.is_none()
            && let Some(&sid) = f.series().first()
        {
            for l in ["Hostname", "hostname"] {
                if store.label(sid, l).is_some() {
                    out.hostname_label = Some(l.to_string());
                }
            }
        }
    }
    any.then_some(out)
}
