//! What a rule is ([`Rule`]), what it reads ([`In`]) and what it yields
//! when its evidence holds ([`Fired`]): the vocabulary every rule file
//! shares, below the table and the ranking in `rules/mod.rs`.

use vllm_lens_catalog::Signal;

use crate::advise::levers::{Lever, State};
use crate::ids::{Addresses as A, FindingId, RecId, SloId};
use crate::judge::ctx::Ctx;
use crate::measure::promql::Checker;
use crate::model::{Analysis, Confidence, Evidence, Snippet};

/// One rule of the table.
pub struct Rule {
    /// The recommendation it makes.
    pub id: RecId,
    /// Every lever it may turn.
    pub levers: &'static [Lever],
    /// Every target it may address.
    pub addresses: &'static [A],
    /// An investigation (find a cause) rather than a change.
    pub investigation: bool,
    /// What it says, `{placeholders}` filled with the figures it fired on.
    pub words: Words,
    /// The rule: what it recommends on this capture, if its evidence holds.
    pub(crate) fire: fn(&In<'_>) -> Option<Fired>,
}

/// A recommendation's words: the rationale (`why`) is filled with the
/// evidence's figures.
pub struct Words {
    /// The card's title.
    pub title: &'static str,
    /// Why: the evidence in a sentence or two.
    pub why: &'static str,
    /// What to do.
    pub action: &'static str,
    /// What it costs or where it may not apply.
    pub caveat: &'static str,
}

/// What a rule reads.
pub(crate) struct In<'a> {
    pub ctx: &'a Ctx<'a>,
    pub analyses: &'a [Analysis],
    pub checker: &'a Checker<'a>,
    pub model: Option<&'a str>,
    pub state: State,
}

impl In<'_> {
    /// True when a finding fired.
    pub fn fired(&self, f: FindingId) -> bool {
        self.analyses
            .iter()
            .flat_map(|a| a.findings.iter())
            .any(|x| x.id == f)
    }

    /// The objectives among `slos` that fail or cannot be told, as targets
    /// with the share of each the rule moves.
    pub fn doubtful(&self, slos: &[SloId], share: f64) -> Vec<(A, f64)> {
        slos.iter()
            .filter(|s| self.ctx.slo_in_doubt(**s))
            .map(|s| (A::from(*s), share))
            .collect()
    }

    /// The levers of `levers` this capture allows.
    pub fn allowed(&self, levers: &[Lever]) -> Vec<Lever> {
        levers
            .iter()
            .copied()
            .filter(|l| self.state.blocks(*l).is_none())
            .collect()
    }

    /// Shares of the mean time to first token where it misses: (queue,
    /// prefill, rest), 0..=1; `None` where the parts are not exported.
    pub fn ttft_shares(&self) -> Option<(f64, f64, f64)> {
        self.ctx.ttft_parts.map(|p| p.shares())
    }
}

/// A rule's recommendation on one capture, before the checks and ranking.
pub(crate) struct Fired {
    /// The levers it turns (a subset of the rule's).
    pub levers: Vec<Lever>,
    /// What it acts on, with the share of each it can move (0..=1).
    pub effect: Vec<(A, f64)>,
    /// The `{placeholders}` of its words ([`Rule::words`]).
    pub vars: Vec<(&'static str, String)>,
    pub confidence: Confidence,
    pub evidence: Vec<Evidence>,
    pub snippets: Vec<Snippet>,
    /// Objectives its words say hold.
    pub claims_hold: Vec<SloId>,
}

impl Fired {
    pub fn new(
        levers: Vec<Lever>,
        effect: Vec<(A, f64)>,
        vars: Vec<(&'static str, String)>,
        confidence: Confidence,
    ) -> Fired {
        Fired {
            levers,
            effect,
            vars,
            confidence,
            evidence: Vec::new(),
            snippets: Vec::new(),
            claims_hold: Vec::new(),
        }
    }
}

/// A percentage with one decimal, or `?`.
pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |x| format!("{x:.1} %"))
}

/// The mean inter-token latency evidence several rules cite.
pub(crate) fn ev_itl_mean(ctx: &Ctx<'_>) -> Evidence {
    ctx.ev(
        "inter-token latency (mean)",
        ctx.summary.latency.inter_token_ms,
        "ms",
        &[Signal::InterTokenLatency],
    )
}
