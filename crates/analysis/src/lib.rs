/*!
The analyses and the report model: from a loaded bundle to the serialisable
[`Report`] that the renderers (HTML, Markdown, JSON) print.

# The stages, in order

1. `scopes`: the replicas, their GPUs, and every scope's per-window
   rows (read once through the rate and quantile engine: `inputs`, `rows`).
2. `events`: restarts and warm-up; `bursts`: windows with more
   failures than the capture's base rate explains.
3. `phases`: the capture split into load levels, ramps, restarts, down
   time, bursts and idle time, each with its own figures.
4. `queue`: queueing, defined once per replica.
5. [`slo`]: the scorecard, judged from what the data proves
   ([`slo::registry::SLOS`] lists the objectives).
6. `config`: what the server was told, with each value's source;
   `capacity`: how much more fits and what binds first.
7. [`registry::STEPS`]: the six analyses of the walk-through (`analyses`).
8. [`rules`]: the recommendations, a table of typed rules on typed levers
   ([`levers`]), ranked by their effect on what fails; `snippets` writes
   the alert rules and triggers they carry, checked against the capture.
9. `timeline`, `quality` and `verdict`: what happened when, what the
   figures rest on, and the bottom line.

# Brief overview

* [`analyse`]: `Loaded` + [`Settings`] → [`Report`].
* [`model`]: the report's types, documented in `docs/report-schema.md`.
* [`ids`]: every typed identifier (findings, recommendations, SLOs, phases).
* [`thresholds`]: every line the tool draws.
* [`text`]: figures in words (buckets, durations).
*/
#![deny(missing_docs)]

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Engine, Signal};
use vllm_lens_query::{Query, Settings as QuerySettings};

pub(crate) mod analyses;
pub(crate) mod bursts;
pub(crate) mod capacity;
pub mod compare;
pub(crate) mod config;
mod deployment;
pub(crate) mod events;
pub(crate) mod faults;
pub mod hw;
mod inputs;
pub mod levers;
pub(crate) mod phases;
mod prose;
mod quality;
pub(crate) mod queue;
pub mod registry;
mod rows;
pub mod rules;
pub(crate) mod scopes;
pub mod slo;
pub(crate) mod snippets;
pub mod thresholds;
mod timeline;
mod verdict;

use analyses::Ctx;
pub use ids::{
    Addresses, FindingId, GpuId, PhaseKind, QualityKind, RecId, Scope, SloId, StepId, TimelineKind,
};
use inputs::{gpu_over_time, over_time};
pub use model::{Report, SCHEMA_VERSION, Settings, SloThresholds};
pub use vllm_lens_model::{self as model, ids, text, time};
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

/// Makes the report of a loaded bundle.
pub fn analyse(
    loaded: &Loaded,
    meta: &BundleMeta,
    settings: &Settings,
) -> Result<Report, BadWidth> {
    let requested_window_ms = settings.window_ms;
    let settings = &whole_windows(loaded, settings);
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

    // 1. Scopes and their rows; the fleet over the whole capture.
    let scopes::Scopes {
        models,
        replicas,
        gpu_owner,
        gpu_uuid,
        rows,
        fleet,
        fleet_windows,
        replica_scopes,
        layout_mismatch,
    } = scopes::read(loaded, &cat, &q);
    let (start, end) = (q.grid().bounds(0).0, q.grid().bounds(n.saturating_sub(1)).1);
    let fleet_all = over_time(&fleet.windows);
    let fleet_gpu = fleet.has_gpu.then(|| gpu_over_time(&fleet.gpu));
    let summary = rows::summary(start, end, &fleet_all, fleet_gpu.as_ref());

    // 2–3. Restarts, warm-up, bursts, then the phases.
    let restarts = events::restarts(store, &cat, &q, &replicas, &rows);
    let warmup = events::warmup_windows(store, &cat, &q, &replicas);
    let bursts = bursts::find(&fleet.windows, settings.slo.error_abort_pct);
    let (phases, excluded) = phases::build(&phases::PhaseInput {
        store,
        catalogue: &cat,
        query: &q,
        settings,
        replicas: &replicas,
        fleet: &fleet,
        fleet_windows: &fleet_windows,
        restarts: &restarts,
        warmup: &warmup,
        bursts: &bursts,
    });

    // 4–6. Queueing, the scorecard, the deployment and its capacity.
    let replica_rows = queue::replica_inputs(&replica_scopes, &rows.latency);
    let queue_report = queue::analyse(store, &cat, q.grid(), &replica_rows, &excluded, settings);
    let (slo, ttft_parts) = slo::scorecard(&slo::SloInput {
        thresholds: &settings.slo,
        catalogue: &cat,
        whole: &fleet_all,
        windows: &fleet.windows,
        gpu_windows: if fleet.has_gpu { &fleet.gpu } else { &[] },
        starts: &fleet_windows.iter().map(|w| w.start_ms).collect::<Vec<_>>(),
        queue: &queue_report,
        outage: events::longest_outage(&restarts, q.grid().width_ms),
    });
    let model_name = models
        .first()
        .map(|m| m.model.clone())
        .or_else(|| deployment::model_name(loaded, &cat));
    let mut deployment = deployment::deployment(
        loaded,
        &cat,
        &replicas,
        &gpu_owner,
        model_name.clone(),
        &gpu_uuid,
        &models,
    );
    let config = config::read(&config::ConfigInput {
        loaded,
        replicas: &replicas,
        whole: &fleet_all,
        peak_running: rows
            .efficiency
            .iter()
            .filter(|r| !r.key.replica.is_fleet() || replicas.len() == 1)
            .filter_map(|r| r.fields.running)
            .reduce(f64::max),
        engine_v1: cat.era.engine == Engine::V1,
    });
    deployment.configuration = config.rows.clone();
    let capacity = capacity::capacity(&capacity::CapacityInput {
        config: &config,
        fleet_windows: &fleet.windows,
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
        phases: &phases,
    });

    // 7–9. The analyses, the rules, the timeline, quality and verdict.
    let gpu_faults = faults::faults(&q, &cat);
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
        bursts: &bursts,
        faults: &gpu_faults,
        hists: &fleet_all.hists,
        replicas: replicas.len(),
        engine_v1: cat.era.engine == Engine::V1,
        prefix_lifetime: fleet_all
            .gauges
            .get(&Signal::PrefixHitRateLifetime)
            .map(|g| g.last),
        platform: levers::Platform::of(&deployment),
        models: &deployment.models,
        finished: (!fleet_all.reasons.is_empty())
            .then(|| fleet_all.reasons.values().map(|x| x.increase).sum()),
        vllm_scrapes: scopes::scrapes(store, &replicas),
        ttft_parts,
        config: &config,
    };
    let analyses = analyses::run(&ctx);
    let checker = snippets::Checker::new(store, &q, replicas.len());
    let (recommendations, withheld) =
        rules::recommend(&ctx, &analyses, &checker, model_name.as_deref());
    let alerts = snippets::alerts(&ctx, &checker, model_name.as_deref());
    let timeline = timeline::timeline(&ctx, &q);
    let data_quality = quality::data_quality(
        loaded,
        &cat,
        &q,
        &layout_mismatch,
        &quality::non_cumulative(&fleet_all),
        requested_window_ms,
        &restarts
            .iter()
            .map(|r| r.replica.as_str())
            .collect::<Vec<_>>(),
    );
    let verdict = verdict::verdict(&ctx, &analyses, &timeline, recommendations.len());

    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        bundle: deployment::bundle_info(loaded, meta, &q),
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
        withheld,
        alerts,
        timeline,
        gpu_faults,
        data_quality,
    })
}

/// A pushdown export holds whole windows of its own width: the report's
/// windows are made of them (a multiple of that width, rounded up).
fn whole_windows(loaded: &Loaded, settings: &Settings) -> Settings {
    match loaded.store.pushed_width_ms() {
        Some(p) if p > 0 && settings.window_ms % p != 0 => Settings {
            window_ms: (settings.window_ms / p + 1) * p,
            ..*settings
        },
        _ => *settings,
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
