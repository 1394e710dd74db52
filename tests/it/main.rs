//! The one integration-test binary (see ARCHITECTURE.md, "Testing").

/// Fixture builders: scrapes over time, archives, temporary folders.
mod support;

/// Bundle cases: containers, manifest, names, limits, bad input.
mod bundle;
/// The capacity model against the samples' truth and hand-made fixtures.
mod capacity;
/// The catalogue: renames, exporter flavours, eras.
mod catalog;
/// The `vllm-lens` binary: commands, JSON shape, exit codes.
mod cli;
/// `scripts/collect.sh` against local fake endpoints, kubectl and Prometheus.
mod collect;
/// Before/after comparisons of the sample pairs.
mod compare;
/// The rate and quantile engine and the catalogue on the samples.
mod engine;
// The forecast: calibration, back-test, real before/after pairs.
mod forecast;
/// Hostile and broken bundles: one test per class of docs/errors.md.
mod hostile;
/// The judgement on bundles made for one mistake each, and a property test
/// of the advice on any subset of any sample's windows.
mod judgement;
/// The code's shape read as Rust: the judgement's layers, function lengths.
mod layers;
/// Real Prometheus as the oracle for our increases, rates, quantiles and gauges.
mod oracle;
/// Data-driven parser cases: `tests/data/expo/*` against `*.expect`.
mod parse;
/// Keeps the decision to write our own parser honest: what `prometheus-parse` loses.
mod prometheus_parse;
/// What the engine cannot see: provisioning, where to look next, the
/// guide's follow-ups, gauges against Little's law, disconnects.
mod provision;
/// Captures from a real vLLM (CPU build) against the client's own record.
mod real;
/// The rendered report: golden HTML/Markdown/JSON, safety, size.
mod render;
/// The report model: golden expectations per sample, reference figures, schema.
mod report;
/// Every sentence true: one test per class of false claim, and a scan of the samples.
mod sentences;
/// The simulator: reproducible samples, clean scrapes, conservation, reference figures.
mod sim;
/// Codebase rules checked as tests.
mod tidy;
