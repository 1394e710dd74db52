//! Gauge statistics per window: min, mean, max and last of the points that
//! fall in the window (NaN and infinite values skipped and counted).

use serde::Serialize;

use crate::grid::Grid;

/// One window's statistics of one gauge (or an aggregate of several).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GaugeStats {
    /// Smallest point.
    pub min: f64,
    /// Arithmetic mean of the points (`avg_over_time`).
    pub mean: f64,
    /// Largest point (`max_over_time`).
    pub max: f64,
    /// The latest point.
    pub last: f64,
    /// Points counted.
    pub points: u32,
}

/// Per-window statistics of one series; `None` for a window without a
/// finite point.
pub fn gauge_windows(times: &[i64], values: &[f64], grid: &Grid) -> Vec<Option<GaugeStats>> {
    let mut out: Vec<Option<GaugeStats>> = vec![None; grid.count];
    let mut sums = vec![0.0f64; grid.count];
    for (&t, &v) in times.iter().zip(values) {
        if !v.is_finite() {
            continue;
        }
        let Some(w) = grid.index(t) else { continue };
        sums[w] += v;
        match &mut out[w] {
            Some(s) => {
                s.min = s.min.min(v);
                s.max = s.max.max(v);
                s.last = v;
                s.points += 1;
            }
            slot @ None => {
                *slot = Some(GaugeStats {
                    min: v,
                    mean: v,
                    max: v,
                    last: v,
                    points: 1,
                })
            }
        }
    }
    for (s, sum) in out.iter_mut().zip(sums) {
        if let Some(s) = s {
            s.mean = sum / f64::from(s.points);
        }
    }
    out
}

/// How several series of one gauge combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Counts (running, waiting requests; MiB; watts): add them up.
    Sum,
    /// Fractions and percentages (KV usage, utilisation): never added;
    /// averaged, with the largest maximum.
    Mean,
}

/// Combines per-window statistics of several series.
///
/// `Sum`: each statistic adds up (the mean of a sum is the sum of the
/// means; min and max are the sums of the series' minima and maxima, which
/// bound the true extremes of the sum when scrapes are not simultaneous).
/// `Mean`: means and lasts are averaged over the series, min is the least
/// minimum and max the greatest maximum.
pub fn combine(
    series: &[Vec<Option<GaugeStats>>],
    how: Combine,
    windows: usize,
) -> Vec<Option<GaugeStats>> {
    (0..windows)
        .map(|w| {
            let present: Vec<GaugeStats> = series
                .iter()
                .filter_map(|s| s.get(w).copied().flatten())
                .collect();
            if present.is_empty() {
                return None;
            }
            let n = present.len() as f64;
            let points = present.iter().map(|s| s.points).sum();
            Some(match how {
                Combine::Sum => GaugeStats {
                    min: present.iter().map(|s| s.min).sum(),
                    mean: present.iter().map(|s| s.mean).sum(),
                    max: present.iter().map(|s| s.max).sum(),
                    last: present.iter().map(|s| s.last).sum(),
                    points,
                },
                Combine::Mean => GaugeStats {
                    min: present.iter().map(|s| s.min).fold(f64::INFINITY, f64::min),
                    mean: present.iter().map(|s| s.mean).sum::<f64>() / n,
                    max: present
                        .iter()
                        .map(|s| s.max)
                        .fold(f64::NEG_INFINITY, f64::max),
                    last: present.iter().map(|s| s.last).sum::<f64>() / n,
                    points,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_per_window() {
        let g = Grid::covering(60_000, 0, 119_999).unwrap();
        let t = [0, 15_000, 30_000, 45_000, 60_000, 75_000];
        let v = [1.0, 3.0, f64::NAN, 2.0, 7.0, 5.0];
        let w = gauge_windows(&t, &v, &g);
        assert_eq!(
            w[0],
            Some(GaugeStats {
                min: 1.0,
                mean: 2.0,
                max: 3.0,
                last: 2.0,
                points: 3
            })
        );
        assert_eq!(w[1].unwrap().last, 5.0);
        let both = combine(&[w.clone(), w.clone()], Combine::Sum, 2);
        assert_eq!(both[0].unwrap().mean, 4.0);
        let avg = combine(&[w.clone(), vec![None, None]], Combine::Mean, 2);
        assert_eq!(avg[1].unwrap().mean, 6.0);
    }
}
