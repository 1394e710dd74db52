//! What the GPU does: the engine's steps become an activity trace (busy,
//! DRAM-busy and tensor-busy seconds per 100 ms bin); power, energy and
//! temperature follow from it; dcgm-exporter samples it every collect
//! interval.

use crate::hw::Gpu;

/// Bin width of the activity trace, s.
pub const BIN_S: f64 = 0.1;

/// Activity of one replica's GPUs (tensor-parallel shards do the same work).
#[derive(Debug, Clone)]
pub struct Trace {
    busy: Vec<f32>,
    dram: Vec<f32>,
    tensor: Vec<f32>,
}

impl Trace {
    /// A trace covering `total_s` seconds.
    pub fn new(total_s: f64) -> Trace {
        let n = (total_s / BIN_S).ceil() as usize + 2;
        Trace {
            busy: vec![0.0; n],
            dram: vec![0.0; n],
            tensor: vec![0.0; n],
        }
    }

    /// The GPU is busy from `t0` to `t1` with the given fractions of that time.
    pub fn add(&mut self, t0: f64, t1: f64, busy: f64, dram: f64, tensor: f64) {
        if t1 <= t0 {
            return;
        }
        let i0 = (t0 / BIN_S).floor().max(0.0) as usize;
        let i1 = ((t1 / BIN_S).floor().max(0.0) as usize).min(self.busy.len().saturating_sub(1));
        for i in i0..=i1 {
            let lo = t0.max(i as f64 * BIN_S);
            let hi = t1.min((i + 1) as f64 * BIN_S);
            if hi > lo {
                let d = hi - lo;
                self.busy[i] += (d * busy) as f32;
                self.dram[i] += (d * dram) as f32;
                self.tensor[i] += (d * tensor) as f32;
            }
        }
    }

    /// Mean (busy, dram, tensor) fractions of bin `i`.
    pub fn bin(&self, i: usize) -> (f64, f64, f64) {
        match self.busy.get(i) {
            Some(b) => (
                f64::from(*b) / BIN_S,
                f64::from(self.dram[i]) / BIN_S,
                f64::from(self.tensor[i]) / BIN_S,
            ),
            None => (0.0, 0.0, 0.0),
        }
    }

    /// Mean (busy, dram, tensor) fractions over `[t0, t1)`, bin-aligned.
    pub fn mean(&self, t0: f64, t1: f64) -> (f64, f64, f64) {
        let a = ((t0 / BIN_S).round().max(0.0) as usize).min(self.busy.len());
        let b = ((t1 / BIN_S).round().max(0.0) as usize).min(self.busy.len());
        if b <= a {
            return (0.0, 0.0, 0.0);
        }
        let sum = |v: &[f32]| v[a..b].iter().map(|x| f64::from(*x)).sum::<f64>();
        let span = (b - a) as f64 * BIN_S;
        (
            (sum(&self.busy) / span).min(1.0),
            (sum(&self.dram) / span).min(1.0),
            (sum(&self.tensor) / span).min(1.0),
        )
    }
}

/// Board power for the given activity fractions, W.
pub fn power(gpu: &Gpu, busy: f64, dram: f64, tensor: f64) -> f64 {
    let span = gpu.power_limit_w - gpu.idle_w;
    (gpu.idle_w + span * (0.22 * busy + 0.50 * dram + 0.80 * tensor)).min(gpu.power_limit_w)
}

/// Steady-state temperature at a power draw, °C (ambient 30 °C plus a
/// thermal resistance that puts a fully loaded board near its target).
pub fn steady_temp(gpu: &Gpu, watts: f64) -> f64 {
    30.0 + 43.0 * watts / (gpu.power_limit_w * 0.8)
}

/// The latest values dcgm-exporter collected for one GPU.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// `DCGM_FI_DEV_GPU_UTIL`, %.
    pub util: u32,
    /// `DCGM_FI_DEV_MEM_COPY_UTIL`, %.
    pub mem_copy: u32,
    /// PROF ratios.
    pub gr: f64,
    /// As above.
    pub tensor: f64,
    /// As above.
    pub dram: f64,
    /// W.
    pub power: f64,
    /// mJ since driver load.
    pub energy_mj: u64,
    /// °C.
    pub temp: f64,
    /// MHz.
    pub sm_clock: u32,
    /// MiB.
    pub fb_used: u64,
    /// MiB.
    pub fb_free: u64,
    /// B/s.
    pub pcie_tx: u64,
    /// B/s.
    pub pcie_rx: u64,
    /// Whether a collection happened yet.
    pub valid: bool,
}

/// One GPU's running state between collections.
#[derive(Debug, Clone)]
pub struct GpuState {
    /// Energy integral, mJ (f64 to keep fractions).
    pub energy_mj: f64,
    /// Current temperature.
    pub temp: f64,
    /// Time of the last integration step.
    pub last_t: f64,
    /// Last collected sample.
    pub sample: Sample,
}
