//! The `vllm-lens` binary as a user runs it: commands, JSON shape, exit
//! codes and messages.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::{capture_80, temp_dir, write_tree, zip};

fn lens(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vllm-lens"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = cmd.spawn().expect("vllm-lens runs");
    if let Some(bytes) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(bytes)
            .expect("write stdin");
    }
    child.wait_with_output().expect("vllm-lens finishes")
}

fn json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

#[test]
fn inspect_json_has_the_documented_fields() {
    let dir = temp_dir("cli-inspect-json");
    let path = dir.join("capture.zip");
    std::fs::write(&path, zip(&capture_80(), true)).expect("write zip");
    let v = json(&lens(
        &["inspect", path.to_str().expect("utf-8 path"), "--json"],
        None,
    ));
    let targets = v["targets"].as_array().expect("targets[]");
    assert_eq!(targets.len(), 2);
    for t in targets {
        for key in ["name", "kind", "scrapes", "first_ms", "last_ms"] {
            assert!(t.get(key).is_some(), "targets[].{key} missing in {t}");
        }
        assert_eq!(t["scrapes"], 40);
        assert_eq!(t["first_ms"], 1_767_225_600_000i64);
        assert_eq!(t["last_ms"], 1_767_225_600_000i64 + 39 * 15_000);
    }
    assert_eq!(targets[0]["kind"], "dcgm");
    assert_eq!(targets[1]["kind"], "vllm");
    let families = v["families"].as_array().expect("families[]");
    let ttft = families
        .iter()
        .find(|f| f["name"] == "vllm:time_to_first_token_seconds")
        .expect("TTFT family listed");
    assert_eq!(ttft["type"], "histogram");
    assert_eq!(ttft["series"], 50);
    assert!(
        v["diagnostics"]
            .as_array()
            .expect("diagnostics[]")
            .is_empty()
    );
    assert_eq!(v["samples"], 29_280);
}

#[test]
fn a_folder_reads_like_the_zip_of_it() {
    let dir = temp_dir("cli-inspect-dir");
    write_tree(&dir, &capture_80());
    let v = json(&lens(
        &["inspect", dir.to_str().expect("utf-8 path"), "--json"],
        None,
    ));
    assert_eq!(v["bundle"]["container"], "files");
    assert_eq!(v["samples"], 29_280);
    assert_eq!(v["targets"][1]["scrapes"], 40);
}

#[test]
fn stdin_is_a_single_scrape() {
    let text =
        b"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3 1767225600000\n";
    let v = json(&lens(&["inspect", "-", "--json"], Some(text)));
    assert_eq!(v["targets"][0]["kind"], "vllm");
    assert_eq!(v["targets"][0]["first_ms"], 1_767_225_600_000i64);
}

#[test]
fn text_output_lists_targets_and_diagnostics() {
    let dir = temp_dir("cli-inspect-text");
    write_tree(
        &dir,
        &[(
            "vllm/1767225600000.prom".into(),
            crate::support::read("expo/three-bad-lines.prom").into_bytes(),
        )],
    );
    let out = lens(&["inspect", dir.to_str().expect("utf-8 path")], None);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("targets (1)"), "{text}");
    assert!(
        text.contains("vllm/1767225600000.prom:3: malformed labels"),
        "{text}"
    );
    assert!(text.contains("diagnostics (3)"), "{text}");
}

#[test]
fn unusable_input_exits_2_and_names_the_file() {
    let dir = temp_dir("cli-inspect-bad");
    let path = dir.join("broken.zip");
    let z = zip(&capture_80(), true);
    std::fs::write(&path, &z[..z.len() / 3]).expect("write");
    let out = lens(&["inspect", path.to_str().expect("utf-8 path")], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.zip: damaged archive"), "{err}");

    let out = lens(&["inspect", "/nonexistent/capture.zip"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/nonexistent/capture.zip: cannot be opened")
    );

    let empty = dir.join("empty.zip");
    std::fs::write(&empty, zip(&[], true)).expect("write");
    let out = lens(&["inspect", empty.to_str().expect("utf-8 path")], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no scrapes found"));
}

#[test]
fn limits_are_configurable_from_the_command_line() {
    let dir = temp_dir("cli-limits");
    let path = dir.join("capture.zip");
    std::fs::write(&path, zip(&capture_80(), true)).expect("write zip");
    let out = lens(
        &[
            "inspect",
            path.to_str().expect("utf-8 path"),
            "--max-bytes",
            "1MiB",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("beyond the 1 MiB limit"));
    let out = lens(
        &[
            "inspect",
            path.to_str().expect("utf-8 path"),
            "--max-files",
            "10",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

fn sample(name: &str) -> String {
    crate::support::root()
        .join(format!("samples/{name}.zip"))
        .to_string_lossy()
        .into_owned()
}

/// `report --json FILE` writes the model; the text form lists the scorecard.
#[test]
fn report_writes_the_model_and_prints_the_scorecard() {
    let dir = temp_dir("cli-report");
    let out = dir.join("report.json");
    let o = lens(
        &[
            "report",
            &sample("a10g-qwen3b-ramp"),
            "--json",
            out.to_str().expect("utf-8"),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("written")).expect("JSON");
    assert_eq!(v["schema_version"], 2);
    assert_eq!(
        v["slo"].as_array().expect("slo").len(),
        vllm_lens_core::analysis::SloId::ALL.len()
    );
    assert_eq!(v["bundle"]["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(v["verdict"]["status"], "healthy");
    let o = lens(&["report", &sample("a10g-qwen3b-ramp")], None);
    let text = String::from_utf8_lossy(&o.stdout);
    // The verdict is the first line.
    assert!(text.starts_with("HEALTHY  Healthy: "), "{text}");
    assert!(
        text.contains("SLO scorecard") && text.contains("pass"),
        "{text}"
    );
    assert!(text.contains("Raise the client's max_tokens"), "{text}");
}

/// Exit codes: 1 when an SLO fails under --fail-on-slo, 0 without it, 2 for
/// unusable input or a bad flag.
#[test]
fn report_exit_codes() {
    let saturated = sample("saturated");
    let o = lens(&["report", &saturated, "--fail-on-slo"], None);
    assert_eq!(o.status.code(), Some(1));
    let o = lens(&["report", &saturated], None);
    assert_eq!(o.status.code(), Some(0));
    // Loose enough SLOs pass.
    let o = lens(
        &[
            "report",
            &sample("a10g-qwen3b-ramp"),
            "--fail-on-slo",
            "--slo",
            "ttft-p95=2s",
            "--slo",
            "error-abort=1%",
            "--window",
            "5m",
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // `cannot_tell` is not a failure: v0-legacy's TTFT p95 lies between 250
    // and 500 ms, around the 300 ms objective.
    let v0 = sample("v0-legacy");
    let o = lens(&["report", &v0, "--fail-on-slo", "--json", "-"], None);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["slo"][0]["status"], "cannot_tell");
    assert_eq!(v["verdict"]["status"], "at_risk");
    assert_eq!(o.status.code(), Some(0));
    // The same capture fails once the objective is proven missed.
    let o = lens(
        &["report", &v0, "--fail-on-slo", "--slo", "ttft-p95=100ms"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let o = lens(&["report", &saturated, "--slo", "latency=3"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown SLO"));
    let o = lens(&["report", &saturated, "--window", "5s"], None);
    assert_eq!(o.status.code(), Some(2));
    let o = lens(&["report", "/nonexistent/bundle.zip"], None);
    assert_eq!(o.status.code(), Some(2));
}

/// `export --openmetrics` writes what promtool backfills.
#[test]
fn export_openmetrics_is_promtool_ready() {
    let dir = temp_dir("cli-export");
    let out = dir.join("capture.om");
    let o = lens(
        &[
            "export",
            &sample("pod-restart"),
            "--openmetrics",
            out.to_str().expect("utf-8"),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.ends_with("# EOF\n"));
    assert!(text.contains("# TYPE vllm:generation_tokens counter"));
    let has_promtool = Command::new("promtool")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_promtool {
        let o = Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&out)
            .arg(dir.join("data"))
            .output()
            .expect("promtool runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = lens(&["export", "/nonexistent.zip", "--openmetrics", "-"], None);
    assert_eq!(o.status.code(), Some(2));
}

/// `--redact`: no original hostname, pod, IP, GPU UUID or model name left
/// in the HTML, JSON, Markdown, text or OpenMetrics; the figures unchanged.
#[test]
fn redact_hides_identities_in_every_output() {
    let dir = temp_dir("cli-redact");
    let bundle = sample("two-replicas-rr");
    let (html, json, md) = (dir.join("r.html"), dir.join("r.json"), dir.join("r.md"));
    let o = lens(
        &[
            "report",
            &bundle,
            "--redact",
            "-o",
            html.to_str().expect("utf-8"),
            "--json",
            json.to_str().expect("utf-8"),
            "--md",
            md.to_str().expect("utf-8"),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = lens(&["report", &bundle, "--redact"], None);
    let om = lens(&["export", &bundle, "--redact", "--openmetrics", "-"], None);
    let plain = lens(&["report", &bundle, "--json", "-"], None);
    let plain_json: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("json");
    let secrets = [
        "ip-10-0-1-178.ec2.internal",
        "ip-10-0-2-162.ec2.internal",
        "vllm-0-cef937",
        "vllm-1-ba00c5",
        "nvidia-dcgm-exporter-2b63f",
        "10.0.1.40",
        "10.0.2.41",
        "b62440b0-1de0-ab52-0e78-6f7eb4543cf5",
        "229663d8-6cd1-7568-e40b-455ff55fe5ec",
        "Qwen/Qwen2.5-3B-Instruct",
    ];
    // They are really in the unredacted outputs.
    let unredacted = lens(&["export", &bundle, "--openmetrics", "-"], None);
    let all_plain =
        String::from_utf8_lossy(&unredacted.stdout).into_owned() + &plain_json.to_string();
    for s in secrets {
        assert!(
            all_plain.contains(s),
            "{s} is not in the bundle to begin with"
        );
    }
    let outputs = [
        std::fs::read_to_string(&html).expect("html"),
        std::fs::read_to_string(&json).expect("json"),
        std::fs::read_to_string(&md).expect("md"),
        String::from_utf8_lossy(&text.stdout).into_owned(),
        String::from_utf8_lossy(&om.stdout).into_owned(),
        vllm_lens_core::render::embed::read(&std::fs::read_to_string(&html).expect("html"))
            .expect("embedded"),
    ];
    for (i, out) in outputs.iter().enumerate() {
        for s in secrets {
            assert!(!out.contains(s), "output {i} still holds {s}");
        }
    }
    let redacted: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("json");
    assert_eq!(redacted["deployment"]["model"], "model-1");
    assert_eq!(
        redacted["summary"], plain_json["summary"],
        "figures are untouched"
    );
}

/// Loose scrapes named `<ms>-vllm.prom` make a target `vllm` whose
/// `instance` is `vllm`: redaction hides it where it stands alone and
/// leaves field and metric names whole (it used to panic here).
#[test]
fn redact_works_on_loose_files_named_after_their_target() {
    let dir = temp_dir("cli-redact-loose");
    for i in 0..4i64 {
        std::fs::write(
            dir.join(format!("{}-vllm.prom", 1_767_225_600_000 + i * 15_000)),
            format!(
                "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{model_name=\"tiny-llama\"}} {i}\n"
            ),
        )
        .expect("write");
    }
    let o = lens(
        &[
            "report",
            dir.to_str().expect("utf-8"),
            "--redact",
            "--json",
            "-",
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("tiny-llama"));
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["deployment"]["model"], "model-1");
    assert!(v["data_quality"]["vllm_version"].is_string());
    assert!(text.contains("vllm:num_requests_running"));
}

/// A report from stdin.
#[test]
fn report_reads_stdin() {
    let bytes = std::fs::read(sample("truncation")).expect("sample");
    let o = lens(&["report", "-", "--json", "-"], Some(&bytes));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["bundle"]["name"], "-");
    assert!(
        v["recommendations"]
            .as_array()
            .expect("recs")
            .iter()
            .any(|r| r["id"] == "raise_max_tokens")
    );
}

/// The facts `/metrics` cannot hold: `--model-bytes`, `--shared-prefix-tokens`
/// and `--gpu-hour-cost` reach the capacity model and are echoed.
#[test]
fn report_takes_the_users_facts() {
    let o = lens(
        &[
            "report",
            &sample("saturated"),
            "--model-bytes",
            "8GB",
            "--shared-prefix-tokens",
            "120",
            "--gpu-hour-cost",
            "0.8",
            "--json",
            "-",
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["settings"]["model_bytes"], 8e9);
    assert_eq!(v["settings"]["shared_prefix_tokens"], 120.0);
    assert_eq!(v["settings"]["gpu_hour_cost"], 0.8);
    let c = &v["capacity"];
    // 8 GB over 300 GB/s: 26.7 ms, under the 50 ms objective now.
    let floor = c["itl_floor_ms"].as_f64().expect("floor");
    assert!((floor - 8e9 / 300e9 * 1000.0).abs() < 0.05, "{floor}");
    assert_eq!(c["floor"]["weight_source"], "--model-bytes");
    assert!(c["prefix"]["ceiling_pct"].as_f64().is_some());
    assert!(
        c["economics"]["cost_per_million_generated"]
            .as_f64()
            .is_some_and(|x| x > 0.0)
    );
    let o = lens(
        &["report", &sample("saturated"), "--model-bytes", "lots"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
}
