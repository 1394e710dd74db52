//! What each of the six steps of the walk-through reads and the function
//! that produces its findings, in the walk-through's order. How each step
//! is shown (title, charts, the per-window table, "how to read this") is
//! the model's [`vllm_lens_model::steps::STEPS`]; the data-quality section
//! reads the inputs listed here.

use vllm_lens_catalog::Signal;

use crate::analyses::{self, Ctx};
use crate::ids::StepId;
use crate::model::Finding;
pub use vllm_lens_model::steps::*;

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
        run: analyses::latency::findings,
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
        run: analyses::efficiency::findings,
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
        run: analyses::workload::findings,
    },
    StepRun {
        id: StepId::Outcomes,
        inputs: &[Signal::FinishedRequests, Signal::HttpRequests],
        run: analyses::outcomes::findings,
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
        run: analyses::hardware::findings,
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
        run: analyses::memory::findings,
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
