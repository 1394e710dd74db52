//! Ground truth: what really happened, per one-minute window of the capture,
//! recorded from the model's own events (never from the exposition). Tests
//! hold the scenario targets against it, and later stages can hold their
//! analyses against `samples/<name>.truth.json`.

use serde::Serialize;

use crate::engine::Replica;
use crate::gpu::{self, Trace};
use crate::hw::Gpu;
use crate::metrics::{REASONS, Reason};
use crate::scenario::Resolved;

/// Window length, s.
pub const WINDOW_S: f64 = 60.0;

/// Log-spaced histogram (1 % wide bins from 10 µs) for exact-enough
/// quantiles of per-token latencies without keeping every value.
#[derive(Debug, Clone, Default)]
struct LogHist {
    bins: Vec<u32>,
    n: u64,
}

const LOG_BASE: f64 = 1.01;
const LOG_MIN: f64 = 1e-5;

impl LogHist {
    fn add(&mut self, v: f64) {
        let i = if v <= LOG_MIN {
            0
        } else {
            ((v / LOG_MIN).ln() / LOG_BASE.ln()).floor() as usize + 1
        };
        if self.bins.len() <= i {
            self.bins.resize(i + 1, 0);
        }
        self.bins[i] += 1;
        self.n += 1;
    }

    fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in self.bins.iter().enumerate() {
            acc += u64::from(*c);
            if acc >= rank {
                if i == 0 {
                    return Some(LOG_MIN);
                }
                // Geometric middle of the bin.
                return Some(LOG_MIN * LOG_BASE.powf(i as f64 - 0.5));
            }
        }
        None
    }
}

/// Exact quantile (nearest rank) of a sorted slice.
fn nearest_rank(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

#[derive(Debug, Clone, Default)]
struct Acc {
    ttft: Vec<f64>,
    itl: LogHist,
    itl_sum: f64,
    finished: u64,
    by_reason: [u64; 5],
    queue: f64,
    prefill: f64,
    decode: f64,
    inference: f64,
    e2e: f64,
    prompt_fin: f64,
    gen_fin: f64,
    max_tokens: f64,
    prompt_tokens: f64,
    cached_tokens: f64,
    gen_tokens: f64,
    queries: f64,
    hits: f64,
    steps: f64,
    step_tokens: f64,
    preemptions: f64,
    http: [u64; 3],
    kv: Vec<f64>,
    running: Vec<f64>,
    waiting: Vec<f64>,
    temp: Vec<f64>,
    vram_pct: Vec<f64>,
}

/// Collects the truth while the simulation runs.
#[derive(Debug, Clone)]
pub struct Recorder {
    start_unix: f64,
    acc: Vec<Acc>,
    replicas: usize,
    /// Whole-capture totals, for conservation checks.
    pub totals: Totals,
}

/// Whole-capture totals (including the warm-up), per quantity.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Totals {
    /// Requests with a `finished_reason`, by reason.
    pub finished_by_reason: [u64; 5],
    /// Prompt tokens counted at first token.
    pub prompt_tokens: u64,
    /// Generated tokens.
    pub generation_tokens: u64,
    /// Sum of per-request prompt lengths of finished requests.
    pub finished_prompt_tokens: u64,
    /// Sum of per-request generated tokens of finished requests.
    pub finished_generation_tokens: u64,
    /// Preemptions.
    pub preemptions: u64,
}

impl Recorder {
    /// A recorder for a scenario.
    pub fn new(r: &Resolved, replicas: usize) -> Recorder {
        let n = (r.scenario.duration_s / WINDOW_S).ceil() as usize;
        Recorder {
            start_unix: r.start_ms as f64 / 1000.0,
            acc: vec![Acc::default(); n],
            replicas,
            totals: Totals::default(),
        }
    }

    fn w(&mut self, unix: f64) -> Option<&mut Acc> {
        let i = (unix - self.start_unix) / WINDOW_S;
        if i < 0.0 {
            return None;
        }
        self.acc.get_mut(i as usize)
    }

    pub(crate) fn scrape(&mut self, unix: f64, _replica: usize, r: &Replica) {
        if !r.up {
            return;
        }
        if let Some(a) = self.w(unix) {
            a.kv.push(r.metrics.kv_usage);
            a.running.push(r.metrics.running);
            a.waiting.push(r.metrics.waiting);
        }
    }

    pub(crate) fn gpu_collect(&mut self, unix: f64, temp: f64, vram_pct: f64) {
        if let Some(a) = self.w(unix) {
            a.temp.push(temp);
            a.vram_pct.push(vram_pct);
        }
    }

    pub(crate) fn http(&mut self, unix: f64, status: &str) {
        let i = match status {
            "2xx" => 0,
            "4xx" => 1,
            _ => 2,
        };
        if let Some(a) = self.w(unix) {
            a.http[i] += 1;
        }
    }

    pub(crate) fn preemption(&mut self, unix: f64) {
        self.totals.preemptions += 1;
        if let Some(a) = self.w(unix) {
            a.preemptions += 1.0;
        }
    }

    pub(crate) fn prefix(&mut self, unix: f64, queried: u32, cached: u32) {
        if let Some(a) = self.w(unix) {
            a.queries += f64::from(queried);
            a.hits += f64::from(cached);
        }
    }

    pub(crate) fn step(&mut self, unix: f64, tokens: f64) {
        if let Some(a) = self.w(unix) {
            a.steps += 1.0;
            a.step_tokens += tokens;
        }
    }

    pub(crate) fn token(&mut self, unix: f64) {
        self.totals.generation_tokens += 1;
        if let Some(a) = self.w(unix) {
            a.gen_tokens += 1.0;
        }
    }

    pub(crate) fn first_token(&mut self, unix: f64, ttft: f64, prompt: u32, cached: u32) {
        self.totals.prompt_tokens += u64::from(prompt);
        if let Some(a) = self.w(unix) {
            a.ttft.push(ttft);
            a.prompt_tokens += f64::from(prompt);
            a.cached_tokens += f64::from(cached);
        }
    }

    pub(crate) fn itl(&mut self, unix: f64, v: f64) {
        if let Some(a) = self.w(unix) {
            a.itl.add(v);
            a.itl_sum += v;
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finished(
        &mut self,
        unix: f64,
        reason: Reason,
        queue: f64,
        prefill: f64,
        decode: f64,
        inference: f64,
        e2e: f64,
        prompt: u32,
        gen_tokens: u32,
        max_tokens: u32,
    ) {
        self.totals.finished_by_reason[reason as usize] += 1;
        self.totals.finished_prompt_tokens += u64::from(prompt);
        self.totals.finished_generation_tokens += u64::from(gen_tokens);
        if let Some(a) = self.w(unix) {
            a.finished += 1;
            a.by_reason[reason as usize] += 1;
            a.queue += queue;
            a.prefill += prefill;
            a.decode += decode;
            a.inference += inference;
            a.e2e += e2e;
            a.prompt_fin += f64::from(prompt);
            a.gen_fin += f64::from(gen_tokens);
            a.max_tokens += f64::from(max_tokens);
        }
    }

    /// The windows' figures. `traces` are the replicas' activity traces,
    /// `warmup_s` maps Unix time back to simulation time.
    pub fn finish(
        &self,
        traces: &[&Trace],
        gpu: &Gpu,
        gpus_per_replica: usize,
        warmup_s: f64,
    ) -> Vec<Window> {
        let _ = self.replicas;
        self.acc
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let t0 = warmup_s + i as f64 * WINDOW_S;
                let t1 = t0 + WINDOW_S;
                let per_min = |x: f64| x * 60.0 / WINDOW_S;
                let div = |x: f64, y: f64| if y > 0.0 { Some(x / y) } else { None };
                let mean = |v: &[f64]| {
                    if v.is_empty() {
                        None
                    } else {
                        Some(v.iter().sum::<f64>() / v.len() as f64)
                    }
                };
                let mut ttft = a.ttft.clone();
                ttft.sort_by(f64::total_cmp);
                let n = a.finished as f64;
                // GPUs: every replica's trace stands for its tensor-parallel GPUs.
                let mut util = 0.0;
                let mut dram = 0.0;
                let mut tensor = 0.0;
                let mut energy = 0.0;
                for tr in traces {
                    let (b, d, t) = tr.mean(t0, t1);
                    util += b;
                    dram += d;
                    tensor += t;
                    energy += gpu::power(gpu, b, d, t) * WINDOW_S * gpus_per_replica as f64;
                    let _ = gpu::steady_temp;
                }
                let k = traces.len().max(1) as f64;
                let n_gpus = k * gpus_per_replica as f64;
                Window {
                    start_s: i as f64 * WINDOW_S,
                    requests_finished: a.finished,
                    completions_per_min: REASONS
                        .iter()
                        .zip(a.by_reason)
                        .map(|(r, c)| ((*r).to_string(), per_min(c as f64)))
                        .collect(),
                    ttft_ms: mean(&a.ttft).map(|x| x * 1000.0),
                    ttft_p50_ms: nearest_rank(&ttft, 0.5).map(|x| x * 1000.0),
                    ttft_p95_ms: nearest_rank(&ttft, 0.95).map(|x| x * 1000.0),
                    ttft_p99_ms: nearest_rank(&ttft, 0.99).map(|x| x * 1000.0),
                    inter_token_ms: div(a.itl_sum, a.itl.n as f64).map(|x| x * 1000.0),
                    itl_p50_ms: a.itl.quantile(0.5).map(|x| x * 1000.0),
                    itl_p95_ms: a.itl.quantile(0.95).map(|x| x * 1000.0),
                    itl_p99_ms: a.itl.quantile(0.99).map(|x| x * 1000.0),
                    queue_ms: div(a.queue, n).map(|x| x * 1000.0),
                    prefill_ms: div(a.prefill, n).map(|x| x * 1000.0),
                    decode_ms: div(a.decode, n).map(|x| x * 1000.0),
                    inference_ms: div(a.inference, n).map(|x| x * 1000.0),
                    e2e_ms: div(a.e2e, n).map(|x| x * 1000.0),
                    prefix_cache_hit_pct: div(a.hits, a.queries).map(|x| x * 100.0),
                    cached_prompt_share_pct: div(a.cached_tokens, a.prompt_tokens)
                        .map(|x| x * 100.0),
                    tokens_per_iteration: div(a.step_tokens, a.steps),
                    gen_tokens_per_sec: a.gen_tokens / WINDOW_S,
                    prompt_tokens_per_sec: a.prompt_tokens / WINDOW_S,
                    requests_per_min: per_min(n),
                    avg_prompt_tokens: div(a.prompt_fin, n),
                    avg_generated_tokens: div(a.gen_fin, n),
                    avg_max_tokens: div(a.max_tokens, n),
                    kv_cache_pct: mean(&a.kv).map(|x| x * 100.0),
                    running: mean(&a.running).map(|x| x * self.replicas as f64),
                    waiting: mean(&a.waiting).map(|x| x * self.replicas as f64),
                    preemptions_per_min: per_min(a.preemptions),
                    http_per_min: [("2xx", a.http[0]), ("4xx", a.http[1]), ("5xx", a.http[2])]
                        .into_iter()
                        .map(|(s, c)| (s.to_string(), per_min(c as f64)))
                        .collect(),
                    gpu_util_pct: util / k * 100.0,
                    gr_engine_active_pct: util / k * 100.0,
                    tensor_active_pct: tensor / k * 100.0,
                    dram_active_pct: dram / k * 100.0,
                    power_w: energy / WINDOW_S / n_gpus,
                    energy_j: energy,
                    temp_c: mean(&a.temp),
                    vram_used_pct: mean(&a.vram_pct),
                    tokens_per_joule: div(a.gen_tokens, energy),
                }
            })
            .collect()
    }
}

/// One minute of truth, over all replicas and GPUs.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Window {
    /// Seconds from the capture start.
    pub start_s: f64,
    pub requests_finished: u64,
    pub completions_per_min: Vec<(String, f64)>,
    pub ttft_ms: Option<f64>,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p95_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    pub inter_token_ms: Option<f64>,
    pub itl_p50_ms: Option<f64>,
    pub itl_p95_ms: Option<f64>,
    pub itl_p99_ms: Option<f64>,
    pub queue_ms: Option<f64>,
    pub prefill_ms: Option<f64>,
    pub decode_ms: Option<f64>,
    pub inference_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub prefix_cache_hit_pct: Option<f64>,
    pub cached_prompt_share_pct: Option<f64>,
    pub tokens_per_iteration: Option<f64>,
    pub gen_tokens_per_sec: f64,
    pub prompt_tokens_per_sec: f64,
    pub requests_per_min: f64,
    pub avg_prompt_tokens: Option<f64>,
    pub avg_generated_tokens: Option<f64>,
    pub avg_max_tokens: Option<f64>,
    pub kv_cache_pct: Option<f64>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub preemptions_per_min: f64,
    pub http_per_min: Vec<(String, f64)>,
    pub gpu_util_pct: f64,
    pub gr_engine_active_pct: f64,
    pub tensor_active_pct: f64,
    pub dram_active_pct: f64,
    pub power_w: f64,
    pub energy_j: f64,
    pub temp_c: Option<f64>,
    pub vram_used_pct: Option<f64>,
    pub tokens_per_joule: Option<f64>,
}
