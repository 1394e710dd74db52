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

use crate::measure::thresholds::{GAUGES_DISAGREE_FACTOR, GAUGES_DISAGREE_REQUESTS};

/// Finished per minute × mean e2e latency (ms) → requests in flight.
pub(crate) fn in_flight(requests_per_min: Option<f64>, e2e_ms: Option<f64>) -> Option<f64> {
    let (r, w) = (requests_per_min?, e2e_ms?);
    (r.is_finite() && w.is_finite() && r >= 0.0 && w >= 0.0).then(|| r / 60.0 * w / 1000.0)
}

/// True when the gauges' figure and Little's law disagree: the larger more
/// than twice the smaller, and more than two requests apart.
pub(crate) fn disagree(gauges: f64, little: f64) -> bool {
    let (lo, hi) = (gauges.min(little), gauges.max(little));
    hi - lo > GAUGES_DISAGREE_REQUESTS && (lo <= 0.0 || hi / lo > GAUGES_DISAGREE_FACTOR)
}

/// True when the gauges read fewer requests than Little's law gives, by
/// [`disagree`]'s margin: they are stale or blind, because Little's law
/// over finished requests is a lower bound on the requests in the engine
/// (a request that never finishes, a client's hang-up, adds to the gauges
/// and not to the finished rate).
pub(crate) fn gauges_low(gauges: f64, little: f64) -> bool {
    gauges < little && disagree(gauges, little)
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
        assert!(disagree(1.0, 13.0));
        assert!(disagree(13.0, 1.0));
        assert!(disagree(0.0, 2.5));
        // Twice, but within two requests: light load.
        assert!(!disagree(0.5, 2.0));
        // Four apart, but within a factor of two.
        assert!(!disagree(10.0, 14.0));
        assert!(!disagree(0.0, 0.0));
        assert!(gauges_low(1.0, 13.0));
        assert!(!gauges_low(13.0, 1.0));
    }
}
