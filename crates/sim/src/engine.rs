//! The discrete-event simulation: users or a Poisson process send requests
//! through an API front end to one or more vLLM engines; each engine runs
//! a continuous-batching step loop over a block-based KV cache; scrapes and
//! dcgm-exporter collections happen on their own clocks.
//!
//! Time is `f64` seconds from the simulation start, which is `warmup_s`
//! before the capture starts.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::gpu::Trace;
use crate::kv::Pool;
use crate::metrics::{Reason, VllmMetrics};
use crate::rng::Rng;
use crate::scenario::{Arrivals, Event, Resolved, Router};
use crate::truth::Recorder;
use vllm_lens_engine::plan::{Admission, Item, Plan, Policy, Queues, Requests, plan};

/// GPU idle gap between two steps (host work not hidden by async scheduling), s.
const HOST_GAP_S: f64 = 0.000_04;
/// DRAM interface busy time per byte is `1 / (bandwidth × DRAM_EFF)`: the
/// interface is busy longer than an ideal stream would take.
const DRAM_EFF: f64 = 0.667;
/// Tensor-pipe activity per FLOP relative to the datasheet peak (calibrated:
/// the A10G's BF16 figure is uncertain, ~70 TF/s dense per secondary sources).
const TENSOR_EFF: f64 = 1.14;

/// How a request is going to end, decided when it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Runs to stop/length/repetition.
    Normal,
    /// The client goes away after `cut` tokens.
    Disconnect,
    /// The engine aborts it after `cut` tokens.
    Abort,
    /// The engine fails it after `cut` tokens.
    Error,
}

/// One request's life.
#[derive(Debug, Clone)]
pub struct Request {
    replica: usize,
    user: Option<usize>,
    t_api: f64,
    t_queued: f64,
    t_scheduled: Option<f64>,
    t_first: Option<f64>,
    t_last: f64,
    prompt_len: u32,
    segs: Vec<(u64, u32)>,
    out_id: u64,
    max_tokens: u32,
    target: u32,
    reason: Reason,
    fate: Fate,
    cut: u32,
    generated: u32,
    computed: u32,
    blocks: Vec<u32>,
    chain: Vec<u64>,
    cached_first: Option<u32>,
    done: bool,
}

impl Request {
    fn stream_len(&self) -> u32 {
        self.prompt_len + self.generated
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Arrival { user: usize },
    OpenArrival,
    EngineReady { req: usize },
    StepEnd { replica: usize },
    Scrape { target: usize, slot: usize },
    Collect { node: usize },
    Restart { replica: usize, down_ns: u64 },
    Up { replica: usize },
    End,
}

/// One vLLM server.
pub struct Replica {
    /// Running and waiting requests and the KV pool.
    pub(crate) q: Queues,
    inbox: Vec<usize>,
    step: Option<Vec<Item>>,
    pub(crate) metrics: VllmMetrics,
    pub(crate) trace: Trace,
    pub(crate) up: bool,
    /// Set while a process is serving (false between a crash and `Up`).
    pub(crate) loaded: bool,
    last_log: (f64, f64, f64),
    rr_skip: u64,
    /// When the last crash happened (the new process starts then).
    crashed_at: f64,
}

/// Session state of a closed-loop user.
#[derive(Debug, Clone, Default)]
struct User {
    active: bool,
    history: Vec<(u64, u32)>,
    turn: u32,
    session: u64,
    pending: Option<usize>,
}

/// What the engine tells the outside world at scrape and collection times.
pub trait Observer {
    /// A vLLM target is scraped (`None` if it is down).
    fn scrape_vllm(&mut self, sim: &Sim, replica: usize, slot: usize, t: f64);
    /// A DCGM target is scraped.
    fn scrape_dcgm(&mut self, sim: &Sim, node: usize, slot: usize, t: f64);
    /// dcgm-exporter collects its fields.
    fn collect(&mut self, sim: &Sim, node: usize, t: f64);
}

/// The whole simulation.
pub struct Sim {
    /// The scenario.
    pub r: Resolved,
    pub(crate) replicas: Vec<Replica>,
    reqs: Vec<Request>,
    users: Vec<User>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// Current time.
    pub now: f64,
    rng_shape: Rng,
    rng_arrival: Rng,
    rng_fate: Rng,
    next_id: u64,
    rr: usize,
    pub(crate) truth: Recorder,
    /// KV blocks per replica.
    pub num_blocks: u32,
    /// Weight bytes per GPU.
    pub weight_bytes: f64,
    /// vLLM's memory budget per GPU, MiB.
    pub budget_mib: f64,
    /// Scrape targets: vLLM replicas then DCGM nodes.
    pub n_nodes: usize,
    /// GPUs per node.
    pub gpus_per_node: usize,
    /// Nominal slot times (s) of scrapes.
    pub slots: usize,
}

fn ns(t: f64) -> u64 {
    (t.max(0.0) * 1e9).round() as u64
}

fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Content hash of block `i` of a request's token stream, chained.
fn block_hash(bs: u32, req: &Request, i: u32, parent: u64) -> u64 {
    let (lo, hi) = (i * bs, (i + 1) * bs);
    let mut h = mix(parent, u64::from(i));
    let mut pos = 0u32;
    for &(id, len) in &req.segs {
        let (a, b) = (pos, pos + len);
        if b > lo && a < hi {
            h = mix(h, mix(id, u64::from(lo.max(a) - a)));
            h = mix(h, u64::from(hi.min(b) - lo.max(a)));
        }
        pos = b;
        if pos >= hi {
            return h;
        }
    }
    // The rest is this request's own output.
    let a = pos.max(lo);
    mix(
        mix(h, mix(req.out_id, u64::from(a - pos))),
        u64::from(hi - a),
    )
}

/// A replica's requests as the scheduler ([`plan`]) sees them, with what
/// its server counts when it preempts and admits.
struct Book<'a> {
    reqs: &'a mut [Request],
    metrics: &'a mut VllmMetrics,
    truth: &'a mut Recorder,
    bs: u32,
    now: f64,
    unix: f64,
}

impl Requests for Book<'_> {
    fn stream(&self, id: usize) -> u32 {
        self.reqs[id].stream_len()
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
        let req = &self.reqs[id];
        let mut out = Vec::with_capacity(full as usize);
        let mut parent = 0;
        for i in 0..full {
            parent = block_hash(self.bs, req, i, parent);
            out.push(parent);
        }
        out
    }

    fn preempted(&mut self, id: usize) {
        let r = &mut self.reqs[id];
        r.computed = 0;
        r.chain.clear();
        self.metrics.preemptions += 1.0;
        self.truth.preemption(self.unix);
    }

    fn admitted(&mut self, id: usize, a: Admission) {
        // One prefix-cache lookup of the stream, `cached` tokens found.
        let m = &mut *self.metrics;
        m.prefix_queries += f64::from(a.stream);
        m.prefix_hits += f64::from(a.cached);
        m.prefix_block_queries += f64::from(a.stream.div_ceil(self.bs));
        m.prefix_block_hits += a.hit as f64;
        self.truth.prefix(self.unix, a.stream, a.cached);
        let r = &mut self.reqs[id];
        r.chain = a.hashes[..a.hit].to_vec();
        r.blocks = a.blocks;
        r.computed = a.cached;
        if r.cached_first.is_none() {
            r.cached_first = Some(a.cached.min(r.prompt_len));
        }
        if r.t_scheduled.is_none() {
            r.t_scheduled = Some(self.now);
        }
    }

    fn refused(&mut self, _: usize) {
        unreachable!("the simulator's policy never refuses");
    }
}

/// ID of the shared system prompt segment.
const SYSTEM: u64 = 1;

impl Sim {
    /// Sets the simulation up.
    pub fn new(r: Resolved) -> Sim {
        let s = &r.scenario;
        let srv = &s.server;
        let tp = f64::from(srv.tensor_parallel);
        let weight_bytes = r.model.params * srv.weight_bytes / tp;
        let gpu_mib = r.gpu.memory_mib as f64;
        let budget_mib = gpu_mib * srv.gpu_memory_utilization;
        let kv_mib = budget_mib - weight_bytes / 1_048_576.0 - srv.perf.activation_mib;
        let block_bytes = r.model.kv_bytes_per_token(2.0) / tp * f64::from(srv.block_size);
        let num_blocks = ((kv_mib * 1_048_576.0) / block_bytes).floor().max(16.0) as u32;
        let replicas = srv.replicas as usize;
        let gpus_per_replica = srv.tensor_parallel as usize;
        // One node per replica; its exporter sees the replica's GPUs.
        let n_nodes = replicas;
        let slots = (s.duration_s / s.scrape_interval_s).round() as usize;
        let seed = s.seed;
        let mut sim = Sim {
            replicas: Vec::new(),
            reqs: Vec::new(),
            users: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0.0,
            rng_shape: Rng::stream(seed, "shape"),
            rng_arrival: Rng::stream(seed, "arrival"),
            rng_fate: Rng::stream(seed, "fate"),
            next_id: 100,
            rr: 0,
            truth: Recorder::new(&r, replicas),
            num_blocks,
            weight_bytes,
            budget_mib,
            n_nodes,
            gpus_per_node: gpus_per_replica,
            slots,
            r,
        };
        for i in 0..replicas {
            let start = sim.unix(0.0) - 95.0 - 7.0 * i as f64;
            let rep = Replica {
                q: Queues::new(Pool::new(num_blocks, srv_caching(&sim))),
                inbox: Vec::new(),
                step: None,
                metrics: VllmMetrics::new(
                    sim.r.version,
                    sim.r.scenario.server.max_model_len,
                    start,
                    start + 61.2,
                    num_blocks,
                ),
                trace: Trace::new(sim.total_s()),
                up: true,
                loaded: true,
                last_log: (0.0, 0.0, 0.0),
                rr_skip: 0,
                crashed_at: 0.0,
            };
            sim.replicas.push(rep);
        }
        sim.schedule_initial();
        sim
    }

    /// Simulation length, s.
    pub fn total_s(&self) -> f64 {
        self.r.scenario.warmup_s + self.r.scenario.duration_s
    }

    /// Unix seconds of simulation time `t`.
    pub fn unix(&self, t: f64) -> f64 {
        self.r.start_ms as f64 / 1000.0 + t - self.r.scenario.warmup_s
    }

    /// Simulation time of a capture offset.
    fn at(&self, capture_s: f64) -> f64 {
        self.r.scenario.warmup_s + capture_s
    }

    fn push(&mut self, t: f64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((ns(t), self.seq, ev)));
    }

    fn schedule_initial(&mut self) {
        let s = self.r.scenario.clone();
        match &s.workload.arrivals {
            Arrivals::Closed { phases, .. } => {
                let max_users = phases.iter().map(|p| p.1).max().unwrap_or(0) as usize;
                self.users = vec![User::default(); max_users];
                for &(at_s, users) in phases {
                    let t = if at_s <= 0.0 { 0.0 } else { self.at(at_s) };
                    for u in 0..users as usize {
                        if !self.users[u].active {
                            self.users[u].active = true;
                            let jitter = self.rng_arrival.uniform(0.0, 2.0);
                            self.push(t + jitter, Ev::Arrival { user: u });
                        }
                    }
                }
            }
            Arrivals::Open { .. } => self.push(0.0, Ev::OpenArrival),
        }
        for ev in &s.events {
            if let Event::Restart {
                replica,
                at_s,
                down_s,
            } = *ev
            {
                self.push(
                    self.at(at_s),
                    Ev::Restart {
                        replica: replica as usize,
                        down_ns: ns(down_s),
                    },
                );
            }
        }
        // Scrapes: vLLM targets first, then DCGM nodes; a serial collector
        // reaches them a few hundred ms apart.
        let interval = s.scrape_interval_s;
        let n_targets = self.replicas.len() + self.n_nodes;
        let mut jrng = Rng::stream(s.seed, "scrape-jitter");
        for slot in 0..self.slots {
            for target in 0..n_targets {
                let base = self.at(slot as f64 * interval) + 0.05 + 0.11 * target as f64;
                let j = if s.capture.jitter_s > 0.0 {
                    jrng.uniform(-s.capture.jitter_s, s.capture.jitter_s)
                } else {
                    0.0
                };
                self.push((base + j).max(0.0), Ev::Scrape { target, slot });
            }
        }
        let ci = f64::from(s.exporter.collect_interval_ms) / 1000.0;
        for node in 0..self.n_nodes {
            let mut t = 3.7 + 1.3 * node as f64;
            while t < self.total_s() {
                self.push(t, Ev::Collect { node });
                t += ci;
            }
        }
        self.push(self.total_s(), Ev::End);
    }

    /// Users active at capture offset `t`.
    fn users_at(&self, t: f64) -> u32 {
        match &self.r.scenario.workload.arrivals {
            Arrivals::Closed { phases, .. } => {
                let c = t - self.r.scenario.warmup_s;
                phases
                    .iter()
                    .rfind(|p| p.0 <= c.max(0.0))
                    .map(|p| p.1)
                    .unwrap_or(0)
            }
            Arrivals::Open { .. } => u32::MAX,
        }
    }

    fn open_rate(&self, t: f64) -> f64 {
        let Arrivals::Open { phases, diurnal } = &self.r.scenario.workload.arrivals else {
            return 0.0;
        };
        let c = t - self.r.scenario.warmup_s;
        let base = phases
            .iter()
            .rfind(|p| p.0 <= c.max(0.0))
            .map(|p| p.1)
            .unwrap_or(0.0);
        match diurnal {
            Some(d) => {
                let hour = (self.unix(t) / 3600.0).rem_euclid(24.0);
                let x = (1.0 + (std::f64::consts::TAU * (hour - d.peak_hour) / 24.0).cos()) / 2.0;
                base * (d.trough + (1.0 - d.trough) * x)
            }
            None => base,
        }
    }

    /// Runs to the end, calling `obs` at scrape and collection times.
    pub fn run(&mut self, obs: &mut dyn Observer) {
        while let Some(Reverse((t_ns, _, ev))) = self.heap.pop() {
            let t = t_ns as f64 / 1e9;
            self.now = t;
            match ev {
                Ev::End => break,
                Ev::Arrival { user } => self.arrival(Some(user)),
                Ev::OpenArrival => {
                    self.arrival(None);
                    let rate = self.open_rate(t).max(1e-6);
                    let gap = self.rng_arrival.exp(1.0 / rate).min(3600.0);
                    self.push(t + gap, Ev::OpenArrival);
                }
                Ev::EngineReady { req } => {
                    let rep = self.reqs[req].replica;
                    if self.reqs[req].done {
                        continue;
                    }
                    self.replicas[rep].inbox.push(req);
                    if self.replicas[rep].step.is_none() && self.replicas[rep].up {
                        self.start_step(rep);
                    }
                }
                Ev::StepEnd { replica } => {
                    self.end_step(replica);
                    self.start_step(replica);
                }
                Ev::Scrape { target, slot } => {
                    if target < self.replicas.len() {
                        obs.scrape_vllm(self, target, slot, t);
                        self.truth
                            .scrape(self.unix(t), target, &self.replicas[target]);
                    } else {
                        obs.scrape_dcgm(self, target - self.replicas.len(), slot, t);
                    }
                }
                Ev::Collect { node } => obs.collect(self, node, t),
                Ev::Restart { replica, down_ns } => self.restart(replica, down_ns as f64 / 1e9),
                Ev::Up { replica } => {
                    // The container restarts at the crash; it serves once
                    // the model is loaded, `down_s` later.
                    let crashed = self.replicas[replica].crashed_at;
                    let start = self.unix(crashed);
                    // The engine's metrics exist before the server answers.
                    let created = start + 0.8 * (t - crashed);
                    let r = &mut self.replicas[replica];
                    r.up = true;
                    r.loaded = true;
                    r.metrics = VllmMetrics::new(
                        self.r.version,
                        self.r.scenario.server.max_model_len,
                        start,
                        created,
                        self.num_blocks,
                    );
                    r.q.pool = Pool::new(
                        self.num_blocks,
                        self.r.scenario.server.enable_prefix_caching,
                    );
                    r.last_log = (t, 0.0, 0.0);
                }
            }
        }
    }

    fn burst_fate(&mut self, t: f64) -> (Fate, bool) {
        let c = t - self.r.scenario.warmup_s;
        for ev in &self.r.scenario.events {
            if let Event::Burst {
                from_s,
                to_s,
                client_disconnect,
                abort,
                error,
                rejected,
            } = *ev
                && c >= from_s
                && c < to_s
            {
                let x = self.rng_fate.f64();
                let mut acc = rejected;
                if x < acc {
                    return (Fate::Normal, true);
                }
                for (share, fate) in [
                    (client_disconnect, Fate::Disconnect),
                    (abort, Fate::Abort),
                    (error, Fate::Error),
                ] {
                    acc += share;
                    if x < acc {
                        return (fate, false);
                    }
                }
            }
        }
        (Fate::Normal, false)
    }

    fn arrival(&mut self, user: Option<usize>) {
        let t = self.now;
        if let Some(u) = user
            && u as u32 >= self.users_at(t)
        {
            self.users[u].active = false;
            return;
        }
        let (fate, rejected) = self.burst_fate(t);
        let wl = self.r.scenario.workload.clone();
        let srv = self.r.scenario.server.clone();
        // Shape: system prompt, conversation history, new user text.
        let mut segs = Vec::new();
        if wl.shared_prefix_tokens > 0 {
            segs.push((SYSTEM, wl.shared_prefix_tokens));
        }
        let user_text = wl.prompt_tokens.tokens(&mut self.rng_shape);
        let mut max_tokens = wl.max_tokens.tokens(&mut self.rng_shape);
        let natural = wl.natural_output_tokens.tokens(&mut self.rng_shape);
        let repetition = wl.repetition_share > 0.0 && self.rng_shape.chance(wl.repetition_share);
        let mut session = 0;
        if let (Some(turns), Some(u)) = (wl.session_turns, user) {
            let usr = &mut self.users[u];
            let hist: u32 = usr.history.iter().map(|s| s.1).sum();
            if usr.turn >= turns
                || hist + user_text + max_tokens + wl.shared_prefix_tokens >= srv.max_model_len
            {
                usr.history.clear();
                usr.turn = 0;
            }
            if usr.turn == 0 {
                self.next_id += 1;
                usr.session = self.next_id;
            }
            usr.turn += 1;
            session = usr.session;
            segs.extend(usr.history.iter().copied());
        }
        self.next_id += 1;
        let user_id = self.next_id;
        segs.push((user_id, user_text));
        let mut prompt_len: u32 = segs.iter().map(|s| s.1).sum();
        if prompt_len >= srv.max_model_len {
            prompt_len = srv.max_model_len - 1;
        }
        max_tokens = max_tokens.min(srv.max_model_len - prompt_len);
        let (target, reason) = if repetition {
            ((natural / 2).clamp(1, max_tokens), Reason::Repetition)
        } else if natural < max_tokens {
            (natural, Reason::Stop)
        } else {
            (max_tokens, Reason::Length)
        };
        let cut = if fate == Fate::Normal {
            u32::MAX
        } else {
            self.rng_fate.int(1, u64::from(target.max(1))) as u32
        };
        // Route.
        let n = self.replicas.len();
        let pick = match srv.router {
            Router::RoundRobin => {
                self.rr += 1;
                self.rr % n
            }
            Router::Session => {
                (mix(session.max(user.unwrap_or(0) as u64 + 1), 7) % n as u64) as usize
            }
        };
        let replica = (0..n)
            .map(|k| (pick + k) % n)
            .find(|&k| self.replicas[k].up);
        let unix = self.unix(t);
        let Some(replica) = replica else {
            // Nobody answers: the client retries a second later.
            if let Some(u) = user {
                self.push(t + 1.0, Ev::Arrival { user: u });
            }
            return;
        };
        self.replicas[replica].rr_skip += 1;
        let req_bytes = 280.0 + 4.1 * f64::from(prompt_len);
        if rejected {
            // The gateway validation fails fast; the engine never sees it.
            self.replicas[replica].metrics.http_request(
                unix + 0.003,
                "/v1/chat/completions",
                "POST",
                "4xx",
                req_bytes,
                180.0,
                0.003,
            );
            self.truth.http(unix, "4xx");
            if let Some(u) = user {
                let think = self.think();
                self.push(t + 0.004 + think, Ev::Arrival { user: u });
            }
            return;
        }
        self.next_id += 1;
        let id = self.reqs.len();
        self.reqs.push(Request {
            replica,
            user,
            t_api: t,
            t_queued: 0.0,
            t_scheduled: None,
            t_first: None,
            t_last: 0.0,
            prompt_len,
            segs,
            out_id: self.next_id,
            max_tokens,
            target,
            reason,
            fate,
            cut,
            generated: 0,
            computed: 0,
            blocks: Vec::new(),
            chain: Vec::new(),
            cached_first: None,
            done: false,
        });
        if let Some(u) = user {
            self.users[u].pending = Some(id);
        }
        let fin = srv.perf.frontend_in_ms / 1000.0 * self.rng_shape.uniform(0.8, 1.2);
        self.push(t + fin, Ev::EngineReady { req: id });
    }

    fn think(&mut self) -> f64 {
        match &self.r.scenario.workload.arrivals {
            Arrivals::Closed { think_ms, .. } => {
                think_ms.clone().sample(&mut self.rng_arrival) / 1000.0
            }
            Arrivals::Open { .. } => 0.0,
        }
    }

    fn start_step(&mut self, rep: usize) {
        let now = self.now;
        if !self.replicas[rep].up {
            return;
        }
        let inbox = std::mem::take(&mut self.replicas[rep].inbox);
        for id in inbox {
            self.reqs[id].t_queued = now;
            self.replicas[rep].q.waiting.push_back(id);
        }
        let srv = &self.r.scenario.server;
        let chunked = self.r.version >= crate::Version(0, 8, 0);
        let policy = Policy {
            max_num_seqs: srv.max_num_seqs,
            budget: if chunked {
                srv.max_num_batched_tokens
            } else {
                srv.max_num_batched_tokens.max(srv.max_model_len)
            },
            block_size: srv.block_size,
            chunked,
            admit_next_step: srv
                .async_scheduling
                .unwrap_or(self.r.version >= crate::Version(0, 11, 0)),
            refuse_unfittable: false,
        };
        let unix = self.unix(now);
        let Replica { q, metrics, .. } = &mut self.replicas[rep];
        let mut book = Book {
            reqs: &mut self.reqs,
            metrics,
            truth: &mut self.truth,
            bs: policy.block_size,
            now,
            unix,
        };
        let Plan {
            items,
            admitted_late,
        } = plan(&policy, q, &mut book);
        if items.is_empty() && admitted_late {
            // An idle engine runs what it just admitted at once.
            self.start_step(rep);
            return;
        }
        {
            let r = &mut self.replicas[rep];
            r.metrics.running = r.q.running.len() as f64;
            r.metrics.waiting = r.q.waiting.len() as f64;
            r.metrics.kv_usage = r.q.pool.usage();
        }
        if items.is_empty() {
            self.replicas[rep].step = None;
            return;
        }
        let StepCost {
            dt,
            busy,
            dram,
            tensor,
            total_tokens,
        } = self.step_cost(&items);
        self.replicas[rep]
            .trace
            .add(now, now + dt, busy / dt, dram / dt, tensor / dt);
        let unix = self.unix(now);
        self.truth.step(unix, total_tokens);
        self.replicas[rep].metrics.h_iteration.observe(total_tokens);
        self.replicas[rep].metrics.logged = true;
        self.replicas[rep].step = Some(items);
        self.push(now + dt, Ev::StepEnd { replica: rep });
    }

    /// The time one step takes and what the GPU does during it, from the
    /// memory traffic and the FLOPs of its items.
    fn step_cost(&self, items: &[Item]) -> StepCost {
        let srv = &self.r.scenario.server;
        let perf = &srv.perf;
        let model = self.r.model;
        let tp = f64::from(srv.tensor_parallel);
        let kv_tok = model.kv_bytes_per_token(2.0) / tp;
        let mut decode_seqs = 0.0;
        let mut prefill_tokens = 0.0;
        let mut ctx_tokens = 0.0;
        let mut attn_flops = 0.0;
        for it in items {
            let r = &self.reqs[it.req];
            let c = f64::from(it.chunk);
            ctx_tokens += f64::from(r.computed) + c;
            if it.decode {
                decode_seqs += 1.0;
            } else {
                prefill_tokens += c;
                attn_flops += 4.0
                    * f64::from(model.layers)
                    * f64::from(model.hidden)
                    * c
                    * (f64::from(r.computed) + c / 2.0)
                    / tp;
            }
        }
        let total_tokens = decode_seqs + prefill_tokens;
        let mem_bytes = self.weight_bytes + ctx_tokens * kv_tok;
        let bw = self.r.gpu.bandwidth;
        let peak = self.r.gpu.bf16_flops;
        let prefill_flops = 2.0 * model.params / tp * prefill_tokens + attn_flops;
        let all_flops = 2.0 * model.params / tp * total_tokens + attn_flops;
        let mem_s = mem_bytes / (bw * perf.mem_efficiency);
        let compute_s = all_flops / (peak * perf.prefill_efficiency);
        let mut dt = perf.step_overhead_ms / 1000.0
            + mem_s.max(compute_s)
            + decode_seqs * perf.decode_token_ms / 1000.0;
        if prefill_tokens > 0.0 {
            dt += perf.mixed_batch_ms / 1000.0;
        }
        dt += (tp - 1.0) * perf.allreduce_ms / 1000.0;
        // GPU activity during the step.
        let busy = (dt - HOST_GAP_S).max(0.0);
        let dram = (mem_bytes / (bw * DRAM_EFF) + prefill_flops / peak * 0.3).min(busy);
        let tensor = (all_flops / (peak * TENSOR_EFF)).min(busy);
        StepCost {
            dt,
            busy,
            dram,
            tensor,
            total_tokens,
        }
    }

    fn end_step(&mut self, rep: usize) {
        let now = self.now;
        let unix = self.unix(now);
        let Some(items) = self.replicas[rep].step.take() else {
            return;
        };
        let bs = self.r.scenario.server.block_size;
        let v = self.r.version;
        let mut finished = Vec::new();
        for it in items {
            let id = it.req;
            if self.reqs[id].done {
                continue;
            }
            self.reqs[id].computed += it.chunk;
            // Hash blocks that became full.
            let full = self.reqs[id].computed / bs;
            while (self.reqs[id].chain.len() as u32) < full {
                let i = self.reqs[id].chain.len() as u32;
                let parent = self.reqs[id].chain.last().copied().unwrap_or(0);
                let h = block_hash(bs, &self.reqs[id], i, parent);
                let b = self.reqs[id].blocks[i as usize];
                self.replicas[rep].q.pool.set_hash(b, h);
                self.reqs[id].chain.push(h);
            }
            if self.reqs[id].computed < self.reqs[id].stream_len() {
                continue;
            }
            // A token is sampled.
            let first = self.reqs[id].generated == 0;
            self.reqs[id].generated += 1;
            let m = &mut self.replicas[rep].metrics;
            m.generation_tokens += 1.0;
            self.truth.token(unix);
            let r = &self.reqs[id];
            if first {
                let ttft = now - r.t_api;
                let cached = r.cached_first.unwrap_or(0);
                m.h_ttft.observe(ttft);
                m.prompt_tokens += f64::from(r.prompt_len);
                m.prompt_cached += f64::from(cached);
                m.prompt_computed += f64::from(r.prompt_len - cached);
                self.truth.first_token(unix, ttft, r.prompt_len, cached);
            } else {
                let itl = now - r.t_last;
                m.h_itl.observe(itl);
                self.truth.itl(unix, itl);
            }
            let r = &mut self.reqs[id];
            if first {
                r.t_first = Some(now);
            }
            r.t_last = now;
            if r.generated >= r.cut
                || r.generated >= r.target
                || r.stream_len() >= self.r.scenario.server.max_model_len
            {
                finished.push(id);
            }
        }
        for id in finished {
            self.finish(rep, id, v);
        }
        // V0 logs its 5-second throughput averages.
        let r = &mut self.replicas[rep];
        if now - r.last_log.0 >= 5.0 {
            let dt = now - r.last_log.0;
            r.metrics.avg_prompt_tps = (r.metrics.prompt_tokens - r.last_log.1) / dt;
            r.metrics.avg_gen_tps = (r.metrics.generation_tokens - r.last_log.2) / dt;
            r.last_log = (now, r.metrics.prompt_tokens, r.metrics.generation_tokens);
        }
    }

    fn finish(&mut self, rep: usize, id: usize, v: crate::Version) {
        let now = self.now;
        let unix = self.unix(now);
        let blocks = std::mem::take(&mut self.reqs[id].blocks);
        self.replicas[rep].q.pool.release(&blocks);
        self.replicas[rep].q.running.retain(|&x| x != id);
        self.reqs[id].done = true;
        let r = self.reqs[id].clone();
        // The request's memory is no longer needed (long runs keep millions).
        self.reqs[id].segs = Vec::new();
        self.reqs[id].chain = Vec::new();
        let reason = match r.fate {
            Fate::Normal => Some(r.reason),
            Fate::Disconnect => None,
            Fate::Abort => Some(Reason::Abort),
            Fate::Error if v >= crate::Version(0, 13, 0) => Some(Reason::Error),
            Fate::Error if v >= crate::Version(0, 8, 0) => Some(Reason::Abort),
            Fate::Error => Some(Reason::Abort),
        };
        let reason = reason.map(|x| {
            if x == Reason::Repetition && v < crate::Version(0, 17, 0) {
                Reason::Stop
            } else {
                x
            }
        });
        let sched = r.t_scheduled.unwrap_or(now);
        let first = r.t_first.unwrap_or(now);
        let m = &mut self.replicas[rep].metrics;
        let e2e = now - r.t_api;
        if let Some(reason) = reason {
            m.success[reason as usize] += 1.0;
            m.success_seen[reason as usize] = true;
            let queue = sched - r.t_queued;
            let prefill = first - sched;
            let decode = now - first;
            let inference = now - sched;
            m.h_e2e.observe(e2e);
            m.h_queue.observe(queue);
            m.h_time_in_queue.observe(queue);
            m.h_prefill.observe(prefill);
            m.h_decode.observe(decode);
            m.h_inference.observe(inference);
            m.h_prompt.observe(f64::from(r.prompt_len));
            m.h_generation.observe(f64::from(r.generated));
            // V0 observes the longest actual output of the request's sequences.
            m.h_max_gen
                .observe(f64::from(if v < crate::Version(0, 8, 0) {
                    r.generated
                } else {
                    r.max_tokens
                }));
            m.h_n.observe(1.0);
            m.h_max_tokens.observe(f64::from(r.max_tokens));
            m.h_kv_computed
                .observe(f64::from(r.prompt_len - r.cached_first.unwrap_or(0)));
            if r.generated > 1 {
                m.h_tpot_req.observe(decode / f64::from(r.generated - 1));
            }
            self.truth.finished(
                unix,
                reason,
                queue,
                prefill,
                decode,
                inference,
                e2e,
                r.prompt_len,
                r.generated,
                r.max_tokens,
            );
        }
        let status = if r.fate == Fate::Error { "5xx" } else { "2xx" };
        let out_s = self.r.scenario.server.perf.frontend_out_ms / 1000.0;
        let client = e2e + out_s;
        m.http_request(
            unix,
            "/v1/chat/completions",
            "POST",
            status,
            280.0 + 4.1 * f64::from(r.prompt_len),
            0.0,
            client,
        );
        self.truth.http(unix, status);
        m.cpu_seconds += 0.004 + 0.0002 * f64::from(r.generated);
        m.gc_collected[0] += 31.0;
        m.gc_collections[0] += 0.25;
        // The user reads the answer and writes the next message.
        if let Some(u) = r.user {
            if let Some(turns) = self.r.scenario.workload.session_turns {
                let usr = &mut self.users[u];
                if usr.turn < turns {
                    let user_seg = *r.segs.last().expect("a prompt has a user segment");
                    usr.history.push(user_seg);
                    usr.history.push((r.out_id, r.generated));
                }
            }
            self.users[u].pending = None;
            let think = self.think();
            self.push(now + out_s + think, Ev::Arrival { user: u });
        }
    }

    fn restart(&mut self, rep: usize, down_s: f64) {
        let now = self.now;
        let r = &mut self.replicas[rep];
        r.up = false;
        r.loaded = false;
        r.crashed_at = now;
        r.step = None;
        r.inbox.clear();
        r.q.waiting.clear();
        r.q.running.clear();
        // Everything in flight on this replica fails; the clients retry.
        let lost: Vec<usize> = (0..self.reqs.len())
            .filter(|&i| self.reqs[i].replica == rep && !self.reqs[i].done)
            .collect();
        for id in lost {
            self.reqs[id].done = true;
            if let Some(u) = self.reqs[id].user {
                self.users[u].pending = None;
                self.push(now + 1.0, Ev::Arrival { user: u });
            }
        }
        self.push(now + down_s, Ev::Up { replica: rep });
    }
}

fn srv_caching(sim: &Sim) -> bool {
    sim.r.scenario.server.enable_prefix_caching
}

/// What [`Sim::step_cost`] works out for one step.
struct StepCost {
    /// Wall time of the step, in seconds.
    dt: f64,
    /// Seconds of it the GPU is busy.
    busy: f64,
    /// Seconds of DRAM activity.
    dram: f64,
    /// Seconds of tensor-pipe activity.
    tensor: f64,
    /// Tokens the step computes (decode sequences plus prefill tokens).
    total_tokens: f64,
}
