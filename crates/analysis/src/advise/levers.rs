//! The lever checks: what in the capture forbids turning each knob each
//! way (rules L1-L13 of `docs/report-schema.md`). The levers themselves
//! (a [`Knob`](crate::levers::Knob) and a [`Direction`](crate::levers::Direction)) are the report model's
//! ([`vllm_lens_model::levers`]).

use crate::ids::SloId;
use crate::measure::thresholds::{KV_FULL_PCT, KV_WARN_PCT};
use crate::model::SloStatus;

pub use vllm_lens_model::levers::{Direction, Knob, Lever, Platform, down, up};

/// What in the capture the lever checks read.
#[derive(Clone, Copy, Debug)]
pub struct State {
    /// Each objective's status, in [`SloId::ALL`] order.
    pub slo: [Option<SloStatus>; SloId::ALL.len()],
    /// The KV cache's peak, %.
    pub kv_max: Option<f64>,
    /// Preemptions were seen.
    pub preempting: bool,
    /// Something queued.
    pub queued: bool,
    /// Answers were cut at `max_tokens`.
    pub truncated: bool,
    /// What the server runs on.
    pub platform: Platform,
    /// `vllm:cache_config_info` fixes the pool (`num_gpu_blocks_override`).
    pub blocks_overridden: bool,
    /// Prefix caching is on (hits seen, or the configuration says so).
    pub prefix_caching_on: bool,
    /// The step's token budget binds (`capacity.binding_limits`).
    pub budget_binds: bool,
}

impl State {
    /// An objective's status.
    pub fn status(&self, id: SloId) -> Option<SloStatus> {
        let i = SloId::ALL.iter().position(|x| *x == id)?;
        self.slo[i]
    }

    /// True when the objective fails or cannot be told.
    pub fn in_doubt(&self, id: SloId) -> bool {
        matches!(
            self.status(id),
            Some(SloStatus::Fail) | Some(SloStatus::CannotTell)
        )
    }

    /// The KV cache runs out: full at its peak, or preempting.
    pub fn kv_binds(&self) -> bool {
        self.preempting || self.kv_max.is_some_and(|k| k >= KV_FULL_PCT)
    }

    /// Load pushes on capacity: something queued, or the KV cache passed
    /// the line for scaling out.
    pub fn pressure(&self) -> bool {
        self.queued || self.kv_max.is_some_and(|k| k >= KV_WARN_PCT)
    }
}

/// Why a lever may not be turned here: `(rule, reason)`.
pub type Block = (&'static str, &'static str);

impl State {
    /// Why `lever` may not be turned on this capture, if anything forbids
    /// it (docs/report-schema.md, "Levers").
    pub fn blocks(&self, lever: Lever) -> Option<Block> {
        let s = self;
        use Direction::{Down, Up};
        if !lever.knob.platforms().contains(&s.platform) {
            return Some((
                "L1",
                "the knob does not exist on this platform (a CPU server)",
            ));
        }
        let ttft = s.in_doubt(SloId::TtftP95);
        let itl_fails = s.status(SloId::ItlP95) == Some(SloStatus::Fail);
        match (lever.knob, lever.direction) {
            (Knob::MaxNumSeqs, Up) if s.kv_binds() => Some((
                "L2",
                "the KV cache is full or preempting: more sequences would preempt more",
            )),
            (Knob::MaxNumSeqs, Up) if itl_fails => Some((
                "L3",
                "inter-token latency fails: a bigger batch makes each step longer",
            )),
            (Knob::MaxNumSeqs, Down) if ttft || s.in_doubt(SloId::QueueAtConcurrency) => Some((
                "L4",
                "queueing or time to first token is in doubt: fewer sequences queue more",
            )),
            (Knob::MaxNumBatchedTokens, Down) if ttft => Some((
                "L5",
                "time to first token is in doubt: smaller prefill chunks raise it",
            )),
            (Knob::MaxNumBatchedTokens, Up) if itl_fails => Some((
                "L6",
                "inter-token latency fails: larger prefill chunks lengthen decode steps",
            )),
            (Knob::KvCacheMemory, Up) if s.blocks_overridden => Some((
                "L7",
                "num_gpu_blocks_override fixes the KV pool: more memory does not enlarge it",
            )),
            (Knob::Replicas, Up) if !s.pressure() => Some((
                "L8",
                "nothing queued and the KV cache stayed below 60 %: no pressure to scale for",
            )),
            (Knob::ClientMaxTokens, Up) if s.kv_binds() => Some((
                "L9",
                "the KV cache runs out: longer answers hold more of it",
            )),
            (Knob::ClientMaxTokens, Down) if s.truncated => Some((
                "L10",
                "answers are already cut at max_tokens: a lower one cuts more",
            )),
            (Knob::PrefixCaching, Up) if s.prefix_caching_on => {
                Some(("L11", "prefix caching is already on"))
            }
            (Knob::BlocksOverride, Down) if !s.blocks_overridden => {
                Some(("L12", "num_gpu_blocks_override is not set"))
            }
            (Knob::MaxNumBatchedTokens, Up) if !s.budget_binds => Some((
                "L13",
                "the step's token budget does not bind: a larger one admits nothing more",
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            slo: [Some(SloStatus::Pass); SloId::ALL.len()],
            kv_max: Some(10.0),
            preempting: false,
            queued: true,
            truncated: false,
            platform: Platform::Gpu,
            blocks_overridden: false,
            prefix_caching_on: true,
            budget_binds: false,
        }
    }

    #[test]
    fn opposite_directions_oppose() {
        let a = up(Knob::ClientMaxTokens);
        assert!(a.opposes(down(Knob::ClientMaxTokens)));
        assert!(!a.opposes(up(Knob::ClientMaxTokens)));
        assert!(!a.opposes(down(Knob::ClientTimeout)));
    }

    #[test]
    fn the_kv_cache_blocks_more_sequences_and_longer_answers() {
        let mut s = state();
        assert!(s.blocks(up(Knob::MaxNumSeqs)).is_none());
        assert!(s.blocks(up(Knob::ClientMaxTokens)).is_none());
        s.kv_max = Some(95.0);
        assert_eq!(s.blocks(up(Knob::MaxNumSeqs)).map(|b| b.0), Some("L2"));
        assert_eq!(s.blocks(up(Knob::ClientMaxTokens)).map(|b| b.0), Some("L9"));
        s.kv_max = Some(10.0);
        s.preempting = true;
        assert_eq!(s.blocks(up(Knob::MaxNumSeqs)).map(|b| b.0), Some("L2"));
    }

    #[test]
    fn ttft_in_doubt_blocks_smaller_chunks_and_fewer_sequences() {
        let mut s = state();
        s.slo[0] = Some(SloStatus::CannotTell);
        assert_eq!(
            s.blocks(down(Knob::MaxNumBatchedTokens)).map(|b| b.0),
            Some("L5")
        );
        assert_eq!(s.blocks(down(Knob::MaxNumSeqs)).map(|b| b.0), Some("L4"));
        s.slo[0] = Some(SloStatus::Pass);
        assert!(s.blocks(down(Knob::MaxNumBatchedTokens)).is_none());
        assert!(s.blocks(down(Knob::MaxNumSeqs)).is_none());
    }

    #[test]
    fn platforms_and_configuration() {
        let mut s = state();
        s.platform = Platform::Cpu;
        assert_eq!(s.blocks(down(Knob::WeightBytes)).map(|b| b.0), Some("L1"));
        assert_eq!(s.blocks(up(Knob::TensorParallel)).map(|b| b.0), Some("L1"));
        assert!(s.blocks(up(Knob::KvCacheMemory)).is_none());
        assert_eq!(
            Knob::KvCacheMemory.setting(Platform::Cpu),
            "VLLM_CPU_KVCACHE_SPACE"
        );
        s.platform = Platform::Unknown;
        assert!(s.blocks(down(Knob::WeightBytes)).is_none());
        s.blocks_overridden = true;
        assert_eq!(s.blocks(up(Knob::KvCacheMemory)).map(|b| b.0), Some("L7"));
        assert_eq!(s.blocks(up(Knob::PrefixCaching)).map(|b| b.0), Some("L11"));
    }

    #[test]
    fn replicas_need_pressure() {
        let mut s = state();
        s.queued = false;
        assert_eq!(s.blocks(up(Knob::Replicas)).map(|b| b.0), Some("L8"));
        s.kv_max = Some(70.0);
        assert!(s.blocks(up(Knob::Replicas)).is_none());
    }
}
