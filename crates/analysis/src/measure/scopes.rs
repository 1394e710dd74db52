//! Stage 1: who is in the bundle and what each scope did per window.
//!
//! Replicas are the targets with vLLM signals; GPUs are mapped to them
//! (the manifest's `gpu_uuids`, then pod labels on DCGM series, then the
//! node; a lone replica takes every GPU). Every scope (the fleet, then each
//! replica) is read window by window through the engine and made into the
//! per-window rows; a replica's inputs are dropped once its rows are made,
//! only the fleet's are kept for what follows.

use std::collections::BTreeMap;

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Signal, Source};
use vllm_lens_query::Query;
use vllm_lens_store::{SeriesId, TargetId};

use crate::ids::{GpuId, Scope};
use crate::measure::inputs::{self, GpuInputs, Inputs, combine_gpus, read_gpus, read_scope};
use crate::measure::rows;
use crate::model::{Efficiency, GpuRow, Latency, Outcomes, Row, RowKey, Rows, Workload};

/// The fleet's inputs, kept for the stages that follow.
pub(crate) struct Fleet {
    /// Per window.
    pub windows: Vec<Inputs>,
    /// Every GPU combined, per window (empty without GPUs).
    pub gpu: Vec<GpuInputs>,
    pub has_gpu: bool,
}

/// A model the bundle serves, with its replicas.
#[derive(Clone, Debug)]
pub(crate) struct Served {
    pub model: String,
    pub replicas: Vec<String>,
    /// Finished requests over the capture.
    pub finished: f64,
}

/// What stage 1 yields.
pub(crate) struct Scopes {
    /// Every model served (by name), when the replicas say; the report
    /// judges the first (`judged`).
    pub models: Vec<Served>,
    /// Replicas: (target, name), by name.
    pub replicas: Vec<(TargetId, String)>,
    /// GPU key → its replica ([`Scope::Unassigned`] when none is known).
    pub gpu_owner: BTreeMap<String, Scope>,
    /// GPU key → UUID (the key where there is none).
    pub gpu_uuid: BTreeMap<String, String>,
    pub rows: Rows,
    pub fleet: Fleet,
    /// The fleet's rows per window, for the analyses.
    pub fleet_windows: Vec<FleetWindow>,
    /// Each replica's target and scope.
    pub replica_scopes: Vec<(TargetId, Scope)>,
    /// Histograms whose instances have different bucket layouts.
    pub layout_mismatch: Vec<Signal>,
}

/// Scrapes of some replicas' `/metrics`.
pub(crate) fn scrapes(store: &vllm_lens_store::Store, replicas: &[(TargetId, String)]) -> usize {
    replicas
        .iter()
        .map(|(t, _)| store.target(*t).sample_times().len())
        .sum()
}

/// The targets with vLLM engine signals, by name.
pub(crate) fn replicas(cat: &Catalogue) -> Vec<(TargetId, String)> {
    let mut out: Vec<(TargetId, String)> = Vec::new();
    for r in cat.signals.iter().filter(|r| r.source == Source::Vllm) {
        for t in &r.targets {
            if !out.iter().any(|(id, _)| *id == t.target) {
                out.push((t.target, t.target_name.clone()));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// The model a target serves: the `model_name` label of its vLLM series.
fn model_of(loaded: &Loaded, cat: &Catalogue, target: TargetId) -> Option<String> {
    let store = &loaded.store;
    [Signal::Running, Signal::FinishedRequests, Signal::Ttft]
        .iter()
        .flat_map(|s| cat.get(*s).series())
        .filter(|&sid| store.series(sid).target() == target)
        .find_map(|sid| store.label(sid, "model_name").map(str::to_string))
}

/// The models served. With more than one, the report judges one (the one
/// that finished the most requests) over its own replicas: one scorecard
/// over two models would mix their latencies.
fn models(
    loaded: &Loaded,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
) -> Vec<Served> {
    let mut out: Vec<Served> = Vec::new();
    for (id, name) in replicas {
        let Some(model) = model_of(loaded, cat, *id) else {
            continue;
        };
        let finished = q.counter_in(Signal::FinishedRequests, Some(&[*id])).total;
        match out.iter_mut().find(|m| m.model == model) {
            Some(m) => {
                m.replicas.push(name.clone());
                m.finished += finished;
            }
            None => out.push(Served {
                model,
                replicas: vec![name.clone()],
                finished,
            }),
        }
    }
    out.sort_by(|a, b| {
        b.finished
            .total_cmp(&a.finished)
            .then(a.model.cmp(&b.model))
    });
    out
}

/// Reads every scope.
pub(crate) fn read(loaded: &Loaded, cat: &Catalogue, q: &Query<'_>) -> Scopes {
    let store = &loaded.store;
    let n = q.grid().count;
    let every = replicas(cat);
    let models = models(loaded, cat, q, &every);
    // Several models: the judged model's replicas only (and the GPUs of
    // the others are left out with them).
    let replicas: Vec<(TargetId, String)> = match models.first() {
        Some(m) if models.len() > 1 => every
            .iter()
            .filter(|(_, name)| m.replicas.contains(name))
            .cloned()
            .collect(),
        _ => every.clone(),
    };
    let mut gpu_owner = map_gpus(loaded, cat, &every);
    gpu_owner.retain(|_, o| match o {
        Scope::Replica(r) => replicas.iter().any(|(_, n)| n == r),
        _ => true,
    });
    let gpu_uuid: BTreeMap<String, String> = cat
        .gpus
        .iter()
        .map(|g| {
            (
                g.key.clone(),
                g.uuid.clone().unwrap_or_else(|| g.key.clone()),
            )
        })
        .collect();
    let mut gpus = read_gpus(q);
    gpus.retain(|k, _| gpu_owner.contains_key(k));
    // Each replica is a scope of its own when there are several, or when
    // the bundle has targets besides one replica's; a lone replica's rows
    // are the fleet's, under its name too.
    let per_replica = replicas.len() > 1 || (replicas.len() == 1 && store.targets().len() > 2);
    let owned = |name: &str| {
        gpu_owner
            .values()
            .filter(|o| matches!(o, Scope::Replica(r) if r == name))
            .count()
    };
    // GPU aggregates are rows of scopes with a GPU: the fleet, and each
    // replica that owns two or more.
    let aggregates = usize::from(!gpus.is_empty())
        + replicas.iter().filter(|(_, name)| owned(name) >= 2).count();
    let scope_count = 1 + replicas.len();
    let mut rows = Rows::default();
    rows.latency.reserve_exact(scope_count * n);
    rows.efficiency.reserve_exact(scope_count * n);
    rows.workload.reserve_exact(scope_count * n);
    rows.outcomes.reserve_exact(scope_count * n);
    rows.memory.reserve_exact(scope_count * n);
    rows.gpu.reserve_exact((gpus.len() + aggregates) * n);
    // GPU rows: each GPU first, then the aggregates in scope order.
    for (k, windows) in &gpus {
        let owner = gpu_owner.get(k).cloned().unwrap_or(Scope::Unassigned);
        let gpu = GpuId::One(gpu_uuid.get(k).cloned().unwrap_or_else(|| k.clone()));
        for (w, g) in windows.iter().enumerate() {
            rows.gpu.push(GpuRow {
                key: key(q, w, &owner),
                gpu: gpu.clone(),
                fields: rows::gpu(g),
            });
        }
    }
    let ids: Vec<TargetId> = replicas.iter().map(|(t, _)| *t).collect();
    let fleet_in = read_scope(q, (replicas.len() < every.len()).then_some(ids.as_slice()));
    let all_gpus: Vec<&Vec<GpuInputs>> = gpus.values().collect();
    let fleet = Fleet {
        windows: fleet_in.windows,
        gpu: combine_gpus(&all_gpus, n),
        has_gpu: !gpus.is_empty(),
    };
    let fleet_gpu = fleet.has_gpu.then_some(fleet.gpu.as_slice());
    // Tokens per joule needs two refreshes of DCGM's energy counter in a
    // window; shorter windows read its steps, not the work.
    let joules = inputs::energy_refresh_ms(store, cat).is_none_or(|r| 2 * r <= q.grid().width_ms);
    let mut fleet_windows = Vec::with_capacity(n);
    scope_rows(
        q,
        &mut rows,
        Some(&mut fleet_windows),
        &Scope::Fleet,
        &fleet.windows,
        fleet_gpu,
        true,
        joules,
    );
    let mut layout_mismatch = fleet_in.layout_mismatch;
    let mut replica_scopes: Vec<(TargetId, Scope)> = Vec::new();
    for (id, name) in &replicas {
        let scope = Scope::Replica(name.clone());
        let own = per_replica.then(|| {
            let s = read_scope(q, Some(&[*id]));
            let mine: Vec<&Vec<GpuInputs>> = gpus
                .iter()
                .filter(|(k, _)| gpu_owner.get(*k) == Some(&scope))
                .map(|(_, v)| v)
                .collect();
            let gpu = (!mine.is_empty()).then(|| combine_gpus(&mine, n));
            (s, gpu)
        });
        let (windows, gpu) = match &own {
            Some((s, gpu)) => {
                layout_mismatch.extend(s.layout_mismatch.iter().copied());
                (s.windows.as_slice(), gpu.as_deref())
            }
            None => (fleet.windows.as_slice(), fleet_gpu),
        };
        scope_rows(
            q,
            &mut rows,
            None,
            &scope,
            windows,
            gpu,
            owned(name) >= 2,
            joules,
        );
        replica_scopes.push((*id, scope));
    }
    layout_mismatch.sort();
    layout_mismatch.dedup();
    Scopes {
        models,
        replicas,
        gpu_owner,
        gpu_uuid,
        rows,
        fleet,
        fleet_windows,
        replica_scopes,
        layout_mismatch,
    }
}

fn key(q: &Query<'_>, w: usize, scope: &Scope) -> RowKey {
    let (a, b) = q.grid().bounds(w);
    RowKey {
        window_start_ms: a,
        window_end_ms: b,
        replica: scope.clone(),
    }
}

/// A scope's rows; the fleet's windows also go to `fleet_windows`; its
/// GPU aggregate rows where `aggregate`. (Kept out of line: inlined at
/// its calls it made the page 0.8 KB larger.)
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn scope_rows(
    q: &Query<'_>,
    rows: &mut Rows,
    mut fleet_windows: Option<&mut Vec<FleetWindow>>,
    scope: &Scope,
    windows: &[inputs::Inputs],
    gpu: Option<&[GpuInputs]>,
    aggregate: bool,
    joules: bool,
) {
    for (w, i) in windows.iter().enumerate() {
        let g = gpu.map(|g| &g[w]);
        let k = key(q, w, scope);
        let latency = rows::latency(i);
        let efficiency = rows::efficiency(i);
        let workload = rows::workload(i);
        let outcomes = rows::outcomes(i);
        let mut memory = rows::memory(i, g);
        if !joules {
            memory.tokens_per_joule = None;
        }
        if let Some(fw) = fleet_windows.as_deref_mut() {
            fw.push(FleetWindow {
                start_ms: k.window_start_ms,
                end_ms: k.window_end_ms,
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
    if let (Some(gpu), true) = (gpu, aggregate) {
        for (w, g) in gpu.iter().enumerate() {
            rows.gpu.push(GpuRow {
                key: key(q, w, scope),
                gpu: GpuId::All,
                fields: rows::gpu(g),
            });
        }
    }
}

/// GPU key → replica, from the manifest's `gpu_uuids`, the pod labels on
/// DCGM series, or the node; a single replica takes every GPU.
fn map_gpus(
    loaded: &Loaded,
    cat: &Catalogue,
    replicas: &[(TargetId, String)],
) -> BTreeMap<String, Scope> {
    let store = &loaded.store;
    let mut out = BTreeMap::new();
    // Each replica's node: its target's label (from the manifest), else the
    // one its series carry (a Prometheus export keeps the scrape's target
    // labels on every series).
    let mut nodes: Vec<Option<String>> = replicas
        .iter()
        .map(|(t, _)| {
            store
                .target_labels(*t)
                .find(|(k, _)| *k == "node")
                .map(|(_, v)| v.to_string())
        })
        .collect();
    if nodes.iter().any(Option::is_none) && !cat.gpus.is_empty() {
        for (i, s) in store.all_series().iter().enumerate() {
            if let Some(k) = replicas.iter().position(|(t, _)| *t == s.target())
                && nodes[k].is_none()
            {
                nodes[k] = store.label(SeriesId(i as u32), "node").map(str::to_string);
            }
        }
    }
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
                .zip(&nodes)
                .filter(|(_, node)| node.as_deref() == Some(host.as_str()))
                .map(|((_, n), _)| n)
                .collect();
            if on_node.len() == 1 {
                owner = Some(on_node[0].clone());
            }
        }
        if owner.is_none() && replicas.len() == 1 {
            owner = Some(replicas[0].1.clone());
        }
        out.insert(
            g.key.clone(),
            owner.map_or(Scope::Unassigned, Scope::Replica),
        );
    }
    out
}

/// One fleet window's figures.
#[derive(Clone, Debug)]
pub(crate) struct FleetWindow {
    pub start_ms: i64,
    pub end_ms: i64,
    pub latency: Latency,
    pub efficiency: Efficiency,
    pub workload: Workload,
    pub outcomes: Outcomes,
}
