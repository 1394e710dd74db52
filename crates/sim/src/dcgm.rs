//! dcgm-exporter: it collects every `collect_interval_ms` (30 s by
//! default) and each scrape returns the latest collection, so a 15 s scrape
//! sees each value twice. Fields in ascending DCGM field ID, labels in the
//! exporter's emission order, integers with `%d`, doubles with `%f`.

use std::fmt::Write as _;

use crate::gpu::{self, BIN_S, GpuState, Sample, Trace};
use crate::hw::Gpu;
use crate::pyfloat::c_f;
use crate::rng::Rng;
use crate::scenario::Exporter;

/// A GPU's identity as the exporter labels it.
#[derive(Debug, Clone)]
pub struct Ident {
    /// DCGM GPU id on its node.
    pub index: u32,
    /// `GPU-…`.
    pub uuid: String,
    /// `00000000:BB:DD.F`.
    pub pci_bus_id: String,
    /// Node name.
    pub hostname: String,
    /// The pod the GPU is allocated to.
    pub pod: String,
}

/// Advances a GPU's energy and temperature to `t` and takes a collection.
#[allow(clippy::too_many_arguments)]
pub fn collect(
    st: &mut GpuState,
    trace: &Trace,
    spec: &Gpu,
    t: f64,
    loaded: bool,
    used_mib: u64,
    rng: &mut Rng,
    exporter: &Exporter,
) {
    if t > st.last_t {
        let i0 = (st.last_t / BIN_S).floor() as usize;
        let i1 = (t / BIN_S).floor() as usize;
        for i in i0..=i1 {
            let lo = st.last_t.max(i as f64 * BIN_S);
            let hi = t.min((i + 1) as f64 * BIN_S);
            if hi <= lo {
                continue;
            }
            let (b, d, te) = trace.bin(i);
            let p = gpu::power(spec, b.min(1.0), d.min(1.0), te.min(1.0));
            st.energy_mj += p * (hi - lo) * 1000.0;
            let k = 1.0 - (-(hi - lo) / 60.0).exp();
            st.temp += (gpu::steady_temp(spec, p) - st.temp) * k;
        }
    }
    st.last_t = t;
    let (b, d, te) = trace.mean(t - 1.0, t);
    let jitter = |rng: &mut Rng, v: f64, s: f64| (v * (1.0 + s * rng.normal())).clamp(0.0, 1.0);
    let busy = if b > 0.0 { jitter(rng, b, 0.0005) } else { 0.0 };
    let dram = if d > 0.0 { jitter(rng, d, 0.01) } else { 0.0 };
    let tensor = if te > 0.0 { jitter(rng, te, 0.02) } else { 0.0 };
    let power = gpu::power(spec, busy, dram, tensor) + 0.6 * rng.normal();
    let total = spec.memory_mib;
    let reserved = spec.reserved_mib;
    let used = if loaded { used_mib } else { 0 };
    st.sample = Sample {
        // Any kernel in the sample period reads as busy; a busy GPU is 100.
        util: if busy > 0.0 {
            ((busy * 100.0).ceil() as u32).min(100)
        } else {
            0
        },
        mem_copy: (dram * 100.0 * 0.78).round() as u32,
        gr: busy,
        tensor,
        dram,
        power: if loaded || busy > 0.0 {
            power.max(spec.idle_w * 0.9)
        } else {
            spec.idle_w * 0.55
        },
        energy_mj: st.energy_mj as u64,
        temp: st.temp,
        sm_clock: if busy > 0.01 {
            spec.sm_clock_mhz.0 - if rng.chance(0.2) { 15 } else { 0 }
        } else {
            spec.sm_clock_mhz.1
        },
        fb_used: used,
        fb_free: total - reserved - used,
        pcie_tx: (busy * 210_000.0 + 9_000.0 + 3_000.0 * rng.f64()) as u64,
        pcie_rx: (busy * 160_000.0 + 7_000.0 + 3_000.0 * rng.f64()) as u64,
        valid: true,
    };
    let _ = exporter;
}

/// How a field's value is read from a GPU's sample.
type Get = fn(&Sample, &Gpu) -> String;

/// The fields this exporter writes, in its order: (name, help, type, value).
fn fields(spec: &Gpu, exporter: &Exporter) -> Vec<(&'static str, &'static str, &'static str, Get)> {
    let mut fields: Vec<(&'static str, &'static str, &'static str, Get)> = vec![
        (
            "DCGM_FI_DEV_SM_CLOCK",
            "SM clock frequency (in MHz).",
            "gauge",
            |s, _| s.sm_clock.to_string(),
        ),
        (
            "DCGM_FI_DEV_MEM_CLOCK",
            "Memory clock frequency (in MHz).",
            "gauge",
            |_, g| g.mem_clock_mhz.to_string(),
        ),
        (
            "DCGM_FI_DEV_MEMORY_TEMP",
            "Memory temperature (in C).",
            "gauge",
            |s, g| {
                if g.hbm {
                    ((s.temp + 4.0).round() as i64).to_string()
                } else {
                    "0".into()
                }
            },
        ),
        (
            "DCGM_FI_DEV_GPU_TEMP",
            "GPU temperature (in C).",
            "gauge",
            |s, _| (s.temp.round() as i64).to_string(),
        ),
        (
            "DCGM_FI_DEV_POWER_USAGE",
            "Power draw (in W).",
            "gauge",
            |s, _| c_f(s.power),
        ),
        (
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "Total energy consumption since boot (in mJ).",
            "counter",
            |s, _| s.energy_mj.to_string(),
        ),
        (
            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
            "Total number of PCIe retries.",
            "counter",
            |_, _| "0".into(),
        ),
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "GPU utilization (in %).",
            "gauge",
            |s, _| s.util.to_string(),
        ),
        (
            "DCGM_FI_DEV_MEM_COPY_UTIL",
            "Memory utilization (in %).",
            "gauge",
            |s, _| s.mem_copy.to_string(),
        ),
        (
            "DCGM_FI_DEV_ENC_UTIL",
            "Encoder utilization (in %).",
            "gauge",
            |_, _| "0".into(),
        ),
        (
            "DCGM_FI_DEV_DEC_UTIL",
            "Decoder utilization (in %).",
            "gauge",
            |_, _| "0".into(),
        ),
        (
            "DCGM_FI_DEV_FB_FREE",
            "Frame buffer memory free (in MiB).",
            "gauge",
            |s, _| s.fb_free.to_string(),
        ),
        (
            "DCGM_FI_DEV_FB_USED",
            "Frame buffer memory used (in MiB).",
            "gauge",
            |s, _| s.fb_used.to_string(),
        ),
    ];
    if exporter.fb_reserved {
        fields.push((
            "DCGM_FI_DEV_FB_RESERVED",
            "Frame buffer memory reserved (in MiB).",
            "gauge",
            |_, g| g.reserved_mib.to_string(),
        ));
    }
    if spec.hbm {
        fields.push((
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            "Number of remapped rows for uncorrectable errors",
            "counter",
            |_, _| "0".into(),
        ));
        fields.push((
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
            "Number of remapped rows for correctable errors",
            "counter",
            |_, _| "0".into(),
        ));
        fields.push((
            "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "Whether remapping of rows has failed",
            "gauge",
            |_, _| "0".into(),
        ));
    }
    fields.push((
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
        "vGPU License status",
        "gauge",
        |_, _| "0".into(),
    ));
    if exporter.prof {
        fields.extend([
            ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", "gauge", (|s, _| c_f(s.gr)) as Get),
            ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.", "gauge", |s, _| c_f(s.tensor)),
            ("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data.", "gauge", |s, _| c_f(s.dram)),
            (
                "DCGM_FI_PROF_PCIE_TX_BYTES",
                "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.",
                "gauge",
                |s, _| s.pcie_tx.to_string(),
            ),
            (
                "DCGM_FI_PROF_PCIE_RX_BYTES",
                "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.",
                "gauge",
                |s, _| s.pcie_rx.to_string(),
            ),
        ]);
    }
    fields
}

/// One scrape of a node's exporter.
pub fn render(gpus: &[(&Ident, &Sample)], spec: &Gpu, exporter: &Exporter) -> String {
    let mut out = String::with_capacity(12 * 1024);
    let labels = |id: &Ident| {
        format!(
            "gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",device=\"nvidia{}\",modelName=\"{}\",{}=\"{}\",DCGM_FI_DRIVER_VERSION=\"{}\",container=\"vllm\",namespace=\"llm\",pod=\"{}\"",
            id.index,
            id.uuid,
            id.pci_bus_id,
            id.index,
            spec.model_name,
            exporter.hostname_label,
            id.hostname,
            exporter.driver_version,
            id.pod
        )
    };
    for (name, help, typ, get) in fields(spec, exporter) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {typ}");
        for (id, s) in gpus {
            if !s.valid {
                continue;
            }
            let _ = writeln!(out, "{name}{{{}}} {}", labels(id), get(s, spec));
        }
    }
    out
}
