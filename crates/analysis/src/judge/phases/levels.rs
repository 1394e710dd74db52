//! Load levels over a run of ordinary windows: where the load steps, and
//! which stretches are plateaus (steady) or transitions (ramps).
//!
//! The load is read two ways per window: requests in flight (the mean of
//! running + waiting over the window's scrapes) and finished requests per
//! minute. A closed-loop load moves both; an open-loop load near
//! saturation holds its rate while the queue breathes. Each measure has a
//! noise per window: in flight, the standard error of the window's mean
//! from its own scrapes; per minute, a Poisson count's.
//!
//! Windows start as one segment each; the two neighbouring segments that
//! differ least are merged until every pair of neighbours differs. Two
//! segments differ when, on either measure, the larger is at least
//! [`LOAD_STEP_FACTOR`] × the smaller *and* the gap is at least
//! [`LOAD_STEP_SIGMAS`] standard errors of the difference of their means.
//!
//! A level shorter than a plateau that differs from its neighbours in
//! flight only, at the same rate, is the queue breathing under a steady
//! arrival rate: its closer neighbour absorbs it (not a lower level at the
//! capture's edges, where the load starts or ends).
//!
//! Then: a window at either side of a step that lies a third of the gap or
//! more from both levels is a ramp window; a level whose first and last
//! thirds differ is a ramp; a level shorter than a plateau (two minutes)
//! lying between its neighbours is a ramp (a stair of a slow ramp), one
//! standing above or below two neighbours that do not differ from each
//! other is a blip of the level around it, and otherwise it stands (a
//! short level is still a level: the peak of a short test); a short level
//! at an edge of the capture (or next to idle time) that lies between its
//! neighbour and no load is the load winding up or down. Consecutive ramps
//! are one ramp.

use crate::ids::PhaseKind;
use crate::measure::thresholds::{LOAD_STEP_FACTOR, LOAD_STEP_SIGMAS, PLATEAU_MS};

/// Most load levels one run is split into (a week of diurnal load stays
/// readable).
const MAX_LEVELS: usize = 24;
/// Most units read one by one; longer runs are read in blocks of windows
/// (a day of 1-minute windows in half-hour blocks).
const MAX_UNITS: usize = 60;

/// One measure of one unit: its value and the variance of that value.
#[derive(Clone, Copy, Debug)]
struct Obs {
    value: f64,
    var: f64,
}

/// One window's load, as [`levels`] reads it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Load {
    /// Mean requests in flight.
    pub in_flight: Option<f64>,
    /// Its standard error from the window's scrapes.
    pub in_flight_se: Option<f64>,
    /// Finished requests per minute.
    pub per_min: Option<f64>,
    /// Its standard error (a Poisson count's).
    pub per_min_se: Option<f64>,
}

/// A segment under construction: units `[a, b)` and each measure's mean
/// and the variance of that mean.
#[derive(Clone, Copy, Debug)]
struct Seg {
    a: usize,
    b: usize,
    m: [Option<Obs>; 2],
}

fn mean_of(units: &[[Option<Obs>; 2]], a: usize, b: usize, k: usize) -> Option<Obs> {
    let xs: Vec<Obs> = units[a..b].iter().filter_map(|u| u[k]).collect();
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    Some(Obs {
        value: xs.iter().map(|o| o.value).sum::<f64>() / n,
        var: xs.iter().map(|o| o.var).sum::<f64>() / (n * n),
    })
}

fn seg(units: &[[Option<Obs>; 2]], a: usize, b: usize) -> Seg {
    Seg {
        a,
        b,
        m: [mean_of(units, a, b, 0), mean_of(units, a, b, 1)],
    }
}

/// How far apart two means are, in standard errors, when their ratio
/// reaches the step factor; 0 when it does not.
fn gap(x: Obs, y: Obs) -> f64 {
    let (lo, hi) = (x.value.min(y.value), x.value.max(y.value));
    if hi <= 0.0 || (lo > 0.0 && hi / lo < LOAD_STEP_FACTOR) {
        return 0.0;
    }
    let sd = (x.var + y.var).sqrt();
    if sd > 0.0 {
        (hi - lo) / sd
    } else {
        f64::INFINITY
    }
}

/// The larger gap over both measures.
fn distance(x: &Seg, y: &Seg) -> f64 {
    (0..2)
        .filter_map(|k| Some(gap(x.m[k]?, y.m[k]?)))
        .fold(0.0, f64::max)
}

fn differ(x: &Seg, y: &Seg) -> bool {
    distance(x, y) >= LOAD_STEP_SIGMAS
}

/// The measure on which two segments differ most, if any.
fn measure(x: &Seg, y: &Seg) -> Option<usize> {
    (0..2)
        .filter_map(|k| Some((k, gap(x.m[k]?, y.m[k]?))))
        .filter(|(_, g)| *g >= LOAD_STEP_SIGMAS)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, _)| k)
}

/// Units (windows, or blocks of them) with each measure's value and noise.
fn units(load: &[Load], block: usize) -> Vec<[Option<Obs>; 2]> {
    load.chunks(block)
        .map(|c| {
            let one = |v: fn(&Load) -> Option<f64>, se: fn(&Load) -> Option<f64>| {
                let xs: Vec<(f64, f64)> = c
                    .iter()
                    .filter_map(|l| {
                        let x = v(l)?;
                        // Without scrapes to tell, a Poisson count's noise.
                        Some((x, se(l).map_or(x.max(1.0), |s| s * s)))
                    })
                    .collect();
                (!xs.is_empty()).then(|| {
                    let n = xs.len() as f64;
                    Obs {
                        value: xs.iter().map(|p| p.0).sum::<f64>() / n,
                        var: xs.iter().map(|p| p.1).sum::<f64>() / (n * n),
                    }
                })
            };
            [
                one(|l| l.in_flight, |l| l.in_flight_se),
                one(|l| l.per_min, |l| l.per_min_se),
            ]
        })
        .collect()
}

/// Levels and ramps over a run of windows, as `[a, b)` window ranges;
/// `window_ms` sets how many windows make a plateau.
/// `edges`: whether the run begins and ends where the load does (the
/// capture's edges, or idle time).
pub(crate) fn levels(
    load: &[Load],
    window_ms: i64,
    edges: (bool, bool),
) -> Vec<(usize, usize, PhaseKind)> {
    let n = load.len();
    if n == 0 {
        return Vec::new();
    }
    let block = n.div_ceil(MAX_UNITS).max(1);
    let u = units(load, block);
    let plateau = ((PLATEAU_MS as f64 / (window_ms as f64 * block as f64)).ceil() as usize).max(1);
    let mut segs: Vec<Seg> = (0..u.len()).map(|i| seg(&u, i, i + 1)).collect();
    merge_close(&u, &mut segs);
    absorb_breathing(&u, &mut segs, plateau, edges);
    let mut kinds = split_transitions(&u, &mut segs);
    classify(&u, &mut segs, &mut kinds, plateau, edges);
    // Consecutive ramps are one ramp.
    let mut out: Vec<(usize, usize, PhaseKind)> = Vec::new();
    for (s, k) in segs.iter().zip(&kinds) {
        match out.last_mut() {
            Some(last) if *k == PhaseKind::Ramp && last.2 == PhaseKind::Ramp => last.1 = s.b,
            _ => out.push((s.a, s.b, *k)),
        }
    }
    while out.len() > MAX_LEVELS {
        let d = |x: &(usize, usize, PhaseKind), y: &(usize, usize, PhaseKind)| {
            distance(&seg(&u, x.0, x.1), &seg(&u, y.0, y.1))
        };
        let i = (0..out.len() - 1)
            .min_by(|&i, &j| d(&out[i], &out[i + 1]).total_cmp(&d(&out[j], &out[j + 1])))
            .unwrap_or(0);
        out[i].1 = out[i + 1].1;
        out.remove(i + 1);
    }
    out.into_iter()
        .map(|(a, b, k)| (a * block, (b * block).min(n), k))
        .collect()
}

/// Merges the closest neighbours until every pair differs.
fn merge_close(u: &[[Option<Obs>; 2]], segs: &mut Vec<Seg>) {
    while segs.len() > 1 {
        let (i, d) = (0..segs.len() - 1)
            .map(|i| (i, distance(&segs[i], &segs[i + 1])))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("two segments");
        if d >= LOAD_STEP_SIGMAS {
            break;
        }
        segs[i] = seg(u, segs[i].a, segs[i + 1].b);
        segs.remove(i + 1);
    }
}

/// A level shorter than a plateau that differs from its neighbours in
/// flight only, at the same rate, is the queue breathing under a steady
/// load: the closer neighbour absorbs it (then neighbours are merged again).
fn absorb_breathing(
    u: &[[Option<Obs>; 2]],
    segs: &mut Vec<Seg>,
    plateau: usize,
    edges: (bool, bool),
) {
    let rate_differs = |x: &Seg, y: &Seg| match (x.m[1], y.m[1]) {
        (Some(a), Some(b)) => gap(a, b) >= LOAD_STEP_SIGMAS,
        _ => false,
    };
    loop {
        let found = (0..segs.len()).find_map(|i| {
            let s = segs[i];
            // At the capture's edges a level below its neighbour is the load
            // starting or ending: not breathing.
            let neighbour = if i == 0 { segs.get(1) } else { segs.get(i - 1) };
            let lower = neighbour
                .is_some_and(|o| s.m[0].zip(o.m[0]).is_some_and(|(x, y)| x.value < y.value));
            let at_edge = ((i == 0 && edges.0) || (i + 1 == segs.len() && edges.1)) && lower;
            if s.b - s.a >= plateau || at_edge {
                return None;
            }
            let near = [i.checked_sub(1), (i + 1 < segs.len()).then_some(i + 1)]
                .into_iter()
                .flatten()
                .filter(|&j| !rate_differs(&s, &segs[j]))
                .min_by(|&x, &y| distance(&s, &segs[x]).total_cmp(&distance(&s, &segs[y])))?;
            Some((i, near))
        });
        let Some((i, j)) = found else { break };
        let (lo, hi) = (i.min(j), i.max(j));
        segs[lo] = seg(u, segs[lo].a, segs[hi].b);
        segs.remove(hi);
        merge_close(u, segs);
    }
}

/// True when unit `w` lies a third of the gap or more from both levels on
/// the measure `k`.
fn between(u: &[[Option<Obs>; 2]], w: usize, x: &Seg, y: &Seg, k: usize) -> bool {
    let (Some(v), Some(p), Some(q)) = (u[w][k], x.m[k], y.m[k]) else {
        return false;
    };
    let (lo, hi) = (p.value.min(q.value), p.value.max(q.value));
    let third = (hi - lo) / 3.0;
    third > 0.0 && v.value - lo >= third && hi - v.value >= third
}

/// True when unit `w` lies between two levels (a third of the gap or more
/// from each) on a measure they differ on.
fn transitional(u: &[[Option<Obs>; 2]], w: usize, x: &Seg, y: &Seg) -> bool {
    (0..2).any(|k| {
        matches!((x.m[k], y.m[k]), (Some(a), Some(b)) if gap(a, b) >= LOAD_STEP_SIGMAS)
            && between(u, w, x, y, k)
    })
}

/// Splits off the window on either side of each step that lies between the
/// two levels; those are ramps.
fn split_transitions(u: &[[Option<Obs>; 2]], segs: &mut Vec<Seg>) -> Vec<PhaseKind> {
    let mut out: Vec<Seg> = Vec::new();
    let mut kinds: Vec<PhaseKind> = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let mut s = segs[i];
        // The first unit, against the level before.
        if let Some(prev) = out.last().copied()
            && s.b - s.a >= 2
            && transitional(u, s.a, &prev, &s)
        {
            out.push(seg(u, s.a, s.a + 1));
            kinds.push(PhaseKind::Ramp);
            s = seg(u, s.a + 1, s.b);
        }
        // The last unit, against the level after.
        if let Some(next) = segs.get(i + 1)
            && s.b - s.a >= 2
            && transitional(u, s.b - 1, &s, next)
        {
            out.push(seg(u, s.a, s.b - 1));
            kinds.push(PhaseKind::Steady);
            out.push(seg(u, s.b - 1, s.b));
            kinds.push(PhaseKind::Ramp);
        } else {
            out.push(s);
            kinds.push(PhaseKind::Steady);
        }
        i += 1;
    }
    *segs = out;
    kinds
}

/// Ramps within levels, stairs, blips and edges (see the module docs).
fn classify(
    u: &[[Option<Obs>; 2]],
    segs: &mut Vec<Seg>,
    kinds: &mut Vec<PhaseKind>,
    plateau: usize,
    edges: (bool, bool),
) {
    // A level whose first and last thirds differ.
    for (s, k) in segs.iter().zip(kinds.iter_mut()) {
        let len = s.b - s.a;
        if *k == PhaseKind::Steady && len >= 4 {
            let third = (len / 3).max(1);
            if differ(&seg(u, s.a, s.a + third), &seg(u, s.b - third, s.b)) {
                *k = PhaseKind::Ramp;
            }
        }
    }
    // The level around it absorbs a blip: a short level standing above or
    // below two steady neighbours that do not differ from each other.
    let mut i = 1;
    while i + 1 < segs.len() {
        let (p, s, q) = (segs[i - 1], segs[i], segs[i + 1]);
        let k = level_measure(&p, &s, &q);
        let at = |x: &Seg| x.m[k].map_or(0.0, |o| o.value);
        if kinds[i] == PhaseKind::Steady
            && s.b - s.a < plateau
            && (at(&p) - at(&s)) * (at(&s) - at(&q)) <= 0.0
            && kinds[i - 1] == PhaseKind::Steady
            && kinds[i + 1] == PhaseKind::Steady
            && !differ(&p, &q)
        {
            segs[i - 1] = seg(u, p.a, q.b);
            segs.drain(i..=i + 1);
            kinds.drain(i..=i + 1);
            i = i.saturating_sub(1).max(1);
        } else {
            i += 1;
        }
    }
    // Stairs: a short level between its neighbours. At an edge of the
    // capture (or next to idle time), a short level between its neighbour
    // and no load is the load winding up or down.
    let n = segs.len();
    for i in 0..n {
        let s = segs[i];
        if kinds[i] != PhaseKind::Steady || s.b - s.a >= plateau {
            continue;
        }
        let (prev, next) = (i.checked_sub(1).map(|j| segs[j]), segs.get(i + 1).copied());
        match (prev, next) {
            (Some(p), Some(q)) => {
                let k = level_measure(&p, &s, &q);
                let at = |x: &Seg| x.m[k].map_or(0.0, |o| o.value);
                if (at(&p) - at(&s)) * (at(&s) - at(&q)) > 0.0 {
                    kinds[i] = PhaseKind::Ramp;
                }
            }
            (None, Some(o)) | (Some(o), None) => {
                let edge = if i == 0 { edges.0 } else { edges.1 };
                let k = measure(&s, &o).unwrap_or(if s.m[0].is_some() { 0 } else { 1 });
                let at = |x: &Seg| x.m[k].map_or(0.0, |o| o.value);
                if edge && at(&s) < at(&o) {
                    kinds[i] = PhaseKind::Ramp;
                }
            }
            (None, None) => {}
        }
    }
}

/// One measure for a level and its two neighbours: the one it differs on
/// most from either.
fn level_measure(p: &Seg, s: &Seg, q: &Seg) -> usize {
    measure(p, s)
        .or_else(|| measure(s, q))
        .unwrap_or(if s.m[0].is_some() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closed-loop windows: in flight with a small standard error, the rate
    /// proportional.
    fn closed(values: &[f64]) -> Vec<Load> {
        values
            .iter()
            .map(|&x| Load {
                in_flight: Some(x),
                in_flight_se: Some(0.3),
                per_min: Some(x * 30.0),
                per_min_se: Some((x * 30.0).max(1.0).sqrt()),
            })
            .collect()
    }

    /// In flight only, with a Poisson count's noise (no scrapes to tell).
    fn poisson(values: &[f64]) -> Vec<Load> {
        values
            .iter()
            .map(|&x| Load {
                in_flight: Some(x),
                ..Load::default()
            })
            .collect()
    }

    fn kinds(v: &[(usize, usize, PhaseKind)]) -> Vec<PhaseKind> {
        v.iter().map(|x| x.2).collect()
    }

    use PhaseKind::{Ramp, Steady};

    #[test]
    fn a_step_makes_two_levels_and_a_window_halfway_is_a_ramp() {
        let l = closed(&[7.8, 8.0, 8.0, 8.0, 8.0, 25.8, 31.2, 31.5, 31.8, 31.8]);
        assert_eq!(
            levels(&l, 60_000, (true, true)),
            [(0, 5, Steady), (5, 10, Steady)],
            "25.8 is within a factor 1.5 of 31"
        );
        let l = closed(&[8.0, 8.0, 8.0, 8.0, 8.0, 18.0, 31.2, 31.5, 31.8, 31.8]);
        assert_eq!(
            levels(&l, 60_000, (true, true)),
            [(0, 5, Steady), (5, 6, Ramp), (6, 10, Steady)]
        );
    }

    #[test]
    fn plateaus_of_a_closed_loop_test_are_each_a_level() {
        // 2 → 8 → 24 → 6 users, two minutes each.
        let l = closed(&[2.0, 2.0, 8.0, 8.0, 24.0, 24.0, 6.0, 6.0]);
        assert_eq!(
            levels(&l, 60_000, (true, true)),
            [
                (0, 2, Steady),
                (2, 4, Steady),
                (4, 6, Steady),
                (6, 8, Steady)
            ]
        );
        // A 32-user plateau, then 8.
        let l = closed(&[31.0, 32.0, 32.0, 8.0, 8.0, 8.0]);
        assert_eq!(
            levels(&l, 60_000, (true, true)),
            [(0, 3, Steady), (3, 6, Steady)]
        );
    }

    #[test]
    fn noise_on_light_open_loop_load_is_one_level() {
        // rag-prefill-bound: the rate holds, the queue breathes.
        let inf = [2.8, 4.2, 7.5, 3.5, 6.0, 9.8, 1.8, 5.8, 8.5, 9.8];
        let se = [0.48, 1.38, 3.84, 1.19, 1.35, 1.6, 0.75, 3.3, 4.56, 5.19];
        let rate = [
            95.0, 85.0, 106.0, 83.0, 89.0, 101.0, 95.0, 76.0, 109.0, 86.0,
        ];
        let l: Vec<Load> = (0..10)
            .map(|i| Load {
                in_flight: Some(inf[i]),
                in_flight_se: Some(se[i]),
                per_min: Some(rate[i]),
                per_min_se: Some(rate[i].sqrt()),
            })
            .collect();
        assert_eq!(kinds(&levels(&l, 60_000, (true, true))), [Steady]);
        // One odd window without scrapes to tell is not a level.
        assert_eq!(
            kinds(&levels(
                &poisson(&[10.0, 10.0, 40.0, 10.0, 10.0]),
                60_000,
                (true, true)
            )),
            [Steady]
        );
    }

    #[test]
    fn a_day_is_night_ramp_day_ramp_night() {
        let mut v: Vec<f64> = vec![1.5; 12];
        v.extend([2.5, 4.0, 6.0, 9.0, 13.0, 17.0]);
        v.extend(vec![20.0; 16]);
        v.extend([17.0, 13.0, 9.0, 6.0, 4.0, 2.5]);
        v.extend(vec![1.5; 12]);
        assert_eq!(
            kinds(&levels(&closed(&v), 60_000, (true, true))),
            [Steady, Ramp, Steady, Ramp, Steady],
            "{:?}",
            levels(&closed(&v), 60_000, (true, true))
        );
    }

    #[test]
    fn a_short_peak_between_ramps_stands() {
        // 2 → 8 → 24 → 6 users one minute each, windows off the clock: the
        // 24-user minute is the peak of the test.
        let l = closed(&[2.9, 13.7, 20.8, 6.8]);
        let got = levels(&l, 60_000, (true, true));
        assert!(
            got.iter().any(|&(a, b, k)| (a, b, k) == (2, 3, Steady)),
            "{got:?}"
        );
    }
}
