//! One step's plan: which requests run in it and how many tokens each
//! computes. vLLM's scheduler, shared by the forecast's engine
//! ([`crate::sched`]) and the simulator (`vllm-lens-sim`), so the two
//! cannot schedule differently.
//!
//! The running requests go first, in order, each taking what it still
//! needs from the step's token budget (a decode one token, a prefill the
//! rest of its prompt: a long prompt is cut into chunks). A request whose
//! next blocks do not fit the KV pool preempts the newest running request
//! (recomputation: it goes back to the head of the queue), itself last.
//! Then, unless a preemption happened, requests from the waiting queue,
//! first come first served, while fewer than `--max-num-seqs` run, budget
//! is left and the pool has their blocks after a prefix-cache lookup over
//! whole blocks (leaving one token to compute).
//!
//! V0 without chunked prefill ([`Policy::chunked`] false) differs in two
//! ways: a prompt is never cut (one that does not fit the budget waits),
//! and while requests wait with a seat free a step runs prefills only.

use std::collections::VecDeque;

use crate::kv::Pool;

/// The scheduler's settings for a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `--max-num-seqs`: the most requests that run at once.
    pub max_num_seqs: u32,
    /// The step's token budget.
    pub budget: u32,
    /// Tokens per KV block.
    pub block_size: u32,
    /// Chunked prefill (V1; V0 from 0.8 on): a prompt may be cut.
    pub chunked: bool,
    /// Async scheduling: an admitted request is computed from the next step
    /// on, so this step carries only the requests already running.
    pub admit_next_step: bool,
    /// A prompt that cannot fit the pool when nothing else holds blocks
    /// leaves the queue (vLLM refuses it) instead of blocking it.
    pub refuse_unfittable: bool,
}

/// The queues and the pool of one engine.
#[derive(Debug)]
pub struct Queues {
    /// Requests running, oldest first.
    pub running: Vec<usize>,
    /// Requests waiting, the next to admit first.
    pub waiting: VecDeque<usize>,
    /// The KV block pool.
    pub pool: Pool,
}

impl Queues {
    /// Empty queues over `pool`.
    pub fn new(pool: Pool) -> Queues {
        Queues {
            running: Vec::new(),
            waiting: VecDeque::new(),
            pool,
        }
    }
}

/// One request's part in a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// The request.
    pub req: usize,
    /// Tokens it computes in the step.
    pub chunk: u32,
    /// It decodes one token (rather than computing prompt or recomputed
    /// tokens).
    pub decode: bool,
}

/// A step's plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// What the step computes.
    pub items: Vec<Item>,
    /// Requests were admitted to be computed from the next step on
    /// ([`Policy::admit_next_step`]).
    pub admitted_late: bool,
}

/// What the scheduler reads and changes in the requests it schedules
/// (their owner keeps them, with whatever else it counts).
pub trait Requests {
    /// Tokens of its stream so far: the prompt and what it generated.
    fn stream(&self, id: usize) -> u32;
    /// Tokens of its stream whose KV is computed.
    fn computed(&self, id: usize) -> u32;
    /// Tokens it generated.
    fn generated(&self, id: usize) -> u32;
    /// Its KV blocks.
    fn blocks(&mut self, id: usize) -> &mut Vec<u32>;
    /// The chained content hashes of the first `full` whole blocks of its
    /// stream that the prefix cache may hold.
    fn lookup_hashes(&self, id: usize, full: u32) -> Vec<u64>;
    /// It was preempted: its blocks are back in the pool and it is at the
    /// head of the queue; what it computed is lost.
    fn preempted(&mut self, id: usize);
    /// It was admitted: `blocks` hold its KV (the `hit` cached ones
    /// first, found by `hashes`), of which `cached` tokens are computed,
    /// out of a `stream` of tokens.
    fn admitted(&mut self, id: usize, a: Admission);
    /// It can never fit the pool and left the queue.
    fn refused(&mut self, id: usize);
}

/// A request's admission (see [`Requests::admitted`]).
#[derive(Debug)]
pub struct Admission {
    /// The hashes looked up.
    pub hashes: Vec<u64>,
    /// How many of them the cache held.
    pub hit: usize,
    /// Its blocks: the cached ones, then the fresh ones.
    pub blocks: Vec<u32>,
    /// Tokens found in the cache.
    pub cached: u32,
    /// Tokens of its stream when admitted.
    pub stream: u32,
}

fn preempt<R: Requests + ?Sized>(q: &mut Queues, reqs: &mut R, id: usize) {
    let blocks = std::mem::take(reqs.blocks(id));
    q.pool.release(&blocks);
    q.waiting.push_front(id);
    reqs.preempted(id);
}

/// Plans one step (generic, so each caller's accessors inline: a step
/// asks them a few times per running request).
pub fn plan<R: Requests + ?Sized>(p: &Policy, q: &mut Queues, reqs: &mut R) -> Plan {
    let bs = p.block_size.max(1);
    let seats = p.max_num_seqs as usize;
    let mut budget = p.budget;
    let mut out = Plan::default();
    let mut preempted = false;
    // V0 without chunked prefill runs prefill-only steps while requests wait.
    let prefill_only = !p.chunked && !q.waiting.is_empty() && q.running.len() < seats;
    let mut i = 0;
    while !prefill_only && i < q.running.len() && budget > 0 {
        let id = q.running[i];
        let need = reqs.stream(id) - reqs.computed(id);
        let chunk = need.min(budget);
        let want = (reqs.computed(id) + chunk).div_ceil(bs) as usize;
        let extra = want.saturating_sub(reqs.blocks(id).len()) as u32;
        if extra > 0 {
            // Preempt the newest until its blocks fit, or until it is the
            // newest itself.
            let fitted = loop {
                if let Some(b) = q.pool.allocate(extra) {
                    reqs.blocks(id).extend(b);
                    break true;
                }
                let victim = q.running.pop().expect("running is not empty");
                preempted = true;
                preempt(q, reqs, victim);
                if victim == id {
                    break false;
                }
            };
            if !fitted {
                break;
            }
        }
        let decode = need == 1 && reqs.generated(id) > 0;
        out.items.push(Item {
            req: id,
            chunk,
            decode,
        });
        budget -= chunk;
        i += 1;
    }
    while !preempted && budget > 0 && q.running.len() < seats {
        let Some(&id) = q.waiting.front() else {
            break;
        };
        let stream = reqs.stream(id);
        let full = stream.saturating_sub(1) / bs;
        let hashes = reqs.lookup_hashes(id, full);
        let hit = q.pool.lookup(&hashes);
        let cached = hit.len() as u32 * bs;
        let need = stream - cached;
        if !p.chunked && need > budget {
            q.pool.release(&hit);
            break;
        }
        let chunk = need.min(budget);
        let want = (cached + chunk).div_ceil(bs);
        let Some(fresh) = q.pool.allocate(want - hit.len() as u32) else {
            q.pool.release(&hit);
            if p.refuse_unfittable && q.running.is_empty() && out.items.is_empty() {
                q.waiting.pop_front();
                reqs.refused(id);
                continue;
            }
            break;
        };
        q.waiting.pop_front();
        let n_hit = hit.len();
        let mut blocks = hit;
        blocks.extend(fresh);
        reqs.admitted(
            id,
            Admission {
                hashes,
                hit: n_hit,
                blocks,
                cached,
                stream,
            },
        );
        q.running.push(id);
        if p.admit_next_step {
            out.admitted_late = true;
        } else {
            out.items.push(Item {
                req: id,
                chunk,
                decode: false,
            });
        }
        budget -= chunk;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests with a stream, computed and generated tokens, no shared
    /// prefix.
    #[derive(Default)]
    struct Reqs {
        stream: Vec<u32>,
        computed: Vec<u32>,
        generated: Vec<u32>,
        blocks: Vec<Vec<u32>>,
        log: Vec<String>,
    }

    impl Reqs {
        fn add(&mut self, stream: u32, computed: u32, generated: u32) -> usize {
            self.stream.push(stream);
            self.computed.push(computed);
            self.generated.push(generated);
            self.blocks.push(Vec::new());
            self.stream.len() - 1
        }
    }

    impl Requests for Reqs {
        fn stream(&self, id: usize) -> u32 {
            self.stream[id]
        }
        fn computed(&self, id: usize) -> u32 {
            self.computed[id]
        }
        fn generated(&self, id: usize) -> u32 {
            self.generated[id]
        }
        fn blocks(&mut self, id: usize) -> &mut Vec<u32> {
            &mut self.blocks[id]
        }
        fn lookup_hashes(&self, id: usize, full: u32) -> Vec<u64> {
            (0..u64::from(full)).map(|i| 1000 * id as u64 + i).collect()
        }
        fn preempted(&mut self, id: usize) {
            self.computed[id] = 0;
            self.log.push(format!("preempted {id}"));
        }
        fn admitted(&mut self, id: usize, a: Admission) {
            self.computed[id] = a.cached;
            self.blocks[id] = a.blocks;
            self.log.push(format!("admitted {id}"));
        }
        fn refused(&mut self, id: usize) {
            self.log.push(format!("refused {id}"));
        }
    }

    fn policy() -> Policy {
        Policy {
            max_num_seqs: 4,
            budget: 64,
            block_size: 16,
            chunked: true,
            admit_next_step: false,
            refuse_unfittable: true,
        }
    }

    /// Plans one step of `running` (stream, computed, generated) and
    /// `waiting` prompts over `blocks` KV blocks; the items as
    /// `req:chunk[d]` and the requests' log.
    fn check(p: Policy, blocks: u32, running: &[(u32, u32, u32)], waiting: &[u32], expect: &str) {
        let mut reqs = Reqs::default();
        let mut q = Queues::new(Pool::new(blocks, false));
        for &(stream, computed, generated) in running {
            let id = reqs.add(stream, computed, generated);
            let b = q
                .pool
                .allocate(computed.div_ceil(16))
                .expect("the test's pool holds them");
            reqs.blocks[id] = b;
            q.running.push(id);
        }
        for &prompt in waiting {
            let id = reqs.add(prompt, 0, 0);
            q.waiting.push_back(id);
        }
        let out = plan(&p, &mut q, &mut reqs);
        let items: Vec<String> = out
            .items
            .iter()
            .map(|i| format!("{}:{}{}", i.req, i.chunk, if i.decode { "d" } else { "" }))
            .collect();
        let mut got = items.join(" ");
        if out.admitted_late {
            got.push_str(" +late");
        }
        for l in &reqs.log {
            got.push_str(&format!("; {l}"));
        }
        got.push_str(&format!(
            " | running {:?} waiting {:?}",
            q.running, q.waiting
        ));
        assert_eq!(got, expect);
    }

    #[test]
    fn decodes_first_then_a_chunk_of_the_next_prompt() {
        // Two decodes take 2 tokens of 64; the 100-token prompt gets 62.
        check(
            policy(),
            64,
            &[(33, 32, 1), (17, 16, 1)],
            &[100],
            "0:1d 1:1d 2:62; admitted 2 | running [0, 1, 2] waiting []",
        );
    }

    #[test]
    fn the_seat_cap_keeps_prompts_waiting() {
        let p = Policy {
            max_num_seqs: 2,
            ..policy()
        };
        check(
            p,
            64,
            &[(33, 32, 1), (17, 16, 1)],
            &[10],
            "0:1d 1:1d | running [0, 1] waiting [2]",
        );
    }

    #[test]
    fn unchunked_v0_runs_prefills_only_and_never_cuts_a_prompt() {
        let p = Policy {
            chunked: false,
            ..policy()
        };
        // A prompt fits the budget: the step is its prefill alone.
        check(
            p,
            64,
            &[(33, 32, 1)],
            &[40],
            "1:40; admitted 1 | running [0, 1] waiting []",
        );
        // A prompt over the budget waits whole.
        check(p, 64, &[(33, 32, 1)], &[100], " | running [0] waiting [1]");
    }

    #[test]
    fn async_scheduling_computes_admissions_from_the_next_step() {
        let p = Policy {
            admit_next_step: true,
            ..policy()
        };
        check(
            p,
            64,
            &[(33, 32, 1)],
            &[20],
            "0:1d +late; admitted 1 | running [0, 1] waiting []",
        );
    }

    #[test]
    fn a_full_pool_preempts_the_newest_and_admits_nothing() {
        // Three blocks: request 0 (2 blocks) needs a third for its next
        // token, request 1 holds the last: 1 is preempted to the queue's
        // head, and nothing is admitted after a preemption.
        check(
            policy(),
            3,
            &[(33, 32, 1), (17, 16, 1)],
            &[8],
            "0:1d; preempted 1 | running [0] waiting [1, 2]",
        );
    }

    #[test]
    fn a_prompt_larger_than_the_pool_is_refused_only_when_nothing_else_runs() {
        check(
            policy(),
            2,
            &[],
            &[100, 8],
            "1:8; refused 0; admitted 1 | running [1] waiting []",
        );
        let p = Policy {
            refuse_unfittable: false,
            ..policy()
        };
        check(p, 2, &[], &[100, 8], " | running [] waiting [0, 1]");
    }
}
