//! Time formatting without a clock (kept in the store crate, which the
//! loader shares): milliseconds since the Unix epoch to RFC 3339 text, and
//! durations for humans.

pub use vllm_lens_store::time::{civil_from_days, format_duration, format_rfc3339};
