//! `vllm-lens-sim`: a simulator of vLLM servers and dcgm-exporter that
//! writes capture bundles (`docs/bundle.md`) whose truth is known.
//!
//! Table of contents:
//! - [`scenario`]: the declarative scenario files (`samples/scenarios/*.toml`);
//! - [`hw`]: model shapes and GPU datasheet figures;
//! - [`engine`]: the discrete-event simulation (arrivals, front end,
//!   continuous-batching step loop, restarts);
//! - [`kv`] (from `vllm-lens-engine`): the KV block pool with prefix caching;
//! - [`metrics`]: what a vLLM server counts; [`vllm_expo`]: how each vLLM
//!   era prints it;
//! - [`gpu`]: the activity trace, power and temperature; [`dcgm`]: the
//!   exporter's collection and exposition;
//! - [`truth`]: per-minute ground truth from the model's own events;
//! - [`generate`] and [`zip_bundle`]: the bundle.
//!
//! Output is a pure function of the scenario: no clock, no thread, no
//! unseeded randomness, so committed samples are reproducible byte for byte.

pub mod dcgm;
pub mod engine;
pub mod gpu;
pub mod hw;
pub use vllm_lens_engine::kv;
pub mod metrics;
pub mod pyfloat;
pub use vllm_lens_engine::rng;
pub mod scenario;
pub mod truth;
pub mod vllm_expo;

use std::collections::BTreeMap;
use std::io::Write as _;

use serde::Serialize;
use vllm_lens_core::bundle::{Capture, Environment, Manifest, ManifestScrape, ManifestTarget};

use crate::engine::{Observer, Sim};
use crate::gpu::GpuState;
use crate::rng::Rng;
use crate::scenario::Resolved;

/// The tool name written into manifests.
pub const TOOL: &str = concat!("vllm-lens-sim ", env!("CARGO_PKG_VERSION"));

/// A vLLM release as numbers (`0.10.1.1` and `.postN` compare by the first three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// Parses `0.23.0`, `0.6.6.post1`, `0.10.1.1`.
    pub fn parse(s: &str) -> Option<Version> {
        let mut it = s.split('.');
        let a = it.next()?.parse().ok()?;
        let b = it.next()?.parse().ok()?;
        let c = it.next().unwrap_or("0").parse().ok()?;
        Some(Version(a, b, c))
    }
}

/// Days since 1970-01-01.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    vllm_lens_core::bundle::naming::days_from_civil(y, i64::from(m), i64::from(d))
}

/// The simulator's result: bundle members and the truth.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The bundle's common folder (the scenario name).
    pub folder: String,
    /// Members below the folder, in write order: `manifest.json` first.
    pub files: Vec<(String, Vec<u8>)>,
    /// The ground truth.
    pub truth: TruthDoc,
    /// Each replica's metrics at the end of the run, for conservation checks.
    pub final_metrics: Vec<metrics::VllmMetrics>,
}

/// What `<name>.truth.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct TruthDoc {
    /// Scenario name.
    pub scenario: String,
    /// The generator.
    pub tool: String,
    /// Capture start, Unix ms.
    pub start_ms: i64,
    /// Deployment arithmetic.
    pub deployment: Deployment,
    /// One row per minute of the capture.
    pub windows: Vec<truth::Window>,
    /// Whole-run totals, warm-up included.
    pub totals: truth::Totals,
}

/// Figures that follow from the configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Deployment {
    /// KV blocks per replica.
    pub num_gpu_blocks: u32,
    /// KV bytes per token per GPU.
    pub kv_bytes_per_token: f64,
    /// Weight bytes per GPU.
    pub weight_bytes: f64,
    /// `FB_USED` while serving, MiB.
    pub fb_used_mib: u64,
}

struct Out {
    files: Vec<(String, Vec<u8>)>,
    scrapes: Vec<ManifestScrape>,
    gpus: Vec<Vec<(dcgm::Ident, GpuState)>>,
    rng: Rng,
    used_mib: u64,
    gpu_truth: Vec<(f64, f64, f64)>,
}

impl Out {
    fn failed(&self, sim: &Sim, target: &str, slot: usize, up: bool) -> Option<String> {
        let s = &sim.r.scenario;
        let port = if target.starts_with("vllm") {
            8000
        } else {
            9400
        };
        if !up {
            return Some(format!(
                "curl: (7) Failed to connect to {target} port {port}: Connection refused"
            ));
        }
        // Outages are judged on the slot's nominal time so that jitter does
        // not move a scrape in or out of them.
        let nominal = slot as f64 * s.scrape_interval_s;
        for d in &s.capture.down {
            if d.target == target && nominal >= d.from_s && nominal < d.to_s {
                return Some(format!(
                    "curl: (7) Failed to connect to {target} port {port}: No route to host"
                ));
            }
        }
        for m in &s.capture.missed {
            let want = (m.at_s / s.scrape_interval_s).round() as usize;
            if m.target == target && want == slot {
                return Some(m.error.clone());
            }
        }
        None
    }

    fn record(&mut self, target: &str, t_unix: f64, body: Result<String, String>) {
        let ms = (t_unix * 1000.0).round() as i64;
        match body {
            Ok(text) => {
                let file = format!("{target}/{ms}.prom");
                self.scrapes.push(ManifestScrape {
                    target: Some(target.to_string()),
                    time_ms: Some(ms),
                    file: Some(file.clone()),
                    up: Some(1),
                    error: None,
                    duration_ms: Some(((4.0 + text.len() as f64 / 9000.0) * 10.0).round() / 10.0),
                });
                self.files.push((file, text.into_bytes()));
            }
            Err(e) => self.scrapes.push(ManifestScrape {
                target: Some(target.to_string()),
                time_ms: Some(ms),
                file: None,
                up: Some(0),
                error: Some(e),
                duration_ms: None,
            }),
        }
    }
}

impl Observer for Out {
    fn scrape_vllm(&mut self, sim: &Sim, replica: usize, slot: usize, t: f64) {
        let target = format!("vllm-{replica}");
        let rep = &sim.replicas[replica];
        let body = match self.failed(sim, &target, slot, rep.up) {
            Some(e) => Err(e),
            None => {
                let srv = &sim.r.scenario.server;
                let ctx = vllm_expo::Ctx {
                    version: sim.r.version,
                    model_name: &srv.model,
                    block_size: srv.block_size,
                    gpu_memory_utilization: srv.gpu_memory_utilization,
                    enable_prefix_caching: srv.enable_prefix_caching,
                };
                let every = srv.stale_gauges as usize;
                if every > 0 && !slot.is_multiple_of(every) {
                    let mut m = rep.metrics.clone();
                    m.running = 0.0;
                    m.waiting = 0.0;
                    Ok(vllm_expo::render(&m, &ctx))
                } else {
                    Ok(vllm_expo::render(&rep.metrics, &ctx))
                }
            }
        };
        self.record(&target, sim.unix(t), body);
    }

    fn scrape_dcgm(&mut self, sim: &Sim, node: usize, slot: usize, t: f64) {
        let target = format!("dcgm-{node}");
        let body = match self.failed(sim, &target, slot, true) {
            Some(e) => Err(e),
            None => {
                let gpus: Vec<(&dcgm::Ident, &gpu::Sample)> = self.gpus[node]
                    .iter()
                    .map(|(i, s)| (i, &s.sample))
                    .collect();
                Ok(dcgm::render(&gpus, sim.r.gpu, &sim.r.scenario.exporter))
            }
        };
        self.record(&target, sim.unix(t), body);
    }

    fn collect(&mut self, sim: &Sim, node: usize, t: f64) {
        let rep = &sim.replicas[node];
        let used = self.used_mib;
        let unix = sim.unix(t);
        for (_, st) in &mut self.gpus[node] {
            dcgm::collect(
                st,
                &rep.trace,
                sim.r.gpu,
                t,
                rep.loaded,
                used,
                &mut self.rng,
                &sim.r.scenario.exporter,
            );
        }
        let vram = if rep.loaded {
            used as f64 / sim.r.gpu.memory_mib as f64 * 100.0
        } else {
            0.0
        };
        for (_, st) in &self.gpus[node] {
            self.gpu_truth.push((unix, st.sample.temp.round(), vram));
        }
    }
}

/// The made-up identities of the nodes, pods and GPUs, and the manifest's
/// targets (one vLLM and one dcgm-exporter per node), from the scenario's
/// own "identity" stream.
fn identities(sim: &Sim) -> (Vec<Vec<(dcgm::Ident, GpuState)>>, Vec<ManifestTarget>) {
    let mut idrng = Rng::stream(sim.r.scenario.seed, "identity");
    let mut gpus = Vec::new();
    let mut targets = Vec::new();
    for node in 0..sim.n_nodes {
        let host = format!(
            "ip-10-0-{}-{}.ec2.internal",
            1 + node,
            20 + idrng.int(0, 200)
        );
        let pod = format!("vllm-{node}-{:x}", idrng.next_u64() & 0xff_ffff);
        let mut list = Vec::new();
        let mut uuids = Vec::new();
        for g in 0..sim.gpus_per_node {
            let u = idrng.next_u64();
            let v = idrng.next_u64();
            let uuid = format!(
                "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                u >> 32,
                (u >> 16) & 0xffff,
                u & 0xffff,
                v >> 48,
                v & 0xffff_ffff_ffff
            );
            uuids.push(uuid.clone());
            let ident = dcgm::Ident {
                index: g as u32,
                uuid,
                pci_bus_id: format!("00000000:00:{:02X}.0", 0x1B + g),
                hostname: host.clone(),
                pod: pod.clone(),
            };
            let state = GpuState {
                energy_mj: 9.0e10 + idrng.uniform(0.0, 5.0e9).floor(),
                temp: 44.0,
                last_t: 0.0,
                sample: gpu::Sample::default(),
            };
            list.push((ident, state));
        }
        targets.push(ManifestTarget {
            name: format!("vllm-{node}"),
            kind: Some("vllm".into()),
            url: Some(format!(
                "http://10.0.{}.{}:8000/metrics",
                1 + node,
                40 + node
            )),
            job: None,
            instance: Some(format!("10.0.{}.{}:8000", 1 + node, 40 + node)),
            pod: Some(pod.clone()),
            namespace: Some("llm".into()),
            node: Some(host.clone()),
            gpu_uuids: uuids.clone(),
            labels: BTreeMap::new(),
            environment: None,
        });
        gpus.push(list);
    }
    for (node, list) in gpus.iter().enumerate() {
        targets.push(ManifestTarget {
            name: format!("dcgm-{node}"),
            kind: Some("dcgm".into()),
            url: Some(format!("http://{}:9400/metrics", list[0].0.hostname)),
            job: None,
            instance: Some(format!("{}:9400", list[0].0.hostname)),
            pod: Some(format!(
                "nvidia-dcgm-exporter-{:x}",
                (node as u64 + 11) * 0x3f1d
            )),
            namespace: Some("gpu-operator".into()),
            node: Some(list[0].0.hostname.clone()),
            gpu_uuids: list.iter().map(|(i, _)| i.uuid.clone()).collect(),
            labels: BTreeMap::new(),
            environment: None,
        });
    }
    (gpus, targets)
}

/// The engine arguments the manifest records.
fn engine_args(srv: &scenario::Server) -> BTreeMap<String, serde_json::Value> {
    let mut args = BTreeMap::new();
    args.insert(
        "max-model-len".to_string(),
        serde_json::json!(srv.max_model_len),
    );
    args.insert(
        "max-num-seqs".to_string(),
        serde_json::json!(srv.max_num_seqs),
    );
    args.insert(
        "max-num-batched-tokens".to_string(),
        serde_json::json!(srv.max_num_batched_tokens),
    );
    args.insert(
        "gpu-memory-utilization".to_string(),
        serde_json::json!(srv.gpu_memory_utilization),
    );
    args.insert(
        "tensor-parallel-size".to_string(),
        serde_json::json!(srv.tensor_parallel),
    );
    args.insert("block-size".to_string(), serde_json::json!(srv.block_size));
    args.insert(
        "enable-prefix-caching".to_string(),
        serde_json::json!(srv.enable_prefix_caching),
    );
    args
}

/// Runs a scenario.
pub fn generate(r: Resolved) -> Generated {
    let name = r.scenario.name.clone();
    let mut sim = Sim::new(r);
    let srv = sim.r.scenario.server.clone();
    let used_mib = (sim.budget_mib + srv.perf.context_mib).round() as u64;
    let (gpus, targets) = identities(&sim);
    let mut out = Out {
        files: Vec::new(),
        scrapes: Vec::new(),
        gpus,
        rng: Rng::stream(sim.r.scenario.seed, "dcgm"),
        used_mib,
        gpu_truth: Vec::new(),
    };
    sim.run(&mut out);
    for &(unix, temp, vram) in &out.gpu_truth {
        sim.truth.gpu_collect(unix, temp, vram);
    }
    let s = &sim.r.scenario;
    let start_ms = sim.r.start_ms;
    let manifest = Manifest {
        format: Some("vllm-lens-bundle".into()),
        version: Some(1),
        targets,
        scrapes: out.scrapes,
        capture: Some(Capture {
            interval_s: Some(s.scrape_interval_s),
            start_ms: Some(start_ms),
            end_ms: Some(start_ms + (s.duration_s * 1000.0) as i64),
            tool: Some(TOOL.into()),
            dmon_delay_ms: None,
            pushdown_window_s: None,
        }),
        environment: Some(Environment {
            vllm_version: Some(srv.vllm_version.clone()),
            model: Some(srv.model.clone()),
            gpu_model: Some(sim.r.gpu.model_name.into()),
            gpu_count: Some(srv.replicas * srv.tensor_parallel),
            driver_version: Some(s.exporter.driver_version.clone()),
            engine_args: engine_args(&srv),
            device: None,
        }),
    };
    let mut manifest_json = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
    manifest_json.push(b'\n');
    let mut files = vec![("manifest.json".to_string(), manifest_json)];
    files.extend(out.files);
    let traces: Vec<&gpu::Trace> = sim.replicas.iter().map(|r| &r.trace).collect();
    let windows = sim
        .truth
        .finish(&traces, sim.r.gpu, sim.gpus_per_node, s.warmup_s);
    let truth = TruthDoc {
        scenario: name.clone(),
        tool: TOOL.into(),
        start_ms,
        deployment: Deployment {
            num_gpu_blocks: sim.num_blocks,
            kv_bytes_per_token: sim.r.model.kv_bytes_per_token(2.0)
                / f64::from(srv.tensor_parallel),
            weight_bytes: sim.weight_bytes,
            fb_used_mib: used_mib,
        },
        windows,
        totals: sim.truth.totals.clone(),
    };
    let final_metrics = sim.replicas.iter().map(|r| r.metrics.clone()).collect();
    Generated {
        folder: name,
        files,
        truth,
        final_metrics,
    }
}

/// The bundle as a zip: deflated members under `<folder>/`, each dated by
/// its scrape time (UTC), so the same scenario always gives the same bytes.
pub fn zip_bundle(g: &Generated) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes) in &g.files {
        let ms = path
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".prom"))
            .and_then(|f| f.parse::<i64>().ok())
            .unwrap_or(g.truth.start_ms);
        let days = ms.div_euclid(86_400_000);
        let (y, mo, d) = vllm_lens_core::time::civil_from_days(days);
        let secs = ms.rem_euclid(86_400_000) / 1000;
        let dt = zip::DateTime::from_date_and_time(
            y as u16,
            mo as u8,
            d as u8,
            (secs / 3600) as u8,
            (secs / 60 % 60) as u8,
            (secs % 60) as u8,
        )
        .unwrap_or_default();
        let opts = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(dt)
            .unix_permissions(0o644);
        w.start_file(format!("{}/{path}", g.folder), opts)
            .expect("zip member starts");
        w.write_all(bytes).expect("zip member writes");
    }
    w.finish().expect("zip finishes").into_inner()
}
