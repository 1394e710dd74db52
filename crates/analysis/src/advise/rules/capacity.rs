//! Rules on admission and capacity: the sequence cap, preemptions,
//! replicas and autoscaling.

use vllm_lens_catalog::Signal;

use crate::advise::levers::{Knob, down, up};
use crate::advise::rules::rule::{Fired, In, Rule, Words, pct};
use crate::advise::snippets;
use crate::ids::{Addresses as A, RecId, SloId};
use crate::measure::thresholds::*;
use crate::model::{BindingLimit, Confidence, SloStatus};
use crate::text::num;

const MORE_KV_ROOM: &str = "Give the KV cache more room: {options}.";
const LOWER_MAX_NUM_SEQS: &str = " Or lower --max-num-seqs so admitted requests fit the pool: the wait moves from recomputation to the queue, which the queue and TTFT objectives can afford here.";
const LOWER_MAX_NUM_SEQS_ALONE: &str = "Lower --max-num-seqs so admitted requests fit the pool: the wait moves from recomputation to the queue, which the queue and TTFT objectives can afford here.";
const PRESSURE_QUEUED_ONLY: &str = "Requests already queued from {start} in flight.";
const QUEUE_SHARE_OF_TTFT: &str =
    "; queueing is {share} of the mean time to first token where TTFT misses its objective";
const PRESSURE_QUEUED: &str = "Requests already queued from {start} in flight: the queue objective ({n}) holds, and load above that per replica waits.";
const PRESSURE_KV: &str =
    "The KV cache reached {kv}: near full, new requests wait and running ones are preempted.";
pub(super) const RAISE_MAX_NUM_SEQS: Rule = Rule {
    id: RecId::new("raise_max_num_seqs"),
    levers: &[up(Knob::MaxNumSeqs)],
    addresses: &[A::QueueAtConcurrency, A::TtftP95],
    investigation: false,
    words: Words {
        title: "Raise --max-num-seqs: the server admits fewer requests than the objective",
        why: "At most {cap} requests ran at once while others waited, fewer than the {n} the queue objective names, and queueing began at {start} in flight. The KV cache peaked at {kv}, so memory is not what caps admission: the engine's own limit (--max-num-seqs) is.",
        action: "Start vLLM with --max-num-seqs of at least {target} (the KV cache peaked at {kv}, so it has room); capture again and check that queueing now starts above {n} in flight.",
        caveat: "A higher cap lets more requests share each engine step, so each one's inter-token latency grows a little; watch the inter-token objective.",
    },
    fire: raise_max_num_seqs,
};

/// The admission cap is a setting below the objective (`--max-num-seqs`
/// binds: `capacity.limits`), with room in the KV cache.
fn raise_max_num_seqs(i: &In<'_>) -> Option<Fired> {
    let (ctx, q) = (i.ctx, i.ctx.queue);
    let n = ctx.settings.slo.queue_concurrency;
    let kv = ctx.summary.efficiency.kv_cache_pct;
    let (cap, start) = (q.admission_cap()?, q.queueing_starts_at()?);
    if cap >= n
        || kv.is_none_or(|k| k >= KV_WARN_PCT)
        || i.state.preempting
        || !ctx
            .capacity
            .binding_limits
            .contains(&BindingLimit::MaxNumSeqs)
    {
        return None;
    }
    let (queue_share, _, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let mut f = Fired::new(
        vec![up(Knob::MaxNumSeqs)],
        [
            i.doubtful(&[SloId::QueueAtConcurrency], 1.0),
            i.doubtful(&[SloId::TtftP95], queue_share),
        ]
        .concat(),
        vec![
            ("cap", num(cap)),
            ("start", num(start)),
            ("target", num(n.max(cap + 1.0))),
            ("kv", pct(kv)),
            ("n", num(n)),
        ],
        Confidence::High,
    );
    f.evidence = vec![
        ctx.ev_admission_cap(Some(cap)),
        ctx.ev_queueing_starts(Some(start)),
        ctx.ev_kv_max(kv),
    ];
    f.snippets
        .extend(snippets::queue_alert(ctx, i.checker, i.model));
    Some(f)
}

pub(super) const RAISE_MAX_NUM_BATCHED_TOKENS: Rule = Rule {
    id: RecId::new("raise_max_num_batched_tokens"),
    levers: &[up(Knob::MaxNumBatchedTokens)],
    addresses: &[A::QueueAtConcurrency, A::TtftP95, A::Capacity],
    investigation: false,
    words: Words {
        title: "Raise --max-num-batched-tokens: requests wait for the step's token budget",
        why: "{evidence}. {budget} With a mean prompt of {prompt} tokens, prefill is most of what the budget carries{chunks}.",
        action: "Start vLLM with --max-num-batched-tokens of at least {target}, so a mean prompt prefills in one step{check}; capture again and check that the waiting requests (vllm:num_requests_waiting_by_reason{reason=\"capacity\"}) and the queue time fall.",
        caveat: "Larger steps cost inter-token latency: a decode step that shares the engine with a {target}-token prefill takes longer (inter-token p95 now {itl}). If that objective tightens, lower it again or separate prefill from decode.",
    },
    fire: raise_max_num_batched_tokens,
};

/// The step's token budget binds (`capacity.limits`): requests wait for
/// it below the sequence cap with the KV cache far from full.
fn raise_max_num_batched_tokens(i: &In<'_>) -> Option<Fired> {
    let (ctx, c) = (i.ctx, i.ctx.capacity);
    let check = c
        .limits
        .iter()
        .find(|l| l.limit == BindingLimit::TokenBudget && l.binds)?;
    let prompt = ctx
        .summary
        .workload
        .avg_prompt_tokens
        .filter(|p| *p > 0.0)?;
    let budget = ctx.config.max_num_batched_tokens.or_else(|| {
        ctx.config
            .step_tokens_top
            .filter(|(_, hi)| hi.is_finite())
            .map(|(_, hi)| hi)
    });
    let target = budget
        .map_or(prompt, |b| (2.0 * b).max(prompt))
        .log2()
        .ceil()
        .exp2();
    let (queue_share, _, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let mut f = Fired::new(
        vec![up(Knob::MaxNumBatchedTokens)],
        [
            i.doubtful(&[SloId::QueueAtConcurrency], 1.0),
            i.doubtful(&[SloId::TtftP95], queue_share),
            vec![(A::Capacity, 1.0)],
        ]
        .concat(),
        vec![
            ("evidence", crate::text::capitalise(&check.evidence)),
            (
                "budget",
                match ctx.config.max_num_batched_tokens {
                    Some(b) => format!("The budget is --max-num-batched-tokens {}.", num(b)),
                    None => "The bundle does not state --max-num-batched-tokens.".into(),
                },
            ),
            ("prompt", num(prompt.round())),
            (
                "chunks",
                budget.map_or(String::new(), |b| {
                    format!(
                        ": each prompt takes about {} steps of it",
                        num((prompt / b).ceil())
                    )
                }),
            ),
            ("target", num(target)),
            (
                "check",
                if budget.is_none() {
                    " (read the current value first: vLLM's default depends on the release and the hardware)".into()
                } else {
                    String::new()
                },
            ),
            (
                "itl",
                ctx.summary
                    .latency
                    .itl_p95_ms
                    .map_or("missing".into(), |v| format!("{} ms", num(v.round()))),
            ),
        ],
        if ctx.config.max_num_batched_tokens.is_some() {
            Confidence::High
        } else {
            Confidence::Medium
        },
    );
    f.evidence = vec![
        ctx.ev(
            "token budget per step",
            budget,
            "tokens",
            &[Signal::IterationTokens],
        ),
        ctx.ev_admission_cap(c.admission_cap),
        ctx.ev_kv_max(ctx.summary.efficiency.kv_cache_pct),
        ctx.ev(
            "mean prompt",
            Some(prompt),
            "tokens",
            &[Signal::RequestPromptTokens],
        ),
    ];
    Some(f)
}

pub(super) const REMOVE_BLOCKS_OVERRIDE: Rule = Rule {
    id: RecId::new("remove_num_gpu_blocks_override"),
    levers: &[down(Knob::BlocksOverride)],
    addresses: &[
        A::QueueAtConcurrency,
        A::TtftP95,
        A::ItlP95,
        A::Capacity,
        A::Efficiency,
    ],
    investigation: false,
    words: Words {
        title: "Remove --num-gpu-blocks-override: it fixes the KV pool that runs out",
        why: "vllm:cache_config_info shows num_gpu_blocks_override={blocks}: the KV pool has that many blocks whatever the memory, and it {pressure}.",
        action: "Start vLLM without --num-gpu-blocks-override so the pool is sized from --gpu-memory-utilization; capture again before any other memory change (more memory does nothing while the override holds).",
        caveat: "The override is sometimes set on purpose (to share a GPU, or to reproduce a test); if so, keep it and treat the pool as fixed.",
    },
    fire: remove_blocks_override,
};

/// `num_gpu_blocks_override` fixes a KV pool that runs out (or nears it
/// while requests queue): remove it before any memory advice.
fn remove_blocks_override(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let kv = ctx.summary.efficiency.kv_cache_pct;
    let near = kv.is_some_and(|k| k >= KV_WARN_PCT) && i.state.queued;
    if !(i.state.kv_binds() || near) {
        return None;
    }
    let blocks = ctx.config.blocks_override.clone()?;
    let (queue_share, _, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let pressure = if i.state.preempting {
        format!(
            "preempted running requests ({} per minute) with the KV cache at up to {}",
            num(ctx.summary.efficiency.preemptions_per_min.unwrap_or(0.0)),
            pct(kv)
        )
    } else {
        format!("reached {} while requests queued", pct(kv))
    };
    let mut f = Fired::new(
        vec![down(Knob::BlocksOverride)],
        [
            i.doubtful(&[SloId::QueueAtConcurrency], 1.0),
            i.doubtful(&[SloId::TtftP95], queue_share.max(0.5)),
            i.doubtful(&[SloId::ItlP95], 0.5),
            vec![(A::Capacity, 1.0), (A::Efficiency, 1.0)],
        ]
        .concat(),
        vec![("blocks", blocks), ("pressure", pressure)],
        Confidence::High,
    );
    f.evidence = vec![
        ctx.ev_kv_max(kv),
        ctx.ev(
            "preemptions",
            ctx.summary.efficiency.preemptions_per_min,
            "per min",
            &[Signal::Preemptions],
        ),
    ];
    Some(f)
}

pub(super) const TUNE_PREEMPTIONS: Rule = Rule {
    id: RecId::new("tune_for_preemptions"),
    levers: &[
        up(Knob::KvCacheMemory),
        down(Knob::KvCacheBytes),
        down(Knob::WeightBytes),
        up(Knob::TensorParallel),
        down(Knob::MaxNumSeqs),
    ],
    addresses: &[A::QueueAtConcurrency, A::ItlP95, A::TtftP95, A::Efficiency],
    investigation: false,
    words: Words {
        title: "Stop the preemptions: the KV cache runs out",
        why: "{preemptions} preemptions per minute with the KV cache at up to {kv}: running requests are evicted and recomputed, and new ones wait for blocks.",
        action: "{room}{lower}",
        caveat: "Each lever costs something: memory headroom, accuracy, or hardware.",
    },
    fire: tune_preemptions,
};

/// Preemptions: the KV cache runs out. Each way to give it room is offered
/// where the capture allows it.
fn tune_preemptions(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let e = &ctx.summary.efficiency;
    let per_min = e.preemptions_per_min.filter(|p| *p > 0.0)?;
    let (queue_share, _, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let levers = i.allowed(TUNE_PREEMPTIONS.levers);
    let mut options: Vec<String> = Vec::new();
    for l in &levers {
        options.push(match l.knob {
            Knob::KvCacheMemory => format!("a higher {}", l.knob.setting(ctx.platform)),
            Knob::KvCacheBytes => "an FP8 KV cache (--kv-cache-dtype fp8)".into(),
            Knob::WeightBytes => "FP8 weights".into(),
            Knob::TensorParallel => "another GPU (tensor parallelism)".into(),
            _ => continue,
        });
    }
    let lower = levers.iter().any(|l| l.knob == Knob::MaxNumSeqs);
    let mut f = Fired::new(
        if options.is_empty() && !lower {
            TUNE_PREEMPTIONS.levers[..1].to_vec()
        } else {
            levers
        },
        [
            i.doubtful(&[SloId::QueueAtConcurrency, SloId::ItlP95], 0.5),
            i.doubtful(&[SloId::TtftP95], queue_share.max(0.5)),
            vec![(A::Efficiency, 1.0)],
        ]
        .concat(),
        vec![
            ("preemptions", num(per_min)),
            ("kv", pct(e.kv_cache_pct)),
            (
                "room",
                if options.is_empty() {
                    String::new()
                } else {
                    crate::text::fill(MORE_KV_ROOM, &[("options", crate::text::list_or(&options))])
                },
            ),
            (
                "lower",
                match (lower, options.is_empty()) {
                    (false, _) => String::new(),
                    (true, false) => LOWER_MAX_NUM_SEQS.to_string(),
                    (true, true) => LOWER_MAX_NUM_SEQS_ALONE.to_string(),
                },
            ),
        ],
        Confidence::High,
    );
    f.evidence = vec![
        ctx.ev(
            "preemptions",
            e.preemptions_per_min,
            "per min",
            &[Signal::Preemptions],
        ),
        ctx.ev_kv_max(e.kv_cache_pct),
    ];
    f.snippets
        .extend(snippets::kv_alert(ctx, i.checker, i.model));
    Some(f)
}

pub(super) const ADD_REPLICAS: Rule = Rule {
    id: RecId::new("move_to_kserve"),
    levers: &[up(Knob::Replicas)],
    addresses: &[A::QueueAtConcurrency, A::TtftP95, A::Capacity],
    investigation: false,
    words: Words {
        title: "Add replicas: one server cannot admit the load",
        why: "Requests queued from {start} in flight, with at most {cap} running at once{ttft}.",
        action: "Run more replicas behind an autoscaler (KServe, or a Deployment with the KEDA trigger this recommendation carries) that adds one before requests queue.",
        caveat: "If the peak is short and predictable, scheduled scaling or client-side rate limiting may be cheaper.",
    },
    fire: add_replicas,
};

/// True when queueing costs an objective and no setting on this server
/// admits the load instead (a sequence cap below the objective with room
/// in the KV cache is raised first).
fn capacity_fails(i: &In<'_>) -> bool {
    let ctx = i.ctx;
    let (queue_share, _, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    raise_max_num_seqs(i).is_none()
        && (ctx.slo(SloId::QueueAtConcurrency) == Some(SloStatus::Fail)
            || (ctx.slo_in_doubt(SloId::TtftP95)
                && queue_share >= QUEUE_SHARE_FOR_REPLICAS
                && ctx.queue.queueing_starts_at().is_some()))
}

/// Queueing that an objective pays for: add replicas.
fn add_replicas(i: &In<'_>) -> Option<Fired> {
    if !capacity_fails(i) {
        return None;
    }
    let (ctx, q) = (i.ctx, i.ctx.queue);
    let shares = i.ttft_shares();
    let (queue_share, _, _) = shares.unwrap_or((1.0, 0.0, 0.0));
    let queued = q.queueing_starts_at();
    let mut f = Fired::new(
        vec![up(Knob::Replicas)],
        [
            i.doubtful(&[SloId::QueueAtConcurrency], 1.0),
            i.doubtful(&[SloId::TtftP95], queue_share),
            vec![(A::Capacity, 1.0)],
        ]
        .concat(),
        vec![
            ("start", queued.map_or("?".into(), num)),
            (
                "cap",
                q.admission_cap().map_or("an unknown number of".into(), num),
            ),
            (
                "ttft",
                if ctx.slo_in_doubt(SloId::TtftP95) && shares.is_some() {
                    crate::text::fill(
                        QUEUE_SHARE_OF_TTFT,
                        &[("share", format!("{:.0} %", 100.0 * queue_share))],
                    )
                } else {
                    String::new()
                },
            ),
        ],
        Confidence::Medium,
    );
    f.evidence = vec![
        ctx.ev_queueing_starts(queued),
        ctx.ev_admission_cap(q.admission_cap()),
    ];
    f.snippets
        .extend(snippets::in_flight_trigger(ctx, i.checker, i.model));
    if ctx
        .summary
        .efficiency
        .kv_cache_pct
        .is_some_and(|k| k >= KV_WARN_PCT)
    {
        f.snippets
            .extend(snippets::kv_trigger(ctx, i.checker, i.model));
    }
    Some(f)
}

pub(super) const AUTOSCALE: Rule = Rule {
    id: RecId::new("set_autoscaling_trigger"),
    levers: &[up(Knob::Replicas)],
    addresses: &[A::Capacity],
    investigation: false,
    words: Words {
        title: "Autoscale on requests in flight, before they queue",
        why: "{pressure}",
        action: "Add the KEDA trigger this recommendation carries (in the HTML report and the JSON): it keeps about {target} requests in flight per replica ({why}), and waits five minutes before scaling down so the replica count does not flap. On a host without Kubernetes, the same query and target drive any autoscaler or a capacity alert.",
        caveat: "A new replica takes minutes to load the model; with fast start-up a higher target wastes less.",
    },
    fire: autoscale,
};

/// Pressure that no objective pays for yet: scale before it does.
fn autoscale(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let queued = ctx.queue.queueing_starts_at();
    let kv = ctx.summary.efficiency.kv_cache_pct;
    // A server that can still admit more by a setting is tuned first:
    // replicas come after the levers one server still has.
    if capacity_fails(i) || !i.state.pressure() || raise_max_num_seqs(i).is_some() {
        return None;
    }
    let n = ctx.settings.slo.queue_concurrency;
    let queue_holds = ctx.slo(SloId::QueueAtConcurrency) == Some(SloStatus::Pass);
    let target = crate::judge::ctx::in_flight_target(ctx);
    let pressure = match queued {
        Some(start) if queue_holds => {
            crate::text::fill(PRESSURE_QUEUED, &[("start", num(start)), ("n", num(n))])
        }
        Some(start) => crate::text::fill(PRESSURE_QUEUED_ONLY, &[("start", num(start))]),
        None => crate::text::fill(PRESSURE_KV, &[("kv", pct(kv))]),
    };
    let mut f = Fired::new(
        vec![up(Knob::Replicas)],
        vec![(A::Capacity, 1.0)],
        vec![
            ("pressure", pressure),
            ("target", num(target.per_replica)),
            ("why", target.why.clone()),
        ],
        Confidence::Medium,
    );
    if queued.is_some() && queue_holds {
        f.claims_hold.push(SloId::QueueAtConcurrency);
    }
    f.evidence = vec![
        ctx.ev_queueing_starts(queued),
        ctx.ev_admission_cap(ctx.queue.admission_cap()),
        ctx.ev_kv_max(kv),
    ];
    f.snippets
        .extend(snippets::in_flight_trigger(ctx, i.checker, i.model));
    Some(f)
}
