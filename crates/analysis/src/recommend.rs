//! Recommendations: data-driven rules. Each fires only when its evidence is
//! in the capture, says how sure it is and why it might be wrong, and
//! carries ready-to-paste snippets that use the metric names this server
//! exports.

use vllm_lens_catalog::Signal;

use crate::analyses::{Ctx, workload::halves};
use crate::model::{Confidence, Evidence, Recommendation, SloResult, SloStatus, Snippet};

struct Rule {
    id: &'static str,
    priority: u32,
    title: String,
    rationale: String,
    action: String,
    confidence: Confidence,
    caveat: &'static str,
    evidence: Vec<Evidence>,
    snippets: Vec<Snippet>,
}

fn slo(slos: &[SloResult], id: &str) -> Option<SloStatus> {
    slos.iter().find(|s| s.id == id).map(|s| s.status)
}

/// The first name read for a signal, or its preferred name.
fn name(ctx: &Ctx<'_>, s: Signal) -> String {
    ctx.catalogue.get(s).used.first().map_or_else(
        || s.info().candidates[0].name.to_string(),
        |n| n.to_string(),
    )
}

pub(crate) fn recommend(
    ctx: &Ctx<'_>,
    slos: &[SloResult],
    model: Option<&str>,
) -> Vec<Recommendation> {
    let s = ctx.summary;
    let mut rules: Vec<Rule> = Vec::new();
    let decode_share = s.latency.decode_share_pct;
    let tensor = s.gpu.tensor_active_pct_avg;
    let dram = s.gpu.dram_active_pct_avg;
    let memory_bound = matches!((tensor, dram), (Some(t), Some(d)) if d >= 50.0 && t < 30.0);
    let waiting_windows = ctx.windows_where(|w| w.efficiency.waiting.is_some_and(|x| x > 0.0));
    let model_sel = model.map_or(String::new(), |m| format!("{{model_name=\"{m}\"}}"));

    let prefill_heavy = s.workload.gen_to_prompt_ratio.is_some_and(|r| r < 0.1);
    if let Some(d) = decode_share
        && d >= 80.0
        && !prefill_heavy
    {
        rules.push(Rule {
            id: "stop_optimising_prefill",
            priority: 30,
            title: "Stop optimising prefill".into(),
            rationale: format!("Decode is {d:.0} % of the time requests spend in the engine; prefill and queueing share the rest. Faster prefill can win at most a few percent of latency."),
            action: "Spend effort on decode speed (quantization, tensor parallelism, a smaller model) rather than chunked-prefill tuning or prompt compression.".into(),
            confidence: Confidence::High,
            caveat: "If time to first token is what users complain about, prefill still matters for that figure even when decode dominates total latency.",
            evidence: vec![ctx.ev("decode share", Some(d), "%", &[Signal::QueueTime, Signal::PrefillTime, Signal::DecodeTime])],
            snippets: Vec::new(),
        });
    }
    if memory_bound && decode_share.is_some_and(|d| d >= 60.0) {
        rules.push(Rule {
            id: "quantize_before_buying",
            priority: 20,
            title: "Quantize before buying hardware".into(),
            rationale: format!(
                "Decode is memory-bound: DRAM {:.0} % active against tensor cores {:.0} %. Each token streams all weights from memory, so halving the bytes per weight (FP8, or INT4 AWQ/GPTQ) raises tokens per second and lowers inter-token latency on the same GPU.",
                dram.unwrap_or(0.0),
                tensor.unwrap_or(0.0)
            ),
            action: "Try an FP8 (or INT4) build of the same model, capture again and compare; buy or add GPUs only if that is not enough.".into(),
            confidence: Confidence::Medium,
            caveat: "Quantization can cost accuracy on some tasks; check quality on your own evaluation set. On GPUs without FP8 support (A10G, L4 have it only through software paths) INT4 weight-only kernels are the option.",
            evidence: vec![
                ctx.ev("DRAM active (mean)", dram, "%", &[Signal::DramActive]),
                ctx.ev("tensor active (mean)", tensor, "%", &[Signal::TensorActive]),
                ctx.ev("inter-token latency (mean)", s.latency.inter_token_ms, "ms", &[Signal::InterTokenLatency]),
            ],
            snippets: Vec::new(),
        });
    }
    let reasons = &s.outcomes.completions_per_min;
    let all: f64 = reasons.values().sum();
    let length_share =
        (all > 0.0).then(|| 100.0 * reasons.get("length").copied().unwrap_or(0.0) / all);
    if length_share.is_some_and(|l| l >= 50.0)
        || s.workload
            .max_tokens_utilisation_pct
            .is_some_and(|u| u >= 90.0)
    {
        rules.push(Rule {
            id: "raise_max_tokens",
            priority: 15,
            title: "Raise the client's max_tokens".into(),
            rationale: format!(
                "{} Answers are being cut off, which users see as truncated output.",
                match (length_share, s.workload.max_tokens_utilisation_pct) {
                    (Some(l), Some(u)) => format!("{l:.0} % of requests end on length and answers use {u:.0} % of max_tokens."),
                    (Some(l), None) => format!("{l:.0} % of requests end on length."),
                    (None, Some(u)) => format!("Answers use {u:.0} % of max_tokens on average."),
                    (None, None) => String::new(),
                }
            ),
            action: "Raise max_tokens in the client (or ask for shorter answers in the prompt); then expect decode time per request to grow.".into(),
            confidence: Confidence::High,
            caveat: "A deliberately low max_tokens (cost control, UI limits) is a product decision; then the figure is expected.",
            evidence: vec![
                ctx.ev("share ending on length", length_share, "%", &[Signal::FinishedRequests]),
                ctx.ev("max_tokens used", s.workload.max_tokens_utilisation_pct, "%", &[Signal::RequestGenerationTokens, Signal::MaxTokens]),
            ],
            snippets: Vec::new(),
        });
    }
    if let Some(hit) = s.efficiency.prefix_cache_hit_pct
        && hit < 30.0
    {
        rules.push(Rule {
            id: "standardise_prompt_prefix",
            priority: 40,
            title: "Standardise the prompt prefix".into(),
            rationale: format!("Only {hit:.0} % of prompt tokens hit the prefix cache. Requests that begin with the same byte-identical text share cached KV blocks and skip that prefill."),
            action: "Put the fixed part of the prompt (system prompt, tool definitions, examples) first and keep it byte-identical across requests; move timestamps, user names and retrieved text after it.".into(),
            confidence: Confidence::Medium,
            caveat: "If prompts genuinely share little text (unique documents), no ordering will raise the hit rate.",
            evidence: vec![ctx.ev("prefix-cache hit rate", Some(hit), "%", &[Signal::PrefixHits, Signal::PrefixQueries])],
            snippets: Vec::new(),
        });
    }
    if ctx.has(Signal::KvUsage) && ctx.has(Signal::Waiting) {
        let kv = name(ctx, Signal::KvUsage);
        let waiting = name(ctx, Signal::Waiting);
        rules.push(Rule {
            id: "set_autoscaling_trigger",
            priority: 50,
            title: "Set the autoscaling trigger now: KV ≈ 60 % or waiting > 0".into(),
            rationale: format!(
                "KV usage peaked at {} and {} of {} windows had waiting requests. KV usage and waiting requests rise before latency does; GPU util and VRAM do not move with load.",
                s.efficiency.kv_cache_pct.map_or("?".into(), |k| format!("{k:.1} %")),
                waiting_windows.len(),
                ctx.windows.len()
            ),
            action: format!("Scale out when {kv} > 0.6 or {waiting} > 0 for a few minutes; the rule and trigger below use this server's metric names."),
            confidence: Confidence::High,
            caveat: "60 % leaves room for a new replica to start (model load takes minutes); with fast start-up a higher threshold wastes less.",
            evidence: vec![
                ctx.ev("KV cache max", s.efficiency.kv_cache_pct, "%", &[Signal::KvUsage]),
                ctx.ev_at("windows with waiting > 0", Some(waiting_windows.len() as f64), "windows", &[Signal::Waiting], waiting_windows.clone()),
            ],
            snippets: vec![
                Snippet {
                    kind: "prometheus-rule".into(),
                    text: format!(
                        "groups:\n  - name: vllm-capacity\n    rules:\n      - alert: VllmKvCacheHigh\n        expr: max by (instance) ({kv}{model_sel}) > 0.6\n        for: 5m\n        labels: {{severity: warning}}\n        annotations: {{summary: \"vLLM KV cache above 60 % on {{{{ $labels.instance }}}}\"}}\n      - alert: VllmRequestsWaiting\n        expr: sum by (instance) ({waiting}{model_sel}) > 0\n        for: 2m\n        labels: {{severity: warning}}\n        annotations: {{summary: \"Requests waiting on {{{{ $labels.instance }}}}\"}}\n"
                    ),
                },
                Snippet {
                    kind: "keda".into(),
                    text: format!(
                        "# set serverAddress to your Prometheus (the in-cluster service URL)\ntriggers:\n  - type: prometheus\n    metadata:\n      serverAddress: ${{PROMETHEUS_URL}}\n      query: max({kv}{model_sel})\n      threshold: \"0.6\"\n  - type: prometheus\n    metadata:\n      serverAddress: ${{PROMETHEUS_URL}}\n      query: sum({waiting}{model_sel})\n      threshold: \"1\"\n"
                    ),
                },
            ],
        });
    }
    let vram = s.gpu.vram_used_pct;
    if let (Some(v), Some(kv)) = (vram, s.efficiency.kv_cache_pct)
        && v >= 80.0
        && kv < 60.0
    {
        let queue = name(ctx, Signal::QueueTime);
        rules.push(Rule {
            id: "alert_on_queue_time_not_vram",
            priority: 60,
            title: "Alert on queue time, not on VRAM".into(),
            rationale: format!("VRAM reads {v:.0} % used while the KV pool is only {kv:.1} % full: vLLM pre-allocates its memory, so a VRAM alert would fire all the time and say nothing about load."),
            action: "Remove VRAM-based alerts for vLLM GPUs; alert on p95 queue time instead (rule below).".into(),
            confidence: Confidence::High,
            caveat: "VRAM still matters for capacity planning (what fits on the GPU), just not for alerting.",
            evidence: vec![
                ctx.ev("VRAM used max", Some(v), "%", &[Signal::FbUsed, Signal::FbFree]),
                ctx.ev("KV cache max", Some(kv), "%", &[Signal::KvUsage]),
            ],
            snippets: vec![Snippet {
                kind: "prometheus-rule".into(),
                text: format!(
                    "groups:\n  - name: vllm-latency\n    rules:\n      - alert: VllmQueueTimeHigh\n        expr: histogram_quantile(0.95, sum by (le, instance) (rate({queue}_bucket{model_sel}[5m]))) > 0.1\n        for: 5m\n        labels: {{severity: warning}}\n        annotations: {{summary: \"p95 queue time above 100 ms on {{{{ $labels.instance }}}}\"}}\n"
                ),
            }],
        });
    }
    if let Some((a, b, at)) = halves(ctx)
        && a > 0.0
        && b > 0.0
        && (a / b >= 2.0 || b / a >= 2.0)
    {
        rules.push(Rule {
            id: "revisit_on_shape_change",
            priority: 70,
            title: "Revisit the tuning: the workload changed shape".into(),
            rationale: format!("Generated tokens per prompt token moved from {a:.2} to {b:.2} during the capture; settings tuned for one shape may not suit the other."),
            action: "Capture each traffic pattern separately and compare; alert when the generated/prompt ratio moves by more than 2×.".into(),
            confidence: Confidence::Medium,
            caveat: "A short capture can catch a burst that is not typical.",
            evidence: vec![ctx.ev_at("generated ÷ prompt, second half vs first", Some(b / a), "×", &[Signal::GenerationTokens, Signal::PromptTokens], vec![at])],
            snippets: Vec::new(),
        });
    }
    if !waiting_windows.is_empty() && waiting_windows.len() * 2 >= ctx.windows.len() {
        rules.push(Rule {
            id: "move_to_kserve",
            priority: 35,
            title: "Add replicas behind an autoscaler (e.g. KServe)".into(),
            rationale: format!("Requests waited in {} of {} windows: one server is not enough at peak.", waiting_windows.len(), ctx.windows.len()),
            action: "Run vLLM under an autoscaler that adds replicas on the trigger above (KServe, or a Deployment with KEDA).".into(),
            confidence: Confidence::Medium,
            caveat: "If the peak is short and predictable, scheduled scaling or client-side rate limiting may be cheaper.",
            evidence: vec![ctx.ev_at("windows with waiting > 0", Some(waiting_windows.len() as f64), "windows", &[Signal::Waiting], waiting_windows.clone())],
            snippets: Vec::new(),
        });
    }
    if prefill_heavy
        && decode_share.is_some_and(|d| d >= 50.0)
        && let (Some(p95), Some(p50)) = (s.latency.itl_p95_ms, s.latency.itl_p50_ms)
        && p95 >= 2.0 * p50
    {
        rules.push(Rule {
            id: "move_to_llm_d",
            priority: 25,
            title: "Separate prefill from decode (e.g. llm-d)".into(),
            rationale: format!("Long prompts' prefill shares engine steps with running answers: inter-token latency p95 is {p95:.0} ms against a median of {p50:.0} ms, and decode is {:.0} % of engine time for short answers.", decode_share.unwrap_or(0.0)),
            action: "First lower --max-num-batched-tokens (smaller prefill chunks per step); if that is not enough, run prefill and decode on separate workers (llm-d, or vLLM's disaggregated prefill).".into(),
            confidence: Confidence::Medium,
            caveat: "Smaller chunks raise time to first token; disaggregation needs more GPUs and a KV transfer path.",
            evidence: vec![
                ctx.ev("inter-token latency p95", Some(p95), "ms", &[Signal::InterTokenLatency]),
                ctx.ev("inter-token latency p50", Some(p50), "ms", &[Signal::InterTokenLatency]),
                ctx.ev("generated ÷ prompt tokens", s.workload.gen_to_prompt_ratio, "", &[Signal::GenerationTokens, Signal::PromptTokens]),
            ],
            snippets: Vec::new(),
        });
    } else if ctx.replicas >= 2
        && let Some(hit) = s.efficiency.prefix_cache_hit_pct
        && hit < 50.0
        && s.workload.avg_prompt_tokens.is_some_and(|p| p >= 500.0)
    {
        rules.push(Rule {
            id: "move_to_llm_d",
            priority: 45,
            title: "Route by prefix across replicas (e.g. llm-d)".into(),
            rationale: format!("{} replicas share long prompts ({:.0} tokens on average) but hit the prefix cache only {hit:.0} % of the time: a request whose prefix is cached on one replica often lands on another.", ctx.replicas, s.workload.avg_prompt_tokens.unwrap_or(0.0)),
            action: "Use prefix- or session-aware routing (llm-d's inference scheduler, or session affinity at the load balancer) so follow-up requests reach the replica that holds their prefix.".into(),
            confidence: Confidence::Low,
            caveat: "The tool cannot see how requests were routed; a low hit rate can also mean prompts share little text.",
            evidence: vec![
                ctx.ev("prefix-cache hit rate", Some(hit), "%", &[Signal::PrefixHits, Signal::PrefixQueries]),
                ctx.ev("average prompt", s.workload.avg_prompt_tokens, "tokens", &[Signal::RequestPromptTokens]),
            ],
            snippets: Vec::new(),
        });
    }
    if s.efficiency.preemptions_per_min.is_some_and(|p| p > 0.0) {
        rules.push(Rule {
            id: "tune_for_preemptions",
            priority: 10,
            title: "Stop the preemptions: --max-num-seqs / --gpu-memory-utilization".into(),
            rationale: format!("{:.1} preemptions per minute: the KV pool runs out and running requests are evicted and recomputed.", s.efficiency.preemptions_per_min.unwrap_or(0.0)),
            action: "Lower --max-num-seqs so admitted requests fit the pool, or raise --gpu-memory-utilization (or add GPUs / tensor parallelism) to enlarge it.".into(),
            confidence: Confidence::High,
            caveat: "Lowering --max-num-seqs moves the wait from the engine to the queue; it trades throughput for predictability.",
            evidence: vec![
                ctx.ev("preemptions", s.efficiency.preemptions_per_min, "per min", &[Signal::Preemptions]),
                ctx.ev("KV cache max", s.efficiency.kv_cache_pct, "%", &[Signal::KvUsage]),
            ],
            snippets: Vec::new(),
        });
    }
    // SLO failures make their rules more urgent.
    for r in &mut rules {
        let urgent = match r.id {
            "quantize_before_buying" => slo(slos, "itl_p95") == Some(SloStatus::Fail),
            "move_to_kserve" | "set_autoscaling_trigger" => {
                slo(slos, "queue_at_concurrency") == Some(SloStatus::Fail)
                    || slo(slos, "ttft_p95") == Some(SloStatus::Fail)
            }
            _ => false,
        };
        if urgent {
            r.priority = r.priority.saturating_sub(25);
        }
    }
    rules.sort_by_key(|r| (r.priority, r.id));
    rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| Recommendation {
            id: r.id.to_string(),
            rank: i as u32 + 1,
            title: r.title,
            rationale: r.rationale,
            action: r.action,
            confidence: r.confidence,
            caveat: r.caveat.to_string(),
            evidence: r.evidence,
            snippets: r.snippets,
        })
        .collect()
}
