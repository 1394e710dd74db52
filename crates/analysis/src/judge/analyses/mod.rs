//! The six analyses of the walk-through, one module each, in its order:
//! [`RUNS`] lists what each step reads and the function that produces its
//! findings; how each is shown (title, charts, the per-window table) is the
//! model's [`STEPS`]. Each reads the fleet's per-window rows, the summary,
//! the phases and the settings, and yields findings with their evidence;
//! their words are in [`crate::judge::words`].

use vllm_lens_catalog::Signal;

use crate::ids::StepId;
use crate::judge::ctx::Ctx;
use crate::model::{Analysis, Finding};
pub use vllm_lens_model::steps::*;

pub(crate) mod efficiency;
pub(crate) mod hardware;
pub(crate) mod latency;
pub(crate) mod memory;
pub(crate) mod outcomes;
pub(crate) mod workload;

/// Runs the six analyses.
pub(crate) fn run(ctx: &Ctx<'_>) -> Vec<Analysis> {
    RUNS.iter()
        .zip(&STEPS)
        .map(|(run, step)| {
            let mut findings = (run.run)(ctx);
            debug_assert!(findings.iter().all(|f| step.findings.contains(&f.id)));
            findings.sort_by_key(|f| f.severity);
            Analysis {
                id: step.id,
                title: step.title.to_string(),
                findings,
            }
        })
        .collect()
}

/// One step's inputs and findings.
pub struct StepRun {
    /// Its id.
    pub id: StepId,
    /// The signals it reads.
    pub inputs: &'static [Signal],
    /// Its findings on a capture.
    pub(crate) run: fn(&Ctx<'_>) -> Vec<Finding>,
}

/// The six steps, in the walk-through's order.
pub static RUNS: [StepRun; 6] = [
    StepRun {
        id: StepId::Latency,
        inputs: &[
            Signal::QueueTime,
            Signal::PrefillTime,
            Signal::DecodeTime,
            Signal::InferenceTime,
            Signal::E2eTime,
            Signal::Ttft,
            Signal::InterTokenLatency,
        ],
        run: latency::findings,
    },
    StepRun {
        id: StepId::Efficiency,
        inputs: &[
            Signal::PrefixHits,
            Signal::PrefixQueries,
            Signal::PrefixHitRateLifetime,
            Signal::CachedPromptTokens,
            Signal::IterationTokens,
            Signal::GenerationTokens,
            Signal::PromptTokens,
            Signal::Running,
            Signal::Waiting,
            Signal::KvUsage,
            Signal::Preemptions,
        ],
        run: efficiency::findings,
    },
    StepRun {
        id: StepId::Workload,
        inputs: &[
            Signal::FinishedRequests,
            Signal::RequestPromptTokens,
            Signal::RequestGenerationTokens,
            Signal::MaxTokens,
            Signal::PromptTokens,
            Signal::GenerationTokens,
        ],
        run: workload::findings,
    },
    StepRun {
        id: StepId::Outcomes,
        inputs: &[Signal::FinishedRequests, Signal::HttpRequests],
        run: outcomes::findings,
    },
    StepRun {
        id: StepId::Hardware,
        inputs: &[
            Signal::GpuUtil,
            Signal::MemCopyUtil,
            Signal::GrEngineActive,
            Signal::TensorActive,
            Signal::DramActive,
            Signal::FbUsed,
            Signal::FbFree,
            Signal::FbReserved,
            Signal::Power,
            Signal::GpuTemp,
            Signal::SmClock,
            Signal::Xid,
            Signal::EccDbe,
            Signal::UncorrectableRemappedRows,
            Signal::RowRemapFailure,
            Signal::ClockEventReasons,
        ],
        run: hardware::findings,
    },
    StepRun {
        id: StepId::Memory,
        inputs: &[
            Signal::KvUsage,
            Signal::FbUsed,
            Signal::FbFree,
            Signal::Power,
            Signal::Energy,
            Signal::GenerationTokens,
        ],
        run: memory::findings,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_runs_once_in_the_model_s_order() {
        let ids: Vec<StepId> = RUNS.iter().map(|s| s.id).collect();
        let shown: Vec<StepId> = STEPS.iter().map(|s| s.id).collect();
        assert_eq!(ids, shown);
    }
}
