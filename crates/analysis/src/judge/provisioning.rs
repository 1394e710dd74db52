//! Over, fits or under: the deployment against the load the capture saw.
//!
//! Every dimension gives the load it allows as a multiple of the peak load
//! level (the load phase with the most requests in flight): each latency
//! objective extrapolated over the load levels the capture saw (a straight
//! line through them; with one level, latency in proportion to load), the
//! KV pool in requests of the observed size, the sequence cap, and where
//! requests queued. The smallest is the headroom; under 1 (or an objective
//! failing, or a queue that grew) is *under*, 2 or more is *over*, and an
//! over-provisioned deployment is told what it could give back.

use crate::ids::{PhaseKind, SloId};
use crate::judge::slo::registry;
use crate::measure::hw::{self, GpuSpec};
use crate::measure::little::gauges_low;
use crate::model::{
    Capacity, Deployment, GiveBack, Headroom, Phase, Provisioning, ProvisioningStatus, Settings,
    SloResult, SloStatus,
};
use crate::text::{bucket_text, ms_text, num};

/// Headroom from which a deployment is over-provisioned (× the peak load).
pub(crate) const OVER_HEADROOM_X: f64 = 2.0;
/// The load a smaller deployment should carry at most, as a share of what
/// it allows: room for a peak the capture did not see.
const TARGET_SHARE: f64 = 0.8;
/// Load levels differing less than this (× in flight) are one level: no
/// slope can be read between them.
const DISTINCT_LEVELS_X: f64 = 1.3;

/// What provisioning reads.
pub(crate) struct ProvisioningInput<'a> {
    pub capacity: &'a Capacity,
    pub slo: &'a [SloResult],
    pub settings: &'a Settings,
    pub phases: &'a [Phase],
    pub deployment: &'a Deployment,
    pub max_num_seqs: Option<f64>,
}

/// A load level: requests in flight (fleet) and its figures.
struct Level {
    in_flight: f64,
    requests_per_min: Option<f64>,
    ttft_p95: Option<f64>,
    itl_p95: Option<f64>,
    start_ms: i64,
    end_ms: i64,
}

/// The phase's requests in flight: the gauges' mean, or Little's law's
/// figure where the gauges read too few.
fn in_flight(p: &Phase) -> Option<f64> {
    match (p.in_flight_avg, p.in_flight_from_latency) {
        (Some(g), Some(l)) if gauges_low(g, l, p.in_flight_se) => Some(l),
        (Some(g), _) => Some(g),
        (None, l) => l,
    }
}

fn levels(phases: &[Phase]) -> Vec<Level> {
    phases
        .iter()
        .filter(|p| matches!(p.kind, PhaseKind::Steady | PhaseKind::Overload))
        .filter_map(|p| {
            let n = in_flight(p).filter(|n| *n > 0.0)?;
            Some(Level {
                in_flight: n,
                requests_per_min: p.figures.workload.requests_per_min,
                ttft_p95: p.figures.latency.ttft_p95_ms,
                itl_p95: p.figures.latency.itl_p95_ms,
                start_ms: p.start_ms,
                end_ms: p.end_ms,
            })
        })
        .collect()
}

/// Least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// A latency objective's headroom over the load levels.
fn latency_headroom(
    id: &str,
    what: &str,
    levels: &[Level],
    peak: &Level,
    value: fn(&Level) -> Option<f64>,
    threshold: f64,
) -> Option<Headroom> {
    let at_peak = value(peak)?;
    let points: Vec<(f64, f64)> = levels
        .iter()
        .filter_map(|l| value(l).map(|v| (l.in_flight, v)))
        .collect();
    let lo = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let distinct = peak.in_flight >= DISTINCT_LEVELS_X * lo;
    let fitted = slope(&points).filter(|s| distinct && *s > 0.0);
    let (x, how) = match fitted {
        Some(s) => {
            let n = peak.in_flight + (threshold - at_peak) / s;
            (
                (n / peak.in_flight).max(0.0),
                format!(
                    "{} per extra request in flight over {} load levels ({} to {} in flight), a straight line to the {} objective at ~{} in flight",
                    ms_text(s),
                    points.len(),
                    num(lo.round()),
                    num(peak.in_flight.round()),
                    ms_text(threshold),
                    num(n.max(0.0).round())
                ),
            )
        }
        None => (
            threshold / at_peak.max(f64::MIN_POSITIVE),
            "one load level: assumes it grows no faster than the load".to_string(),
        ),
    };
    Some(Headroom {
        id: id.to_string(),
        headroom_x: x,
        evidence: format!(
            "{what} p95 ~{} at ~{} in flight (interpolated in its bucket) against {}: {}",
            ms_text(at_peak),
            num(peak.in_flight.round()),
            ms_text(threshold),
            how
        ),
    })
}

/// Every dimension's headroom at the peak load level.
fn dimensions(i: &ProvisioningInput<'_>, levels: &[Level], peak: &Level) -> Vec<Headroom> {
    let cap = i.capacity;
    let replicas = cap.replicas.max(1) as f64;
    let per_replica = peak.in_flight / replicas;
    let mut out = Vec::new();
    out.extend(latency_headroom(
        "ttft_p95",
        "The engine's TTFT",
        levels,
        peak,
        |l| l.ttft_p95,
        i.settings.slo.ttft_p95_ms,
    ));
    out.extend(latency_headroom(
        "itl_p95",
        "The engine's inter-token",
        levels,
        peak,
        |l| l.itl_p95,
        i.settings.slo.itl_p95_ms,
    ));
    if let Some(kv) = cap.kv_requests {
        out.push(Headroom {
            id: "kv_cache".into(),
            headroom_x: kv / per_replica,
            evidence: format!(
                "the KV cache holds ~{} requests of the observed size per replica; the peak had ~{}",
                num(kv.round()),
                num(per_replica.round().max(1.0))
            ),
        });
    }
    match cap.queueing_starts_at {
        Some(s) => out.push(Headroom {
            id: "queueing".into(),
            // Requests queued at or below the peak: at its limit.
            headroom_x: (s / per_replica).min(1.0),
            evidence: format!(
                "requests queued from {} in flight per replica, the peak had ~{}",
                num(s),
                num(per_replica.round())
            ),
        }),
        None => {
            if let Some(m) = i.max_num_seqs {
                out.push(Headroom {
                    id: "max_num_seqs".into(),
                    headroom_x: m / per_replica,
                    evidence: format!(
                        "--max-num-seqs {} per replica, the peak ran ~{}",
                        num(m),
                        num(per_replica.round().max(1.0))
                    ),
                });
            }
        }
    }
    out
}

/// The objectives that size the deployment (errors are not a matter of
/// size) and whether one fails.
fn failing(slo: &[SloResult]) -> Vec<&SloResult> {
    slo.iter()
        .filter(|s| s.id != SloId::ErrorAbortRate && s.status == SloStatus::Fail)
        .collect()
}

/// Whether the deployment is sized for its load.
pub(crate) fn provisioning(i: &ProvisioningInput<'_>) -> Provisioning {
    let levels = levels(i.phases);
    let Some(peak) = levels
        .iter()
        .max_by(|a, b| a.in_flight.total_cmp(&b.in_flight))
    else {
        return Provisioning {
            explanation: "Cannot tell: no load level with requests in flight to size against."
                .into(),
            ..Provisioning::default()
        };
    };
    let dims = dimensions(i, &levels, peak);
    let fails = failing(i.slo);
    let overload = i.phases.iter().any(|p| p.kind == PhaseKind::Overload);
    let floor_blocks = i
        .capacity
        .floor
        .as_ref()
        .is_some_and(|f| f.infeasible.contains(&SloId::ItlP95));
    let min = dims
        .iter()
        .min_by(|a, b| a.headroom_x.total_cmp(&b.headroom_x));
    let latency_known = dims.iter().any(|d| d.id.ends_with("_p95"));
    let undecided = undecided(i.slo);
    // Requests queueing at the peak while the queue objective holds is a
    // server at its limit, not short of it: "fits", never "under".
    let short = dims
        .iter()
        .filter(|d| d.id != "queueing")
        .any(|d| d.headroom_x < 1.0);
    let status = if !fails.is_empty() || overload || floor_blocks {
        ProvisioningStatus::Under
    } else if !undecided.is_empty() || !latency_known || min.is_none() {
        ProvisioningStatus::CannotTell
    } else if short {
        ProvisioningStatus::Under
    } else if min.is_some_and(|m| m.headroom_x >= OVER_HEADROOM_X) {
        ProvisioningStatus::Over
    } else {
        ProvisioningStatus::Fits
    };
    let headroom_x = min
        .map(|m| m.headroom_x)
        .filter(|_| status != ProvisioningStatus::CannotTell);
    let limiting = match (status, fails.first(), undecided.first()) {
        (ProvisioningStatus::Under, Some(f), _) => Some(f.id.as_str().to_string()),
        (ProvisioningStatus::Under, None, _) if floor_blocks => Some("itl_p95".into()),
        (ProvisioningStatus::CannotTell, _, Some(u)) => Some(u.id.as_str().to_string()),
        (ProvisioningStatus::CannotTell, _, None) => None,
        _ => min.map(|m| m.id.clone()),
    };
    let give_back = if status == ProvisioningStatus::Over {
        give_back(i, peak, headroom_x.unwrap_or(1.0))
    } else {
        Vec::new()
    };
    let cannot_prove = cannot_prove(i, peak);
    let explanation = if status == ProvisioningStatus::CannotTell && !undecided.is_empty() {
        undecided_words(&undecided, peak)
    } else {
        explanation(
            status,
            headroom_x,
            limiting.as_deref(),
            &dims,
            &fails,
            overload,
            peak,
            &give_back,
        )
    };
    Provisioning {
        status,
        headroom_x: headroom_x.map(|x| (x * 10.0).round() / 10.0),
        limiting,
        peak_in_flight: Some(peak.in_flight),
        peak_requests_per_min: peak.requests_per_min,
        explanation,
        dimensions: dims,
        give_back,
        cannot_prove,
    }
}

/// The objectives that size the deployment and that the buckets cannot
/// decide: the deployment may be at its limit or past it.
fn undecided(slo: &[SloResult]) -> Vec<&SloResult> {
    slo.iter()
        .filter(|s| s.id != SloId::ErrorAbortRate && s.status == SloStatus::CannotTell)
        .collect()
}

fn undecided_words(undecided: &[&SloResult], peak: &Level) -> String {
    let each: Vec<String> = undecided
        .iter()
        .map(|s| match &s.bounds {
            Some(b) => format!(
                "{} lies {} against {}",
                registry::slo(s.id).short,
                bucket_text(b.low, b.high.unwrap_or(f64::INFINITY)),
                ms_text(s.threshold)
            ),
            None => format!("{} cannot be told", registry::slo(s.id).short),
        })
        .collect();
    format!(
        "Cannot tell: at the load it carried (~{} in flight) {}, so the deployment may be at its limit or past it; a histogram bucket cannot decide, and no headroom is claimed.",
        num(peak.in_flight.round()),
        each.join("; ")
    )
}

#[allow(clippy::too_many_arguments)]
fn explanation(
    status: ProvisioningStatus,
    headroom_x: Option<f64>,
    limiting: Option<&str>,
    dims: &[Headroom],
    fails: &[&SloResult],
    overload: bool,
    peak: &Level,
    give_back: &[GiveBack],
) -> String {
    let peak_words = format!(
        "the peak load level ({} in flight{})",
        num(peak.in_flight.round()),
        peak.requests_per_min.map_or(String::new(), |r| format!(
            ", {} finished/min",
            num(r.round())
        ))
    );
    let first = limiting
        .and_then(|l| dims.iter().find(|d| d.id == l))
        .map_or(String::new(), |d| {
            let mut e = d.evidence.clone();
            if e.starts_with("The ") {
                e.replace_range(0..1, "t");
            }
            format!(" First to run out: {e}.")
        });
    match status {
        ProvisioningStatus::Over => format!(
            "Over-provisioned: {peak_words} uses at most 1/{:.0} of what this deployment carries within every objective.{first} {}",
            headroom_x.unwrap_or(0.0).floor(),
            if give_back.is_empty() {
                "Nothing smaller in the tables would still carry it: the headroom is room to grow, not hardware to return.".to_string()
            } else {
                format!(
                    "It could give back: {}.",
                    give_back
                        .iter()
                        .map(|g| g.title.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            }
        ),
        ProvisioningStatus::Fits if limiting == Some("queueing") => format!(
            "Sized for its load, at its limit: every objective holds at {peak_words}, but requests already queue there, so more load would wait.{first}"
        ),
        ProvisioningStatus::Fits => format!(
            "Sized for its load: {peak_words} is met with {:.1}× headroom, less than twice.{first}",
            headroom_x.unwrap_or(0.0)
        ),
        ProvisioningStatus::Under => {
            let why = if !fails.is_empty() {
                let names: Vec<&str> = fails.iter().map(|f| registry::slo(f.id).short).collect();
                format!(
                    "{} {} at the load it carried",
                    names.join(" and "),
                    if names.len() == 1 { "fails" } else { "fail" }
                )
            } else if overload {
                "the queue grew across a load level: more arrived than it served".to_string()
            } else {
                format!(
                    "{} is already exceeded at {peak_words}",
                    limiting.unwrap_or("a limit")
                )
            };
            format!("Under-provisioned: {why}.{first}")
        }
        ProvisioningStatus::CannotTell => {
            "Cannot tell: the peak load level has no latency figures to size against.".into()
        }
    }
}

/// What the capture cannot prove about its own sizing.
fn cannot_prove(i: &ProvisioningInput<'_>, peak: &Level) -> Vec<String> {
    let minutes = i
        .phases
        .first()
        .zip(i.phases.last())
        .map(|(a, z)| (z.end_ms - a.start_ms) as f64 / 60_000.0);
    let mut out = vec![format!(
        "Loads above the peak it saw (~{} in flight, {}): every headroom beyond it is an extrapolation.",
        num(peak.in_flight.round()),
        crate::time::hhmm(peak.start_ms) + "–" + &crate::time::hhmm(peak.end_ms)
    )];
    out.push(format!(
        "Peaks outside its {} (a daily or weekly peak, a batch job): size for the busiest hour, not this capture.",
        minutes.map_or("minutes".to_string(), |m| format!("{:.0} minutes", m))
    ));
    out.push(
        "Other prompt and answer lengths: the KV and latency figures hold for this mix.".into(),
    );
    out
}

/// What an over-provisioned deployment could give back at `x` headroom.
fn give_back(i: &ProvisioningInput<'_>, peak: &Level, x: f64) -> Vec<GiveBack> {
    let cap = i.capacity;
    let replicas = cap.replicas.max(1);
    let mut out = Vec::new();
    // Replicas: carry the peak at TARGET_SHARE of what each allows.
    let keep = ((replicas as f64) / (x * TARGET_SHARE)).ceil().max(1.0) as usize;
    if replicas > 1 && keep < replicas {
        out.push(GiveBack {
            id: "fewer_replicas".into(),
            title: format!("{replicas} → {keep} replicas"),
            evidence: format!(
                "{x:.1}× headroom at ~{} in flight: {keep} replicas would carry the peak at {:.0} % of what they allow (assumes the load spreads evenly)",
                num(peak.in_flight.round()),
                100.0 * replicas as f64 / (x * keep as f64)
            ),
        });
    }
    let Some(floor) = cap.floor.as_ref() else {
        return out;
    };
    let gpu = i.deployment.gpu_model.as_deref().and_then(hw::find_gpu);
    let itl = peak.itl_p95;
    let objective = i.settings.slo.itl_p95_ms;
    // Fewer GPUs per replica: half the tensor-parallel degree streams twice
    // the weights per GPU per step.
    if floor.tensor_parallel >= 2.0
        && let Some(g) = gpu
        && let Some(mib) = g.memory_mib
    {
        let half = floor.tensor_parallel / 2.0;
        let per_gpu = floor.weight_bytes / half;
        let fits = per_gpu <= 0.6 * mib * 1_048_576.0;
        let itl_after = itl.map(|v| v * 2.0);
        if fits && itl_after.is_some_and(|v| v <= TARGET_SHARE * objective) {
            out.push(GiveBack {
                id: "fewer_gpus_per_replica".into(),
                title: format!(
                    "tensor parallel {} → {} per replica",
                    num(floor.tensor_parallel),
                    num(half)
                ),
                evidence: format!(
                    "the weights ({:.1} GB per GPU at TP {}) fit in {}'s {:.0} GiB with room for the KV cache; inter-token p95 ~{} would become ~{} (twice the weights per GPU per step) against {}",
                    per_gpu / 1e9,
                    num(half),
                    g.name,
                    mib / 1024.0,
                    itl.map_or("?".into(), ms_text),
                    itl_after.map_or("?".into(), ms_text),
                    ms_text(objective)
                ),
            });
        }
    }
    if let (Some(g), Some(v)) = (gpu, itl) {
        out.extend(smaller_gpu(
            i,
            g,
            floor.weight_bytes / floor.tensor_parallel,
            v,
            peak,
        ));
    }
    out
}

/// The smallest GPU of the table (by bandwidth) that still holds the
/// weights and the peak's KV cache and keeps inter-token p95 within
/// [`TARGET_SHARE`] of its objective, scaled by bandwidth (decode streams
/// the weights once per step).
fn smaller_gpu(
    i: &ProvisioningInput<'_>,
    now: &GpuSpec,
    weights_per_gpu: f64,
    itl_p95: f64,
    peak: &Level,
) -> Option<GiveBack> {
    let cap = i.capacity;
    let per_replica = peak.in_flight / cap.replicas.max(1) as f64;
    let kv_per_token = i
        .deployment
        .model
        .as_deref()
        .and_then(hw::find_model)
        .and_then(|m| m.kv_bytes_per_token(2.0));
    let kv_bytes = kv_per_token
        .zip(cap.request_tokens)
        .map(|(b, t)| b * t * per_replica / TARGET_SHARE);
    let objective = i.settings.slo.itl_p95_ms;
    let mut fit: Vec<(&GpuSpec, f64)> = hw::GPUS
        .iter()
        .filter(|g| g.bandwidth < now.bandwidth && g.name != now.name)
        .filter_map(|g| {
            let mib = g.memory_mib?;
            let usable = 0.9 * mib * 1_048_576.0;
            let need = weights_per_gpu + kv_bytes.unwrap_or(weights_per_gpu);
            let after = itl_p95 * now.bandwidth / g.bandwidth;
            (need <= usable && after <= TARGET_SHARE * objective).then_some((g, after))
        })
        .collect();
    fit.sort_by(|a, b| a.0.bandwidth.total_cmp(&b.0.bandwidth));
    let (g, after) = fit.first()?;
    Some(GiveBack {
        id: "smaller_gpu".into(),
        title: format!("{} → {}", now.name, g.name),
        evidence: format!(
            "{:.1} GB of weights per GPU and {} fit in its {:.0} GiB; inter-token p95 ~{} would become ~{} at its {:.0} GB/s (datasheet bandwidth, not measured) against {}",
            weights_per_gpu / 1e9,
            kv_bytes.map_or(
                "as much again for the KV cache (the model's KV shape is not in the table)"
                    .to_string(),
                |b| format!("{:.1} GB of KV cache for the peak", b / 1e9)
            ),
            g.memory_mib.unwrap_or(0.0) / 1024.0,
            ms_text(itl_p95),
            ms_text(*after),
            g.bandwidth / 1e9,
            ms_text(objective)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_through_the_levels() {
        assert_eq!(slope(&[(1.0, 2.0)]), None);
        assert_eq!(slope(&[(1.0, 2.0), (1.0, 3.0)]), None);
        let s = slope(&[(8.0, 24.25), (30.4, 29.33)]).unwrap();
        assert!((s - 0.2268).abs() < 1e-3, "{s}");
    }
}
