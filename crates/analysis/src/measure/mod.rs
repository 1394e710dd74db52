//! **measure**: the figures, read from the store per scope and window. The
//! lowest layer of the judgement: it imports nothing above it, and it never
//! reads an objective (what the user wants the figures to be does not change
//! them; the tidy test `measure_never_reads_an_objective` checks it).

/// What the server was told, each value with its source.
pub(crate) mod config;
/// The model, the deployment and the capture's shape.
pub(crate) mod deployment;
/// Hardware faults the GPUs reported.
pub(crate) mod faults;
/// Documented tables of GPUs and models.
pub mod hw;
/// The counters, histograms and gauges each figure is computed from.
pub(crate) mod inputs;
/// Requests in the engine by Little's law, against the gauges.
pub(crate) mod little;
/// PromQL evaluated over the capture, for the alert rules that advice carries.
pub(crate) mod promql;
/// Queueing, defined once per replica.
pub(crate) mod queue;
/// The figures of each section, from one window's inputs.
pub(crate) mod rows;
/// Who is in the bundle (the fleet, its replicas, their GPUs) and each
/// scope's per-window rows.
pub(crate) mod scopes;
/// Every line the tool draws.
pub mod thresholds;
