//! Each phase in one line: what happened in it and its figures, as the
//! phase list and the verdict's narrative show it.

use crate::Settings;
use crate::ids::PhaseKind;
use crate::judge::bursts::{Burst, burst_words};
use crate::judge::events::RestartInfo;
use crate::model::Summary;
use crate::text::{bucket_text, ms_text, num};

/// Requests in flight over a phase, two ways.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InFlight {
    /// Running + waiting, mean of the gauges.
    pub gauges: Option<f64>,
    /// The standard error of `gauges` (their scrapes' sampling noise).
    pub gauges_se: Option<f64>,
    /// Little's law: finished per second × the engine's mean latency.
    pub little: Option<f64>,
}

/// "~13 requests", "~0.4 requests": under one on average, the decimal
/// tells an idle server from a light load.
fn requests(x: f64) -> String {
    let n = if x < 0.95 {
        (x * 10.0).round() / 10.0
    } else {
        x.round()
    };
    format!("~{} request{}", num(n), if n == 1.0 { "" } else { "s" })
}

/// A phase in one line.
pub(crate) fn describe(
    kind: PhaseKind,
    f: &Summary,
    in_flight: InFlight,
    restarts: &[&RestartInfo],
    burst: Option<&Burst>,
    settings: &Settings,
) -> String {
    let l = &f.latency;
    let mut parts: Vec<String> = Vec::new();
    match kind {
        PhaseKind::Restart => {
            for r in restarts {
                let mut s = format!("{} restarted", r.replica);
                if let Some(d) = r.down_ms() {
                    s.push_str(&format!(", unreachable for up to {}", ms_text(d as f64)));
                }
                if let Some(l) = r.lost_words() {
                    s.push_str(&format!(", {l} lost"));
                }
                parts.push(s);
            }
            if parts.is_empty() {
                parts.push("a replica restarted".into());
            }
        }
        PhaseKind::Down => parts.push("A replica could not be scraped".into()),
        PhaseKind::Idle => parts.push("No load".into()),
        PhaseKind::Burst => {
            parts.extend(burst.iter().flat_map(|b| b.tests.iter()).map(burst_words));
        }
        PhaseKind::Warmup => parts.push("A new process's first minutes".into()),
        PhaseKind::Steady | PhaseKind::Ramp | PhaseKind::Overload => {}
    }
    match (in_flight.gauges, in_flight.little) {
        // The gauges contradict the engine's own latency histogram: the
        // figure users' requests imply, with the gauges' beside it.
        (Some(g), Some(l)) if crate::measure::little::gauges_low(g, l, in_flight.gauges_se) => parts.push(format!(
            "{} in the engine by Little's law (finished/s × the engine's mean latency; the running + waiting gauges read {}, too few)",
            requests(l),
            requests(g)
        )),
        // Little's law over finished requests is a lower bound: requests
        // that never finished (hang-ups) count in the gauges only.
        (Some(g), Some(l)) if crate::measure::little::disagree(g, l, in_flight.gauges_se) => parts.push(format!(
            "{} in flight (Little's law over finished requests gives only {}: requests that never finished, such as hang-ups, count in the gauges alone)",
            requests(g),
            requests(l)
        )),
        (Some(g), _) => parts.push(format!("{} in flight", requests(g))),
        (None, Some(l)) if l >= 0.05 => parts.push(format!(
            "{} in the engine by Little's law (no running/waiting gauges)",
            requests(l)
        )),
        _ => {}
    }
    if let Some(r) = f.workload.requests_per_min {
        // Over a restart or down time, the rate covers the time the server
        // answered.
        let up = if matches!(kind, PhaseKind::Restart | PhaseKind::Down) {
            " while up"
        } else {
            ""
        };
        parts.push(format!("{} finished/min{up}", num(r.round())));
    }
    if kind.is_load() || kind == PhaseKind::Warmup {
        if let Some(b) = l.bounds.ttft_p95_ms {
            parts.push(format!(
                "TTFT p95 {}",
                bucket_text(b.low, b.high.unwrap_or(f64::INFINITY))
            ));
        }
        if let Some(b) = l.bounds.itl_p95_ms {
            parts.push(format!(
                "inter-token p95 {}",
                bucket_text(b.low, b.high.unwrap_or(f64::INFINITY))
            ));
        }
        match l.queue_ms {
            Some(q) if q >= settings.slo.queue_negligible_ms => {
                parts.push(format!("mean queue {}", ms_text(q.round())))
            }
            Some(q) if q >= 1.0 => parts.push(format!(
                "mean queue {} (below the {} ms that counts as queueing)",
                ms_text(q),
                num(settings.slo.queue_negligible_ms)
            )),
            Some(q) if q > 0.0 => parts.push("mean queue under 1 ms".into()),
            Some(_) => parts.push("no queue time".into()),
            None => {}
        }
        if let Some(kv) = f.efficiency.kv_cache_pct {
            parts.push(if kv > 0.0 && kv < 0.1 {
                "KV under 0.1 %".to_string()
            } else {
                format!("KV up to {}", crate::text::pct_at_most(kv))
            });
        }
    }
    parts.join(", ")
}
