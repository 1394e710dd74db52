//! `histogram_quantile` exactly as Prometheus 2.42 computes it, plus what a
//! reader needs to judge the figure: the bucket it lies in and whether it
//! was clamped.

use serde::Serialize;

/// Where in the bucket layout a quantile fell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    /// Interpolated inside a finite bucket.
    Inside,
    /// Inside the first bucket: interpolated from 0, so only "below the
    /// first bound" is really known.
    FirstBucket,
    /// In the `+Inf` bucket: the value is the top finite bound and the true
    /// quantile is at least that.
    AboveTop,
}

/// A quantile read from cumulative bucket counts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Quantile {
    /// The quantile asked for, 0..=1.
    pub q: f64,
    /// Prometheus' value.
    pub value: f64,
    /// Lower bound of the bucket it lies in (0 for the first bucket).
    pub lower: f64,
    /// Upper bound of that bucket (`+Inf` when above the top).
    pub upper: f64,
    /// Where it fell.
    pub position: Position,
    /// True when bucket counts were not cumulative and had to be forced
    /// monotonic (as Prometheus does silently).
    pub forced_monotonic: bool,
}

/// Cumulative bucket counts by upper bound, the last one `+Inf`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Buckets {
    /// Upper bounds, ascending.
    pub les: Vec<f64>,
    /// Cumulative counts, aligned with `les`.
    pub counts: Vec<f64>,
}

impl Buckets {
    /// Observations (the `+Inf` count), when the layout ends in `+Inf`.
    pub fn total(&self) -> Option<f64> {
        match (self.les.last(), self.counts.last()) {
            (Some(le), Some(c)) if le.is_infinite() && *le > 0.0 => Some(*c),
            _ => None,
        }
    }

    /// The q-quantile by Prometheus' algorithm: `None` where Prometheus
    /// gives NaN (no observations, no `+Inf` bucket, fewer than two
    /// buckets, q outside 0..=1 or NaN).
    pub fn quantile(&self, q: f64) -> Option<Quantile> {
        if !(0.0..=1.0).contains(&q) {
            return None;
        }
        let mut b: Vec<(f64, f64)> = self
            .les
            .iter()
            .copied()
            .zip(self.counts.iter().copied())
            .filter(|(le, _)| !le.is_nan())
            .collect();
        b.sort_by(|x, y| x.0.total_cmp(&y.0));
        if b.last().is_none_or(|(le, _)| *le != f64::INFINITY) {
            return None;
        }
        // Coalesce equal bounds (summing their counts), as Prometheus does.
        let mut merged: Vec<(f64, f64)> = Vec::with_capacity(b.len());
        for (le, c) in b {
            match merged.last_mut() {
                Some(last) if last.0 == le => last.1 += c,
                _ => merged.push((le, c)),
            }
        }
        let mut forced = false;
        let mut max = f64::NEG_INFINITY;
        for slot in &mut merged {
            if slot.1 > max {
                max = slot.1;
            } else if slot.1 < max {
                slot.1 = max;
                forced = true;
            }
        }
        if merged.len() < 2 {
            return None;
        }
        let observations = merged[merged.len() - 1].1;
        if observations == 0.0 || observations.is_nan() {
            return None;
        }
        let mut rank = q * observations;
        let n = merged.len();
        let i = merged[..n - 1].partition_point(|&(_, c)| c < rank);
        let result = |value: f64, lower: f64, upper: f64, position: Position| Quantile {
            q,
            value,
            lower,
            upper,
            position,
            forced_monotonic: forced,
        };
        if i == n - 1 {
            let top = merged[n - 2].0;
            return Some(result(top, top, f64::INFINITY, Position::AboveTop));
        }
        if i == 0 && merged[0].0 <= 0.0 {
            return Some(result(
                merged[0].0,
                merged[0].0,
                merged[0].0,
                Position::FirstBucket,
            ));
        }
        let end = merged[i].0;
        let mut count = merged[i].1;
        let mut start = 0.0;
        if i > 0 {
            start = merged[i - 1].0;
            count -= merged[i - 1].1;
            rank -= merged[i - 1].1;
        }
        let value = start + (end - start) * (rank / count);
        if value.is_nan() {
            return None;
        }
        let position = if i == 0 {
            Position::FirstBucket
        } else {
            Position::Inside
        };
        Some(result(value, start, end, position))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(les: &[f64], counts: &[f64]) -> Buckets {
        Buckets {
            les: les.to_vec(),
            counts: counts.to_vec(),
        }
    }

    #[test]
    fn interpolates_inside_the_bucket() {
        let h = b(&[0.1, 0.5, 1.0, f64::INFINITY], &[10.0, 60.0, 95.0, 100.0]);
        let p50 = h.quantile(0.5).unwrap();
        assert!((p50.value - (0.1 + 0.4 * 40.0 / 50.0)).abs() < 1e-12);
        assert_eq!(
            (p50.lower, p50.upper, p50.position),
            (0.1, 0.5, Position::Inside)
        );
        let p95 = h.quantile(0.95).unwrap();
        assert_eq!(p95.value, 1.0);
        let p99 = h.quantile(0.99).unwrap();
        assert_eq!((p99.value, p99.position), (1.0, Position::AboveTop));
        let p05 = h.quantile(0.05).unwrap();
        assert_eq!((p05.value, p05.position), (0.05, Position::FirstBucket));
    }

    #[test]
    fn no_observations_is_no_data() {
        assert_eq!(b(&[0.1, f64::INFINITY], &[0.0, 0.0]).quantile(0.5), None);
        assert_eq!(b(&[0.1, 1.0], &[1.0, 2.0]).quantile(0.5), None);
        assert_eq!(b(&[f64::INFINITY], &[3.0]).quantile(0.5), None);
        assert_eq!(b(&[0.1, f64::INFINITY], &[1.0, 2.0]).quantile(1.5), None);
    }

    #[test]
    fn non_cumulative_buckets_are_forced_monotonic_and_flagged() {
        let h = b(&[0.1, 0.5, f64::INFINITY], &[10.0, 5.0, 20.0]);
        let q = h.quantile(0.5).unwrap();
        assert!(q.forced_monotonic);
        assert_eq!(q.value, 0.1);
    }
}
