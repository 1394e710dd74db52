//! Loading, stage 1: from the paths and the manifest alone, before a byte
//! is read, decide for every file whether it is read, under which target
//! and at which time. Pure rules, tested as a table of paths → decisions.

use crate::facts::FactFile;
use crate::load::{Diagnostic, Severity, TimeSource, diag};
use crate::manifest::{Manifest, ManifestScrape};
use crate::naming::{find_time, remainder, stem};

/// Extensions that are never scrapes.
const SKIP_EXTENSIONS: [&str; 16] = [
    "png", "jpg", "jpeg", "gif", "svg", "pdf", "md", "html", "htm", "yaml", "yml", "sh", "py",
    "zip", "tgz", "tar",
];

/// What the rules decide for one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Not a scrape and not worth a word: the manifest, hidden files,
    /// macOS resource forks, the collector's copies of `/version`.
    Ignore,
    /// Not a scrape, said in a note (the reason).
    Skip(String),
    /// What the collector recorded about the server (`meta/`).
    Fact(FactFile),
    /// Read it.
    Read(Placement),
}

/// Where a file's samples go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Capture time and where it came from; `None` until the contents or
    /// the modification time say.
    pub time: Option<(i64, TimeSource)>,
    /// The target's name; `None` leaves it to the kind of the contents.
    pub target: Option<String>,
    /// True when the manifest named the target.
    pub manifest_target: bool,
    /// A time read from a name without a zone (taken as UTC).
    pub zoneless: bool,
}

/// The rules for one file: `relative` is its path below the bundle's
/// common folder `root` (which ends in `/` or is empty), `entry` the
/// manifest's line for it.
pub(crate) fn decide(relative: &str, root: &str, entry: Option<&ManifestScrape>) -> Decision {
    if relative == "manifest.json" {
        return Decision::Ignore;
    }
    let file_name = relative.rsplit('/').next().unwrap_or(relative);
    if file_name.starts_with('.') || relative.starts_with("__MACOSX/") {
        return Decision::Ignore;
    }
    // collect.sh's copies of vLLM's /version, /v1/models, /server_info
    // and the server's command line: facts, not scrapes.
    if let Some(f) = FactFile::at(relative) {
        return Decision::Fact(f);
    }
    let ext = file_name
        .strip_suffix(".gz")
        .unwrap_or(file_name)
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    if let Some(ext) = ext.filter(|e| SKIP_EXTENSIONS.contains(&e.as_str())) {
        return Decision::Skip(format!("skipped: a .{ext} file is not a scrape"));
    }
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
    let zoneless = entry.is_none()
        && name_time
            .as_ref()
            .or(parent_time.as_ref())
            .is_some_and(|t| !t.zoned);
    // A name that only says what a file is (`metrics-1767225600.txt`, as a
    // plain curl loop names its scrapes) names no target: the folder, or
    // the kind, does.
    let name_rest = match &name_time {
        Some(t) => remainder(file_stem, &t.span),
        None => String::new(),
    };
    let name_rest = if GENERIC_STEMS.contains(&name_rest.to_ascii_lowercase().as_str()) {
        String::new()
    } else {
        name_rest
    };
    let manifest_target = entry.and_then(|e| e.target.clone());
    // A time in the file name: what is left of the name, else the folder,
    // else the kind. A time in the folder name: the file name. No time in
    // any name: the folder, else the file name.
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
            // Files without any time: their folder, even when it is the one
            // folder everything sits in (`vllm-0/scrape-a.prom`).
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
    Decision::Read(Placement {
        time,
        target,
        manifest_target: manifest_target.is_some(),
        zoneless,
    })
}

/// File-name words that say what a file is, not whose it is.
const GENERIC_STEMS: &[&str] = &[
    "metrics",
    "metric",
    "scrape",
    "scrapes",
    "prom",
    "prometheus",
    "snapshot",
    "dump",
    "out",
    "output",
    "data",
    "capture",
];

/// One file to read.
#[derive(Clone, Debug)]
pub(crate) struct Planned {
    /// The member's index in the container.
    pub index: usize,
    /// Its path as listed.
    pub path: String,
    /// Where its samples go.
    pub place: Placement,
}

/// Every file to read, in reading order (target, time, path), and what
/// planning noticed.
pub(crate) struct Plan {
    /// The files to read.
    pub files: Vec<Planned>,
    /// The first paths looked at, for the error when nothing is a scrape.
    pub looked_at: Vec<String>,
    /// The collector's files about the server: member index, path, kind.
    pub facts: Vec<(usize, String, FactFile)>,
}

impl Plan {
    /// Plans `paths` (member index, path as listed), all below `root`.
    pub fn new<'a>(
        paths: impl Iterator<Item = (usize, &'a str)>,
        root: &str,
        manifest: Option<&Manifest>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Plan {
        let index = manifest.map(Manifest::file_index);
        let mut files = Vec::new();
        let mut looked_at = Vec::new();
        let mut facts = Vec::new();
        for (i, path) in paths {
            let relative = &path[root.len()..];
            if relative != "manifest.json" && looked_at.len() < 5 {
                looked_at.push(path.to_string());
            }
            let entry = index
                .as_ref()
                .and_then(|ix| ix.get(relative).or_else(|| ix.get(path)));
            match decide(relative, root, entry) {
                Decision::Ignore => {}
                Decision::Fact(f) => facts.push((i, path.to_string(), f)),
                Decision::Skip(why) => {
                    diagnostics.push(diag(path, None, Severity::Info, "not_a_scrape", why));
                }
                Decision::Read(place) => {
                    if place.zoneless {
                        diagnostics.push(diag(
                            path,
                            None,
                            Severity::Warning,
                            "time_without_zone",
                            "the time in the name has no zone; read as UTC".into(),
                        ));
                    }
                    files.push(Planned {
                        index: i,
                        path: path.to_string(),
                        place,
                    });
                }
            }
        }
        fn key(p: &Planned) -> (Option<&str>, Option<i64>, &str) {
            (
                p.place.target.as_deref(),
                p.place.time.map(|t| t.0),
                &p.path,
            )
        }
        files.sort_by(|a, b| key(a).cmp(&key(b)));
        Plan {
            files,
            looked_at,
            facts,
        }
    }

    /// Files per target, so each series reserves its points once.
    pub fn per_target(&self) -> std::collections::BTreeMap<String, usize> {
        let mut out = std::collections::BTreeMap::new();
        for p in &self.files {
            if let Some(t) = &p.place.target {
                *out.entry(t.clone()).or_default() += 1;
            }
        }
        out
    }
}

/// The longest folder prefix (ending in `/`) shared by every path, when
/// every path has at least one more component below it.
pub(crate) fn common_root<'a>(paths: impl Iterator<Item = &'a str>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A decision as one line: `target @ time (source)`, `skip: why`,
    /// `ignore`; `*` marks a manifest target, `!` a zoneless time.
    fn show(d: &Decision) -> String {
        match d {
            Decision::Ignore => "ignore".into(),
            Decision::Fact(f) => format!("fact: {f:?}"),
            Decision::Skip(why) => format!("skip: {why}"),
            Decision::Read(p) => format!(
                "{}{} @ {}{}",
                p.target.as_deref().unwrap_or("<kind>"),
                if p.manifest_target { "*" } else { "" },
                p.time
                    .map_or("?".into(), |(t, s)| format!("{t} ({})", s.as_str())),
                if p.zoneless { " !" } else { "" },
            ),
        }
    }

    #[test]
    fn paths_decide_targets_and_times() {
        // (path below the root, the root, the decision)
        let cases = [
            ("1767225600000-vllm.prom", "", "vllm @ 1767225600000 (name)"),
            (
                "vllm-0/1767225600000.prom",
                "",
                "vllm-0 @ 1767225600000 (name)",
            ),
            ("1767225600000.prom", "", "<kind> @ 1767225600000 (name)"),
            (
                "1767225600000.prom",
                "capture/dcgm/",
                "<kind> @ 1767225600000 (name)",
            ),
            (
                "2026-01-01T00:00:15Z/vllm-1.prom",
                "",
                "vllm-1 @ 1767225615000 (name)",
            ),
            (
                "vllm-2026-01-01T00:00:30Z.prom.gz",
                "",
                "vllm @ 1767225630000 (name)",
            ),
            (
                "vllm-2026-01-01T00-00-30.prom",
                "",
                "vllm @ 1767225630000 (name) !",
            ),
            // A plain curl loop's names: the folder, else the kind.
            (
                "restart.curl/metrics-1767225600.txt",
                "",
                "restart.curl @ 1767225600000 (name)",
            ),
            (
                "metrics-1767225600.txt",
                "",
                "<kind> @ 1767225600000 (name)",
            ),
            ("scrape-a.prom", "vllm-0/", "vllm-0 @ ?"),
            ("node-a/scrape.txt", "", "node-a @ ?"),
            ("metrics.txt", "", "metrics @ ?"),
            ("manifest.json", "", "ignore"),
            ("meta/version.json", "", "fact: Version"),
            ("meta/server_info.json", "", "fact: ServerInfo"),
            (
                "meta/cmdline/vllm-0.txt",
                "",
                "fact: CommandLine(\"vllm-0\")",
            ),
            (".DS_Store", "", "ignore"),
            ("__MACOSX/._1767225600000-vllm.prom", "", "ignore"),
            ("notes.md", "", "skip: skipped: a .md file is not a scrape"),
            ("plot.PNG", "", "skip: skipped: a .png file is not a scrape"),
            (
                "inner.zip",
                "",
                "skip: skipped: a .zip file is not a scrape",
            ),
        ];
        for (path, root, want) in cases {
            assert_eq!(show(&decide(path, root, None)), want, "{root}{path}");
        }
    }

    #[test]
    fn the_manifest_wins_over_the_name() {
        let entry = ManifestScrape {
            target: Some("engine-a".into()),
            time_ms: Some(1_767_225_645_123),
            file: Some("x/1767225600000-vllm.prom".into()),
            up: None,
            error: None,
            duration_ms: None,
        };
        assert_eq!(
            show(&decide("x/1767225600000-vllm.prom", "", Some(&entry))),
            "engine-a* @ 1767225645123 (manifest)"
        );
        // A manifest line without a time: the name's, and no zone warning.
        let untimed = ManifestScrape {
            time_ms: None,
            ..entry
        };
        assert_eq!(
            show(&decide("vllm-2026-01-01T00-00-30.prom", "", Some(&untimed))),
            "engine-a* @ 1767225630000 (name)"
        );
    }

    #[test]
    fn plans_read_in_target_then_time_order() {
        let paths = [
            "b/1767225615000.prom",
            "a/1767225615000.prom",
            "b/1767225600000.prom",
            "a/1767225600000.prom",
            "a/README.md",
        ];
        let mut diagnostics = Vec::new();
        let plan = Plan::new(
            paths.iter().copied().enumerate(),
            "",
            None,
            &mut diagnostics,
        );
        let order: Vec<usize> = plan.files.iter().map(|p| p.index).collect();
        assert_eq!(order, [3, 1, 2, 0]);
        assert_eq!(plan.per_target().get("a"), Some(&2));
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, "not_a_scrape");
        assert_eq!(plan.looked_at.len(), 5);
    }

    #[test]
    fn the_common_root_is_a_whole_folder() {
        let root = |p: &[&str]| common_root(p.iter().copied());
        assert_eq!(root(&["cap/vllm/1.prom", "cap/dcgm/1.prom"]), "cap/");
        assert_eq!(root(&["cap/vllm-0/1.prom", "cap/vllm-1/1.prom"]), "cap/");
        assert_eq!(root(&["capture/a.prom", "cap/b.prom"]), "");
        assert_eq!(root(&["a.prom", "cap/b.prom"]), "");
        assert_eq!(root(&["cap/x/a.prom"]), "cap/x/");
    }
}
