//! The V1 scheduler's step loop, over a pluggable step cost.
//!
//! Each step: the running requests first, in order, each taking what it
//! still needs (a decode takes one token; a prefill the rest of its prompt)
//! from the step's token budget (`--max-num-batched-tokens`: a long prompt
//! is cut into chunks); then requests from the waiting queue, first come
//! first served, while fewer than `--max-num-seqs` run, budget is left and
//! the KV pool has their blocks (after a prefix-cache lookup over whole
//! blocks). A running request whose next block does not fit preempts the
//! newest running request (recomputation: it goes back to the head of the
//! queue). The step lasts what the [`StepCost`] says; at its end every
//! request whose prompt is complete samples one token.
//!
//! The load is open-loop (Poisson arrivals at a rate, whatever the
//! latency) or closed-loop (users who send, wait for the whole answer,
//! think, and send again). What a run measures after its warm-up is an
//! [`Outcome`]: each finished request's queue time, time to first token
//! and end-to-end latency, every inter-token gap, and the time-weighted
//! running and waiting counts.

use crate::kv::Pool;
use crate::plan::{self, Admission, Item, Policy, Queues, Requests};
use crate::rng::Rng;

/// What the engine is configured with (one replica).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// `--max-num-seqs`: the most requests that run at once.
    pub max_num_seqs: u32,
    /// `--max-num-batched-tokens`: the step's token budget.
    pub max_num_batched_tokens: u32,
    /// KV blocks in the pool.
    pub kv_blocks: u32,
    /// Tokens per KV block.
    pub block_size: u32,
    /// Automatic prefix caching.
    pub prefix_caching: bool,
}

/// One step's shape: what its duration depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Step {
    /// Requests that decode one token in this step.
    pub decode_seqs: u32,
    /// Prompt tokens computed in this step (chunks of prefills).
    pub prefill_tokens: u32,
    /// Tokens of context every item attends to (KV read).
    pub context_tokens: u64,
}

/// How long a step takes.
pub trait StepCost {
    /// The duration of `step`, seconds.
    fn seconds(&self, step: &Step) -> f64;
}

/// A step costs `base + per_decode × decode sequences + per_prefill_token ×
/// prefill tokens`, never less than `floor` (the time to read the weights
/// once, on a GPU); or, as a roofline (`roofline`), `base + per_decode ×
/// decode sequences + max(floor, per_prefill_token × every token computed)`:
/// the weights' read and the step's arithmetic overlap, so prompt tokens
/// ride along a decode step until their compute outlasts the read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearCost {
    /// Fixed cost of a step, s.
    pub base_s: f64,
    /// Cost of each decoding sequence, s.
    pub per_decode_s: f64,
    /// Cost of each prompt token computed, s.
    pub per_prefill_token_s: f64,
    /// The least a step can take, s.
    pub floor_s: f64,
    /// The roofline form.
    pub roofline: bool,
}

impl StepCost for LinearCost {
    fn seconds(&self, s: &Step) -> f64 {
        if self.roofline {
            let tokens = f64::from(s.decode_seqs) + f64::from(s.prefill_tokens);
            let t = self.base_s
                + self.per_decode_s * f64::from(s.decode_seqs)
                + (self.per_prefill_token_s * tokens).max(self.floor_s);
            return t.max(1e-6);
        }
        let t = self.base_s
            + self.per_decode_s * f64::from(s.decode_seqs)
            + self.per_prefill_token_s * f64::from(s.prefill_tokens);
        t.max(self.floor_s).max(1e-6)
    }
}

/// A request's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Prompt tokens.
    pub prompt: u32,
    /// Tokens to generate (at least 1).
    pub output: u32,
    /// Leading prompt tokens identical in every job of the same `group`.
    pub shared: u32,
    /// Which shared prefix (0: none).
    pub group: u32,
}

/// Where jobs come from.
pub trait Jobs {
    /// The next job.
    fn next(&mut self, rng: &mut Rng) -> Job;
}

/// How the load arrives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// Poisson arrivals at this rate, whatever the latency.
    Open {
        /// Requests per second.
        rate_per_s: f64,
    },
    /// Users who send a request, wait for the whole answer, think
    /// (exponential with this mean) and send again.
    Closed {
        /// Users.
        users: u32,
        /// Mean think time, s.
        think_s: f64,
    },
}

/// How long to run and what to discard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run {
    /// Simulated time discarded at the start, s.
    pub warmup_s: f64,
    /// The warm-up also lasts until this many requests finished (0: no
    /// such bound), so that a load whose requests take longer than
    /// `warmup_s` is measured in its steady state, not in the burst of
    /// its first admissions; it ends by `warmup_s + 4 × measure_s` in any
    /// case.
    pub warmup_finished: usize,
    /// Simulated time measured after the warm-up, s.
    pub measure_s: f64,
    /// The measurement also lasts until this many requests finished in it
    /// (0: no such bound), up to `6 × measure_s`.
    pub min_finished: usize,
    /// The seed of every random draw.
    pub seed: u64,
    /// Stop measuring after this many finished requests (a bound on work).
    pub max_finished: usize,
    /// Read the running and waiting counts every this many seconds of the
    /// measurement, as a scraper reads vLLM's gauges (0: no scrapes).
    pub scrape_s: f64,
}

/// One finished request (arrived after the warm-up, finished in the
/// measurement).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finished {
    /// When it arrived, s from the start.
    pub arrival_s: f64,
    /// Waiting before it was first scheduled, s.
    pub queue_s: f64,
    /// Arrival to first token, s.
    pub ttft_s: f64,
    /// Arrival to last token, s.
    pub e2e_s: f64,
    /// Tokens generated.
    pub output: u32,
}

/// What a run measured after its warm-up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Requests that arrived after the warm-up and finished in the
    /// measurement, in finishing order.
    pub finished: Vec<Finished>,
    /// Requests that finished in the measurement, whenever they arrived
    /// (the throughput: unbiased when requests last longer than the
    /// measurement).
    pub completed: u64,
    /// The time to first token of every first token produced in the
    /// measurement, whenever its request arrived, s.
    pub ttft_s: Vec<f64>,
    /// When the measurement started, s from the start.
    pub start_s: f64,
    /// Times to first token of requests that arrived but had no first
    /// token when the run ended: their age then (a lower bound), s.
    pub unanswered_s: Vec<f64>,
    /// Every inter-token gap, s.
    pub itl_s: Vec<f32>,
    /// Measured simulated time, s.
    pub measured_s: f64,
    /// Time-weighted mean of running requests.
    pub mean_running: f64,
    /// Time-weighted mean of waiting requests.
    pub mean_waiting: f64,
    /// Share of the time some request waited.
    pub waiting_share: f64,
    /// Share of the time a step ran.
    pub busy_share: f64,
    /// Steps run.
    pub steps: u64,
    /// Prompt tokens of finished requests' first admissions.
    pub prompt_tokens: u64,
    /// Of those, found in the prefix cache.
    pub cached_tokens: u64,
    /// Tokens generated.
    pub generated_tokens: u64,
    /// Preemptions.
    pub preemptions: u64,
    /// Jobs dropped because they can never fit the KV pool.
    pub dropped: u64,
    /// The KV pool's peak usage, 0–1.
    pub kv_peak: f64,
    /// Running and waiting requests at each scrape of the measurement
    /// ([`Run::scrape_s`] apart; the state the last step left, as vLLM's
    /// gauges show it).
    pub scrapes: Vec<(u32, u32)>,
}

/// The `q` quantile (0–1) of `xs` by the nearest rank, or `None` when
/// empty.
pub fn quantile(xs: &mut [f64], q: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    Some(xs[rank - 1])
}

impl Outcome {
    /// Time to first token at quantile `q`, s, of the first tokens the
    /// measurement saw, counting requests still unanswered at its end at
    /// their age.
    pub fn ttft_quantile(&self, q: f64) -> Option<f64> {
        let mut xs: Vec<f64> = self.ttft_s.clone();
        xs.extend(self.unanswered_s.iter().copied());
        quantile(&mut xs, q)
    }

    /// Inter-token latency at quantile `q`, s.
    pub fn itl_quantile(&self, q: f64) -> Option<f64> {
        let mut xs: Vec<f64> = self.itl_s.iter().map(|x| f64::from(*x)).collect();
        quantile(&mut xs, q)
    }

    /// Mean inter-token latency, s.
    pub fn itl_mean(&self) -> Option<f64> {
        (!self.itl_s.is_empty()).then(|| {
            self.itl_s.iter().map(|x| f64::from(*x)).sum::<f64>() / self.itl_s.len() as f64
        })
    }

    /// Finished requests per second.
    pub fn per_s(&self) -> f64 {
        if self.measured_s > 0.0 {
            self.completed as f64 / self.measured_s
        } else {
            0.0
        }
    }

    /// Mean requests in the engine (running + waiting).
    pub fn in_flight(&self) -> f64 {
        self.mean_running + self.mean_waiting
    }

    /// Mean end-to-end latency of finished requests, s.
    pub fn e2e_mean(&self) -> Option<f64> {
        (!self.finished.is_empty()).then(|| {
            self.finished.iter().map(|f| f.e2e_s).sum::<f64>() / self.finished.len() as f64
        })
    }

    /// Mean queue time of finished requests, s.
    pub fn queue_mean(&self) -> Option<f64> {
        (!self.finished.is_empty()).then(|| {
            self.finished.iter().map(|f| f.queue_s).sum::<f64>() / self.finished.len() as f64
        })
    }
}

#[derive(Clone, Debug)]
struct Req {
    job: Job,
    serial: u64,
    user: Option<u32>,
    arrival_s: f64,
    scheduled_s: Option<f64>,
    first_s: Option<f64>,
    last_s: f64,
    computed: u32,
    generated: u32,
    blocks: Vec<u32>,
    hashed: u32,
    /// The hash of block `hashed - 1` (0 before the first).
    parent: u64,
    cached_first: Option<u32>,
}

impl Req {
    fn stream(&self) -> u32 {
        self.job.prompt + self.generated
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The content hash of prompt block `i`: a shared prefix's blocks hash the
/// same in every job of its group; the rest is the request's own.
fn block_hash(r: &Req, i: u32, bs: u32, parent: u64) -> u64 {
    if r.job.group != 0 && (i + 1) * bs <= r.job.shared {
        mix(mix(parent, u64::from(r.job.group)), u64::from(i))
    } else {
        mix(mix(parent, r.serial | 1 << 63), u64::from(i))
    }
}

fn prompt_hashes(r: &Req, blocks: u32, bs: u32) -> Vec<u64> {
    let mut out = Vec::with_capacity(blocks as usize);
    let mut parent = 0;
    for i in 0..blocks {
        parent = block_hash(r, i, bs, parent);
        out.push(parent);
    }
    out
}

/// The requests as the planner sees them, with what it counts.
struct Book<'a> {
    reqs: &'a mut [Req],
    out: &'a mut Outcome,
    measuring: bool,
    now: f64,
    bs: u32,
    refused: &'a mut Vec<usize>,
}

impl Requests for Book<'_> {
    fn stream(&self, id: usize) -> u32 {
        self.reqs[id].stream()
    }

    fn computed(&self, id: usize) -> u32 {
        self.reqs[id].computed
    }

    fn generated(&self, id: usize) -> u32 {
        self.reqs[id].generated
    }

    fn blocks(&mut self, id: usize) -> &mut Vec<u32> {
        &mut self.reqs[id].blocks
    }

    fn lookup_hashes(&self, id: usize, full: u32) -> Vec<u64> {
        let r = &self.reqs[id];
        prompt_hashes(r, full.min(r.job.prompt / self.bs), self.bs)
    }

    fn preempted(&mut self, id: usize) {
        let r = &mut self.reqs[id];
        r.computed = 0;
        r.hashed = 0;
        r.parent = 0;
        if self.measuring {
            self.out.preemptions += 1;
        }
    }

    fn admitted(&mut self, id: usize, a: Admission) {
        let r = &mut self.reqs[id];
        r.hashed = a.hit as u32;
        r.parent = a.hit.checked_sub(1).map_or(0, |k| a.hashes[k]);
        r.blocks = a.blocks;
        r.computed = a.cached;
        if r.cached_first.is_none() {
            r.cached_first = Some(a.cached.min(r.job.prompt));
        }
        if r.scheduled_s.is_none() {
            r.scheduled_s = Some(self.now);
        }
    }

    fn refused(&mut self, id: usize) {
        self.refused.push(id);
    }
}

/// The engine under a load.
struct Engine<'a> {
    cfg: Config,
    cost: &'a dyn StepCost,
    jobs: &'a mut dyn Jobs,
    rng_jobs: Rng,
    rng_arrivals: Rng,
    q: Queues,
    reqs: Vec<Req>,
    free_slots: Vec<usize>,
    /// Pending arrivals: (time, user).
    pending: Vec<(f64, Option<u32>)>,
    serial: u64,
    now: f64,
    run: Run,
    out: Outcome,
    load: Load,
    /// The measurement's start (infinite while warming up) and end.
    start_s: f64,
    end_s: f64,
    /// Requests finished since the start.
    finished_total: usize,
    /// The next scrape, s from the start (infinite: none).
    next_scrape_s: f64,
}

impl Engine<'_> {
    fn measuring(&self) -> bool {
        self.now >= self.start_s
    }

    fn end_s(&self) -> f64 {
        self.end_s
    }

    /// Ends the warm-up once its time passed and enough requests finished
    /// (or by its bound); extends the measurement until enough finished in
    /// it (up to its bound).
    fn pace(&mut self) {
        let r = self.run;
        if !self.start_s.is_finite() {
            let warm = self.now >= r.warmup_s && self.finished_total >= r.warmup_finished;
            if warm || self.now >= r.warmup_s + 4.0 * r.measure_s {
                self.start_s = self.now;
                self.end_s = self.now + r.measure_s;
                self.first_scrape();
            }
        } else if self.now >= self.end_s
            && (self.out.completed as usize) < r.min_finished
            && self.end_s < self.start_s + 6.0 * r.measure_s
        {
            self.end_s = (self.end_s + r.measure_s / 2.0).min(self.start_s + 6.0 * r.measure_s);
        }
    }

    /// The measurement's first scrape: at its start.
    fn first_scrape(&mut self) {
        if self.run.scrape_s > 0.0 && self.run.scrape_s.is_finite() {
            self.next_scrape_s = self.start_s;
        }
    }

    fn next_pending(&self) -> Option<usize> {
        (0..self.pending.len()).min_by(|&a, &b| self.pending[a].0.total_cmp(&self.pending[b].0))
    }

    fn arrive_until(&mut self, t: f64) {
        while let Some(i) = self.next_pending() {
            if self.pending[i].0 > t {
                break;
            }
            let (at, user) = self.pending.swap_remove(i);
            let job = self.jobs.next(&mut self.rng_jobs);
            let job = Job {
                prompt: job.prompt.max(1),
                output: job.output.max(1),
                ..job
            };
            self.serial += 1;
            let r = Req {
                job,
                serial: self.serial,
                user,
                arrival_s: at,
                scheduled_s: None,
                first_s: None,
                last_s: at,
                computed: 0,
                generated: 0,
                blocks: Vec::new(),
                hashed: 0,
                parent: 0,
                cached_first: None,
            };
            let id = if let Some(slot) = self.free_slots.pop() {
                self.reqs[slot] = r;
                slot
            } else {
                self.reqs.push(r);
                self.reqs.len() - 1
            };
            self.q.waiting.push_back(id);
            if let Load::Open { rate_per_s } = self.load {
                let next = at + self.rng_arrivals.exp_portable(1.0 / rate_per_s);
                self.pending.push((next, None));
            }
        }
    }

    /// Plans one step ([`crate::plan`]); `None` when nothing can run.
    fn plan(&mut self) -> Option<(Vec<Item>, Step)> {
        let policy = Policy {
            max_num_seqs: self.cfg.max_num_seqs,
            budget: self.cfg.max_num_batched_tokens.max(1),
            block_size: self.cfg.block_size.max(1),
            chunked: true,
            admit_next_step: false,
            refuse_unfittable: true,
        };
        let mut refused = Vec::new();
        let mut book = Book {
            reqs: &mut self.reqs,
            out: &mut self.out,
            measuring: self.now >= self.start_s,
            now: self.now,
            bs: policy.block_size,
            refused: &mut refused,
        };
        let items = plan::plan(&policy, &mut self.q, &mut book).items;
        for id in refused {
            self.out.dropped += 1;
            self.retire(id);
        }
        if items.is_empty() {
            return None;
        }
        let mut step = Step::default();
        for it in &items {
            let r = &self.reqs[it.req];
            step.context_tokens += u64::from(r.computed + it.chunk);
            if it.decode {
                step.decode_seqs += 1;
            } else {
                step.prefill_tokens += it.chunk;
            }
        }
        Some((items, step))
    }

    /// A request leaves: its slot is reused, its user thinks.
    fn retire(&mut self, id: usize) {
        if let Some(u) = self.reqs[id].user {
            let think = match self.load {
                Load::Closed { think_s, .. } if think_s > 0.0 => {
                    self.rng_arrivals.exp_portable(think_s)
                }
                _ => 0.0,
            };
            self.pending.push((self.now + think, Some(u)));
        }
        self.free_slots.push(id);
    }

    fn finish_step(&mut self, items: Vec<Item>) {
        let bs = self.cfg.block_size.max(1);
        let now = self.now;
        let measuring = self.measuring();
        let mut done = Vec::new();
        for it in items {
            let id = it.req;
            self.reqs[id].computed += it.chunk;
            // Prompt blocks that became full are cached.
            let full_prompt = self.reqs[id].computed.min(self.reqs[id].job.prompt) / bs;
            while self.reqs[id].hashed < full_prompt {
                let r = &self.reqs[id];
                let k = r.hashed;
                let h = block_hash(r, k, bs, r.parent);
                let b = r.blocks[k as usize];
                self.q.pool.set_hash(b, h);
                let r = &mut self.reqs[id];
                r.hashed += 1;
                r.parent = h;
            }
            if self.reqs[id].computed < self.reqs[id].stream() {
                continue;
            }
            let r = &mut self.reqs[id];
            r.generated += 1;
            if r.first_s.is_none() {
                r.first_s = Some(now);
                if measuring {
                    self.out.ttft_s.push(now - r.arrival_s);
                }
                if measuring && r.arrival_s >= self.start_s {
                    self.out.prompt_tokens += u64::from(r.job.prompt);
                    self.out.cached_tokens += u64::from(r.cached_first.unwrap_or(0));
                }
            } else if measuring {
                self.out.itl_s.push((now - r.last_s) as f32);
            }
            r.last_s = now;
            if measuring {
                self.out.generated_tokens += 1;
            }
            if r.generated >= r.job.output {
                done.push(id);
            }
        }
        for id in done {
            let pos = self.q.running.iter().position(|x| *x == id);
            if let Some(p) = pos {
                self.q.running.remove(p);
            }
            let blocks = std::mem::take(&mut self.reqs[id].blocks);
            self.q.pool.release(&blocks);
            let r = &self.reqs[id];
            self.finished_total += 1;
            if measuring {
                self.out.completed += 1;
            }
            if measuring && r.arrival_s >= self.start_s {
                let first = r.first_s.unwrap_or(now);
                self.out.finished.push(Finished {
                    arrival_s: r.arrival_s,
                    queue_s: r.scheduled_s.unwrap_or(first) - r.arrival_s,
                    ttft_s: first - r.arrival_s,
                    e2e_s: now - r.arrival_s,
                    output: r.generated,
                });
            }
            self.retire(id);
        }
    }

    /// Accounts `dt` seconds at the current running and waiting counts.
    fn account(&mut self, from: f64, dt: f64, busy: bool) {
        let lo = from.max(self.start_s);
        let hi = (from + dt).min(self.end_s());
        if hi <= lo {
            return;
        }
        while self.next_scrape_s < hi {
            if self.next_scrape_s >= lo {
                self.out
                    .scrapes
                    .push((self.q.running.len() as u32, self.q.waiting.len() as u32));
            }
            self.next_scrape_s += self.run.scrape_s;
        }
        let w = hi - lo;
        self.out.measured_s += w;
        self.out.mean_running += w * self.q.running.len() as f64;
        self.out.mean_waiting += w * self.q.waiting.len() as f64;
        if !self.q.waiting.is_empty() {
            self.out.waiting_share += w;
        }
        if busy {
            self.out.busy_share += w;
        }
    }

    fn run(mut self) -> Outcome {
        // A bound on steps: a configuration whose steps are absurdly short
        // still ends.
        let mut guard: u64 = 20_000_000;
        loop {
            self.pace();
            let end = self.end_s();
            if self.now >= end || guard == 0 {
                break;
            }
            // While warming up, idle time runs to the warm-up's bound at
            // most.
            let end = end.min(self.run.warmup_s + 5.0 * self.run.measure_s);
            guard -= 1;
            self.arrive_until(self.now);
            if self.measuring() && self.out.completed as usize >= self.run.max_finished {
                break;
            }
            match self.plan() {
                Some((items, step)) => {
                    let dt = self.cost.seconds(&step);
                    let from = self.now;
                    self.account(from, dt, true);
                    self.now += dt;
                    if self.measuring() {
                        self.out.steps += 1;
                        self.out.kv_peak = self.out.kv_peak.max(self.q.pool.usage());
                    }
                    self.finish_step(items);
                }
                None => {
                    let next = self
                        .next_pending()
                        .map_or(end, |i| self.pending[i].0)
                        .max(self.now)
                        .min(end);
                    let from = self.now;
                    self.account(from, next - from, false);
                    if next <= self.now {
                        if self.pending.is_empty() {
                            break;
                        }
                        // Arrivals due now were taken but nothing fits: wait
                        // for the next one.
                        self.now = self
                            .pending
                            .iter()
                            .map(|p| p.0)
                            .fold(f64::INFINITY, f64::min);
                        if !self.now.is_finite() {
                            break;
                        }
                        continue;
                    }
                    self.now = next;
                }
            }
        }
        let now = self.now.min(self.end_s());
        self.out.start_s = self.start_s;
        for &id in self.q.running.iter().chain(self.q.waiting.iter()) {
            let r = &self.reqs[id];
            if r.first_s.is_none() && r.arrival_s >= self.start_s {
                self.out.unanswered_s.push(now - r.arrival_s);
            }
        }
        let m = self.out.measured_s;
        if m > 0.0 {
            self.out.mean_running /= m;
            self.out.mean_waiting /= m;
            self.out.waiting_share /= m;
            self.out.busy_share /= m;
        }
        self.out
    }
}

/// Runs the engine under `load` and returns what it measured.
pub fn simulate(
    cfg: Config,
    cost: &dyn StepCost,
    jobs: &mut dyn Jobs,
    load: Load,
    run: Run,
) -> Outcome {
    let mut rng_arrivals = Rng::stream(run.seed, "arrivals");
    let pending = match load {
        Load::Open { rate_per_s } if rate_per_s > 0.0 && rate_per_s.is_finite() => {
            vec![(rng_arrivals.exp_portable(1.0 / rate_per_s), None)]
        }
        Load::Open { .. } => Vec::new(),
        Load::Closed { users, think_s } => (0..users)
            .map(|u| (rng_arrivals.uniform(0.0, think_s.max(0.0) + 0.05), Some(u)))
            .collect(),
    };
    let mut engine = Engine {
        cfg,
        cost,
        jobs,
        rng_jobs: Rng::stream(run.seed, "jobs"),
        rng_arrivals,
        q: Queues::new(Pool::new(cfg.kv_blocks.max(1), cfg.prefix_caching)),
        reqs: Vec::new(),
        free_slots: Vec::new(),
        pending,
        serial: 0,
        now: 0.0,
        start_s: if run.warmup_finished == 0 {
            run.warmup_s
        } else {
            f64::INFINITY
        },
        end_s: if run.warmup_finished == 0 {
            run.warmup_s + run.measure_s
        } else {
            f64::INFINITY
        },
        finished_total: 0,
        run,
        out: Outcome::default(),
        load,
        next_scrape_s: f64::INFINITY,
    };
    if engine.start_s.is_finite() {
        engine.first_scrape();
    }
    engine.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Job);
    impl Jobs for Fixed {
        fn next(&mut self, _: &mut Rng) -> Job {
            self.0
        }
    }

    fn cfg(seqs: u32, budget: u32) -> Config {
        Config {
            max_num_seqs: seqs,
            max_num_batched_tokens: budget,
            kv_blocks: 10_000,
            block_size: 16,
            prefix_caching: true,
        }
    }

    const COST: LinearCost = LinearCost {
        base_s: 0.010,
        per_decode_s: 0.001,
        per_prefill_token_s: 0.0001,
        floor_s: 0.0,
        roofline: false,
    };

    fn run() -> Run {
        Run {
            warmup_s: 20.0,
            warmup_finished: 0,
            measure_s: 120.0,
            min_finished: 0,
            seed: 1,
            max_finished: 1_000_000,
            scrape_s: 0.0,
        }
    }

    fn job(prompt: u32, output: u32) -> Fixed {
        Fixed(Job {
            prompt,
            output,
            shared: 0,
            group: 0,
        })
    }

    #[test]
    fn closed_loop_below_the_cap_runs_every_user_and_never_waits() {
        let o = simulate(
            cfg(16, 2048),
            &COST,
            &mut job(100, 50),
            Load::Closed {
                users: 8,
                think_s: 0.0,
            },
            run(),
        );
        assert!((o.in_flight() - 8.0).abs() < 0.3, "{}", o.in_flight());
        assert!(o.mean_waiting < 0.05, "{}", o.mean_waiting);
        // Decode steps: 10 ms + 8 × 1 ms = 18 ms between tokens.
        let p50 = o.itl_quantile(0.5).unwrap();
        assert!((p50 - 0.018).abs() < 0.0015, "{p50}");
    }

    #[test]
    fn a_cap_below_the_users_queues_the_rest() {
        let o = simulate(
            cfg(8, 2048),
            &COST,
            &mut job(100, 50),
            Load::Closed {
                users: 16,
                think_s: 0.0,
            },
            run(),
        );
        assert!((o.mean_running - 8.0).abs() < 0.3, "{}", o.mean_running);
        assert!((o.mean_waiting - 8.0).abs() < 0.5, "{}", o.mean_waiting);
        assert!(o.waiting_share > 0.9);
        // Everyone waits about one answer's time.
        let q = o.queue_mean().unwrap();
        assert!(q > 0.5, "{q}");
    }

    #[test]
    fn a_small_budget_chunks_long_prompts_over_several_steps() {
        let big = simulate(
            cfg(64, 4096),
            &COST,
            &mut job(1000, 4),
            Load::Closed {
                users: 1,
                think_s: 0.0,
            },
            run(),
        );
        let small = simulate(
            cfg(64, 256),
            &COST,
            &mut job(1000, 4),
            Load::Closed {
                users: 1,
                think_s: 0.0,
            },
            run(),
        );
        // One step of 10 + 100 ms against four chunks of ≥ 10 ms each.
        let (a, b) = (
            big.ttft_quantile(0.5).unwrap(),
            small.ttft_quantile(0.5).unwrap(),
        );
        assert!((a - 0.110).abs() < 0.002, "{a}");
        assert!(b > a + 0.025, "{a} {b}");
    }

    #[test]
    fn prefix_caching_skips_the_shared_blocks() {
        let mut shared = Fixed(Job {
            prompt: 800,
            output: 8,
            shared: 640,
            group: 1,
        });
        let on = simulate(
            cfg(16, 2048),
            &COST,
            &mut shared,
            Load::Closed {
                users: 4,
                think_s: 0.0,
            },
            run(),
        );
        let mut c = cfg(16, 2048);
        c.prefix_caching = false;
        let off = simulate(
            c,
            &COST,
            &mut shared,
            Load::Closed {
                users: 4,
                think_s: 0.0,
            },
            run(),
        );
        let hit = on.cached_tokens as f64 / on.prompt_tokens as f64;
        assert!((hit - 0.8).abs() < 0.02, "{hit}");
        assert_eq!(off.cached_tokens, 0);
        assert!(on.ttft_quantile(0.5).unwrap() < off.ttft_quantile(0.5).unwrap());
    }

    #[test]
    fn open_loop_holds_its_rate_and_a_small_pool_preempts() {
        let o = simulate(
            cfg(64, 2048),
            &COST,
            &mut job(100, 50),
            Load::Open { rate_per_s: 5.0 },
            run(),
        );
        assert!((o.per_s() - 5.0).abs() < 0.8, "{}", o.per_s());
        let mut c = cfg(64, 2048);
        c.kv_blocks = 40;
        let p = simulate(
            c,
            &COST,
            &mut job(100, 200),
            Load::Closed {
                users: 8,
                think_s: 0.0,
            },
            run(),
        );
        assert!(p.preemptions > 0);
        assert!(p.kv_peak > 0.9);
    }

    #[test]
    fn a_job_larger_than_the_pool_is_dropped_not_hung() {
        let mut c = cfg(4, 2048);
        c.kv_blocks = 4;
        let o = simulate(
            c,
            &COST,
            &mut job(1000, 5),
            Load::Open { rate_per_s: 2.0 },
            run(),
        );
        assert!(o.dropped > 0);
        assert!(o.finished.is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let a = simulate(
            cfg(8, 512),
            &COST,
            &mut job(300, 40),
            Load::Open { rate_per_s: 9.0 },
            run(),
        );
        let b = simulate(
            cfg(8, 512),
            &COST,
            &mut job(300, 40),
            Load::Open { rate_per_s: 9.0 },
            run(),
        );
        assert_eq!(a, b);
    }

    #[test]
    fn the_roofline_lets_prompt_tokens_ride_along_the_weights_read() {
        let roof = LinearCost {
            base_s: 0.002,
            per_decode_s: 0.0001,
            per_prefill_token_s: 0.00001,
            floor_s: 0.020,
            roofline: true,
        };
        let step = |decode_seqs, prefill_tokens| Step {
            decode_seqs,
            prefill_tokens,
            context_tokens: 0,
        };
        // 8 sequences and a 500-token chunk: 5.08 ms of arithmetic, under
        // the 20 ms read: the chunk is free.
        let a = roof.seconds(&step(8, 0));
        let b = roof.seconds(&step(8, 500));
        assert!(
            (a - 0.0228).abs() < 1e-9 && (b - a).abs() < 1e-12,
            "{a} {b}"
        );
        // 4,000 tokens: 40.08 ms of arithmetic outlasts the read.
        let c = roof.seconds(&step(8, 4000));
        assert!((c - (0.002 + 0.0008 + 0.04008)).abs() < 1e-9, "{c}");
    }

    /// Requests far longer than the warm-up: the run waits for every
    /// user's first request, measures in the steady state, and counts the
    /// throughput by finishes whenever the request arrived (Little's law
    /// holds: users = rate × time in the system).
    #[test]
    fn long_requests_are_measured_in_the_steady_state() {
        let slow = LinearCost {
            base_s: 0.05,
            per_decode_s: 0.0,
            per_prefill_token_s: 0.0,
            floor_s: 0.0,
            roofline: false,
        };
        let r = Run {
            warmup_s: 1.0,
            warmup_finished: 8,
            measure_s: 20.0,
            min_finished: 40,
            seed: 3,
            max_finished: 100_000,
            scrape_s: 0.0,
        };
        // 400 tokens at 50 ms: 20 s per request, as long as the measure.
        let o = simulate(
            cfg(64, 2048),
            &slow,
            &mut job(100, 400),
            Load::Closed {
                users: 8,
                think_s: 0.0,
            },
            r,
        );
        assert!(o.start_s >= 20.0, "{}", o.start_s);
        // 40 finishes take ~100 s: the measurement grew past its 20 s.
        assert!(o.completed as usize >= 40, "{}", o.completed);
        assert!(o.measured_s > 90.0, "{}", o.measured_s);
        let rate = o.per_s();
        assert!((rate * 20.05 - 8.0).abs() < 0.5, "{rate}/s");
        assert!(!o.ttft_s.is_empty());
    }

    /// A scrape every `scrape_s` of the measurement, reading what the
    /// last step left: a closed loop of 4 users on a cap of 2 shows 2
    /// running and 2 waiting at every scrape.
    #[test]
    fn scrapes_read_running_and_waiting_every_interval() {
        let r = Run {
            scrape_s: 5.0,
            ..run()
        };
        let o = simulate(
            cfg(2, 2048),
            &COST,
            &mut job(100, 50),
            Load::Closed {
                users: 4,
                think_s: 0.0,
            },
            r,
        );
        assert_eq!(o.scrapes.len(), 24, "{}", o.scrapes.len());
        assert!(
            o.scrapes.iter().all(|&(run, wait)| run == 2 && wait == 2),
            "{:?}",
            o.scrapes
        );
        let none = simulate(
            cfg(2, 2048),
            &COST,
            &mut job(100, 50),
            Load::Closed {
                users: 4,
                think_s: 0.0,
            },
            run(),
        );
        assert!(none.scrapes.is_empty());
    }
}
