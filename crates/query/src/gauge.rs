//! Gauge statistics per window: min, mean, max and last of the points that
//! fall in the window (NaN and infinite values skipped and counted).

use serde::Serialize;

use vllm_lens_store::Pushed;

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

/// Per-window statistics of one series of a pushdown export: Prometheus'
/// own `min_over_time`, `max_over_time`, `avg_over_time` and
/// `count_over_time` of each exported window (stamped at its last ms),
/// gathered into the grid's windows (a grid window holds whole exported
/// windows: its width is a multiple of theirs). The mean is weighted by the
/// points each exported window held; `last` is the series' latest point in
/// the window (the last value of the last exported window). Values `keep`
/// refuses are left out, as [`gauge_windows`] leaves out unknowns.
pub fn pushed_windows(
    pushed: &Pushed,
    times: &[i64],
    values: &[f64],
    grid: &Grid,
    keep: impl Fn(f64) -> bool,
) -> Vec<Option<GaugeStats>> {
    let ok = |v: f64| v.is_finite() && keep(v);
    let mut out: Vec<Option<GaugeStats>> = vec![None; grid.count];
    let mut weighted = vec![(0.0f64, 0.0f64); grid.count];
    let count_at = |t: i64| -> f64 {
        pushed
            .count
            .binary_search_by_key(&t, |p| p.0)
            .ok()
            .map_or(1.0, |i| pushed.count[i].1)
    };
    let slot = |out: &mut Vec<Option<GaugeStats>>, w: usize, v: f64| -> GaugeStats {
        *out[w].get_or_insert(GaugeStats {
            min: v,
            mean: v,
            max: v,
            last: f64::NAN,
            points: 0,
        })
    };
    for &(t, v) in &pushed.avg {
        let (Some(w), true) = (grid.index(t), ok(v)) else {
            continue;
        };
        let n = count_at(t).max(1.0);
        slot(&mut out, w, v);
        weighted[w].0 += v * n;
        weighted[w].1 += n;
    }
    for &(t, v) in &pushed.min {
        if let (Some(w), true) = (grid.index(t), ok(v)) {
            let mut s = slot(&mut out, w, v);
            s.min = s.min.min(v);
            out[w] = Some(s);
        }
    }
    for &(t, v) in &pushed.max {
        if let (Some(w), true) = (grid.index(t), ok(v)) {
            let mut s = slot(&mut out, w, v);
            s.max = s.max.max(v);
            out[w] = Some(s);
        }
    }
    for (w, s) in out.iter_mut().enumerate() {
        if let Some(s) = s {
            let (sum, n) = weighted[w];
            if n > 0.0 {
                s.mean = sum / n;
                s.points = n.min(f64::from(u32::MAX)) as u32;
            }
            s.min = s.min.min(s.mean);
            s.max = s.max.max(s.mean);
        }
    }
    for (&t, &v) in times.iter().zip(values) {
        if let (Some(w), true) = (grid.index(t), ok(v))
            && let Some(s) = &mut out[w]
        {
            s.last = v;
        }
    }
    for s in out.iter_mut().flatten() {
        if s.last.is_nan() {
            s.last = s.mean;
        }
        s.points = s.points.max(1);
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
