//! Loading, stage 2: read each planned file into the store. The contents
//! decide the rest: a Prometheus API answer, a GPU dump converted to
//! dcgm-exporter names, or exposition text; a file with no time in its
//! name takes its samples' timestamps, else its modification time.

use std::borrow::Cow;
use std::collections::BTreeMap;

use vllm_lens_store::{ScrapeRecord, Store, TargetId, TargetKind};

use crate::container::Member;
use crate::gpu_dumps;
use crate::load::{Diagnostic, Severity, TimeSource, diag, kind_from_str};
use crate::manifest::Manifest;
use crate::plan::Planned;
use crate::sniff::{Content, exposition_kind, sniff};

/// What reading the files built and noticed.
pub(crate) struct Ingest {
    pub store: Store,
    /// Shared with the reconciling stage, which reads it while it adds
    /// targets.
    pub manifest: Option<std::sync::Arc<Manifest>>,
    pub delay_ms: i64,
    /// Target name → (id, kind).
    pub targets: BTreeMap<String, (TargetId, TargetKind)>,
    /// Files per target, so each series reserves its points once.
    pub per_target: BTreeMap<String, usize>,
    /// Where each target's times came from.
    pub time_sources: BTreeMap<String, Vec<TimeSource>>,
    /// Files with no time at all.
    pub untimed: Vec<String>,
    /// Files timed by modification time, by (target, time).
    pub mtime_times: BTreeMap<(String, i64), Vec<String>>,
    pub scrape_files: usize,
    pub api_answers: usize,
    /// Empty files with a time: a scrape that returned nothing (a plain
    /// `curl > file` of a server that was down), by (target, time, path).
    pub empty: Vec<(Option<String>, i64, String)>,
    pub bytes_read: u64,
    pub diagnostics: Vec<Diagnostic>,
}

impl Ingest {
    /// Reads one planned file (`bytes`, or why it could not be read).
    pub fn file(&mut self, plan: &Planned, member: &Member, bytes: Result<&[u8], String>) {
        let path = plan.path.as_str();
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => {
                self.note(
                    path,
                    None,
                    Severity::Error,
                    "unreadable_member",
                    format!("{e}; file skipped"),
                );
                return;
            }
        };
        self.bytes_read += bytes.len() as u64;
        let content = sniff(bytes);
        if let Content::Binary(what) = content {
            self.note(
                path,
                None,
                Severity::Info,
                "not_a_scrape",
                format!("skipped: {what}, not a scrape"),
            );
            return;
        }
        let text = decode_text(path, bytes, &mut self.diagnostics);
        let mut time = plan.place.time;
        let (text, kind) = match content {
            Content::PromApiJson => return self.prom_api(path, &text),
            Content::Exposition => {
                if text.trim().is_empty()
                    && let Some((t, _)) = time
                {
                    self.empty
                        .push((plan.place.target.clone(), t, path.to_string()));
                    return;
                }
                if !looks_like_scrape(&text) {
                    self.note(
                        path,
                        None,
                        Severity::Info,
                        "not_a_scrape",
                        "skipped: no metric line in this file".into(),
                    );
                    return;
                }
                let kind = exposition_kind(&text);
                (text, kind)
            }
            dump => {
                if time.is_none()
                    && !dump_has_times(dump, &text)
                    && let Some(m) = member.mtime_ms
                {
                    time = Some((m, TimeSource::Mtime));
                }
                let converted = gpu_dumps::convert(dump, &text, time.map(|t| t.0), self.delay_ms);
                for (line, message) in converted.diagnostics {
                    self.note(path, Some(line), Severity::Error, "bad_row", message);
                }
                for note in converted.notes {
                    self.note(path, None, Severity::Warning, "gpu_dump", note);
                }
                (Cow::Owned(converted.text), TargetKind::Dcgm)
            }
        };
        self.exposition(plan, member, &text, kind, time);
    }

    fn note(
        &mut self,
        file: &str,
        line: Option<u32>,
        severity: Severity,
        code: &str,
        message: String,
    ) {
        self.diagnostics
            .push(diag(file, line, severity, code, message));
    }

    /// A Prometheus HTTP API answer (`query_range` JSON): one group of
    /// series per target, every sample with its own timestamp.
    fn prom_api(&mut self, path: &str, text: &str) {
        let groups = match crate::prom_api::convert(text) {
            Ok(groups) => groups,
            Err(message) => {
                self.note(
                    path,
                    None,
                    Severity::Error,
                    "bad_prometheus_json",
                    format!("{message}; file skipped"),
                );
                return;
            }
        };
        for g in groups {
            let kind = match g.stats.first() {
                Some((_, stats)) if g.text.is_empty() => exposition_kind(stats),
                _ => exposition_kind(&g.text),
            };
            let (id, name) = self.api_target(&g.target, kind);
            let mut ingested = self.store.ingest(id, &g.text, None);
            for (stat, text) in &g.stats {
                let s = self.store.ingest_window_stats(id, text, *stat);
                ingested.samples += s.samples;
                ingested.diagnostics.extend(s.diagnostics);
            }
            for d in &ingested.diagnostics {
                self.note(
                    path,
                    None,
                    Severity::Error,
                    d.kind.code(),
                    d.kind.to_string(),
                );
            }
            self.time_source(&name, TimeSource::Samples);
            if let Some((_, last)) = ingested.time_range {
                self.store.record_scrape(
                    id,
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
        self.scrape_files += 1;
        self.api_answers += 1;
    }

    /// Exposition text (a scrape, or a GPU dump converted to one).
    fn exposition(
        &mut self,
        plan: &Planned,
        member: &Member,
        text: &str,
        kind: TargetKind,
        time: Option<(i64, TimeSource)>,
    ) {
        let path = plan.path.as_str();
        let (mut time, mut source) = (time.map(|t| t.0), time.map(|t| t.1));
        let manifest_kind = plan
            .place
            .target
            .as_deref()
            .filter(|_| plan.place.manifest_target)
            .and_then(|t| self.manifest.as_deref().and_then(|m| m.target(t)))
            .and_then(|t| t.kind.as_deref())
            .and_then(kind_from_str);
        let kind = manifest_kind.unwrap_or(kind);
        let base_name = plan
            .place
            .target
            .clone()
            .unwrap_or_else(|| kind.as_str().to_string());
        let (id, name) = self.target(&base_name, kind, plan.place.manifest_target);
        if let Some(&n) = self.per_target.get(&name) {
            self.store.expect_points(id, n);
        }
        let first = self.store.ingest(id, text, time);
        let ingested = if first.untimed > 0 && time.is_none() {
            match member.mtime_ms {
                Some(m) => {
                    source = Some(TimeSource::Mtime);
                    time = Some(m);
                    // Only the untimed samples were skipped; store them now.
                    self.store.ingest_untimed(id, text, m, first)
                }
                None => {
                    self.untimed.push(path.to_string());
                    first
                }
            }
        } else {
            first
        };
        if source.is_none() && ingested.timestamped > 0 {
            source = Some(TimeSource::Samples);
        }
        if source == Some(TimeSource::Mtime) {
            self.mtime_times
                .entry((name.clone(), time.unwrap_or(0)))
                .or_default()
                .push(path.to_string());
        }
        for d in &ingested.diagnostics {
            self.note(
                path,
                Some(d.line),
                Severity::Error,
                d.kind.code(),
                d.kind.to_string(),
            );
        }
        if let Some(s) = source {
            self.time_source(&name, s);
        }
        if let Some(t) = time.or(ingested.time_range.map(|r| r.1)) {
            self.store.record_scrape(
                id,
                ScrapeRecord {
                    time_ms: t,
                    file: path.to_string(),
                    up: true,
                    error: None,
                    samples: ingested.samples,
                },
            );
        }
        self.scrape_files += 1;
    }

    fn time_source(&mut self, target: &str, source: TimeSource) {
        let sources = self.time_sources.entry(target.to_string()).or_default();
        if !sources.contains(&source) {
            sources.push(source);
        }
    }

    /// The target of an API answer's `instance`. One instance's families
    /// come in separate answers (vLLM's, then `http_*` or `process_*`,
    /// which alone look like no known kind): they are one target, whose
    /// kind is the one its vLLM or DCGM series show.
    fn api_target(&mut self, name: &str, kind: TargetKind) -> (TargetId, String) {
        if let Some(&(id, existing)) = self.targets.get(name) {
            if existing == TargetKind::Other && kind != TargetKind::Other {
                self.store.set_target_kind(id, kind);
                self.targets.insert(name.to_string(), (id, kind));
                return (id, name.to_string());
            }
            if kind == TargetKind::Other {
                return (id, name.to_string());
            }
        }
        self.target(name, kind, false)
    }

    /// The target for `name` and `kind`, created on first use. A name
    /// already taken by a target of another kind (a folder holding both
    /// vLLM and DCGM scrapes) gets the kind appended.
    pub fn target(
        &mut self,
        name: &str,
        kind: TargetKind,
        from_manifest: bool,
    ) -> (TargetId, String) {
        let mut name = name.to_string();
        if let Some(&(id, existing)) = self.targets.get(&name) {
            if existing == kind || from_manifest {
                return (id, name);
            }
            name = format!("{name}-{}", kind.as_str());
            if let Some(&(id, _)) = self.targets.get(&name) {
                return (id, name);
            }
        }
        let mut labels: Vec<(String, String)> = Vec::new();
        if let Some(t) = self.manifest.as_deref().and_then(|m| m.target(&name)) {
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
        let id = self.store.add_target(&name, kind, &refs);
        self.targets.insert(name.clone(), (id, kind));
        (id, name)
    }
}

/// True when some line parses as a metric line or metadata.
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
fn decode_text<'b>(path: &str, bytes: &'b [u8], diagnostics: &mut Vec<Diagnostic>) -> Cow<'b, str> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(e) => {
            let valid = e.valid_up_to();
            let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            diagnostics.push(diag(
                path,
                Some(line),
                Severity::Warning,
                "invalid_utf8",
                "bytes that are not UTF-8 were replaced by U+FFFD".into(),
            ));
            Cow::Owned(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}
