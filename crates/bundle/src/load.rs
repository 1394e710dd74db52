//! Reading a whole bundle: list the container, read the manifest, place each
//! scrape in time and under a target, parse it into the store.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use vllm_lens_store::{ScrapeRecord, Store, TargetId, TargetKind};

use crate::container::{Container, ContainerKind, Input, Member};
use crate::error::{Error, ErrorKind};
use crate::gpu_dumps;
use crate::limits::Limits;
use crate::manifest::Manifest;
use crate::naming::{find_time, remainder, stem};
use crate::sniff::{Content, exposition_kind, sniff};

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
}

struct Plan {
    index: usize,
    path: String,
    time: Option<(i64, TimeSource)>,
    target: Option<String>,
    manifest_target: bool,
}

/// Files `collect.sh` keeps beside the scrapes (vLLM's `/version` and
/// `/v1/models` answers), read into the manifest at capture time.
const COLLECTOR_FACTS: [&str; 2] = ["meta/version.json", "meta/models.json"];

const SKIP_EXTENSIONS: [&str; 16] = [
    "png", "jpg", "jpeg", "gif", "svg", "pdf", "md", "html", "htm", "yaml", "yml", "sh", "py",
    "zip", "tgz", "tar",
];

/// Reads a bundle. Fails only when nothing in it can be used; every smaller
/// problem becomes a [`Diagnostic`] and the rest is read.
pub fn load(input: Input<'_>, options: &Options) -> Result<Loaded, Error> {
    let mut container = Container::open(input, options.limits)?;
    let bundle_name = container.name.clone();
    let files: Vec<usize> = (0..container.members.len())
        .filter(|&i| !container.members[i].dir)
        .collect();
    let root = common_root(files.iter().map(|&i| container.members[i].path.as_str()));
    let rel = |m: &Member| m.path[root.len()..].to_string();

    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut manifest: Option<Manifest> = None;
    if let Some(&mi) = files
        .iter()
        .find(|&&i| rel(&container.members[i]) == "manifest.json")
    {
        let path = container.members[mi].path.clone();
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
    }
    let delay_ms = manifest
        .as_ref()
        .and_then(|m| m.capture.as_ref())
        .and_then(|c| {
            c.dmon_delay_ms
                .or(c.interval_s.map(|s| (s * 1000.0) as i64))
        })
        .filter(|&d| d > 0)
        .unwrap_or(options.dmon_delay_ms);

    // Plan every member: its time and target from the manifest or its name.
    let mut plans: Vec<Plan> = Vec::new();
    let file_index = manifest.as_ref().map(Manifest::file_index);
    let mut looked_at: Vec<String> = Vec::new();
    for &i in &files {
        let member = &container.members[i];
        let path = member.path.clone();
        let relative = rel(member);
        if relative == "manifest.json" {
            continue;
        }
        if looked_at.len() < 5 {
            looked_at.push(path.clone());
        }
        let file_name = relative.rsplit('/').next().unwrap_or(&relative);
        if file_name.starts_with('.') || relative.starts_with("__MACOSX/") {
            continue;
        }
        // collect.sh's copies of vLLM's /version and /v1/models: facts the
        // manifest already carries, not scrapes.
        if COLLECTOR_FACTS.contains(&relative.as_str()) {
            continue;
        }
        let ext = file_name
            .strip_suffix(".gz")
            .unwrap_or(file_name)
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase());
        if let Some(ext) = ext.filter(|e| SKIP_EXTENSIONS.contains(&e.as_str())) {
            diagnostics.push(diag(
                &path,
                None,
                Severity::Info,
                "not_a_scrape",
                format!("skipped: a .{ext} file is not a scrape"),
            ));
            continue;
        }
        let entry = file_index
            .as_ref()
            .and_then(|ix| ix.get(&relative).or_else(|| ix.get(&path)));
        let file_stem = stem(file_name);
        let parent = relative
            .rsplit_once('/')
            .map(|(dir, _)| dir.rsplit('/').next().unwrap_or(dir));
        let name_time = find_time(file_stem);
        let parent_time = if name_time.is_none() {
            parent.and_then(find_time)
        } else {
            None
        };
        let time = entry
            .and_then(|e| e.time_ms)
            .map(|t| (t, TimeSource::Manifest))
            .or(name_time.as_ref().map(|t| (t.ms, TimeSource::Name)))
            .or(parent_time.as_ref().map(|t| (t.ms, TimeSource::Name)));
        if name_time
            .as_ref()
            .or(parent_time.as_ref())
            .is_some_and(|t| !t.zoned)
            && entry.is_none()
        {
            diagnostics.push(diag(
                &path,
                None,
                Severity::Warning,
                "time_without_zone",
                "the time in the name has no zone; read as UTC".into(),
            ));
        }
        let name_rest = match &name_time {
            Some(t) => remainder(file_stem, &t.span),
            None => String::new(),
        };
        let manifest_target = entry.and_then(|e| e.target.clone());
        // A time in the file name: what is left of the name, else the
        // folder, else the kind. A time in the folder name: the file name.
        // No time in any name: the folder, else the file name.
        let target = manifest_target.clone().or_else(|| {
            if name_time.is_some() {
                if name_rest.is_empty() {
                    parent.map(str::to_string)
                } else {
                    Some(name_rest)
                }
            } else if parent_time.is_some() {
                Some(file_stem.to_string())
            } else {
                // Files without any time: their folder, even when it is the
                // one folder everything sits in (`vllm-0/scrape-a.prom`).
                let wrapper = root
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .filter(|w| !w.is_empty());
                parent
                    .or(wrapper)
                    .map(str::to_string)
                    .or_else(|| Some(file_stem.to_string()))
            }
        });
        plans.push(Plan {
            index: i,
            path,
            time,
            target,
            manifest_target: manifest_target.is_some(),
        });
    }
    plans.sort_by(|a, b| {
        (a.target.as_deref(), a.time.map(|t| t.0), &a.path).cmp(&(
            b.target.as_deref(),
            b.time.map(|t| t.0),
            &b.path,
        ))
    });
    let order: Vec<usize> = plans.iter().map(|p| p.index).collect();
    // Scrapes per target, so each series reserves its points once.
    let mut per_target: BTreeMap<String, usize> = BTreeMap::new();
    for p in &plans {
        if let Some(t) = &p.target {
            *per_target.entry(t.clone()).or_default() += 1;
        }
    }
    let plan_of: BTreeMap<usize, usize> = plans
        .iter()
        .enumerate()
        .map(|(k, p)| (p.index, k))
        .collect();

    let mut store = Store::with_limits(vllm_lens_store::Limits {
        max_series: options.limits.max_series,
    });
    let mut targets: BTreeMap<String, (TargetId, TargetKind)> = BTreeMap::new();
    let mut time_sources: BTreeMap<String, Vec<TimeSource>> = BTreeMap::new();
    let mut untimed: Vec<String> = Vec::new();
    let mut mtime_times: BTreeMap<(String, i64), Vec<String>> = BTreeMap::new();
    let mut scrape_files = 0usize;
    let mut bytes_read = 0u64;
    let members = container.members.clone();

    container.read_members(&order, &mut |index, bytes| {
        let Some(&k) = plan_of.get(&index) else {
            return Ok(());
        };
        let plan = &plans[k];
        let path = plan.path.as_str();
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => {
                diagnostics.push(diag(
                    path,
                    None,
                    Severity::Error,
                    "unreadable_member",
                    format!("{e}; file skipped"),
                ));
                return Ok(());
            }
        };
        bytes_read += bytes.len() as u64;
        let content = sniff(&bytes);
        if let Content::Binary(what) = content {
            diagnostics.push(diag(
                path,
                None,
                Severity::Info,
                "not_a_scrape",
                format!("skipped: {what}, not a scrape"),
            ));
            return Ok(());
        }
        let text = decode_text(path, bytes, &mut diagnostics);
        let member = &members[index];
        let mtime = member.mtime_ms;
        let (mut time, mut source) = match plan.time {
            Some((t, s)) => (Some(t), Some(s)),
            None => (None, None),
        };
        if content == Content::PromApiJson {
            match crate::prom_api::convert(&text) {
                Err(message) => diagnostics.push(diag(
                    path,
                    None,
                    Severity::Error,
                    "bad_prometheus_json",
                    format!("{message}; file skipped"),
                )),
                Ok(groups) => {
                    for g in groups {
                        let kind = exposition_kind(&g.text);
                        let target = target_for(
                            &mut store,
                            &mut targets,
                            manifest.as_ref(),
                            &g.target,
                            kind,
                            false,
                        );
                        let ingested = store.ingest(target.0, &g.text, None);
                        for d in &ingested.diagnostics {
                            diagnostics.push(diag(
                                path,
                                None,
                                Severity::Error,
                                d.kind.code(),
                                d.kind.to_string(),
                            ));
                        }
                        let sources = time_sources.entry(target.1.clone()).or_default();
                        if !sources.contains(&TimeSource::Samples) {
                            sources.push(TimeSource::Samples);
                        }
                        if let Some((_, last)) = ingested.time_range {
                            store.record_scrape(
                                target.0,
                                ScrapeRecord {
                                    time_ms: last,
                                    file: path.to_string(),
                                    up: true,
                                    error: None,
                                    samples: ingested.samples,
                                },
                            );
                        }
                    }
                    scrape_files += 1;
                }
            }
            return Ok(());
        }
        let (text, kind) = match content {
            Content::Exposition | Content::PromApiJson => {
                if !looks_like_scrape(&text) {
                    diagnostics.push(diag(
                        path,
                        None,
                        Severity::Info,
                        "not_a_scrape",
                        "skipped: no metric line in this file".into(),
                    ));
                    return Ok(());
                }
                let kind = exposition_kind(&text);
                (text, kind)
            }
            dump => {
                if time.is_none()
                    && !dump_has_times(dump, &text)
                    && let Some(m) = mtime
                {
                    time = Some(m);
                    source = Some(TimeSource::Mtime);
                }
                let converted = gpu_dumps::convert(dump, &text, time, delay_ms);
                for (line, message) in converted.diagnostics {
                    diagnostics.push(diag(path, Some(line), Severity::Error, "bad_row", message));
                }
                for note in converted.notes {
                    diagnostics.push(diag(path, None, Severity::Warning, "gpu_dump", note));
                }
                (converted.text, TargetKind::Dcgm)
            }
        };
        let manifest_kind = plan
            .target
            .as_deref()
            .filter(|_| plan.manifest_target)
            .and_then(|t| manifest.as_ref().and_then(|m| m.target(t)))
            .and_then(|t| t.kind.as_deref())
            .and_then(kind_from_str);
        let kind = manifest_kind.unwrap_or(kind);
        let base_name = plan
            .target
            .clone()
            .unwrap_or_else(|| kind.as_str().to_string());
        let target = target_for(
            &mut store,
            &mut targets,
            manifest.as_ref(),
            &base_name,
            kind,
            plan.manifest_target,
        );
        if let Some(&n) = per_target.get(&target.1) {
            store.expect_points(target.0, n);
        }
        let ingested_first = store.ingest(target.0, &text, time);
        let ingested = if ingested_first.untimed > 0 && time.is_none() {
            match mtime {
                Some(m) => {
                    source = Some(TimeSource::Mtime);
                    time = Some(m);
                    // Only the untimed samples were skipped; store them now.
                    store.ingest_untimed(target.0, &text, m, ingested_first)
                }
                None => {
                    untimed.push(path.to_string());
                    ingested_first
                }
            }
        } else {
            ingested_first
        };
        if source.is_none() && ingested.timestamped > 0 {
            source = Some(TimeSource::Samples);
        }
        if source == Some(TimeSource::Mtime) {
            mtime_times
                .entry((target.1.clone(), time.unwrap_or(0)))
                .or_default()
                .push(path.to_string());
        }
        for d in &ingested.diagnostics {
            diagnostics.push(diag(
                path,
                Some(d.line),
                Severity::Error,
                d.kind.code(),
                d.kind.to_string(),
            ));
        }
        if let Some(s) = source {
            let sources = time_sources.entry(target.1.clone()).or_default();
            if !sources.contains(&s) {
                sources.push(s);
            }
        }
        let record_time = time.or(ingested.time_range.map(|r| r.1));
        if let Some(t) = record_time {
            store.record_scrape(
                target.0,
                ScrapeRecord {
                    time_ms: t,
                    file: path.to_string(),
                    up: true,
                    error: None,
                    samples: ingested.samples,
                },
            );
        }
        scrape_files += 1;
        Ok(())
    })?;

    if let Some(m) = &manifest {
        for scrape in m.scrapes.iter().filter(|s| s.up == Some(0)) {
            let name = scrape.target.clone().unwrap_or_else(|| "unknown".into());
            let kind = m
                .target(&name)
                .and_then(|t| t.kind.as_deref())
                .and_then(kind_from_str)
                .unwrap_or(TargetKind::Other);
            let target = target_for(&mut store, &mut targets, Some(m), &name, kind, true);
            match scrape.time_ms {
                Some(t) => store.record_scrape(
                    target.0,
                    ScrapeRecord {
                        time_ms: t,
                        file: scrape.file.clone().unwrap_or_default(),
                        up: false,
                        error: scrape.error.clone(),
                        samples: 0,
                    },
                ),
                None => diagnostics.push(diag(
                    "manifest.json",
                    None,
                    Severity::Warning,
                    "manifest_scrape",
                    format!("a failed scrape of `{name}` has no time_ms; ignored"),
                )),
            }
        }
        // Every member's path, as listed and relative to the bundle's folder
        // (a set: a day's manifest lists tens of thousands of files).
        let mut paths: std::collections::HashSet<String> = std::collections::HashSet::new();
        for &i in &files {
            let member = &members[i];
            paths.insert(rel(member).to_string());
            paths.insert(member.path.clone());
        }
        for scrape in m.scrapes.iter().filter(|s| s.up != Some(0)) {
            if let Some(file) = &scrape.file {
                let present =
                    paths.contains(file.trim_start_matches("./")) || paths.contains(file.as_str());
                if !present {
                    diagnostics.push(diag(
                        "manifest.json",
                        None,
                        Severity::Warning,
                        "missing_file",
                        format!("lists `{file}`, which is not in the bundle"),
                    ));
                }
            }
        }
    }

    // Files that cannot be placed in time: fatal only when nothing else can
    // be; otherwise each is skipped with a message and the rest analysed.
    let clashing: Vec<String> = mtime_times
        .values()
        .filter(|v| v.len() > 1)
        .flatten()
        .cloned()
        .collect();
    let placed = scrape_files.saturating_sub(untimed.len() + clashing.len());
    if !untimed.is_empty() && placed == 0 {
        let n = untimed.len();
        untimed.truncate(5);
        return Err(Error::new(ErrorKind::Unordered {
            files: untimed,
            reason: format!(
                "{n} file(s) have no capture time in their name, no timestamps inside and no modification time"
            ),
        }));
    }
    if !clashing.is_empty() && placed == 0 {
        return Err(Error::new(ErrorKind::Unordered {
            files: clashing.into_iter().take(5).collect(),
            reason: "the files carry no time in their names and share modification times".into(),
        }));
    }
    for path in &untimed {
        diagnostics.push(diag(
            path,
            None,
            Severity::Error,
            "no_time",
            "no capture time in the name, no timestamps inside and no modification time; file skipped".into(),
        ));
    }
    for path in &clashing {
        diagnostics.push(diag(
            path,
            None,
            Severity::Warning,
            "shared_mtime",
            "no capture time in the name, and its modification time is shared with other files of the same target: read as one scrape, the last file's values kept".into(),
        ));
    }
    if scrape_files == 0 {
        let unreadable: Vec<String> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error && d.line.is_none())
            .take(3)
            .map(|d| d.to_string())
            .collect();
        return Err(Error::new(ErrorKind::NoScrapes {
            looked_at,
            files: files.len(),
            unreadable,
        }));
    }
    for (target, sources) in &time_sources {
        if sources.contains(&TimeSource::Mtime) {
            let local = members.iter().any(|m| m.mtime_local);
            diagnostics.push(diag(target, None, Severity::Warning, "time_from_mtime", format!(
                "scrape times of `{target}` come from file modification times{}; name files by capture time for exact rates",
                if local { " (zip times are the zipping machine's local time, 2 s resolution)" } else { "" }
            )));
        }
    }
    store.finish();
    drop_outlying_times(&mut store, &mut diagnostics, &bundle_name);
    for warning in store.warnings() {
        diagnostics.push(diag(
            &bundle_name,
            None,
            Severity::Warning,
            "store",
            warning.to_string(),
        ));
    }
    Ok(Loaded {
        store,
        diagnostics,
        manifest,
        container: container.kind,
        files: files.len(),
        scrape_files,
        bytes_read,
        time_sources,
    })
}

fn diag(
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

fn kind_from_str(s: &str) -> Option<TargetKind> {
    match s {
        "vllm" => Some(TargetKind::Vllm),
        "dcgm" => Some(TargetKind::Dcgm),
        "other" => Some(TargetKind::Other),
        _ => None,
    }
}

/// The target for `name` and `kind`, created on first use. A name already
/// taken by a target of another kind (a folder holding both vLLM and DCGM
/// scrapes) gets the kind appended.
fn target_for(
    store: &mut Store,
    targets: &mut BTreeMap<String, (TargetId, TargetKind)>,
    manifest: Option<&Manifest>,
    name: &str,
    kind: TargetKind,
    from_manifest: bool,
) -> (TargetId, String) {
    let mut name = name.to_string();
    if let Some(&(id, existing)) = targets.get(&name) {
        if existing == kind || from_manifest {
            return (id, name);
        }
        name = format!("{name}-{}", kind.as_str());
        if let Some(&(id, _)) = targets.get(&name) {
            return (id, name);
        }
    }
    let mut labels: Vec<(String, String)> = Vec::new();
    if let Some(t) = manifest.and_then(|m| m.target(&name)) {
        for (k, v) in [
            ("job", &t.job),
            ("instance", &t.instance),
            ("pod", &t.pod),
            ("namespace", &t.namespace),
            ("node", &t.node),
        ] {
            if let Some(v) = v {
                labels.push((k.to_string(), v.clone()));
            }
        }
        for (k, v) in &t.labels {
            labels.push((k.clone(), v.clone()));
        }
    }
    let refs: Vec<(&str, &str)> = labels
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let id = store.add_target(&name, kind, &refs);
    targets.insert(name.clone(), (id, kind));
    (id, name)
}

/// The longest folder prefix (ending in `/`) shared by every path, when
/// every path has at least one more component below it.
fn common_root<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    let mut root: Option<String> = None;
    for path in paths {
        let dir = match path.rfind('/') {
            Some(i) => &path[..=i],
            None => return String::new(),
        };
        root = Some(match root {
            None => dir.to_string(),
            Some(r) => {
                let mut common = 0;
                for (i, (a, b)) in r.bytes().zip(dir.bytes()).enumerate() {
                    if a != b {
                        break;
                    }
                    if a == b'/' {
                        common = i + 1;
                    }
                }
                r[..common].to_string()
            }
        });
    }
    root.unwrap_or_default()
}

/// True when some line parses as a metric line or metadata.
/// Scrape times further than this from the rest of the capture are
/// outliers (a file name mangled, a clock unset, a stray timestamp).
const OUTLIER_GAP_MS: i64 = 24 * 3_600_000;

/// The longest capture analysed (8 days): memory and the report grow with
/// the number of windows, and a crafted bundle could chain times a day
/// apart for years.
const MAX_SPAN_MS: i64 = 8 * 24 * 3_600_000;

/// The capture is the largest run of scrape times without a gap over
/// [`OUTLIER_GAP_MS`], cut to its last [`MAX_SPAN_MS`]; anything outside is
/// dropped, with a warning that names the files. One scrape dated 1970 or
/// 2099 would otherwise stretch the report over decades of empty windows.
fn drop_outlying_times(store: &mut Store, diagnostics: &mut Vec<Diagnostic>, bundle: &str) {
    use vllm_lens_store::time::{format_duration, format_rfc3339 as at};
    let mut times: Vec<i64> = store
        .targets()
        .iter()
        .flat_map(|t| t.sample_times().iter().copied())
        .collect();
    times.sort_unstable();
    times.dedup();
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    for i in 1..=times.len() {
        if i == times.len() || times[i] - times[i - 1] > OUTLIER_GAP_MS {
            if best.is_none_or(|(a, b)| i - start >= b - a) {
                best = Some((start, i));
            }
            start = i;
        }
    }
    let Some((a, b)) = best else { return };
    let (from, to) = (times[a], times[b - 1]);
    if a > 0 || b < times.len() {
        let why = format!(
            "lie more than a day away from the rest of the capture ({} to {})",
            at(from),
            at(to)
        );
        retain_and_report(store, diagnostics, bundle, from, to, &why);
    }
    if to - from > MAX_SPAN_MS {
        let cut = to - MAX_SPAN_MS;
        let why = format!(
            "are earlier than the last {} of a capture that spans {} ({} to {}); only the last {} are analysed",
            format_duration(MAX_SPAN_MS),
            format_duration(to - from),
            at(from),
            at(to),
            format_duration(MAX_SPAN_MS)
        );
        retain_and_report(store, diagnostics, bundle, cut, to, &why);
    }
}

fn retain_and_report(
    store: &mut Store,
    diagnostics: &mut Vec<Diagnostic>,
    bundle: &str,
    from: i64,
    to: i64,
    why: &str,
) {
    use vllm_lens_store::time::format_rfc3339 as at;
    let points_before = store.points();
    let dropped = store.retain_times(from, to);
    let points_dropped = points_before - store.points();
    let mut by_target: BTreeMap<String, Vec<vllm_lens_store::ScrapeRecord>> = BTreeMap::new();
    for (target, record) in dropped {
        by_target.entry(target).or_default().push(record);
    }
    for (target, records) in &by_target {
        let first = records.iter().map(|r| r.time_ms).min().unwrap_or(from);
        let last = records.iter().map(|r| r.time_ms).max().unwrap_or(to);
        let files: Vec<&str> = records.iter().map(|r| r.file.as_str()).take(3).collect();
        let more = records.len().saturating_sub(files.len());
        diagnostics.push(diag(
            files.first().copied().unwrap_or(target.as_str()),
            None,
            Severity::Warning,
            "outlying_time",
            format!(
                "{} scrape(s) of `{target}` dated {}{} {why}; not analysed: {}{}",
                records.len(),
                at(first),
                if last != first {
                    format!(" to {}", at(last))
                } else {
                    String::new()
                },
                files.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
            ),
        ));
    }
    let of_scrapes: u64 = by_target
        .values()
        .flatten()
        .map(|r| u64::from(r.samples))
        .sum();
    let points_dropped = points_dropped.saturating_sub(of_scrapes);
    if points_dropped > 0 {
        diagnostics.push(diag(
            bundle,
            None,
            Severity::Warning,
            "outlying_time",
            format!("{points_dropped} sample(s) carry timestamps that {why}; not analysed"),
        ));
    }
}

fn looks_like_scrape(text: &str) -> bool {
    vllm_lens_expo::Parser::new(text).next().is_some()
}

fn dump_has_times(kind: Content, text: &str) -> bool {
    match kind {
        Content::NvidiaSmiCsv => text.lines().next().is_some_and(|h| h.contains("timestamp")),
        Content::NvidiaSmiDmon => text.contains("#Date") || text.contains("# Date"),
        _ => false,
    }
}

/// The member as text: a BOM dropped, invalid UTF-8 replaced (reported with
/// the line of the first bad byte).
fn decode_text(path: &str, mut bytes: Vec<u8>, diagnostics: &mut Vec<Diagnostic>) -> String {
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            diagnostics.push(diag(
                path,
                Some(line),
                Severity::Warning,
                "invalid_utf8",
                "bytes that are not UTF-8 were replaced by U+FFFD".into(),
            ));
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}
