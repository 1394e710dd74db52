//! The bottom line: healthy, at risk or failing, and why; a short
//! narrative of the phases, restarts and bursts; and each phase's one-line
//! description.
//!
//! - **failing**: an objective fails (proven by the data).
//! - **at risk**: none fails, but one cannot be told, a GPU reported a
//!   hardware fault, a p99 stalls, a server restarted, errors burst, or the
//!   proven headroom on an objective is under 20 %.
//! - **healthy**: neither. The report then says so first, with where the
//!   capacity ends, and that nothing needs to change.

use vllm_lens_query::Verdict as Proof;

use crate::ids::{FindingId, PhaseKind, SloId, SloKind, TimelineKind};
use crate::judge::bursts::{BurstOf, burst_words};
use crate::judge::ctx::Ctx;
use crate::judge::slo::registry;
use crate::measure::thresholds::AT_RISK_HEADROOM;
use crate::model::{Analysis, Phase, SloResult, SloStatus, TimelineEvent, Verdict, VerdictStatus};
use crate::text::{bucket_text, ms_text, num, plural};

use crate::time::hhmm;

/// "14:00–14:05"
fn span(a: i64, b: i64) -> String {
    format!("{}–{}", hhmm(a), hhmm(b))
}

fn quantile_words(slo: &SloResult) -> String {
    slo.bounds.map_or_else(
        || "missing".to_string(),
        |b| bucket_text(b.low, b.high.unwrap_or(f64::INFINITY)),
    )
}

/// True when the proven headroom on an objective is under 20 %.
fn thin(ctx: &Ctx<'_>, slo: &SloResult) -> bool {
    if slo.status != SloStatus::Pass {
        return false;
    }
    match slo.id.kind() {
        SloKind::Quantile => {
            let signal = registry::slo(slo.id).breach_signal;
            ctx.hists
                .get(&signal)
                .and_then(|h| {
                    h.buckets
                        .prove(0.95, (1.0 - AT_RISK_HEADROOM) * slo.threshold / 1000.0)
                })
                .is_some_and(|p| p.verdict == Proof::Beyond)
        }
        SloKind::Rate => slo
            .value
            .is_some_and(|v| v >= (1.0 - AT_RISK_HEADROOM) * slo.threshold),
        SloKind::Queue => slo
            .queueing_starts_at
            .is_some_and(|s| s - 1.0 < (1.0 + AT_RISK_HEADROOM) * slo.threshold),
    }
}

fn slo_words(
    slo: &SloResult,
    floor: Option<f64>,
    disconnects: Option<f64>,
    binding: crate::model::BindingLimit,
) -> String {
    match (slo.id, slo.status) {
        (SloId::ItlP95, SloStatus::Fail) if floor.is_some() => format!(
            "inter-token latency p95 is {} (objective {}), out of reach with these weights on this hardware: the decode floor is {} per step",
            quantile_words(slo),
            ms_text(slo.threshold),
            floor.map_or("?".into(), ms_text)
        ),
        (id, SloStatus::Fail) if id.kind() == SloKind::Quantile => format!(
            "{} p95 is {} (objective {})",
            registry::slo(slo.id).quantity,
            quantile_words(slo),
            ms_text(slo.threshold)
        ),
        (id, SloStatus::CannotTell) if id.kind() == SloKind::Quantile => format!(
            "{} p95 lies {}, around its {} objective: the buckets cannot tell",
            registry::slo(slo.id).quantity,
            quantile_words(slo),
            ms_text(slo.threshold)
        ),
        (SloId::QueueAtConcurrency, SloStatus::Fail) => {
            match (slo.queueing_starts_at, slo.admission_cap) {
                (Some(s), Some(c))
                    if c < slo.threshold && binding == crate::model::BindingLimit::MaxNumSeqs =>
                {
                    format!(
                        "the server runs at most {} requests at once, fewer than the {} the queue objective names (queueing from {} in flight)",
                        num(c),
                        num(slo.threshold),
                        num(s)
                    )
                }
                (Some(s), _)
                    if matches!(
                        binding,
                        crate::model::BindingLimit::TokenBudget
                            | crate::model::BindingLimit::KvCache
                    ) =>
                {
                    format!(
                        "requests queue from {} in flight, at or below the objective's {}: they wait for {}",
                        num(s),
                        num(slo.threshold),
                        match binding {
                            crate::model::BindingLimit::KvCache => "KV cache blocks",
                            _ => "the step's token budget (--max-num-batched-tokens)",
                        }
                    )
                }
                (Some(s), _) => format!(
                    "requests queue from {} in flight, at or below the objective's {}",
                    num(s),
                    num(slo.threshold)
                ),
                _ => "requests queue below the objective's concurrency".to_string(),
            }
        }
        (SloId::ErrorAbortRate, SloStatus::Fail) => format!(
            "errors + aborts{} are {} % of finished requests (objective < {} %)",
            disconnects
                .filter(|d| *d >= 1.0)
                .map_or(String::new(), |d| format!(
                    " with at least {} client disconnects",
                    num(d.round())
                )),
            slo.value.map_or("?".into(), |v| format!("{v:.2}")),
            num(slo.threshold)
        ),
        _ => slo.title.clone(),
    }
}

fn objective_name(id: SloId) -> &'static str {
    registry::slo(id).short
}

/// The verdict.
/// Why the bundle cannot support a verdict, if it cannot: no vLLM metrics,
/// too few scrapes for a rate, or no request at all.
fn what_is_missing(ctx: &Ctx<'_>) -> Option<String> {
    let gpus = ctx.catalogue.gpus.len();
    if ctx.replicas == 0 {
        return Some(if gpus > 0 {
            format!(
                "the bundle holds GPU metrics only (DCGM, {}) and no vLLM /metrics, and the objectives, the phases and the advice all read vLLM's own metrics; capture the server too (scripts/collect.sh --vllm URL)",
                plural(gpus, "GPU", "GPUs")
            )
        } else {
            "the bundle holds no vLLM /metrics; capture the server (scripts/collect.sh --vllm URL)"
                .to_string()
        });
    }
    let rated = ctx
        .windows
        .iter()
        .any(|w| w.workload.requests_per_min.is_some());
    if !rated {
        return Some(format!(
            "vLLM's /metrics was scraped {}, and rates and latencies need two scrapes or more, a few seconds apart (scripts/collect.sh --interval 5 --duration 10m)",
            plural(ctx.vllm_scrapes, "time", "times")
        ));
    }
    let any_load = ctx.windows.iter().any(|w| {
        w.workload.requests_per_min.is_some_and(|r| r > 0.0)
            || w.efficiency.running_avg.is_some_and(|r| r > 0.0)
    });
    let exercised = ctx.slo.iter().any(|s| s.status != SloStatus::NotExercised);
    (!any_load && !exercised).then(|| {
        "no request ran or finished during the capture, so nothing was put to the test; capture the server under its usual load".to_string()
    })
}

/// The models served, when there are several: which one the report judges
/// and why.
fn models_line(ctx: &Ctx<'_>) -> Option<String> {
    if ctx.models.len() < 2 {
        return None;
    }
    let each: Vec<String> = ctx
        .models
        .iter()
        .map(|m| {
            format!(
                "{} ({}, {} finished requests)",
                m.model,
                m.replicas.join(", "),
                num(m.finished.round())
            )
        })
        .collect();
    let judged = &ctx.models[0];
    Some(format!(
        "This bundle serves {} models: {}. The report judges {} only, the busiest: one scorecard over several models would mix their latencies. Capture each other model's replicas alone to judge them.",
        ctx.models.len(),
        each.join("; "),
        judged.model
    ))
}

pub(crate) fn verdict(
    ctx: &Ctx<'_>,
    analyses: &[Analysis],
    timeline: &[TimelineEvent],
    recs: &[crate::model::Recommendation],
) -> Verdict {
    let advice = recs.len();
    if let Some(missing) = what_is_missing(ctx) {
        let mut first = missing.clone();
        if let Some(c) = first.get(..1) {
            first = c.to_uppercase() + &first[1..];
        }
        return Verdict {
            status: VerdictStatus::CannotTell,
            headline: format!("Cannot tell: {missing}."),
            reasons: vec![missing],
            narrative: vec![format!("{first}.")],
            look_next: Vec::new(),
            follow_ups: Vec::new(),
        };
    }
    let (failing, mut risks) = objective_reasons(ctx);
    risks.extend(other_risks(ctx, analyses));
    let status = if !failing.is_empty() {
        VerdictStatus::Failing
    } else if !risks.is_empty() {
        VerdictStatus::AtRisk
    } else {
        VerdictStatus::Healthy
    };
    let headline =
        headline(ctx, status, &failing, &risks, advice) + &provisioning_words(ctx, status);
    let mut reasons = failing;
    reasons.extend(risks);
    Verdict {
        status,
        headline,
        reasons,
        narrative: narrative(ctx, timeline),
        look_next: crate::judge::look_next::look_next(ctx, analyses, recs, timeline),
        follow_ups: crate::judge::look_next::follow_ups(ctx, recs),
    }
}

/// Every objective that fails, and every one in doubt or met with thin
/// headroom, in words.
fn objective_reasons(ctx: &Ctx<'_>) -> (Vec<String>, Vec<String>) {
    let mut failing: Vec<String> = Vec::new();
    let mut risks: Vec<String> = Vec::new();
    for slo in ctx.slo {
        match slo.status {
            SloStatus::Fail => failing.push(slo_words(
                slo,
                crate::judge::capacity::infeasible(ctx.capacity)
                    .into_iter()
                    .find(|(id, _)| *id == slo.id)
                    .map(|(_, ms)| ms),
                ctx.summary.outcomes.client_disconnects,
                ctx.capacity.binding_limit,
            )),
            SloStatus::CannotTell if slo.id == SloId::ErrorAbortRate => risks.push(
                match crate::judge::events::longest_outage(ctx.restarts, ctx.settings.window_ms) {
                    Some((replica, ms)) => format!(
                        "errors + aborts cannot be told against {} %: {replica} was unreachable for up to {}, and the requests sent then failed before any counter saw them",
                        num(slo.threshold),
                        ms_text(ms as f64)
                    ),
                    None => format!(
                        "errors + aborts with the estimated client disconnects cannot be told against {} % (the share lies {})",
                        num(slo.threshold),
                        slo.bounds.map_or("?".into(), |b| format!(
                            "between {} and {} %",
                            num(b.low),
                            b.high.map_or("?".into(), num)
                        ))
                    ),
                },
            ),
            SloStatus::CannotTell => risks.push(format!(
                "{} cannot be told against {} (it lies {})",
                objective_name(slo.id),
                ms_text(slo.threshold),
                quantile_words(slo)
            )),
            SloStatus::Pass if thin(ctx, slo) => risks.push(format!(
                "{} is met with under 20 % headroom",
                objective_name(slo.id)
            )),
            _ => {}
        }
    }
    (failing, risks)
}

/// What puts the service at risk outside the objectives: GPU faults, p99
/// stalls, restarts, error bursts, refused requests and clients that hung up.
fn other_risks(ctx: &Ctx<'_>, analyses: &[Analysis]) -> Vec<String> {
    let mut risks = Vec::new();
    let fired = |id: FindingId| {
        analyses
            .iter()
            .flat_map(|a| a.findings.iter())
            .any(|f| f.id == id)
    };
    // A GPU that reported a fault is a risk whatever the objectives say.
    risks.extend(crate::measure::faults::per_gpu(ctx.faults));
    let l = &ctx.summary.latency;
    for (id, what, b, objective) in [
        (
            FindingId::LatencyTtftStall,
            "TTFT",
            l.bounds.ttft_p99_ms,
            ctx.settings.slo.ttft_p95_ms,
        ),
        (
            FindingId::LatencyItlStall,
            "inter-token",
            l.bounds.itl_p99_ms,
            ctx.settings.slo.itl_p95_ms,
        ),
    ] {
        if fired(id) {
            risks.push(format!(
                "{what} p99 is over 3× its {} objective ({})",
                ms_text(objective),
                b.map_or("?".into(), |b| bucket_text(
                    b.low,
                    b.high.unwrap_or(f64::INFINITY)
                ))
            ));
        }
    }
    for r in ctx.restarts {
        risks.push(format!(
            "{} restarted at {}{}",
            r.replica,
            hhmm(r.when_ms()),
            r.lost_words()
                .map_or(String::new(), |l| format!(", losing {l}"))
        ));
    }
    for b in ctx.bursts {
        let (a, z) = (ctx.windows[b.start].start_ms, ctx.window_end(b.end - 1));
        for t in &b.tests {
            risks.push(format!(
                "{} burst {}: {}",
                match t.of {
                    BurstOf::Engine => "errors",
                    BurstOf::Http => "HTTP errors",
                },
                span(a, z),
                burst_words(t)
            ));
        }
    }
    // What users lost outside the objectives: refused requests, clients
    // that hung up (each a finding at its warning line).
    let severity = |id: FindingId| crate::model::severity_of(analyses, id);
    let o = &ctx.summary.outcomes;
    let burst = !ctx.bursts.is_empty();
    if severity(FindingId::OutcomesHttpErrors) == Some(crate::model::Severity::Fail)
        && !burst
        && let Some(h) = o.http_error_pct
    {
        risks.push(format!(
            "{h:.1} % of HTTP requests were answered 4xx or 5xx"
        ));
    }
    if severity(FindingId::OutcomesClientDisconnects) == Some(crate::model::Severity::Warn)
        && ctx.slo(SloId::ErrorAbortRate) != Some(SloStatus::Fail)
        && let Some(n) = o.client_disconnects
    {
        risks.push(format!(
            "at least {} clients hung up before their answers finished",
            num(n.round())
        ));
    }
    risks
}

/// The verdict's first line.
fn headline(
    ctx: &Ctx<'_>,
    status: VerdictStatus,
    failing: &[String],
    risks: &[String],
    advice: usize,
) -> String {
    let exercised = ctx
        .slo
        .iter()
        .filter(|s| s.status != SloStatus::NotExercised)
        .count();
    match status {
        VerdictStatus::Failing => format!("Failing: {}.", failing.join("; ")),
        VerdictStatus::AtRisk => format!(
            "At risk: no objective fails, but {}.",
            risks.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
        ),
        VerdictStatus::Healthy if exercised == 0 => {
            "Healthy as far as the capture shows: no objective could be put to the test."
                .to_string()
        }
        // (Decided above; never reached.)
        VerdictStatus::CannotTell => String::new(),
        VerdictStatus::Healthy => format!(
            "Healthy: {} met{}; nothing needs to change to meet them{}.",
            if exercised == ctx.slo.len() {
                "every objective is".to_string()
            } else {
                format!("the {exercised} objectives the capture tested are")
            },
            capacity_words(ctx)
                .map(|c| format!(", and {c}"))
                .unwrap_or_default(),
            if advice > 0 {
                " (what follows is for headroom as load grows)"
            } else {
                ""
            }
        ),
    }
}

/// The provisioning, when it is over or under, as a sentence after the
/// headline.
fn provisioning_words(ctx: &Ctx<'_>, status: VerdictStatus) -> String {
    use crate::model::ProvisioningStatus as P;
    let p = &ctx.capacity.provisioning;
    let peak = p.peak_in_flight.map_or(String::new(), |n| {
        format!(" (~{} in flight)", num(n.round()))
    });
    match (p.status, p.headroom_x) {
        // A risk (a failing GPU, a growing queue) lies inside the engine:
        // the sentence then does not send the reader elsewhere.
        (P::Over, Some(x)) if status == VerdictStatus::Healthy => format!(
            " Over-provisioned: it would carry ~{x:.1}× its peak load{peak} within every objective the engine measures, so slowness users feel is to be looked for outside the engine."
        ),
        (P::Over, Some(x)) => format!(
            " Over-provisioned: it would carry ~{x:.1}× its peak load{peak} within every objective the engine measures."
        ),
        (P::Under, _) => format!(
            " Under-provisioned for the load it carried{peak}: {} runs out first.",
            p.limiting.as_deref().map_or("a limit", limiting_words)
        ),
        _ => String::new(),
    }
}

/// A provisioning dimension in words.
fn limiting_words(id: &str) -> &'static str {
    match id {
        "ttft_p95" => "the engine's TTFT p95",
        "itl_p95" => "the engine's inter-token p95",
        "kv_cache" => "the KV cache",
        "max_num_seqs" => "--max-num-seqs",
        "queueing" => "admission (requests queue)",
        "queue_at_concurrency" => "admission (the queue objective)",
        _ => "a limit",
    }
}

/// Where the capacity ends, in words.
fn capacity_words(ctx: &Ctx<'_>) -> Option<String> {
    let q = ctx.queue;
    match (q.queueing_starts_at(), q.peak_in_flight()) {
        (Some(s), _) => Some(format!("requests queue from {} in flight", num(s))),
        (None, Some(p)) => Some(format!(
            "nothing queued up to {} in flight{}",
            plural(p.round() as usize, "request", "requests"),
            ctx.summary
                .efficiency
                .kv_cache_pct
                .map_or(String::new(), |k| if k < 0.1 {
                    " with the KV cache under 0.1 % full".to_string()
                } else {
                    format!(
                        " with the KV cache at most {} full",
                        crate::text::pct_at_most(k)
                    )
                })
        )),
        _ => None,
    }
}

/// What happened, in a few lines.
fn narrative(ctx: &Ctx<'_>, timeline: &[TimelineEvent]) -> Vec<String> {
    let mut out: Vec<String> = models_line(ctx).into_iter().collect();
    let interesting =
        ctx.phases.iter().any(|p| p.kind != PhaseKind::Steady) || ctx.phases.len() > 1;
    if interesting {
        for p in ctx.phases {
            out.push(phase_line(p));
        }
    } else if let Some(p) = ctx.phases.first() {
        out.push(format!(
            "One steady phase {}: {}.",
            span(p.start_ms, p.end_ms),
            p.description
        ));
    }
    if let Some(c) = capacity_words(ctx) {
        let mut line = c;
        if let Some(cap) = ctx.queue.admission_cap() {
            line.push_str(&format!(
                "; at most {} ran at once while others waited",
                num(cap)
            ));
        }
        if let Some(first) = line.get(..1) {
            line = first.to_uppercase() + &line[1..];
        }
        out.push(format!("{line}."));
    }
    // With nothing failing, the margins each objective keeps.
    if !ctx.slo.iter().any(|s| s.status == SloStatus::Fail) {
        let margins: Vec<String> = ctx
            .slo
            .iter()
            .filter(|s| s.status == SloStatus::Pass)
            .map(|s| match s.id.kind() {
                SloKind::Quantile => {
                    // The whole capture's p95 can hide a load level's: the
                    // worst level is said beside it when its bucket is
                    // higher.
                    let bucket = registry::slo(s.id).phase_bucket;
                    let of = |p: &Phase| bucket.and_then(|f| f(p));
                    let worst = ctx
                        .phases
                        .iter()
                        .filter(|p| p.kind.is_load())
                        .filter_map(|p| of(p).map(|b| (p, b)))
                        .max_by(|a, b| {
                            a.1.low.total_cmp(&b.1.low).then(
                                a.1.high
                                    .unwrap_or(f64::INFINITY)
                                    .total_cmp(&b.1.high.unwrap_or(f64::INFINITY)),
                            )
                        })
                        .filter(|(_, b)| {
                            s.bounds
                                .is_some_and(|w| b.low >= w.high.unwrap_or(f64::INFINITY))
                        });
                    let level = worst.map_or(String::new(), |(p, b)| {
                        format!(
                            " over the capture, {} at ~{} in flight ({})",
                            bucket_text(b.low, b.high.unwrap_or(f64::INFINITY)),
                            num(p.in_flight_avg.unwrap_or_default().round()),
                            span(p.start_ms, p.end_ms)
                        )
                    });
                    format!(
                        "{} {}{level} against {}",
                        objective_name(s.id),
                        quantile_words(s),
                        ms_text(s.threshold)
                    )
                }
                SloKind::Queue => match s.queueing_starts_at {
                    Some(start) => format!(
                        "queueing from {} in flight against {}",
                        num(start),
                        num(s.threshold)
                    ),
                    None => format!(
                        "{} in flight without queueing against {}",
                        s.value.map_or("?".into(), num),
                        num(s.threshold)
                    ),
                },
                SloKind::Rate => format!(
                    "errors + aborts {} % against {} %",
                    s.value.map_or("?".into(), num),
                    num(s.threshold)
                ),
            })
            .collect();
        if !margins.is_empty() {
            out.push(format!("Headroom: {}.", margins.join("; ")));
        }
    }
    let c = ctx.capacity;
    if let (Some(tokens), Some(requests)) = (c.kv_tokens, c.kv_requests) {
        // Requests hold fewer tokens before they finish: more than the
        // full-length figure can run at once, and the reader sees both.
        let more = ctx
            .queue
            .admission_cap()
            .filter(|&ran| ran > requests)
            .map(|ran| {
                format!(
                    "; {} ran at once, as a request holds fewer tokens before it finishes",
                    num(ran)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "KV cache: {}{} tokens per replica, about {} requests at once at their full observed length ({} tokens each, in whole {}-token blocks{more}); {}.",
            if c.kv_estimated { "about " } else { "" },
            num(tokens),
            num(requests),
            c.request_tokens.map_or("?".into(), |t| num(t.round())),
            c.block_size.map_or("?".into(), num),
            match c.binding_limit {
                crate::model::BindingLimit::MaxNumSeqs => format!(
                    "--max-num-seqs binds first ({} running)",
                    c.admission_cap.map_or("?".into(), num)
                ),
                crate::model::BindingLimit::NoneSeen => "no limit was reached".to_string(),
                b => format!("{} binds first", b.words()),
            }
        ));
    }
    for e in timeline
        .iter()
        .filter(|e| e.kind == TimelineKind::ScrapeGap)
    {
        out.push(format!("{} {}.", hhmm(e.time_ms), e.description));
    }
    let excluded = ctx.queue.excluded.len();
    if excluded > 0 {
        out.push(format!(
            "The queue objective leaves out {} of warm-up or restart.",
            plural(excluded, "window", "windows")
        ));
    }
    out
}

fn phase_line(p: &Phase) -> String {
    let kind = p.kind.words();
    // After the colon a sentence goes on in lower case (not "HTTP", "KV").
    let d = &p.description;
    let first_word = d.split(' ').next().unwrap_or_default();
    let description =
        if first_word.chars().count() == 1 || first_word.chars().skip(1).any(char::is_lowercase) {
            let mut c = d.chars();
            c.next()
                .map(|f| f.to_lowercase().chain(c).collect())
                .unwrap_or_default()
        } else {
            d.clone()
        };
    format!("{} {kind}: {description}.", span(p.start_ms, p.end_ms))
}
