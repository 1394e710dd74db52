//! The capture split into phases: restarts and down time, error bursts,
//! idle stretches, a process's warm-up, and load levels (steady stretches
//! and the ramps between them). Whole-capture figures blend phases; the
//! report gives each phase its own figures.
//!
//! Load is the mean number of requests in flight (running + waiting) per
//! window, fleet-wide. Candidate boundaries come from binary segmentation
//! of its logarithm (each split must remove more squared error than a
//! penalty scaled by the noise between neighbouring windows; no segment
//! shorter than two windows). Two neighbouring levels then stay apart only
//! when they differ: the larger is at least [`LOAD_STEP_FACTOR`] × the
//! smaller *and* the gap is at least [`LOAD_STEP_SIGMAS`] standard
//! deviations of a Poisson count at the larger level, so the noise of
//! light open-loop load is not read as a step. A level whose first and
//! last thirds differ is a ramp, as is a window between two levels that
//! differs from both.

use crate::ids::PhaseKind;
use crate::thresholds::{IDLE_IN_FLIGHT, LOAD_STEP_FACTOR, LOAD_STEP_SIGMAS};

/// Most load levels one run of ordinary windows is split into (a week of
/// diurnal load stays readable).
const MAX_LEVELS: usize = 24;

/// What the segmentation reads per window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WindowState {
    /// Mean requests in flight (fleet).
    pub in_flight: Option<f64>,
    /// Finished requests per minute.
    pub requests_per_min: Option<f64>,
    /// Part of a restart (outage of a replica and the new process's first
    /// scrape).
    pub restart: bool,
    /// A replica could not be scraped in the whole window.
    pub down: bool,
    /// A process's first minutes.
    pub warmup: bool,
    /// Errors or aborts burst.
    pub burst: bool,
}

/// A phase before its figures: windows `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: usize,
    pub end: usize,
    pub kind: PhaseKind,
}

/// True when two load levels differ (see the module docs).
pub(crate) fn differs(a: f64, b: f64) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    if hi <= 0.0 {
        return false;
    }
    let factor = lo <= 0.0 || hi / lo >= LOAD_STEP_FACTOR;
    factor && hi - lo >= LOAD_STEP_SIGMAS * hi.sqrt()
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn kind_of(w: &WindowState) -> Option<PhaseKind> {
    if w.down {
        Some(PhaseKind::Down)
    } else if w.restart {
        Some(PhaseKind::Restart)
    } else if w.burst {
        Some(PhaseKind::Burst)
    } else if w.warmup {
        Some(PhaseKind::Warmup)
    } else if w.in_flight.is_some_and(|x| x < IDLE_IN_FLIGHT)
        && w.requests_per_min.is_none_or(|r| r < IDLE_IN_FLIGHT)
    {
        Some(PhaseKind::Idle)
    } else {
        None
    }
}

/// Most windows read one by one; longer runs are read in blocks (a day of
/// 1-minute windows in half-hour blocks), so slow drifts and noise average
/// out the way a reader's eye averages them.
const MAX_UNITS: usize = 60;

/// Load levels over a run of ordinary windows `[start, end)`.
fn levels(states: &[WindowState], start: usize, end: usize, out: &mut Vec<Segment>) {
    // Windows without a load figure take their neighbour's.
    let mut load: Vec<f64> = Vec::with_capacity(end - start);
    let mut last = None;
    for s in &states[start..end] {
        let v = s.in_flight.or(last).unwrap_or(0.0);
        last = Some(v);
        load.push(v);
    }
    let block = load.len().div_ceil(MAX_UNITS).max(1);
    let units: Vec<f64> = load.chunks(block).map(median).collect();
    for (a, b, kind) in level_segments(&units) {
        out.push(Segment {
            start: start + a * block,
            end: start + (b * block).min(load.len()),
            kind,
        });
    }
}

/// Levels and ramps over a series of load values (windows or blocks),
/// as `[a, b)` index ranges.
fn level_segments(load: &[f64]) -> Vec<(usize, usize, PhaseKind)> {
    let n = load.len();
    let x: Vec<f64> = load.iter().map(|v| v.ln_1p()).collect();
    // Noise: the median step between neighbouring windows, as a standard
    // deviation of one window's (log) load.
    let mut steps: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    steps.sort_by(f64::total_cmp);
    let sigma = steps.get(steps.len() / 2).copied().unwrap_or(0.0) / (0.6745 * 2f64.sqrt());
    let apart = |a: &[f64], b: &[f64]| {
        let d = (median(a) - median(b)).abs();
        let noise = LOAD_STEP_SIGMAS * sigma * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
        d >= LOAD_STEP_FACTOR.ln() && d >= noise
    };
    // A window between two levels that sit apart, a third of the (log)
    // gap or more away from each, is a moment of transition: a ramp.
    let between = |v: f64, la: f64, lb: f64| {
        let (lo, hi) = (la.min(lb), la.max(lb));
        let gap = hi - lo;
        gap > 0.0 && v - lo >= gap / 3.0 && hi - v >= gap / 3.0
    };
    let transitional: Vec<bool> = (0..n)
        .map(|w| {
            if w < 1 || w + 2 > n {
                return false;
            }
            let before = &x[w.saturating_sub(3)..w];
            let after = &x[w + 1..(w + 4).min(n)];
            apart(before, after) && between(x[w], median(before), median(after))
        })
        .collect();
    // Within the runs between them, grow a level until the next window,
    // and the next three, sit at another.
    let mut segs: Vec<(usize, usize)> = Vec::new();
    let mut forced_ramp: Vec<usize> = Vec::new();
    let mut run_start = 0;
    let cuts = (0..n).filter(|&w| transitional[w]).chain([n]);
    for w in cuts {
        let (a0, a1) = (run_start, w);
        if a1 > a0 {
            let mut cur = a0;
            let mut i = a0 + 2;
            while i + 1 < a1 {
                let ahead = &x[i..(i + 3).min(a1)];
                if apart(&x[cur..i], ahead) && apart(&x[cur..i], &x[i..=i]) {
                    segs.push((cur, i));
                    cur = i;
                    i += 2;
                } else {
                    i += 1;
                }
            }
            segs.push((cur, a1));
        }
        if w < n {
            forced_ramp.push(segs.len());
            segs.push((w, w + 1));
        }
        run_start = w + 1;
    }
    // Kinds: a level whose first and last thirds differ is a ramp; so is a
    // short level lying between its neighbours (a stair of a slow ramp).
    let min_steady = 3;
    let level = |(a, b): (usize, usize)| median(&x[a..b]);
    let mut kinds: Vec<PhaseKind> = segs
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| {
            let third = ((b - a) / 3).max(1);
            if forced_ramp.contains(&k) || (b - a >= 4 && apart(&x[a..a + third], &x[b - third..b]))
            {
                PhaseKind::Ramp
            } else {
                PhaseKind::Steady
            }
        })
        .collect();
    for k in 1..segs.len().saturating_sub(1) {
        let (a, b) = segs[k];
        let (before, here, after) = (level(segs[k - 1]), level(segs[k]), level(segs[k + 1]));
        if b - a < min_steady && (before - here) * (here - after) > 0.0 {
            kinds[k] = PhaseKind::Ramp;
        }
    }
    // Consecutive ramps are one ramp.
    let mut merged: Vec<(usize, usize, PhaseKind)> = Vec::new();
    for (&(a, b), &kind) in segs.iter().zip(&kinds) {
        match merged.last_mut() {
            Some(last) if kind == PhaseKind::Ramp && last.2 == PhaseKind::Ramp => last.1 = b,
            _ => merged.push((a, b, kind)),
        }
    }
    while merged.len() > MAX_LEVELS {
        let i = (0..merged.len() - 1)
            .min_by(|&i, &j| {
                let d = |k: usize| {
                    (median(&x[merged[k].0..merged[k].1])
                        - median(&x[merged[k + 1].0..merged[k + 1].1]))
                    .abs()
                };
                d(i).total_cmp(&d(j))
            })
            .unwrap_or(0);
        merged[i].1 = merged[i + 1].1;
        merged.remove(i + 1);
    }
    merged
}

/// Splits the windows into phases.
pub(crate) fn segment(states: &[WindowState]) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < states.len() {
        match kind_of(&states[i]) {
            Some(kind) => {
                let mut j = i + 1;
                while j < states.len() && kind_of(&states[j]) == Some(kind) {
                    j += 1;
                }
                out.push(Segment {
                    start: i,
                    end: j,
                    kind,
                });
                i = j;
            }
            None => {
                let mut j = i + 1;
                while j < states.len() && kind_of(&states[j]).is_none() {
                    j += 1;
                }
                levels(states, i, j, &mut out);
                i = j;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(values: &[f64]) -> Vec<WindowState> {
        values
            .iter()
            .map(|&x| WindowState {
                in_flight: Some(x),
                requests_per_min: Some(100.0),
                ..WindowState::default()
            })
            .collect()
    }

    fn kinds(s: &[Segment]) -> Vec<(usize, usize, PhaseKind)> {
        s.iter().map(|x| (x.start, x.end, x.kind)).collect()
    }

    #[test]
    fn a_load_step_makes_two_steady_phases() {
        let s = segment(&load(&[
            7.8, 8.0, 8.0, 8.0, 8.0, 25.8, 31.2, 31.5, 31.8, 31.8,
        ]));
        assert_eq!(
            kinds(&s),
            [(0, 5, PhaseKind::Steady), (5, 10, PhaseKind::Steady)]
        );
        // A window halfway is a ramp.
        let s = segment(&load(&[
            8.0, 8.0, 8.0, 8.0, 8.0, 18.0, 31.2, 31.5, 31.8, 31.8,
        ]));
        assert_eq!(
            kinds(&s),
            [
                (0, 5, PhaseKind::Steady),
                (5, 6, PhaseKind::Ramp),
                (6, 10, PhaseKind::Steady)
            ]
        );
    }

    #[test]
    fn noise_on_light_load_is_one_phase() {
        // rag-prefill-bound: Poisson arrivals, long prompts.
        let s = segment(&load(&[2.8, 3.8, 7.0, 3.2, 5.8, 8.8, 1.8, 5.8, 7.5, 8.5]));
        assert_eq!(kinds(&s), [(0, 10, PhaseKind::Steady)]);
        // One odd window is not a step.
        let s = segment(&load(&[10.0, 10.0, 40.0, 10.0, 10.0]));
        assert_eq!(kinds(&s), [(0, 5, PhaseKind::Steady)]);
    }

    #[test]
    fn a_day_is_night_ramp_day_ramp_night() {
        let mut v: Vec<f64> = vec![1.5; 12];
        v.extend([2.5, 4.0, 6.0, 9.0, 13.0, 17.0]);
        v.extend(vec![20.0; 16]);
        v.extend([17.0, 13.0, 9.0, 6.0, 4.0, 2.5]);
        v.extend(vec![1.5; 12]);
        let got: Vec<PhaseKind> = segment(&load(&v)).iter().map(|s| s.kind).collect();
        assert_eq!(
            got,
            [
                PhaseKind::Steady,
                PhaseKind::Ramp,
                PhaseKind::Steady,
                PhaseKind::Ramp,
                PhaseKind::Steady
            ],
            "{:?}",
            kinds(&segment(&load(&v)))
        );
    }

    #[test]
    fn restarts_bursts_and_idle_interrupt() {
        let mut st = load(&[13.0, 13.0, 13.0, 13.0, 12.0, 13.0, 12.0, 13.0, 0.0, 0.0]);
        st[4].restart = true;
        st[5].restart = true;
        st[8].requests_per_min = Some(0.0);
        st[9].requests_per_min = Some(0.0);
        assert_eq!(
            kinds(&segment(&st)),
            [
                (0, 4, PhaseKind::Steady),
                (4, 6, PhaseKind::Restart),
                (6, 8, PhaseKind::Steady),
                (8, 10, PhaseKind::Idle)
            ]
        );
        let mut st = load(&[16.0; 6]);
        st[2].burst = true;
        st[3].burst = true;
        assert_eq!(
            kinds(&segment(&st)),
            [
                (0, 2, PhaseKind::Steady),
                (2, 4, PhaseKind::Burst),
                (4, 6, PhaseKind::Steady)
            ]
        );
    }

    #[test]
    fn differs_needs_factor_and_significance() {
        assert!(differs(8.0, 32.0));
        assert!(!differs(3.8, 8.5));
        assert!(!differs(100.0, 140.0));
        assert!(differs(100.0, 160.0));
        assert!(!differs(0.0, 0.0));
    }
}
