//! Rules on outcomes: restarts, bursts, refused requests, clients that
//! hang up, answers cut short, and a workload that changed shape.

use vllm_lens_catalog::Signal;

use crate::advise::levers::{Knob, down, up};
use crate::advise::rules::rule::{Fired, In, Rule, Words, ev_itl_mean, pct};
use crate::ids::{Addresses as A, FindingId, RecId, SloId};
use crate::judge::analyses::workload;
use crate::judge::bursts::BurstOf;
use crate::model::{Confidence, Severity};
use crate::text::{ms_text, num};

const HTTP_BEFORE_ENGINE: &str =
    "more requests fail at the HTTP layer than in the engine, so most never reached it.";
const HTTP_TRACKS_ENGINE: &str = "the HTTP errors track the engine's own.";
const OR_LOWER_MAX_TOKENS: &str = " or lower max_tokens to fit it";
pub(super) const INVESTIGATE_RESTART: Rule = Rule {
    id: RecId::new("investigate_restart"),
    levers: &[],
    addresses: &[A::ErrorAbortRate, A::Reliability],
    investigation: true,
    words: Words {
        title: "Find why the server restarted",
        why: "{replica} restarted {times} during the capture: unreachable for up to {down}, losing {lost}.",
        action: "Find what stopped the old process after its last scrape at {last} (the new one started at {time}): on Kubernetes, the pod's last state (kubectl describe pod: OOMKilled, liveness probe, eviction) and the previous container's log (kubectl logs --previous); on a host, the kernel log for the OOM killer (dmesg) and the service's journal. With one replica, new requests fail for as long as it is down: a second replica behind the load balancer keeps serving them (the requests in flight on the stopped one still fail unless clients retry).",
        caveat: "A planned rollout also restarts the server; then the lost requests are the cost of the rollout strategy.",
    },
    fire: investigate_restart,
};

fn investigate_restart(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let first = ctx.restarts.first()?;
    let mut f = Fired::new(
        Vec::new(),
        [
            i.doubtful(&[SloId::ErrorAbortRate], 0.5),
            vec![(A::Reliability, 1.0)],
        ]
        .concat(),
        vec![
            ("replica", first.replica.clone()),
            (
                "times",
                crate::text::plural(ctx.restarts.len(), "time", "times"),
            ),
            (
                "down",
                first.down_ms().map_or("?".into(), |d| ms_text(d as f64)),
            ),
            (
                "lost",
                first
                    .lost_words()
                    .unwrap_or_else(|| "the requests in flight".into()),
            ),
            ("time", crate::time::format_rfc3339(first.when_ms())),
            (
                "last",
                first
                    .last_old_ms
                    .map_or("?".into(), crate::time::format_rfc3339),
            ),
        ],
        Confidence::High,
    );
    f.evidence = ctx
        .restarts
        .iter()
        .map(|x| {
            ctx.ev_at(
                &format!("{} in flight lost", x.replica),
                x.in_flight_lost,
                "requests",
                &[Signal::ProcessStart, Signal::Running, Signal::Waiting],
                vec![x.seen_ms],
            )
        })
        .collect();
    Some(f)
}

pub(super) const INVESTIGATE_ERROR_BURST: Rule = Rule {
    id: RecId::new("investigate_error_burst"),
    levers: &[],
    addresses: &[A::ErrorAbortRate, A::Reliability],
    investigation: true,
    words: Words {
        title: "Find what caused the burst of errors",
        why: "From {from} to {to}: {what}. The capture's own rate does not explain that many in so few requests.",
        action: "Read the server and gateway logs from {from} to {to}. 4xx are requests the server refused (client bugs, validation, payload size); 5xx and finished_reason=\"error\" failed in the server; aborts are requests the engine cancelled.",
        caveat: "A burst during a deploy or a client's load test may be expected; then exclude those minutes from the objective.",
    },
    fire: investigate_error_burst,
};

/// The largest burst (by failures): what to read the logs for.
fn investigate_error_burst(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let b = ctx.bursts.iter().max_by(|a, b| {
        let bad =
            |x: &crate::judge::bursts::Burst| x.tests.iter().map(|t| t.burst.bad).sum::<f64>();
        bad(a).total_cmp(&bad(b))
    })?;
    let (from, to) = (ctx.windows[b.start].start_ms, ctx.window_end(b.end - 1));
    let words: Vec<String> = b
        .tests
        .iter()
        .map(crate::judge::bursts::burst_words)
        .collect();
    let engine = b.tests.iter().any(|t| t.of == BurstOf::Engine);
    let mut f = Fired::new(
        Vec::new(),
        [
            if engine {
                i.doubtful(&[SloId::ErrorAbortRate], 1.0)
            } else {
                Vec::new()
            },
            vec![(A::Reliability, 1.0)],
        ]
        .concat(),
        vec![
            ("from", crate::time::format_rfc3339(from)),
            ("to", crate::time::format_rfc3339(to)),
            ("what", words.join("; ")),
        ],
        Confidence::High,
    );
    f.evidence = b
        .tests
        .iter()
        .flat_map(|t| {
            let (label, signal) = match t.of {
                BurstOf::Engine => ("error + abort", Signal::FinishedRequests),
                BurstOf::Http => ("HTTP 4xx + 5xx", Signal::HttpRequests),
            };
            [
                ctx.ev_at(
                    &format!("{label} in the burst"),
                    Some(t.burst.bad),
                    "requests",
                    &[signal],
                    vec![from],
                ),
                ctx.ev_at(
                    &format!("{label} share in the burst"),
                    t.burst.pct(),
                    "%",
                    &[signal],
                    vec![from],
                ),
                ctx.ev(
                    &format!("{label} share over the capture"),
                    t.capture.pct(),
                    "%",
                    &[signal],
                ),
                ctx.ev(
                    "binomial p-value against the capture's rate",
                    Some(t.p_value),
                    "",
                    &[signal],
                ),
            ]
        })
        .collect();
    Some(f)
}

pub(super) const INVESTIGATE_HTTP_ERRORS: Rule = Rule {
    id: RecId::new("investigate_http_errors"),
    levers: &[],
    addresses: &[A::Reliability],
    investigation: true,
    words: Words {
        title: "Find the requests the server refused or failed",
        why: "{http} of HTTP requests were answered 4xx or 5xx ({r4xx} 4xx and {r5xx} 5xx per minute) while {engine} of finished requests ended in error or abort: {where}",
        action: "Read the API server's access log (or the gateway's) for those status codes and the clients that sent them. A 400 is a malformed request or a parameter out of range (a prompt longer than --max-model-len, an unknown field), a 404 a wrong path or model name, a 429 or 503 overload; 5xx failed in the server.",
        caveat: "4xx are the clients' mistakes, not the server's: the deployment may need no change, but the users behind those requests got no answer.",
    },
    fire: investigate_http_errors,
};

/// HTTP errors beyond the line, outside a burst (a burst has its own).
fn investigate_http_errors(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let severity = crate::model::severity_of(i.analyses, FindingId::OutcomesHttpErrors);
    if severity != Some(Severity::Fail)
        || ctx
            .bursts
            .iter()
            .any(|b| b.tests.iter().any(|t| t.of == BurstOf::Http))
    {
        return None;
    }
    let o = &ctx.summary.outcomes;
    let per = |k: &str| o.http_per_min_by_status.get(k).copied();
    let engine = o.error_abort_pct.unwrap_or(0.0);
    let where_ = if o.http_error_pct.is_some_and(|h| h > engine * 1.5) {
        HTTP_BEFORE_ENGINE
    } else {
        HTTP_TRACKS_ENGINE
    };
    let mut f = Fired::new(
        Vec::new(),
        vec![(A::Reliability, 1.0)],
        vec![
            ("http", pct(o.http_error_pct)),
            ("r4xx", per("4xx").map_or("0".into(), num)),
            ("r5xx", per("5xx").map_or("0".into(), num)),
            ("engine", pct(o.error_abort_pct)),
            ("where", where_.to_string()),
        ],
        Confidence::High,
    );
    f.evidence = crate::model::finding_of(i.analyses, FindingId::OutcomesHttpErrors)
        .map(|x| x.evidence.clone())
        .unwrap_or_default();
    Some(f)
}

pub(super) const ALIGN_CLIENT_TIMEOUTS: Rule = Rule {
    id: RecId::new("align_client_timeouts"),
    levers: &[up(Knob::ClientTimeout), down(Knob::ClientMaxTokens)],
    addresses: &[A::ErrorAbortRate, A::Reliability, A::Quality],
    investigation: false,
    words: Words {
        title: "Give clients a deadline their answers can meet",
        why: "At least {n} requests ({share} of the requests that finished or hung up) were answered 2xx but never finished in the engine: their clients hung up before the answer was complete (a lower bound: a client that hangs up as its answer ends is counted as finished).",
        action: "Compare the clients' time-out with the longest answers they ask for. Here answers start after {ttft} (mean) and then stream at about {rate} tokens per second ({itl} per token, mean): a 2 s deadline fits answers of up to about {in2} tokens, 10 s about {in10}, 60 s about {in60}. Raise the time-out{or_lower} (vLLM records max_tokens only for requests that finish, so the requests cut off are not in its histogram); vLLM stops a request when its client goes, so the cost is answers users never saw.",
        caveat: "The figure is an estimate (HTTP 2xx on completion handlers minus finished requests); a proxy that retries can inflate it.",
    },
    fire: align_client_timeouts,
};

/// Clients hang up before their answers finish: how long answers take at
/// this server's pace, so the deadline can fit them.
fn align_client_timeouts(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let finding = crate::model::finding_of(i.analyses, FindingId::OutcomesClientDisconnects)
        .filter(|f| f.severity == Severity::Warn)?;
    let o = &ctx.summary.outcomes;
    let n = o.client_disconnects?;
    let l = &ctx.summary.latency;
    let (ttft, itl) = (l.ttft_ms, l.inter_token_ms.filter(|x| *x > 0.0));
    // Tokens an answer can hold within a deadline of `s` seconds.
    let fits = |s: f64| {
        ttft.zip(itl)
            .map(|(t, x)| num(((s * 1000.0 - t) / x).max(0.0).floor()))
            .unwrap_or_else(|| "?".into())
    };
    let levers = i.allowed(ALIGN_CLIENT_TIMEOUTS.levers);
    let lower = levers.contains(&down(Knob::ClientMaxTokens));
    let mut f = Fired::new(
        levers,
        [
            i.doubtful(&[SloId::ErrorAbortRate], 1.0),
            vec![(A::Reliability, 1.0), (A::Quality, 1.0)],
        ]
        .concat(),
        vec![
            ("n", num(n.round())),
            ("share", pct(finding.evidence.get(1).and_then(|e| e.value))),
            ("ttft", ttft.map_or("?".into(), ms_text)),
            ("itl", itl.map_or("?".into(), ms_text)),
            (
                "rate",
                itl.map_or("?".into(), |x| num((1000.0 / x).round())),
            ),
            ("in2", fits(2.0)),
            ("in10", fits(10.0)),
            ("in60", fits(60.0)),
            (
                "or_lower",
                if lower {
                    OR_LOWER_MAX_TOKENS.to_string()
                } else {
                    String::new()
                },
            ),
        ],
        Confidence::Medium,
    );
    f.evidence = finding.evidence.iter().take(2).cloned().collect();
    f.evidence
        .push(ctx.ev("time to first token (mean)", ttft, "ms", &[Signal::Ttft]));
    f.evidence.push(ev_itl_mean(ctx));
    Some(f)
}

pub(super) const RAISE_MAX_TOKENS: Rule = Rule {
    id: RecId::new("raise_max_tokens"),
    levers: &[up(Knob::ClientMaxTokens)],
    addresses: &[A::Quality],
    investigation: false,
    words: Words {
        title: "Raise the client's max_tokens",
        why: "{length} of requests end on length and answers use {used}{cut}",
        action: "Raise max_tokens in the client (or ask for shorter answers in the prompt); then expect decode time per request to grow.",
        caveat: "A deliberately low max_tokens (cost control, UI limits) is a product decision; then the figure is expected.",
    },
    fire: raise_max_tokens,
};

/// Answers cut at max_tokens: users see it whatever the objectives.
fn raise_max_tokens(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    if !workload::truncated(ctx) {
        return None;
    }
    let share = workload::length_share(ctx);
    let util = ctx.summary.workload.max_tokens_utilisation_pct;
    // Every request stopped at exactly its max_tokens: a load test that
    // fixes the answer length (ignore_eos), not users' answers cut short.
    use crate::measure::thresholds::FIXED_LENGTH_PCT;
    let fixed = share.is_some_and(|s| s >= FIXED_LENGTH_PCT)
        && util.is_some_and(|u| (FIXED_LENGTH_PCT..=200.0 - FIXED_LENGTH_PCT).contains(&u));
    let mut f = Fired::new(
        vec![up(Knob::ClientMaxTokens)],
        vec![(A::Quality, 1.0)],
        vec![
            ("length", share.map_or("?".into(), |l| format!("{l:.0} %"))),
            (
                "used",
                match util {
                    Some(_) if workload::max_tokens_diluted(ctx) => {
                        "an unknown share of their own max_tokens (the mean includes server defaults)"
                            .to_string()
                    }
                    Some(u) => format!("{u:.0} % of max_tokens"),
                    None => "? of max_tokens".to_string(),
                },
            ),
            (
                "cut",
                if workload::completions_default(ctx) {
                    ": answers are being cut off. Most requests went to /v1/completions, which gives 16 tokens to a request that sets no max_tokens; set max_tokens in each request to what its answer needs."
                } else if fixed {
                    ": every request stopped at exactly its max_tokens, the signature of a load test that fixes the answer length (ignore_eos with a fixed max_tokens). If real users send these requests, their answers are cut off."
                } else {
                    ": answers are being cut off, which users see as truncated output."
                }
                .to_string(),
            ),
        ],
        if fixed { Confidence::Low } else { Confidence::High },
    );
    f.evidence = vec![
        ctx.ev(
            "share ending on length",
            share,
            "%",
            &[Signal::FinishedRequests],
        ),
        ctx.ev(
            "max_tokens used",
            util,
            "%",
            &[Signal::RequestGenerationTokens, Signal::MaxTokens],
        ),
    ];
    Some(f)
}

pub(super) const REVISIT_ON_SHAPE_CHANGE: Rule = Rule {
    id: RecId::new("revisit_on_shape_change"),
    levers: &[],
    addresses: &[A::Efficiency],
    investigation: true,
    words: Words {
        title: "Revisit the tuning: the workload changed shape",
        why: "Generated tokens per prompt token moved from {from} to {to} during the capture; settings tuned for one shape may not suit the other.",
        action: "Capture each traffic pattern separately and compare; alert when the generated/prompt ratio moves by more than 2×.",
        caveat: "A short capture can catch a burst that is not typical.",
    },
    fire: revisit_on_shape_change,
};

/// The workload changed shape during the capture.
fn revisit_on_shape_change(i: &In<'_>) -> Option<Fired> {
    let ctx = i.ctx;
    let (a, b, at) = workload::shape_change(ctx)?;
    let mut f = Fired::new(
        Vec::new(),
        vec![(A::Efficiency, 1.0)],
        vec![("from", format!("{a:.2}")), ("to", format!("{b:.2}"))],
        Confidence::Medium,
    );
    f.evidence = vec![ctx.ev_at(
        "generated ÷ prompt, second half vs first",
        Some(b / a),
        "×",
        &[Signal::GenerationTokens, Signal::PromptTokens],
        vec![at],
    )];
    Some(f)
}
