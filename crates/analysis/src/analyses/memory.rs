//! Step 6: the logical KV pool and the physical VRAM on one axis, and
//! energy efficiency.

use vllm_lens_catalog::Signal;

use super::{Ctx, finding, missing};
use crate::model::{Finding, Severity};

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let m = &ctx.summary.memory;
    match (m.kv_cache_pct, m.vram_used_pct) {
        (Some(kv), Some(vram)) => {
            out.push(finding(
                "memory.kv_vs_vram",
                Severity::Info,
                format!("VRAM {vram:.0} % used, KV-cache pool {kv:.1} % used"),
                "vLLM takes its share of VRAM (--gpu-memory-utilization) at start-up and carves the KV-cache pool out of it, so VRAM reads nearly full from the first second whatever the load. The KV pool is what fills with load. Autoscale on KV usage and waiting requests, plan capacity on VRAM, and never alert on VRAM.".into(),
                vec![
                    ctx.ev("VRAM used max", Some(vram), "%", &[Signal::FbUsed, Signal::FbFree]),
                    ctx.ev("KV pool max", Some(kv), "%", &[Signal::KvUsage]),
                ],
                "Alert on KV usage ≈ 60 % and waiting > 0, not on VRAM.",
            ));
            if kv < 25.0 && vram >= 80.0 {
                out.push(finding(
                    "memory.pool_oversized",
                    Severity::Info,
                    format!("The KV pool never went above {kv:.1} %: most of it is idle"),
                    "At this load the pre-allocated pool is far larger than needed. Lowering --gpu-memory-utilization would free VRAM (for a second, smaller model on the same GPU, for example) without hurting this workload; keep headroom for peaks.".into(),
                    vec![ctx.ev("KV pool max", Some(kv), "%", &[Signal::KvUsage])],
                    "If a second model is wanted on this GPU, lower --gpu-memory-utilization step by step while watching KV usage at peak.",
                ));
            }
        }
        (None, _) => out.push(missing(
            "memory.kv_missing",
            "KV-cache usage",
            &[Signal::KvUsage],
        )),
        (Some(_), None) => out.push(missing(
            "memory.vram_missing",
            "VRAM used",
            &[Signal::FbUsed, Signal::FbFree],
        )),
    }
    match (m.tokens_per_joule, m.tokens_per_watt) {
        (j, w) if j.is_some() || w.is_some() => out.push(finding(
            "memory.energy",
            Severity::Info,
            format!(
                "{} generated tokens per joule",
                j.or(w).map_or("?".into(), |x| format!("{x:.2}"))
            ),
            "Generated tokens per joule (from the GPU's energy counter) and per watt of mean power: the energy cost of the work, comparable before and after a change.".into(),
            vec![
                ctx.ev("tokens per joule", j, "tokens/J", &[Signal::GenerationTokens, Signal::Energy]),
                ctx.ev("tokens/s per watt", w, "tokens/s/W", &[Signal::GenerationTokens, Signal::Power]),
            ],
            "",
        )),
        _ => out.push(missing("memory.energy_missing", "Tokens per joule", &[Signal::Energy, Signal::Power])),
    }
    out
}
