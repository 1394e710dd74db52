//! Rules on the prefix cache, judged only against the shared prefix the
//! user states (prompt text is not in `/metrics`, so a low hit rate alone
//! cannot tell prompts that share little text from a prefix that is not
//! cached) or against caching that is off.

use vllm_lens_catalog::Signal;

use super::{Fired, In, Rule};
use crate::ids::{Addresses as A, FindingId, RecId, SloId};
use crate::levers::{Knob, down, up};
use crate::model::Confidence;

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
    id: RecId::ShrinkBlockSize,
    levers: &[down(Knob::BlockSize)],
    addresses: &[A::TtftP95, A::Efficiency],
    investigation: false,
    fire: shrink_block_size,
};

/// The stated shared prefix is shorter than one block: never reused.
fn shrink_block_size(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let pc = &ctx.capacity.prefix;
    let (shared, block) = (pc.shared_prefix_tokens?, pc.block_size?);
    if !pc.shorter_than_a_block {
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
    id: RecId::StandardisePromptPrefix,
    levers: &[up(Knob::PromptPrefixOrder)],
    addresses: &[A::TtftP95, A::Efficiency],
    investigation: false,
    fire: standardise_prefix,
};

/// The hit rate stays well under what the stated prefix allows.
fn standardise_prefix(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let pc = &ctx.capacity.prefix;
    let shared = pc.shared_prefix_tokens?;
    let (hit, ceiling) = (pc.hit_pct?, pc.ceiling_pct?);
    if pc.shorter_than_a_block || hit >= 0.7 * ceiling {
        return None;
    }
    let mut f = Fired::new(
        vec![up(Knob::PromptPrefixOrder)],
        targets(i),
        vec![
            ("hit", format!("{hit:.0} %")),
            ("ceiling", format!("{ceiling:.0} %")),
            ("shared", format!("{shared:.0}")),
        ],
        Confidence::Medium,
    );
    f.evidence = vec![
        ctx.ev_prefix_hit_rate(Some(hit)),
        ctx.ev("ceiling from the shared prefix", Some(ceiling), "%", &[]),
    ];
    Some(f)
}

pub(super) const ENABLE_PREFIX_CACHING: Rule = Rule {
    id: RecId::EnablePrefixCaching,
    levers: &[up(Knob::PrefixCaching)],
    addresses: &[A::TtftP95, A::Efficiency],
    investigation: false,
    fire: enable_prefix_caching,
};

/// Prefix caching is off while time to first token is in doubt or prompts
/// dominate the tokens.
fn enable_prefix_caching(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let prefill_heavy = ctx
        .summary
        .workload
        .gen_to_prompt_ratio
        .is_some_and(|r| r < crate::thresholds::PREFILL_HEAVY_RATIO);
    if !i.fired(FindingId::EfficiencyPrefixOff)
        || !(ctx.slo_in_doubt(SloId::TtftP95) || prefill_heavy)
    {
        return None;
    }
    let (_, prefill_share, _) = i.ttft_shares().unwrap_or((1.0, 0.0, 0.0));
    let mut f = Fired::new(
        vec![up(Knob::PrefixCaching)],
        [
            i.doubtful(&[SloId::TtftP95], prefill_share.max(0.2)),
            vec![(A::Efficiency, 1.0)],
        ]
        .concat(),
        Vec::new(),
        Confidence::Medium,
    );
    f.evidence = vec![ctx.ev(
        "lifetime hit rate gauge",
        ctx.prefix_lifetime,
        "",
        &[Signal::PrefixHitRateLifetime],
    )];
    Some(f)
}
