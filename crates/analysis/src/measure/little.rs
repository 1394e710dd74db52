//! Requests in the engine by Little's law: L = λ × W, with λ the finished
//! requests per second and W their mean end-to-end latency in the engine
//! (`vllm:e2e_request_latency_seconds` `_sum ÷ _count`, exact, not a bucket).
//!
//! The running and waiting gauges say the same thing as a sample: vLLM sets
//! them at its engine steps, and a scrape reads the last value set. Where
//! the two disagree by much, the gauges are the suspect: the latency
//! histogram counts every finished request, the gauges only the moments the
//! API server's loop got to record them (an engine process starved of CPU,
//! or requests waiting before the scheduler, in the API server or the
//! tokenizer, where the gauges do not look).

use crate::measure::thresholds::{
    GAUGES_DISAGREE_FACTOR, GAUGES_DISAGREE_MIN_REQUESTS, GAUGES_DISAGREE_REQUESTS,
    GAUGES_DISAGREE_SE,
};

/// Finished per minute × mean e2e latency (ms) → requests in flight.
pub(crate) fn in_flight(requests_per_min: Option<f64>, e2e_ms: Option<f64>) -> Option<f64> {
    let (r, w) = (requests_per_min?, e2e_ms?);
    (r.is_finite() && w.is_finite() && r >= 0.0 && w >= 0.0).then(|| r / 60.0 * w / 1000.0)
}

/// True when the gauges' figure and Little's law disagree: the larger more
/// than twice the smaller, and further apart than the gauges' sampling
/// could make them. That is more than two requests, or, where the standard
/// error of the gauges' mean is known (`se`: the spread of their scrapes ÷
/// √ the effective scrapes), more than three of it and half a request. On a
/// light load one request more or less is a factor of two, so without the
/// noise the margin must be wide; a long phase's mean is known well enough
/// that ~1 against Little's ~2 is a contradiction, not chance.
pub(crate) fn disagree(gauges: f64, little: f64, se: Option<f64>) -> bool {
    let (lo, hi) = (gauges.min(little), gauges.max(little));
    let apart = hi - lo;
    let beyond_noise = apart > GAUGES_DISAGREE_REQUESTS
        || se.is_some_and(|s| {
            s.is_finite() && apart > (GAUGES_DISAGREE_SE * s).max(GAUGES_DISAGREE_MIN_REQUESTS)
        });
    beyond_noise && (lo <= 0.0 || hi / lo > GAUGES_DISAGREE_FACTOR)
}

/// True when the gauges read fewer requests than Little's law gives, by
/// [`disagree`]'s margin: they are stale or blind, because Little's law
/// over finished requests is a lower bound on the requests in the engine
/// (a request that never finishes, a client's hang-up, adds to the gauges
/// and not to the finished rate).
pub(crate) fn gauges_low(gauges: f64, little: f64, se: Option<f64>) -> bool {
    gauges < little && disagree(gauges, little, se)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn littles_law_from_the_rate_and_the_mean_latency() {
        // 1,769 finished/min at 450 ms: ~13 in the engine.
        let l = in_flight(Some(1769.0), Some(450.0)).unwrap();
        assert!((l - 13.27).abs() < 0.01, "{l}");
        assert_eq!(in_flight(None, Some(450.0)), None);
        assert_eq!(in_flight(Some(10.0), None), None);
        assert_eq!(in_flight(Some(f64::NAN), Some(1.0)), None);
    }

    #[test]
    fn disagreement_needs_both_the_factor_and_the_requests() {
        assert!(disagree(1.0, 13.0, None));
        assert!(disagree(13.0, 1.0, None));
        assert!(disagree(0.0, 2.5, None));
        // Twice, but within two requests: light load.
        assert!(!disagree(0.5, 2.0, None));
        // Four apart, but within a factor of two.
        assert!(!disagree(10.0, 14.0, None));
        assert!(!disagree(0.0, 0.0, None));
        assert!(gauges_low(1.0, 13.0, None));
        assert!(!gauges_low(13.0, 1.0, None));
    }

    #[test]
    fn a_well_measured_mean_disagrees_on_a_light_load() {
        // A CPU-starved engine's steady phase (pair-cap4-before): the
        // gauges ~0.96 over 24 scrapes, Little's law ~1.94.
        assert!(!gauges_low(0.96, 1.94, None));
        assert!(gauges_low(0.96, 1.94, Some(0.15)));
        // The same figures from six noisy scrapes: chance can explain them.
        assert!(!gauges_low(0.96, 1.94, Some(0.4)));
        // Never on less than half a request, however steady the gauges.
        assert!(!gauges_low(0.1, 0.4, Some(0.0)));
        // The factor still holds.
        assert!(!gauges_low(1.5, 2.5, Some(0.05)));
    }
}
