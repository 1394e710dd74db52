//! Loading, stage 3: put what was read together with what the manifest
//! says and say what could not be placed: failed scrapes as down time,
//! listed files that are missing, files with no time, scrape times far
//! from the rest of the capture.

use std::collections::{BTreeMap, HashSet};

use vllm_lens_store::{ScrapeRecord, Store, TargetKind};

use crate::container::Member;
use crate::error::{Error, ErrorKind};
use crate::ingest::Ingest;
use crate::load::{Diagnostic, Severity, TimeSource, diag, kind_from_str};

impl Ingest {
    /// Empty files with a time are scrapes that returned nothing (a plain
    /// `curl URL > file` while the server was down): failed scrapes of their
    /// target, where the target is known (named, or the bundle's only one);
    /// otherwise they are skipped with a note.
    pub fn reconcile_empty(&mut self) {
        for (target, time_ms, path) in std::mem::take(&mut self.empty) {
            let id = match &target {
                Some(name) => self.targets.get(name).map(|t| t.0),
                None if self.targets.len() == 1 => self.targets.values().next().map(|t| t.0),
                None => None,
            };
            match id {
                Some(id) => self.store.record_scrape(
                    id,
                    ScrapeRecord {
                        time_ms,
                        file: path,
                        up: false,
                        error: Some("an empty file: the scrape returned nothing".into()),
                        samples: 0,
                    },
                ),
                None => self.diagnostics.push(diag(
                    &path,
                    None,
                    Severity::Info,
                    "not_a_scrape",
                    "skipped: an empty file, and no target to count it as a failed scrape of"
                        .into(),
                )),
            }
        }
    }

    /// The manifest's failed scrapes become down scrapes of their target;
    /// files it lists that the bundle lacks are named. `paths`: every
    /// member's path, as listed and relative to the bundle's folder.
    pub fn reconcile_manifest(&mut self, paths: &HashSet<String>) {
        let Some(m) = self.manifest.clone() else {
            return;
        };
        for scrape in m.scrapes.iter().filter(|s| s.up == Some(0)) {
            let name = scrape.target.clone().unwrap_or_else(|| "unknown".into());
            let kind = m
                .target(&name)
                .and_then(|t| t.kind.as_deref())
                .and_then(kind_from_str)
                .unwrap_or(TargetKind::Other);
            let (id, _) = self.target(&name, kind, true);
            match scrape.time_ms {
                Some(t) => self.store.record_scrape(
                    id,
                    ScrapeRecord {
                        time_ms: t,
                        file: scrape.file.clone().unwrap_or_default(),
                        up: false,
                        error: scrape.error.clone(),
                        samples: 0,
                    },
                ),
                None => self.diagnostics.push(diag(
                    "manifest.json",
                    None,
                    Severity::Warning,
                    "manifest_scrape",
                    format!("a failed scrape of `{name}` has no time_ms; ignored"),
                )),
            }
        }
        for scrape in m.scrapes.iter().filter(|s| s.up != Some(0)) {
            if let Some(file) = &scrape.file {
                let present =
                    paths.contains(file.trim_start_matches("./")) || paths.contains(file.as_str());
                if !present {
                    self.diagnostics.push(diag(
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

    /// Files that cannot be placed in time: fatal only when nothing else
    /// can be; otherwise each is skipped with a message and the rest
    /// analysed. Then the store is finished and outlying times dropped.
    pub fn reconcile_times(
        &mut self,
        members: &[Member],
        files: usize,
        looked_at: Vec<String>,
        bundle: &str,
    ) -> Result<(), Error> {
        let clashing: Vec<String> = self
            .mtime_times
            .values()
            .filter(|v| v.len() > 1)
            .flatten()
            .cloned()
            .collect();
        let placed = self
            .scrape_files
            .saturating_sub(self.untimed.len() + clashing.len());
        if !self.untimed.is_empty() && placed == 0 {
            let n = self.untimed.len();
            return Err(Error::new(ErrorKind::Unordered {
                files: self.untimed.iter().take(5).cloned().collect(),
                reason: format!(
                    "{n} file(s) have no capture time in their name, no timestamps inside and no modification time"
                ),
            }));
        }
        if !clashing.is_empty() && placed == 0 {
            return Err(Error::new(ErrorKind::Unordered {
                files: clashing.into_iter().take(5).collect(),
                reason: "the files carry no time in their names and share modification times"
                    .into(),
            }));
        }
        for path in &self.untimed {
            self.diagnostics.push(diag(
                path,
                None,
                Severity::Error,
                "no_time",
                "no capture time in the name, no timestamps inside and no modification time; file skipped".into(),
            ));
        }
        for path in &clashing {
            self.diagnostics.push(diag(
                path,
                None,
                Severity::Warning,
                "shared_mtime",
                "no capture time in the name, and its modification time is shared with other files of the same target: read as one scrape, the last file's values kept".into(),
            ));
        }
        if self.scrape_files == 0 {
            let unreadable: Vec<String> = self
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error && d.line.is_none())
                .take(3)
                .map(|d| d.to_string())
                .collect();
            return Err(Error::new(ErrorKind::NoScrapes {
                looked_at,
                files,
                unreadable,
            }));
        }
        for (target, sources) in &self.time_sources {
            if sources.contains(&TimeSource::Mtime) {
                let local = members.iter().any(|m| m.mtime_local);
                self.diagnostics.push(diag(target, None, Severity::Warning, "time_from_mtime", format!(
                    "scrape times of `{target}` come from file modification times{}; name files by capture time for exact rates",
                    if local { " (zip times are the zipping machine's local time, 2 s resolution)" } else { "" }
                )));
            }
        }
        self.store.finish();
        drop_outlying_times(&mut self.store, &mut self.diagnostics, bundle);
        for warning in self.store.warnings() {
            self.diagnostics.push(diag(
                bundle,
                None,
                Severity::Warning,
                "store",
                warning.to_string(),
            ));
        }
        Ok(())
    }
}

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
