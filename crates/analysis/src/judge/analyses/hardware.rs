//! Step 5: the GPU as an independent witness. GPU util says only that a
//! kernel was running; GR engine, tensor and DRAM activity say what kind of
//! work it was: memory-bound, compute-bound, idle or starved. Where the
//! capture has several load levels, each is given on its own.

use vllm_lens_catalog::Signal;

use crate::ids::FindingId as F;
use crate::judge::ctx::{Ctx, finding, missing, no_gpu};
use crate::measure::thresholds::{
    COMPUTE_BOUND_TENSOR_PCT, GPU_IDLE_UTIL_PCT, GPU_STARVED_UTIL_PCT, HOT_C,
    MEMORY_BOUND_DRAM_PCT, TENSOR_IDLE_PCT, UTIL_RESIDENCY_PCT,
};
use crate::model::{Evidence, Finding, Severity};

/// Tensor and DRAM activity per steady phase, when there are several.
fn per_phase(ctx: &Ctx<'_>) -> Vec<Evidence> {
    let mut out = Vec::new();
    for p in ctx.steady_phases() {
        let at = format!("~{:.0} in flight", p.in_flight_avg.unwrap_or_default());
        out.push(ctx.ev_at(
            &format!("tensor active (mean) at {at}"),
            p.figures.gpu.tensor_active_pct_avg,
            "%",
            &[Signal::TensorActive],
            vec![p.start_ms],
        ));
        out.push(ctx.ev_at(
            &format!("DRAM active (mean) at {at}"),
            p.figures.gpu.dram_active_pct_avg,
            "%",
            &[Signal::DramActive],
            vec![p.start_ms],
        ));
    }
    out
}

/// "DRAM 97 % / tensor 5 % at ~8 in flight, …" per steady phase, or the
/// whole capture's figures when there is one level.
fn activity(ctx: &Ctx<'_>, d: f64, t: f64) -> String {
    let phases = ctx.steady_phases();
    if phases.is_empty() {
        return format!("DRAM {d:.0} % active, tensor cores {t:.0} %");
    }
    phases
        .iter()
        .map(|p| {
            format!(
                "DRAM {} / tensor {} at ~{:.0} in flight",
                p.figures
                    .gpu
                    .dram_active_pct_avg
                    .map_or("?".into(), |x| format!("{x:.0} %")),
                p.figures
                    .gpu
                    .tensor_active_pct_avg
                    .map_or("?".into(), |x| format!("{x:.0} %")),
                p.in_flight_avg.unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// MFU and MBU from vLLM's own estimates (`--enable-mfu-metrics` on a GPU
/// with datasheet peaks), not from DCGM's stand-ins.
pub(crate) fn estimated_utilisation(c: &crate::model::Capacity) -> Option<(f64, f64)> {
    c.achieved_flops_per_s?;
    c.achieved_bytes_per_s?;
    (c.utilisation_from == Some(crate::model::UtilisationSource::VllmEstimates))
        .then_some((c.mfu_pct?, c.mbu_pct?))
}

fn estimate_evidence(ctx: &Ctx<'_>, mfu: f64, mbu: f64) -> Vec<Evidence> {
    vec![
        ctx.ev(
            "MFU (vLLM's estimate ÷ peak)",
            Some(mfu),
            "%",
            &[Signal::EstimatedFlops],
        ),
        ctx.ev(
            "MBU (vLLM's estimate ÷ bandwidth)",
            Some(mbu),
            "%",
            &[Signal::EstimatedReadBytes, Signal::EstimatedWriteBytes],
        ),
    ]
}

/// The kind of work from vLLM's estimates alone, where DCGM's profiling
/// fields are absent.
fn from_estimates(ctx: &Ctx<'_>, mfu: f64, mbu: f64) -> Finding {
    let (id, kind) = if mbu >= MEMORY_BOUND_DRAM_PCT && mfu < TENSOR_IDLE_PCT {
        (F::HardwareMemoryBound, "Memory-bound")
    } else if mfu >= COMPUTE_BOUND_TENSOR_PCT {
        (F::HardwareComputeBound, "Compute-bound")
    } else {
        (F::HardwareMixed, "Neither memory- nor compute-bound")
    };
    finding(
        id,
        Severity::Info,
        format!(
            "{kind} by vLLM's estimates: MBU {mbu:.0} %, MFU {mfu:.0} % (no DCGM profiling fields)"
        ),
        estimate_evidence(ctx, mfu, mbu),
        &[],
    )
}

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let g = &ctx.summary.gpu;
    let estimated = estimated_utilisation(ctx.capacity);
    let Some(util) = g.gpu_util_pct_avg else {
        out.push(if ctx.cpu_server() {
            no_gpu(
                F::HardwareDcgmMissing,
                "GPU utilisation",
                &[Signal::GpuUtil],
            )
        } else {
            missing(
                F::HardwareDcgmMissing,
                "GPU utilisation",
                &[Signal::GpuUtil],
            )
        });
        if let Some((mfu, mbu)) = estimated {
            out.push(from_estimates(ctx, mfu, mbu));
        }
        return out;
    };
    let tensor = g.tensor_active_pct_avg;
    let dram = g.dram_active_pct_avg;
    let gr = g.gr_engine_active_pct_avg;
    let mut evidence = vec![
        ctx.ev("GPU util (mean)", Some(util), "%", &[Signal::GpuUtil]),
        ctx.ev(
            "GR engine active (mean)",
            gr,
            "%",
            &[Signal::GrEngineActive],
        ),
        ctx.ev("tensor active (mean)", tensor, "%", &[Signal::TensorActive]),
        ctx.ev("DRAM active (mean)", dram, "%", &[Signal::DramActive]),
    ];
    evidence.extend(per_phase(ctx));
    if let Some((mfu, mbu)) = estimated {
        evidence.extend(estimate_evidence(ctx, mfu, mbu));
    }
    match (tensor, dram) {
        (Some(t), Some(d)) => {
            let (id, title, sev) = if util < GPU_IDLE_UTIL_PCT {
                (
                    F::HardwareIdle,
                    format!("The GPU is mostly idle: {util:.0} % util"),
                    Severity::Info,
                )
            } else if d >= MEMORY_BOUND_DRAM_PCT && t < TENSOR_IDLE_PCT {
                (
                    F::HardwareMemoryBound,
                    format!("Memory-bound: {}", activity(ctx, d, t)),
                    Severity::Info,
                )
            } else if t >= COMPUTE_BOUND_TENSOR_PCT {
                (
                    F::HardwareComputeBound,
                    format!("Compute-bound: {}", activity(ctx, d, t)),
                    Severity::Info,
                )
            } else if util < GPU_STARVED_UTIL_PCT {
                (
                    F::HardwareStarved,
                    format!(
                        "The GPU is starved: {util:.0} % util with DRAM {d:.0} % and tensor {t:.0} %"
                    ),
                    Severity::Warn,
                )
            } else {
                (
                    F::HardwareMixed,
                    format!("Neither memory- nor compute-bound: {}", activity(ctx, d, t)),
                    Severity::Info,
                )
            };
            out.push(finding(id, sev, title, evidence.clone(), &[]));
        }
        _ if estimated.is_some() => {
            let (mfu, mbu) = estimated.unwrap_or_default();
            out.push(from_estimates(ctx, mfu, mbu));
        }
        _ => out.push(finding(
            F::HardwareProfMissing,
            Severity::NotApplicable,
            "No profiling fields (DCGM_FI_PROF_*): the GPU's kind of work cannot be told".into(),
            evidence.clone(),
            &[],
        )),
    }
    if util >= UTIL_RESIDENCY_PCT
        && gr.is_none_or(|x| x >= UTIL_RESIDENCY_PCT)
        && tensor.is_some_and(|t| t < COMPUTE_BOUND_TENSOR_PCT)
    {
        out.push(finding(
            F::HardwareUtilIsResidency,
            Severity::Info,
            format!("GPU util reads {util:.0} % while the tensor cores are mostly idle"),
            evidence,
            &[],
        ));
    }
    if let Some(temp) = g.temp_c
        && temp >= HOT_C
    {
        out.push(finding(
            F::HardwareHot,
            Severity::Warn,
            format!("GPU temperature reached {temp:.0} °C"),
            vec![
                ctx.ev("temperature max", Some(temp), "°C", &[Signal::GpuTemp]),
                ctx.ev(
                    "SM clock mean",
                    g.sm_clock_mhz_avg,
                    "MHz",
                    &[Signal::SmClock],
                ),
            ],
            &[],
        ));
    }
    out.extend(faults(ctx));
    out
}

/// One finding per kind of fault (XIDs, uncorrectable memory errors,
/// clocks held down), each naming every GPU that reported it, when and
/// from which metric.
fn faults(ctx: &Ctx<'_>) -> Vec<Finding> {
    use crate::ids::GpuFaultKind as K;
    let mut out = Vec::new();
    for (id, kinds) in [
        (F::HardwareXid, &[K::Xid][..]),
        (
            F::HardwareMemoryErrors,
            &[
                K::EccDoubleBit,
                K::UncorrectableRemappedRows,
                K::RowRemapFailure,
            ][..],
        ),
        (F::HardwareClocksHeld, &[K::ClocksHeld][..]),
    ] {
        let these: Vec<&crate::model::GpuFault> = ctx
            .faults
            .iter()
            .filter(|f| kinds.contains(&f.kind))
            .collect();
        if these.is_empty() {
            continue;
        }
        let title = these
            .iter()
            .map(|f| crate::measure::faults::words(f))
            .collect::<Vec<_>>()
            .join("; ");
        let evidence = these
            .iter()
            .map(|f| {
                let signal = crate::measure::faults::signal(f.kind);
                let (label, unit) = match f.kind {
                    K::Xid => ("XID code", ""),
                    K::EccDoubleBit => ("double-bit ECC errors", "errors"),
                    K::UncorrectableRemappedRows => ("rows remapped (uncorrectable)", "rows"),
                    K::RowRemapFailure => ("row remap failure", ""),
                    K::ClocksHeld => ("scrapes with clocks held down", "scrapes"),
                };
                let value = if f.kind == K::ClocksHeld {
                    f64::from(f.scrapes)
                } else {
                    f.value
                };
                ctx.ev_at(
                    &format!(
                        "{label} on {}, first seen at {}",
                        f.name,
                        crate::time::format_rfc3339(f.seen_ms)
                    ),
                    Some(value),
                    unit,
                    &[signal],
                    ctx.window_of(f.seen_ms).into_iter().collect(),
                )
            })
            .collect();
        out.push(finding(id, Severity::Fail, title, evidence, &[]));
    }
    out
}
