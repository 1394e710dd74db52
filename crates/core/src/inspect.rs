//! The bundle inventory behind `vllm-lens inspect`: what was captured, from
//! which targets, over what time, and what could not be read.
//!
//! The JSON form is a public contract: fields are only ever added.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use vllm_lens_bundle::{Diagnostic, Loaded, TimeSource, human_bytes};

use crate::time::{format_duration, format_rfc3339};
use vllm_lens_catalog::{Catalogue, Engine, Status};

/// The inventory of one bundle.
#[derive(Clone, Debug, Serialize)]
pub struct Inspect {
    /// Version of this JSON layout.
    pub schema_version: u32,
    /// The tool version that wrote it.
    pub tool_version: String,
    /// The bundle as a whole.
    pub bundle: BundleSummary,
    /// Every target, sorted by name.
    pub targets: Vec<TargetSummary>,
    /// Every metric family, sorted by name.
    pub families: Vec<FamilySummary>,
    /// Everything skipped or assumed, in reading order.
    pub diagnostics: Vec<Diagnostic>,
    /// Total points stored.
    pub samples: u64,
    /// Total series stored.
    pub series: usize,
    /// Approximate memory held by the series store, in bytes.
    pub store_bytes: usize,
    /// `store_bytes ÷ samples`.
    pub bytes_per_point: Option<f64>,
    /// Every logical signal found, aliased (under which name) or missing;
    /// the inferred vLLM era and release range; GPUs; unknown families.
    pub catalogue: Catalogue,
}

/// The bundle as a whole.
#[derive(Clone, Debug, Serialize)]
pub struct BundleSummary {
    /// The name given (file or folder).
    pub name: String,
    /// `zip`, `tar`, `tar.gz`, `files` or `file`.
    pub container: String,
    /// Files in the bundle (folders excluded).
    pub files: usize,
    /// Files read as scrapes.
    pub scrape_files: usize,
    /// Decompressed bytes read.
    pub bytes: u64,
    /// Whether a readable `manifest.json` was found.
    pub manifest: bool,
}

/// One target.
#[derive(Clone, Debug, Serialize)]
pub struct TargetSummary {
    /// Target name.
    pub name: String,
    /// `vllm`, `dcgm` or `other`.
    pub kind: String,
    /// Distinct capture times with samples.
    pub scrapes: usize,
    /// Scrapes recorded as failed (`up: 0` in the manifest).
    pub failed_scrapes: usize,
    /// First capture time, ms since the Unix epoch.
    pub first_ms: Option<i64>,
    /// Last capture time, ms since the Unix epoch.
    pub last_ms: Option<i64>,
    /// Median interval between captures, ms.
    pub interval_ms: Option<i64>,
    /// Series of this target.
    pub series: usize,
    /// Where the capture times came from.
    pub time_source: Vec<TimeSource>,
    /// Identity labels attached to every series of the target.
    pub labels: BTreeMap<String, String>,
}

/// One metric family.
#[derive(Clone, Debug, Serialize)]
pub struct FamilySummary {
    /// Family name as declared (or the sample name when undeclared).
    pub name: String,
    /// Declared type (`counter`, `gauge`, `histogram`, `summary`,
    /// `untyped`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Series in the family (every sample name and label set, all targets).
    pub series: usize,
    /// Points in the family.
    pub points: u64,
}

impl Inspect {
    /// The inventory of a loaded bundle.
    pub fn new(name: &str, loaded: &Loaded) -> Inspect {
        let store = &loaded.store;
        let mut targets: Vec<TargetSummary> = store
            .targets()
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let times = t.sample_times();
                let mut gaps: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).collect();
                gaps.sort_unstable();
                let id = vllm_lens_store::TargetId(i as u32);
                TargetSummary {
                    name: t.name().to_string(),
                    kind: t.kind().as_str().to_string(),
                    scrapes: times.len(),
                    failed_scrapes: t.scrapes().iter().filter(|s| !s.up).count(),
                    first_ms: times.first().copied(),
                    last_ms: times.last().copied(),
                    interval_ms: gaps.get(gaps.len() / 2).copied(),
                    series: store
                        .all_series()
                        .iter()
                        .filter(|s| s.target() == id)
                        .count(),
                    time_source: loaded
                        .time_sources
                        .get(t.name())
                        .cloned()
                        .unwrap_or_default(),
                    labels: store
                        .target_labels(id)
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                }
            })
            .collect();
        targets.sort_by(|a, b| a.name.cmp(&b.name));
        let mut families: Vec<FamilySummary> = store
            .families()
            .iter()
            .map(|f| FamilySummary {
                name: f.name().to_string(),
                kind: f.kind().as_str().to_string(),
                series: f.series().len(),
                points: f
                    .series()
                    .iter()
                    .map(|&s| store.series(s).len() as u64)
                    .sum(),
            })
            .collect();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        let samples = store.points();
        let store_bytes = store.heap_bytes();
        Inspect {
            schema_version: 1,
            tool_version: crate::VERSION.to_string(),
            bundle: BundleSummary {
                name: name.to_string(),
                container: loaded.container.as_str().to_string(),
                files: loaded.files,
                scrape_files: loaded.scrape_files,
                bytes: loaded.bytes_read,
                manifest: loaded.manifest.is_some(),
            },
            targets,
            families,
            diagnostics: loaded.diagnostics.clone(),
            samples,
            series: store.all_series().len(),
            store_bytes,
            bytes_per_point: (samples > 0).then(|| store_bytes as f64 / samples as f64),
            catalogue: Catalogue::resolve(store),
        }
    }

    /// The inventory as text for a terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let b = &self.bundle;
        let _ = writeln!(
            out,
            "bundle   {} ({}, {} files, {} read as scrapes, {} of text{})",
            b.name,
            b.container,
            b.files,
            b.scrape_files,
            human_bytes(b.bytes),
            if b.manifest { ", with manifest" } else { "" }
        );
        let _ = writeln!(out, "\ntargets ({})", self.targets.len());
        let rows: Vec<[String; 8]> = self
            .targets
            .iter()
            .map(|t| {
                let span = match (t.first_ms, t.last_ms) {
                    (Some(a), Some(b)) => format_duration(b - a),
                    _ => "-".into(),
                };
                [
                    t.name.clone(),
                    t.kind.clone(),
                    t.scrapes.to_string(),
                    t.failed_scrapes.to_string(),
                    t.first_ms.map_or("-".into(), format_rfc3339),
                    span,
                    t.interval_ms
                        .map_or("-".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0)),
                    t.time_source
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join("+"),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                "NAME",
                "KIND",
                "SCRAPES",
                "FAILED",
                "FIRST",
                "SPAN",
                "INTERVAL",
                "TIMES FROM",
            ],
            &rows,
        );
        let era = &self.catalogue.era;
        let _ = writeln!(out, "\nvLLM era");
        for t in &era.targets {
            let _ = writeln!(
                out,
                "  {:<10} {} {}{}",
                t.target,
                match t.engine {
                    Engine::V0 => "V0 engine",
                    Engine::V1 => "V1 engine",
                    Engine::Unknown => "engine unknown",
                },
                vllm_lens_catalog::era::range_text(t.min_version, t.max_version),
                if t.consistent {
                    ""
                } else {
                    " (markers contradict each other)"
                }
            );
        }
        if era.targets.is_empty() {
            let _ = writeln!(out, "  no vLLM target");
        }
        if era.mixed {
            let _ = writeln!(out, "  targets of different releases share this bundle");
        }
        let signals = &self.catalogue.signals;
        let _ = writeln!(
            out,
            "\nsignals ({} found, {} aliased, {} missing)",
            signals.iter().filter(|r| r.status == Status::Found).count(),
            signals
                .iter()
                .filter(|r| r.status == Status::Aliased)
                .count(),
            signals
                .iter()
                .filter(|r| r.status == Status::Missing)
                .count()
        );
        let rows: Vec<[String; 3]> = signals
            .iter()
            .map(|r| {
                [
                    r.key.to_string(),
                    format!("{:?}", r.status).to_lowercase(),
                    if r.used.is_empty() {
                        "-".to_string()
                    } else {
                        r.used.join(", ")
                    },
                ]
            })
            .collect();
        table(&mut out, &["SIGNAL", "STATUS", "READ FROM"], &rows);
        for u in &self.catalogue.unknown_vllm_families {
            let _ = writeln!(out, "  unknown vllm family kept: {} ({})", u.name, u.kind);
        }
        let _ = writeln!(out, "\nfamilies ({})", self.families.len());
        let rows: Vec<[String; 4]> = self
            .families
            .iter()
            .map(|f| {
                [
                    f.name.clone(),
                    f.kind.clone(),
                    f.series.to_string(),
                    f.points.to_string(),
                ]
            })
            .collect();
        table(&mut out, &["NAME", "TYPE", "SERIES", "POINTS"], &rows);
        let _ = writeln!(out, "\ndiagnostics ({})", self.diagnostics.len());
        for d in &self.diagnostics {
            let _ = writeln!(
                out,
                "  {:<7} {d}",
                format!("{:?}", d.severity).to_lowercase()
            );
        }
        let _ = writeln!(
            out,
            "\nsamples  {} points in {} series; store ≈ {}{}",
            self.samples,
            self.series,
            human_bytes(self.store_bytes as u64),
            self.bytes_per_point
                .map_or(String::new(), |b| format!(" ({b:.1} bytes/point)"))
        );
        out
    }
}

fn table<const N: usize>(out: &mut String, header: &[&str; N], rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for (i, h) in header.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut s = String::from(" ");
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            s.push(' ');
            s.push_str(cell);
            if i + 1 < N {
                s.push_str(&" ".repeat(pad + 1));
            }
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
