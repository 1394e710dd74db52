//! vLLM's `/metrics` as each era prints it (`vllm-metrics.md`):
//!
//! - **V1** (0.8+), one API server: `prometheus_client`'s single-process
//!   exposition: default collectors first, vLLM families in registration
//!   order with `{engine, model_name}`, each counter and histogram followed
//!   by its `_created` gauge family, then the instrumentator's `http_*`.
//!   Families are gated by the release that added, hid or removed them.
//! - **V0** (0.6.x) with the multiprocess front end: no `python_*`/
//!   `process_*`, no `_created`, only `{model_name}`, series created
//!   lazily, families grouped counter → gauge → histogram, and histogram
//!   samples `_sum` first, then `_bucket`s, then `_count`.

use std::fmt::Write as _;

use crate::Version;
use crate::metrics::{Histogram, REASONS, VllmMetrics};
use crate::pyfloat::{GoExp, go_string};

/// What the writer needs besides the metrics.
pub struct Ctx<'a> {
    /// vLLM release.
    pub version: Version,
    /// `model_name` label.
    pub model_name: &'a str,
    /// Scenario settings printed in `cache_config_info`.
    pub block_size: u32,
    /// As above.
    pub gpu_memory_utilization: f64,
    /// As above.
    pub enable_prefix_caching: bool,
}

struct W<'a> {
    out: String,
    base: Vec<(&'static str, String)>,
    style: GoExp,
    ctx: &'a Ctx<'a>,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl W<'_> {
    fn num(&self, x: f64) -> String {
        go_string(x, self.style)
    }

    fn labels(&self, extra: &[(&str, &str)]) -> String {
        let mut all: Vec<(&str, String)> = self.base.iter().map(|(k, v)| (*k, v.clone())).collect();
        all.extend(extra.iter().map(|(k, v)| (*k, (*v).to_string())));
        all.sort_by(|a, b| a.0.cmp(b.0));
        if all.is_empty() {
            return String::new();
        }
        let body: Vec<String> = all
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect();
        format!("{{{}}}", body.join(","))
    }

    fn head(&mut self, name: &str, help: &str, typ: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {typ}");
    }

    fn line(&mut self, name: &str, labels: &str, v: f64) {
        let v = self.num(v);
        let _ = writeln!(self.out, "{name}{labels} {v}");
    }

    fn gauge(&mut self, name: &str, help: &str, samples: &[(&[(&str, &str)], f64)]) {
        self.head(name, help, "gauge");
        for (extra, v) in samples {
            let l = self.labels(extra);
            self.line(name, &l, *v);
        }
    }

    /// A counter (`base` without `_total`) and, when `created`, its `_created` family.
    fn counter(
        &mut self,
        base: &str,
        help: &str,
        samples: &[(&[(&str, &str)], f64)],
        created: Option<f64>,
    ) {
        let total = format!("{base}_total");
        self.head(&total, help, "counter");
        for (extra, v) in samples {
            let l = self.labels(extra);
            self.line(&total, &l, *v);
        }
        if let Some(c) = created {
            let name = format!("{base}_created");
            self.head(&name, help, "gauge");
            for (extra, _) in samples {
                let l = self.labels(extra);
                self.line(&name, &l, c);
            }
        }
    }

    fn histogram(&mut self, name: &str, help: &str, h: &Histogram, created: bool) {
        self.head(name, help, "histogram");
        self.hist_body(name, h, &[]);
        if created {
            let c = format!("{name}_created");
            self.head(&c, help, "gauge");
            let l = self.labels(&[]);
            self.line(&c, &l, h.created);
        }
    }

    fn hist_body(&mut self, name: &str, h: &Histogram, extra: &[(&str, &str)]) {
        let cum = h.cumulative();
        let mut bounds: Vec<String> = h.bounds.iter().map(|b| self.num(*b)).collect();
        bounds.push("+Inf".into());
        for (b, c) in bounds.iter().zip(&cum) {
            let mut e = extra.to_vec();
            e.push(("le", b));
            let l = self.labels(&e);
            self.line(&format!("{name}_bucket"), &l, *c as f64);
        }
        let l = self.labels(extra);
        self.line(&format!("{name}_count"), &l, h.count as f64);
        self.line(&format!("{name}_sum"), &l, h.sum);
    }

    /// Multiprocess order: `_sum`, then buckets, then `_count`.
    fn histogram_mp(&mut self, name: &str, help: &str, h: &Histogram) {
        if !h.touched {
            return;
        }
        self.head(name, help, "histogram");
        let l = self.labels(&[]);
        self.line(&format!("{name}_sum"), &l, h.sum);
        let cum = h.cumulative();
        let mut bounds: Vec<String> = h.bounds.iter().map(|b| self.num(*b)).collect();
        bounds.push("+Inf".into());
        for (b, c) in bounds.iter().zip(&cum) {
            let l = self.labels(&[("le", b)]);
            self.line(&format!("{name}_bucket"), &l, *c as f64);
        }
        self.line(&format!("{name}_count"), &l, h.count as f64);
    }
}

/// The exposition of one scrape.
pub fn render(m: &VllmMetrics, ctx: &Ctx) -> String {
    if ctx.version < Version(0, 8, 0) {
        render_v0(m, ctx)
    } else {
        render_v1(m, ctx)
    }
}

fn process_block(w: &mut W, m: &VllmMetrics) {
    let gc = |vals: &[f64; 3]| -> Vec<(Vec<(&'static str, String)>, f64)> {
        (0..3)
            .map(|g| (vec![("generation", g.to_string())], vals[g]))
            .collect()
    };
    for (name, help, vals) in [
        (
            "python_gc_objects_collected_total",
            "Objects collected during gc",
            gc(&m.gc_collected),
        ),
        (
            "python_gc_objects_uncollectable_total",
            "Uncollectable objects found during GC",
            gc(&[0.0; 3]),
        ),
        (
            "python_gc_collections_total",
            "Number of times this generation was collected",
            gc(&m.gc_collections),
        ),
    ] {
        w.head(name, help, "counter");
        for (l, v) in vals {
            let s = format!("{{generation=\"{}\"}}", l[0].1);
            w.line(name, &s, v.round());
        }
    }
    w.head("python_info", "Python platform information", "gauge");
    w.out.push_str("python_info{implementation=\"CPython\",major=\"3\",minor=\"12\",patchlevel=\"11\",version=\"3.12.11\"} 1.0\n");
    for (name, help, typ, v) in [
        (
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            "gauge",
            1.2884901888e10 + (m.rss_bytes - 2.1e9),
        ),
        (
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            "gauge",
            m.rss_bytes.round(),
        ),
        (
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            "gauge",
            m.process_start,
        ),
        (
            "process_cpu_seconds_total",
            "Total user and system CPU time spent in seconds.",
            "counter",
            (m.cpu_seconds * 100.0).round() / 100.0,
        ),
        (
            "process_open_fds",
            "Number of open file descriptors.",
            "gauge",
            m.open_fds,
        ),
        (
            "process_max_fds",
            "Maximum number of open file descriptors.",
            "gauge",
            1048576.0,
        ),
    ] {
        w.head(name, help, typ);
        w.line(name, "", v);
    }
}

fn render_v1(m: &VllmMetrics, ctx: &Ctx) -> String {
    let v = ctx.version;
    let style = if v >= Version(0, 20, 0) {
        GoExp::Fixed
    } else {
        GoExp::Padded
    };
    let mut base = vec![("model_name", ctx.model_name.to_string())];
    if v >= Version(0, 8, 3) {
        base.insert(0, ("engine", "0".to_string()));
    }
    let mut w = W {
        out: String::with_capacity(48 * 1024),
        base,
        style,
        ctx,
    };
    let c = Some(m.created);
    process_block(&mut w, m);
    let running_help = "Number of requests in model execution batches.";
    w.gauge(
        "vllm:num_requests_running",
        running_help,
        &[(&[], m.running)],
    );
    w.gauge(
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        &[(&[], m.waiting)],
    );
    if v >= Version(0, 20, 0) {
        w.gauge(
            "vllm:num_requests_waiting_by_reason",
            "Number of requests waiting to be processed, by reason.",
            &[
                (&[("reason", "capacity")], m.waiting),
                (&[("reason", "deferred")], 0.0),
            ],
        );
    }
    if v >= Version(0, 11, 1) {
        w.gauge(
            "vllm:engine_sleep_state",
            "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
            &[(&[("sleep_state", "awake")], 1.0), (&[("sleep_state", "weights_offloaded")], 0.0), (&[("sleep_state", "discard_all")], 0.0)],
        );
    }
    if v < Version(0, 11, 0) {
        w.gauge(
            "vllm:gpu_cache_usage_perc",
            "GPU KV-cache usage. 1 means 100 percent usage.",
            &[(&[], m.kv_usage)],
        );
    }
    if v >= Version(0, 9, 2) {
        w.gauge(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            &[(&[], m.kv_usage)],
        );
    }
    if v < Version(0, 11, 0) {
        let (q, h) = if v >= Version(0, 9, 0) {
            (m.prefix_queries, m.prefix_hits)
        } else {
            (m.prefix_block_queries, m.prefix_block_hits)
        };
        w.counter(
            "vllm:gpu_prefix_cache_queries",
            "GPU prefix cache queries, in terms of number of queried tokens.",
            &[(&[], q)],
            c,
        );
        w.counter(
            "vllm:gpu_prefix_cache_hits",
            "GPU prefix cache hits, in terms of number of cached tokens.",
            &[(&[], h)],
            c,
        );
    }
    if v >= Version(0, 9, 2) {
        w.counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            &[(&[], m.prefix_queries)],
            c,
        );
        w.counter(
            "vllm:prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            &[(&[], m.prefix_hits)],
            c,
        );
    }
    if v >= Version(0, 11, 1) {
        w.counter(
            "vllm:external_prefix_cache_queries",
            "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.",
            &[(&[], 0.0)],
            c,
        );
        w.counter(
            "vllm:external_prefix_cache_hits",
            "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.",
            &[(&[], 0.0)],
            c,
        );
        w.counter(
            "vllm:mm_cache_queries",
            "Multi-modal cache queries, in terms of number of queried items.",
            &[(&[], 0.0)],
            c,
        );
        w.counter(
            "vllm:mm_cache_hits",
            "Multi-modal cache hits, in terms of number of cached items.",
            &[(&[], 0.0)],
            c,
        );
    }
    w.counter(
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        &[(&[], m.preemptions)],
        c,
    );
    v1_counters(&mut w, m);
    v1_histograms(&mut w, m);
    cache_config(&mut w, m, true);
    http_block(&mut w, m);
    w.out
}

/// The token and request counters, in the exposition's order.
fn v1_counters(w: &mut W<'_>, m: &VllmMetrics) {
    let v = w.ctx.version;
    let c = Some(m.created);
    w.counter(
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        &[(&[], m.prompt_tokens)],
        c,
    );
    if v >= Version(0, 16, 0) {
        w.counter(
            "vllm:prompt_tokens_by_source",
            "Number of prompt tokens by source.",
            &[
                (&[("source", "local_compute")], m.prompt_computed),
                (&[("source", "local_cache_hit")], m.prompt_cached),
                (&[("source", "external_kv_transfer")], 0.0),
            ],
            c,
        );
        w.counter(
            "vllm:prompt_tokens_cached",
            "Number of cached prompt tokens (local + external).",
            &[(&[], m.prompt_cached)],
            c,
        );
    }
    if v >= Version(0, 16, 0) && v < Version(0, 20, 0) {
        w.counter(
            "vllm:prompt_tokens_recomputed",
            "Number of cached tokens recomputed for forward pass.",
            &[(&[], 0.0)],
            c,
        );
    }
    w.counter(
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        &[(&[], m.generation_tokens)],
        c,
    );
    let n_reasons = if v >= Version(0, 17, 0) {
        5
    } else if v >= Version(0, 13, 0) {
        4
    } else {
        3
    };
    let reason_samples: Vec<(Vec<(&str, &str)>, f64)> = REASONS[..n_reasons]
        .iter()
        .enumerate()
        .map(|(i, r)| (vec![("finished_reason", *r)], m.success[i]))
        .collect();
    let refs: Vec<(&[(&str, &str)], f64)> = reason_samples
        .iter()
        .map(|(l, x)| (l.as_slice(), *x))
        .collect();
    w.counter(
        "vllm:request_success",
        "Count of successfully processed requests.",
        &refs,
        c,
    );
}

/// The histograms, in the exposition's order.
fn v1_histograms(w: &mut W<'_>, m: &VllmMetrics) {
    let v = w.ctx.version;
    w.histogram(
        "vllm:request_prompt_tokens",
        "Number of prefill tokens processed.",
        &m.h_prompt,
        true,
    );
    w.histogram(
        "vllm:request_generation_tokens",
        "Number of generation tokens processed.",
        &m.h_generation,
        true,
    );
    w.histogram(
        "vllm:iteration_tokens_total",
        "Histogram of number of tokens per engine step.",
        &m.h_iteration,
        true,
    );
    w.histogram(
        "vllm:request_max_num_generation_tokens",
        "Histogram of maximum number of requested generation tokens.",
        &m.h_max_gen,
        true,
    );
    w.histogram(
        "vllm:request_params_n",
        "Histogram of the n request parameter.",
        &m.h_n,
        true,
    );
    w.histogram(
        "vllm:request_params_max_tokens",
        "Histogram of the max_tokens request parameter.",
        &m.h_max_tokens,
        true,
    );
    w.histogram(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &m.h_ttft,
        true,
    );
    if v < Version(0, 12, 0) {
        let help = if v >= Version(0, 10, 2) {
            "Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead."
        } else {
            "Histogram of time per output token in seconds."
        };
        w.histogram("vllm:time_per_output_token_seconds", help, &m.h_itl, true);
    }
    if v >= Version(0, 10, 2) {
        w.histogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            &m.h_itl,
            true,
        );
    }
    if v >= Version(0, 11, 0) {
        w.histogram(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            &m.h_tpot_req,
            true,
        );
    }
    w.histogram(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        &m.h_e2e,
        true,
    );
    w.histogram(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        &m.h_queue,
        true,
    );
    w.histogram(
        "vllm:request_inference_time_seconds",
        "Histogram of time spent in RUNNING phase for request.",
        &m.h_inference,
        true,
    );
    w.histogram(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.",
        &m.h_prefill,
        true,
    );
    w.histogram(
        "vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase for request.",
        &m.h_decode,
        true,
    );
    if v >= Version(0, 13, 0) {
        w.histogram(
            "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
            &m.h_kv_computed,
            true,
        );
    }
}

fn cache_config(w: &mut W, m: &VllmMetrics, v1: bool) {
    let ctx = w.ctx;
    let gmu = crate::pyfloat::py_repr(ctx.gpu_memory_utilization);
    let blocks = m.num_gpu_blocks.to_string();
    let bs = ctx.block_size.to_string();
    let pc = if ctx.enable_prefix_caching {
        "True"
    } else {
        "False"
    };
    let mut labels: Vec<(&str, &str)> = vec![
        ("block_size", &bs),
        ("cache_dtype", "auto"),
        ("cpu_offload_gb", "0"),
        ("enable_prefix_caching", pc),
        ("gpu_memory_utilization", &gmu),
        ("is_attention_free", "False"),
        ("num_cpu_blocks", if v1 { "None" } else { "7281" }),
        ("num_gpu_blocks", &blocks),
        ("num_gpu_blocks_override", "None"),
        ("sliding_window", "None"),
        ("swap_space", "4"),
        ("swap_space_bytes", "4294967296"),
    ];
    if v1 {
        labels.extend([
            ("prefix_caching_hash_algo", "sha256"),
            ("calculate_kv_scales", "False"),
            ("kv_sharing_fast_prefill", "False"),
        ]);
    }
    if ctx.version >= Version(0, 9, 0) {
        labels.push(("engine", "0"));
    }
    labels.sort_by(|a, b| a.0.cmp(b.0));
    let body: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    w.head(
        "vllm:cache_config_info",
        "Information of the LLMEngine CacheConfig",
        "gauge",
    );
    let _ = writeln!(w.out, "vllm:cache_config_info{{{}}} 1.0", body.join(","));
}

fn http_block(w: &mut W, m: &VllmMetrics) {
    let help_req = "Total number of requests by method, status and handler. ";
    w.head("http_requests_total", help_req, "counter");
    let mut created = Vec::new();
    for (handler, h) in &m.http {
        for ((method, status), (n, c)) in &h.requests {
            let l = format!("{{handler=\"{handler}\",method=\"{method}\",status=\"{status}\"}}");
            w.line("http_requests_total", &l, *n as f64);
            created.push((l, *c));
        }
    }
    w.head("http_requests_created", help_req, "gauge");
    for (l, c) in created {
        w.line("http_requests_created", &l, c.floor());
    }
    for (name, help, pick) in [
        (
            "http_request_size_bytes",
            "Content length of incoming requests by handler. Only value of header is respected. Otherwise ignored. No percentile calculated. ",
            0,
        ),
        (
            "http_response_size_bytes",
            "Content length of outgoing responses by handler. Only value of header is respected. Otherwise ignored. No percentile calculated. ",
            1,
        ),
    ] {
        w.head(name, help, "summary");
        for (handler, h) in &m.http {
            let (n, s) = if pick == 0 { h.req_size } else { h.resp_size };
            let l = format!("{{handler=\"{handler}\"}}");
            w.line(&format!("{name}_count"), &l, n as f64);
            w.line(&format!("{name}_sum"), &l, s.round());
        }
        let cname = format!("{name}_created");
        w.head(&cname, help, "gauge");
        for (handler, h) in &m.http {
            let l = format!("{{handler=\"{handler}\"}}");
            w.line(&cname, &l, h.created.floor());
        }
    }
    let highr_help = "Latency with many buckets but no API specific labels. Made for more accurate percentile calculations. ";
    let saved = std::mem::take(&mut w.base);
    w.histogram(
        "http_request_duration_highr_seconds",
        highr_help,
        &m.http_highr,
        true,
    );
    let lowr_help = "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important. ";
    w.head("http_request_duration_seconds", lowr_help, "histogram");
    for (handler, h) in &m.http {
        for (method, hist) in &h.duration {
            w.hist_body(
                "http_request_duration_seconds",
                hist,
                &[("handler", handler), ("method", method)],
            );
        }
    }
    w.head("http_request_duration_seconds_created", lowr_help, "gauge");
    for (handler, h) in &m.http {
        for (method, hist) in &h.duration {
            let l = format!("{{handler=\"{handler}\",method=\"{method}\"}}");
            w.line(
                "http_request_duration_seconds_created",
                &l,
                hist.created.floor(),
            );
        }
    }
    w.base = saved;
}

fn render_v0(m: &VllmMetrics, ctx: &Ctx) -> String {
    let v = ctx.version;
    let mut w = W {
        out: String::with_capacity(24 * 1024),
        base: vec![("model_name", ctx.model_name.to_string())],
        style: GoExp::Padded,
        ctx,
    };
    if !m.logged {
        // A fresh V0 server in multiprocess mode has written nothing yet.
        return w.out;
    }
    // Counters (first use order).
    w.counter(
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        &[(&[], m.preemptions)],
        None,
    );
    w.counter(
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        &[(&[], m.prompt_tokens)],
        None,
    );
    w.counter(
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        &[(&[], m.generation_tokens)],
        None,
    );
    if v >= Version(0, 6, 4) {
        w.counter(
            "vllm:tokens",
            "Number of prefill plus generation tokens processed.",
            &[(&[], m.prompt_tokens + m.generation_tokens)],
            None,
        );
    }
    let seen: Vec<(Vec<(&str, &str)>, f64)> = REASONS[..3]
        .iter()
        .enumerate()
        .filter(|(i, _)| m.success_seen[*i])
        .map(|(i, r)| (vec![("finished_reason", *r)], m.success[i]))
        .collect();
    if !seen.is_empty() {
        let refs: Vec<(&[(&str, &str)], f64)> =
            seen.iter().map(|(l, x)| (l.as_slice(), *x)).collect();
        w.counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            &refs,
            None,
        );
    }
    // Gauges.
    w.gauge(
        "vllm:num_requests_running",
        "Number of requests currently running on GPU.",
        &[(&[], m.running)],
    );
    w.gauge(
        "vllm:num_requests_swapped",
        "Number of requests swapped to CPU.",
        &[(&[], 0.0)],
    );
    w.gauge(
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        &[(&[], m.waiting)],
    );
    w.gauge(
        "vllm:gpu_cache_usage_perc",
        "GPU KV-cache usage. 1 means 100 percent usage.",
        &[(&[], m.kv_usage)],
    );
    w.gauge(
        "vllm:cpu_cache_usage_perc",
        "CPU KV-cache usage. 1 means 100 percent usage.",
        &[(&[], 0.0)],
    );
    if v >= Version(0, 5, 5) {
        let rate = if !ctx.enable_prefix_caching {
            -1.0
        } else if m.prefix_block_queries > 0.0 {
            m.prefix_block_hits / m.prefix_block_queries
        } else {
            0.0
        };
        w.gauge(
            "vllm:cpu_prefix_cache_hit_rate",
            "CPU prefix cache block hit rate.",
            &[(&[], if ctx.enable_prefix_caching { 0.0 } else { -1.0 })],
        );
        w.gauge(
            "vllm:gpu_prefix_cache_hit_rate",
            "GPU prefix cache block hit rate.",
            &[(&[], rate)],
        );
    }
    if v <= Version(0, 6, 6) {
        w.gauge(
            "vllm:avg_prompt_throughput_toks_per_s",
            "Average prefill throughput in tokens/s.",
            &[(&[], m.avg_prompt_tps)],
        );
        w.gauge(
            "vllm:avg_generation_throughput_toks_per_s",
            "Average generation throughput in tokens/s.",
            &[(&[], m.avg_gen_tps)],
        );
    }
    cache_config(&mut w, m, false);
    v0_histograms(&mut w, m);
    w.out
}

/// The multiprocess histograms, each only once observed, in the exposition's order.
fn v0_histograms(w: &mut W<'_>, m: &VllmMetrics) {
    let v = w.ctx.version;
    // Histograms, each only once observed.
    if v >= Version(0, 6, 4) {
        w.histogram_mp(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            &m.h_iteration,
        );
    }
    w.histogram_mp(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &m.h_ttft,
    );
    w.histogram_mp(
        "vllm:time_per_output_token_seconds",
        "Histogram of time per output token in seconds.",
        &m.h_itl,
    );
    w.histogram_mp(
        "vllm:e2e_request_latency_seconds",
        "Histogram of end to end request latency in seconds.",
        &m.h_e2e,
    );
    if v >= Version(0, 6, 4) {
        w.histogram_mp(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            &m.h_queue,
        );
        w.histogram_mp(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            &m.h_inference,
        );
        w.histogram_mp(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            &m.h_prefill,
        );
        w.histogram_mp(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            &m.h_decode,
        );
        w.histogram_mp(
            "vllm:time_in_queue_requests",
            "Histogram of time the request spent in the queue in seconds.",
            &m.h_time_in_queue,
        );
    }
    w.histogram_mp(
        "vllm:request_prompt_tokens",
        "Number of prefill tokens processed.",
        &m.h_prompt,
    );
    w.histogram_mp(
        "vllm:request_generation_tokens",
        "Number of generation tokens processed.",
        &m.h_generation,
    );
    if v >= Version(0, 6, 4) {
        w.histogram_mp(
            "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            &m.h_max_gen,
        );
    }
    w.histogram_mp(
        "vllm:request_params_n",
        "Histogram of the n request parameter.",
        &m.h_n,
    );
    if v >= Version(0, 6, 4) {
        w.histogram_mp(
            "vllm:request_params_max_tokens",
            "Histogram of the max_tokens request parameter.",
            &m.h_max_tokens,
        );
    }
}
