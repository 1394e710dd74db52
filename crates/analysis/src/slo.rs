//! The SLO scorecard: four verdicts with their value, threshold, headroom
//! and the windows that missed.

use crate::analyses::FleetWindow;
use crate::model::{Efficiency, Latency, Row, SloResult, SloStatus, SloThresholds, Summary};

fn verdict(value: Option<f64>, threshold: f64) -> SloStatus {
    match value {
        None => SloStatus::NotExercised,
        Some(v) if v < threshold => SloStatus::Pass,
        Some(_) => SloStatus::Fail,
    }
}

#[allow(clippy::too_many_arguments)]
fn result(
    id: &str,
    title: String,
    value: Option<f64>,
    threshold: f64,
    unit: &str,
    status: SloStatus,
    failing: Vec<i64>,
    explanation: String,
) -> SloResult {
    SloResult {
        id: id.to_string(),
        title,
        status,
        value: value.map(crate::analyses::round),
        threshold,
        headroom: value.map(|v| crate::analyses::round(threshold - v)),
        unit: unit.to_string(),
        failing_windows: failing,
        explanation,
    }
}

/// Judges the four SLOs.
pub(crate) fn scorecard(
    t: &SloThresholds,
    summary: &Summary,
    fleet: &[FleetWindow],
    latency_rows: &[Row<Latency>],
    efficiency_rows: &[Row<Efficiency>],
) -> Vec<SloResult> {
    let mut out = Vec::new();
    let failing = |f: &dyn Fn(&FleetWindow) -> Option<f64>, thr: f64| -> Vec<i64> {
        fleet
            .iter()
            .filter(|w| f(w).is_some_and(|v| v >= thr))
            .map(|w| w.start_ms)
            .collect()
    };
    let v = summary.latency.ttft_p95_ms;
    out.push(result(
        "ttft_p95",
        format!("Time to first token p95 < {} ms", t.ttft_p95_ms),
        v,
        t.ttft_p95_ms,
        "ms",
        verdict(v, t.ttft_p95_ms),
        failing(&|w| w.latency.ttft_p95_ms, t.ttft_p95_ms),
        "p95 of vllm:time_to_first_token_seconds over the whole capture (histogram_quantile on the summed bucket increases); failing windows are those whose own p95 reached the threshold.".into(),
    ));
    let v = summary.latency.itl_p95_ms;
    out.push(result(
        "itl_p95",
        format!("Inter-token latency p95 < {} ms", t.itl_p95_ms),
        v,
        t.itl_p95_ms,
        "ms",
        verdict(v, t.itl_p95_ms),
        failing(&|w| w.latency.itl_p95_ms, t.itl_p95_ms),
        "p95 of the inter-token latency histogram over the whole capture; failing windows are those whose own p95 reached the threshold.".into(),
    ));
    // Zero queueing at the stated concurrency, judged per replica.
    let mut exercised: Vec<(i64, f64, f64)> = Vec::new();
    for (l, e) in latency_rows.iter().zip(efficiency_rows) {
        if l.key.replica == "fleet" {
            continue;
        }
        if e.fields.running.is_some_and(|r| r >= t.queue_concurrency) {
            exercised.push((
                e.key.window_start_ms,
                e.fields.waiting.unwrap_or(0.0),
                l.fields.queue_ms.unwrap_or(0.0),
            ));
        }
    }
    let (status, value, failing_windows) = if exercised.is_empty() {
        (SloStatus::NotExercised, None, Vec::new())
    } else {
        let failing: Vec<i64> = exercised
            .iter()
            .filter(|(_, waiting, queue)| *waiting > 0.0 || *queue >= t.queue_negligible_ms)
            .map(|x| x.0)
            .collect();
        let worst = exercised.iter().map(|x| x.2).fold(0.0, f64::max);
        (
            if failing.is_empty() {
                SloStatus::Pass
            } else {
                SloStatus::Fail
            },
            Some(worst),
            failing,
        )
    };
    let mut failing_windows = failing_windows;
    failing_windows.sort_unstable();
    failing_windows.dedup();
    let mut q = result(
        "queue_at_concurrency",
        format!("No queueing at {} concurrent requests", t.queue_concurrency),
        value,
        t.queue_negligible_ms,
        "ms",
        status,
        failing_windows,
        format!(
            "In every window where a replica ran at least {} requests at once, no request waited (num_requests_waiting = 0) and the average queue time stayed under {} ms. Value: the worst average queue time among those windows. Not exercised when the capture never reached that concurrency.",
            t.queue_concurrency, t.queue_negligible_ms
        ),
    );
    if status == SloStatus::NotExercised {
        q.headroom = None;
    }
    out.push(q);
    let v = summary.outcomes.error_abort_pct;
    out.push(result(
        "error_abort_rate",
        format!("Errors + aborts < {} % of finished requests", t.error_abort_pct),
        v,
        t.error_abort_pct,
        "%",
        verdict(v, t.error_abort_pct),
        failing(&|w| w.outcomes.error_abort_pct, t.error_abort_pct),
        "(finished_reason error + abort) ÷ all finished requests over the whole capture. Client disconnects are not counted by V1 (see Outcomes).".into(),
    ));
    out
}
