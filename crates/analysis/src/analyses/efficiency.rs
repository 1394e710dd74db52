//! Step 2: does the engine use the GPU well. Prefix-cache hits, continuous
//! batching (tokens per step against running requests), what KV usage
//! measures, preemptions.

use vllm_lens_catalog::Signal;

use super::{Ctx, finding, missing};
use crate::model::{Finding, Severity};

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let e = &ctx.summary.efficiency;
    // Prefix cache.
    match e.prefix_cache_hit_pct {
        Some(hit) => {
            let evidence = vec![
                ctx.ev(
                    "prefix-cache hit rate",
                    Some(hit),
                    "%",
                    &[Signal::PrefixHits, Signal::PrefixQueries],
                ),
                ctx.ev(
                    "prompt tokens per second",
                    e.prompt_tokens_per_sec,
                    "tokens/s",
                    &[Signal::PromptTokens],
                ),
            ];
            if hit < 30.0 {
                let saved = e
                    .prompt_tokens_per_sec
                    .map(|p| p * (50.0 - hit).max(0.0) / 100.0);
                out.push(finding(
                    "efficiency.prefix_cache_low",
                    Severity::Warn,
                    format!("Prefix-cache hit rate is {hit:.0} %"),
                    format!(
                        "Only {hit:.0} % of prompt tokens are found in the prefix cache; the rest is computed again. Requests that start with the same text (system prompt, tool definitions, few-shot examples) share cached blocks only if that text is byte-identical and comes first.{}",
                        saved.map_or(String::new(), |s| format!(" Raising the hit rate to 50 % would skip about {s:.0} prompt tokens of prefill every second."))
                    ),
                    evidence,
                    "Standardise the prompt prefix: put fixed text first, keep it byte-identical, move per-request data to the end.",
                ));
            } else {
                out.push(finding(
                    "efficiency.prefix_cache_ok",
                    Severity::Pass,
                    format!("Prefix-cache hit rate is {hit:.0} %"),
                    "A good part of every prompt is served from cache instead of being computed again.".into(),
                    evidence,
                    "",
                ));
            }
        }
        None => {
            if let Some(rate) = ctx.prefix_lifetime
                && rate < 0.0
            {
                out.push(finding(
                    "efficiency.prefix_caching_off",
                    Severity::Warn,
                    "Prefix caching is off".into(),
                    "vllm:gpu_prefix_cache_hit_rate reads −1: this V0 server runs without prefix caching (its default), so every prompt is computed in full, even text every request shares.".into(),
                    vec![ctx.ev("lifetime hit rate gauge", Some(rate), "", &[Signal::PrefixHitRateLifetime])],
                    "Start vLLM with --enable-prefix-caching (on by default from the V1 engine).",
                ));
            } else if ctx.has(Signal::PrefixHitRateLifetime) {
                out.push(finding(
                    "efficiency.prefix_cache_lifetime_only",
                    Severity::Info,
                    "Only a lifetime prefix-cache hit rate is exported (V0)".into(),
                    "This vLLM release exports the hit rate since the server started, not counters, so it cannot be read per window. A value of −1 means prefix caching is off (the V0 default).".into(),
                    vec![ctx.ev("lifetime hit rate since start", ctx.prefix_lifetime.map(|r| r * 100.0), "%", &[Signal::PrefixHitRateLifetime])],
                    "Turn on --enable-prefix-caching if prompts share a prefix; newer releases export windowable counters.",
                ));
            } else {
                out.push(missing(
                    "efficiency.prefix_cache_missing",
                    "Prefix-cache hit rate",
                    &[Signal::PrefixHits, Signal::PrefixQueries],
                ));
            }
        }
    }
    // Continuous batching: tokens per step against running requests.
    match (e.tokens_per_iteration, e.running_avg) {
        (Some(tpi), Some(running)) if running >= 4.0 && tpi < 1.5 => out.push(finding(
            "efficiency.batching_broken",
            Severity::Fail,
            format!("{tpi:.1} tokens per engine step with {running:.0} requests running"),
            "With continuous batching every running request adds a token to each step, so tokens per step should be close to the number running. About one token per step with many running means requests are processed one at a time.".into(),
            vec![
                ctx.ev("tokens per iteration", Some(tpi), "tokens", &[Signal::IterationTokens]),
                ctx.ev("running (mean)", Some(running), "requests", &[Signal::Running]),
            ],
            "Check --max-num-seqs, --max-num-batched-tokens and whether the client serialises requests.",
        )),
        (Some(tpi), Some(running)) if running > 0.5 => out.push(finding(
            "efficiency.batching_ok",
            Severity::Pass,
            format!("Continuous batching works: {tpi:.1} tokens per step with {running:.1} running on average"),
            "Each engine step carries a token for about every running request (plus prompt chunks), as it should.".into(),
            vec![
                ctx.ev("tokens per iteration", Some(tpi), "tokens", &[Signal::IterationTokens]),
                ctx.ev("running (mean)", Some(running), "requests", &[Signal::Running]),
            ],
            "",
        )),
        (None, _) => out.push(missing("efficiency.batching_missing", "Tokens per engine step", &[Signal::IterationTokens])),
        _ => {}
    }
    // KV usage: what it measures, and pressure.
    if let Some(kv) = e.kv_cache_pct {
        let kv_windows =
            ctx.windows_where(|w| w.efficiency.kv_cache_pct.is_some_and(|k| k >= 90.0));
        let sev = if kv >= 90.0 {
            Severity::Fail
        } else if kv >= 60.0 {
            Severity::Warn
        } else {
            Severity::Info
        };
        out.push(finding(
            "efficiency.kv_usage",
            sev,
            format!("KV-cache pool at most {kv:.1} % in use"),
            "KV-cache usage is the share of the block pool vLLM allocated at start-up (sized by --gpu-memory-utilization), not of VRAM. Near 100 % new requests wait for blocks or running ones are preempted; far below it the pool has room for many more concurrent requests.".into(),
            vec![
                ctx.ev("KV cache max", Some(kv), "%", &[Signal::KvUsage]),
                ctx.ev("KV cache mean", e.kv_cache_pct_avg, "%", &[Signal::KvUsage]),
                ctx.ev_at("windows at ≥ 90 %", Some(kv_windows.len() as f64), "windows", &[Signal::KvUsage], kv_windows),
            ],
            if kv >= 60.0 { "Scale out before the pool fills: autoscale on KV ≈ 60 % or waiting > 0." } else { "" },
        ));
    } else {
        out.push(missing(
            "efficiency.kv_missing",
            "KV-cache usage",
            &[Signal::KvUsage],
        ));
    }
    // Preemptions.
    if let Some(p) = e.preemptions_per_min {
        if p > 0.0 {
            let at =
                ctx.windows_where(|w| w.efficiency.preemptions_per_min.is_some_and(|x| x > 0.0));
            out.push(finding(
                "efficiency.preemptions",
                Severity::Fail,
                format!("{p:.1} preemptions per minute"),
                "The KV pool ran out: running requests were evicted and must recompute their prompt later, which wastes GPU time and adds latency.".into(),
                vec![ctx.ev_at("preemptions", Some(p), "per min", &[Signal::Preemptions], at)],
                "Lower --max-num-seqs, or raise --gpu-memory-utilization (or add a GPU) so the pool holds the concurrency.",
            ));
        } else {
            out.push(finding(
                "efficiency.no_preemptions",
                Severity::Pass,
                "No preemptions".into(),
                "The KV pool never ran out.".into(),
                vec![ctx.ev("preemptions", Some(0.0), "per min", &[Signal::Preemptions])],
                "",
            ));
        }
    }
    // Waiting.
    if let Some((w, at)) = ctx.max_of(|w| w.efficiency.waiting)
        && w > 0.0
    {
        let windows = ctx.windows_where(|x| x.efficiency.waiting.is_some_and(|v| v > 0.0));
        out.push(finding(
                "efficiency.waiting",
                if windows.len() * 2 >= ctx.windows.len() { Severity::Fail } else { Severity::Warn },
                format!("Requests waited for a slot in {} of {} windows (up to {w:.0})", windows.len(), ctx.windows.len()),
                "Waiting requests are not yet running: the engine had no room (sequences or KV blocks) for them.".into(),
                vec![
                    ctx.ev_at("waiting max", Some(w), "requests", &[Signal::Waiting], vec![at]),
                    ctx.ev_at("windows with waiting > 0", Some(windows.len() as f64), "windows", &[Signal::Waiting], windows),
                ],
                "Add capacity or autoscale on waiting > 0.",
            ));
    }
    out
}
