/*!
The judgement: from a loaded bundle to the serialisable [`Report`] that the
renderers (HTML, Markdown, JSON) print. Three layers, each importing only
the ones below it (the tidy tests in `tests/it/layers.rs` check it), under
the pipeline in this file:

* `measure`: the figures, read from the store per scope and window
  (inputs, rows, scopes, queueing, configuration, faults, hardware tables,
  deployment, thresholds, PromQL over the capture). It never reads an
  objective.
* `judge`: what the figures mean. Restarts and bursts, the phases, the
  scorecard ([`slo::registry::SLOS`]), capacity, the six analyses of the
  walk-through, the timeline, data quality and the verdict.
* `advise`: what to change. The rules on typed [`levers`]
  ([`rules::RULES`]), their alert rules and triggers, and the comparison of
  two reports ([`compare`]). It reads judged figures and never computes
  one.

Below all three is the report model (the `vllm-lens-model` crate,
re-exported as [`model`], with [`ids`], [`text`] and [`time`]), which the
renderers read without knowing this crate.

# The pipeline ([`analyse`])

1. `measured`: the scopes (the fleet, its replicas, their GPUs), every
   scope's per-window rows, and the fleet over the whole capture.
2. `split`: restarts, warm-up and error bursts, then the phases.
3. `judged`: queueing per replica, the scorecard, the deployment, its
   configuration and capacity.
4. `reported`: the six analyses, the recommendations and alerts, the
   timeline, data quality and the verdict, gathered into the [`Report`].
*/
#![deny(missing_docs)]

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::{Catalogue, Engine, Signal};
use vllm_lens_query::{Query, Settings as QuerySettings};

mod advise;
mod judge;
mod measure;

pub use advise::{compare, levers, rules};
pub use ids::{
    Addresses, FindingId, GpuId, PhaseKind, QualityKind, RecId, Scope, SloId, StepId, TimelineKind,
};
pub use judge::slo;
pub use measure::deployment::BundleMeta;
pub use measure::{hw, thresholds};
pub use model::{Report, SCHEMA_VERSION, Settings, SloThresholds};
pub use vllm_lens_model::{self as model, ids, text, time};
pub use vllm_lens_query::grid::BadWidth;

use advise::snippets;
use judge::ctx::Ctx;
use judge::events::RestartInfo;
use judge::{analyses, bursts, capacity, events, phases, quality, timeline, verdict};
use measure::inputs::{GpuInputs, Inputs, gpu_over_time, over_time};
use measure::promql::Checker;
use measure::{config, deployment, faults, queue, rows, scopes};
use model::{Capacity, Deployment, Phase, SloResult, Summary};

/// Makes the report of a loaded bundle, its forecast included.
pub fn analyse(
    loaded: &Loaded,
    meta: &BundleMeta,
    settings: &Settings,
) -> Result<Report, BadWidth> {
    let (mut report, pending) = analyse_deferred(loaded, meta, settings)?;
    pending.fill(&mut report);
    Ok(report)
}

/// [`analyse`] in two steps: the report without its forecast, and what
/// fills it in ([`PendingForecast::fill`]), so that a shell can show or
/// time them apart (the page prints the forecast's own time).
pub fn analyse_deferred(
    loaded: &Loaded,
    meta: &BundleMeta,
    settings: &Settings,
) -> Result<(Report, PendingForecast), BadWidth> {
    let requested_window_ms = settings.window_ms;
    let settings = &whole_windows(loaded, settings);
    let cat = Catalogue::resolve(&loaded.store);
    let q = Query::new(
        &loaded.store,
        &cat,
        QuerySettings {
            window_ms: settings.window_ms,
            ..QuerySettings::default()
        },
    )?;
    let m = measured(loaded, &cat, &q);
    let s = split(loaded, &cat, &q, settings, &m);
    let j = judged(loaded, &cat, &q, settings, &m, &s);
    let lengths = ForecastLengths::of(&m.fleet_all.hists, j.config.max_model_len);
    let report = reported(
        loaded,
        meta,
        &cat,
        &q,
        settings,
        requested_window_ms,
        m,
        s,
        j,
    );
    Ok((report, PendingForecast(lengths)))
}

/// The forecast still to be made for a report of [`analyse_deferred`].
#[derive(Clone)]
pub struct PendingForecast(ForecastLengths);

impl PendingForecast {
    /// Fills `report.forecast` and each modelled recommendation's
    /// `predicted` line.
    pub fn fill(self, report: &mut Report) {
        self.0.forecast(report);
    }
}

/// Stage 1: the scopes and their rows, and the fleet over the whole capture.
struct Measured {
    scopes: scopes::Scopes,
    fleet_all: Inputs,
    summary: Summary,
}

fn measured(loaded: &Loaded, cat: &Catalogue, q: &Query<'_>) -> Measured {
    let scopes = scopes::read(loaded, cat, q);
    let n = q.grid().count;
    let (start, end) = (q.grid().bounds(0).0, q.grid().bounds(n.saturating_sub(1)).1);
    let fleet_all = over_time(&scopes.fleet.windows);
    let fleet_gpu: Option<GpuInputs> = scopes
        .fleet
        .has_gpu
        .then(|| gpu_over_time(&scopes.fleet.gpu));
    let summary = rows::summary(start, end, &fleet_all, fleet_gpu.as_ref());
    Measured {
        scopes,
        fleet_all,
        summary,
    }
}

/// Stage 2: what happened to the processes and the errors, then the phases.
struct Split {
    restarts: Vec<RestartInfo>,
    bursts: Vec<bursts::Burst>,
    phases: Vec<Phase>,
    /// Windows the queue judgement leaves out (restarts, down time).
    excluded: Vec<usize>,
    /// The running + waiting gauges against Little's law.
    gauges: phases::gauges::GaugeCheck,
}

fn split(
    loaded: &Loaded,
    cat: &Catalogue,
    q: &Query<'_>,
    settings: &Settings,
    m: &Measured,
) -> Split {
    let store = &loaded.store;
    let sc = &m.scopes;
    let restarts = events::restarts(store, cat, q, &sc.replicas, &sc.rows);
    let warmup = events::warmup_windows(store, cat, q, &sc.replicas);
    let bursts = bursts::find(&sc.fleet.windows, settings.slo.error_abort_pct);
    let phases::Built {
        phases,
        excluded,
        gauges,
    } = phases::build(&phases::PhaseInput {
        store,
        catalogue: cat,
        query: q,
        settings,
        replicas: &sc.replicas,
        fleet: &sc.fleet,
        fleet_windows: &sc.fleet_windows,
        restarts: &restarts,
        warmup: &warmup,
        bursts: &bursts,
    });
    Split {
        restarts,
        bursts,
        phases,
        excluded,
        gauges,
    }
}

/// Stage 3: queueing, the scorecard, the deployment and its capacity.
struct Judged {
    queue: queue::QueueReport,
    slo: Vec<SloResult>,
    ttft_parts: Option<judge::slo::TtftParts>,
    model_name: Option<String>,
    deployment: Deployment,
    config: config::Config,
    capacity: Capacity,
}

fn judged(
    loaded: &Loaded,
    cat: &Catalogue,
    q: &Query<'_>,
    settings: &Settings,
    m: &Measured,
    s: &Split,
) -> Judged {
    let store = &loaded.store;
    let sc = &m.scopes;
    let replica_rows = queue::replica_inputs(&sc.replica_scopes, &sc.rows);
    let queue_report = queue::analyse(
        store,
        cat,
        q.grid(),
        &replica_rows,
        &s.excluded,
        settings.slo.queue_negligible_ms,
    );
    let config = config::read(&config::ConfigInput {
        loaded,
        replicas: &sc.replicas,
        whole: &m.fleet_all,
        peak_running: sc
            .rows
            .efficiency
            .iter()
            .filter(|r| !r.key.replica.is_fleet() || sc.replicas.len() == 1)
            .filter_map(|r| r.fields.running)
            .reduce(f64::max),
        engine_v1: cat.era.engine == Engine::V1,
    });
    let (slo, ttft_parts) = judge::slo::scorecard(&judge::slo::SloInput {
        thresholds: &settings.slo,
        catalogue: cat,
        whole: &m.fleet_all,
        windows: &sc.fleet.windows,
        gpu_windows: if sc.fleet.has_gpu { &sc.fleet.gpu } else { &[] },
        starts: &sc
            .fleet_windows
            .iter()
            .map(|w| w.start_ms)
            .collect::<Vec<_>>(),
        queue: &queue_report,
        outage: events::longest_outage(&s.restarts, q.grid().width_ms),
        max_num_seqs: config.max_num_seqs,
    });
    let model_name = sc
        .models
        .first()
        .map(|m| m.model.clone())
        .or_else(|| deployment::model_name(loaded, cat));
    let mut deployment = deployment::deployment(
        loaded,
        cat,
        &sc.replicas,
        &sc.gpu_owner,
        model_name.clone(),
        &sc.gpu_uuid,
        &sc.models,
    );
    deployment.configuration = config.rows.clone();
    let mut capacity = capacity::capacity(&capacity::CapacityInput {
        config: &config,
        fleet_windows: &sc.fleet.windows,
        store,
        catalogue: cat,
        query: q,
        settings,
        replicas: &sc.replicas,
        summary: &m.summary,
        whole: &m.fleet_all,
        latency_rows: &sc.rows.latency,
        efficiency_rows: &sc.rows.efficiency,
        queue: &queue_report,
        deployment: &deployment,
        phases: &s.phases,
    });
    capacity.provisioning =
        judge::provisioning::provisioning(&judge::provisioning::ProvisioningInput {
            capacity: &capacity,
            slo: &slo,
            settings,
            phases: &s.phases,
            deployment: &deployment,
            max_num_seqs: config.max_num_seqs,
        });
    Judged {
        queue: queue_report,
        slo,
        ttft_parts,
        model_name,
        deployment,
        config,
        capacity,
    }
}

/// Stage 4: the analyses, the advice, the timeline, data quality and the
/// verdict, gathered into the report.
#[allow(clippy::too_many_arguments)]
fn reported(
    loaded: &Loaded,
    meta: &BundleMeta,
    cat: &Catalogue,
    q: &Query<'_>,
    settings: &Settings,
    requested_window_ms: i64,
    m: Measured,
    s: Split,
    j: Judged,
) -> Report {
    let store = &loaded.store;
    let sc = &m.scopes;
    let gpu_faults = faults::faults(q, cat);
    let ctx = Ctx {
        settings,
        capacity: &j.capacity,
        catalogue: cat,
        summary: &m.summary,
        windows: &sc.fleet_windows,
        phases: &s.phases,
        slo: &j.slo,
        queue: &j.queue,
        restarts: &s.restarts,
        bursts: &s.bursts,
        faults: &gpu_faults,
        hists: &m.fleet_all.hists,
        replicas: sc.replicas.len(),
        engine_v1: cat.era.engine == Engine::V1,
        prefix_lifetime: m
            .fleet_all
            .gauges
            .get(&Signal::PrefixHitRateLifetime)
            .map(|g| g.last),
        platform: model::levers::Platform::of(&j.deployment),
        models: &j.deployment.models,
        finished: (!m.fleet_all.reasons.is_empty())
            .then(|| m.fleet_all.reasons.values().map(|x| x.increase).sum()),
        vllm_scrapes: scopes::scrapes(store, &sc.replicas),
        ttft_parts: j.ttft_parts,
        config: &j.config,
        gauges: &s.gauges,
    };
    let analyses = analyses::run(&ctx);
    let checker = Checker::new(store, q, sc.replicas.len());
    let model_name = j.model_name.as_deref();
    let (recommendations, withheld) =
        advise::rules::recommend(&ctx, &analyses, &checker, model_name);
    let alerts = snippets::alerts(&ctx, &checker, model_name);
    let timeline = timeline::timeline(&ctx, q);
    let data_quality = quality::data_quality(
        loaded,
        cat,
        q,
        &sc.layout_mismatch,
        &quality::non_cumulative(&m.fleet_all),
        requested_window_ms,
        &s.restarts
            .iter()
            .map(|r| r.replica.as_str())
            .collect::<Vec<_>>(),
    );
    let verdict = verdict::verdict(&ctx, &analyses, &timeline, &recommendations);
    let bundle = deployment::bundle_info(loaded, meta, q);
    Report {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        bundle,
        deployment: j.deployment,
        settings: *settings,
        verdict,
        phases: s.phases,
        capacity: j.capacity,
        rows: m.scopes.rows,
        summary: m.summary,
        analyses,
        slo: j.slo,
        recommendations,
        withheld,
        alerts,
        timeline,
        gpu_faults,
        data_quality,
        forecast: Default::default(),
    }
}

/// What the forecast reads beside the report: the length histograms and
/// the latency histograms' ladders.
#[derive(Clone)]
struct ForecastLengths {
    prompt: Vec<[f64; 2]>,
    generation: Vec<[f64; 2]>,
    ttft_ladder_ms: Vec<f64>,
    itl_ladder_ms: Vec<f64>,
}

impl ForecastLengths {
    fn of(
        hists: &std::collections::BTreeMap<Signal, vllm_lens_query::HistWindow>,
        max_model_len: Option<f64>,
    ) -> ForecastLengths {
        let per_bucket = |s: Signal| {
            let Some(h) = hists.get(&s) else {
                return Vec::new();
            };
            let mut prev = 0.0;
            let top = max_model_len.unwrap_or(f64::INFINITY);
            h.buckets
                .les
                .iter()
                .zip(&h.buckets.counts)
                .map(|(le, c)| {
                    let n = (c - prev).max(0.0);
                    prev = *c;
                    [if le.is_finite() { *le } else { top }, n]
                })
                .collect()
        };
        let ladder = |s: Signal| {
            hists.get(&s).map_or(Vec::new(), |h| {
                h.buckets
                    .les
                    .iter()
                    .filter(|x| x.is_finite())
                    .map(|x| x * 1000.0)
                    .collect()
            })
        };
        ForecastLengths {
            prompt: per_bucket(Signal::RequestPromptTokens),
            generation: per_bucket(Signal::RequestGenerationTokens),
            ttft_ladder_ms: ladder(Signal::Ttft),
            itl_ladder_ms: ladder(Signal::InterTokenLatency),
        }
    }

    /// Fills `report.forecast` and each modelled recommendation's
    /// `predicted` line.
    fn forecast(self, report: &mut Report) {
        let input = vllm_lens_forecast::Input {
            report,
            prompt_buckets: self.prompt,
            generation_buckets: self.generation,
            ttft_ladder_ms: self.ttft_ladder_ms,
            itl_ladder_ms: self.itl_ladder_ms,
        };
        let f = vllm_lens_forecast::forecast(&input);
        for (id, line) in vllm_lens_forecast::scenarios::predicted_for(&f) {
            if let Some(r) = report.recommendations.iter_mut().find(|r| r.id == id) {
                r.predicted = Some(line);
            }
        }
        if let Some(line) = forecast_disagrees(report, &f) {
            report.capacity.provisioning.cannot_prove.push(line);
        }
        report.forecast = f;
    }
}

/// Where the calibrated forecast's sweep puts today's largest load well
/// below the provisioning's headroom (which extrapolates each latency at
/// most in proportion to the load), says so: the smaller figure is the
/// one to plan with.
fn forecast_disagrees(report: &Report, f: &model::forecast::Forecast) -> Option<String> {
    use model::forecast::ForecastStatus;
    let p = &report.capacity.provisioning;
    let h = p.headroom_x?;
    if f.status != ForecastStatus::Calibrated {
        return None;
    }
    let today = f.sweep.iter().find(|r| r.scenario == "today")?;
    let x = today.max_load_x?;
    if today.at_top || x >= 0.8 * h {
        return None;
    }
    let what = match today.limiting {
        Some(model::ids::SloId::TtftP95) => "the engine's TTFT p95",
        Some(model::ids::SloId::ItlP95) => "the engine's inter-token p95",
        _ => "a latency objective",
    };
    Some(format!(
        "The forecast's replay of this server (calibrated on the capture) meets the latency objectives only up to {x:.2}× the peak load, where {what} fails, below the {h:.1}× headroom stated here: that headroom assumes latency grows no faster than the load, and the replay's batches say it grows faster. Plan with the smaller figure."
    ))
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
/// `docs/report-schema.json`. A recommendation's id is open in the model ([`RecId`]); here, where the
/// table of rules is known, the schema lists the ids this version makes.
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(Report);
    let ids: Vec<&str> = rules::RULES.iter().map(|r| r.id.as_str()).collect();
    if let Some(defs) = schema.get_mut("$defs").and_then(|d| d.as_object_mut()) {
        defs.insert(
            "RecId".into(),
            serde_json::json!({ "type": "string", "enum": ids }),
        );
    }
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_models_default_window_is_the_query_engines() {
        assert_eq!(
            crate::model::DEFAULT_WINDOW_MS,
            vllm_lens_query::grid::DEFAULT_WINDOW_MS
        );
    }
}
