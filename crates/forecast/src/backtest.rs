//! The back-test: today's configuration replayed at each window's load.
//!
//! A window's TTFT p95 and inter-token p95 hit when the replay's figure is
//! within ±25 % of the window's interpolated p95, or in the same or an
//! adjacent bucket of the histogram's ladder. The load hits when the
//! figure the load does not fix (in flight for arrivals, finished per
//! minute for users) is within ±25 % or 2 requests. The model is
//! calibrated when 80 % of the windows hit on each, and the queueing start
//! it predicts is within 2 requests of the capture's.

use vllm_lens_engine::sched::Load;
use vllm_lens_model::forecast::{Backtest, Calibration, CalibrationError, EngineFit};
use vllm_lens_model::report::Bounds;

use crate::fit::Fit;
use crate::input::{Input, Win};
use crate::replay::{self, Setup};

/// The relative tolerance.
pub const TOLERANCE: f64 = 0.25;
/// Share of windows that must hit.
pub const MIN_HIT_SHARE: f64 = 0.8;
/// Requests in flight the queueing start may be off by.
pub const QUEUE_START_TOLERANCE: f64 = 2.0;
/// Most windows replayed (evenly spread over the loaded ones).
const MAX_WINDOWS: usize = 12;

/// The bucket index of `v` on `ladder` (upper bounds, ascending; past
/// the last is the `+Inf` bucket).
fn bucket_index(ladder: &[f64], v: f64) -> usize {
    ladder
        .iter()
        .position(|up| v <= *up)
        .unwrap_or(ladder.len())
}

/// Within ±25 % or in the same or an adjacent bucket.
pub fn hits(ladder: &[f64], measured: f64, bucket: Bounds, predicted: f64) -> bool {
    if measured > 0.0 && (predicted - measured).abs() <= TOLERANCE * measured {
        return true;
    }
    if ladder.is_empty() {
        return bucket.low <= predicted && bucket.high.is_none_or(|h| predicted <= h);
    }
    let m = bucket
        .high
        .map_or(ladder.len(), |h| bucket_index(ladder, h));
    let p = bucket_index(ladder, predicted);
    m.abs_diff(p) <= 1
}

/// The windows where one load held (steady or overload phases; all when
/// there are none), evenly spread.
fn pick(all: &[Win]) -> Vec<&Win> {
    let held: Vec<Win> = all.iter().filter(|w| w.steady).cloned().collect();
    let wins: &[Win] = if held.is_empty() { all } else { &held };
    let chosen: Vec<i64> = spread(wins).iter().map(|w| w.start_ms).collect();
    all.iter()
        .filter(|w| chosen.contains(&w.start_ms))
        .collect()
}

fn spread(wins: &[Win]) -> Vec<&Win> {
    if wins.len() <= MAX_WINDOWS {
        return wins.iter().collect();
    }
    (0..MAX_WINDOWS)
        .map(|i| &wins[i * (wins.len() - 1) / (MAX_WINDOWS - 1)])
        .collect()
}

/// The setup that replays window `w` under today's settings.
pub fn window_setup(m: &EngineFit, w: &Win) -> Setup {
    let load = Load::Closed {
        users: w.users as u32,
        think_s: w.think_s(),
    };
    Setup {
        settings: m.settings.clone(),
        prompt: w.prompt,
        generated: w.generated,
        shared: if m.settings.prefix_caching {
            replay::shared_for(w.hit, w.prompt, m.settings.block_size)
        } else {
            0
        },
        load,
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(xs[xs.len() / 2])
}

fn row(input: &Input<'_>, m: &EngineFit, fit: &Fit, w: &Win) -> Backtest {
    let f = replay::replay(&window_setup(m, w), fit, &fit.central, &m.workload);
    let ttft_hit = w
        .ttft_p95
        .zip(f.ttft_p95_ms)
        .map(|((v, b), p)| hits(&input.ttft_ladder_ms, v, b, p));
    let itl_hit = w
        .itl_p95
        .zip(f.itl_p95_ms)
        .map(|((v, b), p)| hits(&input.itl_ladder_ms, v, b, p));
    let close = |a: f64, b: f64| (a - b).abs() <= (TOLERANCE * b).max(QUEUE_START_TOLERANCE);
    let load_hit =
        (f.per_s - w.per_s).abs() <= TOLERANCE * w.per_s && close(f.in_flight, w.in_flight);
    Backtest {
        window_start_ms: w.start_ms,
        window_end_ms: w.end_ms,
        in_flight: w.in_flight,
        requests_per_min: w.per_s * 60.0,
        ttft_p95_ms: w.ttft_p95.map(|x| x.0),
        ttft_bucket: w.ttft_p95.map(|x| x.1),
        predicted_ttft_p95_ms: f.ttft_p95_ms,
        ttft_hit,
        itl_p95_ms: w.itl_p95.map(|x| x.0),
        itl_bucket: w.itl_p95.map(|x| x.1),
        predicted_itl_p95_ms: f.itl_p95_ms,
        itl_hit,
        predicted_in_flight: f.in_flight,
        predicted_requests_per_min: f.per_s * 60.0,
        load_hit,
    }
}

/// Replays every window where the load held (up to 12) and holds the replay against them.
pub fn backtest(input: &Input<'_>, wins: &[Win], fit: &Fit, m: &EngineFit) -> Calibration {
    let rows: Vec<Backtest> = pick(wins)
        .into_iter()
        .map(|w| row(input, m, fit, w))
        .collect();
    let rel = |p: Option<f64>, v: Option<f64>| match (p, v) {
        (Some(p), Some(v)) if v > 0.0 => Some(100.0 * (p - v).abs() / v),
        _ => None,
    };
    let count = |f: fn(&Backtest) -> Option<bool>| {
        (
            rows.iter().filter(|r| f(r) == Some(true)).count(),
            rows.iter().filter(|r| f(r).is_some()).count(),
        )
    };
    let (ttft_hits, ttft_windows) = count(|r| r.ttft_hit);
    let (itl_hits, itl_windows) = count(|r| r.itl_hit);
    let load_hits = rows.iter().filter(|r| r.load_hit).count();
    let measured_start = input.report.capacity.queueing_starts_at;
    let peak = wins
        .iter()
        .max_by(|a, b| a.in_flight.total_cmp(&b.in_flight));
    let scraped = crate::scenarios::scraped(input.report, wins);
    let predicted_start = peak.and_then(|w| {
        let setup = window_setup(m, w);
        let at = scraped.map(|scraped| crate::scenarios::ReadAt {
            setup: &setup,
            scraped,
        });
        crate::scenarios::queueing_start(m, fit, w, &m.settings, at).at
    });
    let error = CalibrationError {
        windows: rows.len(),
        ttft_hits,
        ttft_windows,
        ttft_p95_pct: median(
            rows.iter()
                .filter_map(|r| rel(r.predicted_ttft_p95_ms, r.ttft_p95_ms))
                .collect(),
        ),
        itl_hits,
        itl_windows,
        itl_p95_pct: median(
            rows.iter()
                .filter_map(|r| rel(r.predicted_itl_p95_ms, r.itl_p95_ms))
                .collect(),
        ),
        load_hits,
        queueing_starts_at: measured_start,
        predicted_queueing_starts_at: predicted_start,
    };
    // The capture's queueing start is only a threshold where it also ran
    // close below it without queueing; otherwise it is an upper bound.
    let bounded_only = measured_start.is_some_and(|m| {
        !wins
            .iter()
            .any(|w| !w.waited && w.users >= m - 1.0 - QUEUE_START_TOLERANCE)
    });
    let misses = misses(&error, peak.map(|w| w.in_flight), bounded_only);
    Calibration {
        backtest: rows,
        error,
        misses,
        tolerance: format!(
            "TTFT p95 and inter-token p95 within ±{:.0} % of the window's or in the same or an adjacent bucket, the load within ±{:.0} % or {QUEUE_START_TOLERANCE:.0} requests, in {:.0} % of the windows; the queueing start within {QUEUE_START_TOLERANCE:.0} requests in flight",
            TOLERANCE * 100.0,
            TOLERANCE * 100.0,
            MIN_HIT_SHARE * 100.0
        ),
    }
}

fn misses(e: &CalibrationError, peak: Option<f64>, bounded_only: bool) -> Vec<String> {
    let mut out = Vec::new();
    let short = |hits: usize, n: usize| n > 0 && (hits as f64) < MIN_HIT_SHARE * n as f64;
    if short(e.ttft_hits, e.ttft_windows) {
        out.push(format!(
            "TTFT p95 within tolerance in {} of {} windows (median error {})",
            e.ttft_hits,
            e.ttft_windows,
            e.ttft_p95_pct
                .map_or("unknown".into(), |p| format!("{p:.0} %"))
        ));
    }
    if short(e.itl_hits, e.itl_windows) {
        out.push(format!(
            "inter-token p95 within tolerance in {} of {} windows (median error {})",
            e.itl_hits,
            e.itl_windows,
            e.itl_p95_pct
                .map_or("unknown".into(), |p| format!("{p:.0} %"))
        ));
    }
    if short(e.load_hits, e.windows) {
        out.push(format!(
            "the load within tolerance in {} of {} windows",
            e.load_hits, e.windows
        ));
    }
    match (e.queueing_starts_at, e.predicted_queueing_starts_at, peak) {
        (Some(m), Some(p), _) if bounded_only && p > m + QUEUE_START_TOLERANCE => out.push(format!(
            "requests queue from {m:.0} in flight or fewer in the capture (it never ran near that without queueing), from {p:.0} in the replay"
        )),
        (Some(_), Some(_), _) if bounded_only => {}
        (Some(m), Some(p), _) if (m - p).abs() > QUEUE_START_TOLERANCE => out.push(format!(
            "requests queue from {m:.0} in flight in the capture, from {p:.0} in the replay"
        )),
        (Some(m), None, _) => out.push(format!(
            "requests queue from {m:.0} in flight in the capture, never in the replay"
        )),
        (None, Some(p), Some(peak)) if p + QUEUE_START_TOLERANCE < peak => out.push(format!(
            "the replay queues from {p:.0} in flight, the capture never queued up to {peak:.0}"
        )),
        _ => {}
    }
    out
}
