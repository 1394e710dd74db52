//! The cumulative state one vLLM server exposes: counters, gauges and
//! histograms, updated by the engine as vLLM's stat loggers update theirs.
//! The exposition writers (`vllm_expo.rs`) print it.

use std::collections::BTreeMap;

use crate::Version;

/// A Prometheus histogram: per-bucket (non-cumulative) counts, sum, count.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// Finite upper bounds, ascending.
    pub bounds: Vec<f64>,
    /// Count per bucket; the last is `+Inf`.
    pub counts: Vec<u64>,
    /// Sum of observations.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
    /// Unix seconds of creation (`_created`).
    pub created: f64,
    /// V0 creates a histogram's series on its first observation.
    pub touched: bool,
}

impl Histogram {
    /// An empty histogram.
    pub fn new(bounds: Vec<f64>, created: f64) -> Histogram {
        let n = bounds.len() + 1;
        Histogram {
            bounds,
            counts: vec![0; n],
            sum: 0.0,
            count: 0,
            created,
            touched: false,
        }
    }

    /// Records one value (`le` is inclusive, as in Prometheus).
    pub fn observe(&mut self, v: f64) {
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i] += 1;
        self.sum += v;
        self.count += 1;
        self.touched = true;
    }

    /// Cumulative counts per finite bound then `+Inf`.
    pub fn cumulative(&self) -> Vec<u64> {
        let mut acc = 0;
        self.counts
            .iter()
            .map(|c| {
                acc += c;
                acc
            })
            .collect()
    }
}

/// `finished_reason` values in vLLM's order.
pub const REASONS: [&str; 5] = ["stop", "length", "abort", "error", "repetition"];

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// EOS or a stop string.
    Stop = 0,
    /// `max_tokens` or `max_model_len` reached.
    Length = 1,
    /// Aborted by the engine.
    Abort = 2,
    /// Failed in the engine (0.13+).
    Error = 3,
    /// Repetition detected (0.17+).
    Repetition = 4,
}

/// Bucket sets by version (`vllm-metrics.md` §3.1).
pub mod buckets {
    use crate::Version;

    /// Time to first token.
    pub fn ttft(v: Version) -> Vec<f64> {
        let mut b = vec![
            0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0,
        ];
        if v >= Version(0, 8, 4) {
            b.extend([20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]);
        }
        b
    }

    /// Inter-token latency / time per output token.
    pub fn tpot(v: Version) -> Vec<f64> {
        let mut b = vec![
            0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
        ];
        if v >= Version(0, 8, 4) {
            b.extend([5.0, 7.5, 10.0, 20.0, 40.0, 80.0]);
        }
        b
    }

    /// Request phase latencies (e2e, queue, prefill, decode, inference).
    pub fn request(v: Version) -> Vec<f64> {
        if v < Version(0, 6, 4) {
            return vec![1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0];
        }
        let mut b = vec![
            0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
        ];
        if v >= Version(0, 8, 4) {
            b.extend([120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0]);
        }
        b
    }

    /// 1-2-5 steps up to `max_model_len` (TOK-125).
    pub fn tokens(max_model_len: u32) -> Vec<f64> {
        let mut b = Vec::new();
        let mut m = 1u64;
        'outer: loop {
            for k in [1, 2, 5] {
                let v = k * m;
                if v > u64::from(max_model_len) {
                    break 'outer;
                }
                b.push(v as f64);
            }
            m *= 10;
        }
        b
    }

    /// Tokens per engine step.
    pub fn iteration(v: Version) -> Vec<f64> {
        if v >= Version(0, 8, 5) || v == Version(0, 6, 4) {
            let mut b = vec![
                1.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0,
            ];
            b.push(if v >= Version(0, 8, 5) {
                8192.0
            } else {
                8096.0
            });
            if v >= Version(0, 8, 5) {
                b.push(16384.0);
            }
            return b;
        }
        // CUDA-graph capture sizes: 1, 2, 4, then multiples of 8 to 256.
        let mut b = vec![1.0, 2.0, 4.0];
        b.extend((1..=32).map(|i| f64::from(i * 8)));
        b
    }

    /// The `n` parameter.
    pub fn n() -> Vec<f64> {
        vec![1.0, 2.0, 5.0, 10.0, 20.0]
    }

    /// `http_request_duration_highr_seconds`.
    pub fn http_highr() -> Vec<f64> {
        vec![
            0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
            5.0, 7.5, 10.0, 30.0, 60.0,
        ]
    }

    /// `http_request_duration_seconds`.
    pub fn http_lowr() -> Vec<f64> {
        vec![0.1, 0.5, 1.0]
    }
}

/// Per `handler` HTTP figures.
#[derive(Debug, Clone, Default)]
pub struct HttpHandler {
    /// Requests by (method, status class).
    pub requests: BTreeMap<(String, String), (u64, f64)>,
    /// Request body bytes: count, sum.
    pub req_size: (u64, f64),
    /// Response body bytes: count, sum.
    pub resp_size: (u64, f64),
    /// Latency by method (few buckets).
    pub duration: BTreeMap<String, Histogram>,
    /// Creation time of the handler's summaries.
    pub created: f64,
}

/// Everything one vLLM server (one engine) exposes.
#[derive(Debug, Clone)]
pub struct VllmMetrics {
    /// Unix seconds the API process started (`process_start_time_seconds`).
    pub process_start: f64,
    /// Unix seconds the engine's metrics were created (`_created`).
    pub created: f64,
    /// Gauges.
    pub running: f64,
    /// Gauges.
    pub waiting: f64,
    /// Fraction 0–1.
    pub kv_usage: f64,
    /// Tokens queried / hit in the prefix cache.
    pub prefix_queries: f64,
    /// As above.
    pub prefix_hits: f64,
    /// Blocks queried / hit (V0's lifetime gauge and V1 ≤ 0.8.5).
    pub prefix_block_queries: f64,
    /// As above.
    pub prefix_block_hits: f64,
    /// Preemptions.
    pub preemptions: f64,
    /// Prompt tokens (all), of which computed and cache hits.
    pub prompt_tokens: f64,
    /// As above.
    pub prompt_computed: f64,
    /// As above.
    pub prompt_cached: f64,
    /// Generated tokens.
    pub generation_tokens: f64,
    /// `request_success_total` by reason (index = `Reason`).
    pub success: [f64; 5],
    /// V0 creates a reason's series when it first occurs.
    pub success_seen: [bool; 5],
    /// V0: any engine step happened (gauges and counters exist).
    pub logged: bool,
    /// Histograms.
    pub h_prompt: Histogram,
    /// As above.
    pub h_generation: Histogram,
    /// As above.
    pub h_iteration: Histogram,
    /// As above.
    pub h_max_gen: Histogram,
    /// As above.
    pub h_n: Histogram,
    /// As above.
    pub h_max_tokens: Histogram,
    /// As above.
    pub h_ttft: Histogram,
    /// As above.
    pub h_itl: Histogram,
    /// As above.
    pub h_tpot_req: Histogram,
    /// As above.
    pub h_e2e: Histogram,
    /// As above.
    pub h_queue: Histogram,
    /// As above.
    pub h_inference: Histogram,
    /// As above.
    pub h_prefill: Histogram,
    /// As above.
    pub h_decode: Histogram,
    /// As above.
    pub h_kv_computed: Histogram,
    /// V0 `vllm:time_in_queue_requests`.
    pub h_time_in_queue: Histogram,
    /// V0 5-second average throughputs.
    pub avg_prompt_tps: f64,
    /// As above.
    pub avg_gen_tps: f64,
    /// HTTP by handler.
    pub http: BTreeMap<String, HttpHandler>,
    /// `http_request_duration_highr_seconds`.
    pub http_highr: Histogram,
    /// Process figures.
    pub cpu_seconds: f64,
    /// As above.
    pub rss_bytes: f64,
    /// As above.
    pub open_fds: f64,
    /// Python GC counters per generation.
    pub gc_collected: [f64; 3],
    /// As above.
    pub gc_collections: [f64; 3],
    /// KV blocks in the pool (`cache_config_info`).
    pub num_gpu_blocks: u32,
}

impl VllmMetrics {
    /// Fresh metrics of a process started at `process_start` whose engine
    /// registered its metrics at `created` (Unix seconds).
    pub fn new(
        v: Version,
        max_model_len: u32,
        process_start: f64,
        created: f64,
        num_gpu_blocks: u32,
    ) -> VllmMetrics {
        let tok = || Histogram::new(buckets::tokens(max_model_len), created);
        let req = || Histogram::new(buckets::request(v), created);
        VllmMetrics {
            process_start,
            created,
            running: 0.0,
            waiting: 0.0,
            kv_usage: 0.0,
            prefix_queries: 0.0,
            prefix_hits: 0.0,
            prefix_block_queries: 0.0,
            prefix_block_hits: 0.0,
            preemptions: 0.0,
            prompt_tokens: 0.0,
            prompt_computed: 0.0,
            prompt_cached: 0.0,
            generation_tokens: 0.0,
            success: [0.0; 5],
            success_seen: [false; 5],
            logged: false,
            h_prompt: tok(),
            h_generation: tok(),
            h_iteration: Histogram::new(buckets::iteration(v), created),
            h_max_gen: tok(),
            h_n: Histogram::new(buckets::n(), created),
            h_max_tokens: tok(),
            h_ttft: Histogram::new(buckets::ttft(v), created),
            h_itl: Histogram::new(buckets::tpot(v), created),
            h_tpot_req: Histogram::new(buckets::tpot(v), created),
            h_e2e: req(),
            h_queue: req(),
            h_inference: req(),
            h_prefill: req(),
            h_decode: req(),
            h_kv_computed: tok(),
            h_time_in_queue: req(),
            avg_prompt_tps: 0.0,
            avg_gen_tps: 0.0,
            http: BTreeMap::new(),
            http_highr: Histogram::new(buckets::http_highr(), process_start + 30.0),
            cpu_seconds: 41.3,
            rss_bytes: 2.1e9,
            open_fds: 87.0,
            gc_collected: [1.2e4, 2.1e3, 6.0e2],
            gc_collections: [1500.0, 130.0, 9.0],
            num_gpu_blocks,
        }
    }

    /// Records one HTTP request.
    #[allow(clippy::too_many_arguments)]
    pub fn http_request(
        &mut self,
        t_unix: f64,
        handler: &str,
        method: &str,
        status: &str,
        req_bytes: f64,
        resp_bytes: f64,
        seconds: f64,
    ) {
        let h = self
            .http
            .entry(handler.to_string())
            .or_insert_with(|| HttpHandler {
                created: t_unix,
                ..Default::default()
            });
        let e = h
            .requests
            .entry((method.to_string(), status.to_string()))
            .or_insert((0, t_unix));
        e.0 += 1;
        h.req_size.0 += 1;
        h.req_size.1 += req_bytes;
        h.resp_size.0 += 1;
        h.resp_size.1 += resp_bytes;
        h.duration
            .entry(method.to_string())
            .or_insert_with(|| Histogram::new(buckets::http_lowr(), t_unix))
            .observe(seconds);
        self.http_highr.observe(seconds);
    }
}
