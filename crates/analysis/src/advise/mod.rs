//! **advise**: what to change. Typed rules on typed levers, ranked by their
//! effect on what fails, each carrying checked alert rules and triggers;
//! and the before/after comparison of two reports. It reads judged
//! figures and never computes one: no store, no rate engine, no bundle
//! (the tidy test `advise_reads_no_store` checks it).

/// Two reports compared.
pub mod compare;
/// The settings the rules turn, and what in the capture forbids each.
pub mod levers;
/// The table of rules and their ranking.
pub mod rules;
/// Alert rules and autoscaling triggers, checked against the capture.
pub(crate) mod snippets;
