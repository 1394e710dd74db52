//! Reset-aware counter increases, attributed to windows.
//!
//! An *interval* is two consecutive points of a series. Its increase is the
//! difference of the two values, or, when the counter was reset in between,
//! the later value (the counter restarted from zero), as Prometheus'
//! `increase()` counts it. A reset is a drop in value, or a reset the caller
//! knows of from elsewhere (a changed `_created` or
//! `process_start_time_seconds`), passed as `forced` times.
//!
//! Each interval is attributed to the window that holds its later point.
//! Intervals longer than [`CounterRules::max_bridge_ms`] are *gaps*: their
//! increase is real but belongs to no single window, so it is kept apart
//! ([`CounterPath::unattributed`]) and the gap is recorded, never spread or
//! bridged silently.

use crate::grid::Grid;

/// How intervals become window increases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterRules {
    /// The target's usual scrape interval, ms.
    pub nominal_ms: i64,
    /// The longest interval attributed to a window, ms (default 2.5 ×
    /// nominal: one missed scrape is bridged and counted as such, two are a
    /// gap).
    pub max_bridge_ms: i64,
}

impl CounterRules {
    /// Rules for a target scraped every `nominal_ms`.
    pub fn for_interval(nominal_ms: i64) -> CounterRules {
        let nominal_ms = nominal_ms.max(1);
        CounterRules {
            nominal_ms,
            max_bridge_ms: nominal_ms * 5 / 2,
        }
    }

    /// True for an interval longer than 1.5 × nominal (a scrape is missing).
    pub fn is_long(&self, dt_ms: i64) -> bool {
        dt_ms * 2 > self.nominal_ms * 3
    }
}

/// What one window got from one series (or a sum of series).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WindowIncrease {
    /// Sum of the increases of the intervals ending in the window.
    pub increase: f64,
    /// Sum of those intervals' lengths, ms: the time the increase covers.
    pub covered_ms: i64,
    /// Intervals counted.
    pub intervals: u32,
    /// Intervals across which the counter was reset.
    pub resets: u32,
    /// Intervals longer than 1.5 × nominal that were still counted.
    pub bridged: u32,
    /// Increase per second over the covered time (for a sum of series: the
    /// sum of each series' own rate).
    pub per_sec: f64,
}

impl WindowIncrease {
    /// Increase per second over the covered time; `None` when nothing was
    /// covered.
    pub fn rate(&self) -> Option<f64> {
        (self.covered_ms > 0).then_some(self.per_sec)
    }

    /// Adds another series' window (for sums over series): increases and
    /// rates add up, the covered time is the longest of the two.
    pub fn add(&mut self, other: &WindowIncrease) {
        self.increase += other.increase;
        self.per_sec += other.per_sec;
        self.covered_ms = self.covered_ms.max(other.covered_ms);
        self.intervals += other.intervals;
        self.resets += other.resets;
        self.bridged += other.bridged;
    }
}

/// A counter series read through a grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterPath {
    /// Per window; `None` where no interval ended in the window.
    pub windows: Vec<Option<WindowIncrease>>,
    /// Reset-aware increase over every interval, gaps included.
    pub total: f64,
    /// Increase over gaps (intervals longer than the bridge limit) and over
    /// intervals ending outside the grid.
    pub unattributed: f64,
    /// `(from, to)` of every gap, ms.
    pub gaps: Vec<(i64, i64)>,
    /// Times (the later point) of every detected reset, ms.
    pub resets: Vec<i64>,
    /// Points skipped because their value was NaN or infinite.
    pub skipped_points: u32,
}

/// Times of the points at which a series dropped (a reset by value).
pub fn drops(times: &[i64], values: &[f64]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut prev: Option<f64> = None;
    for (&t, &v) in times.iter().zip(values) {
        if !v.is_finite() {
            continue;
        }
        if let Some(p) = prev
            && v < p
        {
            out.push(t);
        }
        prev = Some(v);
    }
    out
}

/// Resets known from outside the series' own values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownResets {
    /// Times (sorted) at which a reset was seen: an interval `(a, b]`
    /// containing one is a reset whatever the values say.
    pub seen: Vec<i64>,
    /// When each new process started (sorted), ms: the value of its
    /// `process_start_time_seconds` or `_created`. A reset interval too long
    /// to bridge (the server was down) still belongs to the window of its
    /// later point when the new process started inside that window: the new
    /// value is what it counted from zero since.
    pub started: Vec<i64>,
}

impl KnownResets {
    /// Resets seen at these times, start times unknown.
    pub fn seen(seen: &[i64]) -> KnownResets {
        KnownResets {
            seen: seen.to_vec(),
            started: Vec::new(),
        }
    }
}

/// Reads one counter series through `grid`.
///
/// `known` lists the resets known from elsewhere (see [`KnownResets`]).
/// `born_after` is the time of the target's scrape before the series' first
/// point, when the series appeared mid-capture: it was created at zero after
/// that scrape, so its first value is an increase over the interval from
/// there.
pub fn increases(
    times: &[i64],
    values: &[f64],
    grid: &Grid,
    rules: &CounterRules,
    known: &KnownResets,
    born_after: Option<i64>,
) -> CounterPath {
    let forced = &known.seen;
    let mut path = CounterPath {
        windows: vec![None; grid.count],
        ..CounterPath::default()
    };
    let mut prev: Option<(i64, f64)> = born_after.map(|t| (t, 0.0));
    for (&t, &v) in times.iter().zip(values) {
        if !v.is_finite() {
            path.skipped_points += 1;
            continue;
        }
        let Some((pt, pv)) = prev else {
            prev = Some((t, v));
            continue;
        };
        prev = Some((t, v));
        if t <= pt {
            continue;
        }
        let forced_reset = {
            let i = forced.partition_point(|&r| r <= pt);
            forced.get(i).is_some_and(|&r| r <= t)
        };
        let reset = v < pv || forced_reset;
        let inc = if reset { v } else { v - pv };
        if reset {
            path.resets.push(t);
        }
        path.total += inc;
        let mut dt = t - pt;
        let window = if dt > rules.max_bridge_ms {
            path.gaps.push((pt, t));
            // A restart across the gap: the new process counted `v` from
            // zero since it started; when that lies in the window of `t`,
            // the window holds all of it.
            // The latest start known before `t`: a counter's `_created`
            // (made when the engine was ready) is later, so tighter, than
            // its process's `process_start_time_seconds`.
            let start = reset
                .then(|| {
                    let i = known.started.partition_point(|&s| s <= t);
                    known.started[..i].last().copied().filter(|&s| s > pt)
                })
                .flatten();
            match (start, grid.index(t)) {
                (Some(s), Some(w)) if grid.index(s) == Some(w) => {
                    dt = t - s;
                    Some(w)
                }
                _ => None,
            }
        } else {
            grid.index(t)
        };
        match window {
            Some(w) => {
                let slot = path.windows[w].get_or_insert_with(WindowIncrease::default);
                slot.increase += inc;
                slot.covered_ms += dt;
                slot.intervals += 1;
                slot.resets += u32::from(reset);
                slot.bridged += u32::from(rules.is_long(dt));
            }
            None => path.unattributed += inc,
        }
    }
    for w in path.windows.iter_mut().flatten() {
        if w.covered_ms > 0 {
            w.per_sec = w.increase / (w.covered_ms as f64 / 1000.0);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid::covering(60_000, 0, 179_999).unwrap()
    }

    #[test]
    fn plain_increases_fall_in_the_window_of_the_later_point() {
        let t: Vec<i64> = (0..12).map(|i| i * 15_000).collect();
        let v: Vec<f64> = (0..12).map(|i| (i * 10) as f64).collect();
        let p = increases(
            &t,
            &v,
            &grid(),
            &CounterRules::for_interval(15_000),
            &KnownResets::default(),
            None,
        );
        let w0 = p.windows[0].unwrap();
        assert_eq!(
            (w0.increase, w0.covered_ms, w0.intervals),
            (30.0, 45_000, 3)
        );
        let w1 = p.windows[1].unwrap();
        assert_eq!(
            (w1.increase, w1.covered_ms, w1.intervals),
            (40.0, 60_000, 4)
        );
        assert_eq!(w1.rate(), Some(40.0 / 60.0));
        assert_eq!(p.total, 110.0);
        assert!(p.windows[2].is_some());
    }

    #[test]
    fn a_drop_is_a_reset_and_counts_the_new_value() {
        let t = [0, 15_000, 30_000, 45_000];
        let v = [100.0, 110.0, 4.0, 9.0];
        let p = increases(
            &t,
            &v,
            &grid(),
            &CounterRules::for_interval(15_000),
            &KnownResets::default(),
            None,
        );
        assert_eq!(p.total, 10.0 + 4.0 + 5.0);
        assert_eq!(p.resets, vec![30_000]);
        assert_eq!(p.windows[0].unwrap().resets, 1);
    }

    #[test]
    fn a_known_restart_resets_even_without_a_drop() {
        let t = [0, 15_000, 30_000];
        let v = [5.0, 7.0, 9.0];
        let p = increases(
            &t,
            &v,
            &grid(),
            &CounterRules::for_interval(15_000),
            &KnownResets::seen(&[30_000]),
            None,
        );
        assert_eq!(p.total, 2.0 + 9.0);
    }

    /// The server was down from 15 s to 75 s; the new process started at
    /// 65 s, inside the window of its first scrape (60–120 s): its first
    /// value belongs to that window, counted from zero, over 10 s. Started
    /// before the window, the same value is left unattributed.
    #[test]
    fn a_restart_across_a_gap_counts_from_the_new_start() {
        let t = [0, 15_000, 75_000, 90_000];
        let v = [5.0, 7.0, 4.0, 6.0];
        let rules = CounterRules::for_interval(15_000);
        let known = KnownResets {
            seen: vec![75_000],
            started: vec![65_000],
        };
        let p = increases(&t, &v, &grid(), &rules, &known, None);
        let w1 = p.windows[1].unwrap();
        assert_eq!(
            (w1.increase, w1.resets, w1.covered_ms),
            (4.0 + 2.0, 1, 10_000 + 15_000)
        );
        assert_eq!(p.unattributed, 0.0);
        let early = KnownResets {
            seen: vec![75_000],
            started: vec![50_000],
        };
        let p = increases(&t, &v, &grid(), &rules, &early, None);
        assert_eq!(p.windows[1].unwrap().increase, 2.0);
        assert_eq!(p.unattributed, 4.0);
        // Unknown start (a drop only): unattributed, as before.
        let p = increases(&t, &v, &grid(), &rules, &KnownResets::seen(&[]), None);
        assert_eq!(p.unattributed, 4.0);
    }

    #[test]
    fn gaps_are_kept_apart_and_one_missed_scrape_is_bridged() {
        // 0, 15, [30 missed], 45, then nothing until 150.
        let t = [0, 15_000, 45_000, 150_000, 165_000];
        let v = [0.0, 1.0, 3.0, 10.0, 11.0];
        let p = increases(
            &t,
            &v,
            &grid(),
            &CounterRules::for_interval(15_000),
            &KnownResets::default(),
            None,
        );
        let w0 = p.windows[0].unwrap();
        assert_eq!((w0.increase, w0.bridged, w0.covered_ms), (3.0, 1, 45_000));
        assert_eq!(p.gaps, vec![(45_000, 150_000)]);
        assert_eq!(p.unattributed, 7.0);
        assert_eq!(p.windows[2].unwrap().increase, 1.0);
        assert!(p.windows[1].is_none());
    }

    #[test]
    fn a_series_born_mid_capture_counts_from_zero() {
        let t = [30_000, 45_000];
        let v = [3.0, 4.0];
        let p = increases(
            &t,
            &v,
            &grid(),
            &CounterRules::for_interval(15_000),
            &KnownResets::default(),
            Some(15_000),
        );
        assert_eq!(p.windows[0].unwrap().increase, 4.0);
    }

    #[test]
    fn non_finite_points_are_skipped() {
        let t = [0, 15_000, 30_000];
        let v = [1.0, f64::NAN, 4.0];
        let p = increases(
            &t,
            &v,
            &grid(),
            &CounterRules::for_interval(15_000),
            &KnownResets::default(),
            None,
        );
        assert_eq!((p.total, p.skipped_points), (3.0, 1));
        assert_eq!(drops(&t, &[5.0, 2.0, 3.0]), vec![15_000]);
    }
}
