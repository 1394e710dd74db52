//! The KV-cache block pool with automatic prefix caching, as vLLM V1 keeps
//! it: fixed-size blocks, reference counts, full blocks hashed by their
//! content chained to the previous block, and one LRU queue of free blocks
//! from which allocation evicts the oldest cached content. Usage is
//! `1 − free ÷ total`, so cached-but-free blocks count as free.

use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// The pool.
#[derive(Debug)]
pub struct Pool {
    refs: Vec<u32>,
    hash: Vec<Option<u64>>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
    free: u32,
    cached: HashMap<u64, u32>,
    caching: bool,
}

impl Pool {
    /// `blocks` blocks, all free.
    pub fn new(blocks: u32, caching: bool) -> Pool {
        let n = blocks as usize;
        let mut pool = Pool {
            refs: vec![0; n],
            hash: vec![None; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            head: NONE,
            tail: NONE,
            free: 0,
            cached: HashMap::new(),
            caching,
        };
        for b in 0..blocks {
            pool.push_back(b);
        }
        pool
    }

    /// Total blocks.
    pub fn total(&self) -> u32 {
        self.refs.len() as u32
    }

    /// Free blocks (including cached ones nobody uses).
    pub fn free(&self) -> u32 {
        self.free
    }

    /// `1 − free ÷ total`.
    pub fn usage(&self) -> f64 {
        1.0 - f64::from(self.free) / f64::from(self.total())
    }

    fn push_back(&mut self, b: u32) {
        self.prev[b as usize] = self.tail;
        self.next[b as usize] = NONE;
        if self.tail != NONE {
            self.next[self.tail as usize] = b;
        } else {
            self.head = b;
        }
        self.tail = b;
        self.free += 1;
    }

    fn unlink(&mut self, b: u32) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
        self.prev[b as usize] = NONE;
        self.next[b as usize] = NONE;
        self.free -= 1;
    }

    /// Blocks whose hashes match `hashes` from the start, taken (reference
    /// count raised). Stops at the first miss.
    pub fn lookup(&mut self, hashes: &[u64]) -> Vec<u32> {
        let mut hit = Vec::new();
        if !self.caching {
            return hit;
        }
        for h in hashes {
            let Some(&b) = self.cached.get(h) else { break };
            if self.refs[b as usize] == 0 {
                self.unlink(b);
            }
            self.refs[b as usize] += 1;
            hit.push(b);
        }
        hit
    }

    /// Takes `n` new blocks, or none if fewer than `n` are free.
    pub fn allocate(&mut self, n: u32) -> Option<Vec<u32>> {
        if n > self.free {
            return None;
        }
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let b = self.head;
            self.unlink(b);
            if let Some(h) = self.hash[b as usize].take()
                && self.cached.get(&h) == Some(&b)
            {
                self.cached.remove(&h);
            }
            self.refs[b as usize] = 1;
            out.push(b);
        }
        Some(out)
    }

    /// Records that block `b` is full and holds content `h`.
    pub fn set_hash(&mut self, b: u32, h: u64) {
        if !self.caching {
            return;
        }
        self.hash[b as usize] = Some(h);
        self.cached.entry(h).or_insert(b);
    }

    /// Releases a request's blocks, last block first (so the tail of a
    /// sequence is evicted before its shared head).
    pub fn release(&mut self, blocks: &[u32]) {
        for &b in blocks.iter().rev() {
            let r = &mut self.refs[b as usize];
            *r -= 1;
            if *r == 0 {
                self.push_back(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_hits_survive_release_until_evicted() {
        let mut p = Pool::new(4, true);
        let a = p.allocate(2).unwrap();
        p.set_hash(a[0], 11);
        p.set_hash(a[1], 12);
        assert_eq!(p.free(), 2);
        p.release(&a);
        assert_eq!(p.free(), 4);
        assert_eq!(p.usage(), 0.0);
        // Hit both, then the rest of the pool is allocated without eviction.
        let hit = p.lookup(&[11, 12, 13]);
        assert_eq!(hit, a);
        assert_eq!(p.free(), 2);
        p.release(&hit);
        // Four allocations evict everything: the cache is empty afterwards.
        let all = p.allocate(4).unwrap();
        assert!(p.allocate(1).is_none());
        p.release(&all);
        assert!(p.lookup(&[11]).is_empty());
    }

    #[test]
    fn shared_blocks_count_once() {
        let mut p = Pool::new(10, true);
        let a = p.allocate(1).unwrap();
        p.set_hash(a[0], 1);
        let b = p.lookup(&[1]);
        assert_eq!(a, b);
        assert!((p.usage() - 0.1).abs() < 1e-12);
        p.release(&a);
        assert!((p.usage() - 0.1).abs() < 1e-12);
        p.release(&b);
        assert_eq!(p.usage(), 0.0);
    }
}
