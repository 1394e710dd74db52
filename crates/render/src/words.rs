//! The few phrases every output shares (terminal, Markdown, HTML), so the
//! three say the same thing: a verdict's word, an objective's measured
//! value and headroom in honest units (the bucket a quantile lies in,
//! percentage points for a percentage, requests in flight for queueing),
//! what a snippet would have done.

use vllm_lens_model::ids::SloKind;
use vllm_lens_model::text::{bucket_text, ms_text, num};
use vllm_lens_model::{Confidence, Phase, Report, SloResult, SloStatus, Snippet, VerdictStatus};

/// The verdict in capitals, for a headline.
pub fn verdict_word(s: VerdictStatus) -> &'static str {
    match s {
        VerdictStatus::Healthy => "HEALTHY",
        VerdictStatus::AtRisk => "AT RISK",
        VerdictStatus::Failing => "FAILING",
        VerdictStatus::CannotTell => "CANNOT TELL",
    }
}

/// An objective's status in a word.
pub fn status_word(s: SloStatus) -> &'static str {
    match s {
        SloStatus::Pass => "pass",
        SloStatus::Fail => "FAIL",
        SloStatus::NotExercised => "not exercised",
        SloStatus::CannotTell => "cannot tell",
    }
}

/// An objective's status with its symbol.
pub fn status_mark(s: SloStatus) -> &'static str {
    match s {
        SloStatus::Pass => "✔ pass",
        SloStatus::Fail => "✖ FAIL",
        SloStatus::NotExercised => "– not exercised",
        SloStatus::CannotTell => "? cannot tell",
    }
}

/// What was measured, in words: `p95 between 250 and 500 ms`, `queueing
/// from 29 in flight`, `0.12 %`.
pub fn slo_value(s: &SloResult) -> String {
    match s.id.kind() {
        SloKind::Quantile => match s.bounds {
            Some(b) => format!(
                "p95 {}",
                bucket_text(b.low, b.high.unwrap_or(f64::INFINITY))
            ),
            None => "missing".into(),
        },
        SloKind::Queue => match (s.queueing_starts_at, s.value) {
            (Some(start), _) => format!(
                "queueing from {} in flight{}",
                num(start),
                s.admission_cap
                    .map_or(String::new(), |c| format!(", at most {} running", num(c)))
            ),
            (None, Some(peak)) => format!("nothing queued up to {} in flight", num(peak)),
            (None, None) => "missing".into(),
        },
        SloKind::Rate => s
            .value
            .map_or("missing".into(), |v| format!("{} %", num(v))),
    }
}

/// The margin, in words.
pub fn slo_headroom(s: &SloResult) -> String {
    match (s.id.kind(), s.status) {
        (_, SloStatus::NotExercised) => "—".into(),
        (SloKind::Quantile, SloStatus::CannotTell) => "the objective lies inside the bucket".into(),
        (SloKind::Quantile, SloStatus::Pass) => match s.bounds {
            Some(b) => {
                let hi = s.threshold - b.low;
                let lo = s.headroom.unwrap_or(0.0).max(0.0);
                if lo > 0.0 {
                    format!("{} to {}", ms_text(lo), ms_text(hi))
                } else {
                    format!("up to {}", ms_text(hi))
                }
            }
            None => "—".into(),
        },
        (SloKind::Quantile, _) => match s.bounds {
            Some(b) if b.low >= 2.0 * s.threshold => {
                let x = b.low / s.threshold;
                format!(
                    "none: over {}× the objective",
                    if x >= 10.0 { format!("{x:.0}") } else { num(x) }
                )
            }
            Some(b) if b.low > s.threshold => {
                format!("none: over by at least {}", ms_text(b.low - s.threshold))
            }
            _ => "none".into(),
        },
        (SloKind::Queue, _) => match (s.queueing_starts_at, s.headroom) {
            (Some(_), Some(h)) if h >= 0.0 => format!("{} more in flight before queueing", num(h)),
            (Some(start), Some(_)) => format!(
                "none: queueing starts at {}, not above {}",
                num(start),
                num(s.threshold)
            ),
            (None, Some(h)) if h > 0.0 => format!("at least {} more in flight", num(h)),
            (None, Some(_)) => format!("{} reached without queueing", num(s.threshold)),
            _ => "—".into(),
        },
        (SloKind::Rate, _) => match s.headroom {
            Some(h) if h >= 0.0 => format!("{} pp", num(h)),
            Some(h) => format!("none: over by {} pp", num(-h)),
            None => "—".into(),
        },
    }
}

/// Windows proven over, undecided, left out.
pub fn slo_windows(s: &SloResult) -> String {
    let mut parts = Vec::new();
    if !s.failing_windows.is_empty() {
        parts.push(format!("{} over", plural_windows(s.failing_windows.len())));
    }
    if !s.cannot_tell_windows.is_empty() {
        parts.push(format!("{} undecided", s.cannot_tell_windows.len()));
    }
    if !s.excluded_windows.is_empty() {
        parts.push(format!("{} left out", s.excluded_windows.len()));
    }
    parts.join(", ")
}

/// "1 window", "3 windows".
fn plural_windows(n: usize) -> String {
    if n == 1 {
        "1 window".into()
    } else {
        format!("{n} windows")
    }
}

/// A confidence in a word.
pub fn confidence_word(c: Confidence) -> &'static str {
    match c {
        Confidence::High => "high",
        Confidence::Medium => "medium",
        Confidence::Low => "low",
    }
}

/// What a snippet would have done over the capture.
pub fn snippet_check(s: &Snippet) -> String {
    let what = if s.kind == "keda" {
        "would have scaled out"
    } else {
        "would have fired"
    };
    format!(
        "Checked against this capture: {what} in {} of {} windows{}.",
        s.check.windows_fired,
        s.check.windows_total,
        s.check
            .fired_at
            .first()
            .map_or(String::new(), |t| format!(", first at {}", hhmm(*t)))
    )
}

/// `14:05` (UTC) of a time in ms.
pub fn hhmm(ms: i64) -> String {
    let t = vllm_lens_model::time::format_rfc3339(ms);
    t.get(11..16).unwrap_or(&t).to_string()
}

/// A phase's kind in words.
pub fn phase_kind(p: &Phase) -> &'static str {
    p.kind.words()
}

/// `14:00–14:05 steady`
pub fn phase_label(p: &Phase) -> String {
    format!("{}–{} {}", hhmm(p.start_ms), hhmm(p.end_ms), phase_kind(p))
}

/// The report's alerts in one line: `VllmRequestsQueueing 4 of 10 windows;
/// …` (empty when there are none).
pub fn alerts_line(snippets: &[Snippet]) -> String {
    snippets
        .iter()
        .map(|s| {
            format!(
                "{} would have {} in {} of {} windows",
                s.name,
                if s.kind == "keda" {
                    "scaled out"
                } else {
                    "fired"
                },
                s.check.windows_fired,
                s.check.windows_total
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A recommendation's levers in words: "a higher --max-num-seqs; a lower
/// max_tokens in the client", each knob as it is set on the report's
/// platform.
pub fn levers(r: &Report, levers: &[vllm_lens_model::Lever]) -> String {
    let platform = vllm_lens_model::Platform::of(&r.deployment);
    levers
        .iter()
        .map(|l| l.words(platform))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What to do when no recommendation fired: nothing to change, or, where
/// an objective fails, that no rule found a change for it (the failure
/// stands, and where to look next says where to start).
pub fn no_recommendation(r: &Report) -> String {
    let failing: Vec<&str> = r
        .slo
        .iter()
        .filter(|s| s.status == SloStatus::Fail)
        .map(|s| s.title.as_str())
        .collect();
    if failing.is_empty() {
        "Nothing needs to change: no rule found its evidence in this capture.".into()
    } else {
        format!(
            "No recommendation, although {} {}: no rule of this tool found the evidence for a change that would meet {}. The failure stands; start from where to look next.",
            failing.join("; "),
            if failing.len() == 1 { "fails" } else { "fail" },
            if failing.len() == 1 { "it" } else { "them" }
        )
    }
}
