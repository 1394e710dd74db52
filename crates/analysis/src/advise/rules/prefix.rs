//! Rules on the prefix cache, judged only against the shared prefix the
//! user states (prompt text is not in `/metrics`, so a low hit rate alone
//! cannot tell prompts that share little text from a prefix that is not
//! cached) or against caching that is off.

use vllm_lens_catalog::Signal;

use crate::advise::levers::{Knob, down, up};
use crate::advise::rules::rule::{Fired, In, Rule, Words};
use crate::ids::{Addresses as A, FindingId, RecId, SloId};
use crate::measure::thresholds::GUIDE_PREFIX_HIT_PCT;
use crate::model::{Confidence, SloStatus};
use crate::text::num;

/// What prefix work addresses: half of prefill's share of a TTFT in doubt,
/// and efficiency.
fn targets(i: &In<'_>) -> Vec<(A, f64)> {
    let (_, prefill_share, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    [
        i.doubtful(&[SloId::TtftP95], prefill_share * 0.5),
        vec![(A::Efficiency, 1.0)],
    ]
    .concat()
}

pub(super) const SHRINK_BLOCK_SIZE: Rule = Rule {
    id: RecId::new("shrink_block_size"),
    levers: &[down(Knob::BlockSize)],
    addresses: &[A::TtftP95, A::Efficiency],
    investigation: false,
    words: Words {
        title: "Make the shared prefix cacheable: smaller KV blocks",
        why: "The shared prefix ({shared} tokens) is shorter than one KV block ({block} tokens), and the prefix cache only reuses whole blocks, so no prompt ever reuses it.",
        action: "Start vLLM with a smaller --block-size (16 on GPUs; the CPU backend defaults to 128), or lengthen the shared part of the prompt to a multiple of the block size.",
        caveat: "Smaller blocks cost a little more bookkeeping per token; on the CPU backend the block size also affects the attention kernels' speed.",
    },
    fire: shrink_block_size,
};

/// The stated shared prefix is shorter than one block: never reused.
fn shrink_block_size(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let pc = &ctx.capacity.prefix;
    let (shared, block) = (pc.shared_prefix_tokens?, pc.block_size?);
    // A hit rate above what the statement allows says prompts share more:
    // the statement, not the block size, is what is wrong.
    if !pc.shorter_than_a_block || pc.exceeded {
        return None;
    }
    let mut f = Fired::new(
        vec![down(Knob::BlockSize)],
        targets(i),
        vec![
            ("shared", format!("{shared:.0}")),
            ("block", format!("{block:.0}")),
        ],
        Confidence::High,
    );
    f.evidence = vec![
        ctx.ev("shared prefix (stated)", Some(shared), "tokens", &[]),
        ctx.ev("block size", Some(block), "tokens", &[]),
        ctx.ev_prefix_hit_rate(pc.hit_pct),
    ];
    Some(f)
}

pub(super) const STANDARDISE_PREFIX: Rule = Rule {
    id: RecId::new("standardise_prompt_prefix"),
    levers: &[up(Knob::PromptPrefixOrder)],
    addresses: &[A::TtftP95, A::Efficiency],
    investigation: false,
    words: Words {
        title: "Standardise the prompt prefix",
        why: "Only {hit} of prompt tokens hit the prefix cache, against {against}. {gain}",
        action: "Put the fixed part of the prompt (system prompt, tool definitions, examples) first and keep it byte-identical across requests; move timestamps, user names and retrieved text after it.",
        caveat: "Prompt text is not in /metrics: if prompts genuinely share little text, or the shared part is shorter than one KV block, no ordering will raise the hit rate.",
    },
    fire: standardise_prefix,
};

/// The hit rate stays well under what the stated prefix allows; or, on a
/// healthy capture whose prefix is not stated, under the guide's benchmark
/// with prompts long enough to share whole blocks.
fn standardise_prefix(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let pc = &ctx.capacity.prefix;
    let hit = pc.hit_pct?;
    let prompt = ctx
        .summary
        .workload
        .avg_prompt_tokens
        .filter(|p| *p > 0.0)?;
    let (target, against, confidence) = match (pc.shared_prefix_tokens, pc.ceiling_pct) {
        (Some(shared), Some(ceiling)) => {
            if pc.shorter_than_a_block || hit >= 0.7 * ceiling {
                return None;
            }
            (
                ceiling,
                format!(
                    "the {ceiling:.0} % the {shared:.0}-token shared prefix allows in whole blocks: the shared text is not byte-identical across requests, or not first"
                ),
                Confidence::Medium,
            )
        }
        (Some(_), None) => return None,
        (None, _) => {
            let healthy = ctx.slo.iter().all(|s| s.status != SloStatus::Fail);
            let blocks = pc.block_size.is_some_and(|b| prompt >= 2.0 * b);
            if !healthy
                || !blocks
                || ctx.config.prefix_caching == Some(false)
                || hit >= 0.8 * GUIDE_PREFIX_HIT_PCT
            {
                return None;
            }
            (
                GUIDE_PREFIX_HIT_PCT,
                format!(
                    "the ~{GUIDE_PREFIX_HIT_PCT:.0} % a deployment with a standard prompt prefix reaches (the tuning guide's benchmark, not a measurement of these prompts: give --shared-prefix-tokens to judge against what they share)"
                ),
                Confidence::Low,
            )
        }
    };
    let per_request = (target - hit) / 100.0 * prompt;
    let per_sec = ctx
        .summary
        .efficiency
        .prompt_tokens_per_sec
        .map(|r| (target - hit) / 100.0 * r);
    let gain = format!(
        "Reaching it would skip ~{} more prefill tokens per request ({:.0} % of the mean prompt of {} tokens){}.",
        num(per_request.round()),
        target - hit,
        num(prompt.round()),
        per_sec.map_or(String::new(), |r| format!(
            ", ~{} tokens/s less prefill at this load",
            num(r.round())
        ))
    );
    let mut f = Fired::new(
        vec![up(Knob::PromptPrefixOrder)],
        targets(i),
        vec![
            ("hit", format!("{hit:.0} %")),
            ("against", against),
            ("gain", gain),
        ],
        confidence,
    );
    f.evidence = vec![
        ctx.ev_prefix_hit_rate(Some(hit)),
        ctx.ev(
            if pc.shared_prefix_tokens.is_some() {
                "ceiling from the shared prefix"
            } else {
                "the tuning guide's benchmark"
            },
            Some(target),
            "%",
            &[],
        ),
        ctx.ev(
            "prefill tokens saved per request",
            Some(per_request.round()),
            "tokens",
            &[Signal::RequestPromptTokens],
        ),
    ];
    Some(f)
}

pub(super) const ENABLE_PREFIX_CACHING: Rule = Rule {
    id: RecId::new("enable_prefix_caching"),
    levers: &[up(Knob::PrefixCaching)],
    addresses: &[
        A::TtftP95,
        A::QueueAtConcurrency,
        A::Capacity,
        A::Efficiency,
    ],
    investigation: false,
    words: Words {
        title: "Turn prefix caching on",
        why: "Prefix caching is off ({off}), so every prompt is computed in full, the text requests share included. {shared}{budget}",
        action: "Start vLLM with --enable-prefix-caching (the V1 engine's default); requests that share a prefix then skip that part of prefill. Capture again and read the prefix-cache hit rate.",
        caveat: "If prompts share no text, caching changes nothing; it costs almost nothing either way.",
    },
    fire: enable_prefix_caching,
};

/// The smallest prompt may be a shared prefix only when it is at least
/// this many tokens.
const FLOOR_MIN_TOKENS: f64 = 128.0;
/// ... and at least this share of the mean prompt.
const FLOOR_MIN_SHARE: f64 = 0.5;

/// What prompts share at their start, and how we know.
struct Shared {
    tokens: f64,
    /// The user stated it (`--shared-prefix-tokens`).
    stated: bool,
    /// In words, with its evidence.
    words: String,
}

/// The shared prefix: as the user states it, else the floor every prompt
/// stays above when that floor is long and most of the mean prompt (a
/// system prompt or a template usually is). Prefix-cache counters cannot
/// say: with caching off they count nothing.
fn shared_prefix(i: &In<'_>) -> Option<Shared> {
    let ctx = i.ctx;
    let prompt = ctx
        .summary
        .workload
        .avg_prompt_tokens
        .filter(|p| *p > 0.0)?;
    if let Some(sh) = ctx.settings.shared_prefix_tokens.filter(|s| *s > 0.0) {
        return Some(Shared {
            tokens: sh.min(prompt),
            stated: true,
            words: format!(
                "Prompts share their first {} tokens (--shared-prefix-tokens), {:.0} % of the mean prompt of {} tokens.",
                num(sh),
                100.0 * (sh / prompt).min(1.0),
                num(prompt.round())
            ),
        });
    }
    let h = ctx.hists.get(&Signal::RequestPromptTokens)?;
    let norm = h.buckets.normalised()?;
    // The lowest bucket with prompts: every prompt is above its lower bound.
    let mut lo = 0.0;
    let floor = norm.iter().find_map(|(le, c)| {
        let r = (*c > 0.0).then_some(lo);
        lo = *le;
        r
    })?;
    if floor < FLOOR_MIN_TOKENS || floor < FLOOR_MIN_SHARE * prompt {
        return None;
    }
    Some(Shared {
        tokens: floor,
        stated: false,
        words: format!(
            "Every prompt has more than {} tokens (vllm:request_prompt_tokens: none in the buckets up to {}), {:.0} % of the mean prompt of {} tokens: a floor like this is usually a system prompt or template every request repeats (give --shared-prefix-tokens to state it).",
            num(floor),
            num(floor),
            100.0 * floor / prompt,
            num(prompt.round())
        ),
    })
}

/// Prefix caching is off as the server states it (or V0's lifetime gauge
/// reads 0): with a long shared prefix, it saves that share of prefill, and
/// of the step's token budget where that binds.
fn enable_prefix_caching(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let stated_off = ctx.config.prefix_caching == Some(false);
    if !(stated_off || i.fired(FindingId::EfficiencyPrefixOff)) || i.state.prefix_caching_on {
        return None;
    }
    let prefill_heavy = ctx
        .summary
        .workload
        .gen_to_prompt_ratio
        .is_some_and(|r| r < crate::measure::thresholds::PREFILL_HEAVY_RATIO);
    let shared = shared_prefix(i);
    if shared.is_none() && !(ctx.slo_in_doubt(SloId::TtftP95) || prefill_heavy) {
        return None;
    }
    let prompt = ctx.summary.workload.avg_prompt_tokens.unwrap_or(0.0);
    let saved = match &shared {
        Some(s) if prompt > 0.0 => (s.tokens / prompt).min(1.0),
        _ => 0.2,
    };
    let budget = i.state.budget_binds;
    let (queue_share, prefill_share, _) = i.ttft_shares().unwrap_or((0.0, 1.0, 0.0));
    // Prefill it saves; where the token budget binds, the queue for it too.
    let ttft_moved = if budget {
        (queue_share + prefill_share) * saved
    } else {
        prefill_share * saved
    };
    let mut f = Fired::new(
        vec![up(Knob::PrefixCaching)],
        [
            i.doubtful(&[SloId::TtftP95], ttft_moved.max(0.1)),
            if budget {
                [
                    i.doubtful(&[SloId::QueueAtConcurrency], saved),
                    vec![(A::Capacity, saved)],
                ]
                .concat()
            } else {
                Vec::new()
            },
            vec![(A::Efficiency, 1.0)],
        ]
        .concat(),
        vec![
            (
                "off",
                if stated_off {
                    "vllm:cache_config_info or the command line: enable_prefix_caching=False".into()
                } else {
                    "the lifetime hit-rate gauge reads 0".to_string()
                },
            ),
            (
                "shared",
                shared.as_ref().map_or(String::new(), |s| s.words.clone()),
            ),
            (
                "budget",
                if budget && shared.is_some() {
                    format!(
                        " The step's token budget is what requests wait for here, so the {:.0} % of prompt tokens caching would skip also frees that budget.",
                        100.0 * saved
                    )
                } else {
                    String::new()
                },
            ),
        ],
        match &shared {
            Some(s) if s.stated => Confidence::High,
            Some(_) => Confidence::Medium,
            None => Confidence::Low,
        },
    );
    f.evidence = vec![
        ctx.ev(
            "shared prefix",
            shared.as_ref().map(|s| s.tokens),
            "tokens",
            &[Signal::RequestPromptTokens],
        ),
        ctx.ev(
            "mean prompt",
            ctx.summary.workload.avg_prompt_tokens,
            "tokens",
            &[Signal::RequestPromptTokens],
        ),
    ];
    Some(f)
}
