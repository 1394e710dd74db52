//! Step 5: the GPU as an independent witness. GPU util says only that a
//! kernel was running; GR engine, tensor and DRAM activity say what kind of
//! work it was: memory-bound, compute-bound, idle or starved.

use vllm_lens_catalog::Signal;

use super::{Ctx, finding, missing};
use crate::model::{Finding, Severity};

pub(crate) fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let g = &ctx.summary.gpu;
    let Some(util) = g.gpu_util_pct_avg else {
        out.push(missing(
            "hardware.dcgm_missing",
            "GPU utilisation",
            &[Signal::GpuUtil],
        ));
        return out;
    };
    let tensor = g.tensor_active_pct_avg;
    let dram = g.dram_active_pct_avg;
    let gr = g.gr_engine_active_pct_avg;
    let evidence = vec![
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
    match (tensor, dram) {
        (Some(t), Some(d)) => {
            let (id, title, text, sev) = if util < 10.0 {
                ("hardware.idle", format!("The GPU is mostly idle: {util:.0} % util"), "Few kernels run: the load is light for this GPU.", Severity::Info)
            } else if d >= 50.0 && t < 30.0 {
                ("hardware.memory_bound", format!("Memory-bound: DRAM {d:.0} % active, tensor cores {t:.0} %"), "The GPU spends its time streaming weights and KV cache from memory while the tensor cores wait: classic decode. More compute will not help; fewer bytes per token (quantization: FP8, INT4) or more bandwidth will.", Severity::Info)
            } else if t >= 50.0 {
                ("hardware.compute_bound", format!("Compute-bound: tensor cores {t:.0} % active"), "The tensor cores are busy: long prefills or large batches. More FLOPs (a bigger GPU, tensor parallelism) or less prefill work (prefix caching) help.", Severity::Info)
            } else if util < 60.0 {
                ("hardware.starved", format!("The GPU is starved: {util:.0} % util with DRAM {d:.0} % and tensor {t:.0} %"), "Kernels leave gaps: the host (scheduler, tokenizer, Python) cannot feed the GPU fast enough.", Severity::Warn)
            } else {
                ("hardware.mixed", format!("Tensor {t:.0} %, DRAM {d:.0} % active"), "Neither compute nor memory bandwidth is saturated.", Severity::Info)
            };
            out.push(finding(id, sev, title, text.into(), evidence.clone(), ""));
        }
        _ => out.push(finding(
            "hardware.prof_missing",
            Severity::NotApplicable,
            "No profiling fields (DCGM_FI_PROF_*): the GPU's kind of work cannot be told".into(),
            "dcgm-exporter skips every DCGM_FI_PROF_* series when profiling is unsupported or not enabled (older default-counters.csv, no SYS_ADMIN, DCP module missing, mixed GPU models). Without tensor and DRAM activity, GPU util alone cannot say whether the GPU is memory-bound or compute-bound.".into(),
            evidence.clone(),
            "Run dcgm-exporter with dcp-metrics-included.csv (the GPU Operator's default) or uncomment DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE and DCGM_FI_PROF_DRAM_ACTIVE in the counters file; give the container the SYS_ADMIN capability.",
        )),
    }
    if util >= 90.0 && gr.is_none_or(|x| x >= 90.0) && tensor.is_some_and(|t| t < 50.0) {
        out.push(finding(
            "hardware.util_is_residency",
            Severity::Info,
            format!("GPU util reads {util:.0} % while the tensor cores are mostly idle"),
            "DCGM_FI_DEV_GPU_UTIL is the share of time any kernel is resident, not how much of the GPU it uses: one small kernel reads 100 %. It cannot tell a saturated GPU from one with room to spare, so never plan capacity or autoscale on it.".into(),
            evidence,
            "Use queue time, waiting requests and KV usage for capacity; tensor and DRAM activity for the kind of work.",
        ));
    }
    if let Some(temp) = g.temp_c
        && temp >= 85.0
    {
        out.push(finding(
            "hardware.hot",
            Severity::Warn,
            format!("GPU temperature reached {temp:.0} °C"),
            "Above about 85 °C GPUs lower their clocks to protect themselves.".into(),
            vec![
                ctx.ev("temperature max", Some(temp), "°C", &[Signal::GpuTemp]),
                ctx.ev(
                    "SM clock mean",
                    g.sm_clock_mhz_avg,
                    "MHz",
                    &[Signal::SmClock],
                ),
            ],
            "Check cooling and the power limit.",
        ));
    }
    if ctx.has(Signal::Xid) {
        out.push(finding(
            "hardware.xid",
            Severity::Fail,
            "The GPU reported XID errors".into(),
            "DCGM_FI_DEV_XID_ERRORS holds the last XID code the driver raised: hardware faults, driver resets, out-of-memory faults in kernels. The code is an identifier, not a count.".into(),
            vec![ctx.ev("XID series present", None, "", &[Signal::Xid])],
            "Look the code up in NVIDIA's XID catalogue and check the node's kernel log.",
        ));
    }
    out
}
