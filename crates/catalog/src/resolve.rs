//! Resolving signals to the families a store holds.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use vllm_lens_store::{FamilyId, MetricType, Role, SeriesId, Store, TargetId};

use crate::era::{Era, infer_era};
use crate::gpu::{Gpu, dedupe, gpu_identity};
use crate::signals::{
    CONNECTOR_PREFIXES, Candidate, Kind, OTHER_KNOWN_VLLM, SIGNALS, Signal, Source, Unit,
};

/// A name reduced for matching: `:` read as `_` (OpenTelemetry and
/// OpenMetrics exports write `vllm_` for `vllm:`) and a trailing `_total`
/// dropped (counters are declared with or without it).
pub fn canonical(name: &str) -> String {
    let n = name.replace(':', "_");
    match n.strip_suffix("_total") {
        Some(base) => base.to_string(),
        None => n,
    }
}

/// How a signal was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Under its preferred (newest) name on every target that has it.
    Found,
    /// Under an older or fallback name on at least one target.
    Aliased,
    /// No candidate family is present: shown as missing, never as 0.
    Missing,
}

/// The series one target contributes to a signal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetChoice {
    /// The target.
    #[serde(skip)]
    pub target: TargetId,
    /// Its name.
    pub target_name: String,
    /// Index of the candidate used.
    pub candidate: usize,
    /// The family name as the bundle spells it.
    pub family: String,
    /// Series used (for a histogram: its buckets, count and sum).
    #[serde(skip)]
    pub series: Vec<SeriesId>,
    /// Number of series used.
    pub series_count: usize,
}

/// One signal resolved against a bundle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Resolution {
    /// The signal.
    pub signal: Signal,
    /// Its stable key.
    pub key: &'static str,
    /// What it is.
    pub title: &'static str,
    /// Who exposes it.
    pub source: Source,
    /// Found, aliased or missing.
    pub status: Status,
    /// Candidate names used (exposed spelling from the catalogue).
    pub used: Vec<&'static str>,
    /// Candidates present but not used because a preferred one was there
    /// too (old and new names side by side): never added.
    pub also_present: Vec<&'static str>,
    /// Per target.
    pub targets: Vec<TargetChoice>,
    /// Raw unit of the (first) candidate used.
    pub unit: Option<Unit>,
    /// What the reader should know (fallback semantics, duplicates removed).
    pub notes: Vec<String>,
}

impl Resolution {
    /// Every series used, all targets.
    pub fn series(&self) -> impl Iterator<Item = SeriesId> + '_ {
        self.targets.iter().flat_map(|t| t.series.iter().copied())
    }

    /// The candidate a target uses.
    pub fn candidate_for(&self, target: TargetId) -> Option<&'static Candidate> {
        let choice = self.targets.iter().find(|t| t.target == target)?;
        self.signal.info().candidates.get(choice.candidate)
    }

    /// True when no candidate was found.
    pub fn is_missing(&self) -> bool {
        self.status == Status::Missing
    }
}

/// A `vllm:*` family the catalogue does not know: kept and listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnknownFamily {
    /// Family name.
    pub name: String,
    /// Declared type.
    pub kind: String,
    /// Series.
    pub series: usize,
}

/// Every signal resolved, the era, the GPUs and the unknown families.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Catalogue {
    /// Engine era and version range, bundle-wide and per target.
    pub era: Era,
    /// Per signal, in catalogue order.
    pub signals: Vec<Resolution>,
    /// GPUs seen in DCGM series (de-duplicated by host, UUID, GPU instance).
    pub gpus: Vec<Gpu>,
    /// `vllm:*` families not in the catalogue (kept, never an error).
    pub unknown_vllm_families: Vec<UnknownFamily>,
    /// Known optional families present (KV connectors, offload, spec decode, ...).
    pub other_vllm_families: Vec<String>,
}

impl Catalogue {
    /// Resolves every signal against `store`.
    pub fn resolve(store: &Store) -> Catalogue {
        let index = FamilyIndex::new(store);
        let mut signals: Vec<Resolution> = SIGNALS
            .iter()
            .map(|info| resolve_signal(store, &index, info.signal))
            .collect();
        for r in &mut signals {
            dedupe(store, r);
        }
        let era = infer_era(store, &index);
        let gpus = gpu_identity(store, &signals);
        let mut unknown = Vec::new();
        let mut other = BTreeSet::new();
        let known: BTreeSet<String> = SIGNALS
            .iter()
            .flat_map(|i| i.candidates.iter().map(|c| canonical(c.name)))
            .chain(OTHER_KNOWN_VLLM.iter().map(|n| canonical(n)))
            .collect();
        for family in store.families() {
            let name = family.name();
            let canon = canonical(name);
            if !canon.starts_with("vllm_") || family.series().is_empty() {
                continue;
            }
            // `_created` families hold creation times of a family we know.
            if let Some(base) = canon.strip_suffix("_created")
                && (known.contains(&canonical(base)) || !index.families(base).is_empty())
            {
                continue;
            }
            if OTHER_KNOWN_VLLM.iter().any(|k| canonical(k) == canon)
                || CONNECTOR_PREFIXES
                    .iter()
                    .any(|p| canon.starts_with(&p.replace(':', "_")))
            {
                other.insert(name.to_string());
                continue;
            }
            if known.contains(&canon) {
                continue;
            }
            unknown.push(UnknownFamily {
                name: name.to_string(),
                kind: family.kind().to_string(),
                series: family.series().len(),
            });
        }
        Catalogue {
            era,
            signals,
            gpus,
            unknown_vllm_families: unknown,
            other_vllm_families: other.into_iter().collect(),
        }
    }

    /// The resolution of one signal.
    pub fn get(&self, signal: Signal) -> &Resolution {
        self.signals
            .iter()
            .find(|r| r.signal == signal)
            .expect("every signal is resolved")
    }
}

/// Families by canonical name, and which targets have series in each.
pub(crate) struct FamilyIndex {
    by_canon: BTreeMap<String, Vec<FamilyId>>,
}

impl FamilyIndex {
    fn new(store: &Store) -> FamilyIndex {
        let mut by_canon: BTreeMap<String, Vec<FamilyId>> = BTreeMap::new();
        for (i, f) in store.families().iter().enumerate() {
            by_canon
                .entry(canonical(f.name()))
                .or_default()
                .push(FamilyId(i as u32));
        }
        FamilyIndex { by_canon }
    }

    /// Families whose canonical name is `canonical(name)`.
    pub(crate) fn families(&self, name: &str) -> &[FamilyId] {
        self.by_canon
            .get(&canonical(name))
            .map_or(&[], Vec::as_slice)
    }
}

fn kind_fits(candidate: &Candidate, source: Source, declared: MetricType) -> bool {
    use MetricType as T;
    if source == Source::Dcgm {
        // dcgm-exporter's TYPE lines are unreliable: decide by name.
        return !matches!(declared, T::Histogram | T::Summary | T::GaugeHistogram);
    }
    match candidate.kind {
        Kind::Histogram | Kind::HistogramCount => declared == T::Histogram,
        Kind::Counter => matches!(declared, T::Counter | T::Untyped),
        Kind::Gauge | Kind::RateGauge | Kind::Code | Kind::Timestamp => {
            matches!(declared, T::Gauge | T::Untyped)
        }
    }
}

fn role_fits(kind: Kind, role: Role) -> bool {
    match kind {
        Kind::Histogram => matches!(role, Role::Bucket | Role::Count | Role::Sum),
        Kind::HistogramCount => role == Role::Count,
        Kind::Counter => matches!(role, Role::Total | Role::Value),
        Kind::Gauge | Kind::RateGauge | Kind::Code | Kind::Timestamp => {
            matches!(role, Role::Value | Role::Total)
        }
    }
}

/// Series of `candidate` in the store, by target.
fn candidate_series(
    store: &Store,
    index: &FamilyIndex,
    candidate: &Candidate,
    source: Source,
) -> BTreeMap<TargetId, (String, Vec<SeriesId>)> {
    let mut out: BTreeMap<TargetId, (String, Vec<SeriesId>)> = BTreeMap::new();
    for &fid in index.families(candidate.name) {
        let family = store.family(fid);
        if !kind_fits(candidate, source, family.kind()) {
            continue;
        }
        for &sid in family.series() {
            let series = store.series(sid);
            if series.is_empty() || !role_fits(candidate.kind, series.role()) {
                continue;
            }
            if let Some((label, values)) = candidate.filter
                && !store.label(sid, label).is_some_and(|v| values.contains(&v))
            {
                continue;
            }
            out.entry(series.target())
                .or_insert_with(|| (family.name().to_string(), Vec::new()))
                .1
                .push(sid);
        }
    }
    out
}

fn resolve_signal(store: &Store, index: &FamilyIndex, signal: Signal) -> Resolution {
    let info = signal.info();
    let per_candidate: Vec<BTreeMap<TargetId, (String, Vec<SeriesId>)>> = info
        .candidates
        .iter()
        .map(|c| candidate_series(store, index, c, info.source))
        .collect();
    let targets: BTreeSet<TargetId> = per_candidate
        .iter()
        .flat_map(|m| m.keys().copied())
        .collect();
    let mut choices = Vec::new();
    let mut used = BTreeSet::new();
    let mut also = BTreeSet::new();
    for target in targets {
        let Some(k) = per_candidate.iter().position(|m| m.contains_key(&target)) else {
            continue;
        };
        for (j, m) in per_candidate.iter().enumerate().skip(k + 1) {
            if m.contains_key(&target) && info.candidates[j].rename && info.candidates[k].rename {
                also.insert(j);
            }
        }
        used.insert(k);
        let (family, series) = per_candidate[k][&target].clone();
        choices.push(TargetChoice {
            target,
            target_name: store.target(target).name().to_string(),
            candidate: k,
            family,
            series_count: series.len(),
            series,
        });
    }
    let status = if choices.is_empty() {
        Status::Missing
    } else if used.iter().any(|&k| k > 0) {
        Status::Aliased
    } else {
        Status::Found
    };
    let mut notes: Vec<String> = used
        .iter()
        .map(|&k| &info.candidates[k])
        .filter(|c| !c.note.is_empty())
        .map(|c| format!("{}: {}", c.name, c.note))
        .collect();
    if !also.is_empty() {
        notes.push(format!(
            "{} present beside the preferred name (old and new names side by side, as under --show-hidden-metrics-for-version); only the preferred one is read, never both",
            also.iter()
                .map(|&j| info.candidates[j].name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Resolution {
        signal,
        key: info.key,
        title: info.title,
        source: info.source,
        status,
        used: used.iter().map(|&k| info.candidates[k].name).collect(),
        also_present: also
            .iter()
            .filter(|j| !used.contains(j))
            .map(|&j| info.candidates[j].name)
            .collect(),
        unit: used.iter().next().map(|&k| info.candidates[k].unit),
        targets: choices,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn names_match_across_spellings() {
        for n in [
            "vllm:prompt_tokens_total",
            "vllm:prompt_tokens",
            "vllm_prompt_tokens_total",
        ] {
            assert_eq!(canonical(n), "vllm_prompt_tokens");
        }
        assert_eq!(canonical("DCGM_FI_DEV_GPU_UTIL"), "DCGM_FI_DEV_GPU_UTIL");
    }
}
