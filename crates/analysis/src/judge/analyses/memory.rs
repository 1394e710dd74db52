//! Step 6: the logical KV pool and the physical VRAM on one axis, and
//! energy efficiency (per load level where the capture has several).

use vllm_lens_catalog::Signal;

use crate::ids::FindingId as F;
use crate::judge::ctx::{Ctx, finding, missing, no_gpu};
use crate::measure::thresholds::{POOL_OVERSIZED_KV_PCT, VRAM_PREALLOCATED_PCT};
use crate::model::{Finding, Severity};

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let m = &ctx.summary.memory;
    match (m.kv_cache_pct, m.vram_used_pct) {
        (Some(kv), Some(vram)) => {
            out.push(finding(
                F::MemoryKvVsVram,
                Severity::Info,
                format!("VRAM {vram:.0} % used, KV-cache pool {kv:.1} % used"),
                vec![
                    ctx.ev(
                        "VRAM used max",
                        Some(vram),
                        "%",
                        &[Signal::FbUsed, Signal::FbFree],
                    ),
                    ctx.ev("KV pool max", Some(kv), "%", &[Signal::KvUsage]),
                ],
                &[],
            ));
            if kv < POOL_OVERSIZED_KV_PCT && vram >= VRAM_PREALLOCATED_PCT {
                out.push(finding(
                    F::MemoryPoolOversized,
                    Severity::Info,
                    format!("The KV pool never went above {kv:.1} %: most of it is idle"),
                    vec![ctx.ev("KV pool max", Some(kv), "%", &[Signal::KvUsage])],
                    &[],
                ));
            }
        }
        (None, _) => out.push(missing(
            F::MemoryKvMissing,
            "KV-cache usage",
            &[Signal::KvUsage],
        )),
        (Some(_), None) if ctx.cpu_server() => out.push(no_gpu(
            F::MemoryVramMissing,
            "VRAM used",
            &[Signal::FbUsed, Signal::FbFree],
        )),
        (Some(_), None) => out.push(missing(
            F::MemoryVramMissing,
            "VRAM used",
            &[Signal::FbUsed, Signal::FbFree],
        )),
    }
    match (m.tokens_per_joule, m.tokens_per_watt) {
        (j, w) if j.is_some() || w.is_some() => {
            let mut evidence = vec![
                ctx.ev(
                    "tokens per joule",
                    j,
                    "tokens/J",
                    &[Signal::GenerationTokens, Signal::Energy],
                ),
                ctx.ev(
                    "tokens/s per watt",
                    w,
                    "tokens/s/W",
                    &[Signal::GenerationTokens, Signal::Power],
                ),
            ];
            let phases = ctx.steady_phases();
            for p in &phases {
                evidence.push(ctx.ev_at(
                    &format!(
                        "tokens per joule at ~{:.0} in flight",
                        p.in_flight_avg.unwrap_or_default()
                    ),
                    p.figures.memory.tokens_per_joule,
                    "tokens/J",
                    &[Signal::GenerationTokens, Signal::Energy],
                    vec![p.start_ms],
                ));
            }
            let figure = |x: Option<f64>| x.map_or("?".into(), |x| format!("{x:.2}"));
            let title = if phases.is_empty() {
                format!("{} generated tokens per joule", figure(j.or(w)))
            } else {
                format!(
                    "Generated tokens per joule by load level: {}",
                    phases
                        .iter()
                        .map(|p| format!(
                            "{} at ~{:.0} in flight",
                            figure(
                                p.figures
                                    .memory
                                    .tokens_per_joule
                                    .or(p.figures.memory.tokens_per_watt)
                            ),
                            p.in_flight_avg.unwrap_or_default()
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            out.push(finding(
                F::MemoryEnergy,
                Severity::Info,
                title,
                evidence,
                &[],
            ));
        }
        _ if ctx.cpu_server() => out.push(no_gpu(
            F::MemoryEnergyMissing,
            "Tokens per joule",
            &[Signal::Energy, Signal::Power],
        )),
        _ => out.push(missing(
            F::MemoryEnergyMissing,
            "Tokens per joule",
            &[Signal::Energy, Signal::Power],
        )),
    }
    out
}
