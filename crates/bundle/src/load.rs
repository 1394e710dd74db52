//! Reading a whole bundle: list the container, read the manifest, then the
//! three stages: plan each file's target and time from its path
//! (`plan.rs`), ingest the bytes into the store (`ingest.rs`), reconcile
//! with the manifest and drop what cannot be placed (`reconcile.rs`).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use vllm_lens_store::{Store, TargetKind};

use crate::container::ContainerKind;
use crate::container::{Archive, Input, Listing};
use crate::error::Error;
use crate::facts::{FactFile, Facts};
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
    /// What the collector recorded about the servers (`meta/`).
    pub facts: Facts,
}

/// Reads a bundle. Fails only when nothing in it can be used; every smaller
/// problem becomes a [`Diagnostic`] and the rest is read. The two halves
/// of a load, here in one loop: an [`Archive`] lists and inflates, a
/// [`Loader`] plans (paths and manifest → targets and times, `plan.rs`),
/// ingests (bytes → store, `ingest.rs`) and reconciles (manifest, untimed
/// files, outliers, `reconcile.rs`).
pub fn load(input: Input<'_>, options: &Options) -> Result<Loaded, Error> {
    let mut archive = Archive::open(input, options.limits)?;
    let mut loader = Loader::new(archive.listing(), options);
    if let Some(m) = loader.manifest_member() {
        let mut read = None;
        archive.read(&[m], &mut |_, bytes| {
            read = Some(bytes);
            Ok(())
        })?;
        loader.manifest(read.unwrap_or_else(|| Err("cannot be read".into())));
    }
    let order = loader.order();
    archive.read(&order, &mut |index, bytes| {
        loader.file(index, bytes.as_deref().map_err(Clone::clone));
        Ok(())
    })?;
    loader.finish()
}

/// The parsing half of [`load`]: plans a [`Listing`], takes each member's
/// bytes as they come, and puts the store together. Its steps, in order:
/// [`Loader::manifest_member`] (read that member first and hand it to
/// [`Loader::manifest`]), [`Loader::order`] (the members to read, in the
/// order to read them), [`Loader::file`] for each, [`Loader::finish`].
/// Sans-IO: whoever holds the [`Archive`] reads the bytes, on this thread
/// or another (the page's second Web Worker).
pub struct Loader {
    listing: Listing,
    /// Indices of the listing's files (folders excluded).
    files: Vec<usize>,
    root: String,
    manifest_member: Option<usize>,
    dmon_delay_ms: i64,
    max_series: usize,
    /// Set by `order`.
    stage: Option<Planned>,
    diagnostics: Vec<Diagnostic>,
    manifest: Option<Manifest>,
}

impl Loader {
    /// A loader for the members `listing` names.
    pub fn new(listing: Listing, options: &Options) -> Loader {
        let files: Vec<usize> = (0..listing.members.len())
            .filter(|&i| !listing.members[i].dir)
            .collect();
        let root = common_root(files.iter().map(|&i| listing.members[i].path.as_str()));
        let manifest_member = files
            .iter()
            .copied()
            .find(|&i| listing.members[i].path.get(root.len()..) == Some("manifest.json"));
        Loader {
            listing,
            files,
            root,
            manifest_member,
            dmon_delay_ms: options.dmon_delay_ms,
            max_series: options.limits.max_series,
            stage: None,
            diagnostics: Vec::new(),
            manifest: None,
        }
    }

    /// The bundle's `manifest.json`, when it has one: read it before the
    /// rest and hand it to [`Loader::manifest`].
    pub fn manifest_member(&self) -> Option<usize> {
        self.manifest_member
    }

    /// The manifest's bytes (or why they could not be read); a bad manifest
    /// is a diagnostic and the bundle is read without it. Ignored once
    /// [`Loader::order`] has planned.
    pub fn manifest(&mut self, bytes: Result<Vec<u8>, String>) {
        let Some(mi) = self.manifest_member.filter(|_| self.stage.is_none()) else {
            return;
        };
        let path = &self.listing.members[mi].path;
        match bytes.map(|b| Manifest::parse(&b)) {
            Ok(Ok(m)) => self.manifest = Some(m),
            Ok(Err((line, e))) => self.diagnostics.push(diag(
                path,
                Some(line),
                Severity::Error,
                "bad_manifest",
                format!("manifest.json cannot be read ({e}); the bundle is read without it"),
            )),
            Err(e) => self.diagnostics.push(diag(
                path,
                None,
                Severity::Error,
                "bad_manifest",
                format!("manifest.json {e}"),
            )),
        }
    }

    /// Plans (once) and returns the members to read, in reading order
    /// (target, time, path).
    pub fn order(&mut self) -> Vec<usize> {
        let plan = &self.planned().plan;
        plan.files
            .iter()
            .map(|f| f.index)
            .chain(plan.facts.iter().map(|f| f.0))
            .collect()
    }

    fn planned(&mut self) -> &mut Planned {
        let stage = match self.stage.take() {
            Some(stage) => stage,
            None => self.plan(),
        };
        self.stage.insert(stage)
    }

    fn plan(&mut self) -> Planned {
        let members = &self.listing.members;
        let plan = Plan::new(
            self.files.iter().map(|&i| (i, members[i].path.as_str())),
            &self.root,
            self.manifest.as_ref(),
            &mut self.diagnostics,
        );
        let plan_of = plan
            .files
            .iter()
            .enumerate()
            .map(|(k, p)| (p.index, k))
            .collect();
        let manifest = self.manifest.take().map(Arc::new);
        let delay_ms = manifest
            .as_ref()
            .and_then(|m| m.capture.as_ref())
            .and_then(|c| {
                c.dmon_delay_ms
                    .or(c.interval_s.map(|s| (s * 1000.0) as i64))
            })
            .filter(|&d| d > 0)
            .unwrap_or(self.dmon_delay_ms);
        let ingest = Ingest {
            store: Store::with_limits(vllm_lens_store::Limits {
                max_series: self.max_series,
            }),
            manifest,
            delay_ms,
            targets: BTreeMap::new(),
            per_target: plan.per_target(),
            time_sources: BTreeMap::new(),
            untimed: Vec::new(),
            mtime_times: BTreeMap::new(),
            scrape_files: 0,
            api_answers: 0,
            empty: Vec::new(),
            bytes_read: 0,
            diagnostics: std::mem::take(&mut self.diagnostics),
        };
        Planned {
            plan,
            plan_of,
            ingest,
            facts: Facts::default(),
        }
    }

    /// Reads member `index`'s bytes (or why they could not be read) into
    /// the store. Members not in [`Loader::order`] are ignored; the order
    /// given there is the order to keep (a tar's own order also does, as
    /// it is the order [`Archive::read`] reads it in).
    pub fn file(&mut self, index: usize, bytes: Result<&[u8], String>) {
        self.planned();
        let (Some(stage), Some(member)) = (&mut self.stage, self.listing.members.get(index)) else {
            return;
        };
        if let Some(&k) = stage.plan_of.get(&index) {
            stage.ingest.file(&stage.plan.files[k], member, bytes);
        } else if let Some((_, path, fact)) = stage.plan.facts.iter().find(|f| f.0 == index) {
            read_fact(
                &mut stage.facts,
                &mut stage.ingest.diagnostics,
                path,
                fact,
                bytes,
            );
        }
    }

    /// Puts the store together: reconciles with the manifest, places or
    /// drops untimed files, finishes the series. Fails when nothing could
    /// be read.
    pub fn finish(mut self) -> Result<Loaded, Error> {
        let Planned {
            plan,
            mut ingest,
            facts,
            ..
        } = match self.stage.take() {
            Some(stage) => stage,
            None => self.plan(),
        };
        let Loader {
            listing,
            files,
            root,
            ..
        } = self;
        let members = &listing.members;
        if ingest.manifest.is_some() {
            // A set: a day's manifest lists tens of thousands of files.
            let mut paths: HashSet<String> = HashSet::new();
            for &i in &files {
                paths.insert(members[i].path[root.len()..].to_string());
                paths.insert(members[i].path.clone());
            }
            ingest.reconcile_manifest(&paths);
        }
        ingest.reconcile_empty();
        ingest.reconcile_times(members, files.len(), plan.looked_at, &listing.name)?;
        let Ingest {
            store,
            diagnostics,
            time_sources,
            scrape_files,
            api_answers,
            bytes_read,
            manifest,
            ..
        } = ingest;
        Ok(Loaded {
            store,
            diagnostics,
            manifest: manifest.map(|m| Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone())),
            container: listing.kind,
            files: files.len(),
            scrape_files,
            bytes_read,
            time_sources,
            api_answers,
            facts,
        })
    }
}

/// One collector file into the facts; one it cannot read is a warning.
fn read_fact(
    facts: &mut Facts,
    diagnostics: &mut Vec<Diagnostic>,
    path: &str,
    fact: &FactFile,
    bytes: Result<&[u8], String>,
) {
    if let Err(why) = bytes.and_then(|b| facts.read(fact, b)) {
        diagnostics.push(diag(
            path,
            None,
            Severity::Warning,
            "bad_fact",
            format!("the collector's record of the server {why}; the report goes without it"),
        ));
    }
}

/// A [`Loader`] once planned.
struct Planned {
    plan: Plan,
    /// Member index → its place in the plan.
    plan_of: BTreeMap<usize, usize>,
    ingest: Ingest,
    /// The collector's facts, as read.
    facts: Facts,
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
