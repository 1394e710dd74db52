//! How much more fits, and what would help, from the bundle's own data
//! plus what the user states (`--model-bytes`, `--shared-prefix-tokens`,
//! `--gpu-hour-cost`):
//!
//! - **KV capacity** from `vllm:cache_config_info` (`kv_cache_size_tokens`
//!   where exported, else `num_gpu_blocks` × `block_size`; with data
//!   parallelism `num_gpu_blocks` is the engines' sum repeated on every
//!   `engine` series, so it is never added up), or an estimate of resident
//!   tokens ÷ usage above a usage floor; in requests of the observed size
//!   counted in whole blocks.
//! - **What binds first**: the KV cache, `--max-num-seqs`, the token budget
//!   per step, or nothing seen (the admission cap is [`crate::measure::queue`]'s).
//! - **Latency against concurrency**: each window of each replica, and the
//!   largest concurrency that met each objective.
//! - **The hardware floor**: weight bytes (model table or `--model-bytes`)
//!   ÷ tensor parallel ÷ the GPU's bandwidth.
//! - **Achieved utilisation** from `vllm:estimated_*` (only with
//!   `--enable-mfu-metrics`; flat at 0 reads as missing) or DCGM activity.
//! - **Prefix-cache ceiling**, **preemption cost**, **energy and cost**,
//!   **what-ifs**, each labelled as what it is.

use std::collections::BTreeMap;

use vllm_lens_catalog::{Catalogue, Signal, Status};
use vllm_lens_query::Query;
use vllm_lens_store::{Store, TargetId};

use crate::Settings;
use crate::ids::SloId;
use crate::measure::hw::{self, GpuSpec, ModelSpec};
use crate::measure::inputs::Inputs;
use crate::measure::queue::{QueueReport, QueuedBy};
use crate::measure::thresholds::{KV_ESTIMATE_FLOOR_PCT, KV_FULL_PCT, MEETING_MIN_WINDOWS};
use crate::model::{
    BindingLimit, Capacity, ConcurrencyMeeting, ConcurrencyPoint, Deployment, Economics,
    Efficiency, Floor, Latency, LimitCheck, PreemptionCost, PrefixCeiling, Rejections, Row,
    Summary, UtilisationSource, WhatIf,
};
use crate::text::num;

/// What the capacity model reads.
pub(crate) struct CapacityInput<'a> {
    pub store: &'a Store,
    pub catalogue: &'a Catalogue,
    pub query: &'a Query<'a>,
    pub settings: &'a Settings,
    pub replicas: &'a [(TargetId, String)],
    pub summary: &'a Summary,
    pub whole: &'a Inputs,
    pub latency_rows: &'a [Row<Latency>],
    pub efficiency_rows: &'a [Row<Efficiency>],
    pub queue: &'a QueueReport,
    pub deployment: &'a Deployment,
    pub config: &'a crate::measure::config::Config,
    /// The fleet's inputs, per window.
    pub fleet_windows: &'a [Inputs],
    /// The phases (their own p95 at their mean concurrency).
    pub phases: &'a [crate::model::Phase],
}

/// Blocks, block size and tokens as `vllm:cache_config_info` states them.
type CacheConfig = (Option<f64>, Option<f64>, Option<f64>);

/// A label of the latest `vllm:cache_config_info` series of any replica.
fn cache_label(store: &Store, replicas: &[(TargetId, String)], key: &str) -> Option<String> {
    let mut best: Option<(i64, String)> = None;
    for (i, s) in store.all_series().iter().enumerate() {
        let sid = vllm_lens_store::SeriesId(i as u32);
        if !replicas.iter().any(|(t, _)| *t == s.target())
            || store.series_name(sid) != "vllm:cache_config_info"
        {
            continue;
        }
        let (Some(&last), Some(v)) = (s.times().last(), store.label(sid, key)) else {
            continue;
        };
        if best.as_ref().is_none_or(|b| last > b.0) {
            best = Some((last, v.to_string()));
        }
    }
    best.map(|b| b.1)
}

/// `vllm:cache_config_info` of one replica: (blocks, block size, tokens).
fn cache_config(store: &Store, target: TargetId) -> Option<CacheConfig> {
    let mut best: Option<(i64, CacheConfig)> = None;
    for (i, s) in store.all_series().iter().enumerate() {
        let sid = vllm_lens_store::SeriesId(i as u32);
        if s.target() != target || store.series_name(sid) != "vllm:cache_config_info" {
            continue;
        }
        let Some(&last) = s.times().last() else {
            continue;
        };
        let read = |k: &str| {
            store
                .label(sid, k)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v > 0.0)
        };
        let (blocks, size, tokens) = (
            read("num_gpu_blocks"),
            read("block_size"),
            read("kv_cache_size_tokens"),
        );
        // The latest series (a restart can change the pool); with several
        // engines the same sum repeats: take it once, the largest.
        let newer = best.as_ref().is_none_or(|b| last > b.0);
        let same = best.as_ref().is_some_and(|b| last == b.0);
        if newer {
            best = Some((last, (blocks, size, tokens)));
        } else if same && let Some((_, c)) = &mut best {
            c.0 = omax(c.0, blocks);
            c.1 = c.1.or(size);
            c.2 = omax(c.2, tokens);
        }
    }
    best.map(|b| b.1)
}

/// The larger of two optional figures.
fn omax(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn engine_arg<'a>(d: &'a Deployment, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|n| d.engine_args.get(*n).map(String::as_str))
}

fn engine_num(d: &Deployment, names: &[&str]) -> Option<f64> {
    engine_arg(d, names).and_then(|v| v.trim_matches('"').parse().ok())
}

/// Increase and covered seconds of a counter signal, per series averaged
/// (the `estimated_*_per_gpu` counters are per GPU already).
fn per_gpu_rate(q: &Query<'_>, signal: Signal) -> Option<(f64, f64)> {
    let c = q.counter(signal);
    if c.series == 0 {
        return None;
    }
    let (mut inc, mut secs) = (0.0, 0.0);
    for w in c.windows.iter().flatten() {
        inc += w.increase;
        secs += w.covered_ms as f64 / 1000.0;
    }
    // Summed over series; covered time is summed too, so the ratio is the
    // mean per-series rate.
    Some((inc / c.series as f64, secs / c.series as f64))
}

/// What the stages write beside their figures: each figure's source, and
/// why a figure is missing or estimated.
#[derive(Default)]
struct Written {
    sources: BTreeMap<String, String>,
    notes: Vec<String>,
}

/// The capacity model, stage by stage.
pub(crate) fn capacity(i: &CapacityInput<'_>) -> Capacity {
    let mut w = Written::default();
    let replicas = i.replicas.len().max(1);
    let kv = kv(i, &mut w);
    let limits = limits(i, &mut w);
    let (points, max_concurrency_meeting) = concurrency(i, &mut w);
    let (model, gpu, floor) = floor(i, &mut w);
    let u = utilisation(i, gpu, &mut w);
    let (prefix, blocks_overridden) = prefix(i, kv.block_size);
    let preemption = preemption(i, &mut w);
    let economics = economics(i, &mut w);
    let rejections = rejections(i, &mut w);
    let what_ifs = what_ifs(
        kv.requests,
        kv.tokens,
        kv.blocks_per_request,
        kv.block_size,
        floor.as_ref(),
        model.and_then(|m| m.kv_bytes_per_token(2.0)),
        replicas,
        limits.binding,
        limits.admission_cap,
        limits.max_num_seqs,
        gpu,
        model.and_then(|m| m.kv_shape).map(|(_, heads, _)| heads),
    );
    Capacity {
        kv_tokens: kv.tokens.map(f64::round),
        kv_requests: kv.requests,
        admission_cap: limits.admission_cap,
        binding_limit: limits.binding,
        binding_limits: limits.binding_all,
        limits: limits.checks,
        utilisation_from: u.from,
        blocks_overridden,
        queueing_starts_at: limits.queueing_starts_at,
        max_concurrency_meeting,
        itl_floor_ms: floor.as_ref().map(|f| crate::text::round(f.ms)),
        achieved_flops_per_s: u.flops,
        achieved_bytes_per_s: u.bytes,
        mfu_pct: u.mfu,
        mbu_pct: u.mbu,
        sources: w.sources,
        kv_estimated: kv.estimated,
        block_size: kv.block_size,
        request_tokens: kv.request_tokens,
        peak_in_flight: i.queue.peak_in_flight(),
        replicas,
        points,
        floor,
        prefix,
        preemption,
        economics,
        what_ifs,
        rejections,
        provisioning: Default::default(),
        notes: w.notes,
    }
}

/// The KV pool per replica (the smallest replica's), and in requests.
struct Kv {
    tokens: Option<f64>,
    estimated: bool,
    block_size: Option<f64>,
    request_tokens: Option<f64>,
    blocks_per_request: Option<f64>,
    requests: Option<f64>,
}

/// KV capacity: `vllm:cache_config_info`, else resident tokens ÷ usage.
fn kv(i: &CapacityInput<'_>, w: &mut Written) -> Kv {
    let s = i.summary;
    let replicas = i.replicas.len().max(1);
    let mut kv_tokens: Option<f64> = None;
    let mut kv_blocks: Option<f64> = None;
    let mut block_size: Option<f64> = None;
    let mut kv_estimated = false;
    for (id, _) in i.replicas {
        if let Some((blocks, size, tokens)) = cache_config(i.store, *id) {
            let t = tokens.or(blocks.zip(size).map(|(b, s)| b * s));
            if let Some(t) = t
                && kv_tokens.is_none_or(|k| t < k)
            {
                kv_tokens = Some(t);
                kv_blocks = blocks.or(size.map(|s| t / s));
                block_size = size;
            }
            block_size = block_size.or(size);
        }
    }
    if kv_tokens.is_some() {
        w.sources.insert(
            "kv_tokens".into(),
            if i.store.all_series().iter().enumerate().any(|(n, _)| {
                i.store
                    .label(vllm_lens_store::SeriesId(n as u32), "kv_cache_size_tokens")
                    .is_some_and(|v| v.parse::<f64>().is_ok())
            }) {
                "vllm:cache_config_info{kv_cache_size_tokens}".into()
            } else {
                "vllm:cache_config_info{num_gpu_blocks} × {block_size}".into()
            },
        );
    } else {
        // Resident tokens ÷ usage, in the fullest window, above a floor.
        let prompt = s.workload.avg_prompt_tokens;
        let generated = s.workload.avg_generated_tokens;
        let best = i
            .efficiency_rows
            .iter()
            .filter(|r| r.key.replica.is_fleet())
            .filter_map(|r| {
                let e = &r.fields;
                Some((e.kv_cache_pct_avg?, e.running_avg?))
            })
            .filter(|(kv, _)| *kv >= KV_ESTIMATE_FLOOR_PCT)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match (best, prompt, generated) {
            (Some((kv, running)), Some(p), Some(g)) => {
                let resident = running / replicas as f64 * (p + g / 2.0);
                kv_tokens = Some(resident / (kv / 100.0));
                kv_estimated = true;
                w.sources.insert(
                    "kv_tokens".into(),
                    "estimate: running × (prompt + half the answer) ÷ KV usage, in the fullest window".into(),
                );
                w.notes.push(format!(
                    "KV capacity is an estimate: vllm:cache_config_info carries no pool size here, so it is resident tokens ÷ KV usage at {kv:.1} % (only windows at {KV_ESTIMATE_FLOOR_PCT} % or more are used: below that, one block of rounding moves it a lot)."
                ));
            }
            _ => w.notes.push(
                "KV capacity unknown: no vllm:cache_config_info pool size, and the KV cache never reached the usage floor an estimate needs.".into(),
            ),
        }
    }
    if block_size.is_none() && kv_tokens.is_some() {
        block_size = Some(16.0);
        w.notes
            .push("Block size not exported: vLLM's GPU default (16 tokens) is assumed.".into());
    }
    let request_tokens = s
        .workload
        .avg_prompt_tokens
        .zip(s.workload.avg_generated_tokens)
        .map(|(p, g)| p + g);
    let blocks_per_request = request_tokens
        .zip(block_size)
        .map(|(t, b)| (t / b).ceil().max(1.0));
    let pool_blocks = kv_blocks.or(kv_tokens.zip(block_size).map(|(t, b)| (t / b).floor()));
    let kv_requests = pool_blocks
        .zip(blocks_per_request)
        .map(|(blocks, per)| (blocks / per).floor());
    if kv_requests.is_some() {
        w.sources.insert(
            "kv_requests".into(),
            "KV blocks ÷ ⌈(prompt + generated tokens) ÷ block size⌉ (request sizes from vllm:request_prompt_tokens and vllm:request_generation_tokens; shared prefix blocks counted once per request, so this is the conservative figure)".into(),
        );
    }

    Kv {
        tokens: kv_tokens,
        estimated: kv_estimated,
        block_size,
        request_tokens,
        blocks_per_request,
        requests: kv_requests,
    }
}

/// What limits admission.
struct Limits {
    admission_cap: Option<f64>,
    queueing_starts_at: Option<f64>,
    binding: BindingLimit,
    binding_all: Vec<BindingLimit>,
    checks: Vec<LimitCheck>,
    max_num_seqs: Option<f64>,
}

/// Steps at the token budget: at least this share of the engine steps of
/// the windows with requests waiting fall in the budget's bucket.
const FULL_STEPS_SHARE: f64 = 0.5;
/// `--max-num-seqs` held: at scrapes with requests waiting, running's
/// median sits within this share of the admission cap (at least one below
/// it: a scrape can fall between a request finishing and the next one's
/// admission). A token budget leaves running spread well below its peak.
const PINNED_SLACK: f64 = 0.1;

/// What the windows with requests waiting show.
struct WhileQueued {
    /// Scrapes with requests waiting, and running's median at them.
    scrapes: usize,
    median_running: Option<f64>,
    /// Engine steps in the budget's bucket, and all steps.
    full_steps: f64,
    steps: f64,
    /// The budget's bucket (lower, upper].
    bucket: Option<(f64, f64)>,
    /// The most requests waiting at a scrape (the queue's family).
    capacity_waiting: Option<f64>,
}

fn while_queued(i: &CapacityInput<'_>) -> WhileQueued {
    let q = i.queue;
    let sightings: Vec<f64> = q
        .replicas
        .iter()
        .flat_map(|r| r.queued.iter())
        .filter(|x| x.by == QueuedBy::Waiting)
        .map(|x| x.running)
        .collect();
    let median_running = {
        let mut v = sightings.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        (n > 0).then(|| {
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        })
    };
    // The budget's bucket: the one holding the stated budget, else the top
    // occupied bucket of the whole capture.
    let v1 = i.catalogue.era.engine == vllm_lens_catalog::Engine::V1;
    let bucket = match (i.config.max_num_batched_tokens, i.config.step_tokens_top) {
        _ if v1 => None,
        (Some(b), _) => i
            .whole
            .hists
            .get(&Signal::IterationTokens)
            .and_then(|h| h.buckets.normalised())
            .and_then(|n| {
                let mut lo = 0.0;
                n.iter().find_map(|(le, _)| {
                    let r = (*le >= b - 1e-9).then_some((lo, *le));
                    lo = *le;
                    r
                })
            }),
        (None, top) => top,
    };
    let (mut full_steps, mut steps) = (0.0, 0.0);
    for w in q.queued_windows() {
        let Some(win) = i.fleet_windows.get(w) else {
            continue;
        };
        if let (Some((lo, hi)), Some(h)) = (bucket, win.hists.get(&Signal::IterationTokens))
            && let Some((full, all)) = crate::measure::config::steps_in(&h.buckets, lo, hi)
        {
            full_steps += full;
            steps += all;
        }
    }
    // The most waiting at a scrape, read from the family the queue used.
    let capacity_waiting = q
        .replicas
        .iter()
        .flat_map(|r| r.queued.iter())
        .filter(|x| x.by == QueuedBy::Waiting)
        .map(|x| x.in_flight - x.running)
        .reduce(f64::max);
    WhileQueued {
        scrapes: sightings.len(),
        median_running,
        full_steps,
        steps,
        bucket,
        capacity_waiting,
    }
}

/// The token budget's evidence in words: what waited, what ran, the KV
/// cache and the steps' sizes while requests waited.
fn budget_words(
    q: &QueueReport,
    wq: &WhileQueued,
    admission_cap: Option<f64>,
    max_num_seqs: Option<f64>,
    kv_max: Option<f64>,
    budget: Option<f64>,
    queued: bool,
) -> String {
    let waited_words = match wq.capacity_waiting {
        Some(c) => format!(
            "up to {} requests waited ({})",
            num(c),
            match q.waiting_metric.as_deref() {
                Some(m) if m.ends_with("_by_reason") => format!("{m}{{reason=\"capacity\"}}"),
                Some(m) => m.to_string(),
                None => "vllm:num_requests_waiting".into(),
            }
        ),
        None => "requests waited (the queue time)".into(),
    };
    let below = match (admission_cap, max_num_seqs) {
        (Some(cap), Some(m)) => {
            format!("at most {} ran, below --max-num-seqs {}", num(cap), num(m))
        }
        (Some(cap), None) => format!(
            "at most {} ran, {} at the median: spread below their peak, no sequence cap held them",
            num(cap),
            wq.median_running.map_or("?".into(), num)
        ),
        (None, _) => "running was not read at those scrapes".into(),
    };
    let kv = kv_max.map_or("KV usage missing".into(), |k| {
        format!("the KV cache peaked at {k:.1} %")
    });
    let steps = match wq.bucket {
        Some((lo, hi)) if wq.steps > 0.0 => format!(
            "; {:.0} % of the engine steps then carried {}–{} tokens (vllm:iteration_tokens_total){}",
            100.0 * wq.full_steps / wq.steps,
            num(lo + 1.0),
            if hi.is_finite() {
                num(hi)
            } else {
                "more".into()
            },
            budget.map_or(String::new(), |b| format!(
                ", the bucket of --max-num-batched-tokens {}",
                num(b)
            ))
        ),
        _ => String::new(),
    };
    if queued {
        format!(
            "{waited_words} while {below}, and {kv}: what remains in vLLM's scheduler is the step's token budget{steps}"
        )
    } else {
        format!(
            "no request waited, so the step's token budget held none back{}",
            budget.map_or(String::new(), |b| format!(
                " (--max-num-batched-tokens {})",
                num(b)
            ))
        )
    }
}

/// What binds: every limit checked against its own evidence (`docs/capacity.md`).
fn limits(i: &CapacityInput<'_>, w: &mut Written) -> Limits {
    let s = i.summary;
    let q = i.queue;
    let admission_cap = q.admission_cap();
    let queueing_starts_at = q.queueing_starts_at();
    let queued = queueing_starts_at.is_some();
    let kv_max = s.efficiency.kv_cache_pct;
    let preempting = s.efficiency.preemptions_per_min.is_some_and(|p| p > 0.0);
    // The configuration reads the manifest's engine_args too.
    let max_num_seqs = i.config.max_num_seqs;
    let budget = i.config.max_num_batched_tokens;
    let wq = while_queued(i);
    let kv_low = kv_max.is_none_or(|k| k < KV_FULL_PCT);

    // The KV cache.
    let kv_binds = kv_max.is_some_and(|k| k >= KV_FULL_PCT) || (preempting && queued);
    let kv_evidence = match (kv_max, preempting) {
        (Some(k), true) => format!(
            "KV cache usage peaked at {k:.1} % (vllm:kv_cache_usage_perc) with {} preemptions per minute (vllm:num_preemptions)",
            num(s.efficiency.preemptions_per_min.unwrap_or(0.0))
        ),
        (Some(k), false) => format!(
            "KV cache usage peaked at {k:.1} % (vllm:kv_cache_usage_perc), no preemptions; it binds at {KV_FULL_PCT:.0} % or with preemptions"
        ),
        (None, _) => "vllm:kv_cache_usage_perc is missing".into(),
    };

    // --max-num-seqs: running held at the cap whenever requests waited.
    let pinned = admission_cap
        .zip(wq.median_running)
        .is_some_and(|(cap, m)| m >= cap - (PINNED_SLACK * cap).max(1.0) - 1e-9);
    let seqs_binds = queued
        && admission_cap.is_some_and(|cap| match max_num_seqs {
            Some(m) => cap >= m - 0.5,
            None => pinned,
        });
    let seqs_evidence = match (admission_cap, max_num_seqs) {
        (None, m) => format!(
            "no scrape had requests waiting{}",
            m.map_or(String::new(), |m| format!(" (--max-num-seqs {})", num(m)))
        ),
        (Some(cap), Some(m)) => format!(
            "at most {} requests ran while others waited, against --max-num-seqs {}",
            num(cap),
            num(m)
        ),
        (Some(cap), None) => format!(
            "at most {} requests ran while others waited, {} at the median of those {} scrapes (--max-num-seqs not stated: running held within {} of its peak whenever requests waited is the sign of a sequence cap; a token budget leaves it spread below)",
            num(cap),
            wq.median_running.map_or("?".into(), num),
            wq.scrapes,
            num((PINNED_SLACK * cap).max(1.0))
        ),
    };

    // The step's token budget: steps full while requests waited for
    // capacity below the sequence cap, with the KV cache far from full.
    let full = wq.steps > 0.0 && wq.full_steps >= FULL_STEPS_SHARE * wq.steps;
    let below_seqs = match (admission_cap, max_num_seqs) {
        (Some(cap), Some(m)) => cap < m - 0.5,
        _ => !pinned,
    };
    // Waiting seen at scrapes (not only as queue time) below the cap.
    let waited = admission_cap.is_some();
    let budget_binds = queued && kv_low && below_seqs && (full || waited);
    let budget_evidence = budget_words(q, &wq, admission_cap, max_num_seqs, kv_max, budget, queued);

    let client_evidence = match q.peak_in_flight() {
        Some(p) if !queued => format!(
            "nothing waited: at most {} requests were in flight, all admitted at once",
            num(p)
        ),
        _ => "requests waited: the server, not the client, held them".into(),
    };

    let mut checks = vec![
        LimitCheck {
            limit: BindingLimit::KvCache,
            binds: kv_binds,
            evidence: kv_evidence,
        },
        LimitCheck {
            limit: BindingLimit::MaxNumSeqs,
            binds: seqs_binds,
            evidence: seqs_evidence,
        },
        LimitCheck {
            limit: BindingLimit::TokenBudget,
            binds: budget_binds,
            evidence: budget_evidence,
        },
        LimitCheck {
            limit: BindingLimit::NoneSeen,
            binds: !queued,
            evidence: client_evidence,
        },
    ];
    let mut binding_all: Vec<BindingLimit> =
        checks.iter().filter(|c| c.binds).map(|c| c.limit).collect();
    if binding_all.is_empty() {
        binding_all.push(BindingLimit::Unexplained);
        checks.push(LimitCheck {
            limit: BindingLimit::Unexplained,
            binds: true,
            evidence: "requests waited, and no limit's evidence is in the capture (the KV cache was not full, running did not hold at a cap, the steps were not full)".into(),
        });
    }
    let binding = binding_all[0];
    w.sources.insert(
        "binding_limit".into(),
        checks
            .iter()
            .find(|c| c.limit == binding)
            .map(|c| c.evidence.clone())
            .unwrap_or_default(),
    );
    if admission_cap.is_some() {
        w.sources.insert(
            "admission_cap".into(),
            "the queue objective's admission cap".into(),
        );
    }

    Limits {
        admission_cap,
        queueing_starts_at,
        binding,
        binding_all,
        checks,
        max_num_seqs,
    }
}

/// Latency against concurrency, per replica (the fleet when one), and the
/// largest concurrency that met each objective.
fn concurrency(
    i: &CapacityInput<'_>,
    w: &mut Written,
) -> (Vec<ConcurrencyPoint>, ConcurrencyMeeting) {
    let replicas = i.replicas.len().max(1);
    let objective = &i.settings.slo;
    let mut points = Vec::new();
    let mut ttft_ok: Vec<f64> = Vec::new();
    let mut itl_ok: Vec<f64> = Vec::new();
    let by_replica = replicas > 1;
    for (l, e) in i.latency_rows.iter().zip(i.efficiency_rows) {
        if l.key.replica.is_fleet() == by_replica {
            continue;
        }
        let running = e.fields.running_avg;
        let in_flight = running.map(|r| r + e.fields.waiting_avg.unwrap_or(0.0));
        points.push(ConcurrencyPoint {
            window_start_ms: l.key.window_start_ms,
            replica: l.key.replica.clone(),
            running,
            in_flight,
            ttft_p95: l.fields.bounds.ttft_p95_ms,
            itl_p95: l.fields.bounds.itl_p95_ms,
        });
        let proven = |b: Option<crate::model::Bounds>, objective: f64| {
            b.and_then(|b| b.high)
                .is_some_and(|h| h <= objective + 1e-9)
        };
        if let Some(x) = in_flight
            && proven(l.fields.bounds.ttft_p95_ms, objective.ttft_p95_ms)
        {
            ttft_ok.push(x);
        }
        if let Some(x) = running
            && proven(l.fields.bounds.itl_p95_ms, objective.itl_p95_ms)
        {
            itl_ok.push(x);
        }
    }
    // The phases' own p95 at their mean concurrency (one replica: the
    // phases are the fleet's).
    let mut ttft_phases: Vec<(f64, usize)> = Vec::new();
    let mut itl_phases: Vec<(f64, usize)> = Vec::new();
    if !by_replica {
        for p in i.phases.iter().filter(|p| p.kind.is_load()) {
            let n = ((p.end_ms - p.start_ms) / i.settings.window_ms.max(1)) as usize;
            let b = &p.figures.latency.bounds;
            let proven = |b: Option<crate::model::Bounds>, objective: f64| {
                b.and_then(|b| b.high)
                    .is_some_and(|h| h <= objective + 1e-9)
            };
            if let Some(x) = p.in_flight_avg
                && proven(b.ttft_p95_ms, objective.ttft_p95_ms)
            {
                ttft_phases.push((x, n));
            }
            if let Some(x) = p.figures.efficiency.running_avg
                && proven(b.itl_p95_ms, objective.itl_p95_ms)
            {
                itl_phases.push((x, n));
            }
        }
    }
    let ttft = meeting(&ttft_ok, &ttft_phases);
    let itl = meeting(&itl_ok, &itl_phases);
    let max_concurrency_meeting = ConcurrencyMeeting {
        ttft_p95: ttft.0,
        itl_p95: itl.0,
        ttft_p95_windows: ttft.1,
        itl_p95_windows: itl.1,
        ttft_p95_too_few: ttft.3,
        itl_p95_too_few: itl.3,
        ttft_p95_from: ttft.2,
        itl_p95_from: itl.2,
    };
    w.sources.insert(
        "max_concurrency_meeting".into(),
        "the largest mean requests in flight (TTFT) or running (inter-token) with 3 windows or more within 10 % of it whose p95 bucket lies wholly within the objective, or a load phase of 3 windows or more whose own p95 does at a higher mean; observed only, never extrapolated".into(),
    );

    (points, max_concurrency_meeting)
}

/// The largest concurrency met, from the proving windows' concurrencies
/// and the proving load phases' (mean, windows): the largest `x` with
/// [`MEETING_MIN_WINDOWS`] windows within 10 % of it, raised to a phase's
/// mean where a phase of as many windows proves it higher; `None` when
/// neither has enough windows. Then the highest concurrency above that
/// which too few windows proved, with their number.
fn meeting(
    windows: &[f64],
    phases: &[(f64, usize)],
) -> (
    Option<f64>,
    usize,
    Option<crate::model::MeetingFrom>,
    Option<crate::model::TooFew>,
) {
    use crate::model::{MeetingFrom, TooFew};
    let round = |x: f64| (x * 10.0).round() / 10.0;
    let near = |x: f64| {
        windows
            .iter()
            .filter(|&&y| (y - x).abs() <= 0.1 * x)
            .count()
    };
    let mut sorted: Vec<f64> = windows.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let from_windows = sorted.iter().find_map(|&x| {
        let n = near(x);
        (n >= MEETING_MIN_WINDOWS).then_some((x, n))
    });
    let from_phase = phases
        .iter()
        .filter(|(_, n)| *n >= MEETING_MIN_WINDOWS)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let (at, n, from) = match (from_windows, from_phase) {
        (Some((w, _)), Some(&(p, pn))) if round(p) > round(w) => {
            (Some(round(p)), pn, Some(MeetingFrom::Phase))
        }
        (Some((w, n)), _) => (Some(round(w)), n, Some(MeetingFrom::Windows)),
        (None, Some(&(p, pn))) => (Some(round(p)), pn, Some(MeetingFrom::Phase)),
        (None, None) => (None, 0, None),
    };
    let above = |x: f64| at.is_none_or(|a| round(x) > a);
    let too_few = sorted
        .iter()
        .map(|&x| (x, near(x)))
        .chain(phases.iter().copied())
        .filter(|&(x, _)| above(x))
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(x, windows)| TooFew {
            at: round(x),
            windows,
        });
    (at, n, from, too_few)
}

/// The hardware floor: weight bytes ÷ tensor parallel ÷ bandwidth; also
/// the model and GPU the tables know.
fn floor(
    i: &CapacityInput<'_>,
    w: &mut Written,
) -> (
    Option<&'static ModelSpec>,
    Option<&'static GpuSpec>,
    Option<Floor>,
) {
    let (s, d) = (i.summary, i.deployment);
    let replicas = i.replicas.len().max(1);
    let objective = &i.settings.slo;
    let served = d.model.clone().unwrap_or_default();
    let model: Option<&ModelSpec> = hw::find_model(&served);
    let gpu: Option<&GpuSpec> = d.gpu_model.as_deref().and_then(hw::find_gpu);
    let quant = engine_arg(d, &["quantization", "dtype"]);
    let (bytes_per_param, dtype_source) = hw::bytes_per_param(&served, quant);
    let weights: Option<(f64, String)> = match (i.settings.model_bytes, model) {
        (Some(b), _) => Some((b, "--model-bytes".to_string())),
        (None, Some(m)) => Some((
            m.active_params * bytes_per_param,
            format!(
                "model table: {} ({} parameters{}), {dtype_source}",
                m.name,
                crate::text::num(m.params / 1e9) + " B",
                if m.active_params < m.params {
                    format!(", {} B active per token", num(m.active_params / 1e9))
                } else {
                    String::new()
                }
            ),
        )),
        (None, None) => None,
    };
    let gpus_per_replica = if d.gpus > 0 {
        Some((d.gpus as f64 / replicas as f64).max(1.0))
    } else {
        None
    };
    let tensor_parallel = engine_num(d, &["tensor-parallel-size", "tensor_parallel_size", "tp"])
        .or(gpus_per_replica)
        .unwrap_or(1.0)
        .max(1.0);
    let speculative = i.catalogue.get(Signal::SpecDecodeDraftTokens).status != Status::Missing;
    let floor = match (&weights, gpu) {
        (Some((bytes, source)), Some(g)) => {
            let ms = bytes / tensor_parallel / g.bandwidth * 1000.0;
            let infeasible = if ms > objective.itl_p95_ms && !speculative {
                vec![SloId::ItlP95]
            } else {
                Vec::new()
            };
            w.sources.insert(
                "itl_floor_ms".into(),
                format!(
                    "{source}; ÷ tensor parallel {}; ÷ {} GB/s ({} datasheet)",
                    num(tensor_parallel),
                    num(g.bandwidth / 1e9),
                    g.name
                ),
            );
            Some(Floor {
                weight_bytes: *bytes,
                weight_source: source.clone(),
                tensor_parallel,
                bandwidth: g.bandwidth,
                gpu: g.name.to_string(),
                ms,
                measured_ms: s.latency.inter_token_ms,
                infeasible,
                speculative,
            })
        }
        _ => {
            w.notes.push(match (&weights, gpu) {
                (None, _) => format!(
                    "No decode floor: the model ({}) is not in the table; give its weight size with --model-bytes.",
                    if served.is_empty() { "unnamed" } else { &served }
                ),
                _ => format!(
                    "No decode floor: the GPU ({}) has no datasheet bandwidth in the table.",
                    d.gpu_model.as_deref().unwrap_or("none seen")
                ),
            });
            None
        }
    };
    if let (Some(f), true) = (&floor, speculative) {
        w.notes.push(format!(
            "Speculative decoding is on: one step can emit several tokens, so the inter-token latency can beat the {:.1} ms per-step floor.",
            f.ms
        ));
    }

    (model, gpu, floor)
}

/// Achieved FLOP/s and bytes/s, MFU and MBU, and where they come from.
struct Utilisation {
    flops: Option<f64>,
    bytes: Option<f64>,
    mfu: Option<f64>,
    mbu: Option<f64>,
    from: Option<UtilisationSource>,
}

/// vLLM's `estimated_*` counters, else DCGM's activity standing in.
fn utilisation(i: &CapacityInput<'_>, gpu: Option<&GpuSpec>, w: &mut Written) -> Utilisation {
    let (s, d) = (i.summary, i.deployment);
    let flops = per_gpu_rate(i.query, Signal::EstimatedFlops);
    let reads = per_gpu_rate(i.query, Signal::EstimatedReadBytes);
    let writes = per_gpu_rate(i.query, Signal::EstimatedWriteBytes);
    let rate = |x: Option<(f64, f64)>| {
        x.filter(|(inc, secs)| *inc > 0.0 && *secs > 0.0)
            .map(|(inc, secs)| inc / secs)
    };
    let achieved_flops_per_s = rate(flops);
    let achieved_bytes_per_s = match (rate(reads), rate(writes)) {
        (Some(r), Some(w)) => Some(r + w),
        (Some(r), None) => Some(r),
        _ => None,
    };
    let counters_present = flops.is_some() || reads.is_some();
    let (mut mfu_pct, mut mbu_pct) = (None, None);
    let mut utilisation_from = None;
    if achieved_flops_per_s.is_some() || achieved_bytes_per_s.is_some() {
        w.sources.insert(
            "achieved_flops_per_s".into(),
            "vllm:estimated_flops_per_gpu_total (vLLM's estimate from the model's shape)".into(),
        );
        w.sources.insert("achieved_bytes_per_s".into(), "vllm:estimated_read_bytes_per_gpu_total + vllm:estimated_write_bytes_per_gpu_total (estimates)".into());
        match gpu {
            Some(g) => {
                mfu_pct = achieved_flops_per_s
                    .zip(g.peak_flops)
                    .map(|(a, p)| 100.0 * a / p);
                mbu_pct = achieved_bytes_per_s.map(|a| 100.0 * a / g.bandwidth);
                utilisation_from = Some(UtilisationSource::VllmEstimates);
                if mfu_pct.is_some() {
                    w.sources.insert("mfu_pct".into(), format!("achieved FLOP/s ÷ {} dense peak", g.name));
                } else {
                    w.notes.push(format!("MFU null: no datasheet FLOP/s for the {}.", g.name));
                }
                w.sources.insert("mbu_pct".into(), format!("achieved bytes/s ÷ {} bandwidth", g.name));
            }
            None => w.notes.push(format!(
                "MFU and MBU null: {} has no GPU peak to divide by (a CPU server, or a GPU not in the table).",
                d.gpu_model.as_deref().unwrap_or("this server")
            )),
        }
    } else {
        if counters_present {
            w.notes.push("vllm:estimated_* counters are flat at 0: the server ran without --enable-mfu-metrics, so achieved FLOP/s and bytes/s are missing, not zero.".into());
        }
        // DCGM activity instead: shares of cycles, upper bounds on MFU/MBU.
        if let Some(t) = s.gpu.tensor_active_pct_avg {
            mfu_pct = Some(t);
            utilisation_from = Some(UtilisationSource::Dcgm);
            w.sources.insert("mfu_pct".into(), "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (a share of cycles with the tensor pipes busy: an upper bound on MFU, not MFU)".into());
        }
        if let Some(dr) = s.gpu.dram_active_pct_avg {
            mbu_pct = Some(dr);
            utilisation_from = Some(UtilisationSource::Dcgm);
            w.sources.insert("mbu_pct".into(), "DCGM_FI_PROF_DRAM_ACTIVE (a share of cycles the memory interface is busy; roughly achieved bandwidth ÷ peak)".into());
        }
        if mfu_pct.is_none() && mbu_pct.is_none() && gpu.is_none() {
            w.notes.push(format!(
                "MFU and MBU null: no estimated_* counters with --enable-mfu-metrics, no DCGM profiling fields, and no GPU peak for {}.",
                d.gpu_model.as_deref().unwrap_or("this server")
            ));
        }
    }

    Utilisation {
        flops: achieved_flops_per_s,
        bytes: achieved_bytes_per_s,
        mfu: mfu_pct,
        mbu: mbu_pct,
        from: utilisation_from,
    }
}

/// The prefix cache against the shared prefix the user states, and the
/// configuration's word on it (caching on, a fixed pool).
fn prefix(i: &CapacityInput<'_>, block_size: Option<f64>) -> (PrefixCeiling, bool) {
    let s = i.summary;
    let hit = s.efficiency.prefix_cache_hit_pct;
    let prompt = s.workload.avg_prompt_tokens;
    let shared = i.settings.shared_prefix_tokens;
    let ceiling_pct = match (shared, block_size, prompt) {
        (Some(sh), Some(b), Some(p)) if p > 0.0 => Some(100.0 * ((sh / b).floor() * b).min(p) / p),
        _ => None,
    };
    let prefix = PrefixCeiling {
        block_size,
        cached_tokens_per_request: hit.zip(prompt).map(|(h, p)| h / 100.0 * p),
        prompt_tokens: prompt,
        shared_prefix_tokens: shared,
        ceiling_pct,
        hit_pct: hit,
        shorter_than_a_block: shared.zip(block_size).is_some_and(|(sh, b)| sh < b),
        exceeded: hit
            .zip(ceiling_pct)
            .is_some_and(|(h, c)| h > c + crate::measure::thresholds::PREFIX_CEILING_MARGIN_PP),
        enabled: cache_label(i.store, i.replicas, "enable_prefix_caching").and_then(|v| {
            match v.to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }
        }),
    };
    let blocks_overridden = i.config.blocks_override.is_some();

    (prefix, blocks_overridden)
}

/// What preemptions cost.
fn preemption(i: &CapacityInput<'_>, w: &mut Written) -> Option<PreemptionCost> {
    let s = i.summary;
    let prompt = s.workload.avg_prompt_tokens;
    let preemption = s
        .efficiency
        .preemptions_per_min
        .filter(|p| *p > 0.0)
        .map(|per_min| {
            let per_request = i
                .whole
                .hists
                .get(&Signal::RequestPreemptions)
                .and_then(|h| h.avg());
            let minutes = (s.window_end_ms - s.window_start_ms) as f64 / 60_000.0;
            let recomputed = i
                .whole
                .counters
                .get(&Signal::RecomputedPromptTokens)
                .map(|c| c.increase / minutes.max(1e-9));
            // Without the recompute counter: each preemption recomputes about a
            // request's prompt plus half its answer.
            let tokens_per_min = recomputed.or_else(|| {
                prompt
                    .zip(s.workload.avg_generated_tokens)
                    .map(|(p, g)| per_min * (p + g / 2.0))
            });
            let per_token_ms = s
                .latency
                .prefill_ms
                .zip(prompt)
                .filter(|(_, p)| *p > 0.0)
                .map(|(ms, p)| ms / p);
            PreemptionCost {
                per_min: Some(per_min),
                per_request,
                recomputed_tokens_per_min: recomputed,
                recompute_ms_per_min: tokens_per_min.zip(per_token_ms).map(|(t, ms)| t * ms),
            }
        });
    if preemption.is_some() {
        w.sources.insert(
            "preemption".into(),
            "vllm:num_preemptions_total; vllm:request_num_preemptions and vllm:prompt_tokens_recomputed_total where exported; recompute time = tokens × mean prefill ms per prompt token (an estimate; without the recompute counter, a request's prompt plus half its answer per preemption)".into(),
        );
    }

    preemption
}

/// Energy and money per token.
fn economics(i: &CapacityInput<'_>, w: &mut Written) -> Economics {
    let (s, d) = (i.summary, i.deployment);
    let hit = s.efficiency.prefix_cache_hit_pct;
    let energy_j = s.gpu.energy_j;
    let minutes = (s.window_end_ms - s.window_start_ms) as f64 / 60_000.0;
    let generated = s.efficiency.gen_tokens_per_sec.map(|r| r * minutes * 60.0);
    let cached_share = s.efficiency.cached_prompt_share_pct.or(hit).unwrap_or(0.0) / 100.0;
    let computed = s
        .efficiency
        .prompt_tokens_per_sec
        .map(|r| r * minutes * 60.0 * (1.0 - cached_share))
        .zip(generated)
        .map(|(p, g)| p + g);
    let per_joule = |tokens: Option<f64>| {
        tokens
            .zip(energy_j)
            .filter(|(_, j)| *j > 0.0)
            .map(|(t, j)| t / j)
    };
    let gpu_hours = d.gpus as f64 * minutes / 60.0;
    let cost = |tokens: Option<f64>| {
        i.settings
            .gpu_hour_cost
            .zip(tokens)
            .filter(|(_, t)| *t > 0.0 && gpu_hours > 0.0)
            .map(|(c, t)| c * gpu_hours / (t / 1e6))
    };
    let economics = Economics {
        // The memory step's figure (the counters' increase over the energy
        // counter's), so that the report quotes one number; computed
        // tokens scale it by their share.
        generated_tokens_per_joule: s.memory.tokens_per_joule.or(per_joule(generated)),
        computed_tokens_per_joule: match (s.memory.tokens_per_joule, computed, generated) {
            (Some(t), Some(c), Some(g)) if g > 0.0 => Some(t * c / g),
            _ => per_joule(computed),
        },
        cost_per_million_generated: cost(generated),
        cost_per_million_computed: cost(computed),
    };
    if economics.computed_tokens_per_joule.is_some() {
        w.sources.insert("economics".into(), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION over the capture; computed tokens = prompt tokens not served from cache + generated tokens".into());
    }
    if i.settings.gpu_hour_cost.is_some() && d.gpus == 0 {
        w.notes
            .push("Cost per token needs the GPUs' count: no GPU was seen in this capture.".into());
    }

    economics
}

/// Requests turned away by the queue limits (0.32+): they never reach the
/// engine, so no `finished_reason` counts them.
fn rejections(i: &CapacityInput<'_>, w: &mut Written) -> Option<Rejections> {
    let s = i.summary;
    let minutes = (s.window_end_ms - s.window_start_ms) as f64 / 60_000.0;
    let rejections = {
        let by = i.query.counter_by(Signal::AdmissionRejections, &["reason"]);
        let total: f64 = by.values().map(|c| c.total).sum();
        (!by.is_empty()).then(|| Rejections {
            total: crate::text::round(total),
            per_min: (minutes > 0.0).then(|| crate::text::round(total / minutes)),
            by_reason: by
                .iter()
                .filter(|(_, c)| c.total > 0.0)
                .map(|(k, c)| {
                    let k = if k.is_empty() { "unknown" } else { k.as_str() };
                    (k.to_string(), crate::text::round(c.total))
                })
                .collect(),
        })
    };
    if rejections.is_some() {
        w.sources.insert(
            "rejections".into(),
            "vllm:admission_rejections_total by reason (increase over the capture)".into(),
        );
    }

    rejections
}

#[allow(clippy::too_many_arguments)]
fn what_ifs(
    kv_requests: Option<f64>,
    kv_tokens: Option<f64>,
    blocks_per_request: Option<f64>,
    block_size: Option<f64>,
    floor: Option<&Floor>,
    kv_bytes_per_token: Option<f64>,
    replicas: usize,
    binding: BindingLimit,
    cap: Option<f64>,
    max_num_seqs: Option<f64>,
    gpu: Option<&GpuSpec>,
    kv_heads: Option<u32>,
) -> Vec<WhatIf> {
    let requests_for = |tokens: f64| {
        block_size
            .zip(blocks_per_request)
            .map(|(b, per)| ((tokens / b).floor() / per).floor())
    };
    let floor_ms = floor.map(|f| f.ms);
    let mut out = vec![WhatIf {
        id: "add_replica".into(),
        title: format!("{} → {} replicas", replicas, replicas + 1),
        kv_requests: kv_requests.map(|r| r * (replicas + 1) as f64),
        itl_floor_ms: floor_ms,
        assumptions: "A replica of the same shape behind the same load balancer: the fleet's KV capacity and admission grow by one replica's; the per-step floor does not move.".into(),
    }];
    // FP8 weights: half the bytes to stream; the freed memory joins the
    // KV pool.
    let fp8_weights = floor.filter(|f| f.weight_bytes > 0.0).map(|f| {
        let freed_per_replica = f.weight_bytes / 2.0;
        let extra_tokens = kv_bytes_per_token.map(|b| freed_per_replica / b);
        WhatIf {
            id: "fp8_weights".into(),
            title: "FP8 weights".into(),
            kv_requests: kv_tokens
                .zip(extra_tokens)
                .and_then(|(t, x)| requests_for(t + x)),
            itl_floor_ms: Some(f.ms / 2.0),
            assumptions: format!(
                "Half the weight bytes (1 per parameter): the floor halves and ~{} GB per replica joins the KV pool{}. {} Check accuracy on your own evaluation set.",
                num(freed_per_replica / 1e9),
                if kv_bytes_per_token.is_none() { " (its size in requests needs the model's KV shape, not in the table)" } else { "" },
                if gpu.is_some_and(|g| g.fp8) { "This GPU has native FP8." } else { "Without native FP8 this GPU runs 8-bit weight-only kernels: the bandwidth saving holds, the compute does not speed up." }
            ),
        }
    });
    out.extend(fp8_weights);
    if let Some(t) = kv_tokens {
        out.push(WhatIf {
            id: "fp8_kv_cache".into(),
            title: "FP8 KV cache (--kv-cache-dtype fp8)".into(),
            kv_requests: requests_for(2.0 * t),
            itl_floor_ms: floor_ms,
            assumptions: "One byte per KV element instead of two: the same memory holds twice the tokens; long contexts read half the KV bytes per step. Accuracy usually holds; check on your own evaluation set.".into(),
        });
    }
    // A larger sequence cap: it helps only where the cap binds first.
    let now = max_num_seqs.or(cap);
    if now.is_some() || binding == BindingLimit::MaxNumSeqs {
        let (gain, assumptions) = match binding {
            BindingLimit::MaxNumSeqs => (
                kv_requests,
                "Admission then stops at the KV cache's capacity in requests instead of the sequence cap; each step serves a bigger batch, so inter-token latency rises above the floor with the batch.",
            ),
            BindingLimit::KvCache => (
                now.zip(kv_requests).map(|(n, k)| n.min(k)),
                "No gain here: the KV cache binds first, so a higher cap only adds preemptions.",
            ),
            BindingLimit::TokenBudget => (
                now.zip(kv_requests).map(|(n, k)| n.min(k)),
                "No gain here: the token budget per step binds first; a higher cap lengthens each step.",
            ),
            BindingLimit::NoneSeen => (
                now.zip(kv_requests).map(|(n, k)| n.min(k)),
                "No gain at this load: the cap was never reached.",
            ),
            BindingLimit::Unexplained => (
                now.zip(kv_requests).map(|(n, k)| n.min(k)),
                "Unknown gain: requests queued, and nothing in the capture shows the cap as what held them.",
            ),
        };
        out.push(WhatIf {
            id: "more_seqs".into(),
            title: format!(
                "A larger --max-num-seqs{}",
                now.map_or(String::new(), |n| format!(" (now {})", num(n)))
            ),
            kv_requests: gain,
            itl_floor_ms: floor_ms,
            assumptions: assumptions.into(),
        });
    }
    // Twice the tensor parallelism only within a node of 8 GPUs (beyond,
    // the all-reduce crosses the network) and within the model's KV heads
    // (beyond, each GPU holds whole copies of heads: the pool does not
    // double).
    let tp_fits =
        |tp: f64| 2.0 * tp <= TP_NODE_GPUS && kv_heads.is_none_or(|h| 2.0 * tp <= f64::from(h));
    if let Some(f) = floor.filter(|f| tp_fits(f.tensor_parallel)) {
        // Per GPU the weights halve; the memory they free joins the pool,
        // and the second GPU brings its own memory.
        let tp = f.tensor_parallel;
        let pool_bytes = kv_tokens.zip(kv_bytes_per_token).map(|(t, b)| t * b);
        let new_tokens = pool_bytes
            .zip(kv_bytes_per_token)
            .map(|(pool, b)| (2.0 * pool + f.weight_bytes) / b);
        out.push(WhatIf {
            id: "tensor_parallel_2".into(),
            title: format!("Tensor parallelism ×2 ({} → {} GPUs per replica)", num(tp), num(2.0 * tp)),
            kv_requests: new_tokens.and_then(requests_for),
            itl_floor_ms: Some(f.ms / 2.0),
            assumptions: "Twice the GPUs per replica: each streams half the weights, so the floor halves (communication costs some of it back); the second GPU's memory and the weights' freed half join the KV pool (the activation reserve per GPU is ignored).".into(),
        });
    }
    out
}

/// GPUs in one node (NVLink domain of an HGX board): tensor parallelism
/// past it crosses the network.
const TP_NODE_GPUS: f64 = 8.0;

/// The objectives the floor puts out of reach, for the verdict and the
/// scorecard: `(objective, floor)`.
pub(crate) fn infeasible(c: &Capacity) -> Vec<(SloId, f64)> {
    c.floor
        .iter()
        .flat_map(|f| f.infeasible.iter().map(move |s| (*s, f.ms)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::meeting;
    use crate::model::{MeetingFrom, TooFew};

    /// (figure, windows behind it, from, too few above it).
    type Expected = (
        Option<f64>,
        usize,
        Option<MeetingFrom>,
        Option<(f64, usize)>,
    );

    /// (proving windows' concurrencies, proving phases (mean, windows)) →
    /// (figure, windows behind it, from, too few above it).
    fn check(windows: &[f64], phases: &[(f64, usize)], expect: Expected) {
        let (at, n, from, too_few) = meeting(windows, phases);
        assert_eq!(
            (at, n, from, too_few.map(|t: TooFew| (t.at, t.windows))),
            expect,
            "{windows:?} {phases:?}"
        );
    }

    #[test]
    fn one_window_is_not_enough() {
        // One window at 30, four at 10: met up to 10; 30 is shown apart.
        check(
            &[10.0, 10.0, 9.5, 10.0, 30.0],
            &[],
            (Some(10.0), 4, Some(MeetingFrom::Windows), Some((30.0, 1))),
        );
        // Only two windows anywhere: no figure, and why.
        check(&[12.0, 12.0], &[], (None, 0, None, Some((12.0, 2))));
        check(&[], &[], (None, 0, None, None));
    }

    #[test]
    fn three_windows_within_ten_per_cent_are_enough() {
        check(
            &[20.0, 19.0, 18.5, 5.0],
            &[],
            (Some(20.0), 3, Some(MeetingFrom::Windows), None),
        );
        // 17.9 is more than 10 % below 20: two near 20, three near 19.
        check(
            &[20.0, 19.0, 17.9],
            &[],
            (Some(19.0), 3, Some(MeetingFrom::Windows), Some((20.0, 2))),
        );
    }

    #[test]
    fn a_level_the_report_shows_meeting_is_never_above_the_figure() {
        // A four-window phase meets the objective at a mean of 24 while its
        // windows spread (16, 22, 26, 32 in flight, one proving each): the
        // figure is the phase's.
        check(
            &[16.0, 22.0, 26.0, 32.0, 8.0, 8.0, 8.0],
            &[(24.0, 4)],
            (Some(24.0), 4, Some(MeetingFrom::Phase), Some((32.0, 1))),
        );
        // A two-window phase is too short to count, and is shown apart.
        check(
            &[8.0, 8.0, 8.0],
            &[(18.0, 2)],
            (Some(8.0), 3, Some(MeetingFrom::Windows), Some((18.0, 2))),
        );
    }
}
