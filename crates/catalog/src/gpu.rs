//! GPU identity in DCGM series, and removal of duplicate series.
//!
//! One physical GPU (or MIG GPU instance) is `(host, UUID, GPU_I_ID)`.
//! Time-slicing with virtual GPUs, DRA claims and MIG repeat the same value
//! on several series, and a bundle can hold two exporters' view of one GPU;
//! summing those multiplies the figure. So each DCGM signal keeps one series
//! per GPU key: the device-level one (without `pod_uid`/`vgpu`), else the
//! one with most points.

use std::collections::BTreeMap;

use serde::Serialize;
use vllm_lens_store::{SeriesId, Store};

use crate::resolve::Resolution;
use crate::signals::Source;

/// One GPU (or GPU instance) seen in the bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// `host/UUID[/GI]`, or `target/gpu` when there is no UUID.
    pub key: String,
    /// `Hostname`/`hostname` label, if any.
    pub host: Option<String>,
    /// `UUID`/`uuid` label.
    pub uuid: Option<String>,
    /// DCGM GPU index (`gpu` label).
    pub index: Option<String>,
    /// MIG GPU instance (`GPU_I_ID`), if any.
    pub instance: Option<String>,
    /// `modelName`.
    pub model: Option<String>,
    /// Targets that report it.
    pub targets: Vec<String>,
}

fn first<'a>(store: &'a Store, sid: SeriesId, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| store.label(sid, n))
}

/// The GPU a DCGM series describes.
pub fn gpu_key(store: &Store, sid: SeriesId) -> String {
    let host = first(store, sid, &["Hostname", "hostname"]);
    let uuid = first(store, sid, &["UUID", "uuid"]);
    let gi = store.label(sid, "GPU_I_ID");
    let mut key = match uuid {
        Some(u) => format!("{}/{u}", host.unwrap_or("")),
        None => format!(
            "{}/gpu{}",
            store.target(store.series(sid).target()).name(),
            store.label(sid, "gpu").unwrap_or("?")
        ),
    };
    if let Some(gi) = gi {
        key.push('/');
        key.push_str(gi);
    }
    key
}

/// Keeps one series per GPU in a DCGM resolution; returns how many were dropped.
pub(crate) fn dedupe(store: &Store, r: &mut Resolution) -> usize {
    if r.source != Source::Dcgm {
        return 0;
    }
    let mut best: BTreeMap<String, SeriesId> = BTreeMap::new();
    let rank = |sid: SeriesId| {
        let virtual_gpu =
            store.label(sid, "pod_uid").is_some() || store.label(sid, "vgpu").is_some();
        (
            !virtual_gpu,
            store.series(sid).len(),
            std::cmp::Reverse(sid),
        )
    };
    for sid in r.series() {
        let key = gpu_key(store, sid);
        match best.get(&key) {
            Some(&have) if rank(have) >= rank(sid) => {}
            _ => {
                best.insert(key, sid);
            }
        }
    }
    let keep: std::collections::BTreeSet<SeriesId> = best.values().copied().collect();
    let mut dropped = 0;
    for t in &mut r.targets {
        let before = t.series.len();
        t.series.retain(|s| keep.contains(s));
        dropped += before - t.series.len();
        t.series_count = t.series.len();
    }
    r.targets.retain(|t| !t.series.is_empty());
    if dropped > 0 {
        r.notes.push(format!(
            "{dropped} duplicate series of the same GPU (time-slicing, MIG or two exporters) ignored: one series per (host, UUID, GPU instance)"
        ));
    }
    dropped
}

/// Every GPU named by a DCGM signal's series.
pub(crate) fn gpu_identity(store: &Store, signals: &[Resolution]) -> Vec<Gpu> {
    let mut gpus: BTreeMap<String, Gpu> = BTreeMap::new();
    for r in signals.iter().filter(|r| r.source == Source::Dcgm) {
        for sid in r.series() {
            let key = gpu_key(store, sid);
            let target = store.target(store.series(sid).target()).name().to_string();
            let gpu = gpus.entry(key.clone()).or_insert_with(|| Gpu {
                key,
                host: first(store, sid, &["Hostname", "hostname"]).map(str::to_string),
                uuid: first(store, sid, &["UUID", "uuid"]).map(str::to_string),
                index: store.label(sid, "gpu").map(str::to_string),
                instance: store.label(sid, "GPU_I_ID").map(str::to_string),
                model: store.label(sid, "modelName").map(str::to_string),
                targets: Vec::new(),
            });
            if !gpu.targets.contains(&target) {
                gpu.targets.push(target);
            }
        }
    }
    gpus.into_values().collect()
}
