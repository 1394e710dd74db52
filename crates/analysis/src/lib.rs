/*!
The analyses and the report model: from a loaded bundle to the serialisable
[`Report`] that the renderers (HTML, Markdown, JSON) print.

The pipeline here: resolve the catalogue, read every signal through the
rate and quantile engine per window, per replica and for the fleet
(`inputs`), turn those into the sections' figures (`rows`), split the
capture into phases (`phases`), read queueing once (`queue`), judge the
four SLOs from what the data proves (`slo`), run the six analyses of the
walk-through ([`registry`]), rank the recommendations by their effect on
what fails (`recommend`) with snippets checked against the capture
(`snippets`), list the moments that matter (`timeline`), say what the
figures rest on (`quality`) and write the bottom line (`verdict`).

# Brief overview

* [`analyse`]: `Loaded` + [`Settings`] → [`Report`].
* [`model`]: the report's types, documented in `docs/report-schema.md`.
* [`ids`]: every typed identifier (findings, recommendations, SLOs, phases).
* [`registry::STEPS`]: the six steps, their inputs, findings and drawing.
* [`thresholds`]: every line the tool draws.
* [`text`]: figures in words (buckets, durations).
*/
#![deny(missing_docs)]

use std::collections::BTreeMap;

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Engine, Signal, Source};
use vllm_lens_query::{Query, Settings as QuerySettings};
use vllm_lens_store::TargetId;

pub(crate) mod analyses;
pub(crate) mod capacity;
pub mod compare;
pub mod hw;
pub mod ids;
mod inputs;
pub mod model;
pub(crate) mod phases;
mod prose;
mod quality;
pub(crate) mod queue;
mod recommend;
pub mod registry;
mod rows;
mod slo;
pub(crate) mod snippets;
pub mod text;
pub mod thresholds;
pub mod time;
mod timeline;
mod verdict;

use analyses::{Ctx, FleetWindow, RestartInfo};
pub use ids::{
    Addresses, FindingId, PhaseKind, QualityKind, RecId, Scope, SloId, StepId, TimelineKind,
};
use inputs::{GpuInputs, combine_gpus, gpu_over_time, over_time, read_gpus, read_scope};
use model::*;
pub use model::{Report, SCHEMA_VERSION, Settings, SloThresholds};
pub use vllm_lens_query::grid::BadWidth;

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
                nodes[k] = store
                    .label(vllm_lens_store::SeriesId(i as u32), "node")
                    .map(str::to_string);
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
        out.insert(g.key.clone(), owner.unwrap_or_else(|| "unassigned".into()));
    }
    out
}

fn key(q: &Query<'_>, w: usize, scope: &Scope) -> RowKey {
    let (a, b) = q.grid().bounds(w);
    RowKey {
        window_start_ms: a,
        window_end_ms: b,
        replica: scope.clone(),
    }
}

/// Makes the report of a loaded bundle.
pub fn analyse(
    loaded: &Loaded,
    meta: &BundleMeta,
    settings: &Settings,
) -> Result<Report, BadWidth> {
    // A pushdown export holds whole windows of its own width: the report's
    // windows are made of them (a multiple of that width, rounded up).
    let requested_window_ms = settings.window_ms;
    let settings = &match loaded.store.pushed_width_ms() {
        Some(p) if p > 0 && settings.window_ms % p != 0 => Settings {
            window_ms: (settings.window_ms / p + 1) * p,
            ..*settings
        },
        _ => *settings,
    };
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

    // Scopes: the fleet, then each replica. A replica's windows are read,
    // made into rows and dropped before the next is read; only the
    // fleet's are kept for what follows (a fleet-day holds one replica's
    // inputs at a time instead of all eight).
    struct Fleet {
        windows: Vec<inputs::Inputs>,
        gpu: Vec<GpuInputs>,
        has_gpu: bool,
    }
    // Each replica is a scope of its own when there are several, or when
    // the bundle has targets besides one replica's; a lone replica's rows
    // are the fleet's, under its name too. Either way: the fleet, then
    // every replica.
    let per_replica = replicas.len() > 1 || (replicas.len() == 1 && store.targets().len() > 2);
    let scope_count = 1 + replicas.len();
    let owned = |name: &str| gpu_owner.values().filter(|o| o.as_str() == name).count();
    // GPU aggregates are rows of scopes with a GPU: the fleet, and each
    // replica that owns two or more.
    let aggregates = usize::from(!gpus.is_empty())
        + replicas.iter().filter(|(_, name)| owned(name) >= 2).count();
    let mut rows = Rows::default();
    rows.latency.reserve_exact(scope_count * n);
    rows.efficiency.reserve_exact(scope_count * n);
    rows.workload.reserve_exact(scope_count * n);
    rows.outcomes.reserve_exact(scope_count * n);
    rows.memory.reserve_exact(scope_count * n);
    rows.gpu.reserve_exact((gpus.len() + aggregates) * n);
    // GPU rows: each GPU first, then the aggregates in scope order.
    for (k, windows) in &gpus {
        let replica = gpu_owner
            .get(k)
            .cloned()
            .unwrap_or_else(|| "unassigned".into());
        for (w, g) in windows.iter().enumerate() {
            rows.gpu.push(GpuRow {
                key: key(&q, w, &Scope::Replica(replica.clone())),
                gpu: uuid_of(k),
                fields: rows::gpu(g),
            });
        }
    }
    // A scope's rows; the fleet's windows also go to `fleet_windows`; its
    // GPU aggregate rows where `aggregate`. (Kept out of line: inlined at
    // its three calls it made the page 0.8 KB larger.)
    #[inline(never)]
    fn scope_rows(
        q: &Query<'_>,
        rows: &mut Rows,
        mut fleet_windows: Option<&mut Vec<FleetWindow>>,
        scope: &Scope,
        windows: &[inputs::Inputs],
        gpu: Option<&[GpuInputs]>,
        aggregate: bool,
    ) {
        for (w, i) in windows.iter().enumerate() {
            let g = gpu.map(|g| &g[w]);
            let k = key(q, w, scope);
            let latency = rows::latency(i);
            let efficiency = rows::efficiency(i);
            let workload = rows::workload(i);
            let outcomes = rows::outcomes(i);
            let memory = rows::memory(i, g);
            if let Some(fw) = fleet_windows.as_deref_mut() {
                fw.push(FleetWindow {
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
        if let (Some(gpu), true) = (gpu, aggregate) {
            for (w, g) in gpu.iter().enumerate() {
                rows.gpu.push(GpuRow {
                    key: key(q, w, scope),
                    gpu: "all".into(),
                    fields: rows::gpu(g),
                });
            }
        }
    }
    let fleet_in = read_scope(&q, None);
    let all_gpus: Vec<&Vec<GpuInputs>> = gpus.values().collect();
    let fleet = Fleet {
        windows: fleet_in.windows,
        gpu: combine_gpus(&all_gpus, n),
        has_gpu: !gpus.is_empty(),
    };
    let fleet_gpu = fleet.has_gpu.then_some(fleet.gpu.as_slice());
    let mut fleet_windows = Vec::with_capacity(n);
    scope_rows(
        &q,
        &mut rows,
        Some(&mut fleet_windows),
        &Scope::Fleet,
        &fleet.windows,
        fleet_gpu,
        true,
    );
    let mut layout_mismatch = fleet_in.layout_mismatch;
    // (replica's target, its scope), for the queueing analysis.
    let mut replica_scopes: Vec<(TargetId, Scope)> = Vec::new();
    for (id, name) in &replicas {
        let scope = Scope::Replica(name.clone());
        let own = per_replica.then(|| {
            let s = read_scope(&q, Some(&[*id]));
            let mine: Vec<&Vec<GpuInputs>> = gpus
                .iter()
                .filter(|(k, _)| gpu_owner.get(*k) == Some(name))
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
        let aggregate = owned(name) >= 2;
        scope_rows(&q, &mut rows, None, &scope, windows, gpu, aggregate);
        replica_scopes.push((*id, scope));
    }
    drop(gpus);
    layout_mismatch.sort();
    layout_mismatch.dedup();

    // Summary: the fleet over the whole capture.
    let fleet = &fleet;
    let (start, end) = (q.grid().bounds(0).0, q.grid().bounds(n.saturating_sub(1)).1);
    let fleet_all = over_time(&fleet.windows);
    let fleet_gpu_all = gpu_over_time(&fleet.gpu);
    let summary = summarise(
        start,
        end,
        &fleet_all,
        fleet.has_gpu.then_some(&fleet_gpu_all),
    );
    let starts: Vec<i64> = (0..n).map(|w| q.grid().bounds(w).0).collect();

    // Restarts, warm-up, down time and bursts, then the phases.
    let restarts = restarts(store, &cat, &q, &replicas);
    let mut states = vec![phases::WindowState::default(); n];
    for (w, fw) in fleet_windows.iter().enumerate() {
        let e = &fw.efficiency;
        states[w].in_flight = e.running_avg.map(|r| r + e.waiting_avg.unwrap_or(0.0));
        states[w].requests_per_min = fw.workload.requests_per_min;
    }
    for r in &restarts {
        let from = r
            .last_old_ms
            .and_then(|t| q.grid().index(t + 1))
            .unwrap_or(0);
        let to = q.grid().index(r.seen_ms).unwrap_or(from);
        for s in &mut states[from..=to.max(from).min(n.saturating_sub(1))] {
            s.restart = true;
        }
    }
    for w in warmup_windows(store, &cat, &q, &replicas) {
        states[w].warmup = true;
    }
    for cov in q.coverage() {
        if !replicas.iter().any(|(_, name)| *name == cov.target) {
            continue;
        }
        for (w, c) in cov.windows.iter().enumerate() {
            if c.expected > 0 && c.scrapes == 0 {
                states[w].down = true;
            }
        }
    }
    for w in burst_windows(&fleet.windows, settings.slo.error_abort_pct) {
        states[w].burst = true;
    }
    let segments = phases::segment(&states);
    let phases: Vec<Phase> = segments
        .iter()
        .map(|seg| {
            let inputs = over_time(&fleet.windows[seg.start..seg.end]);
            let gpu = gpu_over_time(&fleet.gpu[seg.start..seg.end]);
            let (a, b) = (starts[seg.start], q.grid().bounds(seg.end - 1).1);
            let figures = summarise(a, b, &inputs, fleet.has_gpu.then_some(&gpu));
            let in_flight = {
                let v: Vec<f64> = states[seg.start..seg.end]
                    .iter()
                    .filter_map(|s| s.in_flight)
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            let here: Vec<&RestartInfo> = restarts
                .iter()
                .filter(|r| r.seen_ms >= a && r.seen_ms < b + settings.window_ms)
                .collect();
            Phase {
                start_ms: a,
                end_ms: b,
                kind: seg.kind,
                description: verdict::describe_phase(
                    seg.kind, &figures, in_flight, &here, settings,
                ),
                figures,
                in_flight_avg: in_flight.map(analyses::round),
            }
        })
        .collect();

    // Queueing, once, outside warm-up and restarts.
    let excluded: Vec<usize> = (0..n)
        .filter(|&w| states[w].warmup || states[w].restart || states[w].down)
        .collect();
    let replica_inputs: Vec<queue::ReplicaInput<'_>> = replica_scopes
        .iter()
        .map(|(target, scope)| {
            let name = scope.as_str();
            queue::ReplicaInput {
                target: *target,
                name,
                latency: rows
                    .latency
                    .iter()
                    .filter(|r| r.key.replica.as_str() == name && !r.key.replica.is_fleet())
                    .map(|r| &r.fields)
                    .collect(),
            }
        })
        .collect();
    let queue_report = queue::analyse(
        store,
        &cat,
        q.grid(),
        &replica_inputs,
        &excluded,
        settings.slo.queue_negligible_ms,
    );

    let slo = slo::scorecard(&slo::SloInput {
        thresholds: &settings.slo,
        catalogue: &cat,
        whole: &fleet_all,
        windows: &fleet.windows,
        gpu_windows: if fleet.has_gpu { &fleet.gpu } else { &[] },
        starts: &starts,
        queue: &queue_report,
    });
    let model_name = model_name(loaded, &cat);
    let deployment = deployment(
        loaded,
        &cat,
        &replicas,
        &gpu_owner,
        model_name.clone(),
        &uuid_of,
    );
    let capacity = capacity::capacity(&capacity::CapacityInput {
        store,
        catalogue: &cat,
        query: &q,
        settings,
        replicas: &replicas,
        summary: &summary,
        whole: &fleet_all,
        latency_rows: &rows.latency,
        efficiency_rows: &rows.efficiency,
        queue: &queue_report,
        deployment: &deployment,
    });
    let ctx = Ctx {
        settings,
        capacity: &capacity,
        catalogue: &cat,
        summary: &summary,
        windows: &fleet_windows,
        phases: &phases,
        slo: &slo,
        queue: &queue_report,
        restarts: &restarts,
        hists: &fleet_all.hists,
        replicas: replicas.len(),
        engine_v1: cat.era.engine == Engine::V1,
        prefix_lifetime: fleet_all
            .gauges
            .get(&Signal::PrefixHitRateLifetime)
            .map(|g| g.last),
        cpu_server: deployment.gpus == 0 && deployment.device.as_deref() == Some("cpu"),
    };
    let analyses = analyses::run(&ctx);
    let checker = snippets::Checker::new(store, &q, replicas.len());
    let recommendations = recommend::recommend(&ctx, &analyses, &checker, model_name.as_deref());
    let alerts = snippets::alerts(&ctx, &checker, model_name.as_deref());
    let timeline = timeline::timeline(&ctx, &q);
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
    let data_quality = quality::data_quality(
        loaded,
        &cat,
        &q,
        &layout_mismatch,
        &non_cumulative,
        requested_window_ms,
    );
    let verdict = verdict::verdict(&ctx, &analyses, &timeline);

    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        bundle: bundle_info(loaded, meta, &q),
        deployment,
        settings: *settings,
        verdict,
        phases,
        capacity,
        rows,
        summary,
        analyses,
        slo,
        recommendations,
        alerts,
        timeline,
        data_quality,
    })
}

/// The summary figures of some inputs.
fn summarise(start: i64, end: i64, i: &inputs::Inputs, g: Option<&GpuInputs>) -> Summary {
    Summary {
        window_start_ms: start,
        window_end_ms: end,
        latency: rows::latency(i),
        efficiency: rows::efficiency(i),
        workload: rows::workload(i),
        outcomes: rows::outcomes(i),
        gpu: g.map(rows::gpu).unwrap_or_default(),
        memory: rows::memory(i, g),
    }
}

/// Every restart of a replica: a changed `process_start_time_seconds`, or
/// (without it, as on V0 multiprocess servers) a drop of the generated
/// tokens counter.
fn restarts(
    store: &vllm_lens_store::Store,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
) -> Vec<RestartInfo> {
    let mut out = Vec::new();
    for (id, name) in replicas {
        let mut seen: Vec<i64> = q.restarts(*id).to_vec();
        let has_start = cat
            .get(Signal::ProcessStart)
            .series()
            .any(|s| store.series(s).target() == *id);
        if !has_start {
            for sid in cat.get(Signal::GenerationTokens).series() {
                let s = store.series(sid);
                if s.target() == *id {
                    seen.extend(vllm_lens_query::counter::drops(s.times(), s.values()));
                }
            }
            seen.sort_unstable();
            seen.dedup();
        }
        let times = store.target(*id).sample_times();
        let started = queue::per_scrape(store, cat, Signal::ProcessStart, *id);
        let running = queue::per_scrape(store, cat, Signal::Running, *id);
        let waiting = queue::per_scrape(store, cat, Signal::Waiting, *id);
        for t in seen {
            let i = times.partition_point(|&x| x < t);
            let last_old = i.checked_sub(1).map(|j| times[j]);
            let in_flight = last_old.and_then(|l| {
                running
                    .get(&l)
                    .map(|r| r + waiting.get(&l).copied().unwrap_or(0.0))
            });
            out.push(RestartInfo {
                replica: name.clone(),
                seen_ms: t,
                started_ms: started.get(&t).map(|s| (s * 1000.0).round() as i64),
                last_old_ms: last_old,
                in_flight_lost: in_flight,
            });
        }
    }
    out.sort_by_key(|r| r.seen_ms);
    out
}

/// Windows of a process's first minutes at the start of the capture: a
/// replica whose process started less than one window before its first
/// scrape (or during the capture, before any restart) is warming up until
/// one window after its start.
fn warmup_windows(
    store: &vllm_lens_store::Store,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
) -> Vec<usize> {
    let grid = q.grid();
    let mut out = Vec::new();
    for (id, _) in replicas {
        let started = queue::per_scrape(store, cat, Signal::ProcessStart, *id);
        let Some((&first, &s)) = started.iter().next() else {
            continue;
        };
        let start_ms = (s * 1000.0).round() as i64;
        if start_ms >= first - grid.width_ms {
            let until = grid
                .index(start_ms + grid.width_ms)
                .unwrap_or(grid.count.saturating_sub(1));
            out.extend(0..=until.min(grid.count.saturating_sub(1)));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Windows whose errors + aborts (or HTTP errors) stand far above the rest
/// of the capture and reach the objective.
fn burst_windows(windows: &[inputs::Inputs], objective_pct: f64) -> Vec<usize> {
    let sums = |i: &inputs::Inputs| {
        let bad: f64 = ["error", "abort"]
            .iter()
            .filter_map(|r| i.reasons.get(*r))
            .map(|x| x.increase)
            .sum();
        let all: f64 = i.reasons.values().map(|x| x.increase).sum();
        let http_bad: f64 = i
            .http_status
            .iter()
            .filter(|(s, _)| s.starts_with('4') || s.starts_with('5'))
            .map(|(_, x)| x.increase)
            .sum();
        let http_all: f64 = i.http_status.values().map(|x| x.increase).sum();
        (bad, all, http_bad, http_all)
    };
    let per: Vec<(f64, f64, f64, f64)> = windows.iter().map(sums).collect();
    let total = per.iter().fold((0.0, 0.0, 0.0, 0.0), |a, x| {
        (a.0 + x.0, a.1 + x.1, a.2 + x.2, a.3 + x.3)
    });
    let mut out = Vec::new();
    for (w, x) in per.iter().enumerate() {
        let stands_out = |bad: f64, all: f64, rest_bad: f64, rest_all: f64, line: f64| {
            if all <= 0.0 {
                return false;
            }
            let share = 100.0 * bad / all;
            let rest = if rest_all > 0.0 {
                100.0 * rest_bad / rest_all
            } else {
                0.0
            };
            share >= line && share >= thresholds::BURST_FACTOR * rest
        };
        if stands_out(x.0, x.1, total.0 - x.0, total.1 - x.1, objective_pct)
            || stands_out(
                x.2,
                x.3,
                total.2 - x.2,
                total.3 - x.3,
                thresholds::HTTP_ERROR_FAIL_PCT,
            )
        {
            out.push(w);
        }
    }
    out
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
        device: env.and_then(|e| e.device.clone()),
    }
}

/// Every field name of [`Report`] and the types inside it (the schema's
/// property names): the keys of the JSON that are the tool's own, as
/// opposed to map keys that come from the bundle (replica names, labels).
pub fn field_names() -> std::collections::BTreeSet<String> {
    fn walk(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(o) => {
                if let Some(serde_json::Value::Object(props)) = o.get("properties") {
                    out.extend(props.keys().cloned());
                }
                o.values().for_each(|x| walk(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let schema = schemars::schema_for!(Report);
    let mut out = std::collections::BTreeSet::new();
    walk(schema.as_value(), &mut out);
    out
}

/// The JSON Schema of [`Report`] (draft 2020-12), as committed in
/// `docs/report-schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Report);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}
