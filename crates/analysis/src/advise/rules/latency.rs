//! Rules on latency: the API server, decode speed, prefill, and prefill's
//! interference with decode.

use vllm_lens_catalog::Signal;

use crate::advise::levers::{Knob, down, up};
use crate::advise::rules::rule::{Fired, In, Rule, Words, ev_itl_mean};
use crate::ids::{Addresses as A, FindingId, RecId, SloId};
use crate::measure::thresholds::*;
use crate::model::Confidence;
use crate::text::{ms_text, num};

const FLOOR_PART_UNREACHABLE: &str = " The weights alone take {floor} per step to stream on the {gpu}; FP8 weights bring that to {half}, still above the {objective} objective: quantization frees memory here, it cannot meet that objective on this hardware.";
const MORE_PREFILL_COMPUTE: &str =
    ", or give prefill more compute: tensor parallelism or a GPU with more FLOP/s";
const FREES_KV: &str = " and frees memory for the KV cache, which is what fills here";
const INTERFERENCE_WHY: &str = "Long prompts' prefill shares engine steps with running answers: the inter-token p95 lies {p95}, against a median near {p50}, and decode is still {share} of engine time although the answers are short next to the prompts.";
const DISAGGREGATE_ONLY: &str = "Run prefill and decode on separate workers (llm-d, or vLLM's disaggregated prefill). Smaller prefill chunks are no option here: they raise time to first token, which is already in doubt (it misses its objective, or its bucket cannot tell).";
const SMALLER_CHUNKS_THEN_DISAGGREGATE: &str = "Lower --max-num-batched-tokens (smaller prefill chunks per step) while time to first token has room; if that is not enough, run prefill and decode on separate workers (llm-d, or vLLM's disaggregated prefill).";
const DISAGGREGATE_CAVEAT: &str = "Disaggregation needs more GPUs and a KV transfer path; smaller chunks raise time to first token.";
const ROUTING_WHY: &str = "{replicas} replicas share long prompts ({prompt} tokens on average) but hit the prefix cache only {hit} of the time: a request whose prefix is cached on one replica often lands on another. Prefill is {share} of the mean time to first token.";
const ROUTE_BY_PREFIX: &str = "Use prefix- or session-aware routing (llm-d's inference scheduler, or session affinity at the load balancer) so follow-up requests reach the replica that holds their prefix.";
const BOUND_DCGM: &str =
    "Decode is memory-bound: DRAM {dram} active against tensor cores {tensor}.";
const BOUND_ESTIMATES: &str =
    "Decode is memory-bound by vLLM's estimates: MBU {mbu} against MFU {mfu}.";
const BOUND_FLOOR: &str = "Each decode step streams every weight from memory once.";
const FLOOR_PART: &str = " The weights alone take {floor} per step to stream on the {gpu}; FP8 weights bring that to {half}.";
const ROUTING_CAVEAT: &str = "The tool cannot see how requests were routed; a low hit rate can also mean prompts share little text.";
pub(super) const SCALE_API_SERVER: Rule = Rule {
    id: RecId::new("scale_api_server"),
    levers: &[up(Knob::ApiServers)],
    addresses: &[A::TtftP95],
    investigation: false,
    words: Words {
        title: "Give the API server more CPU",
        why: "{share} of the mean time to first token passes outside the engine (neither queue nor prefill).",
        action: "Run more API server processes (--api-server-count) or give the pod more CPU; time spent tokenising and validating adds to every request's time to first token.",
        caveat: "The gap can also be network or load-balancer time if TTFT is measured by a client; vLLM's own histogram starts at the API server.",
    },
    fire: scale_api_server,
};

/// Time to first token passes outside the engine.
fn scale_api_server(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    if !i.fired(FindingId::LatencyFrontendOverhead) || !ctx.slo_in_doubt(SloId::TtftP95) {
        return None;
    }
    let (_, _, frontend) = i.ttft_shares()?;
    let mut f = Fired::new(
        vec![up(Knob::ApiServers)],
        i.doubtful(&[SloId::TtftP95], frontend),
        vec![("share", format!("{:.0} %", 100.0 * frontend))],
        Confidence::Medium,
    );
    f.evidence = vec![ctx.ev(
        "TTFT (mean)",
        ctx.summary.latency.ttft_ms,
        "ms",
        &[Signal::Ttft],
    )];
    Some(f)
}

pub(super) const QUANTIZE: Rule = Rule {
    id: RecId::new("quantize_before_buying"),
    levers: &[down(Knob::WeightBytes)],
    addresses: &[A::ItlP95, A::TtftP95, A::Capacity],
    investigation: false,
    words: Words {
        title: "Quantize before buying hardware",
        why: "{bound} Halving the bytes per weight (FP8, or INT4 AWQ/GPTQ) shortens each decode step{kv}.{floor}",
        action: "Try an FP8 (or INT4) build of the same model, capture again and compare; add GPUs only if that is not enough.",
        caveat: "Quantization can cost accuracy on some tasks; check quality on your own evaluation set. GPUs without native FP8 (A10G, T4) run INT4 weight-only kernels instead.",
    },
    fire: quantize,
};

/// Decode is memory-bound (DCGM, or vLLM's estimates) or the objective lies
/// below the floor: fewer bytes per weight. It addresses the inter-token
/// objective only where FP8 weights' floor (half the floor) reaches it.
/// What says decode is memory-bound: DCGM's activity, else vLLM's
/// estimates (MFU, MBU) where DCGM has no profiling fields.
struct Bound {
    dcgm: bool,
    estimated: Option<(f64, f64)>,
    by_estimates: bool,
}

fn memory_bound(i: &In<'_>) -> Bound {
    let s = i.ctx.summary;
    let (tensor, dram) = (s.gpu.tensor_active_pct_avg, s.gpu.dram_active_pct_avg);
    let dcgm = matches!((tensor, dram), (Some(t), Some(d)) if d >= MEMORY_BOUND_DRAM_PCT && t < TENSOR_IDLE_PCT);
    let estimated = crate::judge::analyses::hardware::estimated_utilisation(i.ctx.capacity)
        .filter(|_| tensor.is_none() || dram.is_none());
    let by_estimates =
        estimated.is_some_and(|(mfu, mbu)| mbu >= MEMORY_BOUND_DRAM_PCT && mfu < TENSOR_IDLE_PCT);
    Bound {
        dcgm,
        estimated,
        by_estimates,
    }
}

/// Decode is memory-bound (DCGM, or vLLM's estimates) or the objective lies
/// below the floor: fewer bytes per weight. It addresses the inter-token
/// objective only where FP8 weights' floor (half the floor) reaches it.
fn quantize(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let b = memory_bound(i);
    let kv_bound = i.state.kv_binds();
    let floor = ctx.capacity.floor.as_ref();
    let below_floor = floor.is_some_and(|f| f.infeasible.contains(&SloId::ItlP95));
    if !(((b.dcgm || b.by_estimates) && (ctx.slo_in_doubt(SloId::ItlP95) || kv_bound))
        || below_floor)
    {
        return None;
    }
    let reachable = floor.is_none_or(|f| f.ms / 2.0 <= ctx.settings.slo.itl_p95_ms);
    let (queue_share, _, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let mut effect = if reachable {
        i.doubtful(&[SloId::ItlP95], 0.6)
    } else {
        Vec::new()
    };
    if kv_bound {
        effect.extend(i.doubtful(&[SloId::TtftP95], queue_share * 0.5));
        effect.push((A::Capacity, 1.0));
    }
    let floor_part = floor.map_or(String::new(), |f| {
        crate::text::fill(
            if reachable {
                FLOOR_PART
            } else {
                FLOOR_PART_UNREACHABLE
            },
            &[
                ("floor", ms_text(f.ms)),
                ("gpu", f.gpu.clone()),
                ("half", ms_text(f.ms / 2.0)),
                ("objective", ms_text(ctx.settings.slo.itl_p95_ms)),
            ],
        )
    });
    let kv = if kv_bound { FREES_KV } else { "" };
    let mut f = Fired::new(
        vec![down(Knob::WeightBytes)],
        effect,
        vec![
            ("floor", floor_part),
            ("bound", bound_words(i, &b)),
            ("kv", kv.to_string()),
        ],
        Confidence::Medium,
    );
    f.evidence = quantize_evidence(i, &b);
    Some(f)
}

/// Why decode is memory-bound, in words.
fn bound_words(i: &In<'_>, b: &Bound) -> String {
    let g = &i.ctx.summary.gpu;
    if b.dcgm {
        crate::text::fill(
            BOUND_DCGM,
            &[
                (
                    "dram",
                    format!("{:.0} %", g.dram_active_pct_avg.unwrap_or_default()),
                ),
                (
                    "tensor",
                    format!("{:.0} %", g.tensor_active_pct_avg.unwrap_or_default()),
                ),
            ],
        )
    } else if let Some((mfu, mbu)) = b.estimated.filter(|_| b.by_estimates) {
        crate::text::fill(
            BOUND_ESTIMATES,
            &[
                ("mbu", format!("{mbu:.0} %")),
                ("mfu", format!("{mfu:.0} %")),
            ],
        )
    } else {
        BOUND_FLOOR.to_string()
    }
}

/// The figures behind quantization: DCGM's activity, vLLM's estimates, the
/// floor, the measured pace.
fn quantize_evidence(i: &In<'_>, b: &Bound) -> Vec<crate::model::Evidence> {
    let ctx = i.ctx;
    let g = &ctx.summary.gpu;
    let (tensor, dram) = (g.tensor_active_pct_avg, g.dram_active_pct_avg);
    let mut out = Vec::new();
    if dram.is_some() || tensor.is_some() {
        out.push(ctx.ev("DRAM active (mean)", dram, "%", &[Signal::DramActive]));
        out.push(ctx.ev("tensor active (mean)", tensor, "%", &[Signal::TensorActive]));
    }
    if let Some((mfu, mbu)) = b.estimated {
        out.push(ctx.ev(
            "MBU (vLLM's estimate)",
            Some(mbu),
            "%",
            &[Signal::EstimatedReadBytes, Signal::EstimatedWriteBytes],
        ));
        out.push(ctx.ev(
            "MFU (vLLM's estimate)",
            Some(mfu),
            "%",
            &[Signal::EstimatedFlops],
        ));
    }
    if let Some(fl) = &ctx.capacity.floor {
        out.push(ctx.ev("decode floor", Some(fl.ms), "ms", &[]));
    }
    out.push(ev_itl_mean(ctx));
    out
}

/// Generated ÷ prompt tokens below the prefill-heavy line.
fn prefill_heavy(i: &In<'_>) -> bool {
    i.ctx
        .summary
        .workload
        .gen_to_prompt_ratio
        .is_some_and(|r| r < PREFILL_HEAVY_RATIO)
}

pub(super) const STOP_OPTIMISING_PREFILL: Rule = Rule {
    id: RecId::new("stop_optimising_prefill"),
    levers: &[],
    addresses: &[A::ItlP95],
    investigation: false,
    words: Words {
        title: "Do not spend effort on prefill: decode is what misses the objective",
        why: "Inter-token latency misses its objective and decode is {share} of the time requests spend in the engine; time to first token meets its own. Prefill work cannot move the pace of the answer.",
        action: "Spend effort on decode speed (quantization, tensor parallelism, a smaller model) rather than chunked-prefill tuning or prompt compression.",
        caveat: "Time to first token still depends on prefill; this applies to the pace of the answer.",
    },
    fire: stop_optimising_prefill,
};

/// Decode dominates and only the inter-token objective is in doubt (never
/// while time to first token is: prefill is part of it).
fn stop_optimising_prefill(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let d = ctx.summary.latency.decode_share_pct?;
    if d < DECODE_DOMINATES_PCT
        || prefill_heavy(i)
        || !ctx.slo_in_doubt(SloId::ItlP95)
        || ctx.slo_in_doubt(SloId::TtftP95)
    {
        return None;
    }
    let mut f = Fired::new(
        Vec::new(),
        i.doubtful(&[SloId::ItlP95], 0.3),
        vec![("share", format!("{d:.0} %"))],
        Confidence::High,
    );
    f.evidence = vec![ctx.ev(
        "decode share",
        Some(d),
        "%",
        &[Signal::QueueTime, Signal::PrefillTime, Signal::DecodeTime],
    )];
    Some(f)
}

pub(super) const DISAGGREGATE: Rule = Rule {
    id: RecId::new("move_to_llm_d"),
    levers: &[
        up(Knob::Disaggregation),
        down(Knob::MaxNumBatchedTokens),
        up(Knob::PrefixRouting),
    ],
    addresses: &[A::ItlP95, A::TtftP95, A::Efficiency],
    investigation: false,
    words: Words {
        title: "Separate prefill from decode, or route by prefix (e.g. llm-d)",
        why: "{why}",
        action: "{action}",
        caveat: "{caveat}",
    },
    fire: disaggregate_or_route,
};

/// Long prompts' prefill in the decode steps (separate them, or smaller
/// chunks while time to first token has room); else, on several replicas,
/// prefixes scattered across them (route by prefix).
fn disaggregate_or_route(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let s = ctx.summary;
    let interference = s
        .latency
        .decode_share_pct
        .is_some_and(|d| d >= INTERFERENCE_DECODE_PCT)
        && ctx.slo_in_doubt(SloId::ItlP95);
    // Prompts long next to their answers, or a little less long with a
    // tail so far above the median that only other requests' prefill in
    // the decode steps explains it.
    let long_prompts = |p95: f64, p50: f64| {
        (prefill_heavy(i) && p95 >= INTERFERENCE_P95_OVER_P50 * p50)
            || (s
                .workload
                .gen_to_prompt_ratio
                .is_some_and(|r| r < INTERFERENCE_TAIL_RATIO)
                && p95 >= INTERFERENCE_TAIL_P95_OVER_P50 * p50)
    };
    if let (true, Some(p95), Some(p50)) = (interference, s.latency.itl_p95_ms, s.latency.itl_p50_ms)
        && long_prompts(p95, p50)
    {
        let mut levers = vec![up(Knob::Disaggregation)];
        levers.extend(i.allowed(&[down(Knob::MaxNumBatchedTokens)]));
        let chunks = levers.len() > 1;
        let p95_text = s
            .latency
            .bounds
            .itl_p95_ms
            .map_or(ms_text(p95.round()), |b| {
                crate::text::bucket_text(b.low, b.high.unwrap_or(f64::INFINITY))
            });
        let why = crate::text::fill(
            INTERFERENCE_WHY,
            &[
                ("p95", p95_text),
                ("p50", ms_text(p50.round())),
                (
                    "share",
                    format!("{:.0} %", s.latency.decode_share_pct.unwrap_or_default()),
                ),
            ],
        );
        let action = if chunks {
            SMALLER_CHUNKS_THEN_DISAGGREGATE
        } else {
            DISAGGREGATE_ONLY
        };
        let mut f = Fired::new(
            levers,
            i.doubtful(&[SloId::ItlP95], 0.6),
            vec![
                ("why", why),
                ("action", action.to_string()),
                ("caveat", DISAGGREGATE_CAVEAT.to_string()),
            ],
            Confidence::Medium,
        );
        f.evidence = vec![
            ctx.ev(
                "inter-token latency p95",
                Some(p95),
                "ms",
                &[Signal::InterTokenLatency],
            ),
            ctx.ev(
                "inter-token latency p50",
                Some(p50),
                "ms",
                &[Signal::InterTokenLatency],
            ),
            ctx.ev(
                "generated ÷ prompt tokens",
                s.workload.gen_to_prompt_ratio,
                "",
                &[Signal::GenerationTokens, Signal::PromptTokens],
            ),
        ];
        return Some(f);
    }
    route_by_prefix(i)
}

/// Several replicas share long prompts but rarely hit the prefix cache.
fn route_by_prefix(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let s = ctx.summary;
    let hit = s.efficiency.prefix_cache_hit_pct?;
    let prompt = s.workload.avg_prompt_tokens?;
    if ctx.replicas < 2
        || hit >= ROUTING_HIT_PCT
        || prompt < ROUTING_PROMPT_TOKENS
        || !ctx.slo_in_doubt(SloId::TtftP95)
    {
        return None;
    }
    let (_, prefill_share, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let why = crate::text::fill(
        ROUTING_WHY,
        &[
            ("replicas", ctx.replicas.to_string()),
            ("prompt", num(prompt.round())),
            ("hit", format!("{hit:.0} %")),
            ("share", format!("{:.0} %", 100.0 * prefill_share)),
        ],
    );
    let mut f = Fired::new(
        vec![up(Knob::PrefixRouting)],
        [
            i.doubtful(&[SloId::TtftP95], prefill_share),
            vec![(A::Efficiency, 1.0)],
        ]
        .concat(),
        vec![
            ("why", why),
            ("action", ROUTE_BY_PREFIX.to_string()),
            ("caveat", ROUTING_CAVEAT.to_string()),
        ],
        Confidence::Medium,
    );
    f.evidence = vec![
        ctx.ev_prefix_hit_rate(Some(hit)),
        ctx.ev(
            "average prompt",
            Some(prompt),
            "tokens",
            &[Signal::RequestPromptTokens],
        ),
    ];
    Some(f)
}

pub(super) const SPEED_UP_PREFILL: Rule = Rule {
    id: RecId::new("speed_up_prefill"),
    levers: &[
        down(Knob::PromptTokens),
        up(Knob::PromptPrefixOrder),
        up(Knob::TensorParallel),
    ],
    addresses: &[A::TtftP95],
    investigation: false,
    words: Words {
        title: "Shorten prefill: it is most of the time to first token",
        why: "Prefill is {share} of the mean time to first token where it misses ({prompt} prompt tokens per request on average); queueing is {queue}.",
        action: "Send fewer prompt tokens (trim history, retrieved text or examples), put text that requests share first so the prefix cache can serve it{compute}. Prefill is compute-bound, so memory tricks do not help it.",
        caveat: "Long prompts may be what the product needs; then the objective, not the deployment, is what to revisit.",
    },
    fire: speed_up_prefill,
};

/// Prefill is most of a time to first token that misses.
fn speed_up_prefill(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let s = ctx.summary;
    let (queue_share, prefill_share, _) = i.ttft_shares()?;
    if !ctx.slo_in_doubt(SloId::TtftP95) || prefill_share < PREFILL_SHARE_FOR_PREFILL {
        return None;
    }
    let levers = i.allowed(SPEED_UP_PREFILL.levers);
    let compute = levers.contains(&up(Knob::TensorParallel));
    let mut f = Fired::new(
        levers,
        i.doubtful(&[SloId::TtftP95], prefill_share),
        vec![
            ("share", format!("{:.0} %", 100.0 * prefill_share)),
            (
                "prompt",
                s.workload
                    .avg_prompt_tokens
                    .map_or("?".into(), |p| num(p.round())),
            ),
            ("queue", format!("{:.0} %", 100.0 * queue_share)),
            (
                "compute",
                if compute {
                    MORE_PREFILL_COMPUTE.to_string()
                } else {
                    String::new()
                },
            ),
        ],
        Confidence::Medium,
    );
    f.evidence = vec![
        ctx.ev(
            "prefill (mean)",
            s.latency.prefill_ms,
            "ms",
            &[Signal::PrefillTime],
        ),
        ctx.ev(
            "average prompt",
            s.workload.avg_prompt_tokens,
            "tokens",
            &[Signal::RequestPromptTokens],
        ),
        ctx.ev_prefix_hit_rate(s.efficiency.prefix_cache_hit_pct),
    ];
    Some(f)
}
