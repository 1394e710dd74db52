//! The objectives, defined once: each one's id, the name `--slo` takes,
//! its title, what it means, its unit, the signals it reads, where it
//! lives in [`SloThresholds`] and how it is judged. The scorecard, the
//! CLI's `--slo` and help text, and the page's form all read [`SLOS`].

use vllm_lens_catalog::Signal;

use super::evaluate::{SloInput, errors, quantile, queue};
use crate::SloThresholds;
use crate::ids::SloId;
use crate::measure::scopes::FleetWindow;
use crate::model::{Bounds, Phase, SloResult};

/// How an objective's value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A latency: a bare number is milliseconds; `ms`, `s`, `m`, `h` allowed.
    Millis,
    /// A count of requests.
    Requests,
    /// A percentage; a trailing `%` allowed.
    Percent,
}

/// One objective.
pub struct Slo {
    /// Its id in the report.
    pub id: SloId,
    /// The name `--slo` takes, e.g. `ttft-p95`.
    pub name: &'static str,
    /// The field of [`SloThresholds`] (and of the settings' JSON).
    pub field: &'static str,
    /// A short label for a form.
    pub label: &'static str,
    /// What it means, for help text.
    pub meaning: &'static str,
    /// How its value is written.
    pub unit: Unit,
    /// The signals it is judged on.
    pub signals: &'static [Signal],
    /// Reads it.
    pub get: fn(&SloThresholds) -> f64,
    /// Sets it.
    pub set: fn(&mut SloThresholds, f64),
    /// Judges it on a capture.
    pub(crate) judge: fn(&SloInput<'_>) -> SloResult,
    /// What it measures, inside a sentence ("TTFT p95 is ...").
    pub(crate) quantity: &'static str,
    /// Its name inside a sentence ("TTFT p95 between 50 and 100 ms").
    pub(crate) short: &'static str,
    /// The signal a breach or recovery on the timeline cites; for a
    /// quantile, its histogram.
    pub(crate) breach_signal: Signal,
    /// True when a fleet window has the figure it is judged on.
    pub(crate) has_data: fn(&FleetWindow) -> bool,
    /// A quantile's bucket in a phase, for the verdict's margins.
    pub(crate) phase_bucket: Option<fn(&Phase) -> Option<Bounds>>,
}

impl Slo {
    /// The value as `--slo` writes it, e.g. `300ms`, `12`, `0.5%`.
    pub fn show(&self, slo: &SloThresholds) -> String {
        let v = (self.get)(slo);
        match self.unit {
            Unit::Millis => format!("{v}ms"),
            Unit::Requests => format!("{v}"),
            Unit::Percent => format!("{v}%"),
        }
    }

    /// The default value.
    pub fn default_value(&self) -> f64 {
        (self.get)(&SloThresholds::default())
    }
}

/// The objectives, in the order the scorecard shows them.
pub static SLOS: &[Slo] = &[
    Slo {
        id: SloId::TtftP95,
        name: "ttft-p95",
        field: "ttft_p95_ms",
        label: "TTFT p95 at most (ms)",
        meaning: "time to first token, p95 at most",
        unit: Unit::Millis,
        signals: &[Signal::Ttft],
        get: |s| s.ttft_p95_ms,
        set: |s, v| s.ttft_p95_ms = v,
        quantity: "the engine's TTFT",
        short: "the engine's TTFT p95",
        breach_signal: Signal::Ttft,
        has_data: |w| w.latency.ttft_p95_ms.is_some(),
        phase_bucket: Some(|p| p.figures.latency.bounds.ttft_p95_ms),
        judge: |i| {
            quantile(
                i,
                SloId::TtftP95,
                Signal::Ttft,
                i.thresholds.ttft_p95_ms,
                "Time to first token (in the engine)",
                "requests",
            )
        },
    },
    Slo {
        id: SloId::ItlP95,
        name: "itl-p95",
        field: "itl_p95_ms",
        label: "Inter-token p95 at most (ms)",
        meaning: "inter-token latency, p95 at most",
        unit: Unit::Millis,
        signals: &[Signal::InterTokenLatency],
        get: |s| s.itl_p95_ms,
        set: |s, v| s.itl_p95_ms = v,
        quantity: "the engine's inter-token latency",
        short: "the engine's inter-token p95",
        breach_signal: Signal::InterTokenLatency,
        has_data: |w| w.latency.itl_p95_ms.is_some(),
        phase_bucket: Some(|p| p.figures.latency.bounds.itl_p95_ms),
        judge: |i| {
            quantile(
                i,
                SloId::ItlP95,
                Signal::InterTokenLatency,
                i.thresholds.itl_p95_ms,
                "Inter-token latency (in the engine)",
                "tokens",
            )
        },
    },
    Slo {
        id: SloId::QueueAtConcurrency,
        name: "queue-at",
        field: "queue_concurrency",
        label: "No queueing at (requests in flight)",
        meaning: "requests in flight per replica that must be admitted without waiting",
        unit: Unit::Requests,
        signals: &[Signal::Running, Signal::Waiting, Signal::QueueTime],
        get: |s| s.queue_concurrency,
        set: |s, v| s.queue_concurrency = v,
        quantity: "queueing",
        short: "the queue objective",
        breach_signal: Signal::Waiting,
        has_data: |w| w.efficiency.running.is_some(),
        phase_bucket: None,
        judge: queue,
    },
    Slo {
        id: SloId::ErrorAbortRate,
        name: "error-abort",
        field: "error_abort_pct",
        label: "Errors + aborts below (%)",
        meaning: "errors + aborts (and estimated client disconnects) below this share of finished requests",
        unit: Unit::Percent,
        signals: &[Signal::FinishedRequests, Signal::HttpRequests],
        get: |s| s.error_abort_pct,
        set: |s, v| s.error_abort_pct = v,
        quantity: "errors + aborts",
        short: "errors + aborts",
        breach_signal: Signal::FinishedRequests,
        has_data: |w| w.outcomes.error_abort_pct.is_some(),
        phase_bucket: None,
        judge: errors,
    },
];

/// The objective of an id.
pub fn slo(id: SloId) -> &'static Slo {
    SLOS.iter()
        .find(|s| s.id == id)
        .expect("every SloId is in the registry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_objective_once_in_id_order() {
        let ids: Vec<SloId> = SLOS.iter().map(|s| s.id).collect();
        assert_eq!(ids, SloId::ALL);
        let mut t = SloThresholds::default();
        for s in SLOS {
            (s.set)(&mut t, 7.0);
            assert_eq!((s.get)(&t), 7.0, "{}", s.name);
        }
        // The field names are SloThresholds' JSON names.
        let json = serde_json::to_value(SloThresholds::default()).unwrap();
        for s in SLOS {
            assert_eq!(
                json[s.field].as_f64(),
                Some(s.default_value()),
                "{}",
                s.field
            );
        }
    }
}
