//! Reading a whole bundle: list the container, read the manifest, then the
//! three stages: plan each file's target and time from its path
//! (`plan.rs`), ingest the bytes into the store (`ingest.rs`), reconcile
//! with the manifest and drop what cannot be placed (`reconcile.rs`).

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde::Serialize;
use vllm_lens_store::{Store, TargetKind};

use crate::container::{Container, ContainerKind, Input};
use crate::error::Error;
use crate::ingest::Ingest;
use crate::limits::Limits;
use crate::manifest::Manifest;
use crate::plan::{Plan, common_root};

/// How a bundle is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Size and count limits.
    pub limits: Limits,
    /// Interval between `dcgmi dmon` / `nvidia-smi dmon` rows that carry no
    /// time of their own, unless the manifest says (default 1000 ms, the
    /// tools' default `-d`).
    pub dmon_delay_ms: i64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            limits: Limits::default(),
            dmon_delay_ms: 1000,
        }
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Data was lost (a line or a file could not be read).
    Error,
    /// Data was read under an assumption the reader should know.
    Warning,
    /// For information (a file skipped because it is not a scrape).
    Info,
}

/// A problem with one file (and line) of the bundle; the rest was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The member's path inside the bundle (or the bundle's name).
    pub file: String,
    /// 1-based line, when the problem is on one line.
    pub line: Option<u32>,
    /// How serious.
    pub severity: Severity,
    /// A stable identifier of the problem class.
    pub code: String,
    /// What happened, in words.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Where a scrape's capture time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// `manifest.json`.
    Manifest,
    /// The file or folder name.
    Name,
    /// Every sample carried its own timestamp.
    Samples,
    /// The file's modification time (last resort).
    Mtime,
}

impl TimeSource {
    /// `manifest`, `name`, `samples` or `mtime`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeSource::Manifest => "manifest",
            TimeSource::Name => "name",
            TimeSource::Samples => "samples",
            TimeSource::Mtime => "mtime",
        }
    }
}

/// A bundle read into the store.
#[derive(Debug)]
pub struct Loaded {
    /// The series.
    pub store: Store,
    /// Everything skipped or assumed, file by file.
    pub diagnostics: Vec<Diagnostic>,
    /// The manifest, when the bundle had a readable one.
    pub manifest: Option<Manifest>,
    /// What the bundle was.
    pub container: ContainerKind,
    /// Files in the bundle (folders excluded).
    pub files: usize,
    /// Files read as scrapes.
    pub scrape_files: usize,
    /// Decompressed bytes read.
    pub bytes_read: u64,
    /// Where each target's scrape times came from (target name → sources).
    pub time_sources: BTreeMap<String, Vec<TimeSource>>,
    /// Files that were Prometheus HTTP API answers (an export from
    /// Prometheus rather than scrapes).
    pub api_answers: usize,
}

/// Reads a bundle. Fails only when nothing in it can be used; every smaller
/// problem becomes a [`Diagnostic`] and the rest is read. Three stages:
/// plan (paths and manifest → targets and times, `plan.rs`), ingest (bytes
/// → store, `ingest.rs`), reconcile (manifest, untimed files, outliers,
/// `reconcile.rs`).
pub fn load(input: Input<'_>, options: &Options) -> Result<Loaded, Error> {
    let mut container = Container::open(input, options.limits)?;
    let bundle_name = container.name.clone();
    let files: Vec<usize> = (0..container.members.len())
        .filter(|&i| !container.members[i].dir)
        .collect();
    let members = container.members.clone();
    let root = common_root(files.iter().map(|&i| members[i].path.as_str()));
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let manifest = read_manifest(&mut container, &files, &root, &mut diagnostics)?;
    let delay_ms = manifest
        .as_ref()
        .and_then(|m| m.capture.as_ref())
        .and_then(|c| {
            c.dmon_delay_ms
                .or(c.interval_s.map(|s| (s * 1000.0) as i64))
        })
        .filter(|&d| d > 0)
        .unwrap_or(options.dmon_delay_ms);

    let plan = Plan::new(
        files.iter().map(|&i| (i, members[i].path.as_str())),
        &root,
        manifest.as_ref(),
        &mut diagnostics,
    );
    let order: Vec<usize> = plan.files.iter().map(|p| p.index).collect();
    let plan_of: BTreeMap<usize, usize> = plan
        .files
        .iter()
        .enumerate()
        .map(|(k, p)| (p.index, k))
        .collect();
    let mut ingest = Ingest {
        store: Store::with_limits(vllm_lens_store::Limits {
            max_series: options.limits.max_series,
        }),
        manifest: manifest.as_ref(),
        delay_ms,
        targets: BTreeMap::new(),
        per_target: plan.per_target(),
        time_sources: BTreeMap::new(),
        untimed: Vec::new(),
        mtime_times: BTreeMap::new(),
        scrape_files: 0,
        api_answers: 0,
        bytes_read: 0,
        diagnostics,
    };
    container.read_members(&order, &mut |index, bytes| {
        if let Some(&k) = plan_of.get(&index) {
            ingest.file(&plan.files[k], &members[index], bytes);
        }
        Ok(())
    })?;

    if manifest.is_some() {
        // A set: a day's manifest lists tens of thousands of files.
        let mut paths: HashSet<String> = HashSet::new();
        for &i in &files {
            paths.insert(members[i].path[root.len()..].to_string());
            paths.insert(members[i].path.clone());
        }
        ingest.reconcile_manifest(&paths);
    }
    ingest.reconcile_times(&members, files.len(), plan.looked_at, &bundle_name)?;
    let Ingest {
        store,
        diagnostics,
        time_sources,
        scrape_files,
        api_answers,
        bytes_read,
        ..
    } = ingest;
    Ok(Loaded {
        store,
        diagnostics,
        manifest,
        container: container.kind,
        files: files.len(),
        scrape_files,
        bytes_read,
        time_sources,
        api_answers,
    })
}

/// Reads `manifest.json` at the bundle's root, when there is one; a bad
/// one is a diagnostic and the bundle is read without it.
fn read_manifest(
    container: &mut Container<'_>,
    files: &[usize],
    root: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<Manifest>, Error> {
    let Some(&mi) = files
        .iter()
        .find(|&&i| container.members[i].path.get(root.len()..) == Some("manifest.json"))
    else {
        return Ok(None);
    };
    let path = container.members[mi].path.clone();
    let mut manifest = None;
    container.read_members(&[mi], &mut |_, bytes| {
        match bytes.map(|b| Manifest::parse(&b)) {
            Ok(Ok(m)) => manifest = Some(m),
            Ok(Err((line, e))) => diagnostics.push(diag(
                &path,
                Some(line),
                Severity::Error,
                "bad_manifest",
                format!("manifest.json cannot be read ({e}); the bundle is read without it"),
            )),
            Err(e) => diagnostics.push(diag(
                &path,
                None,
                Severity::Error,
                "bad_manifest",
                format!("manifest.json {e}"),
            )),
        }
        Ok(())
    })?;
    Ok(manifest)
}

pub(crate) fn diag(
    file: &str,
    line: Option<u32>,
    severity: Severity,
    code: &str,
    message: String,
) -> Diagnostic {
    Diagnostic {
        file: file.to_string(),
        line,
        severity,
        code: code.to_string(),
        message,
    }
}

pub(crate) fn kind_from_str(s: &str) -> Option<TargetKind> {
    match s {
        "vllm" => Some(TargetKind::Vllm),
        "dcgm" => Some(TargetKind::Dcgm),
        "other" => Some(TargetKind::Other),
        _ => None,
    }
}
