//! The engine's step time, fitted on the windows.
//!
//! A step lasts `a + b × decode sequences + c × prefill tokens`. Two
//! equations per window, each weighted by its own size (relative error):
//!
//! * decode: a decoding request gets one token per step, so the mean
//!   inter-token latency is the mean step, with `itl × decode tokens/s`
//!   sequences decoding and `itl × computed prompt tokens/s` prefill
//!   tokens in it (Little's law over a step);
//! * prefill: a prompt of `p` computed tokens takes `k = ⌈p ÷ budget⌉`
//!   steps, each with the decoding batch, plus `c × p` for itself.
//!
//! On a GPU (a known floor: the weights read once per step) a second form
//! is fitted too, the roofline `a + b × decode sequences + max(floor, c ×
//! tokens computed)`: the weights' read and the arithmetic overlap, so
//! prompt tokens ride along a decode step until their compute outlasts
//! the read. `c` is profiled on a grid (the max term moves to the
//! equations' target), and the form whose residual is smaller is kept.
//!
//! The coefficients are non-negative (least squares over every active
//! set). When the windows' batch sizes barely differ, `b` (per sequence)
//! and `a` (per step) trade against each other: the fit then keeps every
//! `b` whose residual stays within a noise floor of the best, and the
//! forecast replays both ends of that range.

use vllm_lens_model::forecast::{EngineFit, EngineSettings, LoadShape, Range, WorkloadFit};

use crate::input::Win;

/// One step-cost parameter set, seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theta {
    /// Per step.
    pub a: f64,
    /// Per decoding sequence.
    pub b: f64,
    /// Per prefill token.
    pub c: f64,
}

/// The fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The best fit.
    pub central: Theta,
    /// The ends of the ranges the windows allow: the cheapest and the
    /// costliest per decoding sequence, then per prefill token.
    pub extremes: Vec<Theta>,
    /// Floor of a step, s.
    pub floor_s: f64,
    /// TTFT outside queue and prefill, s.
    pub front_end_s: f64,
    /// Steps between a prompt's last chunk and its first token (async
    /// scheduling: 1).
    pub lag_steps: f64,
    /// The load's shape and why.
    pub shape: (LoadShape, String),
    /// What was assumed.
    pub assumed: Vec<String>,
    /// Windows used.
    pub windows: usize,
    /// The roofline form (see the module's documentation).
    pub roofline: bool,
}

impl Fit {
    /// The parameter sets a prediction replays: the best fit first.
    pub fn thetas(&self) -> Vec<Theta> {
        std::iter::once(self.central)
            .chain(self.extremes.iter().copied())
            .collect()
    }
}

/// A relative noise per equation below which two fits are alike.
const NOISE: f64 = 0.08;

type Eq = ([f64; 3], f64);

fn equations(wins: &[Win], budget: f64, lag: f64) -> Vec<Eq> {
    let mut eqs = Vec::new();
    for w in wins {
        let batch = w.batch();
        let prefill_tokens = w.prefill_tokens();
        let y = w.itl_s;
        eqs.push(([1.0 / y, batch / y, prefill_tokens / y], 1.0));
        if let Some(p) = w.prefill_s.filter(|p| *p > 0.0) {
            let computed = (w.prompt * (1.0 - w.hit)).max(1.0);
            let k = (computed / budget).ceil().max(1.0);
            let per_step = prompt_step_tokens(w, computed, k, prefill_tokens, budget);
            // With async scheduling the first token appears `lag` steps
            // after the prompt's last chunk.
            let steps = k + lag;
            eqs.push(([steps / p, steps * batch / p, k * per_step / p], 1.0));
        }
    }
    eqs
}

/// Prompt tokens in each step that computes a prompt of `computed`
/// tokens in `k` chunks: its own chunk, or the steps' usual prefill load
/// when that is larger, up to the budget. A prompt computed in one step
/// shares it with the prompts that arrived while the step before ran:
/// `prompts_per_step` of them, as the capture counted its steps.
fn prompt_step_tokens(w: &Win, computed: f64, k: f64, p_bar: f64, budget: f64) -> f64 {
    let own = if k <= 1.0 {
        (computed * w.prompts_per_step.unwrap_or(1.0)).min(budget)
    } else {
        computed / k
    };
    own.max(p_bar.min(budget))
}

/// The roofline form's equations for a fixed `c`: the overlapped term
/// `max(floor, c × tokens)` is moved to the target, `a` and `b` remain.
/// A window's steps are a mix: a share `phi` carries a prompt chunk.
fn roof_equations(wins: &[Win], budget: f64, lag: f64, c: f64, floor: f64) -> Vec<Eq> {
    let over = |tokens: f64| (c * tokens).max(floor);
    let mut eqs = Vec::new();
    for w in wins {
        let batch = w.batch();
        let p_bar = w.prefill_tokens();
        let computed = (w.prompt * (1.0 - w.hit)).max(1.0);
        let chunk = computed.min(budget).max(1.0);
        let phi = (p_bar / chunk).min(1.0);
        let m_dec = (1.0 - phi) * over(batch) + phi * over(batch + chunk);
        let y = w.itl_s;
        eqs.push(([1.0 / y, batch / y, 0.0], 1.0 - m_dec / y));
        if let Some(p) = w.prefill_s.filter(|p| *p > 0.0) {
            let k = (computed / budget).ceil().max(1.0);
            let per_step = prompt_step_tokens(w, computed, k, p_bar, budget);
            let steps = k + lag;
            let m = k * over(batch + per_step) + lag * m_dec;
            eqs.push(([steps / p, steps * batch / p, 0.0], 1.0 - m / p));
        }
    }
    eqs
}

/// The roofline fit: the best `(lag, c, [a, b, c], rss)` over a grid of
/// `c`, and the equations of each `c` tried (for the ranges).
struct Roof {
    lag: f64,
    best: [f64; 3],
    rss: f64,
    /// `(c, fit, rss)` per grid point of the best lag.
    grid: Vec<([f64; 3], f64)>,
}

fn roof_fit(wins: &[Win], budget: f64, floor: f64) -> Option<Roof> {
    if floor <= 0.0 {
        return None;
    }
    // c at most what makes a window's mean step all arithmetic.
    let c_max = wins
        .iter()
        .map(|w| {
            let chunk = (w.prompt * (1.0 - w.hit)).clamp(1.0, budget.max(1.0));
            w.itl_s / (w.batch() + chunk).max(1.0)
        })
        .fold(0.0, f64::max)
        * 2.0;
    if c_max <= 0.0 || !c_max.is_finite() {
        return None;
    }
    let mut out: Option<Roof> = None;
    for lag in [0.0, 1.0] {
        let mut grid = Vec::new();
        for i in 0..=80 {
            let c = c_max * f64::from(i) / 80.0;
            let eqs = roof_equations(wins, budget, lag, c, floor);
            if let Some((mut t, _)) = nnls(&eqs, Some((2, 0.0))) {
                t[2] = c;
                let e = rss(&eqs, [t[0], t[1], 0.0]);
                grid.push((t, e));
            }
        }
        let Some(&(best, e)) = grid.iter().min_by(|x, y| x.1.total_cmp(&y.1)) else {
            continue;
        };
        if out.as_ref().is_none_or(|o| e < o.rss) {
            out = Some(Roof {
                lag,
                best,
                rss: e,
                grid,
            });
        }
    }
    out
}

/// `a` by least squares (non-negative) with `b` and the target fixed.
fn fit_a(eqs: &[Eq], b: f64) -> ([f64; 3], f64) {
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in eqs {
        num += x[0] * (y - b * x[1]);
        den += x[0] * x[0];
    }
    let a = if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
    let t = [a, b, 0.0];
    (t, rss(eqs, t))
}

/// The roofline's ranges: the cheapest and costliest `c` within the noise
/// floor, then the cheapest and costliest `b` at the best `c`.
fn roof_extremes(r: &Roof, wins: &[Win], budget: f64, floor: f64) -> Vec<Theta> {
    let eqs = roof_equations(wins, budget, r.lag, r.best[2], floor);
    let allowed = r.rss + NOISE * NOISE * eqs.len() as f64;
    let ok: Vec<&([f64; 3], f64)> = r.grid.iter().filter(|g| g.1 <= allowed).collect();
    let lo_c = ok
        .iter()
        .min_by(|x, y| x.0[2].total_cmp(&y.0[2]))
        .map_or(r.best, |g| g.0);
    let hi_c = ok
        .iter()
        .max_by(|x, y| x.0[2].total_cmp(&y.0[2]))
        .map_or(r.best, |g| g.0);
    let b_top = wins
        .iter()
        .map(|w| w.busy / (w.decode_per_s).max(1e-9))
        .fold(f64::INFINITY, f64::min)
        .min(1.0);
    let (mut lo_b, mut hi_b) = (r.best, r.best);
    for i in 0..=40 {
        let b = b_top * f64::from(i) / 40.0;
        let (mut t, e) = fit_a(&eqs, b);
        t[2] = r.best[2];
        if e <= allowed {
            if t[1] < lo_b[1] {
                lo_b = t;
            }
            if t[1] > hi_b[1] {
                hi_b = t;
            }
        }
    }
    [lo_c, hi_c, lo_b, hi_b].into_iter().map(theta).collect()
}

/// Least squares on the columns in `mask` (the others 0); `None` when
/// singular.
fn solve(eqs: &[Eq], mask: [bool; 3], fixed: Option<(usize, f64)>) -> Option<[f64; 3]> {
    let cols: Vec<usize> = (0..3)
        .filter(|&j| mask[j] && fixed.is_none_or(|f| f.0 != j))
        .collect();
    let n = cols.len();
    let mut ata = [[0.0f64; 3]; 3];
    let mut atb = [0.0f64; 3];
    for (x, y) in eqs {
        let y = y - fixed.map_or(0.0, |(j, v)| v * x[j]);
        for (i, &ci) in cols.iter().enumerate() {
            atb[i] += x[ci] * y;
            for (j, &cj) in cols.iter().enumerate() {
                ata[i][j] += x[ci] * x[cj];
            }
        }
    }
    // Gaussian elimination on the n × n system.
    let mut m = ata;
    let mut v = atb;
    for i in 0..n {
        let p = (i..n).max_by(|&a, &b| m[a][i].abs().total_cmp(&m[b][i].abs()))?;
        if m[p][i].abs() < 1e-18 {
            return None;
        }
        m.swap(i, p);
        v.swap(i, p);
        for r in 0..n {
            if r != i {
                let f = m[r][i] / m[i][i];
                let pivot = m[i];
                for (x, p) in m[r].iter_mut().zip(pivot).take(n) {
                    *x -= f * p;
                }
                v[r] -= f * v[i];
            }
        }
    }
    let mut out = [0.0; 3];
    for (i, &ci) in cols.iter().enumerate() {
        out[ci] = v[i] / m[i][i];
    }
    if let Some((j, v)) = fixed {
        out[j] = v;
    }
    Some(out)
}

fn rss(eqs: &[Eq], t: [f64; 3]) -> f64 {
    eqs.iter()
        .map(|(x, y)| (x[0] * t[0] + x[1] * t[1] + x[2] * t[2] - y).powi(2))
        .sum()
}

/// Non-negative least squares over every active set.
fn nnls(eqs: &[Eq], fixed: Option<(usize, f64)>) -> Option<([f64; 3], f64)> {
    let mut best: Option<([f64; 3], f64)> = None;
    for bits in 1u8..8 {
        let mask = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
        if fixed.is_some_and(|(j, _)| !mask[j]) {
            continue;
        }
        let Some(t) = solve(eqs, mask, fixed) else {
            continue;
        };
        if t.iter().any(|x| *x < 0.0 || !x.is_finite()) {
            continue;
        }
        let e = rss(eqs, t);
        if best.is_none_or(|(_, b)| e < b) {
            best = Some((t, e));
        }
    }
    best
}

fn theta(t: [f64; 3]) -> Theta {
    Theta {
        a: t[0],
        b: t[1],
        c: t[2],
    }
}

/// Fits the step cost, the front end and the load's shape.
pub fn fit(wins: &[Win], s: &EngineSettings, floor_ms: Option<f64>) -> Option<Fit> {
    // Whether the first token comes at the end of the prompt's last step
    // or one step later (async scheduling): whichever fits better.
    let budget = f64::from(s.max_num_batched_tokens);
    let (lag, eqs, (best, best_rss)) = [0.0, 1.0]
        .into_iter()
        .filter_map(|lag| {
            let eqs = equations(wins, budget, lag);
            let r = nnls(&eqs, None)?;
            Some((lag, eqs, r))
        })
        .min_by(|a, b| (a.2).1.total_cmp(&(b.2).1))?;
    // The ranges of b and c the windows allow, each profiled with the
    // others refitted.
    let allowed = best_rss + NOISE * NOISE * eqs.len() as f64;
    let top = |f: fn(&Win) -> f64| {
        wins.iter()
            .map(|w| w.busy / f(w).max(1e-9))
            .fold(f64::INFINITY, f64::min)
            .min(1.0)
    };
    let mut extremes = Vec::new();
    for (j, top) in [(1, top(|w| w.decode_per_s)), (2, top(|w| w.prefill_per_s))] {
        let mut lo = best;
        let mut hi = best;
        for i in 0..=40 {
            let v = top * f64::from(i) / 40.0;
            if let Some((t, e)) = nnls(&eqs, Some((j, v)))
                && e <= allowed
            {
                if t[j] < lo[j] {
                    lo = t;
                }
                if t[j] > hi[j] {
                    hi = t;
                }
            }
        }
        extremes.push(theta(lo));
        extremes.push(theta(hi));
    }
    let floor_s = floor_ms.unwrap_or(0.0) / 1000.0;
    let roof = roof_fit(wins, budget, floor_s).filter(|r| r.rss < best_rss);
    let (central, extremes, lag, roofline) = match roof {
        Some(r) => {
            let ex = roof_extremes(&r, wins, budget, floor_s);
            (theta(r.best), ex, r.lag, true)
        }
        None => (theta(best), extremes, lag, false),
    };
    let mut fronts: Vec<f64> = wins
        .iter()
        .filter_map(|w| Some((w.ttft_s? - w.queue_s? - w.prefill_s?).max(0.0)))
        .collect();
    fronts.sort_by(f64::total_cmp);
    let front_end_s = fronts.get(fronts.len() / 2).copied().unwrap_or(0.0);
    let mut assumed = Vec::new();
    if fronts.is_empty() {
        assumed.push(
            "no time outside queue and prefill (the capture lacks queue or prefill times)".into(),
        );
    }
    Some(Fit {
        central,
        extremes,
        lag_steps: lag,
        floor_s,
        front_end_s,
        shape: shape(wins),
        assumed,
        windows: wins.len(),
        roofline,
    })
}

/// The load is replayed as a finite population of users (the most
/// requests the engine held at one scrape) who spend the rest of their
/// time outside it: users who mostly wait on the engine are a closed loop;
/// users who mostly think make arrivals that barely depend on latency,
/// an open loop in all but name.
fn shape(wins: &[Win]) -> (LoadShape, String) {
    let n = wins.len().max(1) as f64;
    let users = wins.iter().map(|w| w.users).sum::<f64>() / n;
    let in_engine = wins.iter().map(|w| w.in_flight).sum::<f64>() / n;
    let think = wins.iter().map(|w| w.think_s()).sum::<f64>() / n;
    let e2e = wins
        .iter()
        .map(|w| w.in_flight / w.per_s.max(1e-9))
        .sum::<f64>()
        / n;
    let why = format!(
        "each window is replayed as its users (the most requests the engine held at one scrape in it): ~{} on average over the {} windows, ~{} of them in the engine (Little's law), each spending ~{} s outside it between answers against ~{} s inside",
        fmt(users),
        wins.len(),
        fmt(in_engine),
        fmt(think),
        fmt(e2e)
    );
    if think > 4.0 * e2e {
        (
            LoadShape::Open,
            format!("{why}: arrivals barely depend on latency, an open loop"),
        )
    } else {
        (
            LoadShape::Closed,
            format!("{why}: users wait on the engine, a closed loop"),
        )
    }
}

fn fmt(x: f64) -> String {
    vllm_lens_model::text::num(x)
}

fn range(lo: f64, hi: f64) -> Range {
    Range {
        low: lo.min(hi),
        high: lo.max(hi),
    }
}

/// The fit as the report shows it.
pub fn engine_fit(
    f: &Fit,
    wins: &[Win],
    settings: EngineSettings,
    workload: WorkloadFit,
    assumed: Vec<String>,
) -> EngineFit {
    let ms = 1000.0;
    let all = f.thetas();
    let span = |g: fn(&Theta) -> f64, k: f64| {
        range(
            all.iter().map(g).fold(f64::INFINITY, f64::min) * k,
            all.iter().map(g).fold(0.0, f64::max) * k,
        )
    };
    let mut assumed = assumed;
    let (base, per_seq) = (span(|t| t.a, ms), span(|t| t.b, ms));
    if base.low <= 1e-9 && per_seq.low <= 1e-9 && base.high > 0.0 && per_seq.high > 0.0 {
        assumed.push(format!(
            "the windows' batches barely differ, so a step's fixed cost (0–{} ms) and its cost per decoding sequence (0–{} ms) cannot be told apart: predictions at larger batches span both ends, hence their width",
            fmt(base.high),
            fmt(per_seq.high)
        ));
    }
    EngineFit {
        step_base_ms: span(|t| t.a, ms),
        per_decode_seq_ms: span(|t| t.b, ms),
        per_1k_prefill_tokens_ms: span(|t| t.c, ms * 1000.0),
        step_costs: f
            .thetas()
            .iter()
            .map(|t| [t.a * ms, t.b * ms, t.c * ms * 1000.0])
            .collect(),
        floor_ms: (f.floor_s > 0.0).then_some(f.floor_s * ms),
        front_end_ms: f.front_end_s * ms,
        first_token_lag_steps: f.lag_steps,
        roofline: f.roofline,
        load_shape: f.shape.0,
        load_shape_evidence: f.shape.1.clone(),
        windows: wins.len(),
        settings,
        workload,
        assumed,
    }
}

/// The fit back from the report's model (for a scenario asked later).
pub fn from_model(m: &EngineFit) -> Option<Fit> {
    let t = |x: &[f64; 3]| Theta {
        a: x[0] / 1000.0,
        b: x[1] / 1000.0,
        c: x[2] / 1e6,
    };
    let (first, rest) = m.step_costs.split_first()?;
    Some(Fit {
        central: t(first),
        extremes: rest.iter().map(t).collect(),
        floor_s: m.floor_ms.unwrap_or(0.0) / 1000.0,
        front_end_s: m.front_end_ms / 1000.0,
        lag_steps: m.first_token_lag_steps,
        shape: (m.load_shape, m.load_shape_evidence.clone()),
        assumed: Vec::new(),
        windows: m.windows,
        roofline: m.roofline,
    })
}
