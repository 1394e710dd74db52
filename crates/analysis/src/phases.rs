//! The capture split into phases: restarts and down time, error bursts,
//! idle stretches, a process's warm-up, and load levels (steady stretches
//! and the ramps between them). Whole-capture figures blend phases; the
//! report gives each phase its own figures.
//!
//! Load is the mean number of requests in flight (running + waiting) per
//! window, fleet-wide. Two levels differ when the larger is at least
//! [`LOAD_STEP_FACTOR`] × the smaller *and* the gap is at least
//! [`LOAD_STEP_SIGMAS`] standard deviations of a Poisson count at the
//! larger level, so the noise of light open-loop load is not read as a
//! step. A change must hold for two windows (one odd window is noise),
//! except at the end of the capture. A window between two levels that
//! differs from both is a ramp.

use crate::ids::PhaseKind;
use crate::thresholds::{IDLE_IN_FLIGHT, LOAD_STEP_FACTOR, LOAD_STEP_SIGMAS};

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

/// Load levels over a run of ordinary windows `[start, end)`.
fn levels(states: &[WindowState], start: usize, end: usize, out: &mut Vec<Segment>) {
    let load = |i: usize| states[i].in_flight;
    let mut segs: Vec<(usize, usize)> = Vec::new();
    let mut cur = start;
    let mut i = start + 1;
    while i < end {
        let seg: Vec<f64> = (cur..i).filter_map(load).collect();
        let m = median(&seg);
        let step_here = |j: usize| load(j).is_some_and(|x| !seg.is_empty() && differs(m, x));
        let side = |j: usize| load(j).map(|x| x > m);
        if step_here(i) && i + 1 < end && step_here(i + 1) && side(i) == side(i + 1) {
            segs.push((cur, i));
            cur = i;
        }
        i += 1;
    }
    segs.push((cur, end));
    // A boundary window between two levels, a third of the gap or more
    // away from each, is a ramp.
    let level = |a: usize, b: usize| median(&(a..b).filter_map(load).collect::<Vec<_>>());
    let between = |x: f64, la: f64, lb: f64| {
        let (lo, hi) = (la.min(lb), la.max(lb));
        let gap = hi - lo;
        gap > 0.0 && x - lo >= gap / 3.0 && hi - x >= gap / 3.0
    };
    let mut ramps: Vec<usize> = Vec::new();
    for k in 0..segs.len().saturating_sub(1) {
        let (a0, a1) = segs[k];
        let (b0, b1) = segs[k + 1];
        if let Some(x) = load(b0)
            && b1 - b0 >= 2
            && between(x, level(a0, a1), level(b0 + 1, b1))
        {
            ramps.push(b0);
        } else if let Some(x) = load(a1 - 1)
            && a1 - a0 >= 2
            && between(x, level(a0, a1 - 1), level(b0, b1))
        {
            ramps.push(a1 - 1);
        }
    }
    let mut w = start;
    for (a, b) in segs {
        let mut from = a;
        while from < b {
            if ramps.contains(&from) {
                out.push(Segment {
                    start: from,
                    end: from + 1,
                    kind: PhaseKind::Ramp,
                });
                from += 1;
                continue;
            }
            let mut to = from + 1;
            while to < b && !ramps.contains(&to) {
                to += 1;
            }
            out.push(Segment {
                start: from,
                end: to,
                kind: PhaseKind::Steady,
            });
            from = to;
        }
        w = b;
    }
    debug_assert_eq!(w, end);
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
