/*!
The rate and quantile engine: counters, histograms and gauges read through
clock-aligned windows with Prometheus' semantics.

* [`grid`]: windows `[start, start + width)` aligned to multiples of the width
  (15 s to 1 h, default 1 min).
* [`counter`]: reset-aware increases (a drop, or a known restart), each
  attributed to the window of its later point; rate = increase ÷ the time
  the intervals cover; long gaps kept apart, never bridged silently.
* [`quantile`]: `histogram_quantile` exactly as Prometheus 2.42, with the
  bucket each quantile lies in.
* [`gauge`]: min, mean, max and last per window, combined by sum (counts) or
  mean (fractions).
* [`promql`]: Prometheus' own `rate` (with extrapolation) and instant
  lookups at a timestamp, for checking alert rules against a capture.
* [`query`]: all of that per logical signal of a [`vllm_lens_catalog::Catalogue`]:
  per-window sums over engines and replicas, histogram layouts checked
  before summing, per-target scrape coverage and gaps.
*/
#![deny(missing_docs)]

pub mod counter;
pub mod gauge;
pub mod grid;
pub mod promql;
pub mod quantile;
pub mod query;

#[cfg(test)]
mod props;

pub use counter::{CounterPath, CounterRules, KnownResets, WindowIncrease};
pub use gauge::{Combine, GaugeStats};
pub use grid::Grid;
pub use quantile::{Buckets, Position, Proof, Quantile, Verdict};
pub use query::{
    CounterSignal, Gap, HistWindow, HistogramSignal, LayoutGroup, Points, Query, Scope, Settings,
    TargetCoverage, WindowCoverage,
};
