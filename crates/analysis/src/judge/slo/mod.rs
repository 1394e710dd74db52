//! The SLO scorecard: four verdicts, each proven by the data or said to be
//! undecidable.
//!
//! - **Quantile objectives** (TTFT p95, inter-token p95) are judged from
//!   bucket edges only ([`vllm_lens_query::Buckets::prove`]): `pass` when
//!   the share of observations at or below the largest edge at or below the
//!   objective reaches 95 %, `fail` when the share at or below the smallest
//!   edge at or above it falls short, `cannot_tell` otherwise. Edges come
//!   from the data (they differ by release and can be configured). Per-window
//!   breaches follow the same rule.
//! - **Queueing** ("at N requests in flight, nothing waits") is judged from
//!   `crate::measure::queue`.
//! - **Errors + aborts** is a ratio of counts.
//!
//! A failing objective is decomposed into its parts (means only: TTFT is
//! observed at the first token, queue and prefill when the request ends).

use crate::SloId;
use crate::model::{SloResult, SloStatus};

mod evaluate;
pub mod registry;

pub(crate) use evaluate::{SloInput, TtftParts};
use evaluate::{picked, ttft_mean_parts};

/// Judges every objective of [`registry::SLOS`]; also the parts of time to
/// first token where it is in doubt.
pub(crate) fn scorecard(i: &SloInput<'_>) -> (Vec<SloResult>, Option<TtftParts>) {
    let results: Vec<SloResult> = registry::SLOS.iter().map(|s| (s.judge)(i)).collect();
    let parts = results
        .iter()
        .find(|r| r.id == SloId::TtftP95)
        .filter(|r| matches!(r.status, SloStatus::Fail | SloStatus::CannotTell))
        .and_then(|r| ttft_mean_parts(i, &picked(i, &r.failing_windows)));
    (results, parts)
}
