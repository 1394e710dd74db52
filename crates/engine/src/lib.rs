/*!
`vllm-lens-engine`: a model of vLLM's continuous-batching engine that both
the simulator (`vllm-lens-sim`, which writes bundles whose truth is known)
and the forecast (`vllm-lens-forecast`, which replays a capture's load
under a changed configuration) run.

Table of contents:
- [`rng`]: a small, stable pseudo-random number generator (named streams
  from one seed, so a draw added in one place never shifts another);
- [`kv`]: the KV-cache block pool with automatic prefix caching, as vLLM V1
  keeps it;
- [`plan`]: one step's plan, vLLM's scheduler (running requests first,
  then admissions from the waiting queue under `--max-num-seqs`, the
  step's token budget with chunked prefill and the KV pool, preemption by
  recomputation; V0's unchunked prompts and async scheduling's late
  admissions as options), over queues and requests their owner keeps: the
  simulator and [`sched`] both plan with it;
- [`sched`]: the V1 scheduler's step loop (each step [`plan`]ned) over a
  pluggable step cost, driven open-loop (arrival
  times) or closed-loop (users who wait for their answer, then think).

Sans-IO: no clock, no file, no thread, no unseeded randomness. A run is a
pure function of its configuration, its step cost, its load and its seed.
*/
#![deny(missing_docs)]

pub mod kv;
pub mod plan;
pub mod rng;
pub mod sched;
