//! What the judgement shares: [`Ctx`], the capture's scopes, rows,
//! phases, scorecard and configuration as the analyses, the rules and the
//! verdict read them, and the constructors of a finding.

use std::collections::BTreeMap;

use vllm_lens_catalog::{Catalogue, Signal, Status};
use vllm_lens_query::HistWindow;

use crate::Settings;
use crate::ids::{FindingId, SloId};
use crate::judge::events::RestartInfo;
use crate::judge::words;
use crate::measure::queue::QueueReport;
use crate::measure::scopes::FleetWindow;
use crate::model::{Evidence, Finding, Phase, PhaseKind, Severity, SloResult, SloStatus, Summary};
use crate::text::{fill, num, round};

/// What the analyses read.
pub(crate) struct Ctx<'a> {
    pub settings: &'a Settings,
    pub capacity: &'a crate::model::Capacity,
    pub catalogue: &'a Catalogue,
    pub summary: &'a Summary,
    pub windows: &'a [FleetWindow],
    pub phases: &'a [Phase],
    pub slo: &'a [SloResult],
    pub queue: &'a QueueReport,
    pub restarts: &'a [RestartInfo],
    /// Error bursts (runs of windows, with their tests).
    pub bursts: &'a [crate::judge::bursts::Burst],
    /// Hardware faults the GPUs reported.
    pub faults: &'a [crate::model::GpuFault],
    /// The fleet's histograms over the whole capture.
    pub hists: &'a BTreeMap<Signal, HistWindow>,
    pub replicas: usize,
    pub engine_v1: bool,
    /// The V0 lifetime prefix-cache hit rate at the end of the capture.
    pub prefix_lifetime: Option<f64>,
    /// What the server runs on (GPU, CPU, or unknown).
    pub platform: crate::model::levers::Platform,
    /// Finished requests over the capture (every `finished_reason`).
    pub finished: Option<f64>,
    /// Scrapes of the judged replicas' `/metrics`.
    pub vllm_scrapes: usize,
    /// Every model served; the first is the one judged.
    pub models: &'a [crate::model::ModelServed],
    /// Time to first token's parts where it misses (means).
    pub ttft_parts: Option<crate::judge::slo::TtftParts>,
    /// What the server was told.
    pub config: &'a crate::measure::config::Config,
    /// The running + waiting gauges held against Little's law.
    pub gauges: &'a crate::judge::phases::gauges::GaugeCheck,
}

impl Ctx<'_> {
    /// The names read for these signals (as captured).
    pub fn names(&self, signals: &[Signal]) -> Vec<String> {
        signals
            .iter()
            .flat_map(|s| self.catalogue.get(*s).used.iter().map(|n| n.to_string()))
            .collect()
    }

    /// True when the signal was found (under any name).
    pub fn has(&self, s: Signal) -> bool {
        self.catalogue.get(s).status != Status::Missing
    }

    /// A whole-capture figure.
    pub fn ev(&self, label: &str, value: Option<f64>, unit: &str, signals: &[Signal]) -> Evidence {
        Evidence {
            label: label.to_string(),
            value: value.map(round),
            unit: unit.to_string(),
            metrics: self.names(signals),
            windows: Vec::new(),
        }
    }

    /// The prefix-cache hit rate, %, as every finding and recommendation
    /// cites it.
    pub fn ev_prefix_hit_rate(&self, pct: Option<f64>) -> Evidence {
        self.ev(
            "prefix-cache hit rate",
            pct,
            "%",
            &[Signal::PrefixHits, Signal::PrefixQueries],
        )
    }

    /// The KV cache's peak usage, %.
    pub fn ev_kv_max(&self, pct: Option<f64>) -> Evidence {
        self.ev("KV cache max", pct, "%", &[Signal::KvUsage])
    }

    /// The in-flight count at which requests began to wait.
    pub fn ev_queueing_starts(&self, in_flight: Option<f64>) -> Evidence {
        self.ev(
            "queueing starts at",
            in_flight,
            "requests in flight",
            &[Signal::Running, Signal::Waiting],
        )
    }

    /// The most requests that ran at once while others waited.
    pub fn ev_admission_cap(&self, cap: Option<f64>) -> Evidence {
        self.ev("admission cap", cap, "running requests", &[Signal::Running])
    }

    /// A figure for some windows.
    pub fn ev_at(
        &self,
        label: &str,
        value: Option<f64>,
        unit: &str,
        signals: &[Signal],
        windows: Vec<i64>,
    ) -> Evidence {
        Evidence {
            windows,
            ..self.ev(label, value, unit, signals)
        }
    }

    /// The start of the window holding time `ms`, if any.
    pub fn window_of(&self, ms: i64) -> Option<i64> {
        self.windows
            .iter()
            .rfind(|w| w.start_ms <= ms && ms < w.end_ms)
            .map(|w| w.start_ms)
    }

    /// The end of window `w`, ms.
    pub fn window_end(&self, w: usize) -> i64 {
        self.windows.get(w).map_or(0, |x| x.end_ms)
    }

    /// A CPU server: the manifest says so and no GPU was seen.
    pub fn cpu_server(&self) -> bool {
        self.platform == crate::model::levers::Platform::Cpu
    }

    /// Prefix caching is on: the configuration says so, or the cache hit.
    pub fn prefix_caching_on(&self) -> bool {
        self.config.prefix_caching == Some(true)
            || self.capacity.prefix.enabled == Some(true)
            || self
                .summary
                .efficiency
                .prefix_cache_hit_pct
                .is_some_and(|h| h > 0.0)
    }

    /// The windows where `f` holds.
    pub fn windows_where(&self, f: impl Fn(&FleetWindow) -> bool) -> Vec<i64> {
        self.windows
            .iter()
            .filter(|w| f(w))
            .map(|w| w.start_ms)
            .collect()
    }

    /// The largest value of a per-window figure, with its window.
    pub fn max_of(&self, f: impl Fn(&FleetWindow) -> Option<f64>) -> Option<(f64, i64)> {
        self.windows
            .iter()
            .filter_map(|w| f(w).map(|v| (v, w.start_ms)))
            .fold(None, |acc, x| match acc {
                Some((a, _)) if a >= x.0 => acc,
                _ => Some(x),
            })
    }

    /// An SLO's status.
    pub fn slo(&self, id: SloId) -> Option<SloStatus> {
        self.slo.iter().find(|s| s.id == id).map(|s| s.status)
    }

    /// True when the SLO fails or cannot be told: work on what it measures
    /// may be needed, so nothing may advise against that work.
    pub fn slo_in_doubt(&self, id: SloId) -> bool {
        matches!(
            self.slo(id),
            Some(SloStatus::Fail) | Some(SloStatus::CannotTell)
        )
    }

    /// The level phases (steady or overload), when the capture has more
    /// than one: headline figures are then given per phase.
    pub fn steady_phases(&self) -> Vec<&Phase> {
        let steady: Vec<&Phase> = self
            .phases
            .iter()
            .filter(|p| matches!(p.kind, PhaseKind::Steady | PhaseKind::Overload))
            .collect();
        if steady.len() > 1 { steady } else { Vec::new() }
    }
}

/// A finding whose explanation and action come from [`words`], with
/// `{name}` placeholders filled from `vars`.
pub(crate) fn finding(
    id: FindingId,
    severity: Severity,
    title: String,
    evidence: Vec<Evidence>,
    vars: &[(&str, String)],
) -> Finding {
    let text = words::finding(id);
    Finding {
        id,
        severity,
        title,
        explanation: fill(text.explanation, vars),
        evidence,
        action: fill(text.action, vars),
    }
}

/// A "cannot say" finding for a GPU input on a CPU server: not missing,
/// not applicable.
pub(crate) fn no_gpu(id: FindingId, what: &str, signals: &[Signal]) -> Finding {
    let mut f = missing(id, what, signals);
    f.title = format!("{what}: a CPU server has no GPU to measure");
    f.explanation = "The manifest says this server runs on the CPU (collect.sh --device cpu), and no GPU was seen: there is no dcgm-exporter to scrape, and the GPU's figures do not apply. The engine's own figures (steps 1 to 4) hold as on a GPU.".into();
    f
}

/// A "cannot say" finding for a missing input.
pub(crate) fn missing(id: FindingId, what: &str, signals: &[Signal]) -> Finding {
    let names: Vec<String> = signals
        .iter()
        .flat_map(|s| s.info().candidates.iter().map(|c| c.name.to_string()))
        .collect();
    finding(
        id,
        Severity::NotApplicable,
        format!("{what}: not in this capture"),
        Vec::new(),
        &[("names", names.join(", "))],
    )
}

/// What the in-flight trigger keeps per replica, and why.
pub(crate) struct InFlightTarget {
    pub per_replica: f64,
    pub why: String,
}

/// The in-flight target from what the capture measured: the most requests
/// a replica admitted without waiting (its admission cap, or one below
/// where queueing started). Where that lies near or below the queue
/// objective, the target is 80 % of it, so the HPA (which acts 10 % above
/// its target) adds a replica before requests wait; where nothing queued,
/// the most a replica held (at least the objective's load).
pub(crate) fn in_flight_target(ctx: &Ctx<'_>) -> InFlightTarget {
    let n = ctx.settings.slo.queue_concurrency;
    let q = ctx.queue;
    let (cap, start) = (q.admission_cap(), q.queueing_starts_at());
    let knee = match (cap, start) {
        (Some(c), Some(s)) => Some(c.min(s - 1.0)),
        (c, s) => c.or(s.map(|s| s - 1.0)),
    }
    .filter(|k| *k >= 1.0);
    match knee {
        Some(k) if k < 1.25 * n => {
            let t = (0.8 * k).floor().max(1.0);
            InFlightTarget {
                per_replica: t,
                why: format!(
                    "80 % of the {} requests a replica admitted without waiting{}: the autoscaler acts 10 % above its target, before requests queue",
                    num(k),
                    start.map_or(String::new(), |s| format!(
                        " (queueing from {} in flight)",
                        num(s)
                    ))
                ),
            }
        }
        Some(k) => InFlightTarget {
            per_replica: n,
            why: format!(
                "the load the queue objective names; a replica admitted up to {} without waiting",
                num(k)
            ),
        },
        None => match q.peak_without_queueing().filter(|p| *p > n) {
            // Nothing queued: the capture did not find where queueing
            // starts, only that this many were admitted at once.
            Some(p) => InFlightTarget {
                per_replica: p,
                why: format!(
                    "the most a replica held without anything waiting; the capture never found where queueing starts, so above the {} the queue objective names",
                    num(n)
                ),
            },
            None => InFlightTarget {
                per_replica: n,
                why: "the load the queue objective names".into(),
            },
        },
    }
}
