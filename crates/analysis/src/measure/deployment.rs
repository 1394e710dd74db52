//! What the bundle is and what it was captured from: the model, the
//! deployment (engine, release, GPUs and their replicas, the manifest's
//! engine arguments) and the bundle's own description.

use std::collections::BTreeMap;

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Engine, Signal};
use vllm_lens_query::Query;
use vllm_lens_store::TargetId;

use crate::ids::Scope;
use crate::model::{BundleInfo, Deployment, ModelServed, TargetInfo};

/// What the shell knows about the bundle that the core cannot: its name
/// and the SHA-256 of its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BundleMeta {
    /// File or folder name.
    pub name: String,
    /// SHA-256 of the bytes, hex.
    pub sha256: Option<String>,
}

pub(crate) fn model_name(loaded: &Loaded, cat: &Catalogue) -> Option<String> {
    let store = &loaded.store;
    cat.get(Signal::Running)
        .series()
        .find_map(|s| store.label(s, "model_name").map(str::to_string))
        .or_else(|| {
            loaded
                .manifest
                .as_ref()
                .and_then(|m| m.environment.as_ref())
                .and_then(|e| e.model.clone())
        })
}

pub(crate) fn bundle_info(loaded: &Loaded, meta: &BundleMeta, q: &Query<'_>) -> BundleInfo {
    let store = &loaded.store;
    let start = store
        .targets()
        .iter()
        .filter_map(|t| t.sample_times().first().copied())
        .min();
    let end = store
        .targets()
        .iter()
        .filter_map(|t| t.sample_times().last().copied())
        .max();
    let mut intervals: Vec<i64> = q.coverage().iter().map(|c| c.nominal_ms).collect();
    intervals.sort_unstable();
    BundleInfo {
        name: meta.name.clone(),
        sha256: meta.sha256.clone(),
        container: loaded.container.as_str().to_string(),
        scrape_files: loaded.scrape_files,
        start_ms: start,
        end_ms: end,
        duration_ms: start.zip(end).map(|(a, b)| b - a),
        scrape_interval_ms: intervals.get(intervals.len() / 2).copied(),
        pushdown_ms: loaded.store.pushed_width_ms(),
        targets: store
            .targets()
            .iter()
            .zip(q.coverage())
            .map(|(t, c)| TargetInfo {
                name: t.name().to_string(),
                kind: t.kind().as_str().to_string(),
                scrapes: t.sample_times().len(),
                failed_scrapes: t.scrapes().iter().filter(|s| !s.up).count(),
                interval_ms: c.nominal_ms,
            })
            .collect(),
    }
}

pub(crate) fn deployment(
    loaded: &Loaded,
    cat: &Catalogue,
    replicas: &[(TargetId, String)],
    gpu_owner: &BTreeMap<String, Scope>,
    model: Option<String>,
    gpu_uuid: &BTreeMap<String, String>,
    models: &[crate::measure::scopes::Served],
) -> Deployment {
    let env = loaded
        .manifest
        .as_ref()
        .and_then(|m| m.environment.as_ref());
    Deployment {
        vllm_engine: match cat.era.engine {
            Engine::V0 => "v0",
            Engine::V1 => "v1",
            Engine::Unknown => "unknown",
        }
        .into(),
        vllm_versions: cat.era.range_text(),
        vllm_version_stated: env.and_then(|e| e.vllm_version.clone()),
        model,
        gpu_model: cat
            .gpus
            .iter()
            .find_map(|g| g.model.clone())
            .or_else(|| env.and_then(|e| e.gpu_model.clone())),
        gpus: cat.gpus.len(),
        replicas: replicas.iter().map(|(_, n)| n.clone()).collect(),
        gpu_to_replica: gpu_owner
            .iter()
            .map(|(k, v)| {
                (
                    gpu_uuid.get(k).cloned().unwrap_or_else(|| k.clone()),
                    v.clone(),
                )
            })
            .collect(),
        engine_args: env
            .map(|e| {
                e.engine_args
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            match v {
                                serde_json::Value::String(s) => s.clone(),
                                other => other.to_string(),
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        device: env.and_then(|e| e.device.clone()),
        models: models
            .iter()
            .enumerate()
            .map(|(i, m)| ModelServed {
                model: m.model.clone(),
                replicas: m.replicas.clone(),
                finished: crate::text::round(m.finished),
                judged: i == 0,
            })
            .collect(),
        configuration: Vec::new(),
    }
}
