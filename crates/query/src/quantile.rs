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

/// What a histogram's buckets prove about a quantile against an
/// objective. Interpolation inside a bucket is a guess; only bucket edges
/// are known, so the quantile is proven within the objective only when the
/// share of observations at or below the largest edge at or below the
/// objective already reaches the quantile, and proven beyond it only when
/// the share at or below the smallest edge at or above the objective falls
/// short of it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Proof {
    /// The verdict.
    pub verdict: Verdict,
    /// The largest finite edge at or below the objective (`None`: the
    /// objective is below the first edge).
    pub edge_below: Option<f64>,
    /// Share of observations at or below `edge_below` (0 when none), 0..=1.
    pub share_below: f64,
    /// The smallest edge at or above the objective (`+Inf` above the top).
    pub edge_above: f64,
    /// Share of observations at or below `edge_above`, 0..=1.
    pub share_above: f64,
    /// The objective is itself a bucket edge, so the buckets decide "≤".
    pub on_edge: bool,
}

/// The verdict of a [`Proof`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Proven at or below the objective.
    Within,
    /// Proven above the objective.
    Beyond,
    /// The objective lies inside the bucket that holds the quantile.
    Undecided,
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

    /// The layout as `histogram_quantile` reads it: sorted by bound, equal
    /// bounds coalesced, counts forced monotonic. `None` without a `+Inf`
    /// bucket or with fewer than two buckets.
    pub fn normalised(&self) -> Option<Vec<(f64, f64)>> {
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
        let mut merged: Vec<(f64, f64)> = Vec::with_capacity(b.len());
        for (le, c) in b {
            match merged.last_mut() {
                Some(last) if last.0 == le => last.1 += c,
                _ => merged.push((le, c)),
            }
        }
        let mut max = f64::NEG_INFINITY;
        for slot in &mut merged {
            if slot.1 > max {
                max = slot.1;
            } else {
                slot.1 = max;
            }
        }
        (merged.len() >= 2).then_some(merged)
    }

    /// What the buckets prove about the q-quantile against `objective`
    /// (same unit as the bounds): see [`Proof`]. `None` without
    /// observations or without a usable layout.
    pub fn prove(&self, q: f64, objective: f64) -> Option<Proof> {
        let b = self.normalised()?;
        let total = b[b.len() - 1].1;
        if total.is_nan() || total <= 0.0 || !(0.0..=1.0).contains(&q) || objective.is_nan() {
            return None;
        }
        let rank = q * total;
        // Edges equal to the objective up to rounding of decimal text.
        let same = |le: f64| (le - objective).abs() <= 1e-9 * objective.abs().max(1e-12);
        let below = b
            .iter()
            .rev()
            .find(|(le, _)| le.is_finite() && (*le < objective || same(*le)))
            .copied();
        let above = b
            .iter()
            .find(|(le, _)| *le > objective || same(*le))
            .copied()
            .unwrap_or((f64::INFINITY, total));
        let (edge_below, count_below) = below.map_or((None, 0.0), |(le, c)| (Some(le), c));
        let verdict = if count_below >= rank && edge_below.is_some() {
            Verdict::Within
        } else if above.1 < rank {
            Verdict::Beyond
        } else {
            Verdict::Undecided
        };
        Some(Proof {
            verdict,
            edge_below,
            share_below: count_below / total,
            edge_above: above.0,
            share_above: above.1 / total,
            on_edge: edge_below.is_some_and(same),
        })
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
    fn proofs_use_bucket_edges_only() {
        // vLLM's TTFT edges around 300 ms: 0.25, 0.5.
        let les = [0.1, 0.25, 0.5, 1.0, f64::INFINITY];
        // 96 % within 250 ms: proven within 300 ms.
        let p = b(&les, &[50.0, 96.0, 99.0, 100.0, 100.0])
            .prove(0.95, 0.3)
            .unwrap();
        assert_eq!(p.verdict, Verdict::Within);
        assert_eq!((p.edge_below, p.edge_above), (Some(0.25), 0.5));
        assert!(!p.on_edge);
        // 90 % within 250 ms, 97 % within 500 ms: the p95 is in (250, 500].
        let p = b(&les, &[50.0, 90.0, 97.0, 100.0, 100.0])
            .prove(0.95, 0.3)
            .unwrap();
        assert_eq!(p.verdict, Verdict::Undecided);
        assert!((p.share_below - 0.9).abs() < 1e-12 && (p.share_above - 0.97).abs() < 1e-12);
        // 93 % within 500 ms: proven beyond 300 ms.
        let p = b(&les, &[50.0, 90.0, 93.0, 100.0, 100.0])
            .prove(0.95, 0.3)
            .unwrap();
        assert_eq!(p.verdict, Verdict::Beyond);
        // An objective on an edge decides.
        let p = b(&les, &[50.0, 95.0, 97.0, 100.0, 100.0])
            .prove(0.95, 0.25)
            .unwrap();
        assert_eq!((p.verdict, p.on_edge), (Verdict::Within, true));
        let p = b(&les, &[50.0, 94.0, 97.0, 100.0, 100.0])
            .prove(0.95, 0.25)
            .unwrap();
        assert_eq!(p.verdict, Verdict::Beyond);
        // Below the first edge nothing can be proven within.
        let p = b(&les, &[100.0, 100.0, 100.0, 100.0, 100.0])
            .prove(0.95, 0.05)
            .unwrap();
        assert_eq!((p.verdict, p.edge_below), (Verdict::Undecided, None));
        // Above the top edge nothing can be proven beyond.
        let p = b(&les, &[0.0, 0.0, 0.0, 0.0, 100.0])
            .prove(0.95, 5.0)
            .unwrap();
        assert_eq!(
            (p.verdict, p.edge_above),
            (Verdict::Undecided, f64::INFINITY)
        );
        // The verdicts agree with Prometheus' interpolated value wherever they decide.
        for counts in [
            [10.0, 60.0, 95.0, 99.0, 100.0],
            [0.0, 0.0, 94.0, 96.0, 100.0],
        ] {
            let h = b(&les, &counts);
            for objective in [0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0, 2.0] {
                let v = h.quantile(0.95).unwrap().value;
                match h.prove(0.95, objective).unwrap().verdict {
                    Verdict::Within => assert!(v <= objective),
                    Verdict::Beyond => assert!(v > objective),
                    Verdict::Undecided => {}
                }
            }
        }
        assert_eq!(b(&les, &[0.0; 5]).prove(0.95, 0.3), None);
    }

    #[test]
    fn non_cumulative_buckets_are_forced_monotonic_and_flagged() {
        let h = b(&[0.1, 0.5, f64::INFINITY], &[10.0, 5.0, 20.0]);
        let q = h.quantile(0.5).unwrap();
        assert!(q.forced_monotonic);
        assert_eq!(q.value, 0.1);
    }
}
