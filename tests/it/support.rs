//! Fixture builders shared by the integration tests.

use std::io::Write;
use std::path::{Path, PathBuf};

use vllm_lens_expo::{Event, Parser};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `tests/data`.
pub fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
}

/// A fixture's text.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(data(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// 2026-01-01T00:00:00Z in milliseconds.
pub const T0: i64 = 1_767_225_600_000;

/// The template scrape with every counter-like value (`_total`, `_count`,
/// `_sum`, `_bucket`, except `_created`) multiplied by `1 + step/10`, so
/// that consecutive scrapes grow as a live server's do.
pub fn evolve(template: &str, step: u32) -> String {
    let factor = 1.0 + f64::from(step) / 10.0;
    let mut out = String::with_capacity(template.len() + 256);
    let mut samples = Vec::new();
    for event in Parser::new(template) {
        if let Event::Sample(s) = event {
            samples.push((s.line, s.name.to_string(), s.value));
        }
    }
    let mut next = samples.iter().peekable();
    for (i, line) in template.lines().enumerate() {
        let line_no = i as u32 + 1;
        match next.peek() {
            Some((l, name, value)) if *l == line_no => {
                next.next();
                let grows = ["_total", "_count", "_sum", "_bucket", "ENERGY_CONSUMPTION"]
                    .iter()
                    .any(|s| name.ends_with(s));
                if grows && value.is_finite() {
                    let cut = line.rfind(' ').expect("sample line has a value");
                    out.push_str(&line[..cut]);
                    out.push_str(&format!(" {:?}\n", (value * factor).round()));
                    continue;
                }
                out.push_str(line);
                out.push('\n');
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The capture of the acceptance criteria: 40 vLLM and 40 DCGM scrapes
/// every 15 s, named `vllm/<ms>.prom` and `dcgm/<ms>.prom`.
pub fn capture_80() -> Vec<(String, Vec<u8>)> {
    let vllm = read("scrapes/vllm-v1-0.23-2engines.prom");
    let dcgm = read("scrapes/dcgm-4.x-a10g.prom");
    let mut files = Vec::new();
    for step in 0..40u32 {
        let t = T0 + i64::from(step) * 15_000;
        files.push((format!("vllm/{t}.prom"), evolve(&vllm, step).into_bytes()));
        files.push((format!("dcgm/{t}.prom"), evolve(&dcgm, step).into_bytes()));
    }
    files
}

/// A zip of `files`, stored or deflated; paths under `prefix`.
pub fn zip(files: &[(String, Vec<u8>)], deflate: bool) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut buf);
        let method = if deflate {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .last_modified_time(
                zip::DateTime::from_date_and_time(2026, 1, 1, 0, 0, 0).expect("valid date"),
            );
        for (path, bytes) in files {
            w.start_file(path.as_str(), options).expect("zip entry");
            w.write_all(bytes).expect("zip write");
        }
        w.finish().expect("zip finish");
    }
    buf.into_inner()
}

/// A tar of `files`, gzipped or not.
pub fn tar(files: &[(String, Vec<u8>)], gz: bool) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(1_767_225_600);
        header.set_cksum();
        builder
            .append_data(&mut header, path, bytes.as_slice())
            .expect("tar entry");
    }
    let tar = builder.into_inner().expect("tar finish");
    if gz { gzip(&tar) } else { tar }
}

/// Gzipped bytes.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).expect("gzip");
    enc.finish().expect("gzip finish")
}

/// A fresh empty folder under the target directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = root().join("target/test-tmp").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes `files` under `dir`.
pub fn write_tree(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (path, bytes) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    }
}

/// True when a tool `test` needs is not installed. The test then passes
/// without running, and is listed in `<target>/tmp/skipped-tests.txt`,
/// which `scripts/check.sh` and `scripts/test.sh` print at their end. With
/// `CI` or `VLLM_LENS_REQUIRE_TOOLS` set a missing tool fails the test.
pub fn lacks(test: &str, tools: &[&str]) -> bool {
    let missing = missing(tools);
    if missing.is_empty() {
        return false;
    }
    let required =
        std::env::var_os("CI").is_some() || std::env::var_os("VLLM_LENS_REQUIRE_TOOLS").is_some();
    assert!(
        !required,
        "{test}: {} not installed (scripts/setup.sh installs what the tests need)",
        missing.join(", ")
    );
    let line = format!("{test}: skipped, {} not installed\n", missing.join(", "));
    eprint!("{line}");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
    true
}

/// The tools among `tools` that are not on the PATH.
fn missing<'a>(tools: &[&'a str]) -> Vec<&'a str> {
    tools
        .iter()
        .copied()
        .filter(|t| {
            !std::process::Command::new("sh")
                .args(["-c", &format!("command -v {t}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect()
}

/// True when a tool is missing, with no record (the caller decides).
pub fn lacks_quietly(tools: &[&str]) -> bool {
    !missing(tools).is_empty()
}

/// The ten single-capture samples (the before/after pairs and `day` aside).
pub const SAMPLES: [&str; 10] = [
    "a10g-qwen3b-ramp",
    "saturated",
    "rag-prefill-bound",
    "truncation",
    "errors-aborts",
    "pod-restart",
    "two-replicas-rr",
    "v0-legacy",
    "no-prof-fields",
    "jitter-gaps",
];

/// The report of `samples/<name>.zip` under `settings`, the bundle named as
/// the CLI names it.
pub fn sample_report(
    name: &str,
    settings: &vllm_lens_core::analysis::Settings,
) -> vllm_lens_core::analysis::model::Report {
    vllm_lens_core::analysis::analyse(
        &crate::engine::load_sample(name),
        &vllm_lens_core::analysis::BundleMeta {
            name: format!("{name}.zip"),
            sha256: None,
        },
        settings,
    )
    .expect("report")
}

/// Loads a bundle's bytes as the CLI would a file named `name`.
pub fn load_bytes(name: &str, bytes: &[u8]) -> vllm_lens_core::Loaded {
    vllm_lens_core::load(
        vllm_lens_core::Input::Bytes {
            name,
            bytes,
            mtime_ms: None,
        },
        &vllm_lens_core::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A recommendation id the tool makes: a typo fails here, since the table
/// of rules is the only list of ids.
pub fn rec(id: &'static str) -> vllm_lens_core::analysis::RecId {
    assert!(known_rec(id), "no rule makes `{id}`");
    vllm_lens_core::analysis::RecId::new(id)
}

/// True when a rule of the table makes this id.
pub fn known_rec(id: &str) -> bool {
    vllm_lens_core::analysis::rules::RULES
        .iter()
        .any(|r| r.id.as_str() == id)
}
