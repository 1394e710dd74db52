//! Recommendations as a table of typed rules ([`RULES`](crate::rules::RULES)).
//!
//! Each rule is one named function that fires only when its own evidence
//! is in the capture, and declares:
//!
//! - its **levers** ([`crate::advise::levers`]): the settings it turns and which
//!   way; a fired rule turns some of them;
//! - what it may **address**: objectives (only those that fail or cannot be
//!   told) or waste and risk (capacity, efficiency, cost, reliability,
//!   quality), each with the share of it the rule can move;
//! - whether it is an **investigation** (read logs, find a cause) rather
//!   than a change: an investigation never outranks a change on a failing
//!   objective.
//!
//! Then, for every fired rule: a lever the capture forbids (its state,
//! its platform, its configuration: [`State::blocks`](crate::levers::State::blocks)) is
//! dropped, and a rule left without a lever it needs is withheld; a target
//! that passes is dropped, and a rule left without a target is withheld; a
//! rule whose text claims an objective holds that the scorecard does not
//! pass is withheld. Ranking (`rank`) orders the rest by their expected
//! effect on what fails; of two levers on one knob in opposite directions,
//! the lower-ranked rule is withheld. Every withheld rule is listed in the
//! report with its reason.

use crate::advise::levers::{Knob, Lever, State};
use crate::ids::{Addresses as A, SloId};
use crate::judge::ctx::Ctx;
use crate::measure::promql::Checker;
use crate::measure::thresholds::*;
use crate::model::{Analysis, Confidence, Recommendation, SloStatus, Withheld};
pub use rule::Rule;
use rule::{Fired, In};

mod capacity;
mod hardware;
mod latency;
mod outcomes;
mod prefix;
mod rule;

/// The rules, in no particular order (ranking orders what fires).
pub static RULES: &[Rule] = &[
    capacity::RAISE_MAX_NUM_SEQS,
    capacity::RAISE_MAX_NUM_BATCHED_TOKENS,
    capacity::REMOVE_BLOCKS_OVERRIDE,
    capacity::TUNE_PREEMPTIONS,
    capacity::ADD_REPLICAS,
    capacity::AUTOSCALE,
    hardware::INVESTIGATE_GPU_FAULT,
    outcomes::INVESTIGATE_RESTART,
    outcomes::INVESTIGATE_ERROR_BURST,
    outcomes::INVESTIGATE_HTTP_ERRORS,
    outcomes::ALIGN_CLIENT_TIMEOUTS,
    outcomes::RAISE_MAX_TOKENS,
    outcomes::REVISIT_ON_SHAPE_CHANGE,
    latency::SCALE_API_SERVER,
    latency::QUANTIZE,
    latency::STOP_OPTIMISING_PREFILL,
    latency::DISAGGREGATE,
    latency::SPEED_UP_PREFILL,
    prefix::SHRINK_BLOCK_SIZE,
    prefix::STANDARDISE_PREFIX,
    prefix::ENABLE_PREFIX_CACHING,
];

/// How much a target weighs, by its status.
fn weight(ctx: &Ctx<'_>, a: A) -> f64 {
    match a.slo().and_then(|s| ctx.slo(s)) {
        Some(SloStatus::Fail) => WEIGHT_FAILING,
        Some(SloStatus::CannotTell) => WEIGHT_UNDECIDED,
        Some(_) => 0.0,
        None => match a {
            A::Reliability => WEIGHT_RELIABILITY,
            A::Quality => WEIGHT_QUALITY,
            A::Capacity => WEIGHT_CAPACITY,
            A::Efficiency => WEIGHT_EFFICIENCY,
            A::Cost => WEIGHT_COST,
            _ => 0.0,
        },
    }
}

fn confidence_factor(c: Confidence) -> f64 {
    match c {
        Confidence::High => 1.0,
        Confidence::Medium => 0.8,
        Confidence::Low => 0.6,
    }
}

/// What the lever checks read, from the capture.
pub(crate) fn state(ctx: &Ctx<'_>) -> State {
    let mut slo = [None; SloId::ALL.len()];
    for (i, id) in SloId::ALL.iter().enumerate() {
        slo[i] = ctx.slo(*id);
    }
    let e = &ctx.summary.efficiency;
    State {
        slo,
        kv_max: e.kv_cache_pct,
        preempting: e.preemptions_per_min.is_some_and(|p| p > 0.0),
        queued: ctx.queue.queueing_starts_at().is_some(),
        truncated: crate::judge::analyses::workload::truncated(ctx),
        platform: ctx.platform,
        blocks_overridden: ctx.capacity.blocks_overridden,
        prefix_caching_on: ctx.prefix_caching_on(),
        budget_binds: ctx
            .capacity
            .binding_limits
            .contains(&crate::model::BindingLimit::TokenBudget),
    }
}

/// Why a fired rule may not be shown, if anything forbids it.
fn check(f: &mut Fired, rule: &Rule, i: &In<'_>) -> Option<String> {
    debug_assert!(f.levers.iter().all(|l| rule.levers.contains(l)));
    debug_assert!(f.effect.iter().all(|(a, _)| rule.addresses.contains(a)));
    if let Some((l, (code, why))) = f
        .levers
        .iter()
        .find_map(|l| i.state.blocks(*l).map(|b| (*l, b)))
    {
        return Some(format!("{code}: {} {}: {why}", l.knob, dir(l)));
    }
    if !rule.levers.is_empty() && f.levers.is_empty() {
        return Some("it turns no lever here".into());
    }
    f.effect
        .retain(|(a, share)| *share > 0.0 && weight(i.ctx, *a) > 0.0);
    if f.effect.is_empty() {
        return Some("R1: nothing it addresses is in doubt here".into());
    }
    if let Some(s) = f
        .claims_hold
        .iter()
        .find(|s| i.ctx.slo(**s) != Some(SloStatus::Pass))
    {
        return Some(format!(
            "R2: its words say {s} holds, and the scorecard does not pass it"
        ));
    }
    None
}

fn dir(l: Lever) -> &'static str {
    match l.direction {
        crate::advise::levers::Direction::Up => "up",
        crate::advise::levers::Direction::Down => "down",
    }
}

/// Ranks fired rules: changes that address a failing objective first, then
/// investigations that address one (a burst or a restart never outranks
/// the change that fixes a failing objective), then the rest; within each,
/// more replicas after every lever one server still has, then by the
/// expected effect (each target's weight × the share moved ×
/// confidence), then by the rule's place in [`RULES`].
fn rank(ctx: &Ctx<'_>, fired: &mut [(&Rule, Fired)]) {
    let key = |(rule, f): &(&Rule, Fired)| {
        let on_failing = f
            .effect
            .iter()
            .any(|(a, _)| a.slo().and_then(|s| ctx.slo(s)) == Some(SloStatus::Fail));
        let tier = match (on_failing, rule.investigation) {
            (true, false) => 0u8,
            (true, true) => 1,
            (false, _) => 2,
        };
        let score: f64 = f
            .effect
            .iter()
            .map(|(a, share)| weight(ctx, *a) * share)
            .sum::<f64>()
            * confidence_factor(f.confidence);
        // More replicas come after the levers one server still has.
        let scale_out = !f.levers.is_empty() && f.levers.iter().all(|l| l.knob == Knob::Replicas);
        // The table's order breaks ties: a report does not depend on how
        // ids spell.
        let place = RULES.iter().position(|r| std::ptr::eq(r, *rule));
        (tier, scale_out, -score, place)
    };
    fired.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.cmp(&kb.1))
            .then(ka.2.total_cmp(&kb.2))
            .then(ka.3.cmp(&kb.3))
    });
}

/// Levers that come before others on the same target, whatever the
/// scores: `(lever, the knobs it precedes)`. Prefix caching saves the
/// prefill work a larger budget or more replicas would only buy room for;
/// a KV pool fixed by `--num-gpu-blocks-override` makes every other memory
/// lever moot until it goes.
pub const BEFORE: &[(Lever, &[Knob])] = &[
    (
        crate::advise::levers::up(Knob::PrefixCaching),
        &[
            Knob::MaxNumBatchedTokens,
            Knob::Replicas,
            Knob::Disaggregation,
        ],
    ),
    (
        crate::advise::levers::down(Knob::BlocksOverride),
        &[
            Knob::KvCacheMemory,
            Knob::KvCacheBytes,
            Knob::WeightBytes,
            Knob::TensorParallel,
            Knob::MaxNumSeqs,
            Knob::Replicas,
        ],
    ),
];

/// Moves a rule whose lever [`BEFORE`] puts first ahead of the rules it
/// precedes, where both address a common target.
fn first_things_first(fired: &mut Vec<(&Rule, Fired)>) {
    let precedes = |a: &Fired, b: &Fired| {
        let shared = a
            .effect
            .iter()
            .any(|(x, _)| b.effect.iter().any(|(y, _)| x == y));
        shared
            && BEFORE.iter().any(|(l, knobs)| {
                a.levers.contains(l) && b.levers.iter().any(|m| knobs.contains(&m.knob))
            })
    };
    let mut i = 0;
    while i < fired.len() {
        if let Some(j) = (0..i).find(|&j| precedes(&fired[i].1, &fired[j].1)) {
            let r = fired.remove(i);
            fired.insert(j, r);
        }
        i += 1;
    }
}

/// Fires, checks and ranks every rule: the recommendations, and the rules
/// withheld with their reasons.
pub(crate) fn recommend(
    ctx: &Ctx<'_>,
    analyses: &[Analysis],
    checker: &Checker<'_>,
    model: Option<&str>,
) -> (Vec<Recommendation>, Vec<Withheld>) {
    let i = In {
        ctx,
        analyses,
        checker,
        model,
        state: state(ctx),
    };
    let mut withheld = Vec::new();
    let mut fired: Vec<(&Rule, Fired)> = Vec::new();
    for rule in RULES {
        let Some(mut f) = (rule.fire)(&i) else {
            continue;
        };
        match check(&mut f, rule, &i) {
            Some(reason) => withheld.push(Withheld {
                id: rule.id.clone(),
                levers: f.levers.clone(),
                reason,
            }),
            None => fired.push((rule, f)),
        }
    }
    rank(ctx, &mut fired);
    first_things_first(&mut fired);
    // Opposite levers: the lower-ranked rule gives way.
    let mut kept: Vec<(&Rule, Fired)> = Vec::new();
    for (rule, f) in fired {
        let clash = kept.iter().find_map(|(r, k)| {
            f.levers
                .iter()
                .find(|l| k.levers.iter().any(|m| l.opposes(*m)))
                .map(|l| (r.id.clone(), *l))
        });
        match clash {
            Some((by, l)) => withheld.push(Withheld {
                id: rule.id.clone(),
                levers: f.levers.clone(),
                reason: format!(
                    "R3: it turns {} {}, the opposite of {by}, which ranks higher",
                    l.knob,
                    dir(l)
                ),
            }),
            None => kept.push((rule, f)),
        }
    }
    let recs = kept
        .into_iter()
        .enumerate()
        .map(|(n, (rule, f))| {
            let text = &rule.words;
            let mut effect = f.effect.clone();
            effect.sort_by(|a, b| (weight(ctx, b.0) * b.1).total_cmp(&(weight(ctx, a.0) * a.1)));
            let mut addresses: Vec<A> = Vec::new();
            for (a, _) in effect {
                if !addresses.contains(&a) {
                    addresses.push(a);
                }
            }
            Recommendation {
                id: rule.id.clone(),
                addresses,
                rank: n as u32 + 1,
                title: crate::text::fill(text.title, &f.vars),
                rationale: crate::text::fill(text.why, &f.vars),
                action: crate::text::fill(text.action, &f.vars),
                confidence: f.confidence,
                caveat: crate::text::fill(text.caveat, &f.vars),
                evidence: f.evidence,
                snippets: f.snippets,
                levers: f.levers,
                claims_hold: f.claims_hold,
                predicted: None,
            }
        })
        .collect();
    (recs, withheld)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RecId;
    use std::collections::BTreeSet;

    #[test]
    fn the_table_is_whole_and_consistent() {
        let ids: BTreeSet<&RecId> = RULES.iter().map(|r| &r.id).collect();
        assert_eq!(ids.len(), RULES.len(), "one rule per id");
        for r in RULES {
            assert!(RecId::is_valid(r.id.as_str()), "{}: not snake_case", r.id);
            for words in [r.words.title, r.words.why, r.words.action, r.words.caveat] {
                assert!(!words.is_empty(), "{}: a rule says something", r.id);
            }
            assert!(!r.addresses.is_empty(), "{} addresses nothing", r.id);
            // An investigation turns no lever.
            assert!(!r.investigation || r.levers.is_empty(), "{}", r.id);
        }
    }
}
