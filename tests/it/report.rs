//! The report model on every sample: golden expectations of the findings,
//! SLO verdicts, recommendations and timeline events that must and must not
//! fire (`samples/<name>.expect.json`), the reference figures of the
//! simulator issue, and the JSON against its documented schema.

use serde_json::Value;
use vllm_lens_core::analysis::{BundleMeta, Report, Settings, analyse, json_schema};

use crate::engine::load_sample;
use crate::support::root;

const SAMPLES: [&str; 10] = [
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

fn report(name: &str) -> Report {
    let loaded = load_sample(name);
    analyse(
        &loaded,
        &BundleMeta {
            name: format!("{name}.zip"),
            sha256: None,
        },
        &Settings::default(),
    )
    .expect("report")
}

/// Every id that fired, in the expectation files' vocabulary:
/// `finding.id=severity`, `rec:id`, `timeline:kind`, `quality:kind`.
fn fired(r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for a in r["analyses"].as_array().expect("analyses") {
        for f in a["findings"].as_array().expect("findings") {
            let id = f["id"].as_str().expect("id");
            out.push(id.to_string());
            out.push(format!(
                "{id}={}",
                f["severity"].as_str().expect("severity")
            ));
        }
    }
    for x in r["recommendations"].as_array().expect("recs") {
        out.push(format!("rec:{}", x["id"].as_str().expect("id")));
    }
    for x in r["timeline"].as_array().expect("timeline") {
        out.push(format!("timeline:{}", x["kind"].as_str().expect("kind")));
    }
    for x in r["data_quality"]["notes"].as_array().expect("notes") {
        out.push(format!("quality:{}", x["kind"].as_str().expect("kind")));
    }
    out
}

#[test]
fn every_sample_fires_what_it_must_and_nothing_it_must_not() {
    for name in SAMPLES {
        let path = root().join(format!("samples/{name}.expect.json"));
        let expect: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("expect file")).expect("json");
        let r = serde_json::to_value(report(name)).expect("serialises");
        let fired = fired(&r);
        let mut problems = Vec::new();
        for id in expect["must_fire"].as_array().expect("must_fire") {
            let id = id.as_str().expect("string");
            if !fired.iter().any(|f| f == id) {
                problems.push(format!("{id} did not fire"));
            }
        }
        for id in expect["must_not_fire"].as_array().expect("must_not_fire") {
            let id = id.as_str().expect("string");
            if fired.iter().any(|f| f == id) {
                problems.push(format!("{id} fired"));
            }
        }
        for (id, want) in expect["slo"].as_object().expect("slo") {
            let got = r["slo"]
                .as_array()
                .expect("slo")
                .iter()
                .find(|s| s["id"] == id.as_str())
                .map(|s| s["status"].clone());
            if got.as_ref() != Some(want) {
                problems.push(format!("SLO {id}: {got:?}, want {want}"));
            }
        }
        assert!(problems.is_empty(), "{name}:\n  {}", problems.join("\n  "));
    }
}

fn within(what: &str, w: usize, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("window {w}: {what} is missing"));
    let tol = if want == 0.0 { 1.0 } else { want.abs() * 0.10 };
    assert!(
        (got - want).abs() <= tol,
        "window {w}: {what} = {got:.3}, want {want} ± 10 %"
    );
}

/// The reference deployment's windows land within ±10 % of the figures in
/// the simulator issue ([2/10]), read by the whole pipeline from the
/// scrapes (fleet rows). Minute 0 has no scrape before it and minute 5
/// holds the ramp; both are skipped. KV at 32 users is ≈ 1 %, not 2.8 %
/// (see samples/README.md).
#[test]
fn reference_figures_from_the_report() {
    let r = report("a10g-qwen3b-ramp");
    let lat: Vec<_> = r
        .rows
        .latency
        .iter()
        .filter(|x| x.key.replica == "fleet")
        .collect();
    let eff: Vec<_> = r
        .rows
        .efficiency
        .iter()
        .filter(|x| x.key.replica == "fleet")
        .collect();
    let wl: Vec<_> = r
        .rows
        .workload
        .iter()
        .filter(|x| x.key.replica == "fleet")
        .collect();
    let mem: Vec<_> = r
        .rows
        .memory
        .iter()
        .filter(|x| x.key.replica == "fleet")
        .collect();
    let gpu: Vec<_> = r
        .rows
        .gpu
        .iter()
        .filter(|x| x.key.replica == "fleet")
        .collect();
    assert_eq!(lat.len(), 10);
    for w in 1..5 {
        let (l, e, k) = (&lat[w].fields, &eff[w].fields, &wl[w].fields);
        within("TTFT ms", w, l.ttft_ms, 51.0);
        within("inter-token ms", w, l.inter_token_ms, 16.0);
        within("prefill ms", w, l.prefill_ms, 38.0);
        within("decode ms", w, l.decode_ms, 1665.0);
        within("queue ms", w, l.queue_ms, 0.0);
        within("prefix-cache hit %", w, e.prefix_cache_hit_pct, 32.0);
        within("tokens/iteration", w, e.tokens_per_iteration, 10.4);
        within("generated tokens/s", w, e.gen_tokens_per_sec, 480.0);
        within("KV % (mean)", w, e.kv_cache_pct_avg, 0.25);
        within("requests/min", w, k.requests_per_min, 280.0);
        within("prompt tokens/request", w, k.avg_prompt_tokens, 50.0);
        within("generated tokens/request", w, k.avg_generated_tokens, 104.0);
    }
    for w in 6..10 {
        let (e, m) = (&eff[w].fields, &mem[w].fields);
        let g = gpu
            .iter()
            .find(|x| x.key.window_start_ms == eff[w].key.window_start_ms)
            .map(|x| &x.fields);
        let any = r
            .rows
            .gpu
            .iter()
            .find(|x| x.key.window_start_ms == eff[w].key.window_start_ms)
            .map(|x| &x.fields)
            .expect("a GPU row");
        let g = g.unwrap_or(any);
        within("generated tokens/s", w, e.gen_tokens_per_sec, 1627.0);
        within("VRAM %", w, m.vram_used_pct, 94.0);
        within("GPU util %", w, g.gpu_util_pct_avg, 100.0);
        within("GR engine %", w, g.gr_engine_active_pct_avg, 99.8);
        within("tensor %", w, g.tensor_active_pct_avg, 16.6);
        within("DRAM %", w, g.dram_active_pct_avg, 80.4);
        within("power W", w, g.power_w_avg, 240.0);
        within("temperature °C", w, g.temp_c_avg, 73.0);
        within("tokens/W", w, m.tokens_per_watt, 6.8);
        let kv = e.kv_cache_pct_avg.expect("KV");
        assert!((0.8..1.2).contains(&kv), "window {w}: KV {kv}");
    }
}

/// `docs/report-schema.json` is generated from the model
/// (`UPDATE_EXPECT=1` rewrites it) and every sample's report validates
/// against it.
#[test]
fn reports_validate_against_the_documented_schema() {
    let path = root().join("docs/report-schema.json");
    let fresh = json_schema();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &fresh).expect("write schema");
    }
    let committed = std::fs::read_to_string(&path).expect("docs/report-schema.json");
    assert!(
        committed == fresh,
        "docs/report-schema.json is stale; UPDATE_EXPECT=1 cargo test --test it report:: rewrites it"
    );
    let schema: Value = serde_json::from_str(&committed).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    for name in SAMPLES {
        let r = serde_json::to_value(report(name)).expect("serialises");
        let errors: Vec<String> = validator
            .iter_errors(&r)
            .take(5)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{name}: {}", errors.join("\n"));
        assert_eq!(r["schema_version"], 1);
    }
    // The schema is not vacuous: a report missing its scorecard fails.
    let mut bad = serde_json::to_value(report("truncation")).expect("serialises");
    bad.as_object_mut().expect("object").remove("slo");
    assert!(!validator.is_valid(&bad));
}

/// Missing inputs are null, never 0: the V0 sample has no HTTP counts and
/// no windowed prefix-cache counters.
#[test]
fn missing_inputs_are_null() {
    let r = serde_json::to_value(report("v0-legacy")).expect("serialises");
    let rows = r["rows"]["efficiency"].as_array().expect("rows");
    assert!(rows.iter().all(|x| x["prefix_cache_hit_pct"].is_null()));
    let out = r["rows"]["outcomes"].as_array().expect("rows");
    assert!(out.iter().all(|x| x["http_error_pct"].is_null()));
    assert!(r["summary"]["outcomes"]["http_error_pct"].is_null());
    let r = serde_json::to_value(report("no-prof-fields")).expect("serialises");
    assert!(r["summary"]["gpu"]["tensor_active_pct"].is_null());
    assert!(r["summary"]["gpu"]["gpu_util_pct"].is_number());
}

/// Two replicas: rows per replica and for the fleet; GPUs mapped to their
/// replicas through the manifest.
#[test]
fn replicas_and_gpus_are_mapped() {
    let r = report("two-replicas-rr");
    assert_eq!(r.deployment.replicas, ["vllm-0", "vllm-1"]);
    assert_eq!(r.deployment.gpu_to_replica.len(), 2);
    assert!(r.deployment.gpu_to_replica.values().any(|v| v == "vllm-0"));
    assert!(r.deployment.gpu_to_replica.values().any(|v| v == "vllm-1"));
    for replica in ["fleet", "vllm-0", "vllm-1"] {
        assert_eq!(
            r.rows
                .efficiency
                .iter()
                .filter(|x| x.key.replica == replica)
                .count(),
            10,
            "{replica}"
        );
    }
    // The fleet's generated tokens/s is the sum of the replicas'.
    let at = |replica: &str, w: usize| {
        r.rows
            .efficiency
            .iter()
            .filter(|x| x.key.replica == replica)
            .nth(w)
            .and_then(|x| x.fields.gen_tokens_per_sec)
            .expect("figure")
    };
    for w in 1..10 {
        let sum = at("vllm-0", w) + at("vllm-1", w);
        assert!((at("fleet", w) - sum).abs() < 1e-6 * sum, "window {w}");
    }
    let r = report("no-prof-fields");
    assert_eq!(r.deployment.gpus, 2);
    assert!(r.rows.gpu.iter().any(|x| x.gpu == "all"));
}
