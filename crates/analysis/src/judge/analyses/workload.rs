//! Step 3: the workload's shape. Decode- or prefill-heavy, answers cut off
//! at `max_tokens`, and whether the shape changed during the capture.

use vllm_lens_catalog::Signal;

use crate::ids::FindingId as F;
use crate::judge::ctx::{Ctx, finding, missing};
use crate::measure::thresholds::{
    COMPLETIONS_DEFAULT_MAX_TOKENS, DECODE_HEAVY_RATIO, LENGTH_NOTABLE_PCT, LENGTH_SHARE_PCT,
    PREFILL_HEAVY_RATIO, SHAPE_CHANGE_FACTOR, TRUNCATION_UTIL_PCT,
};
use crate::model::{Finding, Severity};

/// The first and second half of the windows with a ratio: (first, second,
/// the second half's first window).
pub(crate) fn halves(ctx: &Ctx<'_>) -> Option<(f64, f64, i64)> {
    let ratios: Vec<(f64, i64)> = ctx
        .windows
        .iter()
        .filter_map(|w| w.workload.gen_to_prompt_ratio.map(|r| (r, w.start_ms)))
        .collect();
    if ratios.len() < 4 {
        return None;
    }
    let mid = ratios.len() / 2;
    let mean = |s: &[(f64, i64)]| s.iter().map(|x| x.0).sum::<f64>() / s.len() as f64;
    Some((mean(&ratios[..mid]), mean(&ratios[mid..]), ratios[mid].1))
}

/// The halves when they differ by [`SHAPE_CHANGE_FACTOR`] or more.
pub(crate) fn shape_change(ctx: &Ctx<'_>) -> Option<(f64, f64, i64)> {
    halves(ctx).filter(|&(a, b, _)| {
        a > 0.0 && b > 0.0 && (a / b >= SHAPE_CHANGE_FACTOR || b / a >= SHAPE_CHANGE_FACTOR)
    })
}

/// The share of finished requests that ended on `length`, %.
pub(crate) fn length_share(ctx: &Ctx<'_>) -> Option<f64> {
    let reasons = &ctx.summary.outcomes.completions_per_min;
    let all: f64 = reasons.values().sum();
    (all > 0.0).then(|| 100.0 * reasons.get("length").copied().unwrap_or(0.0) / all)
}

/// True when the mean use of max_tokens is below the share of requests
/// that end on length (each of those used all of theirs): the mean
/// max_tokens is inflated by requests with a far larger one, the server's
/// default (max_model_len − prompt) for requests that set none.
pub(crate) fn max_tokens_diluted(ctx: &Ctx<'_>) -> bool {
    matches!(
        (ctx.summary.workload.max_tokens_utilisation_pct, length_share(ctx)),
        (Some(u), Some(s)) if u < s
    )
}

/// True when most HTTP requests went to `/v1/completions` and max_tokens
/// is 16 on average: the legacy completions API's default for requests
/// that set none, so the requests cut at it may not have asked for 16.
pub(crate) fn completions_default(ctx: &Ctx<'_>) -> bool {
    let by = &ctx.summary.outcomes.http_per_min_by_handler;
    let all: f64 = by.values().flat_map(|s| s.values()).sum();
    let completions: f64 = by.get("/v1/completions").map_or(0.0, |s| s.values().sum());
    all > 0.0
        && completions >= 0.5 * all
        && ctx
            .summary
            .workload
            .avg_max_tokens
            .is_some_and(|m| (m - COMPLETIONS_DEFAULT_MAX_TOKENS).abs() < 0.5)
}

/// True when answers are cut at max_tokens.
pub(crate) fn truncated(ctx: &Ctx<'_>) -> bool {
    ctx.summary
        .workload
        .max_tokens_utilisation_pct
        .is_some_and(|u| u >= TRUNCATION_UTIL_PCT)
        || length_share(ctx).is_some_and(|s| s >= LENGTH_SHARE_PCT)
}

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let w = &ctx.summary.workload;
    let tokens = [Signal::GenerationTokens, Signal::PromptTokens];
    match w.gen_to_prompt_ratio {
        Some(r) => {
            let evidence = vec![
                ctx.ev("generated ÷ prompt tokens", Some(r), "", &tokens),
                ctx.ev(
                    "average prompt",
                    w.avg_prompt_tokens,
                    "tokens",
                    &[Signal::RequestPromptTokens],
                ),
                ctx.ev(
                    "average generated",
                    w.avg_generated_tokens,
                    "tokens",
                    &[Signal::RequestGenerationTokens],
                ),
            ];
            let (id, title) = if r < PREFILL_HEAVY_RATIO {
                (
                    F::WorkloadPrefillHeavy,
                    format!("Prefill-heavy: {r:.2} generated tokens per prompt token"),
                )
            } else if r >= DECODE_HEAVY_RATIO {
                (
                    F::WorkloadDecodeHeavy,
                    format!("Decode-heavy: {r:.1} generated tokens per prompt token"),
                )
            } else {
                (
                    F::WorkloadMixed,
                    format!("{r:.2} generated tokens per prompt token"),
                )
            };
            out.push(finding(id, Severity::Info, title, evidence, &[]));
        }
        None => out.push(missing(F::WorkloadTokensMissing, "Token flow", &tokens)),
    }
    truncation(ctx, &mut out);
    if let Some((a, b, at)) = shape_change(ctx) {
        out.push(finding(
            F::WorkloadShapeChanged,
            Severity::Warn,
            format!("The workload changed shape: generated/prompt went from {a:.2} to {b:.2}"),
            vec![ctx.ev_at(
                "generated ÷ prompt, first half → second half",
                Some(b / a),
                "×",
                &tokens,
                vec![at],
            )],
            &[],
        ));
    }
    out
}

/// Truncation at max_tokens, the share that ends on length first.
fn truncation(ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let w = &ctx.summary.workload;
    // Truncation at max_tokens: the share that ends on length first (a
    // count of requests, whatever their max_tokens); the mean use of
    // max_tokens after it, unless server defaults inflate that mean.
    let share = length_share(ctx);
    let share_ev = ctx.ev(
        "share ending on length",
        share,
        "%",
        &[Signal::FinishedRequests],
    );
    let util = w.max_tokens_utilisation_pct;
    let diluted = max_tokens_diluted(ctx);
    let util_ev = ctx.ev(
        "max_tokens used (mean generated ÷ mean max_tokens)",
        util,
        "%",
        &[Signal::RequestGenerationTokens, Signal::MaxTokens],
    );
    let max_ev = ctx.ev(
        "average max_tokens",
        w.avg_max_tokens,
        "tokens",
        &[Signal::MaxTokens],
    );
    // What the mean use of max_tokens says, after the share.
    let util_words = match util {
        Some(u) if diluted => format!(
            "; the mean max_tokens ({} tokens) includes requests that set none and got the server's default (max_model_len − prompt), so the {u:.0} % of it answers use says nothing about the others",
            w.avg_max_tokens
                .map_or("?".into(), |m| crate::text::num(m.round()))
        ),
        Some(u) => format!("; answers use {u:.0} % of max_tokens on average"),
        None => String::new(),
    };
    let share_words = |s: f64| {
        format!(
            "{} of requests end on length{}",
            crate::text::share_text(Some(s)),
            if completions_default(ctx) {
                " (max_tokens 16 on average: what /v1/completions gives requests that set none)"
            } else {
                ""
            }
        )
    };
    match share {
        _ if truncated(ctx) => out.push(finding(
            F::WorkloadTruncated,
            Severity::Warn,
            match share {
                Some(s) => format!(
                    "Answers are cut off at max_tokens: {}{util_words}",
                    share_words(s)
                ),
                None => format!(
                    "Answers are cut off at max_tokens: {:.0} % of max_tokens used on average",
                    util.unwrap_or_default()
                ),
            },
            vec![
                ctx.ev(
                    "average generated",
                    w.avg_generated_tokens,
                    "tokens",
                    &[Signal::RequestGenerationTokens],
                ),
                max_ev,
                share_ev,
                util_ev,
            ],
            &[],
        )),
        Some(s) if s >= LENGTH_NOTABLE_PCT => out.push(finding(
            F::WorkloadPartlyTruncated,
            Severity::Warn,
            format!(
                "{}: their answers were cut at max_tokens{util_words}",
                share_words(s)
            ),
            vec![share_ev, util_ev, max_ev],
            &[("share", crate::text::share_text(Some(s)))],
        )),
        Some(s) => out.push(finding(
            F::WorkloadNotTruncated,
            Severity::Pass,
            format!("Answers end on their own: {}{util_words}", share_words(s)),
            vec![share_ev, util_ev],
            &[],
        )),
        None => {
            if let Some(u) = util {
                out.push(finding(
                    F::WorkloadNotTruncated,
                    Severity::Pass,
                    format!("Answers use {u:.0} % of max_tokens on average"),
                    vec![util_ev],
                    &[],
                ))
            }
        }
    }
}
