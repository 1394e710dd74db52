//! Step 1: where latency goes. Queue, prefill and decode shares say which
//! levers can matter; queue time is the earliest sign of saturation.

use vllm_lens_catalog::Signal;

use super::{Ctx, finding, missing};
use crate::model::{Finding, Severity};

const PHASES: [Signal; 3] = [Signal::QueueTime, Signal::PrefillTime, Signal::DecodeTime];

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let l = &ctx.summary.latency;
    let (Some(queue), Some(prefill), Some(decode)) = (l.queue_ms, l.prefill_ms, l.decode_ms) else {
        out.push(missing(
            "latency.phases_missing",
            "Queue / prefill / decode split",
            &PHASES,
        ));
        return out;
    };
    let total = queue + prefill + decode;
    let share = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
    let evidence = vec![
        ctx.ev("queue", Some(queue), "ms", &[Signal::QueueTime]),
        ctx.ev("prefill", Some(prefill), "ms", &[Signal::PrefillTime]),
        ctx.ev("decode", Some(decode), "ms", &[Signal::DecodeTime]),
        ctx.ev("decode share", Some(share(decode)), "%", &PHASES),
    ];
    let prefill_heavy = ctx
        .summary
        .workload
        .gen_to_prompt_ratio
        .is_some_and(|r| r < 0.1);
    if prefill_heavy && share(decode) >= 50.0 {
        out.push(finding(
            "latency.prefill_interference",
            Severity::Warn,
            format!(
                "Decode takes {decode:.0} ms for {} generated tokens: prefill is slowing it down",
                ctx.summary.workload.avg_generated_tokens.map_or("few".into(), |g| format!("{g:.0}"))
            ),
            "The prompts are long and the answers short, yet decode is most of the time. Each engine step that carries a chunk of some other request's long prompt takes far longer than a decode-only step, so every running answer waits for those chunks: inter-token latency is dominated by other requests' prefill.".into(),
            vec![
                ctx.ev("decode", Some(decode), "ms", &[Signal::DecodeTime]),
                ctx.ev("inter-token latency p95", l.itl_p95_ms, "ms", &[Signal::InterTokenLatency]),
                ctx.ev("inter-token latency p50", l.itl_p50_ms, "ms", &[Signal::InterTokenLatency]),
                ctx.ev("generated ÷ prompt tokens", ctx.summary.workload.gen_to_prompt_ratio, "", &[Signal::GenerationTokens, Signal::PromptTokens]),
            ],
            "Lower --max-num-batched-tokens so prefill chunks are smaller, or separate prefill from decode (disaggregated serving such as llm-d).",
        ));
    } else if share(decode) >= 80.0 {
        out.push(finding(
            "latency.decode_dominates",
            Severity::Info,
            format!("Decode is {:.0} % of the time a request spends in the engine", share(decode)),
            "Requests spend almost all their time generating tokens one by one. Work on the prompt side (chunked prefill, prompt compression, prefix caching) cannot move latency much. Decode is limited by how fast the GPU can stream the model's weights from memory, so what helps is fewer bytes per token (quantization), more memory bandwidth (tensor parallelism, a faster GPU) or a smaller model.".into(),
            evidence.clone(),
            "Stop optimising prefill; look at quantization or tensor parallelism for decode speed.",
        ));
    } else if share(prefill) >= 40.0 {
        out.push(finding(
            "latency.prefill_dominates",
            Severity::Info,
            format!("Prefill is {:.0} % of the time a request spends in the engine", share(prefill)),
            "Requests spend much of their time reading the prompt. Shorter prompts, a shared prompt prefix that the prefix cache can reuse, and chunked prefill (so that long prompts do not stall running decodes) are the levers.".into(),
            evidence.clone(),
            "Make the prompt prefix cacheable and keep chunked prefill on; check the prefix-cache hit rate.",
        ));
    } else {
        out.push(finding(
            "latency.balanced",
            Severity::Info,
            format!(
                "Queue {:.0} %, prefill {:.0} %, decode {:.0} % of engine time",
                share(queue),
                share(prefill),
                share(decode)
            ),
            "No single phase dominates.".into(),
            evidence.clone(),
            "",
        ));
    }
    // Queue time: the earliest saturation signal.
    let queued = ctx.windows_where(|w| w.latency.queue_ms.is_some_and(|q| q >= 50.0));
    let worst = ctx.max_of(|w| w.latency.queue_ms);
    match worst {
        Some((q, at)) if q >= 50.0 => out.push(finding(
            "latency.queueing",
            if q >= 500.0 { Severity::Fail } else { Severity::Warn },
            format!("Requests wait in the queue: up to {q:.0} ms on average in a window"),
            "Time in the queue is time before the engine even starts on a request. It is the first sign that the server is saturated: more arrive than the engine can batch.".into(),
            vec![
                ctx.ev_at("worst queue time", Some(q), "ms", &[Signal::QueueTime], vec![at]),
                ctx.ev_at("windows with queue ≥ 50 ms", Some(queued.len() as f64), "windows", &[Signal::QueueTime], queued),
            ],
            "Add capacity (a replica) or lower the load before latency SLOs break; alert on queue time.",
        )),
        Some((q, _)) => out.push(finding(
            "latency.no_queueing",
            Severity::Pass,
            format!("No queueing: at most {q:.1} ms in any window"),
            "Requests are scheduled as soon as they arrive.".into(),
            vec![ctx.ev("worst queue time", Some(q), "ms", &[Signal::QueueTime])],
            "",
        )),
        None => {}
    }
    // TTFT against queue + prefill: frontend overhead.
    if let Some(ttft) = l.ttft_ms {
        let gap = ttft - queue - prefill;
        if gap > 50.0 && gap > 0.5 * ttft {
            out.push(finding(
                "latency.frontend_overhead",
                Severity::Warn,
                format!("{gap:.0} ms of time to first token is spent outside the engine"),
                "TTFT should be about queue + prefill. The rest is the API server: tokenisation, request validation, detokenisation or a busy Python process.".into(),
                vec![
                    ctx.ev("TTFT", Some(ttft), "ms", &[Signal::Ttft]),
                    ctx.ev("queue + prefill", Some(queue + prefill), "ms", &[Signal::QueueTime, Signal::PrefillTime]),
                ],
                "Check the API server's CPU; consider --api-server-count.",
            ));
        }
    }
    out
}
