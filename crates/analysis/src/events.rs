//! Stage 2: what happened to the processes: restarts (a changed
//! `process_start_time_seconds`, or a drop of the generated tokens counter
//! where a release exports no start time) with the requests they lost, and
//! each process's warm-up.

use vllm_lens_catalog::{Catalogue, Signal};
use vllm_lens_query::Query;
use vllm_lens_store::{Store, TargetId};

use crate::analyses::RestartInfo;
use crate::queue;

/// Every restart of a replica: a changed `process_start_time_seconds`, or
/// (without it, as on V0 multiprocess servers) a drop of the generated
/// tokens counter.
pub(crate) fn restarts(
    store: &Store,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
) -> Vec<RestartInfo> {
    let mut out = Vec::new();
    for (id, name) in replicas {
        let mut seen: Vec<i64> = q.restarts(*id).to_vec();
        let has_start = cat
            .get(Signal::ProcessStart)
            .series()
            .any(|s| store.series(s).target() == *id);
        if !has_start {
            for sid in cat.get(Signal::GenerationTokens).series() {
                let s = store.series(sid);
                if s.target() == *id {
                    seen.extend(vllm_lens_query::counter::drops(s.times(), s.values()));
                }
            }
            seen.sort_unstable();
            seen.dedup();
        }
        let times = store.target(*id).sample_times();
        let started = queue::per_scrape(store, cat, Signal::ProcessStart, *id);
        let running = queue::per_scrape(store, cat, Signal::Running, *id);
        let waiting = queue::per_scrape(store, cat, Signal::Waiting, *id);
        for t in seen {
            let i = times.partition_point(|&x| x < t);
            let last_old = i.checked_sub(1).map(|j| times[j]);
            let in_flight = last_old.and_then(|l| {
                running
                    .get(&l)
                    .map(|r| r + waiting.get(&l).copied().unwrap_or(0.0))
            });
            out.push(RestartInfo {
                replica: name.clone(),
                seen_ms: t,
                started_ms: started.get(&t).map(|s| (s * 1000.0).round() as i64),
                last_old_ms: last_old,
                in_flight_lost: in_flight,
            });
        }
    }
    out.sort_by_key(|r| r.seen_ms);
    out
}

/// Windows of a process's first minutes at the start of the capture: a
/// replica whose process started less than one window before its first
/// scrape (or during the capture, before any restart) is warming up until
/// one window after its start.
pub(crate) fn warmup_windows(
    store: &Store,
    cat: &Catalogue,
    q: &Query<'_>,
    replicas: &[(TargetId, String)],
) -> Vec<usize> {
    let grid = q.grid();
    let mut out = Vec::new();
    for (id, _) in replicas {
        let started = queue::per_scrape(store, cat, Signal::ProcessStart, *id);
        let Some((&first, &s)) = started.iter().next() else {
            continue;
        };
        let start_ms = (s * 1000.0).round() as i64;
        if start_ms >= first - grid.width_ms {
            let until = grid
                .index(start_ms + grid.width_ms)
                .unwrap_or(grid.count.saturating_sub(1));
            out.extend(0..=until.min(grid.count.saturating_sub(1)));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
