//! Prometheus 2.42's evaluation of a few PromQL building blocks at one
//! timestamp, over raw points: the instant lookup of a vector selector
//! (5-minute lookback) and `rate`/`increase` with Prometheus'
//! extrapolation. The report's alert rules and autoscaling triggers are
//! evaluated with these, so that "would have fired" means what Prometheus
//! would have said (the test oracle range-queries the same expressions).
//!
//! This is deliberately not the engine behind the report's own figures:
//! those never extrapolate (see docs/decisions.md, "Our windows and
//! Prometheus'").

/// Prometheus' default lookback for instant vector selectors, ms.
pub const LOOKBACK_MS: i64 = 300_000;

/// The value an instant vector selector sees at `t`: the latest point at or
/// before `t`, no older than the lookback.
pub fn instant(times: &[i64], values: &[f64], t: i64) -> Option<f64> {
    let i = times.partition_point(|&x| x <= t);
    let j = i.checked_sub(1)?;
    (times[j] >= t - LOOKBACK_MS).then(|| values[j])
}

/// `rate(x[range])` (or `increase` with `per_second` false) at `t` as
/// Prometheus 2.42 computes it for a counter: the points in
/// `[t − range, t]`, resets corrected, extrapolated towards the range's
/// edges by at most half an average interval (or to where the counter
/// would have been zero). `None` with fewer than two points.
pub fn extrapolated_rate(
    times: &[i64],
    values: &[f64],
    t: i64,
    range_ms: i64,
    per_second: bool,
) -> Option<f64> {
    let lo = times.partition_point(|&x| x < t - range_ms);
    let hi = times.partition_point(|&x| x <= t);
    if hi < lo + 2 {
        return None;
    }
    let (ts, vs) = (&times[lo..hi], &values[lo..hi]);
    let first = vs[0];
    let last = vs[vs.len() - 1];
    let mut result = last - first;
    for w in vs.windows(2) {
        if w[1] < w[0] {
            result += w[0];
        }
    }
    let range_start = (t - range_ms) as f64 / 1000.0;
    let range_end = t as f64 / 1000.0;
    let first_t = ts[0] as f64 / 1000.0;
    let last_t = ts[ts.len() - 1] as f64 / 1000.0;
    let mut to_start = first_t - range_start;
    let to_end = range_end - last_t;
    let sampled = last_t - first_t;
    let average = sampled / (ts.len() - 1) as f64;
    if result > 0.0 && first >= 0.0 {
        let to_zero = sampled * (first / result);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    let threshold = average * 1.1;
    let mut interval = sampled;
    interval += if to_start < threshold {
        to_start
    } else {
        average / 2.0
    };
    interval += if to_end < threshold {
        to_end
    } else {
        average / 2.0
    };
    result *= interval / sampled;
    if per_second {
        result /= range_ms as f64 / 1000.0;
    }
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookback() {
        let t = [0, 15_000, 30_000];
        let v = [1.0, 2.0, 3.0];
        assert_eq!(instant(&t, &v, 20_000), Some(2.0));
        assert_eq!(instant(&t, &v, 30_000), Some(3.0));
        assert_eq!(instant(&t, &v, 330_000), Some(3.0));
        assert_eq!(instant(&t, &v, 330_001), None);
        assert_eq!(instant(&t, &v, -1), None);
    }

    #[test]
    fn rate_extrapolates_like_prometheus() {
        // Points every 15 s from 15 s to 60 s, +15 each: a 60 s range at
        // 60 s starts 15 s before the first point (within 1.1 × 15 s), so
        // it extrapolates the whole 15 s: increase 45 × 60/45 = 60.
        let t = [15_000, 30_000, 45_000, 60_000];
        let v = [15.0, 30.0, 45.0, 60.0];
        let inc = extrapolated_rate(&t, &v, 60_000, 60_000, false).unwrap();
        assert!((inc - 60.0).abs() < 1e-9, "{inc}");
        // The zero point limits extrapolation: starting at 15 the counter
        // would be zero 5 s before the first point: 45 × 50/45.
        let v = [5.0, 20.0, 35.0, 50.0];
        let inc = extrapolated_rate(&t, &v, 60_000, 60_000, false).unwrap();
        assert!((inc - 50.0).abs() < 1e-9, "{inc}");
        // A reset counts the value before it.
        let v = [10.0, 20.0, 5.0, 15.0];
        let inc = extrapolated_rate(&t, &v, 60_000, 60_000, false).unwrap();
        assert!(inc > 25.0);
        assert_eq!(
            extrapolated_rate(&t[..1], &v[..1], 60_000, 60_000, true),
            None
        );
        // Rate divides by the range.
        let r = extrapolated_rate(&t, &[15.0, 30.0, 45.0, 60.0], 60_000, 60_000, true).unwrap();
        assert!((r - 1.0).abs() < 1e-9);
    }
}
