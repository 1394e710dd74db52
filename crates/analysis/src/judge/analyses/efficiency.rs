//! Step 2: does the engine use the GPU well. Prefix-cache hits, continuous
//! batching (tokens per step against running requests), what KV usage
//! measures, preemptions, and waiting.

use vllm_lens_catalog::Signal;

use crate::ids::{FindingId as F, SloId};
use crate::judge::ctx::{Ctx, finding, missing};
use crate::measure::queue::QueuedBy;
use crate::measure::thresholds::{
    BATCHING_BROKEN_TOKENS, BATCHING_MIN_RUNNING, KV_FULL_PCT, KV_WARN_PCT, PREFIX_LOW_PCT,
};
use crate::model::{Finding, Severity, SloStatus};

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    prefix(ctx, &mut out);
    ceiling(ctx, &mut out);
    batching(ctx, &mut out);
    kv(ctx, &mut out);
    preemptions(ctx, &mut out);
    waiting(ctx, &mut out);
    gauges(ctx, &mut out);
    out
}

fn prefix(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let e = &ctx.summary.efficiency;
    let hits = [Signal::PrefixHits, Signal::PrefixQueries];
    match e.prefix_cache_hit_pct {
        Some(hit) => {
            let evidence = vec![
                ctx.ev_prefix_hit_rate(Some(hit)),
                ctx.ev(
                    "prompt tokens per second",
                    e.prompt_tokens_per_sec,
                    "tokens/s",
                    &[Signal::PromptTokens],
                ),
            ];
            if hit < PREFIX_LOW_PCT {
                // Info, not a warning: without the prompts' text the tool
                // cannot tell little shared text from an uncached prefix.
                out.push(finding(
                    F::EfficiencyPrefixLow,
                    Severity::Info,
                    format!("Prefix-cache hit rate is {hit:.0} %"),
                    evidence,
                    &[("hit", format!("{hit:.0}"))],
                ));
            } else {
                out.push(finding(
                    F::EfficiencyPrefixOk,
                    Severity::Pass,
                    format!("Prefix-cache hit rate is {hit:.0} %"),
                    evidence,
                    &[],
                ));
            }
        }
        None => {
            if let Some(rate) = ctx.prefix_lifetime
                && rate < 0.0
            {
                out.push(finding(
                    F::EfficiencyPrefixOff,
                    Severity::Warn,
                    "Prefix caching is off".into(),
                    vec![ctx.ev(
                        "lifetime hit rate gauge",
                        Some(rate),
                        "",
                        &[Signal::PrefixHitRateLifetime],
                    )],
                    &[],
                ));
            } else if ctx.has(Signal::PrefixHitRateLifetime) {
                out.push(finding(
                    F::EfficiencyPrefixLifetimeOnly,
                    Severity::Info,
                    "Only a lifetime prefix-cache hit rate is exported (V0)".into(),
                    vec![ctx.ev(
                        "lifetime hit rate since start",
                        ctx.prefix_lifetime.map(|r| r * 100.0),
                        "%",
                        &[Signal::PrefixHitRateLifetime],
                    )],
                    &[],
                ));
            } else {
                out.push(missing(
                    F::EfficiencyPrefixMissing,
                    "Prefix-cache hit rate",
                    &hits,
                ));
            }
        }
    }
}

/// The hit rate against what the stated shared prefix allows (whole
/// blocks only).
fn ceiling(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let p = &ctx.capacity.prefix;
    let (Some(shared), Some(block), Some(prompt)) =
        (p.shared_prefix_tokens, p.block_size, p.prompt_tokens)
    else {
        return;
    };
    let ceiling = p.ceiling_pct.unwrap_or(0.0);
    let hit = p.hit_pct;
    if p.exceeded {
        let h = hit.unwrap_or_default();
        out.push(finding(
            F::EfficiencyPrefixAboveStated,
            Severity::Info,
            format!(
                "Prefix cache: {h:.0} % served, more than the {ceiling:.0} % the stated {shared:.0}-token shared prefix allows: prompts share more than stated"
            ),
            vec![
                ctx.ev("hit rate", hit, "%", &[Signal::PrefixHits, Signal::PrefixQueries]),
                ctx.ev("what the stated prefix allows (whole blocks)", Some(ceiling), "%", &[]),
                ctx.ev("shared prefix (stated)", Some(shared), "tokens", &[]),
                ctx.ev("block size", Some(block), "tokens", &[]),
            ],
            &[
                ("shared", format!("{shared:.0}")),
                ("block", format!("{block:.0}")),
                ("ceiling", format!("{ceiling:.0} %")),
                ("prompt", format!("{prompt:.0}")),
                ("hit", format!("{h:.0} %")),
            ],
        ));
        return;
    }
    let below = hit.is_some_and(|h| h < 0.7 * ceiling);
    let action = if p.shorter_than_a_block {
        "Use a smaller --block-size, or lengthen the shared part to a multiple of the block size."
    } else if below {
        "Put the shared text first and keep it byte-identical across requests (timestamps, user names and retrieved text after it)."
    } else {
        ""
    };
    out.push(finding(
        F::EfficiencyPrefixCeiling,
        if p.shorter_than_a_block || below {
            Severity::Warn
        } else {
            Severity::Pass
        },
        format!(
            "Prefix cache: {} served against a ceiling of {ceiling:.0} % from the {shared:.0}-token shared prefix",
            hit.map_or("missing".into(), |h| format!("{h:.0} %"))
        ),
        vec![
            ctx.ev("hit rate", hit, "%", &[Signal::PrefixHits, Signal::PrefixQueries]),
            ctx.ev("ceiling (whole blocks of the shared prefix)", Some(ceiling), "%", &[]),
            ctx.ev("block size", Some(block), "tokens", &[]),
        ],
        &[
            ("shared", format!("{shared:.0}")),
            ("block", format!("{block:.0}")),
            ("ceiling", format!("{ceiling:.0} %")),
            ("prompt", format!("{prompt:.0}")),
            ("hit", hit.map_or("missing".into(), |h| format!("{h:.0} %"))),
            (
                "below",
                if p.shorter_than_a_block {
                    " The shared prefix is shorter than one block, so it is never reused.".to_string()
                } else if below {
                    " Well below the ceiling: the shared text is not byte-identical, or not first.".to_string()
                } else {
                    String::new()
                },
            ),
            ("action", action.to_string()),
        ],
    ));
}

fn batching(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let e = &ctx.summary.efficiency;
    // Each engine step serves one replica's batch: running per replica.
    let replicas = ctx.replicas.max(1) as f64;
    let per = if replicas > 1.0 { " per replica" } else { "" };
    let evidence = |tpi: f64, running: f64| {
        vec![
            ctx.ev(
                "tokens per iteration",
                Some(tpi),
                "tokens",
                &[Signal::IterationTokens],
            ),
            ctx.ev(
                &format!("running (mean{per})"),
                Some(running),
                "requests",
                &[Signal::Running],
            ),
        ]
    };
    match (e.tokens_per_iteration, e.running_avg.map(|r| r / replicas)) {
        (Some(tpi), Some(running))
            if running >= BATCHING_MIN_RUNNING && tpi < BATCHING_BROKEN_TOKENS =>
        {
            out.push(finding(
                F::EfficiencyBatchingBroken,
                Severity::Fail,
                format!("{tpi:.1} tokens per engine step with {running:.0} requests running{per}"),
                evidence(tpi, running),
                &[],
            ))
        }
        (Some(tpi), Some(running)) if running > 0.5 => out.push(finding(
            F::EfficiencyBatchingOk,
            Severity::Pass,
            format!(
                "Continuous batching works: {tpi:.1} tokens per step with {running:.1} running{per} on average"
            ),
            evidence(tpi, running),
            &[],
        )),
        (None, _) => out.push(missing(
            F::EfficiencyBatchingMissing,
            "Tokens per engine step",
            &[Signal::IterationTokens],
        )),
        _ => {}
    }
}

fn kv(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let e = &ctx.summary.efficiency;
    let Some(kv) = e.kv_cache_pct else {
        out.push(missing(
            F::EfficiencyKvMissing,
            "KV-cache usage",
            &[Signal::KvUsage],
        ));
        return;
    };
    let full = ctx.windows_where(|w| w.efficiency.kv_cache_pct.is_some_and(|k| k >= KV_FULL_PCT));
    let sev = if kv >= KV_FULL_PCT {
        Severity::Fail
    } else if kv >= KV_WARN_PCT {
        Severity::Warn
    } else {
        Severity::Info
    };
    let mut evidence = vec![
        ctx.ev_kv_max(Some(kv)),
        ctx.ev("KV cache mean", e.kv_cache_pct_avg, "%", &[Signal::KvUsage]),
        ctx.ev_at(
            "windows at ≥ 90 %",
            Some(full.len() as f64),
            "windows",
            &[Signal::KvUsage],
            full,
        ),
    ];
    for p in ctx.steady_phases() {
        evidence.push(ctx.ev_at(
            &format!(
                "KV max at ~{:.0} in flight",
                p.in_flight_avg.unwrap_or_default()
            ),
            p.figures.efficiency.kv_cache_pct,
            "%",
            &[Signal::KvUsage],
            vec![p.start_ms],
        ));
    }
    let action = if kv >= KV_WARN_PCT {
        "Scale out before the pool fills: autoscale on requests in flight or KV usage (see What to do)."
    } else {
        ""
    };
    out.push(finding(
        F::EfficiencyKvUsage,
        sev,
        format!("KV-cache pool at most {kv:.1} % in use"),
        evidence,
        &[("action", action.to_string())],
    ));
}

fn preemptions(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(p) = ctx.summary.efficiency.preemptions_per_min else {
        return;
    };
    if p > 0.0 {
        let at = ctx.windows_where(|w| w.efficiency.preemptions_per_min.is_some_and(|x| x > 0.0));
        out.push(finding(
            F::EfficiencyPreemptions,
            Severity::Fail,
            format!("{p:.1} preemptions per minute"),
            vec![
                ctx.ev_at(
                    "preemptions",
                    Some(p),
                    "per min",
                    &[Signal::Preemptions],
                    at,
                ),
                ctx.ev_kv_max(ctx.summary.efficiency.kv_cache_pct),
            ],
            &[],
        ));
    } else {
        out.push(finding(
            F::EfficiencyNoPreemptions,
            Severity::Pass,
            "No preemptions".into(),
            vec![ctx.ev("preemptions", Some(0.0), "per min", &[Signal::Preemptions])],
            &[],
        ));
    }
}

/// Requests that waited for a slot: the queue definition's windows.
fn waiting(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let q = ctx.queue;
    let windows: Vec<i64> = q
        .queued_windows()
        .iter()
        .map(|&w| ctx.windows[w].start_ms)
        .collect();
    if windows.is_empty() {
        return;
    }
    let most = q
        .replicas
        .iter()
        .flat_map(|r| r.queued.iter())
        .filter(|x| x.by == QueuedBy::Waiting)
        .map(|x| x.in_flight - x.running)
        .fold(0.0, f64::max);
    let failing = ctx.slo(SloId::QueueAtConcurrency) == Some(SloStatus::Fail)
        || ctx.slo(SloId::TtftP95) == Some(SloStatus::Fail);
    let n = windows.len();
    out.push(finding(
        F::EfficiencyWaiting,
        if failing {
            Severity::Fail
        } else {
            Severity::Warn
        },
        format!(
            "Requests waited for a slot in {n} of {} windows{}",
            ctx.windows.len(),
            if most > 0.0 {
                format!(" (up to {most:.0} waiting at once)")
            } else {
                String::new()
            }
        ),
        vec![ctx.ev_at(
            "windows with queueing",
            Some(n as f64),
            "windows",
            &[Signal::Waiting, Signal::QueueTime],
            windows,
        )],
        &[("waiting", q.waiting_metric.clone().unwrap_or_default())],
    ));
}

/// The running + waiting gauges against Little's law.
fn gauges(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    use crate::judge::words::{GAUGES_HIGH_CAUSE, GAUGES_LOW_ACTION, GAUGES_LOW_CAUSE};
    let g = ctx.gauges;
    let Some((gauges, little)) = g.means().filter(|_| g.fires()) else {
        return;
    };
    let windows: Vec<i64> =
        if g.windows.len() >= crate::measure::thresholds::GAUGES_DISAGREE_WINDOWS {
            g.windows
                .iter()
                .map(|d| ctx.windows[d.window].start_ms)
                .collect()
        } else {
            g.phases
                .iter()
                .flat_map(|p| p.start..p.end)
                .map(|w| ctx.windows[w].start_ms)
                .collect()
        };
    let n = g.window_count();
    let low = g.gauges_low();
    // Windows are compared outside warm-up; a phase's whole-phase figures
    // (a warm-up's among them) are over all its windows.
    let over = if g.windows.len() >= crate::measure::thresholds::GAUGES_DISAGREE_WINDOWS {
        format!("{n} of {} windows", g.compared)
    } else {
        let k = g.phases.len();
        format!(
            "over {k} phase{}, {n} window{}",
            if k == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" }
        )
    };
    let title = if low {
        format!(
            "The running + waiting gauges read {gauges:.1} requests where Little's law over the engine's own latency gives {little:.1} ({over}): the gauges read too few"
        )
    } else {
        format!(
            "Little's law over finished requests gives {little:.1} requests in the engine where the gauges read {gauges:.1} ({over}): requests that never finished"
        )
    };
    out.push(finding(
        F::DataQualityGaugesDisagree,
        if low { Severity::Warn } else { Severity::Info },
        title,
        vec![
            ctx.ev_at(
                "running + waiting (gauges), mean",
                Some(gauges),
                "requests",
                &[Signal::Running, Signal::Waiting],
                windows.clone(),
            ),
            ctx.ev_at(
                "finished/s × mean e2e latency (Little's law), mean",
                Some(little),
                "requests",
                &[Signal::FinishedRequests, Signal::E2eTime],
                windows,
            ),
        ],
        &[
            ("windows", n.to_string()),
            ("gauges", format!("{gauges:.1}")),
            ("little", format!("{little:.1}")),
            (
                "cause",
                if low {
                    GAUGES_LOW_CAUSE
                } else {
                    GAUGES_HIGH_CAUSE
                }
                .to_string(),
            ),
            (
                "action",
                if low { GAUGES_LOW_ACTION } else { "" }.to_string(),
            ),
        ],
    ));
}
