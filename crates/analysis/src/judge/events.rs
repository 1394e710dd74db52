//! Stage 2: what happened to the processes: restarts (a changed
//! `process_start_time_seconds`, or a drop of the generated tokens counter
//! where a release exports no start time) with the requests they lost, and
//! each process's warm-up.

use vllm_lens_catalog::{Catalogue, Signal};
use vllm_lens_query::Query;
use vllm_lens_store::{Store, TargetId};

use crate::measure::queue;
use crate::model::Rows;

/// Every restart of a replica: a changed `process_start_time_seconds`, or
/// (without it, as on V0 multiprocess servers) a drop of the generated
/// tokens counter.
///
/// The requests lost are those in flight at the kill. A scrape reads the
/// engine's gauges at one moment, up to an interval before the kill, so
/// two captures of one server read it differently; the estimate is Little's
/// law over the old process's last window instead (finished per second ×
/// the mean time a request spends, `e2e_request_latency`): the requests
/// in flight on average, whenever the kill came. Without that histogram,
/// the gauges at the old process's last scrape.
pub(crate) fn restarts(
    store: &Store,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
    rows: &Rows,
) -> Vec<RestartInfo> {
    let mut out = Vec::new();
    for (id, name) in replicas {
        let mut seen: Vec<i64> = q.restarts(*id).to_vec();
        let has_start = cat
            .get(Signal::ProcessStart)
            .series()
            .any(|s| store.series(s).target() == *id);
        if !has_start {
            for sid in cat.get(Signal::GenerationTokens).series() {
                let s = store.series(sid);
                if s.target() == *id {
                    seen.extend(vllm_lens_query::counter::drops(s.times(), s.values()));
                }
            }
            seen.sort_unstable();
            seen.dedup();
        }
        let times = store.target(*id).sample_times();
        let started = queue::per_scrape(store, cat, Signal::ProcessStart, *id);
        let running = queue::per_scrape(store, cat, Signal::Running, *id);
        let waiting = queue::per_scrape(store, cat, Signal::Waiting, *id);
        for t in seen {
            let i = times.partition_point(|&x| x < t);
            let last_old = i.checked_sub(1).map(|j| times[j]);
            let snapshot = last_old.and_then(|l| {
                running
                    .get(&l)
                    .map(|r| r + waiting.get(&l).copied().unwrap_or(0.0))
            });
            let little = last_old.and_then(|l| little(q, rows, name, l));
            let in_flight = little.map(|x| (x * 10.0).round() / 10.0).or(snapshot);
            out.push(RestartInfo {
                replica: name.clone(),
                seen_ms: t,
                started_ms: started.get(&t).map(|s| (s * 1000.0).round() as i64),
                last_old_ms: last_old,
                in_flight_lost: in_flight,
                lost_by_little: little.is_some(),
            });
        }
    }
    out.sort_by_key(|r| r.seen_ms);
    out
}

/// Requests in flight on average over the window holding `at`, by
/// Little's law, for one replica.
fn little(q: &Query<'_>, rows: &Rows, replica: &str, at: i64) -> Option<f64> {
    let start = q.grid().bounds(q.grid().index(at)?).0;
    let here = |k: &crate::model::RowKey| {
        k.window_start_ms == start && k.replica.replica() == Some(replica)
    };
    let per_min = rows
        .workload
        .iter()
        .find(|r| here(&r.key))?
        .fields
        .requests_per_min?;
    let e2e_ms = rows.latency.iter().find(|r| here(&r.key))?.fields.e2e_ms?;
    Some(per_min / 60.0 * e2e_ms / 1000.0)
}

/// How long before the capture a process may have started and still be
/// warming up when it begins to serve.
const WARMUP_RECENT_MS: i64 = 5 * 60_000;

/// Windows of a process's first minutes at the start of the capture. A
/// process that started at most [`WARMUP_RECENT_MS`] before its replica's
/// first scrape warms up for one window from when it began to serve: its
/// start if it was already running requests at the first scrape, else the
/// first scrape with a request running or the scrape before its
/// generated-token counter first rose, whichever is earlier. Anchored on serving, the judgement
/// does not flip on a capture begun a few seconds earlier or later (a
/// server ready 59 s after its start, captured at 58 or 62 s).
pub(crate) fn warmup_windows(
    store: &Store,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
) -> Vec<usize> {
    let grid = q.grid();
    let mut out = Vec::new();
    for (id, _) in replicas {
        let started = queue::per_scrape(store, cat, Signal::ProcessStart, *id);
        let Some((&first, &s)) = started.iter().next() else {
            continue;
        };
        let start_ms = (s * 1000.0).round() as i64;
        if start_ms < first - WARMUP_RECENT_MS {
            continue;
        }
        let running = queue::per_scrape(store, cat, Signal::Running, *id);
        // The scrape before the generated-token counter first rose: it
        // served from then on, even where the running gauge (set at the
        // engine's steps) read 0 at every scrape of its first minutes.
        let generated = queue::per_scrape(store, cat, Signal::GenerationTokens, *id);
        let rose = generated
            .iter()
            .zip(generated.iter().skip(1))
            .find(|(a, b)| b.1 > a.1)
            .map(|(a, _)| *a.0);
        let begin = match running.iter().next() {
            // Running at the first scrape: it served from (about) its start.
            Some((&t, &r)) if t == first && r > 0.0 => start_ms,
            _ => match (running.iter().find(|(_, r)| **r > 0.0), rose) {
                (Some((&t, _)), Some(g)) => t.min(g),
                (Some((&t, _)), None) => t,
                (None, Some(g)) => g,
                (None, None) => continue,
            },
        };
        let end = begin + grid.width_ms;
        if end <= first {
            continue;
        }
        let (Some(from), Some(until)) = (
            grid.index(first.max(begin)),
            grid.index(end - 1).or(grid.count.checked_sub(1)),
        ) else {
            continue;
        };
        out.extend(from..=until);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The longest time a replica was unreachable at a restart, when it was
/// longer than a fifth of a window (a few scrapes): (replica, ms).
pub(crate) fn longest_outage(restarts: &[RestartInfo], window_ms: i64) -> Option<(&str, i64)> {
    restarts
        .iter()
        .filter_map(|r| r.down_ms().map(|d| (r.replica.as_str(), d)))
        .filter(|(_, d)| 5 * d > window_ms)
        .max_by_key(|(_, d)| *d)
}

/// A restart of one replica, as the report tells it.
#[derive(Clone, Debug)]
pub(crate) struct RestartInfo {
    pub replica: String,
    /// When the new process was first seen (its first scrape), ms.
    pub seen_ms: i64,
    /// The new process's start time (`process_start_time_seconds`), ms.
    pub started_ms: Option<i64>,
    /// The last successful scrape of the old process, ms.
    pub last_old_ms: Option<i64>,
    /// Requests in flight at the kill, lost: Little's law over the old
    /// process's last window where its latency is exported, else running +
    /// waiting at its last scrape.
    pub in_flight_lost: Option<f64>,
    /// True when `in_flight_lost` is Little's law's estimate.
    pub lost_by_little: bool,
}

impl RestartInfo {
    /// When it restarted: the new process's start time where it lies
    /// between the old process's last scrape and the new one's first,
    /// else the first scrape of the new process.
    pub fn when_ms(&self) -> i64 {
        match (self.started_ms, self.last_old_ms) {
            (Some(s), Some(l)) if s > l && s <= self.seen_ms => s,
            (Some(s), None) if s <= self.seen_ms => s,
            _ => self.seen_ms,
        }
    }

    /// The requests lost in words: "about 4 requests in flight" (Little's
    /// law) or "3 requests in flight at its last scrape".
    pub fn lost_words(&self) -> Option<String> {
        let n = self.in_flight_lost?;
        let plural = |n: f64| if n == 1.0 { "request" } else { "requests" };
        Some(if self.lost_by_little {
            let n = n.round();
            format!("about {} {} in flight", crate::text::num(n), plural(n))
        } else {
            format!(
                "{} {} in flight at its last scrape",
                crate::text::num(n),
                plural(n)
            )
        })
    }

    /// The signals the estimate of requests lost reads.
    pub fn lost_signals(&self) -> &'static [Signal] {
        if self.lost_by_little {
            &[Signal::FinishedRequests, Signal::E2eTime]
        } else {
            &[Signal::Running, Signal::Waiting]
        }
    }

    /// At most how long it was unreachable: from the old process's last
    /// scrape to the new one's first, ms (the scrapes bound it).
    pub fn down_ms(&self) -> Option<i64> {
        let last = self.last_old_ms?;
        Some((self.seen_ms - last).max(0))
    }
}
