//! Scenarios: today and each change at the capture's peak load level, the
//! predicted scorecards, the queueing start and the load sweep.

use vllm_lens_engine::sched::Load;
use vllm_lens_model::Report;
use vllm_lens_model::forecast::{
    Change, EngineFit, EngineSettings, Forecast, ForecastLoad, ForecastScenario, ForecastStatus,
    ForecastThroughput, LoadShape, OtherShape, PredictedSlo, Range, SweepRow,
};
use vllm_lens_model::ids::{PhaseKind, RecId, SloId};
use vllm_lens_model::levers::{Direction, Knob};
use vllm_lens_model::report::SloStatus;
use vllm_lens_model::text::num;

use crate::fit::{Fit, Theta, from_model};
use crate::input::{Ask, Setting, Win, windows};
use crate::replay::{self, Figures, Setup};

/// The loaded phase with the most requests in flight, as the mean of its
/// windows (or the busiest window).
pub fn peak(r: &Report, wins: &[Win]) -> Option<Win> {
    let phase = r
        .phases
        .iter()
        .filter(|p| {
            matches!(
                p.kind,
                PhaseKind::Steady | PhaseKind::Overload | PhaseKind::Ramp
            )
        })
        .filter(|p| {
            wins.iter()
                .any(|w| w.start_ms >= p.start_ms && w.start_ms < p.end_ms)
        })
        .max_by(|a, b| {
            let f = |p: &vllm_lens_model::report::Phase| {
                p.in_flight_from_latency.or(p.in_flight_avg).unwrap_or(0.0)
            };
            f(a).total_cmp(&f(b))
        });
    let mine: Vec<&Win> = match phase {
        Some(p) => wins
            .iter()
            .filter(|w| w.start_ms >= p.start_ms && w.start_ms < p.end_ms)
            .collect(),
        None => wins
            .iter()
            .max_by(|a, b| a.in_flight.total_cmp(&b.in_flight))
            .into_iter()
            .collect(),
    };
    let n = mine.len() as f64;
    if n == 0.0 {
        return None;
    }
    let mean = |f: fn(&Win) -> f64| mine.iter().map(|w| f(w)).sum::<f64>() / n;
    let mut w = mine[0].clone();
    w.start_ms = mine[0].start_ms;
    w.end_ms = mine[mine.len() - 1].end_ms;
    w.per_s = mean(|w| w.per_s);
    w.in_flight = mean(|w| w.in_flight);
    w.users = mine.iter().map(|w| w.users).fold(1.0, f64::max);
    w.prompt = mean(|w| w.prompt);
    w.generated = mean(|w| w.generated);
    w.hit = mean(|w| w.hit);
    Some(w)
}

/// The load at `factor` × the peak, per replica, for `replicas` replicas.
fn load_at(m: &EngineFit, p: &Win, factor: f64, replicas: u32) -> Load {
    // Users spread over the replicas (a round-robin balancer).
    let today = f64::from(m.settings.replicas.max(1));
    let share = today / f64::from(replicas.max(1));
    Load::Closed {
        users: (p.users * factor * share).round().max(1.0) as u32,
        think_s: p.think_s(),
    }
}

fn setup(p: &Win, s: &EngineSettings, shared: u32, load: Load) -> Setup {
    Setup {
        settings: s.clone(),
        prompt: p.prompt,
        generated: p.generated,
        shared: if s.prefix_caching { shared } else { 0 },
        load,
    }
}

/// The shared prefix replayed: the stated one, or what today's hit rate
/// implies (when caching is on today).
fn shared_tokens(m: &EngineFit, p: &Win, s: &EngineSettings) -> Option<u32> {
    if let Some(t) = m.workload.shared_prefix_tokens.filter(|t| *t > 0.0) {
        let b = f64::from(s.block_size.max(1));
        return Some(((t / b).floor() * b) as u32);
    }
    if m.settings.prefix_caching {
        return Some(replay::shared_for(p.hit, p.prompt, s.block_size));
    }
    (!s.prefix_caching).then_some(0)
}

/// Share of the time some request must wait for a load to count as
/// queueing: the scorecard reads waiting requests at its scrapes, so a
/// queue that forms for one step in twenty is not one it sees.
const WAITING_SHARE: f64 = 0.1;

/// A start and how it was found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Start {
    /// Where queueing starts, in flight per replica (`None`: no queueing
    /// up to twice the cap).
    pub at: Option<f64>,
    /// Read from the replay's scrapes at the load, by the report's rule:
    /// the scorecard of a capture of this load would say so (`None`: no
    /// scrapes to read, or none saw queueing; then `at` is the closed
    /// loop's, beyond the load).
    pub read: Option<f64>,
    /// Scrapes were read (a scrape-based capture).
    pub scraped: bool,
}

/// The load a start is read at: the replay of the capture's load, read
/// like the capture.
#[derive(Clone, Copy, Debug)]
pub struct ReadAt<'a> {
    /// The replay at the load.
    pub setup: &'a Setup,
    /// The capture's scrape interval and judged span.
    pub scraped: replay::Scraped,
}

/// Where queueing starts with the best fit: read from the replay's
/// scrapes at the load (`at`) where they saw queueing, otherwise the
/// in-flight count per replica from which requests wait in a closed loop
/// at the peak's workload.
pub fn queueing_start(
    m: &EngineFit,
    fit: &Fit,
    p: &Win,
    s: &EngineSettings,
    at: Option<ReadAt<'_>>,
) -> Start {
    start_with(m, fit, &fit.central, p, s, at, None)
}

/// [`queueing_start`] with each parameter set the windows allow, the
/// best fit's first.
pub fn queueing_starts(
    m: &EngineFit,
    fit: &Fit,
    p: &Win,
    s: &EngineSettings,
    at: Option<ReadAt<'_>>,
) -> Vec<Start> {
    let mut seen: Vec<(Theta, Start)> = Vec::new();
    for t in fit.thetas() {
        if let Some(&(_, q)) = seen.iter().find(|(u, _)| *u == t) {
            seen.push((t, q));
            continue;
        }
        // The best fit's closed-loop start (the first) is where the
        // others' begin (none: the whole range).
        let hint = seen.first().and_then(|(_, q)| q.closed_hint());
        seen.push((t, start_with(m, fit, &t, p, s, at, hint)));
    }
    seen.into_iter().map(|(_, q)| q).collect()
}

impl Start {
    fn closed_hint(&self) -> Option<f64> {
        if self.read.is_some() { None } else { self.at }
    }
}

fn start_with(
    m: &EngineFit,
    fit: &Fit,
    theta: &Theta,
    p: &Win,
    s: &EngineSettings,
    at: Option<ReadAt<'_>>,
    hint: Option<f64>,
) -> Start {
    let read =
        at.and_then(|a| replay::scorecard_start(a.setup, fit, theta, &m.workload, a.scraped));
    Start {
        at: read.or_else(|| queueing_start_with(m, fit, theta, p, s, hint)),
        read,
        scraped: at.is_some(),
    }
}

/// The queue objective at `n` in flight from each parameter set's start,
/// at a load of `users` per replica.
///
/// Queued under a set: its scrapes, read like the capture's, saw queueing
/// from `n` or fewer in flight; without scrapes to read, its closed-loop
/// start within the objective and the load reaching it. Within the
/// back-test's tolerance of the objective (2 requests) the replay cannot
/// tell, nor where the scrapes saw no queue but the closed loop queues
/// within the load (a queue the capture's scrapes may or may not catch).
fn queue_status(starts: &[Start], n: f64, users: f64) -> SloStatus {
    let tol = crate::backtest::QUEUE_START_TOLERANCE;
    let queues = |q: &Start| match (q.scraped, q.read, q.at) {
        (true, read, _) => read.is_some_and(|r| r <= n),
        (false, _, at) => at.is_some_and(|q| q <= n && users >= q),
    };
    let near = |q: &Start| {
        q.at.is_some_and(|a| (a - n).abs() <= tol && (q.read.is_some() || users >= n))
    };
    let unseen =
        |q: &Start| q.scraped && q.read.is_none() && q.at.is_some_and(|a| a <= n && users >= a);
    if starts.iter().all(queues) && !starts.iter().any(near) {
        SloStatus::Fail
    } else if starts.iter().any(|q| queues(q) || near(q) || unseen(q)) {
        SloStatus::CannotTell
    } else if users >= n {
        SloStatus::Pass
    } else {
        SloStatus::NotExercised
    }
}

fn queueing_start_with(
    m: &EngineFit,
    fit: &Fit,
    theta: &Theta,
    p: &Win,
    s: &EngineSettings,
    hint: Option<f64>,
) -> Option<f64> {
    let shared = shared_tokens(m, p, s).unwrap_or(0);
    let waits = |n: u32| {
        let load = Load::Closed {
            users: n,
            think_s: 0.0,
        };
        replay::replay(&setup(p, s, shared, load), fit, theta, &m.workload).waiting_share
            > WAITING_SHARE
    };
    let top = (s.max_num_seqs.saturating_mul(2) + 8).min(4096);
    // A bracket: `lo` does not wait, `hi` does. From a hint (another
    // parameter set's start) by galloping away from it, which takes a few
    // replays where the sets agree; otherwise the whole range.
    let (mut lo, mut hi) = match hint {
        Some(h) => {
            let h = (h as u32).clamp(1, top);
            let mut step = 1;
            if waits(h) {
                let mut hi = h;
                loop {
                    if hi == 1 {
                        return Some(1.0);
                    }
                    let c = hi.saturating_sub(step).max(1);
                    if !waits(c) {
                        break (c, hi);
                    }
                    hi = c;
                    step *= 2;
                }
            } else {
                let mut lo = h;
                loop {
                    if lo >= top {
                        return None;
                    }
                    let c = lo.saturating_add(step).min(top);
                    if waits(c) {
                        break (lo, c);
                    }
                    lo = c;
                    step *= 2;
                }
            }
        }
        None => {
            if !waits(top) {
                return None;
            }
            if waits(1) {
                return Some(1.0);
            }
            (1u32, top)
        }
    };
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if waits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(f64::from(hi))
}

fn widen(f: &Forecast) -> f64 {
    let e = &f.calibration.error;
    let worst = e
        .ttft_p95_pct
        .unwrap_or(0.0)
        .max(e.itl_p95_pct.unwrap_or(0.0))
        / 100.0;
    worst.clamp(0.10, 0.5)
}

struct Predicted {
    ttft: Option<Range>,
    itl: Option<Range>,
    figs: Vec<Figures>,
}

fn predict_at(m: &EngineFit, fit: &Fit, su: &Setup, w: f64) -> Predicted {
    let figs: Vec<Figures> = fit
        .thetas()
        .iter()
        .map(|t| replay::replay(su, fit, t, &m.workload))
        .collect();
    let range = |xs: Vec<f64>| {
        (!xs.is_empty()).then(|| Range {
            low: xs.iter().copied().fold(f64::INFINITY, f64::min) * (1.0 - w),
            high: xs.iter().copied().fold(0.0, f64::max) * (1.0 + w),
        })
    };
    Predicted {
        ttft: range(figs.iter().filter_map(|f| f.ttft_p95_ms).collect()),
        itl: range(figs.iter().filter_map(|f| f.itl_p95_ms).collect()),
        figs,
    }
}

fn status(r: Option<Range>, objective: f64) -> SloStatus {
    match r {
        None => SloStatus::NotExercised,
        Some(r) if r.high <= objective => SloStatus::Pass,
        Some(r) if r.low > objective => SloStatus::Fail,
        Some(_) => SloStatus::CannotTell,
    }
}

fn ms_slo(id: SloId, r: Option<Range>, objective: f64) -> PredictedSlo {
    PredictedSlo {
        id,
        status: status(r, objective),
        low: r.map(|r| r.low),
        high: r.map(|r| r.high),
        unit: "ms".into(),
        objective,
    }
}

/// The model, settings and replay of `changes` at `factor` × the peak.
fn changed(
    c: &Ctx<'_>,
    changes: &[Setting],
    factor: f64,
) -> Option<(EngineFit, EngineSettings, Setup)> {
    let mut s = c.model.settings.clone();
    let mut w = c.model.workload.clone();
    for ch in changes {
        ch.apply(&mut s, &mut w);
    }
    let mm = EngineFit {
        workload: w,
        ..c.model.clone()
    };
    let shared = shared_tokens(&mm, &c.peak, &s)?;
    let load = load_at(c.model, &c.peak, factor, s.replicas);
    let su = setup(&c.peak, &s, shared, load);
    Some((mm, s, su))
}

/// How the capture was read: its scrape interval and the span its loaded
/// windows judged (`None` for a pushdown export, whose figures are
/// per-window statistics, not scrapes).
pub fn scraped(r: &Report, wins: &[Win]) -> Option<replay::Scraped> {
    let b = &r.bundle;
    if b.pushdown_ms.is_some() {
        return None;
    }
    let interval_s = b.scrape_interval_ms.filter(|i| *i > 0)? as f64 / 1000.0;
    let span_s = wins
        .iter()
        .map(|w| (w.end_ms - w.start_ms) as f64)
        .sum::<f64>()
        / 1000.0;
    (span_s >= 2.0 * interval_s).then_some(replay::Scraped {
        interval_s,
        span_s: span_s.min(MAX_READ_S),
    })
}

/// The longest span a replay is read over, s (a bound on work: a day's
/// capture is read as ten minutes).
const MAX_READ_S: f64 = 600.0;

/// Everything one scenario needs.
struct Ctx<'a> {
    report: &'a Report,
    model: &'a EngineFit,
    fit: Fit,
    peak: Win,
    widen: f64,
    /// How the capture was read (`None`: a pushdown export).
    scraped: Option<replay::Scraped>,
}

fn context<'a>(report: &'a Report, f: &'a Forecast) -> Option<Ctx<'a>> {
    let model = f.model.as_ref()?;
    let fit = from_model(model)?;
    let wins = windows(report);
    let peak = peak(report, &wins)?;
    Some(Ctx {
        report,
        model,
        fit,
        peak,
        widen: widen(f),
        scraped: scraped(report, &wins),
    })
}

fn scenario(
    c: &Ctx<'_>,
    id: &str,
    title: String,
    changes: &[Setting],
    factor: f64,
) -> Option<ForecastScenario> {
    let m = c.model;
    let (mm, s, su) = changed(c, changes, factor)?;
    let load = su.load;
    let p = predict_at(&mm, &c.fit, &su, c.widen);
    let slo_t = &c.report.settings.slo;
    let read_at = c.scraped.map(|scraped| ReadAt {
        setup: &su,
        scraped,
    });
    let starts = queueing_starts(&mm, &c.fit, &c.peak, &s, read_at);
    let start = starts.first().and_then(|q| q.at);
    let reps = f64::from(s.replicas.max(1));
    let in_flight = Range {
        low: p
            .figs
            .iter()
            .map(|f| f.in_flight)
            .fold(f64::INFINITY, f64::min),
        high: p.figs.iter().map(|f| f.in_flight).fold(0.0, f64::max),
    };
    let n = slo_t.queue_concurrency;
    // The most requests the engine holds at once: every user, at times
    // (the scorecard reads the gauges' peak, not the mean).
    let users = match load {
        Load::Closed { users, .. } => f64::from(users),
        Load::Open { .. } => in_flight.high,
    };
    let queue_status = queue_status(&starts, n, users);
    let start_low = starts.iter().filter_map(|q| q.at).reduce(f64::min);
    let start_high = if starts.iter().any(|q| q.at.is_none()) {
        None
    } else {
        starts.iter().filter_map(|q| q.at).reduce(f64::max)
    };
    let per_min = |f: &Figures| f.per_s * 60.0 * reps;
    let throughput = ForecastThroughput {
        requests_per_min: Range {
            low: p.figs.iter().map(per_min).fold(f64::INFINITY, f64::min),
            high: p.figs.iter().map(per_min).fold(0.0, f64::max),
        },
        generated_tokens_per_s: Range {
            low: p
                .figs
                .iter()
                .map(|f| f.tokens_per_s * reps)
                .fold(f64::INFINITY, f64::min),
            high: p
                .figs
                .iter()
                .map(|f| f.tokens_per_s * reps)
                .fold(0.0, f64::max),
        },
        in_flight_per_replica: in_flight,
    };
    let slo = vec![
        ms_slo(SloId::TtftP95, p.ttft, slo_t.ttft_p95_ms),
        ms_slo(SloId::ItlP95, p.itl, slo_t.itl_p95_ms),
        PredictedSlo {
            id: SloId::QueueAtConcurrency,
            status: queue_status,
            low: start_low,
            high: start_high,
            unit: "requests".into(),
            objective: n,
        },
        PredictedSlo {
            id: SloId::ErrorAbortRate,
            status: SloStatus::NotExercised,
            low: None,
            high: None,
            unit: "%".into(),
            objective: slo_t.error_abort_pct,
        },
    ];
    let load_row = ForecastLoad {
        factor,
        shape: m.load_shape,
        in_flight: c.peak.users * factor * f64::from(m.settings.replicas.max(1)),
        requests_per_min: (throughput.requests_per_min.low + throughput.requests_per_min.high)
            / 2.0,
    };
    let mut out = ForecastScenario {
        id: id.to_string(),
        title,
        changes: changes
            .iter()
            .map(|ch| {
                let (setting, to) = ch.describe();
                Change {
                    setting: setting.to_string(),
                    from: today_value(m, *ch),
                    to,
                }
            })
            .collect(),
        recommendation: None,
        load: load_row,
        slo,
        queueing_starts_at: start,
        throughput,
        summary: String::new(),
        other_shape: None,
    };
    out.summary = summary_for(&out);
    let closed = p.figs.first().copied().unwrap_or_default();
    out.other_shape = Some(other_shape(c, &mm, &su, factor, &closed));
    Some(out)
}

/// The scenario replayed as an open loop at the peak's arrival rate ×
/// `factor` (per replica), with the best fit, against the closed replay.
fn other_shape(
    c: &Ctx<'_>,
    mm: &EngineFit,
    su: &Setup,
    factor: f64,
    closed: &Figures,
) -> OtherShape {
    let today = f64::from(c.model.settings.replicas.max(1));
    let reps = f64::from(su.settings.replicas.max(1));
    let rate = c.peak.per_s * factor * today / reps;
    let open = Setup {
        load: Load::Open { rate_per_s: rate },
        ..su.clone()
    };
    let o = replay::replay(&open, &c.fit, &c.fit.central, &mm.workload);
    let apart = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() > 0.25 * a.max(b),
        (None, None) => false,
        _ => true,
    };
    let slo_t = &c.report.settings.slo;
    let side = |x: Option<f64>, t: f64| x.map(|v| v <= t);
    let differs = apart(o.ttft_p95_ms, closed.ttft_p95_ms)
        || apart(o.itl_p95_ms, closed.itl_p95_ms)
        || apart(Some(o.in_flight), Some(closed.in_flight))
        || side(o.ttft_p95_ms, slo_t.ttft_p95_ms) != side(closed.ttft_p95_ms, slo_t.ttft_p95_ms)
        || side(o.itl_p95_ms, slo_t.itl_p95_ms) != side(closed.itl_p95_ms, slo_t.itl_p95_ms);
    let ms = |x: Option<f64>| x.map_or("none".to_string(), |v| format!("{} ms", num(v)));
    let per_min = rate * 60.0 * reps;
    let figures = format!(
        "TTFT p95 {}, inter-token p95 {}, ~{} in flight per replica",
        ms(o.ttft_p95_ms),
        ms(o.itl_p95_ms),
        num(o.in_flight)
    );
    let explanation = if differs {
        format!(
            "If ~{} requests/min kept arriving whatever the latency (an open loop, not users who wait for each answer): {figures}, against TTFT p95 {}, inter-token p95 {} and ~{} in flight with waiting users (best fit). The two differ: what this scenario gives depends on whether the clients wait for their answers.",
            num(per_min),
            ms(closed.ttft_p95_ms),
            ms(closed.itl_p95_ms),
            num(closed.in_flight)
        )
    } else {
        format!(
            "As an open loop (~{} requests/min whatever the latency): {figures}, within 25 % of the closed loop's: the load's shape does not change this prediction.",
            num(per_min)
        )
    };
    OtherShape {
        shape: LoadShape::Open,
        requests_per_min: per_min,
        ttft_p95_ms: o.ttft_p95_ms,
        itl_p95_ms: o.itl_p95_ms,
        in_flight_per_replica: o.in_flight,
        differs,
        explanation,
    }
}

fn today_value(m: &EngineFit, s: Setting) -> String {
    let t = &m.settings;
    match s {
        Setting::MaxNumSeqs(_) => t.max_num_seqs.to_string(),
        Setting::MaxNumBatchedTokens(_) => t.max_num_batched_tokens.to_string(),
        Setting::KvBlocks(_) => t.kv_blocks.to_string(),
        Setting::PrefixCaching(_) => if t.prefix_caching { "on" } else { "off" }.to_string(),
        Setting::Replicas(_) => t.replicas.to_string(),
        Setting::SharedPrefixTokens(_) => m
            .workload
            .shared_prefix_tokens
            .map_or("not stated".into(), num),
    }
}

fn range_text(r: Range, unit: &str) -> String {
    let (a, b) = (num(r.low), num(r.high));
    if a == b {
        format!("~{a} {unit}")
    } else {
        format!("{a}–{b} {unit}")
    }
}

/// The scenario in one line.
pub fn summary_for(s: &ForecastScenario) -> String {
    let mut parts = Vec::new();
    for p in &s.slo {
        let (Some(lo), Some(hi)) = (p.low, p.high) else {
            continue;
        };
        match p.id {
            SloId::TtftP95 => parts.push(format!(
                "TTFT p95 {} in the engine",
                range_text(Range { low: lo, high: hi }, "ms")
            )),
            SloId::ItlP95 => parts.push(format!(
                "inter-token p95 {}",
                range_text(Range { low: lo, high: hi }, "ms")
            )),
            _ => {}
        }
    }
    // The earliest start the parameter sets give, and the latest.
    let (early, late) = s
        .slo
        .iter()
        .find(|p| p.id == SloId::QueueAtConcurrency)
        .map_or((s.queueing_starts_at, s.queueing_starts_at), |p| {
            (p.low, p.high)
        });
    parts.push(match (early, late) {
        (Some(q), _) if q <= 1.0 => "requests wait at any load".to_string(),
        (Some(q), Some(h)) if h - q >= 0.5 => format!(
            "no queueing up to {}–{} in flight per replica",
            num(q - 1.0),
            num(h - 1.0)
        ),
        (Some(q), Some(_)) => format!("no queueing up to {} in flight per replica", num(q - 1.0)),
        (Some(q), None) => format!(
            "no queueing up to {} in flight per replica (or up to twice --max-num-seqs)",
            num(q - 1.0)
        ),
        (None, _) => "no queueing up to twice --max-num-seqs".to_string(),
    });
    parts.push(format!(
        "{} requests/min",
        range_text(s.throughput.requests_per_min, "").trim_end()
    ));
    format!(
        "predicted at {}× the peak load: {}",
        num(s.load.factor),
        parts.join(", ")
    )
}

/// The change a recommendation's lever makes, when the model has it.
fn change_for(m: &EngineFit, peak: &Win, knob: Knob, dir: Direction) -> Option<Setting> {
    let s = &m.settings;
    let round8 = |x: f64| ((x / 8.0).ceil() * 8.0) as u32;
    match (knob, dir) {
        (Knob::MaxNumSeqs, Direction::Up) => Some(Setting::MaxNumSeqs(
            (s.max_num_seqs * 2).max(round8(peak.in_flight * 1.5)),
        )),
        (Knob::MaxNumSeqs, Direction::Down) => {
            Some(Setting::MaxNumSeqs((s.max_num_seqs / 2).max(1)))
        }
        (Knob::MaxNumBatchedTokens, Direction::Up) => Some(Setting::MaxNumBatchedTokens(
            (s.max_num_batched_tokens * 2).max(2048),
        )),
        (Knob::MaxNumBatchedTokens, Direction::Down) => Some(Setting::MaxNumBatchedTokens(
            (s.max_num_batched_tokens / 2).max(256),
        )),
        (Knob::PrefixCaching, Direction::Up) => Some(Setting::PrefixCaching(true)),
        (Knob::Replicas, Direction::Up) => Some(Setting::Replicas(s.replicas * 2)),
        (Knob::KvCacheMemory, Direction::Up) => {
            Some(Setting::KvBlocks(s.kv_blocks + s.kv_blocks / 2))
        }
        _ => None,
    }
}

fn title_for(ch: &[Setting], m: &EngineFit) -> String {
    ch.iter()
        .map(|c| {
            let (flag, to) = c.describe();
            format!("{flag} {} → {to}", today_value(m, *c))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Today and every modelled change of the report's recommendations at the
/// peak load level, and the sweep.
pub fn standard(report: &Report, f: &mut Forecast) {
    let Some(c) = context(report, f) else {
        return;
    };
    let mut out = Vec::new();
    if let Some(s) = scenario(&c, "today", "Today's configuration".into(), &[], 1.0) {
        out.push(s);
    }
    for r in &report.recommendations {
        let changes: Vec<Setting> = r
            .levers
            .iter()
            .filter_map(|l| change_for(c.model, &c.peak, l.knob, l.direction))
            .collect();
        if changes.is_empty()
            || out
                .iter()
                .any(|s: &ForecastScenario| s.recommendation == Some(r.id.clone()))
        {
            continue;
        }
        let id = r.id.as_str().to_string();
        if let Some(mut s) = scenario(&c, &id, title_for(&changes, c.model), &changes, 1.0) {
            s.recommendation = Some(r.id.clone());
            out.push(s);
        }
    }
    let double = Setting::Replicas(c.model.settings.replicas * 2);
    let mut sweep: Vec<SweepRow> = out.iter().filter_map(|s| sweep_row(&c, s)).collect();
    if !out
        .iter()
        .any(|s| s.changes.iter().any(|ch| ch.setting == "replicas"))
    {
        let title = title_for(&[double], c.model);
        if let Some(s) = scenario(
            &c,
            &format!("replicas_{}", c.model.settings.replicas * 2),
            title,
            &[double],
            1.0,
        ) {
            sweep.extend(sweep_row(&c, &s));
        }
    }
    f.scenarios = out;
    f.sweep = sweep;
}

fn settings_of(s: &ForecastScenario) -> Vec<Setting> {
    s.changes
        .iter()
        .filter_map(|ch| Setting::parse(&format!("{}={}", flag_name(&ch.setting), ch.to)).ok())
        .collect()
}

fn flag_name(setting: &str) -> &str {
    match setting {
        "KV blocks" => "kv-blocks",
        "shared prefix tokens" => "shared-prefix-tokens",
        "--enable-prefix-caching" => "prefix-caching",
        x => x.trim_start_matches("--"),
    }
}

/// Largest factor in the sweep.
const SWEEP_TOP: f64 = 8.0;

fn meets(c: &Ctx<'_>, changes: &[Setting], factor: f64) -> Option<Option<SloId>> {
    let s = scenario_light(c, changes, factor)?;
    let slo = &c.report.settings.slo;
    if s.0.is_some_and(|r| r.high > slo.ttft_p95_ms) {
        return Some(Some(SloId::TtftP95));
    }
    if s.1.is_some_and(|r| r.high > slo.itl_p95_ms) {
        return Some(Some(SloId::ItlP95));
    }
    Some(None)
}

/// TTFT and ITL ranges only (no queueing scan, the best fit widened by
/// the back-test's error): the sweep's inner loop.
fn scenario_light(
    c: &Ctx<'_>,
    changes: &[Setting],
    factor: f64,
) -> Option<(Option<Range>, Option<Range>)> {
    let (mm, _, su) = changed(c, changes, factor)?;
    let f = replay::replay(&su, &c.fit, &c.fit.central, &mm.workload);
    let widen = |x: f64| Range {
        low: x * (1.0 - c.widen),
        high: x * (1.0 + c.widen),
    };
    Some((f.ttft_p95_ms.map(widen), f.itl_p95_ms.map(widen)))
}

fn sweep_row(c: &Ctx<'_>, s: &ForecastScenario) -> Option<SweepRow> {
    let changes = settings_of(s);
    let mut lo = 0.0;
    let mut limiting = None;
    let mut hi = SWEEP_TOP;
    match meets(c, &changes, SWEEP_TOP)? {
        None => lo = SWEEP_TOP,
        Some(id) => {
            limiting = Some(id);
            let mut x = 0.125;
            if meets(c, &changes, x)?.is_none() {
                lo = x;
                for _ in 0..7 {
                    x = (lo + hi) / 2.0;
                    match meets(c, &changes, x)? {
                        None => lo = x,
                        Some(id) => {
                            hi = x;
                            limiting = Some(id);
                        }
                    }
                }
            }
        }
    }
    let at_top = lo >= SWEEP_TOP;
    let reps = f64::from(c.model.settings.replicas.max(1));
    let max_x = (lo > 0.0).then_some((lo * 20.0).floor() / 20.0);
    Some(SweepRow {
        scenario: s.id.clone(),
        title: s.title.clone(),
        max_load_x: max_x,
        in_flight: max_x.map(|x| c.peak.users * x * reps),
        requests_per_min: max_x.map(|x| c.peak.per_s * 60.0 * x * reps),
        limiting: if at_top { None } else { limiting },
        at_top,
    })
}

/// A scenario asked for (the CLI's `forecast --set ... --load ...`), with
/// its sweep row; `None` when the report's forecast is not calibrated.
pub fn predict(report: &Report, ask: &Ask) -> Option<(ForecastScenario, Option<SweepRow>)> {
    let f = &report.forecast;
    if f.status != ForecastStatus::Calibrated {
        return None;
    }
    let c = context(report, f)?;
    let factor = ask.load.unwrap_or(1.0);
    let title = if ask.changes.is_empty() {
        "Today's configuration".to_string()
    } else {
        title_for(&ask.changes, c.model)
    };
    let id = if ask.changes.is_empty() {
        "today"
    } else {
        "custom"
    };
    let s = scenario(&c, id, title, &ask.changes, factor)?;
    let row = sweep_row(&c, &s);
    Some((s, row))
}

/// Ids of recommendations whose scenario exists, with its summary.
pub fn predicted_for(f: &Forecast) -> Vec<(RecId, String)> {
    f.scenarios
        .iter()
        .filter_map(|s| {
            let changes: Vec<String> = s
                .changes
                .iter()
                .map(|c| format!("{} {} → {}", c.setting, c.from, c.to))
                .collect();
            Some((
                s.recommendation.clone()?,
                format!("with {}, {}", changes.join(" and "), s.summary),
            ))
        })
        .collect()
}
