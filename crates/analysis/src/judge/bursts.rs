//! Error bursts: windows with more failures than the capture's own base
//! rate can explain.
//!
//! A window is a burst window when, for the engine's errors + aborts
//! (`finished_reason` `error` and `abort` among all finished requests) or
//! for the HTTP layer's 4xx + 5xx (among all HTTP requests):
//!
//! - it holds at least [`BURST_MIN_EVENTS`] failures (one or two are
//!   noise whatever their share),
//! - their share reaches the line (the error objective for the engine,
//!   [`HTTP_ERROR_FAIL_PCT`] for HTTP), and
//! - a binomial test says the capture's base rate (failures ÷ requests
//!   over the whole capture) would give that many or more in the window's
//!   requests with probability under [`BURST_P_VALUE`].
//!
//! Consecutive burst windows make one burst (a phase of its own).

use crate::measure::inputs::Inputs;
use crate::measure::thresholds::{BURST_MIN_EVENTS, BURST_P_VALUE, HTTP_ERROR_FAIL_PCT};

/// Which failures burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BurstOf {
    /// `finished_reason` error + abort among finished requests.
    Engine,
    /// HTTP 4xx + 5xx among HTTP requests.
    Http,
}

/// Failures and requests (counts) of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Tally {
    pub bad: f64,
    pub all: f64,
}

impl Tally {
    /// The share, %, or `None` without requests.
    pub fn pct(&self) -> Option<f64> {
        (self.all > 0.0).then(|| 100.0 * self.bad / self.all)
    }

    fn add(&mut self, o: Tally) {
        self.bad += o.bad;
        self.all += o.all;
    }
}

/// The tallies of one window (or a stretch of them).
fn tally(i: &Inputs, of: BurstOf) -> Tally {
    match of {
        BurstOf::Engine => Tally {
            bad: ["error", "abort"]
                .iter()
                .filter_map(|r| i.reasons.get(*r))
                .map(|x| x.increase)
                .sum::<f64>()
                + 0.0,
            all: i.reasons.values().map(|x| x.increase).sum::<f64>() + 0.0,
        },
        BurstOf::Http => Tally {
            bad: i
                .http_status
                .iter()
                .filter(|(s, _)| s.starts_with('4') || s.starts_with('5'))
                .map(|(_, x)| x.increase)
                .sum::<f64>()
                + 0.0,
            all: i.http_status.values().map(|x| x.increase).sum::<f64>() + 0.0,
        },
    }
}

/// One kind's test in one burst.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BurstTest {
    pub of: BurstOf,
    /// Failures and requests over the burst's windows.
    pub burst: Tally,
    /// Over the whole capture (the base rate).
    pub capture: Tally,
    /// The smallest p-value among the burst's windows.
    pub p_value: f64,
}

/// A run of burst windows `[start, end)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Burst {
    pub start: usize,
    pub end: usize,
    /// The kinds that burst (engine first).
    pub tests: Vec<BurstTest>,
}

/// P(X ≥ k) for X ~ Binomial(n, p): the chance of at least `k` failures in
/// `n` requests at the rate `p`. Summed in log space from `k` upwards,
/// until the terms stop counting.
pub(crate) fn binomial_tail(k: u64, n: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (kf, nf) = (k as f64, n as f64);
    // ln C(n, k) = Σ_{j=1..k} ln((n − k + j) ÷ j)
    let ln_choose: f64 = (1..=k)
        .map(|j| ((nf - kf + j as f64) / j as f64).ln())
        .sum();
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut ln_term = ln_choose + kf * lp + (nf - kf) * lq;
    let mut sum = 0.0;
    let mut i = k;
    loop {
        let term = ln_term.exp();
        sum += term;
        if i >= n || (term < 1e-17 * sum && (i as f64) > nf * p) {
            break;
        }
        ln_term += ((nf - i as f64) / (i as f64 + 1.0)).ln() + lp - lq;
        i += 1;
    }
    sum.min(1.0)
}

/// The p-value of one window against the capture's rate, when it passes
/// the count and share lines.
fn test(window: Tally, capture: Tally, line_pct: f64) -> Option<f64> {
    let bad = window.bad.round();
    if bad < BURST_MIN_EVENTS || window.pct().is_none_or(|p| p < line_pct) {
        return None;
    }
    let rate = capture.bad / capture.all;
    if bad <= window.all * rate {
        // At or below the expected count: P(X ≥ bad) ≥ ½.
        return None;
    }
    let p = binomial_tail(bad as u64, window.all.round() as u64, rate);
    (p < BURST_P_VALUE).then_some(p)
}

/// Every burst in the capture, in time order.
pub(crate) fn find(windows: &[Inputs], objective_pct: f64) -> Vec<Burst> {
    let kinds = [
        (BurstOf::Engine, objective_pct),
        (BurstOf::Http, HTTP_ERROR_FAIL_PCT),
    ];
    // Per window, the kinds that burst and their p-values.
    let per: Vec<Vec<(BurstOf, f64)>> = {
        let capture: Vec<Tally> = kinds
            .iter()
            .map(|(of, _)| {
                let mut t = Tally::default();
                windows.iter().for_each(|w| t.add(tally(w, *of)));
                t
            })
            .collect();
        windows
            .iter()
            .map(|w| {
                kinds
                    .iter()
                    .zip(&capture)
                    .filter_map(|((of, line), cap)| {
                        test(tally(w, *of), *cap, *line).map(|p| (*of, p))
                    })
                    .collect()
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut w = 0;
    while w < per.len() {
        if per[w].is_empty() {
            w += 1;
            continue;
        }
        let start = w;
        while w < per.len() && !per[w].is_empty() {
            w += 1;
        }
        let tests = kinds
            .iter()
            .filter_map(|(of, _)| {
                let p_value = per[start..w]
                    .iter()
                    .flatten()
                    .filter(|(k, _)| k == of)
                    .map(|(_, p)| *p)
                    .reduce(f64::min)?;
                let mut burst = Tally::default();
                let mut capture = Tally::default();
                for (i, x) in windows.iter().enumerate() {
                    let t = tally(x, *of);
                    capture.add(t);
                    if (start..w).contains(&i) {
                        burst.add(t);
                    }
                }
                Some(BurstTest {
                    of: *of,
                    burst,
                    capture,
                    p_value,
                })
            })
            .collect();
        out.push(Burst {
            start,
            end: w,
            tests,
        });
    }
    out
}

/// One kind of burst in words, with its counts and the test: "52 of 1,310
/// finished requests ended in error or abort (4.0 %, against 0.3 % over
/// the capture; p < 0.001)".
pub(crate) fn burst_words(t: &BurstTest) -> String {
    let what = match t.of {
        BurstOf::Engine => "finished requests ended in error or abort",
        BurstOf::Http => "HTTP requests were answered 4xx or 5xx",
    };
    format!(
        "{} of {} {what} ({}, against {} over the capture; {})",
        crate::text::num(t.burst.bad.round()),
        crate::text::num(t.burst.all.round()),
        crate::text::share_text(t.burst.pct()),
        crate::text::share_text(t.capture.pct()),
        p_text(t.p_value)
    )
}

/// A p-value in words.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "binomial p < 0.001".into()
    } else {
        format!("binomial p = {p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vllm_lens_query::WindowIncrease;

    fn window(finished: f64, aborts: f64) -> Inputs {
        let inc = |x: f64| WindowIncrease {
            increase: x,
            covered_ms: 60_000,
            per_sec: x / 60.0,
            ..WindowIncrease::default()
        };
        let mut i = Inputs::default();
        i.reasons.insert("stop".into(), inc(finished - aborts));
        i.reasons.insert("abort".into(), inc(aborts));
        i
    }

    #[test]
    fn the_binomial_tail_is_right() {
        // P(X ≥ 1), n = 10, p = 0.1: 1 − 0.9^10.
        let want = 1.0 - 0.9f64.powi(10);
        assert!((binomial_tail(1, 10, 0.1) - want).abs() < 1e-12);
        // P(X ≥ 3), n = 5, p = 0.5: (10 + 5 + 1) ÷ 32.
        assert!((binomial_tail(3, 5, 0.5) - 0.5).abs() < 1e-12);
        assert_eq!(binomial_tail(0, 5, 0.5), 1.0);
        assert_eq!(binomial_tail(6, 5, 0.5), 0.0);
        assert_eq!(binomial_tail(1, 5, 0.0), 0.0);
        // Large n stays finite and small.
        let p = binomial_tail(60, 100_000, 0.0001);
        assert!(p > 0.0 && p < 1e-20, "{p}");
    }

    #[test]
    fn one_abort_is_not_a_burst() {
        // One abort among 129 requests in one minute, none elsewhere.
        let mut w: Vec<Inputs> = (0..10).map(|_| window(129.0, 0.0)).collect();
        w[4] = window(129.0, 1.0);
        assert!(find(&w, 0.5).is_empty());
        // Nor two.
        w[4] = window(129.0, 2.0);
        assert!(find(&w, 0.5).is_empty());
    }

    #[test]
    fn the_base_rate_decides() {
        // 3 aborts in a minute where the capture has none elsewhere: a burst.
        let mut w: Vec<Inputs> = (0..10).map(|_| window(129.0, 0.0)).collect();
        w[4] = window(129.0, 3.0);
        let b = find(&w, 0.5);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].start, b[0].end), (4, 5));
        assert_eq!(
            b[0].tests[0].burst,
            Tally {
                bad: 3.0,
                all: 129.0
            }
        );
        assert!(b[0].tests[0].p_value < 0.01);
        // The same 3 where every minute has 2 or 3: the rate, not a burst.
        let w: Vec<Inputs> = (0..10)
            .map(|k| window(129.0, if k % 2 == 0 { 2.0 } else { 3.0 }))
            .collect();
        assert!(find(&w, 0.5).is_empty());
    }

    #[test]
    fn consecutive_windows_are_one_burst() {
        let mut w: Vec<Inputs> = (0..10).map(|_| window(400.0, 1.0)).collect();
        w[4] = window(400.0, 50.0);
        w[5] = window(400.0, 45.0);
        let b = find(&w, 0.5);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].start, b[0].end), (4, 6));
        assert_eq!(b[0].tests[0].burst.bad, 95.0);
        assert_eq!(b[0].tests[0].capture.bad, 103.0);
    }
}
