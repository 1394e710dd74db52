//! The judges of the objectives: each reads the fleet per window and over
//! the capture, proves what the buckets allow and names its evidence
//! ([`super::registry::SLOS`] says which judge each objective has).

use vllm_lens_catalog::{Catalogue, Signal};
use vllm_lens_query::{HistWindow, Verdict};

use crate::SloId;
use crate::measure::inputs::{GpuInputs, Inputs, gpu_over_time, over_time};
use crate::measure::queue::QueueReport;
use crate::measure::rows;
use crate::model::{Bounds, Evidence, SloResult, SloStatus, SloThresholds};
use crate::text::round;
use crate::text::{bucket_text, ms_text, num, plural};

/// What the scorecard reads.
pub(crate) struct SloInput<'a> {
    pub thresholds: &'a SloThresholds,
    pub catalogue: &'a Catalogue,
    /// The fleet over the whole capture.
    pub whole: &'a Inputs,
    /// The fleet per window.
    pub windows: &'a [Inputs],
    /// The fleet's GPUs per window (empty without DCGM).
    pub gpu_windows: &'a [GpuInputs],
    /// Window starts, ms.
    pub starts: &'a [i64],
    pub queue: &'a QueueReport,
    /// The longest time a replica was unreachable at a restart: (replica,
    /// ms). Requests sent then failed before any counter saw them.
    pub outage: Option<(&'a str, i64)>,
    /// `--max-num-seqs` per replica, as the server was told (`None`
    /// where the capture does not say).
    pub max_num_seqs: Option<f64>,
}

/// The mean parts of time to first token where it misses (its failing
/// windows, or the whole capture when none is proven over), ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TtftParts {
    pub queue_ms: f64,
    pub prefill_ms: f64,
    /// TTFT − queue − prefill (the API server, or edges of the capture).
    pub rest_ms: f64,
}

impl TtftParts {
    /// (queue, prefill, rest) as shares of their sum, 0..=1.
    pub fn shares(&self) -> (f64, f64, f64) {
        let total = self.queue_ms + self.prefill_ms + self.rest_ms;
        if total > 0.0 {
            (
                self.queue_ms / total,
                self.prefill_ms / total,
                self.rest_ms / total,
            )
        } else {
            (1.0, 0.0, 0.0)
        }
    }
}

fn names(cat: &Catalogue, signals: &[Signal]) -> Vec<String> {
    signals
        .iter()
        .flat_map(|s| cat.get(*s).used.iter().map(|n| n.to_string()))
        .collect()
}

fn ev(cat: &Catalogue, label: &str, value: Option<f64>, unit: &str, s: &[Signal]) -> Evidence {
    Evidence {
        label: label.to_string(),
        value: value.map(round),
        unit: unit.to_string(),
        metrics: names(cat, s),
        windows: Vec::new(),
    }
}

/// The windows proven over (by start), or every window when none is.
pub(crate) fn picked(i: &SloInput<'_>, failing: &[i64]) -> Vec<usize> {
    if failing.is_empty() {
        (0..i.windows.len()).collect()
    } else {
        i.starts
            .iter()
            .enumerate()
            .filter(|(_, s)| failing.contains(s))
            .map(|(w, _)| w)
            .collect()
    }
}

/// TTFT's mean parts over some windows.
pub(crate) fn ttft_mean_parts(i: &SloInput<'_>, pick: &[usize]) -> Option<TtftParts> {
    let (inputs, _) = over(i, pick);
    let l = rows::latency(&inputs);
    let (ttft, q, p) = (l.ttft_ms?, l.queue_ms?, l.prefill_ms?);
    Some(TtftParts {
        queue_ms: q,
        prefill_ms: p,
        rest_ms: (ttft - q - p).max(0.0),
    })
}

fn bounds(h: &HistWindow, q: f64) -> Option<Bounds> {
    h.quantile(q).map(|x| Bounds {
        low: x.lower * 1000.0,
        high: x.upper.is_finite().then_some(x.upper * 1000.0),
    })
}

pub(super) fn quantile(
    i: &SloInput<'_>,
    id: SloId,
    signal: Signal,
    objective: f64,
    what: &str,
    observations: &str,
) -> SloResult {
    let title = format!("{what} p95 ≤ {}", ms_text(objective));
    let h = i.whole.hists.get(&signal);
    let proof = h.and_then(|h| h.buckets.prove(0.95, objective / 1000.0));
    let value = h.and_then(|h| h.quantile(0.95)).map(|q| q.value * 1000.0);
    let b = h.and_then(|h| bounds(h, 0.95));
    let mut failing = Vec::new();
    let mut undecided = Vec::new();
    for (w, inputs) in i.windows.iter().enumerate() {
        if let Some(p) = inputs
            .hists
            .get(&signal)
            .and_then(|h| h.buckets.prove(0.95, objective / 1000.0))
        {
            match p.verdict {
                Verdict::Beyond => failing.push(i.starts[w]),
                Verdict::Undecided => undecided.push(i.starts[w]),
                Verdict::Within => {}
            }
        }
    }
    let Some(proof) = proof else {
        let why = if i.catalogue.get(signal).is_missing() {
            format!("{} is not in the capture.", signal.info().title)
        } else if h.is_some_and(|h| h.count > 0.0) {
            "Its instances have different bucket layouts, which are never summed, so no quantile can be read.".to_string()
        } else {
            format!("No {observations} were observed.")
        };
        return SloResult {
            id,
            title,
            status: SloStatus::NotExercised,
            value: None,
            threshold: objective,
            headroom: None,
            unit: "ms".into(),
            bounds: None,
            admission_cap: None,
            queueing_starts_at: None,
            queueing_decided_by: None,
            failing_windows: Vec::new(),
            cannot_tell_windows: Vec::new(),
            excluded_windows: Vec::new(),
            breakdown: Vec::new(),
            explanation: why,
        };
    };
    let status = match proof.verdict {
        Verdict::Within => SloStatus::Pass,
        Verdict::Beyond => SloStatus::Fail,
        Verdict::Undecided => SloStatus::CannotTell,
    };
    let headroom = match (proof.verdict, b) {
        (Verdict::Within, Some(Bounds { high: Some(h), .. })) => Some(objective - h),
        (Verdict::Beyond, Some(b)) => Some(objective - b.low),
        _ => None,
    };
    let pct = |x: f64| format!("{} %", num(100.0 * x));
    let below = proof.edge_below.map_or(String::new(), |e| {
        format!(
            "{} of {observations} within {}",
            pct(proof.share_below),
            ms_text(e * 1000.0)
        )
    });
    // The objective on a bucket edge: both edges are that edge, said once.
    let above = if proof.edge_above.is_finite() && proof.edge_below != Some(proof.edge_above) {
        format!(
            "{} within {}",
            pct(proof.share_above),
            ms_text(proof.edge_above * 1000.0)
        )
    } else {
        String::new()
    };
    let shares = [below, above]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let where_ = b.map_or(String::new(), |b| {
        bucket_text(b.low, b.high.unwrap_or(f64::INFINITY))
    });
    let verdict = match proof.verdict {
        Verdict::Within if proof.on_edge => format!(
            "the objective is a bucket edge, so the buckets prove the p95 is at most {}",
            ms_text(objective)
        ),
        Verdict::Within => format!(
            "the buckets prove the p95 is at most {}",
            ms_text(objective)
        ),
        Verdict::Beyond => format!(
            "the buckets prove the p95 is above {}{}",
            ms_text(objective),
            b.filter(|b| b.low > 0.0).map_or(String::new(), |b| format!(
                ", over {}× the objective",
                num((b.low / objective).max(1.0))
            ))
        ),
        Verdict::Undecided => format!(
            "the objective ({}) lies inside the bucket that holds the p95, so the buckets cannot tell; a bucket edge at {} (vLLM 0.32+ can set custom buckets) would decide it",
            ms_text(objective),
            ms_text(objective)
        ),
    };
    let explanation = format!(
        "p95 of {} over the whole capture, judged from bucket edges only (Prometheus' interpolated value, {}, is a guess inside the bucket): {shares}. The p95 lies {where_}; {verdict}. Windows: {} proven over, {} undecided.",
        names(i.catalogue, &[signal]).join(", "),
        value.map_or("none".into(), |v| format!("{} ms", num(v))),
        failing.len(),
        undecided.len()
    );
    let breakdown = if status == SloStatus::Fail || status == SloStatus::CannotTell {
        let pick = picked(i, &failing);
        match id {
            SloId::TtftP95 => ttft_parts(i, &pick),
            _ => itl_parts(i, &pick),
        }
    } else {
        Vec::new()
    };
    SloResult {
        id,
        title,
        status,
        value: value.map(round),
        threshold: objective,
        headroom: headroom.map(round),
        unit: "ms".into(),
        bounds: b,
        admission_cap: None,
        queueing_starts_at: None,
        queueing_decided_by: None,
        failing_windows: failing,
        cannot_tell_windows: undecided,
        excluded_windows: Vec::new(),
        breakdown,
        explanation,
    }
}

fn over(i: &SloInput<'_>, pick: &[usize]) -> (Inputs, Option<GpuInputs>) {
    let chosen: Vec<Inputs> = pick.iter().map(|&w| i.windows[w].clone()).collect();
    let gpu = (!i.gpu_windows.is_empty()).then(|| {
        let g: Vec<GpuInputs> = pick.iter().map(|&w| i.gpu_windows[w].clone()).collect();
        gpu_over_time(&g)
    });
    (over_time(&chosen), gpu)
}

fn scope_label(i: &SloInput<'_>, pick: &[usize]) -> String {
    if pick.len() == i.windows.len() {
        "whole capture".into()
    } else {
        format!("{} proven over", plural(pick.len(), "window", "windows"))
    }
}

/// TTFT: frontend, queue and prefill (means).
fn ttft_parts(i: &SloInput<'_>, pick: &[usize]) -> Vec<Evidence> {
    let (inputs, _) = over(i, pick);
    let l = rows::latency(&inputs);
    let cat = i.catalogue;
    let scope = scope_label(i, pick);
    let mut parts = Vec::new();
    if let (Some(ttft), Some(q), Some(p)) = (l.ttft_ms, l.queue_ms, l.prefill_ms) {
        parts.push(ev(cat, "queue (mean)", Some(q), "ms", &[Signal::QueueTime]));
        parts.push(ev(
            cat,
            "prefill (mean)",
            Some(p),
            "ms",
            &[Signal::PrefillTime],
        ));
        // TTFT is observed at the first token, queue and prefill when the
        // request ends: where the two counts differ (long requests at the
        // capture's edges), the rest is not only the API server.
        let count = |s: Signal| inputs.hists.get(&s).map(|h| h.count);
        let (first, ended) = (count(Signal::Ttft), count(Signal::QueueTime));
        let apart =
            matches!((first, ended), (Some(a), Some(b)) if b > 0.0 && (a - b).abs() > 0.1 * b);
        let label = if apart {
            format!(
                "rest: TTFT − queue − prefill (mean; TTFT counts {} requests, queue and prefill {} finished ones, so this is not only API-server time)",
                num(first.unwrap_or_default()),
                num(ended.unwrap_or_default())
            )
        } else {
            "frontend: TTFT − queue − prefill (mean)".to_string()
        };
        parts.push(ev(
            cat,
            &label,
            Some((ttft - q - p).max(0.0)),
            "ms",
            &[Signal::Ttft, Signal::QueueTime, Signal::PrefillTime],
        ));
        parts.sort_by(|a, b| b.value.unwrap_or(0.0).total_cmp(&a.value.unwrap_or(0.0)));
    }
    parts.insert(
        0,
        ev(
            cat,
            &format!("TTFT (mean, {scope})"),
            l.ttft_ms,
            "ms",
            &[Signal::Ttft],
        ),
    );
    parts
}

/// Inter-token latency: the step time against the batch and the GPU.
fn itl_parts(i: &SloInput<'_>, pick: &[usize]) -> Vec<Evidence> {
    let (inputs, gpu) = over(i, pick);
    let l = rows::latency(&inputs);
    let e = rows::efficiency(&inputs);
    let g = gpu.as_ref().map(rows::gpu).unwrap_or_default();
    let cat = i.catalogue;
    let scope = scope_label(i, pick);
    vec![
        ev(
            cat,
            &format!("inter-token latency (mean, {scope})"),
            l.inter_token_ms,
            "ms",
            &[Signal::InterTokenLatency],
        ),
        ev(
            cat,
            "inter-token latency p50 (whole capture)",
            l.itl_p50_ms,
            "ms",
            &[Signal::InterTokenLatency],
        ),
        ev(
            cat,
            "running requests (mean): the batch each step serves",
            e.running_avg,
            "requests",
            &[Signal::Running],
        ),
        ev(
            cat,
            "tokens per engine step (mean)",
            e.tokens_per_iteration,
            "tokens",
            &[Signal::IterationTokens],
        ),
        ev(
            cat,
            "DRAM active (mean)",
            g.dram_active_pct_avg,
            "%",
            &[Signal::DramActive],
        ),
        ev(
            cat,
            "tensor active (mean)",
            g.tensor_active_pct_avg,
            "%",
            &[Signal::TensorActive],
        ),
    ]
}

pub(super) fn queue(i: &SloInput<'_>) -> SloResult {
    let n = i.thresholds.queue_concurrency;
    let q = i.queue;
    let title = format!("No queueing at {} requests in flight", num(n));
    let first = q.queue_start();
    let start = first.map(|s| s.at);
    let cap = q.admission_cap();
    let peak = q.peak_in_flight();
    let low = q.queued_at_or_below(n);
    let excluded: Vec<i64> = q.excluded.iter().map(|&w| i.starts[w]).collect();
    let excluded_text = if excluded.is_empty() {
        String::new()
    } else {
        format!(
            " {} left out (warm-up or restart).",
            plural(excluded.len(), "window is", "windows are")
        )
    };
    let status = if !q.measured {
        SloStatus::NotExercised
    } else if !low.is_empty() || cap.is_some_and(|c| c < n) {
        SloStatus::Fail
    } else if peak.is_some_and(|p| p >= n) {
        SloStatus::Pass
    } else {
        SloStatus::NotExercised
    };
    let value = start.or(q.peak_without_queueing());
    let headroom = match (status, start) {
        (SloStatus::NotExercised, _) => None,
        (_, Some(s)) => Some(s - 1.0 - n),
        (_, None) => peak.map(|p| p - n),
    };
    let mut failing: Vec<i64> = low
        .iter()
        .filter_map(|(_, x)| i.starts.iter().rev().find(|s| **s <= x.time_ms).copied())
        .collect();
    if cap.is_some_and(|c| c < n) {
        failing.extend(q.queued_windows().iter().map(|&w| i.starts[w]));
    }
    failing.sort_unstable();
    failing.dedup();
    let waiting = q.waiting_metric.clone().unwrap_or("waiting".into());
    let explanation = if !q.measured {
        "Running and waiting requests are not both exported, so requests in flight cannot be counted.".to_string()
    } else {
        let seen = match (first, cap) {
            (Some(s), Some(c)) => format!(
                "Queueing was seen from {} requests in flight ({}); at most {} ran at once while others waited (the admission cap: --max-num-seqs, or the KV cache when it fills first).",
                num(s.at),
                s.evidence(i.thresholds.queue_negligible_ms),
                num(c)
            ),
            (Some(s), None) => format!(
                "Queueing was seen from {} requests in flight ({}).",
                num(s.at),
                s.evidence(i.thresholds.queue_negligible_ms)
            ),
            _ => format!(
                "Nothing queued; at most {} requests were in flight on a replica.",
                peak.map_or("?".into(), num)
            ),
        };
        let isolated: Vec<f64> = q.isolated().map(|x| x.in_flight).collect();
        let seen = if isolated.is_empty() {
            seen
        } else {
            format!(
                "{seen} {} below that ({} in flight) {} too few to say queueing starts there ({} are needed).",
                plural(isolated.len(), "sighting", "sightings"),
                isolated
                    .iter()
                    .map(|x| num(*x))
                    .collect::<Vec<_>>()
                    .join(", "),
                if isolated.len() == 1 { "is" } else { "are" },
                crate::measure::thresholds::QUEUEING_SEEN_TIMES
            )
        };
        let verdict = match status {
            SloStatus::Pass => format!(
                "{} requests in flight were admitted without waiting.",
                num(n)
            ),
            SloStatus::Fail if !low.is_empty() => {
                format!("Requests queued with {} or fewer in flight.", num(n))
            }
            SloStatus::Fail => format!(
                "The server runs at most {} at once, fewer than {}.",
                cap.map_or("?".into(), num),
                num(n)
            ),
            _ => {
                let untested = format!(
                    "The capture never had {} requests in flight on a replica, so the objective was not put to the test",
                    num(n)
                );
                match i.max_num_seqs.filter(|&c| c < n) {
                    // The configuration decides what the load did not.
                    Some(c) => format!(
                        "{untested}; as configured it cannot hold: --max-num-seqs {} runs at most {} at once per replica, so at {} in flight {} would wait.",
                        num(c),
                        num(c),
                        num(n),
                        num(n - c)
                    ),
                    None => format!("{untested}."),
                }
            }
        };
        format!(
            "In flight = running + waiting per replica at each scrape. Queued: {waiting} above zero on two consecutive scrapes, or a window's mean queue time at {} ms or more (charged to the requests in flight over one request's life, since vLLM records queue time at the end). {seen} {verdict}{excluded_text}",
            num(i.thresholds.queue_negligible_ms)
        )
    };
    SloResult {
        id: SloId::QueueAtConcurrency,
        title,
        status,
        value,
        threshold: n,
        headroom,
        unit: "requests".into(),
        bounds: None,
        admission_cap: cap,
        queueing_starts_at: start,
        queueing_decided_by: first.map(|s| s.decided_by()),
        failing_windows: failing,
        cannot_tell_windows: Vec::new(),
        excluded_windows: excluded,
        breakdown: Vec::new(),
        explanation,
    }
}

/// Errors + aborts, with the client disconnects the engine does not count
/// (see [`Disconnects`]).
pub(super) fn errors(i: &SloInput<'_>) -> SloResult {
    let t = i.thresholds.error_abort_pct;
    let count = |x: &Inputs, r: &str| x.reasons.get(r).map_or(0.0, |c| c.increase);
    let bad = count(i.whole, "error") + count(i.whole, "abort");
    let finished: f64 = i.whole.reasons.values().map(|x| x.increase).sum::<f64>() + 0.0;
    let engine_pct = rows::outcomes(i.whole).error_abort_pct;
    let d = Disconnects::of(i);
    // (low, estimate, high), %.
    let share = |extra: f64| 100.0 * (bad + extra) / (finished + extra);
    let range = match (engine_pct, d) {
        (None, _) => None,
        (Some(e), None) => Some((e, e, e)),
        (Some(_), Some(d)) => Some((share(d.low), share(d.estimate), share(d.high))),
    };
    // A replica down for longer than a few scrapes refused requests that
    // no counter saw: a share below the objective cannot be told then.
    let outage = i.outage.filter(|(_, ms)| *ms > 0);
    let status = match range {
        None => SloStatus::NotExercised,
        Some((lo, _, _)) if lo >= t => SloStatus::Fail,
        Some(_) if outage.is_some() => SloStatus::CannotTell,
        Some((_, _, hi)) if hi < t => SloStatus::Pass,
        Some(_) => SloStatus::CannotTell,
    };
    let mut failing = Vec::new();
    for (w, inputs) in i.windows.iter().enumerate() {
        let o = rows::outcomes(inputs);
        let done: f64 = inputs.reasons.values().map(|x| x.increase).sum::<f64>();
        let extra = o.client_disconnects.unwrap_or(0.0);
        let bad_w = count(inputs, "error") + count(inputs, "abort");
        if done + extra > 0.0 && 100.0 * (bad_w + extra) / (done + extra) >= t {
            failing.push(w);
        }
    }
    let breakdown = if matches!(status, SloStatus::Fail | SloStatus::CannotTell) {
        error_parts(i, &failing, d)
    } else {
        Vec::new()
    };
    let value = range.map(|r| r.1);
    let method = match d {
        Some(d) => format!(
            "(finished_reason error + abort + estimated client disconnects) ÷ (finished requests + disconnects) over the whole capture: engine errors + aborts {}, and at least {} client disconnects (a lower bound; HTTP 2xx on the completion handlers − finished requests, between {} and {}: at each edge of the capture a finish and its answer can fall on either side of a scrape, by up to {} as seen in the capture's own windows), so the share lies between {} and {}.",
            pct_text(engine_pct.unwrap_or_default()),
            num(d.estimate.round()),
            num(d.low.round()),
            num(d.high.round()),
            num(d.skew),
            pct_text(range.map_or(0.0, |r| r.0)),
            pct_text(range.map_or(0.0, |r| r.2)),
        ),
        None => "(finished_reason error + abort) ÷ all finished requests over the whole capture. Client disconnects cannot be estimated here (no HTTP status counts on the completion handlers), and vLLM V1 does not count them as aborts.".to_string(),
    };
    let verdict = match (status, outage) {
        (SloStatus::CannotTell, Some((_, ms))) => format!(
            " A replica was unreachable for up to {} at a restart: the requests sent then failed before any counter saw them (a client or load balancer counts them), so whether the share stayed under {} % cannot be told from /metrics.",
            ms_text(ms as f64),
            num(t)
        ),
        (SloStatus::CannotTell, None) => format!(
            " The objective ({} %) lies inside that range, so the capture cannot tell.",
            num(t)
        ),
        _ => String::new(),
    };
    SloResult {
        id: SloId::ErrorAbortRate,
        title: format!("Errors + aborts < {} % of finished requests", num(t)),
        status,
        value: value.map(round),
        threshold: t,
        headroom: match status {
            SloStatus::Pass | SloStatus::Fail => value.map(|v| round(t - v)),
            _ => None,
        },
        unit: "%".into(),
        bounds: range.filter(|r| r.0 != r.2).map(|r| Bounds {
            low: round(r.0),
            high: Some(round(r.2)),
        }),
        admission_cap: None,
        queueing_starts_at: None,
        queueing_decided_by: None,
        failing_windows: failing.iter().map(|&w| i.starts[w]).collect(),
        cannot_tell_windows: Vec::new(),
        excluded_windows: Vec::new(),
        breakdown,
        explanation: format!(
            "{method}{verdict} Headroom in percentage points. {} at or above the objective.",
            plural(failing.len(), "window", "windows")
        ),
    }
}

/// A share in words that never rounds a share above zero to "0 %".
fn pct_text(p: f64) -> String {
    if p == 0.0 {
        "0 %".into()
    } else if p < 0.01 {
        "under 0.01 %".into()
    } else {
        format!("{} %", num((p * 100.0).round() / 100.0))
    }
}

/// Client disconnects over the capture: HTTP 2xx on the completion
/// handlers minus finished requests. Between scrapes the two counts run
/// together; at each edge of the capture a request's finish and its answer
/// can fall on either side of a scrape. The largest such skew any window
/// shows (a window with more finishes than answers can only be skew) bounds
/// the estimate at each edge: it lies within ± twice that skew (at least
/// one request).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Disconnects {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The largest skew seen in one window, requests.
    pub skew: f64,
}

impl Disconnects {
    fn of(i: &SloInput<'_>) -> Option<Disconnects> {
        let raw = rows::disconnects_raw(i.whole)?;
        let skew = i
            .windows
            .iter()
            .filter_map(rows::disconnects_raw)
            .map(|x| (-x).max(0.0))
            .fold(0.0, f64::max);
        let estimate = raw.max(0.0);
        let margin = (2.0 * skew).max(1.0);
        Some(Disconnects {
            estimate,
            low: (estimate - margin).max(0.0),
            high: estimate + margin,
            skew,
        })
    }
}

/// A failing or undecided error objective, by its parts.
fn error_parts(i: &SloInput<'_>, failing: &[usize], d: Option<Disconnects>) -> Vec<Evidence> {
    let pick: Vec<usize> = if failing.is_empty() {
        (0..i.windows.len()).collect()
    } else {
        failing.to_vec()
    };
    let (inputs, _) = over(i, &pick);
    let count = |r: &str| inputs.reasons.get(r).map(|x| x.increase);
    let status = |s: &str| inputs.http_status.get(s).map(|x| x.increase);
    let scope = scope_label(i, &pick);
    let cat = i.catalogue;
    let mut parts = vec![
        ev(
            cat,
            &format!("finished_reason=error ({scope})"),
            count("error"),
            "requests",
            &[Signal::FinishedRequests],
        ),
        ev(
            cat,
            &format!("finished_reason=abort ({scope})"),
            count("abort"),
            "requests",
            &[Signal::FinishedRequests],
        ),
    ];
    if d.is_some() {
        parts.push(ev(
            cat,
            &format!("client disconnects, estimated ({scope})"),
            rows::outcomes(&inputs).client_disconnects,
            "requests",
            &[Signal::HttpRequests, Signal::FinishedRequests],
        ));
    }
    parts.sort_by(|a, b| b.value.unwrap_or(0.0).total_cmp(&a.value.unwrap_or(0.0)));
    parts.push(ev(
        cat,
        &format!("HTTP 4xx ({scope})"),
        status("4xx"),
        "requests",
        &[Signal::HttpRequests],
    ));
    parts.push(ev(
        cat,
        &format!("HTTP 5xx ({scope})"),
        status("5xx"),
        "requests",
        &[Signal::HttpRequests],
    ));
    parts
}
