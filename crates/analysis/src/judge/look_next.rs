//! Where to look next, and the tuning guide's follow-ups.
//!
//! The engine's histograms start when the engine gets a request: what users
//! feel adds the API server, the gateway, the network and the client. When
//! every engine objective holds, "it feels slow" is looked for there, and
//! the report says so with the engine's own figures and how to measure the
//! rest. The follow-ups are the guide's list for a deployment whose engine
//! is healthy, each only where the capture's figures support it.

use vllm_lens_catalog::Signal;

use crate::ids::{FindingId, FollowUpId, LookNextId, PhaseKind, SloId, SloKind, TimelineKind};
use crate::judge::ctx::Ctx;
use crate::model::{
    Analysis, FollowUp, LookNext, ProvisioningStatus, Recommendation, SloStatus, TimelineEvent,
};
use crate::text::{bucket_text, ms_text, num};

/// Decode's share of the engine's time from which prefill work cannot move
/// what users wait for.
const DECODE_SHARE_PCT: f64 = 70.0;
/// The measured step within this multiple of the weight-streaming floor:
/// decode is memory-bound, so fewer bytes per weight buy speed.
const FLOOR_MULTIPLE: f64 = 3.0;
/// VRAM this full (% of the GPU) says nothing when the KV cache is this
/// empty: vLLM reserves its memory up front.
const VRAM_RESERVED_PCT: f64 = 80.0;
const KV_EMPTY_PCT: f64 = 50.0;

/// True when no latency or queue objective of the engine fails.
fn engine_holds(ctx: &Ctx<'_>) -> bool {
    ctx.slo
        .iter()
        .filter(|s| s.id != SloId::ErrorAbortRate)
        .all(|s| !matches!(s.status, SloStatus::Fail | SloStatus::CannotTell))
}

/// The engine's TTFT p95 and its objective, in words.
fn engine_ttft(ctx: &Ctx<'_>) -> Option<String> {
    let s = ctx.slo.iter().find(|s| s.id == SloId::TtftP95)?;
    let b = s.bounds?;
    Some(format!(
        "the engine's TTFT p95 is {} against {} (vllm:time_to_first_token_seconds, from the moment the engine gets the request)",
        bucket_text(b.low, b.high.unwrap_or(f64::INFINITY)),
        ms_text(s.threshold)
    ))
}

/// The API server's own duration against the engine's end-to-end latency.
fn http_gap(ctx: &Ctx<'_>) -> Option<String> {
    let http = ctx.hists.get(&Signal::HttpDuration)?.avg()? * 1000.0;
    let e2e = ctx.summary.latency.e2e_ms?;
    let gap = http - e2e;
    Some(if gap > 0.0 {
        format!(
            "HTTP requests took {} on average (http_request_duration_highr_seconds) against the engine's {} end to end: the API server adds ~{} ({:.0} % of what it answers in)",
            ms_text(http),
            ms_text(e2e),
            ms_text(gap),
            100.0 * gap / http.max(f64::MIN_POSITIVE)
        )
    } else {
        format!(
            "HTTP requests took {} on average (http_request_duration_highr_seconds), no longer than the engine's {} end to end: time users lose outside the engine is spent before the API server's handler starts (its accept queue and event loop) or in the client, where no metric here looks",
            ms_text(http),
            ms_text(e2e)
        )
    })
}

/// The server's own `/metrics` went unanswered during the load: the same
/// API server answers users, so a starved event loop (or a starved
/// collector beside it) is a lead the engine's histograms cannot show.
fn starved_server(ctx: &Ctx<'_>, timeline: &[TimelineEvent]) -> Option<String> {
    let gaps: Vec<&TimelineEvent> = timeline
        .iter()
        .filter(|e| e.kind == TimelineKind::ScrapeGap)
        .filter(|e| {
            ctx.phases.iter().any(|p| {
                matches!(
                    p.kind,
                    PhaseKind::Steady | PhaseKind::Ramp | PhaseKind::Overload
                ) && e.time_ms >= p.start_ms
                    && e.time_ms < p.end_ms
            })
        })
        .collect();
    let first = gaps.first()?;
    Some(format!(
        "The server also left its own /metrics unanswered under load ({} gap{}; the first: {}): the API server that answers users answers the scrapes, so a starved event loop there (or a starved collector beside it) delays requests before any engine histogram starts.",
        gaps.len(),
        if gaps.len() == 1 { "" } else { "s" },
        first.description
    ))
}

/// Where to look next, most likely first.
pub(crate) fn look_next(
    ctx: &Ctx<'_>,
    analyses: &[Analysis],
    recs: &[Recommendation],
    timeline: &[TimelineEvent],
) -> Vec<LookNext> {
    let mut out = Vec::new();
    let failing: Vec<&str> = ctx
        .slo
        .iter()
        .filter(|s| s.status == SloStatus::Fail && s.id.kind() != SloKind::Rate)
        .map(|s| s.title.as_str())
        .collect();
    if !failing.is_empty() {
        out.push(LookNext {
            id: LookNextId::Engine,
            title: "Start in the engine: an objective it measures fails".into(),
            evidence: failing.join("; "),
            how: "Take the recommendations in order; capture again after each change and compare the two reports.".into(),
        });
    } else if let undecided @ [_, ..] = &ctx
        .slo
        .iter()
        .filter(|s| s.status == SloStatus::CannotTell && s.id.kind() != SloKind::Rate)
        .collect::<Vec<_>>()[..]
    {
        let each: Vec<String> = undecided
            .iter()
            .map(|s| match s.bounds {
                Some(b) => format!(
                    "{} lies {} against {}",
                    crate::judge::slo::registry::slo(s.id).short,
                    bucket_text(b.low, b.high.unwrap_or(f64::INFINITY)),
                    ms_text(s.threshold)
                ),
                None => format!("{} cannot be told", s.title),
            })
            .collect();
        out.push(LookNext {
            id: LookNextId::Engine,
            title: "Start in the engine: an objective it measures may be at its limit".into(),
            evidence: format!(
                "{}: the histogram's buckets cannot say which side of the objective it is on.",
                each.join("; ")
            ),
            how: "Time requests at the client for the same minutes (its own TTFT); if it is above the objective, the engine's share decides whether to tune the engine or the front end. Lowering the load one step, or capturing longer, can move the p95 into a bucket that decides.".into(),
        });
    } else if engine_holds(ctx)
        && let Some(ttft) = engine_ttft(ctx)
    {
        let gap = http_gap(ctx);
        let starved = starved_server(ctx, timeline);
        out.push(LookNext {
            id: LookNextId::FrontEnd,
            title: "Slowness users feel is outside the engine: look at the API server and the client first".into(),
            evidence: format!(
                "Every objective the engine measures holds: {ttft}{}. What users see adds the API server's event loop, tokenisation and streaming, which the engine's histograms do not count.{}",
                gap.map_or(String::new(), |g| format!("; {g}")),
                starved.map_or(String::new(), |s| format!(" {s}"))
            ),
            how: "Time requests at the client against the server directly (curl -w with its time_starttransfer and time_total variables) beside the engine's TTFT and e2e for the same minutes; a gap there is the API server (see --api-server-count) or the client itself.".into(),
        });
        out.push(LookNext {
            id: LookNextId::GatewayOrNetwork,
            title: "Then the gateway and the network between users and the server".into(),
            evidence: "The capture scrapes the server only: a gateway, load balancer, TLS termination or a slow network adds time no metric here can see.".into(),
            how: "Compare the gateway's access log (upstream time against total time) and a request through the gateway against one straight to the server.".into(),
        });
    }
    let truncated = crate::model::finding_of(analyses, FindingId::WorkloadTruncated)
        .or_else(|| crate::model::finding_of(analyses, FindingId::WorkloadPartlyTruncated));
    if let Some(f) = truncated {
        let all = f.id == FindingId::WorkloadTruncated;
        out.push(LookNext {
            id: LookNextId::ClientMaxTokens,
            title: if all {
                "The client's max_tokens: answers are cut short"
            } else {
                "The client's max_tokens: some answers are cut short"
            }
            .into(),
            evidence: format!(
                "{} (vllm:request_success_total by finished_reason, vllm:request_params_max_tokens); a cut answer reads as a slow or broken one.",
                f.title.trim_end_matches('.')
            ),
            how: "Check the max_tokens the client or gateway sends (vllm:request_params_max_tokens) against the answers users expect.".into(),
        });
    }
    if let Some(r) = recs.iter().find(|r| {
        matches!(
            r.id.as_str(),
            "standardise_prompt_prefix" | "shrink_block_size"
        )
    }) {
        out.push(LookNext {
            id: LookNextId::PromptPrefix,
            title: "The prompts: their shared prefix barely hits the cache".into(),
            evidence: r.rationale.clone(),
            how: format!(
                "Read how the application builds its prompts: a timestamp, a user name or retrieved text before the fixed part makes every prompt's prefix different (recommendation {}).",
                r.id
            ),
        });
    }
    out
}

/// The guide's "stop optimising prefill": every objective the engine
/// measures holds, decode is most of a request's engine time, and TTFT has
/// twice its peak load's headroom. Then prefill work cannot move what users
/// wait for (decode share %, TTFT headroom ×).
fn prefill_cannot_move_ttft(ctx: &Ctx<'_>) -> Option<(f64, f64)> {
    if !engine_holds(ctx) {
        return None;
    }
    let d = ctx.summary.latency.decode_share_pct?;
    let x = ctx
        .capacity
        .provisioning
        .dimensions
        .iter()
        .find(|d| d.id == "ttft_p95")
        .map(|d| d.headroom_x)?;
    (d >= DECODE_SHARE_PCT && x >= 2.0).then_some((d, x))
}

/// The tuning guide's follow-ups, where the capture supports each.
pub(crate) fn follow_ups(ctx: &Ctx<'_>, recs: &[Recommendation]) -> Vec<FollowUp> {
    if !engine_holds(ctx) {
        return Vec::new();
    }
    let rec = |id: &str| recs.iter().find(|r| r.id.as_str() == id);
    let mut out = Vec::new();
    let mut push = |id: FollowUpId, title: &str, evidence: String| {
        out.push(FollowUp {
            id,
            title: title.into(),
            evidence,
            recommendation: rec(id.as_str()).map(|r| r.id.clone()),
        });
    };
    let l = &ctx.summary.latency;
    let prov = &ctx.capacity.provisioning;
    if let Some((d, x)) = prefill_cannot_move_ttft(ctx) {
        // A prefix recommendation beside it is about compute, not what
        // users wait for: say so, so the two do not read as a contradiction.
        let prefix = recs
            .iter()
            .find(|r| {
                matches!(
                    r.id.as_str(),
                    "standardise_prompt_prefix" | "shrink_block_size"
                )
            })
            .map_or(String::new(), |r| {
                format!(
                    " A better prefix-cache hit rate (recommendation {}) still saves prefill compute: that is efficiency, not latency.",
                    r.id
                )
            });
        push(
            FollowUpId::StopOptimisingPrefill,
            "Stop optimising prefill",
            format!(
                "decode is {d:.0} % of the engine's time per request (prefill {}, decode {}), and TTFT has {x:.1}× headroom at the peak load: prefill work cannot move what users wait for.{prefix}",
                l.prefill_ms.map_or("?".into(), ms_text),
                l.decode_ms.map_or("?".into(), ms_text)
            ),
        );
    }
    if let Some(f) = ctx.capacity.floor.as_ref()
        && let Some(m) = f.measured_ms
        && m <= FLOOR_MULTIPLE * f.ms
        && !f.weight_source.contains("8-bit")
        && !f.weight_source.contains("4-bit")
    {
        push(
            FollowUpId::QuantizeBeforeBuying,
            "If more throughput is needed, quantize before buying hardware",
            format!(
                "a decode step takes {} on average against the {} it takes to stream the weights once ({}, {} at {:.0} GB/s): decode is memory-bound, so FP8 or INT4 weights shorten it before another GPU would.",
                ms_text(m),
                ms_text(f.ms),
                f.weight_source,
                f.gpu,
                f.bandwidth / 1e9
            ),
        );
    }
    if let Some(r) = rec("raise_max_tokens") {
        push(
            FollowUpId::RaiseMaxTokens,
            "Raise max_tokens",
            r.rationale.clone(),
        );
    }
    if let Some(r) = rec("standardise_prompt_prefix") {
        push(
            FollowUpId::StandardisePromptPrefix,
            "Standardise the prompt prefix",
            r.rationale.clone(),
        );
    }
    if let (Some(x), Some(peak)) = (prov.headroom_x, prov.peak_in_flight)
        && prov.status != ProvisioningStatus::CannotTell
    {
        let per_replica = peak / ctx.replicas.max(1) as f64;
        // The same target as the in-flight trigger the recommendations
        // carry: what the capture measured, not the headroom's
        // extrapolation (which lies beyond any load it saw).
        let target = crate::judge::ctx::in_flight_target(ctx);
        push(
            FollowUpId::SetAutoscalingTrigger,
            "Set the autoscaling trigger now",
            format!(
                "today's peak is ~{} requests in flight per replica and every objective holds up to ~{:.1}× that ({}, extrapolated beyond the peak): a trigger at ~{} in flight per replica (vllm:num_requests_running + vllm:num_requests_waiting; {}) adds a replica before the objectives fail, and is set while nothing is on fire.",
                num(per_replica.round()),
                x,
                prov.limiting.as_deref().unwrap_or("?"),
                num(target.per_replica),
                target.why
            ),
        );
    }
    let g = &ctx.summary.gpu;
    if let (Some(used), Some(free), Some(kv)) = (
        g.vram_used_mib,
        g.vram_free_mib,
        ctx.summary.efficiency.kv_cache_pct,
    ) && used + free > 0.0
        && 100.0 * used / (used + free) >= VRAM_RESERVED_PCT
        && kv < KV_EMPTY_PCT
    {
        push(
            FollowUpId::AlertOnQueueTime,
            "Alert on queue time, not VRAM",
            format!(
                "VRAM reads {:.0} % used (DCGM_FI_DEV_FB_USED) while the KV cache is at most {} full: vLLM reserves --gpu-memory-utilization up front, so VRAM stays high whatever the load; vllm:request_queue_time_seconds is what rises when users start to wait.",
                100.0 * used / (used + free),
                crate::text::pct_at_most(kv)
            ),
        );
    }
    if let Some(r) = ctx.summary.workload.gen_to_prompt_ratio {
        push(
            FollowUpId::WatchGenerationToPrompt,
            "Watch the generation-to-prompt ratio",
            format!(
                "{r:.2} tokens generated per prompt token today ({} prompt, {} generated on average): this report's bottleneck and headroom hold for this mix; a shift towards longer answers moves the limit to decode and the KV cache, towards longer prompts to prefill.",
                ctx.summary
                    .workload
                    .avg_prompt_tokens
                    .map_or("?".into(), |t| num(t.round())),
                ctx.summary
                    .workload
                    .avg_generated_tokens
                    .map_or("?".into(), |t| num(t.round()))
            ),
        );
    }
    out
}
