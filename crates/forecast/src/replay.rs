//! The load replayed through the engine model.

use vllm_lens_engine::rng::Rng;
use vllm_lens_engine::sched::{self, Config, Job, Jobs, LinearCost, Load, Run};
use vllm_lens_model::forecast::{EngineSettings, WorkloadFit};
use vllm_lens_model::report::{QUEUED_CONSECUTIVE_SCRAPES, QUEUEING_SEEN_TIMES};

use crate::fit::{Fit, Theta};

/// Jobs drawn from the capture's length histograms, scaled to a mean.
#[derive(Clone, Debug)]
pub struct Sampler {
    prompt: Vec<(f64, f64, f64)>,
    generated: Vec<(f64, f64, f64)>,
    prompt_scale: f64,
    generated_scale: f64,
    shared: u32,
}

/// `(low, high, weight)` per bucket from `[upper, count]` pairs.
fn buckets(b: &[[f64; 2]]) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    let mut low = 0.0;
    for [up, n] in b {
        if *n > 0.0 && up.is_finite() {
            out.push((low, up.max(low + 1.0), *n));
        }
        low = *up;
    }
    out
}

fn mean_of(b: &[(f64, f64, f64)]) -> Option<f64> {
    let n: f64 = b.iter().map(|x| x.2).sum();
    (n > 0.0).then(|| b.iter().map(|x| (x.0 + x.1) / 2.0 * x.2).sum::<f64>() / n)
}

fn draw(b: &[(f64, f64, f64)], mean: f64, scale: f64, rng: &mut Rng) -> f64 {
    if b.is_empty() {
        // No histogram: lengths spread ±50 % around the mean.
        return mean * rng.uniform(0.5, 1.5);
    }
    let total: f64 = b.iter().map(|x| x.2).sum();
    let mut u = rng.f64() * total;
    for (lo, hi, n) in b {
        if u < *n {
            return rng.uniform(*lo, *hi) * scale;
        }
        u -= n;
    }
    let last = b[b.len() - 1];
    rng.uniform(last.0, last.1) * scale
}

impl Sampler {
    /// Lengths of `w`'s histograms, scaled to the means `prompt` and
    /// `generated`; `shared` tokens of every prompt shared.
    pub fn new(w: &WorkloadFit, prompt: f64, generated: f64, shared: u32) -> Sampler {
        let p = buckets(&w.prompt_buckets);
        let g = buckets(&w.generation_buckets);
        let prompt_scale = mean_of(&p).map_or(1.0, |m| prompt / m.max(1.0));
        let generated_scale = mean_of(&g).map_or(1.0, |m| generated / m.max(1.0));
        Sampler {
            prompt: p,
            generated: g,
            prompt_scale,
            generated_scale,
            shared,
        }
        .with_means(prompt, generated)
    }

    fn with_means(mut self, prompt: f64, generated: f64) -> Sampler {
        if self.prompt.is_empty() {
            self.prompt_scale = prompt;
        }
        if self.generated.is_empty() {
            self.generated_scale = generated;
        }
        self
    }
}

impl Jobs for Sampler {
    fn next(&mut self, rng: &mut Rng) -> Job {
        let prompt = draw(&self.prompt, self.prompt_scale, self.prompt_scale, rng);
        let output = draw(
            &self.generated,
            self.generated_scale,
            self.generated_scale,
            rng,
        );
        let prompt = (prompt.round() as u32).max(self.shared + 1).max(1);
        Job {
            prompt,
            output: (output.round() as u32).max(1),
            shared: self.shared,
            group: u32::from(self.shared > 0),
        }
    }
}

/// What one replay gives, ms and per replica.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    /// TTFT p95 (with the front end), ms.
    pub ttft_p95_ms: Option<f64>,
    /// Inter-token p95, ms.
    pub itl_p95_ms: Option<f64>,
    /// Mean requests in the engine.
    pub in_flight: f64,
    /// Finished per second.
    pub per_s: f64,
    /// Generated tokens per second.
    pub tokens_per_s: f64,
    /// Share of the time some request waited.
    pub waiting_share: f64,
    /// Mean queue time, ms.
    pub queue_ms: Option<f64>,
}

/// A replay: one configuration, one workload, one load, per replica.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Settings replayed.
    pub settings: EngineSettings,
    /// Mean prompt tokens.
    pub prompt: f64,
    /// Mean generated tokens.
    pub generated: f64,
    /// Tokens shared by every prompt (0: none).
    pub shared: u32,
    /// The load per replica.
    pub load: Load,
}

/// The shared prefix, in tokens, that gives a hit rate of `hit` (0–1) on
/// prompts of `prompt` tokens in blocks of `block`.
pub fn shared_for(hit: f64, prompt: f64, block: u32) -> u32 {
    if hit <= 0.0 {
        return 0;
    }
    let b = f64::from(block.max(1));
    let blocks = (hit * prompt / b).round().max(1.0);
    (blocks * b) as u32
}

fn run_for(load: &Load) -> Run {
    let (measure_s, warm) = match load {
        Load::Open { rate_per_s } if *rate_per_s > 0.0 => {
            ((400.0 / rate_per_s).clamp(30.0, 240.0), 20)
        }
        Load::Closed { users, .. } => (40.0, (*users as usize).max(8)),
        _ => (40.0, 0),
    };
    Run {
        warmup_s: 8.0,
        // Every user's first request finished: the burst of the first
        // admissions is over.
        warmup_finished: warm,
        measure_s,
        min_finished: 60,
        seed: 36,
        max_finished: 800,
        scrape_s: 0.0,
    }
}

/// The engine `setup` configures, with the step cost `theta`.
fn engine(setup: &Setup, fit: &Fit, theta: &Theta) -> (Config, LinearCost) {
    let s = &setup.settings;
    let cfg = Config {
        max_num_seqs: s.max_num_seqs,
        max_num_batched_tokens: s.max_num_batched_tokens,
        kv_blocks: s.kv_blocks,
        block_size: s.block_size,
        prefix_caching: s.prefix_caching,
    };
    let cost = LinearCost {
        base_s: theta.a,
        per_decode_s: theta.b,
        per_prefill_token_s: theta.c,
        floor_s: fit.floor_s,
        roofline: fit.roofline,
    };
    (cfg, cost)
}

/// Replays `setup` with the step cost `theta`.
pub fn replay(setup: &Setup, fit: &Fit, theta: &Theta, w: &WorkloadFit) -> Figures {
    let (cfg, cost) = engine(setup, fit, theta);
    let mut jobs = Sampler::new(w, setup.prompt, setup.generated, setup.shared);
    let o = sched::simulate(cfg, &cost, &mut jobs, setup.load, run_for(&setup.load));
    Figures {
        ttft_p95_ms: o
            .ttft_quantile(0.95)
            .map(|t| (t + fit.front_end_s) * 1000.0),
        itl_p95_ms: o.itl_quantile(0.95).map(|t| t * 1000.0),
        in_flight: o.in_flight(),
        per_s: o.per_s(),
        tokens_per_s: if o.measured_s > 0.0 {
            o.generated_tokens as f64 / o.measured_s
        } else {
            0.0
        },
        waiting_share: o.waiting_share,
        queue_ms: o.queue_mean().map(|q| q * 1000.0),
    }
}

/// How a replay is read like a capture: its scrapes `interval_s` apart
/// over `span_s` of the load held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scraped {
    /// The capture's scrape interval, s.
    pub interval_s: f64,
    /// How long the capture held the load, s.
    pub span_s: f64,
}

/// Where the scorecard would see queueing start in a replay of `setup`,
/// read from its scrapes by the report's rule (`None`: no queueing seen).
///
/// Only waiting requests on consecutive scrapes are read, not the
/// report's other sighting (a window whose mean queue time reaches 50 ms):
/// the replay's queue time is mostly the wait for the next step, tens of
/// ms near that threshold, and crossing it where the capture did not
/// moved the start of `truncation` from ~150 to 15 in flight, where that
/// capture saw nothing queue at 16.
pub fn scorecard_start(
    setup: &Setup,
    fit: &Fit,
    theta: &Theta,
    w: &WorkloadFit,
    read: Scraped,
) -> Option<f64> {
    let (cfg, cost) = engine(setup, fit, theta);
    let mut run = run_for(&setup.load);
    run.measure_s = read.span_s;
    run.min_finished = 0;
    run.max_finished = usize::MAX;
    run.scrape_s = read.interval_s;
    let mut jobs = Sampler::new(w, setup.prompt, setup.generated, setup.shared);
    let o = sched::simulate(cfg, &cost, &mut jobs, setup.load, run);
    queue_start_from_scrapes(&o.scrapes)
}

/// The report's rule (`crates/analysis/src/measure/queue.rs`) over
/// `(running, waiting)` scrapes: queued where waiting > 0 on
/// [`QUEUED_CONSECUTIVE_SCRAPES`] scrapes in a row; queueing starts at the
/// fewest in flight seen queued [`QUEUEING_SEEN_TIMES`] times, and never
/// above the most that ran while others waited + 1.
pub fn queue_start_from_scrapes(scrapes: &[(u32, u32)]) -> Option<f64> {
    let mut seen: Vec<(u32, u32)> = Vec::new();
    let mut i = 0;
    while i < scrapes.len() {
        let j = i + scrapes[i..].iter().take_while(|s| s.1 > 0).count();
        if j - i >= QUEUED_CONSECUTIVE_SCRAPES {
            seen.extend(&scrapes[i..j]);
        }
        i = j.max(i + 1);
    }
    let cap = seen.iter().map(|s| s.0).max()?;
    let mut in_flight: Vec<u32> = seen.iter().map(|s| s.0 + s.1).collect();
    in_flight.sort_unstable();
    let nth = *in_flight.get(QUEUEING_SEEN_TIMES.min(in_flight.len()) - 1)?;
    Some(f64::from(nth.min(cap + 1)))
}

#[cfg(test)]
mod tests {
    use super::queue_start_from_scrapes;

    /// `(running, waiting)` per scrape → where the scorecard's rule says
    /// queueing starts.
    fn check(scrapes: &[(u32, u32)], expect: Option<f64>) {
        assert_eq!(queue_start_from_scrapes(scrapes), expect, "{scrapes:?}");
    }

    #[test]
    fn one_waiting_scrape_alone_is_an_arrival_between_steps() {
        check(&[(8, 1), (8, 0), (9, 1), (9, 0), (7, 2), (7, 0)], None);
    }

    #[test]
    fn queueing_starts_at_the_third_fewest_in_flight_seen_queued() {
        // Runs of two and three scrapes with waiting requests: sightings
        // at 12, 13, 10, 11, 14 in flight; the third fewest is 12.
        check(
            &[(11, 1), (12, 1), (5, 0), (9, 1), (10, 1), (12, 2), (3, 0)],
            Some(12.0),
        );
        // Fewer than three sightings: the most in flight among them.
        check(&[(6, 1), (7, 1), (2, 0)], Some(8.0));
    }

    #[test]
    fn the_start_is_never_above_the_cap_and_one_waiting() {
        // At most 8 ran while others waited: the ninth waits, whatever the
        // queue's depth at the scrapes.
        check(&[(8, 6), (8, 9), (8, 12), (8, 7)], Some(9.0));
    }
}
