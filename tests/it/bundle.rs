//! Bundle cases, one per fixture: each builds a bundle, loads it, and
//! compares a compact rendering of the result (or the error) with the
//! expectation. `UPDATE_EXPECT=1` rewrites the expectations.

use expect_test::{Expect, expect};
use vllm_lens_bundle::{Input, Limits, MemoryFiles, Options, load};
use vllm_lens_core::time::format_rfc3339;

use crate::support::{T0, capture_80, evolve, gzip, read, tar, zip};

fn render(result: Result<vllm_lens_bundle::Loaded, vllm_lens_bundle::Error>) -> String {
    let loaded = match result {
        Ok(l) => l,
        Err(e) => return format!("error: {e}\n"),
    };
    let mut out = format!(
        "{} files={} scrape_files={} manifest={}\n",
        loaded.container.as_str(),
        loaded.files,
        loaded.scrape_files,
        loaded.manifest.is_some()
    );
    let store = &loaded.store;
    let mut targets: Vec<_> = store.targets().iter().enumerate().collect();
    targets.sort_by_key(|(_, t)| t.name().to_string());
    for (i, t) in targets {
        let times = t.sample_times();
        let id = vllm_lens_store::TargetId(i as u32);
        let series = store
            .all_series()
            .iter()
            .filter(|s| s.target() == id)
            .count();
        let failed = t.scrapes().iter().filter(|s| !s.up).count();
        let sources: Vec<&str> = loaded
            .time_sources
            .get(t.name())
            .map_or(vec![], |v| v.iter().map(|s| s.as_str()).collect());
        let labels: Vec<String> = store
            .target_labels(id)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        out += &format!(
            "target {} ({}) scrapes={} failed={} series={} {}..{} times={} labels={}\n",
            t.name(),
            t.kind(),
            times.len(),
            failed,
            series,
            times.first().map_or("-".into(), |&t| format_rfc3339(t)),
            times.last().map_or("-".into(), |&t| format_rfc3339(t)),
            sources.join("+"),
            labels.join(",")
        );
    }
    out += &format!(
        "families={} points={}\n",
        store.families().len(),
        store.points()
    );
    for d in &loaded.diagnostics {
        out += &format!("{:?}: {d}\n", d.severity);
    }
    out
}

fn bytes(name: &str, bytes: &[u8], expect: Expect) {
    let input = Input::Bytes {
        name,
        bytes,
        mtime_ms: None,
    };
    expect.assert_eq(&render(load(input, &Options::default())));
}

fn files(files: Vec<(String, Vec<u8>, Option<i64>)>, expect: Expect) {
    let mut source = MemoryFiles::default();
    for (path, bytes, mtime) in files {
        source.push(&path, bytes, mtime);
    }
    expect.assert_eq(&render(load(
        Input::Files(&mut source),
        &Options::default(),
    )));
}

const CAPTURE_80: &str = "\
target dcgm (dcgm) scrapes=40 failed=0 series=23 2026-01-01T00:00:00Z..2026-01-01T00:09:45Z times=name labels=instance=dcgm,job=dcgm
target vllm (vllm) scrapes=40 failed=0 series=709 2026-01-01T00:00:00Z..2026-01-01T00:09:45Z times=name labels=instance=vllm,job=vllm
families=96 points=29280
";

#[track_caller]
fn check_capture(container: &str, result: String) {
    assert_eq!(
        result,
        format!("{container} files=80 scrape_files=80 manifest=false\n{CAPTURE_80}")
    );
}

#[test]
fn zip_deflate_of_40_vllm_and_40_dcgm_scrapes() {
    let z = zip(&capture_80(), true);
    check_capture(
        "zip",
        render(load(
            Input::Bytes {
                name: "c.zip",
                bytes: &z,
                mtime_ms: None,
            },
            &Options::default(),
        )),
    );
}

#[test]
fn zip_stored() {
    let z = zip(&capture_80(), false);
    check_capture(
        "zip",
        render(load(
            Input::Bytes {
                name: "c.zip",
                bytes: &z,
                mtime_ms: None,
            },
            &Options::default(),
        )),
    );
}

#[test]
fn tar_gz_and_tar() {
    let t = tar(&capture_80(), true);
    check_capture(
        "tar.gz",
        render(load(
            Input::Bytes {
                name: "c.tgz",
                bytes: &t,
                mtime_ms: None,
            },
            &Options::default(),
        )),
    );
    let t = tar(&capture_80(), false);
    check_capture(
        "tar",
        render(load(
            Input::Bytes {
                name: "c.tar",
                bytes: &t,
                mtime_ms: None,
            },
            &Options::default(),
        )),
    );
}

#[test]
fn loose_files_as_dropped_in_a_browser() {
    let mut source = MemoryFiles::default();
    for (path, bytes) in capture_80() {
        source.push(&path, bytes, Some(0));
    }
    check_capture(
        "files",
        render(load(Input::Files(&mut source), &Options::default())),
    );
}

#[test]
fn gz_members_inside_a_zip_under_a_common_root_folder() {
    let members: Vec<(String, Vec<u8>)> = capture_80()
        .into_iter()
        .map(|(p, b)| (format!("capture-2026-01-01/{p}.gz"), gzip(&b)))
        .collect();
    let z = zip(&members, false);
    check_capture(
        "zip",
        render(load(
            Input::Bytes {
                name: "c.zip",
                bytes: &z,
                mtime_ms: None,
            },
            &Options::default(),
        )),
    );
}

#[test]
fn names_carry_time_and_target_in_every_documented_form() {
    let v = read("scrapes/vllm-v1-0.23-2engines.prom");
    let d = read("scrapes/dcgm-4.x-a10g.prom");
    files(
        vec![
            (
                "1767225600123-vllm.prom".into(),
                evolve(&v, 0).into_bytes(),
                None,
            ),
            (
                "1767225615123-vllm.prom".into(),
                evolve(&v, 1).into_bytes(),
                None,
            ),
            (
                "2026-01-01T00-00-00Z_dcgm.txt".into(),
                d.clone().into_bytes(),
                None,
            ),
            (
                "20260101T000015Z_dcgm.txt".into(),
                d.clone().into_bytes(),
                None,
            ),
            ("gpu1/1767225600.prom".into(), d.clone().into_bytes(), None),
            (
                "2026-01-01T00:00:30Z/vllm-b.prom".into(),
                v.clone().into_bytes(),
                None,
            ),
            (
                "2026-01-01T00:00:45Z/vllm-b.prom".into(),
                v.clone().into_bytes(),
                None,
            ),
        ],
        expect![[r#"
            files files=7 scrape_files=7 manifest=false
            target dcgm (dcgm) scrapes=2 failed=0 series=23 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=name labels=instance=dcgm,job=dcgm
            target gpu1 (dcgm) scrapes=1 failed=0 series=23 2026-01-01T00:00:00Z..2026-01-01T00:00:00Z times=name labels=instance=gpu1,job=dcgm
            target vllm (vllm) scrapes=2 failed=0 series=709 2026-01-01T00:00:00.123Z..2026-01-01T00:00:15.123Z times=name labels=instance=vllm,job=vllm
            target vllm-b (vllm) scrapes=2 failed=0 series=709 2026-01-01T00:00:30Z..2026-01-01T00:00:45Z times=name labels=instance=vllm-b,job=vllm
            families=96 points=2905
        "#]],
    );
}

#[test]
fn manifest_with_a_failed_scrape_and_a_missing_file() {
    let v = read("scrapes/vllm-v1-0.23-2engines.prom");
    let manifest = r#"{
      "format": "vllm-lens-bundle", "version": 1,
      "capture": {"interval_s": 15, "start_ms": 1767225600000, "end_ms": 1767225645000, "tool": "collect.sh 0.1"},
      "environment": {"vllm_version": "0.23.0", "model": "Qwen/Qwen2.5-3B-Instruct", "gpu_model": "NVIDIA A10G",
                      "engine_args": {"--max-model-len": 4096, "gpu_memory_utilization": 0.9}},
      "targets": [{"name": "vllm-0", "kind": "vllm", "url": "http://10.0.0.5:8000/metrics", "job": "vllm",
                   "instance": "10.0.0.5:8000", "pod": "vllm-0", "namespace": "llm", "node": "gpu-node-1",
                   "gpu_uuids": ["GPU-09d2b3c4"], "labels": {"replica": "a"}}],
      "scrapes": [
        {"target": "vllm-0", "time_ms": 1767225600000, "file": "scrapes/a.prom", "up": 1},
        {"target": "vllm-0", "time_ms": 1767225615000, "file": "scrapes/b.prom", "up": 1},
        {"target": "vllm-0", "time_ms": 1767225630000, "up": 0, "error": "curl: (7) Failed to connect to 10.0.0.5 port 8000: Connection refused"},
        {"target": "vllm-0", "time_ms": 1767225645000, "file": "scrapes/d.prom", "up": 1}
      ]
    }"#;
    let members: Vec<(String, Vec<u8>)> = vec![
        ("manifest.json".into(), manifest.as_bytes().to_vec()),
        ("scrapes/a.prom".into(), evolve(&v, 0).into_bytes()),
        ("scrapes/b.prom".into(), evolve(&v, 1).into_bytes()),
    ];
    // The same bundle as a tar.gz under a wrapping folder reads the same.
    let wrapped: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(p, b)| (format!("capture/{p}"), b.clone()))
        .collect();
    let t = tar(&wrapped, true);
    let from_tar = render(load(
        Input::Bytes {
            name: "c.tgz",
            bytes: &t,
            mtime_ms: None,
        },
        &Options::default(),
    ));
    let from_files = {
        let mut source = MemoryFiles::default();
        for (p, b) in &members {
            source.push(p, b.clone(), None);
        }
        render(load(Input::Files(&mut source), &Options::default()))
    };
    assert_eq!(from_tar.replacen("tar.gz ", "files ", 1), from_files);
    files(
        members.into_iter().map(|(p, b)| (p, b, None)).collect(),
        expect![[r#"
            files files=3 scrape_files=2 manifest=true
            target vllm-0 (vllm) scrapes=2 failed=1 series=709 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=manifest labels=instance=10.0.0.5:8000,job=vllm,namespace=llm,node=gpu-node-1,pod=vllm-0,replica=a
            families=73 points=1418
            Warning: manifest.json: lists `scrapes/d.prom`, which is not in the bundle
        "#]],
    );
}

#[test]
fn per_sample_timestamps_are_honoured() {
    files(
        vec![
            (
                "federate.prom".into(),
                read("expo/federate.prom").into_bytes(),
                None,
            ),
            (
                "dump.txt".into(),
                read("expo/promtool-dump.txt").into_bytes(),
                None,
            ),
        ],
        expect![[r#"
            files files=2 scrape_files=2 manifest=false
            target dump (vllm) scrapes=2 failed=0 series=1 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=samples labels=instance=dump,job=vllm
            target federate (vllm) scrapes=2 failed=0 series=2 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=samples labels=instance=federate,job=vllm
            families=2 points=5
        "#]],
    );
}

#[test]
fn three_malformed_lines_are_reported_and_the_rest_read() {
    files(
        vec![
            (
                "vllm/1767225600000.prom".into(),
                read("expo/three-bad-lines.prom").into_bytes(),
                None,
            ),
            (
                "vllm/1767225615000.prom".into(),
                read("expo/three-bad-lines.prom").into_bytes(),
                None,
            ),
        ],
        expect![[r#"
            files files=2 scrape_files=2 manifest=false
            target vllm (vllm) scrapes=2 failed=0 series=2 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=name labels=instance=vllm,job=vllm
            families=2 points=4
            Error: vllm/1767225600000.prom:3: malformed labels: expected `,` or `}` after a label; line skipped
            Error: vllm/1767225600000.prom:4: missing or invalid sample value; line skipped
            Error: vllm/1767225600000.prom:5: unexpected text after the sample; line skipped
            Error: vllm/1767225615000.prom:3: malformed labels: expected `,` or `}` after a label; line skipped
            Error: vllm/1767225615000.prom:4: missing or invalid sample value; line skipped
            Error: vllm/1767225615000.prom:5: unexpected text after the sample; line skipped
        "#]],
    );
}

#[test]
fn zip_bomb_is_refused_before_inflating_past_its_cap() {
    // 256 MiB of zeros deflates to ~250 KiB: a ratio of ~1000. The message
    // proves the reader stopped at the member's cap (ratio 200 × its
    // compressed size), not after inflating it all; speed is measured by
    // the benchmarks, not asserted here.
    let zeros = vec![0u8; 256 << 20];
    let z = zip(&[("vllm/1767225600000.prom".to_string(), zeros)], true);
    assert!(z.len() < 1 << 20, "bomb is {} bytes", z.len());
    let result = load(
        Input::Bytes {
            name: "bomb.zip",
            bytes: &z,
            mtime_ms: None,
        },
        &Options::default(),
    );
    let err = result.expect_err("a bomb is refused");
    expect!["no scrape could be read among 1 file(s): vllm/1767225600000.prom: 254.8 KiB compressed would inflate beyond 49.8 MiB (more than real scrapes ever do: a zip bomb?); file skipped"]
        .assert_eq(&err.to_string());
}

#[test]
fn zip_whose_header_lies_about_sizes_is_still_capped() {
    // A gzip member inside a stored zip: the zip header is honest, the gzip
    // inflates 1000-fold.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut enc, &vec![0u8; 64 << 20]).expect("gzip");
    let bomb = enc.finish().expect("gzip");
    assert!(bomb.len() < 100_000, "{}", bomb.len());
    let z = zip(&[("vllm/1767225600000.prom.gz".to_string(), bomb)], false);
    let err = load(
        Input::Bytes {
            name: "b.zip",
            bytes: &z,
            mtime_ms: None,
        },
        &Options::default(),
    )
    .expect_err("refused");
    assert!(err.to_string().contains("zip bomb"), "{err}");
}

#[test]
fn total_size_limit_is_an_early_clear_error() {
    let z = zip(&capture_80(), true);
    let options = Options {
        limits: Limits {
            max_total_bytes: 1 << 20,
            ..Limits::default()
        },
        ..Options::default()
    };
    let err = load(
        Input::Bytes {
            name: "c.zip",
            bytes: &z,
            mtime_ms: None,
        },
        &options,
    )
    .expect_err("too large");
    expect!["vllm/1767225765000.prom: the bundle inflates beyond the 1 MiB limit; split the capture or raise the limit"]
        .assert_eq(&err.to_string());
}

#[test]
fn member_count_limit() {
    let z = zip(&capture_80(), true);
    let options = Options {
        limits: Limits {
            max_members: 50,
            ..Limits::default()
        },
        ..Options::default()
    };
    let err = load(
        Input::Bytes {
            name: "c.zip",
            bytes: &z,
            mtime_ms: None,
        },
        &options,
    )
    .expect_err("too many");
    assert_eq!(
        err.to_string(),
        "the bundle holds 80 files, more than the limit of 50"
    );
}

#[test]
fn empty_zip() {
    bytes(
        "empty.zip",
        &zip(&[], true),
        expect![[r#"
        error: no scrapes found: the bundle is empty; name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, or add a manifest.json listing each file's time (see docs/bundle.md)
    "#]],
    );
}

#[test]
fn zip_of_images() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let z = zip(
        &[
            ("shot1.png".into(), png.clone()),
            ("photo".into(), b"\xff\xd8\xff\xe0rest".to_vec()),
        ],
        true,
    );
    bytes(
        "pics.zip",
        &z,
        expect![[r#"
        error: no scrapes found among 2 file(s) (shot1.png, photo); expected Prometheus text from vLLM or dcgm-exporter, or nvidia-smi/dcgmi output; name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, or add a manifest.json listing each file's time (see docs/bundle.md)
    "#]],
    );
}

#[test]
fn truncated_zip_is_a_clear_error() {
    let z = zip(&capture_80(), true);
    let cut = &z[..z.len() / 2];
    let err = load(
        Input::Bytes {
            name: "cut.zip",
            bytes: cut,
            mtime_ms: None,
        },
        &Options::default(),
    )
    .expect_err("corrupt");
    assert!(
        err.to_string()
            .starts_with("cut.zip: damaged archive, cannot be read"),
        "{err}"
    );
}

#[test]
fn scrapes_without_any_time_are_rejected_with_naming_advice() {
    files(
        vec![
            (
                "vllm/a.prom".into(),
                b"vllm:num_requests_running 1\n".to_vec(),
                None,
            ),
            (
                "vllm/b.prom".into(),
                b"vllm:num_requests_running 2\n".to_vec(),
                None,
            ),
        ],
        expect![[r#"
            error: the scrapes cannot be ordered in time: 2 file(s) have no capture time in their name, no timestamps inside and no modification time (vllm/a.prom, vllm/b.prom); name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, or add a manifest.json listing each file's time (see docs/bundle.md)
        "#]],
    );
}

#[test]
fn modification_times_are_the_last_resort() {
    files(
        vec![
            (
                "vllm/a.prom".into(),
                b"vllm:num_requests_running 1\n".to_vec(),
                Some(T0),
            ),
            (
                "vllm/b.prom".into(),
                b"vllm:num_requests_running 2\n".to_vec(),
                Some(T0 + 15_000),
            ),
        ],
        expect![[r#"
            files files=2 scrape_files=2 manifest=false
            target vllm (vllm) scrapes=2 failed=0 series=1 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=mtime labels=instance=vllm,job=vllm
            families=1 points=2
            Warning: vllm: scrape times of `vllm` come from file modification times; name files by capture time for exact rates
        "#]],
    );
    files(
        vec![
            (
                "vllm/a.prom".into(),
                b"vllm:num_requests_running 1\n".to_vec(),
                Some(T0),
            ),
            (
                "vllm/b.prom".into(),
                b"vllm:num_requests_running 2\n".to_vec(),
                Some(T0),
            ),
        ],
        expect![[r#"
            error: the scrapes cannot be ordered in time: the files carry no time in their names and share modification times (vllm/a.prom, vllm/b.prom); name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, or add a manifest.json listing each file's time (see docs/bundle.md)
        "#]],
    );
}

#[test]
fn gpu_dumps_beside_vllm_scrapes() {
    let csv = "timestamp, index, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]\n\
               2026/01/01 00:00:00.000, 0, NVIDIA A10G, GPU-aaa, 100 %, 21647 MiB, 240.11 W\n\
               2026/01/01 00:00:15.000, 0, NVIDIA A10G, GPU-aaa, 100 %, 21647 MiB, [N/A]\n";
    let dmon = "#Entity   GRACT    TENSO    DRAMA\nID\nGPU 0     0.998    0.166    0.804\nGPU 0     0.997    0.170    0.810\n";
    files(
        vec![
            (
                "vllm/1767225600000.prom".into(),
                b"vllm:num_requests_running 8\n".to_vec(),
                None,
            ),
            ("smi/gpu.csv".into(), csv.as_bytes().to_vec(), None),
            (
                "dcgmi/1767225600000.txt".into(),
                dmon.as_bytes().to_vec(),
                None,
            ),
        ],
        expect![[r#"
            files files=3 scrape_files=3 manifest=false
            target dcgmi (dcgm) scrapes=2 failed=0 series=3 2026-01-01T00:00:00Z..2026-01-01T00:00:01Z times=name labels=instance=dcgmi,job=dcgm
            target smi (dcgm) scrapes=2 failed=0 series=3 2026-01-01T00:00:00Z..2026-01-01T00:00:15Z times=samples labels=instance=smi,job=dcgm
            target vllm (vllm) scrapes=1 failed=0 series=1 2026-01-01T00:00:00Z..2026-01-01T00:00:00Z times=name labels=instance=vllm,job=vllm
            families=7 points=12
            Warning: dcgmi/1767225600000.txt: dcgmi dmon rows carry no time; ticks placed 1000 ms apart from the file's time (set capture.dmon_delay_ms in the manifest to the -d value)
            Warning: smi/gpu.csv: nvidia-smi timestamps are local time without a zone; read as UTC
        "#]],
    );
}

#[test]
fn single_scrape_file_and_non_scrape_members() {
    files(
        vec![
            (
                "README.md".into(),
                b"# My capture\n\nSome notes.\n".to_vec(),
                None,
            ),
            (
                "notes.txt".into(),
                b"we restarted the pod at 10:05\n".to_vec(),
                None,
            ),
            (
                "vllm/1767225600000.prom".into(),
                read("expo/pasted-with-junk.txt").into_bytes(),
                None,
            ),
        ],
        expect![[r#"
            files files=3 scrape_files=1 manifest=false
            target vllm (vllm) scrapes=1 failed=0 series=1 2026-01-01T00:00:00Z..2026-01-01T00:00:00Z times=name labels=instance=vllm,job=vllm
            families=1 points=1
            Info: README.md: skipped: a .md file is not a scrape
            Info: notes.txt: skipped: no metric line in this file
            Error: vllm/1767225600000.prom:1: not a metric line (expected a metric name, `{` or `#`); skipped
            Error: vllm/1767225600000.prom:2: missing or invalid sample value; line skipped
            Error: vllm/1767225600000.prom:3: not a metric line (expected a metric name, `{` or `#`); skipped
            Error: vllm/1767225600000.prom:4: not a metric line (expected a metric name, `{` or `#`); skipped
            Error: vllm/1767225600000.prom:7: not a metric line (expected a metric name, `{` or `#`); skipped
        "#]],
    );
    bytes(
        "1767225600000-vllm.prom.gz",
        &gzip(b"vllm:num_requests_running 3\n"),
        expect![[r#"
        file files=1 scrape_files=1 manifest=false
        target vllm (vllm) scrapes=1 failed=0 series=1 2026-01-01T00:00:00Z..2026-01-01T00:00:00Z times=name labels=instance=vllm,job=vllm
        families=1 points=1
    "#]],
    );
}

/// Bytes per stored point on a larger bundle (printed; the target is 24).
#[test]
fn bytes_per_point_on_a_larger_bundle() {
    let v = read("scrapes/vllm-v1-0.23-2engines.prom");
    let d = read("scrapes/dcgm-4.x-2gpu-xid.prom");
    let mut source = MemoryFiles::default();
    for step in 0..240u32 {
        let t = T0 + i64::from(step) * 15_000;
        source.push(
            &format!("vllm/{t}.prom"),
            evolve(&v, step).into_bytes(),
            None,
        );
        source.push(
            &format!("dcgm/{t}.prom"),
            evolve(&d, step).into_bytes(),
            None,
        );
    }
    let loaded = load(Input::Files(&mut source), &Options::default()).expect("loads");
    let points = loaded.store.points();
    let bytes = loaded.store.heap_bytes();
    let per_point = bytes as f64 / points as f64;
    println!("store: {points} points, {bytes} bytes, {per_point:.1} bytes/point");
    assert_eq!(points, 240 * (709 + 48));
    assert!(per_point <= 24.0, "{per_point:.1} bytes per point");
}

/// A hand-made zip whose files carry no time in their names: the zip's
/// entry times order them, with a warning that they are local times.
#[test]
fn zip_entry_times_are_the_last_resort() {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = ::zip::ZipWriter::new(&mut buf);
        for (i, name) in ["scrape-a.prom", "scrape-b.prom", "scrape-c.prom"]
            .iter()
            .enumerate()
        {
            let when = ::zip::DateTime::from_date_and_time(2026, 1, 1, 0, 0, 2 * i as u8 * 8)
                .expect("date");
            let options = ::zip::write::SimpleFileOptions::default().last_modified_time(when);
            w.start_file(format!("vllm-0/{name}"), options)
                .expect("entry");
            std::io::Write::write_all(
                &mut w,
                format!("vllm:num_requests_running {i}\n").as_bytes(),
            )
            .expect("write");
        }
        w.finish().expect("finish");
    }
    bytes(
        "handmade.zip",
        &buf.into_inner(),
        expect![[r#"
            zip files=3 scrape_files=3 manifest=false
            target vllm-0 (vllm) scrapes=3 failed=0 series=1 2026-01-01T00:00:00Z..2026-01-01T00:00:32Z times=mtime labels=instance=vllm-0,job=vllm
            families=1 points=3
            Warning: vllm-0: scrape times of `vllm-0` come from file modification times (zip times are the zipping machine's local time, 2 s resolution); name files by capture time for exact rates
        "#]],
    );
}

/// A bundle exported from Prometheus (`query_range` JSON, one file per
/// metric, as `collect.sh --from-prometheus` writes it) gives the same
/// report figures as the captured scrapes it came from.
#[test]
fn prometheus_api_json_is_a_first_class_input() {
    use vllm_lens_core::analysis::{BundleMeta, Settings, analyse};
    let original = crate::engine::load_sample("pod-restart");
    let store = &original.store;
    let mut by_name: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
        std::collections::BTreeMap::new();
    for (i, s) in store.all_series().iter().enumerate() {
        let sid = vllm_lens_core::store::SeriesId(i as u32);
        let mut metric = serde_json::Map::new();
        let name = store.series_name(sid).to_string();
        metric.insert("__name__".into(), name.clone().into());
        for (k, v) in store.labels(sid) {
            metric.insert(k.to_string(), v.to_string().into());
        }
        let values: Vec<serde_json::Value> = s
            .times()
            .iter()
            .zip(s.values())
            .map(|(t, v)| serde_json::json!([*t as f64 / 1000.0, format!("{v}")]))
            .collect();
        by_name
            .entry(name)
            .or_default()
            .push(serde_json::json!({"metric": metric, "values": values}));
    }
    let files: Vec<(String, Vec<u8>)> = by_name
        .into_iter()
        .map(|(name, result)| {
            let doc = serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": result}});
            (
                format!("prometheus/{}.json", name.replace(':', "_")),
                serde_json::to_vec(&doc).expect("json"),
            )
        })
        .collect();
    let bytes = zip(&files, true);
    let loaded = load(
        Input::Bytes {
            name: "from-prometheus.zip",
            bytes: &bytes,
            mtime_ms: None,
        },
        &Options::default(),
    )
    .expect("loads");
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity == vllm_lens_core::Severity::Info),
        "{:?}",
        loaded.diagnostics
    );
    assert_eq!(loaded.scrape_files, files.len(), "{:?}", loaded.diagnostics);
    assert_eq!(loaded.store.points(), store.points());
    let meta = BundleMeta::default();
    let a = analyse(&original, &meta, &Settings::default()).expect("report");
    let b = analyse(&loaded, &meta, &Settings::default()).expect("report");
    assert_eq!(a.summary.latency, b.summary.latency);
    assert_eq!(a.summary.efficiency, b.summary.efficiency);
    assert_eq!(a.summary.gpu, b.summary.gpu);
    assert_eq!(
        a.slo
            .iter()
            .map(|s| (s.id, s.status, s.value))
            .collect::<Vec<_>>(),
        b.slo
            .iter()
            .map(|s| (s.id, s.status, s.value))
            .collect::<Vec<_>>()
    );
    assert_eq!(b.deployment.replicas.len(), 1);
}
