//! The six analyses of the walk-through, one module each, in its order.
//! Each reads the fleet's per-window rows and the summary and yields
//! findings with their evidence.

use vllm_lens_catalog::{Catalogue, Signal, Status};

use crate::model::{
    Analysis, Efficiency, Evidence, Finding, Latency, Outcomes, Severity, Summary, Workload,
};

pub(crate) mod efficiency;
pub(crate) mod hardware;
pub(crate) mod latency;
pub(crate) mod memory;
pub(crate) mod outcomes;
pub(crate) mod workload;

/// One fleet window's figures.
#[derive(Clone, Debug)]
pub(crate) struct FleetWindow {
    pub start_ms: i64,
    pub latency: Latency,
    pub efficiency: Efficiency,
    pub workload: Workload,
    pub outcomes: Outcomes,
}

/// What the analyses read.
pub(crate) struct Ctx<'a> {
    pub catalogue: &'a Catalogue,
    pub summary: &'a Summary,
    pub windows: &'a [FleetWindow],
    pub replicas: usize,
    pub engine_v1: bool,
    /// The V0 lifetime prefix-cache hit rate at the end of the capture.
    pub prefix_lifetime: Option<f64>,
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
}

/// Four significant digits are plenty for evidence.
pub(crate) fn round(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 4 - (v.abs().log10().floor() as i32 + 1);
    let f = 10f64.powi(digits.clamp(-6, 12));
    (v * f).round() / f
}

/// A finding.
pub(crate) fn finding(
    id: &str,
    severity: Severity,
    title: String,
    explanation: String,
    evidence: Vec<Evidence>,
    action: &str,
) -> Finding {
    Finding {
        id: id.to_string(),
        severity,
        title,
        explanation,
        evidence,
        action: action.to_string(),
    }
}

/// A "cannot say" finding for a missing input.
pub(crate) fn missing(id: &str, what: &str, signals: &[Signal]) -> Finding {
    let names: Vec<String> = signals
        .iter()
        .flat_map(|s| s.info().candidates.iter().map(|c| c.name.to_string()))
        .collect();
    Finding {
        id: id.to_string(),
        severity: Severity::NotApplicable,
        title: format!("{what}: not in this capture"),
        explanation: format!(
            "None of {} was captured, so this cannot be judged. It is shown as missing, not as zero.",
            names.join(", ")
        ),
        evidence: Vec::new(),
        action: String::new(),
    }
}

/// Runs the six analyses.
pub(crate) fn run(ctx: &Ctx<'_>) -> Vec<Analysis> {
    let mut out = vec![
        Analysis {
            id: "latency".into(),
            title: "1. Where latency goes".into(),
            findings: latency::findings(ctx),
        },
        Analysis {
            id: "efficiency".into(),
            title: "2. Does the engine use the GPU well".into(),
            findings: efficiency::findings(ctx),
        },
        Analysis {
            id: "workload".into(),
            title: "3. The workload's shape".into(),
            findings: workload::findings(ctx),
        },
        Analysis {
            id: "outcomes".into(),
            title: "4. Outcomes".into(),
            findings: outcomes::findings(ctx),
        },
        Analysis {
            id: "hardware".into(),
            title: "5. The GPU as witness".into(),
            findings: hardware::findings(ctx),
        },
        Analysis {
            id: "memory".into(),
            title: "6. KV cache against VRAM, and energy".into(),
            findings: memory::findings(ctx),
        },
    ];
    for a in &mut out {
        a.findings.sort_by_key(|f| f.severity);
    }
    out
}
