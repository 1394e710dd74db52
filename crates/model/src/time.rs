//! Time formatting without a clock (kept in the store crate, which the
//! loader shares): milliseconds since the Unix epoch to RFC 3339 text, and
//! durations for humans.

pub use vllm_lens_store::time::{civil_from_days, format_duration, format_rfc3339};

/// "14:05" (UTC) for a time in ms.
pub fn hhmm(ms: i64) -> String {
    let t = format_rfc3339(ms);
    // 2026-11-16T14:05:00Z → 14:05
    t.get(11..16).unwrap_or(&t).to_string()
}

/// "14:05:30" (UTC) for a time in ms.
pub fn hhmmss(ms: i64) -> String {
    let t = format_rfc3339(ms);
    t.get(11..19).unwrap_or(&t).to_string()
}
