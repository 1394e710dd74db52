//! Before/after: two reports compared. First the comparability guard (is
//! this a fair comparison at all?), then, for every key figure, the before,
//! the after, the change and its direction, called significant only when
//! the per-window values of the two captures do not overlap; the SLO
//! verdicts side by side; the recommendations that appeared or went away.
//! The comparison's types are the model's ([`vllm_lens_model::compare`]).

use std::collections::BTreeSet;

use crate::model::{Report, Row};
pub use vllm_lens_model::compare::*;

fn fleet<T: Clone>(rows: &[Row<T>]) -> Vec<T> {
    rows.iter()
        .filter(|r| r.key.replica.is_fleet())
        .map(|r| r.fields.clone())
        .collect()
}

fn side(r: &Report) -> Side {
    Side {
        bundle: r.bundle.name.clone(),
        sha256: r.bundle.sha256.clone(),
        model: r.deployment.model.clone(),
        gpu: r.deployment.hardware(),
        vllm_versions: r.deployment.vllm_versions.clone(),
        start_ms: r.bundle.start_ms,
        duration_ms: r.bundle.duration_ms,
        scrape_interval_ms: r.bundle.scrape_interval_ms,
        slo: r
            .slo
            .iter()
            .map(|s| (s.id, s.status, s.value, s.unit.clone()))
            .collect(),
        recommendations: r.recommendations.iter().map(|x| x.id.clone()).collect(),
    }
}

fn range(v: &[Option<f64>]) -> Option<[f64; 2]> {
    let present: Vec<f64> = v
        .iter()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if present.is_empty() {
        return None;
    }
    Some([
        present.iter().copied().fold(f64::INFINITY, f64::min),
        present.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ])
}

type Getter = fn(&Report) -> (Option<f64>, Vec<Option<f64>>);

// long: a table, one key figure per entry (rustfmt spreads each over seven lines)
/// Key figures: (key, label, unit, lower is better, getter).
fn figures() -> Vec<(&'static str, &'static str, &'static str, bool, Getter)> {
    macro_rules! lat {
        ($f:ident) => {
            |r: &Report| {
                (
                    r.summary.latency.$f,
                    fleet(&r.rows.latency).iter().map(|x| x.$f).collect(),
                )
            }
        };
    }
    macro_rules! eff {
        ($f:ident) => {
            |r: &Report| {
                (
                    r.summary.efficiency.$f,
                    fleet(&r.rows.efficiency).iter().map(|x| x.$f).collect(),
                )
            }
        };
    }
    macro_rules! wl {
        ($f:ident) => {
            |r: &Report| {
                (
                    r.summary.workload.$f,
                    fleet(&r.rows.workload).iter().map(|x| x.$f).collect(),
                )
            }
        };
    }
    macro_rules! mem {
        ($f:ident) => {
            |r: &Report| {
                (
                    r.summary.memory.$f,
                    fleet(&r.rows.memory).iter().map(|x| x.$f).collect(),
                )
            }
        };
    }
    vec![
        (
            "ttft_p95_ms",
            "Time to first token p95",
            "ms",
            true,
            lat!(ttft_p95_ms),
        ),
        (
            "itl_p95_ms",
            "Inter-token latency p95",
            "ms",
            true,
            lat!(itl_p95_ms),
        ),
        (
            "inter_token_ms",
            "Inter-token latency (average)",
            "ms",
            true,
            lat!(inter_token_ms),
        ),
        (
            "e2e_ms",
            "End-to-end latency (average)",
            "ms",
            true,
            lat!(e2e_ms),
        ),
        (
            "queue_ms",
            "Queue time (average)",
            "ms",
            true,
            lat!(queue_ms),
        ),
        (
            "prefill_ms",
            "Prefill time (average)",
            "ms",
            true,
            lat!(prefill_ms),
        ),
        (
            "decode_ms",
            "Decode time (average)",
            "ms",
            true,
            lat!(decode_ms),
        ),
        (
            "gen_tokens_per_sec",
            "Generated tokens per second",
            "tokens/s",
            false,
            eff!(gen_tokens_per_sec),
        ),
        (
            "requests_per_min",
            "Finished requests per minute",
            "per min",
            false,
            wl!(requests_per_min),
        ),
        (
            "prefix_cache_hit_pct",
            "Prefix-cache hit rate",
            "%",
            false,
            eff!(prefix_cache_hit_pct),
        ),
        (
            "kv_cache_pct",
            "KV-cache pool used (max)",
            "%",
            true,
            eff!(kv_cache_pct),
        ),
        (
            "preemptions_per_min",
            "Preemptions per minute",
            "per min",
            true,
            eff!(preemptions_per_min),
        ),
        (
            "avg_generated_tokens",
            "Generated tokens per request",
            "tokens",
            false,
            wl!(avg_generated_tokens),
        ),
        (
            "max_tokens_utilisation_pct",
            "max_tokens used",
            "%",
            true,
            wl!(max_tokens_utilisation_pct),
        ),
        (
            "error_abort_pct",
            "Errors + aborts",
            "%",
            true,
            |r: &Report| {
                (
                    r.summary.outcomes.error_abort_pct,
                    fleet(&r.rows.outcomes)
                        .iter()
                        .map(|x| x.error_abort_pct)
                        .collect(),
                )
            },
        ),
        (
            "length_share_pct",
            "Answers cut at max_tokens",
            "%",
            true,
            |r: &Report| {
                let share = |o: &crate::model::Outcomes| {
                    let all: f64 = o.completions_per_min.values().sum();
                    (all > 0.0).then(|| {
                        100.0 * o.completions_per_min.get("length").copied().unwrap_or(0.0) / all
                    })
                };
                (
                    share(&r.summary.outcomes),
                    fleet(&r.rows.outcomes).iter().map(share).collect(),
                )
            },
        ),
        (
            "tokens_per_joule",
            "Generated tokens per joule",
            "tokens/J",
            false,
            mem!(tokens_per_joule),
        ),
        (
            "tokens_per_watt",
            "Tokens per second per watt",
            "tokens/s/W",
            false,
            mem!(tokens_per_watt),
        ),
    ]
}

fn ratio_apart(a: Option<f64>, b: Option<f64>, limit: f64) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => {
            let r = if a > b { a / b } else { b / a };
            (r > limit).then_some(r)
        }
        _ => None,
    }
}

/// The comparability guard: is this a fair comparison at all, and why
/// not; and whether the second capture started with a warm prefix cache.
fn guard(before: &Report, after: &Report) -> (Fairness, Vec<String>, bool) {
    let mut hard = Vec::new();
    let mut soft = Vec::new();
    let (b, a) = (&before.deployment, &after.deployment);
    if b.model != a.model {
        hard.push(format!(
            "Different models: {} before, {} after. Latency and throughput of two models are not the effect of a tuning change.",
            b.model.as_deref().unwrap_or("?"),
            a.model.as_deref().unwrap_or("?")
        ));
    }
    let (bw, aw) = (&before.summary.workload, &after.summary.workload);
    if let Some(r) = ratio_apart(bw.avg_prompt_tokens, aw.avg_prompt_tokens, 1.5) {
        hard.push(format!(
            "Different workloads: prompts average {:.0} tokens before and {:.0} after ({r:.1}×). Every latency figure depends on prompt length.",
            bw.avg_prompt_tokens.unwrap_or(0.0),
            aw.avg_prompt_tokens.unwrap_or(0.0)
        ));
    }
    if b.gpu_model != a.gpu_model || b.gpus != a.gpus {
        soft.push(format!(
            "Different hardware: {} × {} before, {} × {} after. Fine if the hardware is the change being judged.",
            b.gpus,
            b.gpu_model.as_deref().unwrap_or("?"),
            a.gpus,
            a.gpu_model.as_deref().unwrap_or("?")
        ));
    }
    if b.vllm_versions != a.vllm_versions {
        soft.push(format!(
            "Different vLLM releases inferred: {} before, {} after.",
            b.vllm_versions.as_deref().unwrap_or("?"),
            a.vllm_versions.as_deref().unwrap_or("?")
        ));
    }
    if before.bundle.scrape_interval_ms != after.bundle.scrape_interval_ms {
        soft.push(format!(
            "Different scrape intervals: {} ms before, {} ms after; windows hold different numbers of scrapes.",
            before.bundle.scrape_interval_ms.unwrap_or(0),
            after.bundle.scrape_interval_ms.unwrap_or(0)
        ));
    }
    if let Some(r) = ratio_apart(
        before.summary.efficiency.running,
        after.summary.efficiency.running,
        1.5,
    ) {
        soft.push(format!(
            "Different concurrency reached: at most {:.0} running requests before, {:.0} after ({r:.1}×). Latency grows with concurrency.",
            before.summary.efficiency.running.unwrap_or(0.0),
            after.summary.efficiency.running.unwrap_or(0.0)
        ));
    }
    let gen_similar = ratio_apart(bw.avg_generated_tokens, aw.avg_generated_tokens, 1.25).is_none();
    if gen_similar && let Some(r) = ratio_apart(bw.requests_per_min, aw.requests_per_min, 2.0) {
        soft.push(format!(
            "Different load: {:.0} requests per minute before, {:.0} after ({r:.1}×), with answers of the same length.",
            bw.requests_per_min.unwrap_or(0.0),
            aw.requests_per_min.unwrap_or(0.0)
        ));
    }
    if let Some(r) = ratio_apart(bw.avg_max_tokens, aw.avg_max_tokens, 1.1) {
        soft.push(format!(
            "max_tokens differs ({:.0} before, {:.0} after, {r:.1}×): answer lengths and decode times follow it. Fine if max_tokens is the change being judged.",
            bw.avg_max_tokens.unwrap_or(0.0),
            aw.avg_max_tokens.unwrap_or(0.0)
        ));
    }
    // A warm prefix cache: the second capture's first window already hits
    // far more than the first capture's did.
    let first_hit = |r: &Report| {
        fleet(&r.rows.efficiency)
            .iter()
            .find_map(|e| e.prefix_cache_hit_pct)
    };
    let warm = match (first_hit(before), first_hit(after)) {
        (Some(x), Some(y)) => y - x >= 15.0,
        _ => false,
    };
    if warm {
        soft.push(format!(
            "The second capture started with a warm prefix cache: {:.0} % hits in its first window against {:.0} % in the first capture's. Prefill and TTFT look better than a cold start would.",
            first_hit(after).unwrap_or(0.0),
            first_hit(before).unwrap_or(0.0)
        ));
    }
    let fairness = if !hard.is_empty() {
        Fairness::NotComparable
    } else if !soft.is_empty() {
        Fairness::Weak
    } else {
        Fairness::Comparable
    };
    let mut reasons = hard;
    reasons.extend(soft);
    (fairness, reasons, warm)
}

/// Every key figure before and after, with its direction, and the
/// overlays of the ones the comparison charts.
fn changes(before: &Report, after: &Report) -> (Vec<FigureChange>, Vec<Overlay>) {
    let mut changes = Vec::new();
    let mut overlays = Vec::new();
    for (key, label, unit, lower, get) in figures() {
        let (bv, bwv) = get(before);
        let (av, awv) = get(after);
        let (br, ar) = (range(&bwv), range(&awv));
        let direction = match (bv, av, br, ar) {
            (Some(x), Some(y), Some(rb), Some(ra)) => {
                let apart = ra[1] < rb[0] || ra[0] > rb[1];
                if !apart || x == y {
                    Direction::NoClearChange
                } else if (y < x) == lower {
                    Direction::Better
                } else {
                    Direction::Worse
                }
            }
            _ => Direction::Missing,
        };
        changes.push(FigureChange {
            key: key.to_string(),
            label: label.to_string(),
            unit: unit.to_string(),
            lower_is_better: lower,
            before: bv,
            after: av,
            change_pct: match (bv, av) {
                (Some(x), Some(y)) if x != 0.0 => Some(100.0 * (y - x) / x.abs()),
                _ => None,
            },
            before_range: br,
            after_range: ar,
            direction,
        });
        if [
            "ttft_p95_ms",
            "itl_p95_ms",
            "gen_tokens_per_sec",
            "decode_ms",
            "kv_cache_pct",
            "requests_per_min",
        ]
        .contains(&key)
        {
            overlays.push(Overlay {
                key: key.to_string(),
                title: label.to_string(),
                unit: unit.to_string(),
                before: bwv,
                after: awv,
            });
        }
    }
    (changes, overlays)
}

/// Compares two reports made with the same settings.
pub fn compare(before: &Report, after: &Report) -> Comparison {
    let (fairness, reasons, warm) = guard(before, after);
    let (changes, overlays) = changes(before, after);
    let ids = |r: &Report| {
        r.recommendations
            .iter()
            .map(|x| x.id.clone())
            .collect::<BTreeSet<_>>()
    };
    let (rb, ra) = (ids(before), ids(after));
    Comparison {
        schema_version: COMPARE_SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        before: side(before),
        after: side(after),
        fairness,
        reasons,
        warm_prefix_cache: warm,
        figures: changes,
        recommendations_appeared: ra.difference(&rb).cloned().collect(),
        recommendations_gone: rb.difference(&ra).cloned().collect(),
        overlays,
        window_ms: after.settings.window_ms,
    }
}
