//! **judge**: what the figures mean. Events, bursts and phases split the
//! capture; the SLOs, capacity and the six analyses judge it; the
//! timeline, data quality and the verdict sum it up. It reads the store
//! only through `measure` and imports nothing from `advise`.

/// The six analyses of the walk-through and their table.
pub(crate) mod analyses;
/// Windows with more failures than the base rate explains.
pub(crate) mod bursts;
/// How much more fits and what binds first.
pub(crate) mod capacity;
/// What the analyses share: the capture's scopes, rows and scorecard.
pub(crate) mod ctx;
/// Restarts and warm-up.
pub(crate) mod events;
/// Where to look next, and the tuning guide's follow-ups.
pub(crate) mod look_next;
/// The capture split into load levels, ramps, restarts, bursts and idle time.
pub(crate) mod phases;
/// Over, fits or under: the deployment against its peak load.
pub(crate) mod provisioning;
/// What the figures rest on.
pub(crate) mod quality;
/// The scorecard against the stated objectives.
pub mod slo;
/// What happened when.
pub(crate) mod timeline;
/// The bottom line.
pub(crate) mod verdict;
/// What each finding means and what to do about it, as data.
pub(crate) mod words;
