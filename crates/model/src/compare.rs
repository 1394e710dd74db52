//! The comparison of two reports as the renderers print it (its JSON):
//! the comparability guard's verdict and reasons, every key figure before
//! and after with its direction, the SLO verdicts side by side, and the
//! recommendations that appeared or went away. The analysis crate's
//! `advise::compare` makes it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{RecId, SloId};
use crate::report::SloStatus;

/// Version of the comparison's JSON layout.
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

/// How fair the comparison is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fairness {
    /// Same model, hardware and workload: differences are the change's.
    Comparable,
    /// Something besides the change differs; read with care.
    Weak,
    /// Different workloads or models: the figures cannot be compared.
    NotComparable,
}

/// Which way a figure moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Moved the good way, beyond the window-to-window variation.
    Better,
    /// Moved the bad way, beyond the window-to-window variation.
    Worse,
    /// Within the variation of the two captures.
    NoClearChange,
    /// Missing in one of the captures.
    Missing,
}

/// One figure before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FigureChange {
    /// Stable key (`ttft_p95_ms`).
    pub key: String,
    /// What it is.
    pub label: String,
    /// Unit.
    pub unit: String,
    /// True when lower is better.
    pub lower_is_better: bool,
    /// Whole-capture value before.
    pub before: Option<f64>,
    /// Whole-capture value after.
    pub after: Option<f64>,
    /// (after − before) ÷ before, %.
    pub change_pct: Option<f64>,
    /// Range of the per-window values before: [min, max].
    pub before_range: Option<[f64; 2]>,
    /// Range of the per-window values after.
    pub after_range: Option<[f64; 2]>,
    /// The verdict.
    pub direction: Direction,
}

/// One side of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Side {
    /// Bundle name.
    pub bundle: String,
    /// SHA-256 of the bundle.
    pub sha256: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// GPU model and count.
    pub gpu: String,
    /// Inferred vLLM range.
    pub vllm_versions: Option<String>,
    /// Capture start, ms.
    pub start_ms: Option<i64>,
    /// Capture length, ms.
    pub duration_ms: Option<i64>,
    /// Scrape interval, ms.
    pub scrape_interval_ms: Option<i64>,
    /// SLO verdicts: id, status, value, unit.
    pub slo: Vec<(SloId, SloStatus, Option<f64>, String)>,
    /// Recommendation ids, ranked.
    pub recommendations: Vec<RecId>,
}

/// A time series of both captures on a relative time axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Overlay {
    /// Key of the figure.
    pub key: String,
    /// Title.
    pub title: String,
    /// Unit.
    pub unit: String,
    /// Per window before.
    pub before: Vec<Option<f64>>,
    /// Per window after.
    pub after: Vec<Option<f64>>,
}

/// The comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    /// Version of this layout.
    pub schema_version: u32,
    /// The tool version.
    pub tool_version: String,
    /// Before.
    pub before: Side,
    /// After.
    pub after: Side,
    /// How fair the comparison is.
    pub fairness: Fairness,
    /// Why, in plain words (most serious first).
    pub reasons: Vec<String>,
    /// True when the second capture started with a warm prefix cache.
    pub warm_prefix_cache: bool,
    /// Every key figure.
    pub figures: Vec<FigureChange>,
    /// Recommendations that fire after but not before.
    pub recommendations_appeared: Vec<RecId>,
    /// Recommendations that fired before but not after.
    pub recommendations_gone: Vec<RecId>,
    /// Main series, overlaid from each capture's start.
    pub overlays: Vec<Overlay>,
    /// Window width, ms (both reports use the same settings).
    pub window_ms: i64,
}
