//! Step 3: the workload's shape. Decode- or prefill-heavy, answers cut off
//! at `max_tokens`, and whether the shape changed during the capture.

use vllm_lens_catalog::Signal;

use super::{Ctx, finding, missing};
use crate::model::{Finding, Severity};

/// The first and second half of the windows with a ratio: (first, second).
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
            let (id, title, text) = if r < 0.1 {
                (
                    "workload.prefill_heavy",
                    format!("Prefill-heavy: {r:.2} generated tokens per prompt token"),
                    "Long prompts, short answers (retrieval, classification, extraction). Time to first token and prefill throughput matter most; prefix caching and chunked prefill are the levers.",
                )
            } else if r >= 1.0 {
                (
                    "workload.decode_heavy",
                    format!("Decode-heavy: {r:.1} generated tokens per prompt token"),
                    "Short prompts, long answers (chat, generation). Inter-token latency and memory bandwidth matter most.",
                )
            } else {
                (
                    "workload.mixed",
                    format!("{r:.2} generated tokens per prompt token"),
                    "Neither prompts nor answers dominate the token flow.",
                )
            };
            out.push(finding(
                id,
                Severity::Info,
                title,
                text.into(),
                evidence,
                "",
            ));
        }
        None => out.push(missing("workload.tokens_missing", "Token flow", &tokens)),
    }
    // Truncation at max_tokens.
    let reasons = &ctx.summary.outcomes.completions_per_min;
    let length = reasons.get("length").copied().unwrap_or(0.0);
    let all: f64 = reasons.values().sum();
    let length_share = (all > 0.0).then(|| 100.0 * length / all);
    match (w.max_tokens_utilisation_pct, length_share) {
        (Some(u), share) if u >= 90.0 || share.is_some_and(|s| s >= 50.0) => out.push(finding(
            "workload.truncated",
            Severity::Warn,
            format!(
                "Answers are cut off at max_tokens: {}{u:.0} % of max_tokens used on average",
                share.map_or(String::new(), |s| format!("{s:.0} % end on length, "))
            ),
            "When the average answer is about as long as max_tokens, or most requests finish with finished_reason=\"length\", the model is being stopped mid-answer. Users see truncated output, and retries add load.".into(),
            vec![
                ctx.ev("average generated", w.avg_generated_tokens, "tokens", &[Signal::RequestGenerationTokens]),
                ctx.ev("average max_tokens", w.avg_max_tokens, "tokens", &[Signal::MaxTokens]),
                ctx.ev("share ending on length", share, "%", &[Signal::FinishedRequests]),
            ],
            "Raise the client's max_tokens (or ask for shorter answers in the prompt).",
        )),
        (Some(u), _) => out.push(finding(
            "workload.not_truncated",
            Severity::Pass,
            format!("Answers use {u:.0} % of max_tokens on average"),
            "Most answers end on their own before max_tokens.".into(),
            vec![ctx.ev("max_tokens used", Some(u), "%", &[Signal::RequestGenerationTokens, Signal::MaxTokens])],
            "",
        )),
        (None, Some(s)) if s >= 50.0 => out.push(finding(
            "workload.truncated",
            Severity::Warn,
            format!("{s:.0} % of requests end on length"),
            "Most requests stop because they reached max_tokens.".into(),
            vec![ctx.ev("share ending on length", Some(s), "%", &[Signal::FinishedRequests])],
            "Raise the client's max_tokens.",
        )),
        _ => {}
    }
    // Shape change.
    if let Some((a, b, at)) = halves(ctx)
        && a > 0.0
        && b > 0.0
        && (a / b >= 2.0 || b / a >= 2.0)
    {
        out.push(finding(
            "workload.shape_changed",
            Severity::Warn,
            format!("The workload changed shape: generated/prompt went from {a:.2} to {b:.2}"),
            "The two halves of the capture do not see the same kind of traffic, so a figure for the whole capture mixes two workloads. Tuning that fits one may not fit the other.".into(),
            vec![ctx.ev_at("generated ÷ prompt, first half → second half", Some(b / a), "×", &tokens, vec![at])],
            "Read the windows separately; re-check the tuning when the shape changes.",
        ));
    }
    out
}
