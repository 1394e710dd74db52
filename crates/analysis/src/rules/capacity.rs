//! Rules on admission and capacity: the sequence cap, preemptions,
//! replicas and autoscaling.

use vllm_lens_catalog::Signal;

use super::{Fired, In, Rule, pct};
use crate::ids::{Addresses as A, RecId, SloId};
use crate::levers::{Knob, down, up};
use crate::model::{Confidence, SloStatus};
use crate::prose;
use crate::snippets;
use crate::text::num;
use crate::thresholds::*;

pub(super) const RAISE_MAX_NUM_SEQS: Rule = Rule {
    id: RecId::RaiseMaxNumSeqs,
    levers: &[up(Knob::MaxNumSeqs)],
    addresses: &[A::QueueAtConcurrency, A::TtftP95],
    investigation: false,
    fire: raise_max_num_seqs,
};

/// The admission cap is a setting below the objective, with room in the KV
/// cache.
fn raise_max_num_seqs(i: &In<'_>) -> Option<Fired> {
    let (ctx, q) = (i.ctx, i.ctx.queue);
    let n = ctx.settings.slo.queue_concurrency;
    let kv = ctx.summary.efficiency.kv_cache_pct;
    let (cap, start) = (q.admission_cap()?, q.queueing_starts_at()?);
    if cap >= n || kv.is_none_or(|k| k >= KV_WARN_PCT) || i.state.preempting {
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

pub(super) const TUNE_PREEMPTIONS: Rule = Rule {
    id: RecId::TunePreemptions,
    levers: &[
        up(Knob::KvCacheMemory),
        down(Knob::KvCacheBytes),
        down(Knob::WeightBytes),
        up(Knob::TensorParallel),
        down(Knob::MaxNumSeqs),
    ],
    addresses: &[A::QueueAtConcurrency, A::ItlP95, A::TtftP95, A::Efficiency],
    investigation: false,
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
                    prose::fill(
                        prose::MORE_KV_ROOM,
                        &[("options", prose::list_or(&options))],
                    )
                },
            ),
            (
                "lower",
                match (lower, options.is_empty()) {
                    (false, _) => String::new(),
                    (true, false) => prose::LOWER_MAX_NUM_SEQS.to_string(),
                    (true, true) => prose::LOWER_MAX_NUM_SEQS_ALONE.to_string(),
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
    id: RecId::MoveToKserve,
    levers: &[up(Knob::Replicas)],
    addresses: &[A::QueueAtConcurrency, A::TtftP95, A::Capacity],
    investigation: false,
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
                    prose::fill(
                        prose::QUEUE_SHARE_OF_TTFT,
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
    id: RecId::SetAutoscalingTrigger,
    levers: &[up(Knob::Replicas)],
    addresses: &[A::Capacity],
    investigation: false,
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
    let target = snippets::in_flight_target(ctx);
    let pressure = match queued {
        Some(start) if queue_holds => prose::fill(
            prose::PRESSURE_QUEUED,
            &[("start", num(start)), ("n", num(n))],
        ),
        Some(start) => prose::fill(prose::PRESSURE_QUEUED_ONLY, &[("start", num(start))]),
        None => prose::fill(prose::PRESSURE_KV, &[("kv", pct(kv))]),
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
