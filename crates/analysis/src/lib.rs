/*!
The analyses and the report model: from a loaded bundle to the serialisable
[`Report`] that the renderers (HTML, Markdown, JSON) print.

The pipeline here: resolve the catalogue, read every signal through the
rate and quantile engine per window, per replica and for the fleet
([`inputs`]), turn those into the sections' figures ([`rows`]), run the six
analyses of the walk-through in order ([`analyses`]), judge the four SLOs
([`slo`]), fire the recommendation rules whose evidence is present
([`recommend`]), list the moments that matter ([`timeline`]) and say what
the figures rest on ([`quality`]).

# Brief overview

* [`analyse`]: `Loaded` + [`Settings`] → [`Report`].
* [`model`]: the report's types, documented in `docs/report-schema.md`.
*/
#![deny(missing_docs)]

use std::collections::BTreeMap;

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Engine, Signal, Source};
use vllm_lens_query::{Query, Settings as QuerySettings};
use vllm_lens_store::TargetId;

pub(crate) mod analyses;
pub mod compare;
mod inputs;
pub mod model;
mod quality;
mod recommend;
mod rows;
mod slo;
pub mod time;
mod timeline;

use analyses::{Ctx, FleetWindow};
use inputs::{GpuInputs, combine_gpus, gpu_over_time, over_time, read_gpus, read_scope};
use model::*;
pub use model::{Report, SCHEMA_VERSION, SloThresholds};
pub use vllm_lens_query::grid::BadWidth;

/// How a report is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Window width, ms (15 s to 1 h).
    pub window_ms: i64,
    /// SLO thresholds.
    pub slo: SloThresholds,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            window_ms: vllm_lens_query::grid::DEFAULT_WINDOW_MS,
            slo: SloThresholds::default(),
        }
    }
}

/// What the shell knows about the bundle that the core cannot: its name
/// and the SHA-256 of its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BundleMeta {
    /// File or folder name.
    pub name: String,
    /// SHA-256 of the bytes, hex.
    pub sha256: Option<String>,
}

/// GPU key → replica (target name), from the manifest's `gpu_uuids`, the
/// pod labels on DCGM series, or the node; a single replica takes every GPU.
fn map_gpus(
    loaded: &Loaded,
    cat: &Catalogue,
    replicas: &[(TargetId, String)],
) -> BTreeMap<String, String> {
    let store = &loaded.store;
    let mut out = BTreeMap::new();
    for g in &cat.gpus {
        let mut owner: Option<String> = None;
        if let (Some(m), Some(uuid)) = (&loaded.manifest, &g.uuid) {
            owner = m
                .targets
                .iter()
                .find(|t| {
                    replicas.iter().any(|(_, n)| *n == t.name)
                        && t.gpu_uuids.iter().any(|u| u == uuid)
                })
                .map(|t| t.name.clone());
        }
        if owner.is_none() {
            // Pod labels on the GPU's series, against the replicas' pods.
            let sid = cat
                .get(Signal::GpuUtil)
                .series()
                .chain(cat.get(Signal::FbUsed).series())
                .find(|&s| vllm_lens_catalog::gpu::gpu_key(store, s) == g.key);
            if let Some(sid) = sid {
                let pod = store
                    .label(sid, "exported_pod")
                    .or_else(|| store.label(sid, "pod"));
                owner = replicas
                    .iter()
                    .find(|(t, _)| {
                        pod.is_some()
                            && store
                                .target_labels(*t)
                                .any(|(k, v)| k == "pod" && Some(v) == pod)
                    })
                    .map(|(_, n)| n.clone());
            }
        }
        if owner.is_none()
            && let Some(host) = &g.host
        {
            let on_node: Vec<&String> = replicas
                .iter()
                .filter(|(t, _)| {
                    store
                        .target_labels(*t)
                        .any(|(k, v)| k == "node" && v == host)
                })
                .map(|(_, n)| n)
                .collect();
            if on_node.len() == 1 {
                owner = Some(on_node[0].clone());
            }
        }
        if owner.is_none() && replicas.len() == 1 {
            owner = Some(replicas[0].1.clone());
        }
        out.insert(g.key.clone(), owner.unwrap_or_else(|| "unassigned".into()));
    }
    out
}

fn key(q: &Query<'_>, w: usize, replica: &str) -> RowKey {
    let (a, b) = q.grid().bounds(w);
    RowKey {
        window_start_ms: a,
        window_end_ms: b,
        replica: replica.to_string(),
    }
}

/// Makes the report of a loaded bundle.
pub fn analyse(
    loaded: &Loaded,
    meta: &BundleMeta,
    settings: &Settings,
) -> Result<Report, BadWidth> {
    let store = &loaded.store;
    let cat = Catalogue::resolve(store);
    let q = Query::new(
        store,
        &cat,
        QuerySettings {
            window_ms: settings.window_ms,
            ..QuerySettings::default()
        },
    )?;
    let n = q.grid().count;
    // Replicas: targets with vLLM engine signals.
    let mut replicas: Vec<(TargetId, String)> = Vec::new();
    for r in cat.signals.iter().filter(|r| r.source == Source::Vllm) {
        for t in &r.targets {
            if !replicas.iter().any(|(id, _)| *id == t.target) {
                replicas.push((t.target, t.target_name.clone()));
            }
        }
    }
    replicas.sort_by(|a, b| a.1.cmp(&b.1));
    let gpu_owner = map_gpus(loaded, &cat, &replicas);
    let gpus = read_gpus(&q);
    let uuid_of = |k: &str| {
        cat.gpus
            .iter()
            .find(|g| g.key == k)
            .and_then(|g| g.uuid.clone())
            .unwrap_or_else(|| k.to_string())
    };

    // Scopes: the fleet, then each replica.
    let fleet_in = read_scope(&q, None);
    let mut scopes: Vec<(String, Vec<inputs::Inputs>, Vec<GpuInputs>, bool)> = Vec::new();
    let all_gpus: Vec<&Vec<GpuInputs>> = gpus.values().collect();
    let fleet_gpu = combine_gpus(&all_gpus, n);
    scopes.push((
        "fleet".into(),
        fleet_in.windows,
        fleet_gpu,
        !gpus.is_empty(),
    ));
    let mut layout_mismatch = fleet_in.layout_mismatch;
    if replicas.len() > 1 || (replicas.len() == 1 && store.targets().len() > 2) {
        for (id, name) in &replicas {
            let scope = [*id];
            let s = read_scope(&q, Some(&scope));
            layout_mismatch.extend(s.layout_mismatch);
            let mine: Vec<&Vec<GpuInputs>> = gpus
                .iter()
                .filter(|(k, _)| gpu_owner.get(*k) == Some(name))
                .map(|(_, v)| v)
                .collect();
            let has = !mine.is_empty();
            scopes.push((name.clone(), s.windows, combine_gpus(&mine, n), has));
        }
    } else if let Some((_, name)) = replicas.first() {
        // One replica: its rows are the fleet's, under its own name too.
        let (_, w, g, has) = scopes[0].clone();
        scopes.push((name.clone(), w, g, has));
    }
    layout_mismatch.sort();
    layout_mismatch.dedup();

    let mut rows = Rows::default();
    let mut fleet_windows = Vec::new();
    for (name, windows, gpu_windows, has_gpu) in &scopes {
        for w in 0..n {
            let i = &windows[w];
            let g = has_gpu.then(|| &gpu_windows[w]);
            let k = key(&q, w, name);
            let latency = rows::latency(i);
            let efficiency = rows::efficiency(i);
            let workload = rows::workload(i);
            let outcomes = rows::outcomes(i);
            let memory = rows::memory(i, g);
            if name == "fleet" {
                fleet_windows.push(FleetWindow {
                    start_ms: k.window_start_ms,
                    latency: latency.clone(),
                    efficiency: efficiency.clone(),
                    workload: workload.clone(),
                    outcomes: outcomes.clone(),
                });
            }
            rows.latency.push(Row {
                key: k.clone(),
                fields: latency,
            });
            rows.efficiency.push(Row {
                key: k.clone(),
                fields: efficiency,
            });
            rows.workload.push(Row {
                key: k.clone(),
                fields: workload,
            });
            rows.outcomes.push(Row {
                key: k.clone(),
                fields: outcomes,
            });
            rows.memory.push(Row {
                key: k,
                fields: memory,
            });
        }
    }
    // GPU rows: each GPU, then aggregates per multi-GPU replica and the fleet.
    for (k, windows) in &gpus {
        let replica = gpu_owner
            .get(k)
            .cloned()
            .unwrap_or_else(|| "unassigned".into());
        for (w, g) in windows.iter().enumerate() {
            rows.gpu.push(GpuRow {
                key: key(&q, w, &replica),
                gpu: uuid_of(k),
                fields: rows::gpu(g),
            });
        }
    }
    for (name, _, gpu_windows, has_gpu) in &scopes {
        let own = gpu_owner.values().filter(|o| *o == name).count();
        if !*has_gpu || (name != "fleet" && own < 2) {
            continue;
        }
        for (w, g) in gpu_windows.iter().enumerate() {
            rows.gpu.push(GpuRow {
                key: key(&q, w, name),
                gpu: "all".into(),
                fields: rows::gpu(g),
            });
        }
    }

    // Summary: the fleet over the whole capture.
    let (start, end) = (q.grid().bounds(0).0, q.grid().bounds(n.saturating_sub(1)).1);
    let fleet_all = over_time(&scopes[0].1);
    let fleet_gpu_all = gpu_over_time(&scopes[0].2);
    let g = scopes[0].3.then_some(&fleet_gpu_all);
    let summary = Summary {
        window_start_ms: start,
        window_end_ms: end,
        latency: rows::latency(&fleet_all),
        efficiency: rows::efficiency(&fleet_all),
        workload: rows::workload(&fleet_all),
        outcomes: rows::outcomes(&fleet_all),
        gpu: g.map(rows::gpu).unwrap_or_default(),
        memory: rows::memory(&fleet_all, g),
    };

    let ctx = Ctx {
        catalogue: &cat,
        summary: &summary,
        windows: &fleet_windows,
        replicas: replicas.len(),
        engine_v1: cat.era.engine == Engine::V1,
        prefix_lifetime: fleet_all
            .gauges
            .get(&Signal::PrefixHitRateLifetime)
            .map(|g| g.last),
    };
    let analyses = analyses::run(&ctx);
    let (lat_rows, eff_rows): (Vec<_>, Vec<_>) = (rows.latency.clone(), rows.efficiency.clone());
    let slo = slo::scorecard(
        &settings.slo,
        &summary,
        &fleet_windows,
        &lat_rows,
        &eff_rows,
    );
    let model_name = model_name(loaded, &cat);
    let recommendations = recommend::recommend(&ctx, &slo, model_name.as_deref());
    let timeline = timeline::timeline(&ctx, &q, store, &settings.slo);
    let mut non_cumulative: Vec<Signal> = fleet_all
        .hists
        .iter()
        .filter(|(_, h)| {
            [0.5, 0.95, 0.99]
                .iter()
                .any(|&p| h.quantile(p).is_some_and(|x| x.forced_monotonic))
        })
        .map(|(s, _)| *s)
        .collect();
    non_cumulative.sort();
    let data_quality = quality::data_quality(loaded, &cat, &q, &layout_mismatch, &non_cumulative);

    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        bundle: bundle_info(loaded, meta, &q),
        deployment: deployment(loaded, &cat, &replicas, &gpu_owner, model_name, &uuid_of),
        settings: SettingsEcho {
            window_ms: settings.window_ms,
            slo: settings.slo,
        },
        rows,
        summary,
        analyses,
        slo,
        recommendations,
        timeline,
        data_quality,
    })
}

fn model_name(loaded: &Loaded, cat: &Catalogue) -> Option<String> {
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

fn bundle_info(loaded: &Loaded, meta: &BundleMeta, q: &Query<'_>) -> BundleInfo {
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

fn deployment(
    loaded: &Loaded,
    cat: &Catalogue,
    replicas: &[(TargetId, String)],
    gpu_owner: &BTreeMap<String, String>,
    model: Option<String>,
    uuid_of: &dyn Fn(&str) -> String,
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
            .map(|(k, v)| (uuid_of(k), v.clone()))
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
    }
}

/// The JSON Schema of [`Report`] (draft 2020-12), as committed in
/// `docs/report-schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Report);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}
