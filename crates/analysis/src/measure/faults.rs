//! Hardware faults the GPUs reported, read point by point from DCGM: the
//! last XID, uncorrectable (double-bit) ECC errors, rows remapped after
//! them, a failed remap, and clocks held down by heat or a hardware signal.
//!
//! Each is a fact about one GPU at one time (the scrape that showed it),
//! never an average: a fault seen once is a fault. Clock reasons that are
//! normal operation (idle, the software power cap, application clocks,
//! sync boost) are not faults.

use vllm_lens_catalog::{Catalogue, Signal};
use vllm_lens_query::{Points, Query};

use crate::ids::GpuFaultKind as K;
use crate::model::GpuFault;

/// Clock event reasons that are faults, with their names
/// (`dcgm-metrics.md`: `DCGM_FI_DEV_CLOCKS_EVENT_REASONS`).
pub(crate) const FAULT_CLOCK_REASONS: &[(u64, &str)] = &[
    (0x8, "hw_slowdown"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
];

/// The signal that shows a kind of fault.
pub(crate) fn signal(k: K) -> Signal {
    match k {
        K::Xid => Signal::Xid,
        K::EccDoubleBit => Signal::EccDbe,
        K::UncorrectableRemappedRows => Signal::UncorrectableRemappedRows,
        K::RowRemapFailure => Signal::RowRemapFailure,
        K::ClocksHeld => Signal::ClockEventReasons,
    }
}

/// "GPU 0 (NVIDIA A10G) on ip-10-0-1-23", from the catalogue's GPUs.
pub(crate) fn gpu_name(cat: &Catalogue, key: &str) -> String {
    let Some(g) = cat.gpus.iter().find(|g| g.key == key) else {
        return format!("GPU {key}");
    };
    let mut s = match &g.index {
        Some(i) => format!("GPU {i}"),
        None => format!("GPU {}", g.uuid.as_deref().unwrap_or(key)),
    };
    if let Some(i) = &g.instance {
        s.push_str(&format!(" (MIG instance {i})"));
    }
    if let Some(m) = &g.model {
        s.push_str(&format!(" ({m})"));
    }
    if let Some(h) = &g.host {
        s.push_str(&format!(" on {h}"));
    }
    s
}

/// The finite points of one series.
fn finite(points: &[(i64, f64)]) -> impl Iterator<Item = (i64, f64)> + '_ {
    points.iter().copied().filter(|(_, v)| v.is_finite())
}

/// True when the target's first scrape already showed the fault: it began
/// before the capture. A series that appears later (the XID series is
/// absent until one occurs) began during it.
fn from_start(p: &Points, points: &[(i64, f64)], bad: impl Fn(f64) -> bool) -> bool {
    match (points.first(), p.target_first_ms) {
        (Some(&(t, v)), Some(first)) => t == first && bad(v),
        (Some(&(_, v)), None) => bad(v),
        _ => false,
    }
}

/// Every fault in the capture, by GPU then kind.
pub(crate) fn faults(q: &Query<'_>, cat: &Catalogue) -> Vec<GpuFault> {
    let mut out = Vec::new();
    let metric = |s: Signal| {
        cat.get(s)
            .used
            .first()
            .map_or_else(String::new, |n| n.to_string())
    };
    // A value above zero at any scrape: the XID code, a failed remap.
    for (signal, kind) in [
        (Signal::Xid, K::Xid),
        (Signal::RowRemapFailure, K::RowRemapFailure),
    ] {
        for p in q.points(signal) {
            let points: Vec<(i64, f64)> = finite(&p.points).collect();
            let bad: Vec<&(i64, f64)> = points.iter().filter(|(_, v)| *v > 0.0).collect();
            let (Some(&&(seen, _)), Some(&&(_, last))) = (bad.first(), bad.last()) else {
                continue;
            };
            let detail = match kind {
                K::Xid => {
                    let code = format!("XID {}", crate::text::num(last));
                    match q.label(p.sid, "err_msg").filter(|m| !m.trim().is_empty()) {
                        Some(m) => format!("{code} ({})", m.trim()),
                        None => code,
                    }
                }
                _ => "row remapping failed".to_string(),
            };
            out.push(GpuFault {
                name: gpu_name(cat, &p.key),
                gpu: p.key.clone(),
                kind,
                value: last,
                new: None,
                seen_ms: seen,
                before_capture: from_start(&p, &points, |v| v > 0.0),
                scrapes: bad.len() as u32,
                of: points.len() as u32,
                detail,
                metric: metric(signal),
            });
        }
    }
    // Counts above zero: errors since the driver loaded, rows remapped in
    // the board's life; what appeared during the capture apart.
    for (signal, kind) in [
        (Signal::EccDbe, K::EccDoubleBit),
        (
            Signal::UncorrectableRemappedRows,
            K::UncorrectableRemappedRows,
        ),
    ] {
        for p in q.points(signal) {
            let points: Vec<(i64, f64)> = finite(&p.points).collect();
            let Some(&(seen, _)) = points.iter().find(|(_, v)| *v > 0.0) else {
                continue;
            };
            let most = points.iter().fold(0.0f64, |a, x| a.max(x.1));
            // What appeared while the capture ran: the rises (a count that
            // went down was reset by a driver reload).
            let new: f64 = points.windows(2).map(|w| (w[1].1 - w[0].1).max(0.0)).sum();
            let n = crate::text::num(most);
            let detail = match (kind, most == 1.0) {
                (K::EccDoubleBit, true) => "1 double-bit ECC error".to_string(),
                (K::EccDoubleBit, false) => format!("{n} double-bit ECC errors"),
                (_, true) => "1 row remapped after uncorrectable memory errors".to_string(),
                (_, false) => format!("{n} rows remapped after uncorrectable memory errors"),
            };
            out.push(GpuFault {
                name: gpu_name(cat, &p.key),
                gpu: p.key.clone(),
                kind,
                value: most,
                new: Some(new),
                seen_ms: seen,
                before_capture: from_start(&p, &points, |v| v > 0.0),
                scrapes: points.iter().filter(|(_, v)| *v > 0.0).count() as u32,
                of: points.len() as u32,
                detail,
                metric: metric(signal),
            });
        }
    }
    // Clock event reasons: the fault bits seen, ORed.
    for p in q.points(Signal::ClockEventReasons) {
        let points: Vec<(i64, f64)> = finite(&p.points).collect();
        let fault_bits = |v: f64| {
            let bits = if v >= 0.0 && v < u64::MAX as f64 {
                v as u64
            } else {
                0
            };
            FAULT_CLOCK_REASONS
                .iter()
                .filter(|(b, _)| bits & b != 0)
                .fold(0u64, |a, (b, _)| a | b)
        };
        let bad: Vec<(i64, u64)> = points
            .iter()
            .map(|&(t, v)| (t, fault_bits(v)))
            .filter(|(_, b)| *b != 0)
            .collect();
        let Some(&(seen, _)) = bad.first() else {
            continue;
        };
        let all = bad.iter().fold(0u64, |a, (_, b)| a | b);
        let names: Vec<&str> = FAULT_CLOCK_REASONS
            .iter()
            .filter(|(b, _)| all & b != 0)
            .map(|(_, n)| *n)
            .collect();
        out.push(GpuFault {
            name: gpu_name(cat, &p.key),
            gpu: p.key.clone(),
            kind: K::ClocksHeld,
            value: all as f64,
            new: None,
            seen_ms: seen,
            before_capture: from_start(&p, &points, |v| fault_bits(v) != 0),
            scrapes: bad.len() as u32,
            of: points.len() as u32,
            detail: format!("clocks held down by {}", names.join(", ")),
            metric: metric(Signal::ClockEventReasons),
        });
    }
    out.sort_by(|a, b| a.gpu.cmp(&b.gpu).then(a.kind.cmp(&b.kind)));
    out
}

/// What one fault says about its GPU: "reported XID 79 (GPU has fallen
/// off the bus) from 14:05".
fn body(f: &GpuFault) -> String {
    let when = if f.before_capture {
        "since before the capture".to_string()
    } else {
        format!("from {}", crate::time::hhmm(f.seen_ms))
    };
    match f.kind {
        K::Xid => format!("reported {} {when}", f.detail),
        K::RowRemapFailure => format!("reports that row remapping failed {when}"),
        K::EccDoubleBit | K::UncorrectableRemappedRows => {
            let new = f.new.filter(|n| *n > 0.0).map_or_else(
                || " (none during the capture)".to_string(),
                |n| {
                    if n == f.value {
                        " (all during the capture)".to_string()
                    } else {
                        format!(" ({} during the capture)", crate::text::num(n))
                    }
                },
            );
            format!("counts {}{new}", f.detail)
        }
        K::ClocksHeld => {
            let first = if f.before_capture {
                "from before the capture".to_string()
            } else {
                format!("the first at {}", crate::time::hhmm(f.seen_ms))
            };
            format!(
                "had its {} in {} of its {} scrapes, {first}",
                f.detail, f.scrapes, f.of
            )
        }
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// One fault in words, with its GPU and metric: "GPU 0 (NVIDIA A10G) on
/// host reported XID 79 (GPU has fallen off the bus) from 14:05
/// (DCGM_FI_DEV_XID_ERRORS)".
pub(crate) fn words(f: &GpuFault) -> String {
    format!("{} {} ({})", f.name, body(f), f.metric)
}

/// Each GPU's faults in one sentence, GPUs in key order: "GPU 0 … reported
/// XID 79 (…) from 14:05 and counts 2 double-bit ECC errors (all during
/// the capture) (DCGM_FI_DEV_XID_ERRORS, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL)".
pub(crate) fn per_gpu(faults: &[GpuFault]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < faults.len() {
        let gpu = &faults[i].gpu;
        let these: Vec<&GpuFault> = faults[i..].iter().take_while(|f| &f.gpu == gpu).collect();
        i += these.len();
        let bodies: Vec<String> = these.iter().map(|f| body(f)).collect();
        let mut metrics: Vec<String> = Vec::new();
        for f in &these {
            if !metrics.contains(&f.metric) {
                metrics.push(f.metric.clone());
            }
        }
        out.push(format!(
            "{} {} ({})",
            these[0].name,
            and_list(&bodies),
            metrics.join(", ")
        ));
    }
    out
}
