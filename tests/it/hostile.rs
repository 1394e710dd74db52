//! One test per class of bad input in docs/errors.md. Each builds the input
//! in memory, runs the whole pipeline (load, analyse, render), prints a
//! compact outcome for the snapshot, and checks that the message
//! docs/errors.md documents for the class is the one the user sees.
//! `UPDATE_EXPECT=1` rewrites the snapshots.

use expect_test::{Expect, expect};
use vllm_lens_bundle::{Input, Limits, MemoryFiles, Options, load};
use vllm_lens_core::analysis::{BundleMeta, Report, Settings, analyse};
use vllm_lens_core::render;

use crate::support::{T0, capture_80, evolve, gzip, read, root, tar, zip};

/// What the user gets from an input.
struct Outcome {
    text: String,
    report: Option<Report>,
}

fn outcome(
    name: &str,
    result: Result<vllm_lens_bundle::Loaded, vllm_lens_bundle::Error>,
) -> Outcome {
    let loaded = match result {
        Ok(l) => l,
        Err(e) => {
            return Outcome {
                text: format!("error: {e}\n"),
                report: None,
            };
        }
    };
    let mut text = String::new();
    for d in loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity != vllm_lens_core::Severity::Info)
    {
        text += &format!("{:?}: {d}\n", d.severity);
    }
    let meta = BundleMeta {
        name: name.to_string(),
        sha256: None,
    };
    let report = analyse(&loaded, &meta, &Settings::default()).expect("default settings");
    let html = render::html(&report);
    let md = render::markdown(&report);
    let json = render::json(&report);
    assert!(html.contains("</html>") && !md.is_empty() && json.starts_with('{'));
    let dq = &report.data_quality;
    for n in dq.notes.iter().filter(|n| {
        !matches!(
            n.kind.as_str(),
            "missing_metric" | "known_bug" | "fallback" | "collect_interval" | "diagnostic"
        )
    }) {
        text += &format!("note {}: {}: {}\n", n.kind, n.subject, n.message);
    }
    let s = &report.summary;
    text += &format!(
        "analysed: {} scrape files, {} targets, {} windows; gen tok/s {}, TTFT p95 {}, GPU util {}\n",
        report.bundle.scrape_files,
        report.bundle.targets.len(),
        (s.window_end_ms - s.window_start_ms) / 60_000,
        fig(s.efficiency.gen_tokens_per_sec),
        fig(s.latency.ttft_p95_ms),
        fig(s.gpu.gpu_util_pct),
    );
    Outcome {
        text,
        report: Some(report),
    }
}

fn fig(v: Option<f64>) -> String {
    v.map_or("missing".into(), |v| format!("{v:.1}"))
}

fn run_bytes(name: &str, bytes: &[u8]) -> Outcome {
    run_bytes_with(name, bytes, &Options::default())
}

fn run_bytes_with(name: &str, bytes: &[u8], options: &Options) -> Outcome {
    let input = Input::Bytes {
        name,
        bytes,
        mtime_ms: None,
    };
    outcome(name, load(input, options))
}

fn run_files(files: &[(String, Vec<u8>)]) -> Outcome {
    let mut source = MemoryFiles::default();
    for (path, bytes) in files {
        source.push(path, bytes.clone(), None);
    }
    outcome(
        "files",
        load(Input::Files(&mut source), &Options::default()),
    )
}

/// The message docs/errors.md documents for class `id`: the backquoted text
/// on the `- Message:` line under the heading `` ### `id` ``.
fn documented(id: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/errors.md")).expect("docs/errors.md");
    let heading = format!("### `{id}`");
    let at = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/errors.md has no section {heading}"));
    let section = &doc[at + heading.len()..];
    let section = &section[..section.find("\n### ").unwrap_or(section.len())];
    let line = section
        .lines()
        .find(|l| l.starts_with("- Message:"))
        .unwrap_or_else(|| panic!("{id}: no `- Message:` line"));
    let parts: Vec<String> = line
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(!parts.is_empty(), "{id}: the message is not in backquotes");
    parts
}

#[track_caller]
fn check(id: &str, out: &Outcome, expect: Expect) {
    {
        for part in documented(id) {
            assert!(
                out.text.contains(&part),
                "{id}: docs/errors.md says the user sees `{part}`, but got:\n{}",
                out.text
            );
        }
    }
    expect.assert_eq(&out.text);
}

/// The 80-file capture of 10 minutes as (path, bytes).
fn capture() -> Vec<(String, Vec<u8>)> {
    capture_80()
}

fn vllm_template() -> String {
    read("scrapes/vllm-v1-0.23-2engines.prom")
}

/// 40 vLLM scrapes every 15 s from T0, the `step`-th made by `scrape`.
fn vllm_capture(scrape: impl Fn(u32) -> String) -> Vec<(String, Vec<u8>)> {
    (0..40u32)
        .map(|step| {
            let at = T0 + i64::from(step) * 15_000;
            (format!("vllm/{at}.prom"), scrape(step).into_bytes())
        })
        .collect()
}

#[test]
fn every_class_in_the_doc_has_a_test() {
    let doc = std::fs::read_to_string(root().join("docs/errors.md")).expect("docs/errors.md");
    let me = std::fs::read_to_string(root().join("tests/it/hostile.rs")).expect("this file");
    let mut n = 0;
    for line in doc.lines().filter(|l| l.starts_with("### `")) {
        let id = line.split('`').nth(1).expect("id");
        n += 1;
        assert!(
            me.contains(&format!("\"{id}\",")),
            "docs/errors.md class `{id}` has no test in tests/it/hostile.rs"
        );
    }
    assert!(n >= 18, "{n} classes documented");
}

#[test]
fn not_a_bundle() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0".repeat(50);
    check(
        "not-a-bundle",
        &run_bytes("screenshot.png", &png),
        expect![[r#"
            error: no scrapes found among 1 file(s) (screenshot.png); expected Prometheus text from vLLM or dcgm-exporter, or nvidia-smi/dcgmi output; name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, or add a manifest.json listing each file's time (see docs/bundle.md)
        "#]],
    );
    let pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".to_vec();
    check(
        "not-a-bundle",
        &run_bytes("capture.zip", &pdf),
        expect![[r#"
            error: no scrapes found among 1 file(s) (capture.zip); expected Prometheus text from vLLM or dcgm-exporter, or nvidia-smi/dcgmi output; name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, or add a manifest.json listing each file's time (see docs/bundle.md)
        "#]],
    );
}

#[test]
fn truncated_zip() {
    let z = zip(&capture(), true);
    check(
        "truncated-zip",
        &run_bytes("cut.zip", &z[..z.len() * 2 / 3]),
        expect![[r#"
            error: cut.zip: damaged archive, cannot be read: invalid Zip archive: Could not find EOCD
        "#]],
    );
}

#[test]
fn corrupt_member() {
    // One member's deflated bytes overwritten: its CRC fails; the other 79
    // files are read.
    let files = capture();
    let mut z = zip(&files, true);
    let needle = b"dcgm/1767225615000.prom";
    let at = z
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("member");
    for b in &mut z[at + needle.len() + 40..at + needle.len() + 60] {
        *b ^= 0x5a;
    }
    check(
        "corrupt-member",
        &run_bytes("flipped.zip", &z),
        expect![[r#"
            Error: dcgm/1767225615000.prom: cannot be decompressed: corrupt deflate stream; file skipped
            note gap: dcgm: 1 window(s) with missing or failed scrapes (0 failed scrapes recorded); figures there cover less time and outages are not bridged
            analysed: 79 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
}

#[test]
fn truncated_gzip() {
    let files: Vec<(String, Vec<u8>)> = capture()
        .into_iter()
        .enumerate()
        .map(|(i, (p, b))| {
            let g = gzip(&b);
            if i == 3 {
                (format!("{p}.gz"), g[..g.len() / 2].to_vec())
            } else {
                (format!("{p}.gz"), g)
            }
        })
        .collect();
    check(
        "truncated-gzip",
        &run_bytes("gz.zip", &zip(&files, false)),
        expect![[r#"
            Error: dcgm/1767225615000.prom.gz: gzip stream cannot be decompressed: incomplete deflate stream; file skipped
            note gap: dcgm: 1 window(s) with missing or failed scrapes (0 failed scrapes recorded); figures there cover less time and outages are not bridged
            analysed: 79 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
    let t = tar(&capture(), true);
    check(
        "truncated-gzip",
        &run_bytes("cut.tar.gz", &t[..t.len() * 2 / 3]),
        expect![[r#"
            error: cut.tar.gz: damaged archive, cannot be read: incomplete deflate stream
        "#]],
    );
}

#[test]
fn zip_bomb() {
    let mut files = capture();
    files.push(("vllm/1767226200000.prom".into(), vec![b'0'; 128 << 20]));
    check(
        "zip-bomb",
        &run_bytes("bomb.zip", &zip(&files, true)),
        expect![[r#"
            Error: vllm/1767226200000.prom: 127.4 KiB compressed would inflate beyond 24.9 MiB (more than real scrapes ever do: a zip bomb?); file skipped
            analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
}

#[test]
fn huge_member() {
    let mut files = capture();
    let mut big = String::new();
    let mut i = 0u64;
    while big.len() < 3 << 20 {
        big += &format!("vllm:num_requests_running{{engine=\"{i}\"}} {i}\n");
        i += 1;
    }
    files.push(("vllm/1767226200000.prom".into(), big.into_bytes()));
    let options = Options {
        limits: Limits {
            max_total_bytes: 2 << 20,
            ..Limits::default()
        },
        ..Options::default()
    };
    check(
        "huge-member",
        &run_bytes_with("big.zip", &zip(&files, false), &options),
        expect![[r#"
            error: vllm/1767225930000.prom: the bundle inflates beyond the 2 MiB limit; split the capture or raise the limit
        "#]],
    );
}

#[test]
fn cardinality_bomb() {
    let mut files = capture();
    let mut bomb = String::with_capacity(64 << 20);
    for i in 0..1_000_000u32 {
        bomb += &format!("vllm:num_requests_running{{engine=\"0\",request_id=\"r{i}\"}} 1\n");
    }
    files.push(("vllm/1767225607000.prom".into(), bomb.into_bytes()));
    let out = run_files(&files);
    check(
        "cardinality-bomb",
        &out,
        expect![[r#"
            Warning: files: more than 500000 distinct series (a cardinality bomb?): 500732 samples of further series were dropped
            note duplicate_series: store: more than 500000 distinct series (a cardinality bomb?): 500732 samples of further series were dropped
            analysed: 81 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
}

#[test]
fn timestamps_duplicate_out_of_order_future_and_1970() {
    let mut files = capture();
    // The same time twice (a second file for an existing scrape time).
    files.push(files[2].clone());
    // Samples whose own timestamps run backwards inside one scrape.
    files.push((
        "other/1767225700000.prom".into(),
        // The last one dated 1970 (a clock never set).
        b"up_custom 1 1767225760000\nup_custom 2 1767225730000\nup_custom 3 1767225700000\nup_custom 4 5000\n"
            .to_vec(),
    ));
    // A scrape dated 2099.
    files.push(("vllm/4070908800000.prom".into(), files[4].1.clone()));
    // A file with no time at all: no time in its name, none inside, no
    // modification time.
    files.push(("vllm/latest.prom".into(), files[6].1.clone()));
    check(
        "timestamps",
        &run_files(&files),
        expect![[r#"
            Error: vllm/latest.prom: no capture time in the name, no timestamps inside and no modification time; file skipped
            Warning: vllm/4070908800000.prom: 1 scrape(s) of `vllm` dated 2099-01-01T00:00:00Z lie more than a day away from the rest of the capture (2026-01-01T00:00:00Z to 2026-01-01T00:09:45Z); not analysed: vllm/4070908800000.prom
            Warning: files: 1 sample(s) carry timestamps that lie more than a day away from the rest of the capture (2026-01-01T00:00:00Z to 2026-01-01T00:09:45Z); not analysed
            Warning: files: 709 points repeat a series at a time already seen; the last one read was kept
            note clock_skew: other: other is scraped -5.0 s apart from dcgm on median: per-window figures joining the two are offset by that much
            note duplicate_series: store: 709 points repeat a series at a time already seen; the last one read was kept
            analysed: 84 scrape files, 3 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
}

#[test]
fn non_utf8() {
    let mut files = capture();
    let mut bad = files[6].1.clone();
    let at = bad.iter().position(|&b| b == b'\n').expect("line") + 1;
    bad.splice(
        at..at,
        b"vllm:num_requests_running{model_name=\"\xff\xfe\"} 1\n"
            .iter()
            .copied(),
    );
    files[6].1 = bad;
    check(
        "non-utf8",
        &run_files(&files),
        expect![[r#"
        Warning: vllm/1767225645000.prom:2: bytes that are not UTF-8 were replaced by U+FFFD
        analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
}

#[test]
fn nan_and_inf_everywhere() {
    let words = ["NaN", "+Inf", "-Inf"];
    let files: Vec<(String, Vec<u8>)> = capture()
        .into_iter()
        .enumerate()
        .map(|(i, (p, b))| {
            let text = String::from_utf8(b).expect("utf-8");
            let mut out = String::new();
            for (j, line) in text.lines().enumerate() {
                match line.rfind(' ') {
                    Some(cut) if !line.starts_with('#') => {
                        out += &line[..cut];
                        out += " ";
                        out += words[(i + j) % 3];
                    }
                    _ => out += line,
                }
                out.push('\n');
            }
            (p, out.into_bytes())
        })
        .collect();
    check(
        "nan-inf",
        &run_files(&files),
        expect![[r#"
            note non_finite: bundle: 29280 sample(s) are NaN or ±Inf; figures that rest on them are shown as missing
            analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s missing, TTFT p95 missing, GPU util missing
        "#]],
    );
}

#[test]
fn counter_backwards_every_scrape() {
    let t = vllm_template();
    let files = vllm_capture(|step| evolve(&t, 39 - step));
    let out = run_files(&files);
    check(
        "counter-backwards",
        &out,
        expect![[r#"
            note counter_backwards: prompt_tokens: Prompt tokens: the counter went backwards 39 times per series in 40 scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)
            note counter_backwards: generation_tokens: Generated tokens: the counter went backwards 39 times per series in 40 scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)
            note counter_backwards: prefix_cache_hits: Prefix-cache hits: the counter went backwards 39 times per series in 40 scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)
            note counter_backwards: prefix_cache_queries: Prefix-cache queries: the counter went backwards 39 times per series in 40 scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)
            note counter_backwards: cached_prompt_tokens: Prompt tokens served from cache: the counter went backwards 39 times per series in 40 scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)
            note counter_backwards: http_requests: HTTP requests (by handler and status): the counter went backwards 30 times per series in 40 scrapes, far more often than servers restart; each drop is read as a restart from zero, so its rates are not to be trusted (an exporter that resets it, or scrapes of several servers under one name?)
            note reset: bundle: 1416 counter resets with no new process seen (no changed process_start_time_seconds): read as restarts from zero, never as negative increases
            analysed: 40 scrape files, 1 targets, 10 windows; gen tok/s 1008080.2, TTFT p95 74.8, GPU util missing
        "#]],
    );
}

#[test]
fn non_cumulative_buckets() {
    let t = vllm_template();
    // Every bucket after the first of each histogram holds less than the
    // one before it.
    let files = vllm_capture(|step| {
        let mut out = String::new();
        let mut prev_name = String::new();
        let mut k = 0.0;
        for line in evolve(&t, step).lines() {
            if let Some(cut) = line.rfind(' ')
                && line.contains("_bucket{")
            {
                let name = &line[..line.find('{').expect("labels")];
                k = if name == prev_name { k + 1.0 } else { 0.0 };
                prev_name = name.to_string();
                out += &format!(
                    "{} {}\n",
                    &line[..cut],
                    f64::from(step + 1) * (1000.0 - 10.0 * k)
                );
            } else {
                out += line;
                out.push('\n');
            }
        }
        out
    });
    check(
        "non-cumulative-buckets",
        &run_files(&files),
        expect![[r#"
            note non_cumulative: ttft: Time to first token: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: inter_token_latency: Inter-token latency: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: queue_time: Time in queue: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: prefill_time: Prefill time: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: decode_time: Decode time: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: inference_time: Inference time (prefill + decode): histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: e2e_time: End-to-end request latency: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: iteration_tokens: Tokens per engine step: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: max_tokens: Requested max_tokens: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: request_prompt_tokens: Prompt tokens per request: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            note non_cumulative: request_generation_tokens: Generated tokens per request: histogram buckets are not cumulative (a larger `le` counts fewer observations); quantiles read them forced monotonic, as Prometheus does, and are not to be trusted: the exporter or the capture is broken
            analysed: 40 scrape files, 1 targets, 10 windows; gen tok/s 34761.4, TTFT p95 0.9, GPU util missing
        "#]],
    );
}

#[test]
fn mixed_vllm_versions() {
    let v1 = std::fs::read(root().join("samples/a10g-qwen3b-ramp.zip")).expect("sample");
    let v0 = std::fs::read(root().join("samples/v0-legacy.zip")).expect("sample");
    // Each sample's vLLM scrapes as (time from the name, bytes).
    let scrapes = |bytes: Vec<u8>| -> Vec<(i64, Vec<u8>)> {
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
        let mut out = Vec::new();
        for i in 0..z.len() {
            let mut f = z.by_index(i).expect("member");
            let name = f.name().expect("name").to_string();
            if !name.contains("vllm-0/") {
                continue;
            }
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut b).expect("read");
            let stem = name.rsplit('/').next().expect("name");
            out.push((stem.trim_end_matches(".prom").parse().expect("ms name"), b));
        }
        out
    };
    let (new, old) = (scrapes(v1), scrapes(v0));
    // The old capture moved onto the new one's minutes.
    let shift =
        old.iter().map(|s| s.0).min().expect("old") - new.iter().map(|s| s.0).min().expect("new");
    let mut files: Vec<(String, Vec<u8>)> = new
        .into_iter()
        .map(|(t, b)| (format!("new-vllm/{t}.prom"), b))
        .collect();
    files.extend(
        old.into_iter()
            .map(|(t, b)| (format!("old-vllm/{}.prom", t - shift), b)),
    );
    check(
        "mixed-versions",
        &run_files(&files),
        expect![[r#"
            note version: bundle: vLLM targets of different releases share this bundle; fleet figures mix them
            note version: old-vllm: the version markers of old-vllm contradict each other (edited or merged data?)
            analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 1042.9, TTFT p95 78.1, GPU util missing
        "#]],
    );
}

#[test]
fn the_same_target_twice() {
    let mut files = capture();
    let again: Vec<(String, Vec<u8>)> = capture()
        .into_iter()
        .map(|(p, b)| (format!("copy/{p}"), b))
        .collect();
    files.extend(again);
    let files: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .map(|(p, b)| (format!("b/{p}"), b))
        .collect();
    check(
        "same-target-twice",
        &run_bytes("twice.zip", &zip(&files, true)),
        expect![[r#"
            Warning: twice.zip: 29280 points repeat a series at a time already seen; the last one read was kept
            note duplicate_series: store: 29280 points repeat a series at a time already seen; the last one read was kept
            analysed: 160 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
}

fn with_manifest(manifest: &str) -> Outcome {
    let mut files = capture();
    files.push(("manifest.json".into(), manifest.as_bytes().to_vec()));
    run_bytes("m.zip", &zip(&files, true))
}

#[test]
fn empty_manifest() {
    check(
        "empty-manifest",
        &with_manifest(""),
        expect![[r#"
        Error: manifest.json:1: manifest.json cannot be read (EOF while parsing a value at line 1 column 0); the bundle is read without it
        analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
    check(
        "empty-manifest",
        &with_manifest("{}"),
        expect![[r#"
        analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
    check(
        "empty-manifest",
        &with_manifest("[]"),
        expect![[r#"
        analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
    check(
        "empty-manifest",
        &with_manifest("null"),
        expect![[r#"
        Error: manifest.json:1: manifest.json cannot be read (invalid type: null, expected struct Manifest at line 1 column 4); the bundle is read without it
        analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
}

#[test]
fn manifest_pointing_to_missing_files() {
    let mut files = capture();
    files.retain(|(p, _)| !p.ends_with("1767225630000.prom"));
    let manifest = serde_json::json!({
        "format": "vllm-lens-bundle",
        "version": 1,
        "targets": [{"name": "vllm", "kind": "vllm"}, {"name": "dcgm", "kind": "dcgm"}],
        "scrapes": [
            {"target": "vllm", "time_ms": T0 + 30_000, "file": "vllm/1767225630000.prom"},
            {"target": "dcgm", "time_ms": T0 + 30_000, "file": "dcgm/1767225630000.prom"},
            {"target": "vllm", "time_ms": T0 + 45_000, "file": "vllm/1767225645000.prom"}
        ]
    });
    files.push(("manifest.json".into(), manifest.to_string().into_bytes()));
    check(
        "manifest-missing-files",
        &run_bytes("m.zip", &zip(&files, true)),
        expect![[r#"
            Warning: manifest.json: lists `vllm/1767225630000.prom`, which is not in the bundle
            Warning: manifest.json: lists `dcgm/1767225630000.prom`, which is not in the bundle
            note gap: dcgm: 1 window(s) with missing or failed scrapes (0 failed scrapes recorded); figures there cover less time and outages are not bridged
            note gap: vllm: 1 window(s) with missing or failed scrapes (0 failed scrapes recorded); figures there cover less time and outages are not bridged
            analysed: 78 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
        "#]],
    );
}

#[test]
fn path_traversal_in_member_names() {
    let marker = std::env::temp_dir().join("vllm-lens-traversal-marker.prom");
    let _ = std::fs::remove_file(&marker);
    let mut files = capture();
    let scrape = files[0].1.clone();
    let depth = "../".repeat(12);
    files.push((
        format!("{depth}tmp/vllm-lens-traversal-marker.prom"),
        scrape.clone(),
    ));
    files.push((
        format!("/{}", marker.display()).replace("//", "/"),
        scrape.clone(),
    ));
    files.push(("vllm/..\\..\\1767225900000.prom".into(), scrape));
    let z = zip(&files, true);
    let out = run_bytes("evil.zip", &z);
    let out_tar = run_bytes("evil.tar.gz", &gzip(&raw_tar(&files)));
    assert!(
        !marker.exists(),
        "a member was written to {}",
        marker.display()
    );
    check(
        "path-traversal",
        &out,
        expect![[r#"
        Warning: ../../../../../../../../../../../../tmp/vllm-lens-traversal-marker.prom: no capture time in the name, and its modification time is shared with other files of the same target: read as one scrape, the last file's values kept
        Warning: /tmp/vllm-lens-traversal-marker.prom: no capture time in the name, and its modification time is shared with other files of the same target: read as one scrape, the last file's values kept
        Warning: tmp: scrape times of `tmp` come from file modification times (zip times are the zipping machine's local time, 2 s resolution); name files by capture time for exact rates
        Warning: evil.zip: 709 points repeat a series at a time already seen; the last one read was kept
        note clock_skew: tmp: tmp is scraped -300.0 s apart from .. on median: per-window figures joining the two are offset by that much
        note duplicate_series: store: 709 points repeat a series at a time already seen; the last one read was kept
        analysed: 83 scrape files, 4 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
    check(
        "path-traversal",
        &out_tar,
        expect![[r#"
        Warning: ../../../../../../../../../../../../tmp/vllm-lens-traversal-marker.prom: no capture time in the name, and its modification time is shared with other files of the same target: read as one scrape, the last file's values kept
        Warning: /tmp/vllm-lens-traversal-marker.prom: no capture time in the name, and its modification time is shared with other files of the same target: read as one scrape, the last file's values kept
        Warning: tmp: scrape times of `tmp` come from file modification times; name files by capture time for exact rates
        Warning: evil.tar.gz: 709 points repeat a series at a time already seen; the last one read was kept
        note duplicate_series: store: 709 points repeat a series at a time already seen; the last one read was kept
        analysed: 83 scrape files, 4 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
}

/// A tar whose member names are written as given, `..` included (the tar
/// crate's builder refuses them, as a bundle's author would not).
fn raw_tar(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, bytes) in files {
        let mut header = ::tar::Header::new_gnu();
        let name = path.as_bytes();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(1_767_225_600);
        header.set_cksum();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(bytes);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

#[test]
fn markup_and_script_in_names_and_values() {
    let mut files = capture();
    let evil = "<script>alert('vllm-lens')</script>";
    for (p, b) in files.iter_mut().filter(|(p, _)| p.starts_with("vllm/")) {
        let text = String::from_utf8(std::mem::take(b)).expect("utf-8");
        *b = text
            .replace(
                "model_name=\"",
                &format!("model_name=\"{}\\\"", evil.replace('"', "\\\"")),
            )
            .into_bytes();
        *p = p.replace("vllm/", "vllm<img src=x onerror=alert(1)>/");
    }
    let out = run_files(&files);
    let report = out.report.as_ref().expect("analysed");
    let html = render::html(report);
    assert!(
        !html.contains("<script>alert"),
        "a script from the bundle reached the HTML"
    );
    assert!(
        !html.contains("<img src=x"),
        "markup from the bundle reached the HTML"
    );
    assert_eq!(html.matches("<script").count(), 1, "only the report's JSON");
    let md = render::markdown(report);
    assert!(!md.contains("<script>"), "Markdown carries raw markup");
    check(
        "markup-injection",
        &out,
        expect![[r#"
        analysed: 80 scrape files, 2 targets, 10 windows; gen tok/s 34761.4, TTFT p95 74.8, GPU util 100.0
    "#]],
    );
}

#[test]
fn the_fuzzers_first_finding() {
    // fuzz/pipeline: a member whose name lost its time fell back to the
    // zip's modification time, ten months before the rest; the report built
    // 440,000 windows (3.5 GB). Now that scrape is set aside.
    let bytes =
        std::fs::read(root().join("tests/data/fuzz/pipeline-mangled-name.zip")).expect("finding");
    let out = run_bytes("finding.zip", &bytes);
    let report = out.report.as_ref().expect("analysed");
    let s = &report.summary;
    assert!(
        s.window_end_ms - s.window_start_ms <= 3_600_000,
        "{}",
        out.text
    );
    assert!(
        out.text.contains("lie more than a day away"),
        "{}",
        out.text
    );
}
