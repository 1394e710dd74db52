//! How the queue moves across a load level: a level whose queue grows is an
//! overload (more arrives than the server serves), not a steady state.

use crate::measure::scopes::FleetWindow;
use crate::measure::thresholds::{OVERLOAD_FACTOR, OVERLOAD_QUEUE_RISE_MS, OVERLOAD_WAITING_RISE};
use crate::model::{FirstLast, QueueTrend};
use crate::text::round;

/// The mean over the first third of the windows against the mean over the
/// last third (one window each for two or three windows); `None` with
/// fewer than two windows holding the figure.
fn first_last(values: &[Option<f64>]) -> Option<FirstLast> {
    let v: Vec<f64> = values.iter().flatten().copied().collect();
    if v.len() < 2 {
        return None;
    }
    let k = (v.len() / 3).max(1);
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    Some(FirstLast {
        first: round(mean(&v[..k])),
        last: round(mean(&v[v.len() - k..])),
    })
}

/// The queue's trend over a phase's windows.
pub(crate) fn queue_trend(windows: &[FleetWindow]) -> Option<QueueTrend> {
    let waiting: Vec<Option<f64>> = windows.iter().map(|w| w.efficiency.waiting_avg).collect();
    let queue: Vec<Option<f64>> = windows.iter().map(|w| w.latency.queue_ms).collect();
    let t = QueueTrend {
        waiting: first_last(&waiting),
        queue_ms: first_last(&queue),
    };
    (t.waiting.is_some() || t.queue_ms.is_some()).then_some(t)
}

/// True when the queue grows across the phase: waiting up by
/// [`OVERLOAD_WAITING_RISE`] requests and [`OVERLOAD_FACTOR`]×, or the
/// mean queue time up [`OVERLOAD_FACTOR`]× and by
/// [`OVERLOAD_QUEUE_RISE_MS`].
pub(crate) fn grows(t: &QueueTrend) -> bool {
    let rises = |x: Option<FirstLast>, by: f64| {
        x.is_some_and(|x| x.last - x.first >= by && x.last >= OVERLOAD_FACTOR * x.first)
    };
    rises(t.waiting, OVERLOAD_WAITING_RISE) || rises(t.queue_ms, OVERLOAD_QUEUE_RISE_MS)
}

/// The trend in words: "requests waiting grew 4 → 25, mean queue time
/// 0.8 s → 6.1 s".
pub(crate) fn words(t: &QueueTrend) -> String {
    let mut parts = Vec::new();
    if let Some(w) = t.waiting {
        parts.push(format!(
            "requests waiting {} → {}",
            crate::text::num(w.first.round()),
            crate::text::num(w.last.round())
        ));
    }
    if let Some(q) = t.queue_ms {
        parts.push(format!(
            "mean queue time {} → {}",
            crate::text::ms_text(q.first.round()),
            crate::text::ms_text(q.last.round())
        ));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend(waiting: &[f64], queue: &[f64]) -> QueueTrend {
        let w: Vec<Option<f64>> = waiting.iter().map(|x| Some(*x)).collect();
        let q: Vec<Option<f64>> = queue.iter().map(|x| Some(*x)).collect();
        QueueTrend {
            waiting: first_last(&w),
            queue_ms: first_last(&q),
        }
    }

    #[test]
    fn a_growing_queue_is_an_overload_and_breathing_is_not() {
        let t = trend(&[4.0, 6.0, 9.0, 14.0, 19.0, 25.0], &[]);
        assert_eq!(
            t.waiting,
            Some(FirstLast {
                first: 5.0,
                last: 22.0
            })
        );
        assert!(grows(&t));
        assert_eq!(words(&t), "requests waiting 5 → 22");
        // A queue that comes and goes around one level.
        assert!(!grows(&trend(&[4.0, 7.0, 3.0, 6.0, 4.0, 6.0], &[])));
        // A small queue doubling is not an overload.
        assert!(!grows(&trend(&[0.5, 0.6, 1.0, 1.4], &[])));
        // Queue time alone: 0.8 s → 6 s.
        assert!(grows(&trend(&[], &[800.0, 900.0, 3000.0, 6000.0])));
        assert!(!grows(&trend(&[], &[800.0, 900.0, 1000.0, 1200.0])));
    }
}
