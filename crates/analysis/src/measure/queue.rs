//! Queueing, defined once and judged per replica: the queue SLO ("at N
//! requests in flight, nothing waits"), the `latency.queueing` finding and
//! the admission cap all read this module.
//!
//! - **In flight** is running + waiting at a scrape.
//! - **Queued**: waiting > 0 on at least two consecutive scrapes (waiting
//!   for capacity, `num_requests_waiting_by_reason{reason="capacity"}`,
//!   where exported: from 0.20 `num_requests_waiting` also counts deferred
//!   requests), or a window whose mean queue time reaches the negligible
//!   threshold. vLLM records queue time when a request finishes, so a
//!   window's queue time belongs to requests that finished there and
//!   queued up to one request's lifetime earlier: that window is charged
//!   with the most requests in flight over its own span and the span of
//!   one average request before it. Time waited after a preemption counts
//!   as prefill or decode in vLLM's histograms, and preempted requests
//!   waiting again count in `waiting`.
//! - **Admission cap**: the most requests a replica ran at once while
//!   others waited, at scrapes with requests waiting (`--max-num-seqs`, or
//!   the KV cache when it fills first).
//! - **Queueing starts at**: the fewest requests in flight seen with
//!   queueing at least three times, and never above the admission cap + 1
//!   (the two captures of one server, scraped at different moments, agree).
//!
//! Warm-up windows (a process's first minutes) are left out, and the
//! report says so.

use std::collections::BTreeMap;

use vllm_lens_catalog::{Catalogue, Signal, Status};
use vllm_lens_query::Grid;
use vllm_lens_store::{Store, TargetId};

use crate::measure::thresholds::{QUEUED_CONSECUTIVE_SCRAPES, QUEUEING_SEEN_TIMES};
use crate::model::Latency;

/// How queueing was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueuedBy {
    /// Waiting > 0 on consecutive scrapes.
    Waiting,
    /// The window's mean queue time.
    QueueTime,
}

/// One sighting of queueing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    /// Scrape time, or the window's start for [`QueuedBy::QueueTime`].
    pub time_ms: i64,
    /// Requests in flight then.
    pub in_flight: f64,
    /// Requests running then (the most in the span, for queue time).
    pub running: f64,
    pub by: QueuedBy,
    /// `in_flight` is Little's law's (finished/s × mean e2e latency), not
    /// the gauges': in that window they disagree ([`crate::measure::little`]).
    pub little: bool,
}

/// What decided where queueing starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueStartBy {
    /// The admission cap + 1: the sightings of queueing were all at more
    /// in flight than the cap's requests and one waiting.
    AdmissionCap,
    /// Waiting above zero on consecutive scrapes.
    WaitingScrapes,
    /// A window's mean queue time.
    QueueTime,
}

/// Where queueing starts on a replica, with its evidence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct QueueStart {
    /// Requests in flight.
    pub at: f64,
    pub by: QueueStartBy,
    /// Scrapes queued (waiting on consecutive scrapes) at or below `at`.
    pub waiting_scrapes: usize,
    /// Windows queued by mean queue time at or below `at`.
    pub queue_time_windows: usize,
    /// The replica's admission cap.
    pub cap: Option<f64>,
    /// A sighting at or below `at` took Little's law's figure, the gauges
    /// disagreeing with it in its window.
    pub little: bool,
}

impl QueueStart {
    /// The model's name for the evidence.
    pub fn decided_by(&self) -> crate::model::QueueingDecidedBy {
        use crate::model::QueueingDecidedBy as D;
        match self.by {
            QueueStartBy::AdmissionCap => D::AdmissionCap,
            QueueStartBy::WaitingScrapes => D::WaitingScrapes,
            QueueStartBy::QueueTime => D::QueueTime,
        }
    }

    /// The evidence in words, after "from N requests in flight".
    pub fn evidence(&self, negligible_ms: f64) -> String {
        let n = crate::text::num(self.at);
        let mut out = match self.by {
            QueueStartBy::AdmissionCap => format!(
                "decided by the admission cap: with its {} running, request {n} waits",
                crate::text::num(self.cap.unwrap_or(self.at - 1.0))
            ),
            QueueStartBy::WaitingScrapes => format!(
                "decided by waiting requests on two or more consecutive scrapes, seen {} with {n} or fewer in flight",
                crate::text::plural(self.waiting_scrapes, "time", "times")
            ),
            QueueStartBy::QueueTime => format!(
                "decided by mean queue time of {} ms or more in {} with at most {n} in flight",
                crate::text::num(negligible_ms),
                crate::text::plural(self.queue_time_windows, "window", "windows")
            ),
        };
        if self.little {
            out.push_str(
                "; requests in flight by Little's law (finished/s × the engine's mean latency) where the running and waiting gauges disagree with it",
            );
        }
        if let Some(c) = self.cap.filter(|c| self.at <= *c) {
            out.push_str(&format!(
                "; at or below the {} that ran at once, so a limit other than the number of sequences held them: see the binding limit",
                crate::text::num(c)
            ));
        }
        out
    }
}

/// One replica's queueing.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReplicaQueue {
    pub name: String,
    /// The most requests in flight at a scrape outside warm-up.
    pub peak_in_flight: Option<f64>,
    /// The most requests in flight at a scrape without queueing.
    pub peak_without_queueing: Option<f64>,
    /// Sightings of queueing at or above where it starts.
    pub queued: Vec<Queued>,
    /// Sightings below where queueing starts, too few to set it (a
    /// preempted request, one caught between engine steps on two scrapes).
    pub isolated: Vec<Queued>,
    /// Windows (indices) with queueing (`queued`).
    pub queued_windows: Vec<usize>,
    /// Where queueing starts, once the sightings are in ([`Self::settle`]).
    pub start: Option<QueueStart>,
}

impl ReplicaQueue {
    /// Where queueing starts: the fewest requests in flight seen with
    /// queueing at least [`QUEUEING_SEEN_TIMES`] times (one or two odd
    /// readings, a request caught between two engine steps, do not set it),
    /// and never above one more than the admission cap (with the cap's
    /// requests running, the next one waits).
    pub fn queueing_starts_at(&self) -> Option<f64> {
        self.start.map(|s| s.at)
    }

    /// Where queueing starts and the evidence that decided it.
    pub fn queue_start(&self) -> Option<QueueStart> {
        self.start
    }

    /// Decides where queueing starts from every sighting, then sets apart
    /// the sightings below it (too few to be where queueing starts) and
    /// keeps the windows of the rest.
    pub fn settle(&mut self, window_of: impl Fn(i64) -> Option<usize>) {
        self.start = self.find_start();
        if let Some(s) = self.start {
            let (kept, isolated) = self.queued.iter().partition(|q| q.in_flight >= s.at);
            self.queued = kept;
            self.isolated = isolated;
        }
        self.queued_windows = self
            .queued
            .iter()
            .filter_map(|q| window_of(q.time_ms))
            .collect();
        self.queued_windows.sort_unstable();
        self.queued_windows.dedup();
    }

    fn find_start(&self) -> Option<QueueStart> {
        let mut seen: Vec<&Queued> = self.queued.iter().collect();
        seen.sort_by(|a, b| a.in_flight.total_cmp(&b.in_flight));
        let nth = *seen.get(QUEUEING_SEEN_TIMES.min(seen.len()).checked_sub(1)?)?;
        let cap = self.admission_cap();
        let (at, by) = match cap {
            Some(c) if c + 1.0 < nth.in_flight => (c + 1.0, QueueStartBy::AdmissionCap),
            _ => (
                nth.in_flight,
                match nth.by {
                    QueuedBy::Waiting => QueueStartBy::WaitingScrapes,
                    QueuedBy::QueueTime => QueueStartBy::QueueTime,
                },
            ),
        };
        let sightings = |by: QueuedBy| {
            self.queued
                .iter()
                .filter(|q| q.by == by && q.in_flight <= at)
                .count()
        };
        Some(QueueStart {
            at,
            by,
            waiting_scrapes: sightings(QueuedBy::Waiting),
            queue_time_windows: sightings(QueuedBy::QueueTime),
            cap,
            little: self.queued.iter().any(|q| q.little && q.in_flight <= at),
        })
    }

    /// The most requests run at once while others waited: read at scrapes
    /// with requests waiting (queue time alone says nothing about what ran
    /// beside them).
    pub fn admission_cap(&self) -> Option<f64> {
        self.queued
            .iter()
            .filter(|q| q.by == QueuedBy::Waiting)
            .map(|q| q.running)
            .reduce(f64::max)
    }
}

/// Queueing over every replica.
#[derive(Clone, Debug, Default)]
pub(crate) struct QueueReport {
    pub replicas: Vec<ReplicaQueue>,
    /// The family read for waiting requests.
    pub waiting_metric: Option<String>,
    /// True when at least one replica has running and waiting gauges.
    pub measured: bool,
    /// Windows left out (warm-up), indices.
    pub excluded: Vec<usize>,
}

impl QueueReport {
    /// The fewest requests in flight seen with queueing, on any replica.
    pub fn queueing_starts_at(&self) -> Option<f64> {
        self.queue_start().map(|s| s.at)
    }

    /// Where queueing starts soonest, on any replica, with its evidence.
    pub fn queue_start(&self) -> Option<QueueStart> {
        self.replicas
            .iter()
            .filter_map(ReplicaQueue::queue_start)
            .min_by(|a, b| a.at.total_cmp(&b.at))
    }

    /// The smallest admission cap among the replicas that queued.
    pub fn admission_cap(&self) -> Option<f64> {
        self.replicas
            .iter()
            .filter_map(ReplicaQueue::admission_cap)
            .reduce(f64::min)
    }

    /// The most requests in flight on one replica.
    pub fn peak_in_flight(&self) -> Option<f64> {
        self.replicas
            .iter()
            .filter_map(|r| r.peak_in_flight)
            .reduce(f64::max)
    }

    /// The most requests in flight on one replica without queueing.
    pub fn peak_without_queueing(&self) -> Option<f64> {
        self.replicas
            .iter()
            .filter_map(|r| r.peak_without_queueing)
            .reduce(f64::max)
    }

    /// Windows (indices) in which some replica queued.
    pub fn queued_windows(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .replicas
            .iter()
            .flat_map(|r| r.queued_windows.iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The sightings below where queueing starts, on any replica.
    pub fn isolated(&self) -> impl Iterator<Item = &Queued> {
        self.replicas.iter().flat_map(|r| r.isolated.iter())
    }

    /// Every sighting with in flight ≤ `n`, on any replica.
    pub fn queued_at_or_below(&self, n: f64) -> Vec<(&str, Queued)> {
        self.replicas
            .iter()
            .flat_map(|r| {
                r.queued
                    .iter()
                    .filter(move |q| q.in_flight <= n)
                    .map(move |q| (r.name.as_str(), *q))
            })
            .collect()
    }
}

/// A gauge signal summed over a target's series at each of its scrapes.
pub(crate) fn per_scrape(
    store: &Store,
    cat: &Catalogue,
    signal: Signal,
    target: TargetId,
) -> BTreeMap<i64, f64> {
    let mut out = BTreeMap::new();
    for sid in cat.get(signal).series() {
        let s = store.series(sid);
        if s.target() != target {
            continue;
        }
        for (&t, &v) in s.times().iter().zip(s.values()) {
            if v.is_finite() {
                *out.entry(t).or_insert(0.0) += v;
            }
        }
    }
    out
}

/// A pushdown export keeps each window's last scrape, and Prometheus'
/// maxima: in a window whose waiting maximum is 0 no scrape waited, so the
/// scrape with the most running is a sighting without queueing at that
/// many in flight (stamped at the window's end). Only for a replica with
/// one running and one waiting series: maxima of several series need not
/// be simultaneous.
fn pushed_sightings(
    store: &Store,
    cat: &Catalogue,
    waiting_signal: Signal,
    target: TargetId,
) -> Vec<(i64, f64, f64)> {
    let one = |signal: Signal| {
        let mut it = cat
            .get(signal)
            .series()
            .filter(|&sid| store.series(sid).target() == target);
        match (it.next(), it.next()) {
            (Some(sid), None) => store.series(sid).pushed().filter(|p| p.has_stats()),
            _ => None,
        }
    };
    let (Some(run), Some(wait)) = (one(Signal::Running), one(waiting_signal)) else {
        return Vec::new();
    };
    wait.max
        .iter()
        .filter(|(_, w)| *w == 0.0)
        .filter_map(|&(t, _)| {
            let i = run.max.binary_search_by_key(&t, |p| p.0).ok()?;
            let r = run.max[i].1;
            r.is_finite().then_some((t, r, 0.0))
        })
        .collect()
}

/// What [`analyse`] reads per replica.
pub(crate) struct ReplicaInput<'a> {
    pub target: TargetId,
    pub name: &'a str,
    /// The replica's latency rows, one per window.
    pub latency: Vec<&'a Latency>,
    /// Per window, requests in the engine by Little's law where the
    /// replica's running + waiting gauges (window mean) read too few
    /// against it (stale or blind gauges); `None` where they agree, read
    /// more (requests that never finished), or either is missing.
    pub little: Vec<Option<f64>>,
}

/// Each replica's latency rows, for [`analyse`].
pub(crate) fn replica_inputs<'a>(
    replicas: &'a [(TargetId, crate::ids::Scope)],
    rows: &'a crate::model::Rows,
) -> Vec<ReplicaInput<'a>> {
    replicas
        .iter()
        .map(|(target, scope)| {
            let latency: Vec<&Latency> = rows
                .latency
                .iter()
                .filter(|r| r.key.replica == *scope)
                .map(|r| &r.fields)
                .collect();
            let rate: Vec<Option<f64>> = rows
                .workload
                .iter()
                .filter(|r| r.key.replica == *scope)
                .map(|r| r.fields.requests_per_min)
                .collect();
            let gauges: Vec<Option<f64>> = rows
                .efficiency
                .iter()
                .filter(|r| r.key.replica == *scope)
                .map(|r| {
                    r.fields
                        .running_avg
                        .map(|x| x + r.fields.waiting_avg.unwrap_or(0.0))
                })
                .collect();
            let little = latency
                .iter()
                .enumerate()
                .map(|(w, l)| {
                    let little = crate::measure::little::in_flight(
                        rate.get(w).copied().flatten(),
                        l.e2e_ms,
                    )?;
                    let g = gauges.get(w).copied().flatten()?;
                    crate::measure::little::gauges_low(g, little, None).then_some(little)
                })
                .collect();
            ReplicaInput {
                target: *target,
                name: scope.as_str(),
                latency,
                little,
            }
        })
        .collect()
}

/// Reads queueing for every replica.
pub(crate) fn analyse(
    store: &Store,
    cat: &Catalogue,
    grid: &Grid,
    replicas: &[ReplicaInput<'_>],
    excluded: &[usize],
    negligible_ms: f64,
) -> QueueReport {
    let capacity = cat.get(Signal::WaitingCapacity).status != Status::Missing;
    let waiting_signal = if capacity {
        Signal::WaitingCapacity
    } else {
        Signal::Waiting
    };
    let waiting_metric = cat.get(waiting_signal).used.first().map(|n| n.to_string());
    let mut report = QueueReport {
        waiting_metric,
        excluded: excluded.to_vec(),
        ..QueueReport::default()
    };
    let out_of_judgement = |t: i64| grid.index(t).is_none_or(|w| excluded.contains(&w));
    for r in replicas {
        let running = per_scrape(store, cat, Signal::Running, r.target);
        let waiting = per_scrape(store, cat, waiting_signal, r.target);
        let mut rq = ReplicaQueue {
            name: r.name.to_string(),
            ..ReplicaQueue::default()
        };
        if running.is_empty() || waiting.is_empty() {
            report.replicas.push(rq);
            continue;
        }
        report.measured = true;
        let mut scrapes: Vec<(i64, f64, f64)> = running
            .iter()
            .filter_map(|(&t, &run)| waiting.get(&t).map(|&wait| (t, run, wait)))
            .collect();
        scrapes.extend(pushed_sightings(store, cat, waiting_signal, r.target));
        scrapes.sort_by_key(|s| s.0);
        // Per window: the most in flight and running at a scrape.
        let mut window_max: Vec<Option<(f64, f64)>> = vec![None; grid.count];
        for &(t, run, wait) in &scrapes {
            if let Some(w) = grid.index(t) {
                let slot = window_max[w].get_or_insert((0.0, 0.0));
                slot.0 = slot.0.max(run + wait);
                slot.1 = slot.1.max(run);
            }
        }
        // Waiting > 0 on consecutive scrapes.
        let mut queued_scrape = vec![false; scrapes.len()];
        let mut i = 0;
        while i < scrapes.len() {
            if scrapes[i].2 > 0.0 {
                let mut j = i;
                while j < scrapes.len() && scrapes[j].2 > 0.0 {
                    j += 1;
                }
                if j - i >= QUEUED_CONSECUTIVE_SCRAPES {
                    for q in &mut queued_scrape[i..j] {
                        *q = true;
                    }
                }
                i = j;
            } else {
                i += 1;
            }
        }
        for (k, &(t, run, wait)) in scrapes.iter().enumerate() {
            if out_of_judgement(t) {
                continue;
            }
            let in_flight = run + wait;
            rq.peak_in_flight = Some(rq.peak_in_flight.map_or(in_flight, |p| p.max(in_flight)));
            if queued_scrape[k] {
                rq.queued.push(Queued {
                    time_ms: t,
                    in_flight,
                    running: run,
                    by: QueuedBy::Waiting,
                    little: false,
                });
            } else {
                rq.peak_without_queueing = Some(
                    rq.peak_without_queueing
                        .map_or(in_flight, |p| p.max(in_flight)),
                );
            }
        }
        // Mean queue time: charged to the window and the span of one
        // average request before it.
        for (w, l) in r.latency.iter().enumerate() {
            if excluded.contains(&w) {
                continue;
            }
            let Some(q) = l.queue_ms else { continue };
            if q < negligible_ms {
                continue;
            }
            let life_ms = l.e2e_ms.unwrap_or(q).max(q);
            let back = ((life_ms / grid.width_ms as f64).ceil() as usize).min(w);
            let span = window_max[w - back..=w].iter().flatten();
            let (in_flight, running) = span.fold((None::<f64>, 0.0f64), |(a, b), x| {
                (Some(a.map_or(x.0, |a| a.max(x.0))), b.max(x.1))
            });
            // Where the gauges contradict Little's law, the window's
            // requests in the engine are Little's.
            let little = r.little.get(w).copied().flatten();
            if let Some(in_flight) = little.map(|l| l.round().max(1.0)).or(in_flight) {
                rq.queued.push(Queued {
                    time_ms: grid.bounds(w).0,
                    in_flight,
                    running,
                    by: QueuedBy::QueueTime,
                    little: little.is_some(),
                });
            }
        }
        rq.settle(|t| grid.index(t));
        // A window charged by queue time may hold the peak without a
        // queued scrape: the peak "without queueing" is below the start.
        if let (Some(p), Some(s)) = (rq.peak_without_queueing, rq.queueing_starts_at())
            && p >= s
        {
            let below: Option<f64> = scrapes
                .iter()
                .filter(|(t, _, _)| !out_of_judgement(*t))
                .map(|(_, r, w)| r + w)
                .filter(|x| *x < s)
                .reduce(f64::max);
            rq.peak_without_queueing = below;
        }
        report.replicas.push(rq);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rq(name: &str, queued: &[(f64, f64)]) -> ReplicaQueue {
        let mut r = ReplicaQueue {
            name: name.into(),
            queued: queued
                .iter()
                .map(|&(in_flight, running)| Queued {
                    time_ms: 0,
                    in_flight,
                    running,
                    by: QueuedBy::Waiting,
                    little: false,
                })
                .collect(),
            ..ReplicaQueue::default()
        };
        r.settle(|_| Some(0));
        r
    }

    #[test]
    fn start_and_cap_across_replicas() {
        let r = QueueReport {
            replicas: vec![rq("a", &[(20.0, 16.0), (17.0, 16.0)]), rq("b", &[])],
            ..QueueReport::default()
        };
        assert_eq!(r.queueing_starts_at(), Some(17.0));
        assert_eq!(r.admission_cap(), Some(16.0));
        assert_eq!(r.queued_at_or_below(12.0).len(), 0);
        assert_eq!(r.queued_at_or_below(17.0).len(), 1);
    }
}
