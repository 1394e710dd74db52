//! The capture split into phases: restarts and down time, error bursts,
//! idle stretches, a process's warm-up, and load levels (steady stretches
//! and the ramps between them). Whole-capture figures blend phases; the
//! report gives each phase its own figures.
//!
//! Restarts, down time, bursts, warm-up and idle windows are phases of
//! their own; the runs of ordinary windows between them are split into
//! load levels and ramps by [`levels`] (in flight and finished per minute,
//! each against its own noise).

use vllm_lens_catalog::{Catalogue, Signal};
use vllm_lens_query::Query;
use vllm_lens_store::{Store, TargetId};

use crate::Settings;
use crate::ids::PhaseKind;
use crate::judge::bursts::Burst;
use crate::judge::events::RestartInfo;
use crate::measure::inputs::{gpu_over_time, over_time};
use crate::measure::scopes::Fleet;
use crate::measure::scopes::FleetWindow;
use crate::measure::thresholds::{IDLE_IN_FLIGHT, LOAD_STEP_FACTOR, LOAD_STEP_SIGMAS};
use crate::model::Phase;
use crate::text::round;

mod describe;
pub(crate) mod gauges;
mod levels;
mod state;
mod trend;
use crate::measure::{queue, rows};
pub(crate) use state::WindowState;

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
fn levels_of(
    states: &[WindowState],
    start: usize,
    end: usize,
    window_ms: i64,
    out: &mut Vec<Segment>,
) {
    let load: Vec<levels::Load> = states[start..end]
        .iter()
        .map(|s| levels::Load {
            in_flight: s.in_flight,
            in_flight_se: s.in_flight_se,
            per_min: s.requests_per_min,
            per_min_se: s.requests_per_min_se,
        })
        .collect();
    let idle = |w: usize| {
        states
            .get(w)
            .is_some_and(|s| kind_of(s) == Some(PhaseKind::Idle))
    };
    let edges = (
        start == 0 || idle(start - 1),
        end == states.len() || idle(end),
    );
    for (a, b, kind) in levels::levels(&load, window_ms, edges) {
        out.push(Segment {
            start: start + a,
            end: start + b,
            kind,
        });
    }
}

/// Splits the windows into phases.
pub(crate) fn segment(states: &[WindowState], window_ms: i64) -> Vec<Segment> {
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
                levels_of(states, i, j, window_ms, &mut out);
                i = j;
            }
        }
    }
    out
}

/// What [`build`] reads.
pub(crate) struct PhaseInput<'a> {
    pub store: &'a Store,
    pub catalogue: &'a Catalogue,
    pub query: &'a Query<'a>,
    pub settings: &'a Settings,
    pub replicas: &'a [(TargetId, String)],
    pub fleet: &'a Fleet,
    pub fleet_windows: &'a [FleetWindow],
    pub restarts: &'a [RestartInfo],
    pub warmup: &'a [usize],
    pub bursts: &'a [Burst],
}

/// Each window's state: load and its noise, restarts, down time, warm-up,
/// bursts.
fn states(i: &PhaseInput<'_>) -> Vec<WindowState> {
    let q = i.query;
    let n = q.grid().count;
    let mut states = vec![WindowState::default(); n];
    for (w, fw) in i.fleet_windows.iter().enumerate() {
        let e = &fw.efficiency;
        states[w].in_flight = e.running_avg.map(|r| r + e.waiting_avg.unwrap_or(0.0));
        states[w].requests_per_min = fw.workload.requests_per_min;
        states[w].little =
            crate::measure::little::in_flight(fw.workload.requests_per_min, fw.latency.e2e_ms);
        let finished: Vec<&vllm_lens_query::WindowIncrease> =
            i.fleet.windows[w].reasons.values().collect();
        let count: f64 = finished.iter().map(|x| x.increase).sum();
        let covered = finished.iter().map(|x| x.covered_ms).max().unwrap_or(0);
        if covered > 0 {
            states[w].requests_per_min_se = Some(count.max(1.0).sqrt() * 60_000.0 / covered as f64);
        }
    }
    for (w, se) in in_flight_noise(i).into_iter().enumerate() {
        states[w].in_flight_se = se;
    }
    for r in i.restarts {
        let from = r
            .last_old_ms
            .and_then(|t| q.grid().index(t + 1))
            .unwrap_or(0);
        let to = q.grid().index(r.seen_ms).unwrap_or(from);
        for s in &mut states[from..=to.max(from).min(n.saturating_sub(1))] {
            s.restart = true;
        }
    }
    for &w in i.warmup {
        states[w].warmup = true;
    }
    for cov in q.coverage() {
        if !i.replicas.iter().any(|(_, name)| *name == cov.target) {
            continue;
        }
        for (w, c) in cov.windows.iter().enumerate() {
            if c.expected > 0 && c.scrapes == 0 {
                states[w].down = true;
            }
        }
    }
    for b in i.bursts {
        for s in &mut states[b.start..b.end] {
            s.burst = true;
        }
    }
    states
}

/// The standard error of each window's mean in flight (fleet): per
/// replica, the spread of its scrapes in the window ÷ √(effective
/// scrapes), the effective count discounting the correlation of
/// neighbouring scrapes (lag-1, pooled over the capture: a request lives
/// across several scrapes); replicas' variances add up.
fn in_flight_noise(i: &PhaseInput<'_>) -> Vec<Option<f64>> {
    let grid = i.query.grid();
    let n = grid.count;
    let mut var: Vec<Option<f64>> = vec![Some(0.0); n];
    for (id, _) in i.replicas {
        let running = queue::per_scrape(i.store, i.catalogue, Signal::Running, *id);
        let waiting = queue::per_scrape(i.store, i.catalogue, Signal::Waiting, *id);
        let mut per: Vec<Vec<f64>> = vec![Vec::new(); n];
        for (t, r) in &running {
            if let Some(w) = grid.index(*t) {
                per[w].push(r + waiting.get(t).copied().unwrap_or(0.0));
            }
        }
        // Lag-1 autocorrelation of deviations from each window's mean.
        let (mut num, mut den) = (0.0, 0.0);
        for v in per.iter().filter(|v| v.len() >= 3) {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            for k in 0..v.len() {
                den += (v[k] - m).powi(2);
                if k + 1 < v.len() {
                    num += (v[k] - m) * (v[k + 1] - m);
                }
            }
        }
        let rho = if den > 0.0 {
            (num / den).clamp(0.0, 0.9)
        } else {
            0.0
        };
        for (w, v) in per.iter().enumerate() {
            let Some(total) = var[w].as_mut() else {
                continue;
            };
            if v.len() < 2 {
                var[w] = None;
                continue;
            }
            let k = v.len() as f64;
            let m = v.iter().sum::<f64>() / k;
            let s2 = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (k - 1.0);
            let effective = (k * (1.0 - rho) / (1.0 + rho)).max(1.0);
            *total += s2 / effective;
        }
    }
    if i.replicas.is_empty() {
        return vec![None; n];
    }
    var.into_iter().map(|v| v.map(f64::sqrt)).collect()
}

/// The phases, the windows the queue objective leaves out (warm-up,
/// restarts, down time), and the gauges held against Little's law.
pub(crate) struct Built {
    pub phases: Vec<Phase>,
    pub excluded: Vec<usize>,
    pub gauges: gauges::GaugeCheck,
}

/// Splits the capture into phases, each with its figures.
pub(crate) fn build(i: &PhaseInput<'_>) -> Built {
    let q = i.query;
    let states = states(i);
    let mut gauges = gauges::check(&states);
    // No rate in any window (no vLLM metrics, one scrape): no phases to
    // tell; the verdict says what is missing.
    if states.iter().all(|s| s.requests_per_min.is_none()) {
        return Built {
            phases: Vec::new(),
            excluded: Vec::new(),
            gauges,
        };
    }
    let starts: Vec<i64> = (0..q.grid().count).map(|w| q.grid().bounds(w).0).collect();
    let segments = segment(&states, i.settings.window_ms);
    for seg in &segments {
        let figures = over_time(&i.fleet.windows[seg.start..seg.end]);
        let f = rows::summary(0, 0, &figures, None);
        let little =
            crate::measure::little::in_flight(f.workload.requests_per_min, f.latency.e2e_ms);
        // Across a restart or down time requests are lost, and finish
        // nowhere: Little's law does not hold there.
        if !matches!(seg.kind, PhaseKind::Restart | PhaseKind::Down)
            && let (Some(g), Some(l)) = (mean_in_flight(&states[seg.start..seg.end]), little)
            && crate::measure::little::disagree(
                g,
                l,
                mean_in_flight_se(&states[seg.start..seg.end]),
            )
        {
            gauges.phases.push(gauges::PhaseDisagreement {
                start: seg.start,
                end: seg.end,
                gauges: g,
                little: l,
            });
        }
    }
    let phases = segments
        .iter()
        .map(|seg| {
            let inputs = over_time(&i.fleet.windows[seg.start..seg.end]);
            let gpu = gpu_over_time(&i.fleet.gpu[seg.start..seg.end]);
            let (a, b) = (starts[seg.start], q.grid().bounds(seg.end - 1).1);
            let figures = rows::summary(a, b, &inputs, i.fleet.has_gpu.then_some(&gpu));
            let in_flight = mean_in_flight(&states[seg.start..seg.end]);
            let in_flight_se = mean_in_flight_se(&states[seg.start..seg.end]);
            let little = crate::measure::little::in_flight(
                figures.workload.requests_per_min,
                figures.latency.e2e_ms,
            );
            let here: Vec<&RestartInfo> = i
                .restarts
                .iter()
                .filter(|r| r.seen_ms >= a && r.seen_ms < b + i.settings.window_ms)
                .collect();
            let burst = i
                .bursts
                .iter()
                .find(|x| x.start < seg.end && x.end > seg.start);
            let queue_trend = seg
                .kind
                .is_load()
                .then(|| trend::queue_trend(&i.fleet_windows[seg.start..seg.end]))
                .flatten();
            // A level whose queue grows is an overload, not a steady state.
            let kind = match &queue_trend {
                Some(t) if trend::grows(t) => PhaseKind::Overload,
                _ => seg.kind,
            };
            let load = describe::InFlight {
                gauges: in_flight,
                gauges_se: in_flight_se,
                little,
            };
            let mut description =
                describe::describe(kind, &figures, load, &here, burst, i.settings);
            if kind == PhaseKind::Overload
                && let Some(t) = &queue_trend
            {
                description = format!(
                    "The queue grew across it ({}): more arrived than the server served; {}",
                    trend::words(t),
                    description
                );
            }
            Phase {
                start_ms: a,
                end_ms: b,
                kind,
                description,
                figures,
                in_flight_avg: in_flight.map(round),
                in_flight_se: in_flight_se.map(round),
                in_flight_from_latency: little.map(round),
                queue_trend,
            }
        })
        .collect();
    let excluded = (0..states.len())
        .filter(|&w| states[w].warmup || states[w].restart || states[w].down)
        .collect();
    Built {
        phases,
        excluded,
        gauges,
    }
}

/// Mean requests in flight (the gauges) over some windows.
fn mean_in_flight(states: &[WindowState]) -> Option<f64> {
    let v: Vec<f64> = states.iter().filter_map(|s| s.in_flight).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The standard error of [`mean_in_flight`]: the windows' own errors
/// combined (independent windows, equally weighted); `None` where a window
/// with a mean has no error.
fn mean_in_flight_se(states: &[WindowState]) -> Option<f64> {
    let with: Vec<&WindowState> = states.iter().filter(|s| s.in_flight.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let var: f64 = with
        .iter()
        .map(|s| s.in_flight_se.map(|e| e * e))
        .sum::<Option<f64>>()?;
    Some(var.sqrt() / with.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(values: &[f64]) -> Vec<WindowState> {
        values
            .iter()
            .map(|&x| WindowState {
                in_flight: Some(x),
                in_flight_se: Some(0.3),
                requests_per_min: Some(100.0),
                requests_per_min_se: Some(10.0),
                ..WindowState::default()
            })
            .collect()
    }

    fn kinds(s: &[Segment]) -> Vec<(usize, usize, PhaseKind)> {
        s.iter().map(|x| (x.start, x.end, x.kind)).collect()
    }

    #[test]
    fn restarts_bursts_and_idle_interrupt() {
        let mut st = load(&[13.0, 13.0, 13.0, 13.0, 12.0, 13.0, 12.0, 13.0, 0.0, 0.0]);
        st[4].restart = true;
        st[5].restart = true;
        st[8].requests_per_min = Some(0.0);
        st[9].requests_per_min = Some(0.0);
        assert_eq!(
            kinds(&segment(&st, 60_000)),
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
            kinds(&segment(&st, 60_000)),
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
