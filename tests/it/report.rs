//! The report model on every sample: what an expert must and must not read
//! in it (`samples/<name>.expect.json`: verdict, phases, SLO statuses,
//! findings, the only recommendations allowed, each justified by the
//! ground truth), the reference figures per phase against the truth, the
//! contradiction rules on every sample under several objectives, and the
//! JSON against its documented schema.

use serde_json::Value;
use vllm_lens_core::analysis::model::{SloStatus, VerdictStatus};
use vllm_lens_core::analysis::{
    Addresses, BundleMeta, FindingId, PhaseKind, QualityKind, Report, Settings, SloId,
    SloThresholds, TimelineKind, analyse, json_schema,
};

use crate::engine::load_sample;
use crate::support::{SAMPLES, root, sample_report};

fn report(name: &str) -> Report {
    sample_report(name, &Settings::default())
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

/// The windows an offered alert rule (by name) would have fired in.
fn alert_fired(r: &Value, alert: &str) -> Option<u64> {
    r["alerts"]
        .as_array()
        .expect("alerts")
        .iter()
        .chain(
            r["recommendations"]
                .as_array()
                .expect("recs")
                .iter()
                .flat_map(|x| x["snippets"].as_array().expect("snippets")),
        )
        .find(|s| s["name"] == alert)
        .and_then(|s| s["check"]["windows_fired"].as_u64())
}

/// True when `kinds` matches `pattern`, whose entries ending in `?` may be
/// absent.
fn phases_match(kinds: &[&str], pattern: &[&str]) -> bool {
    match (kinds.first(), pattern.first()) {
        (None, None) => true,
        (_, None) => false,
        (k, Some(p)) => {
            if let Some(optional) = p.strip_suffix('?') {
                (k == Some(&optional) && phases_match(&kinds[1..], &pattern[1..]))
                    || phases_match(kinds, &pattern[1..])
            } else {
                k == Some(p) && phases_match(&kinds[1..], &pattern[1..])
            }
        }
    }
}

/// Every id an expectation names exists.
fn check_ids(name: &str, expect: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let lists = ["must_fire", "must_not_fire"];
    for list in lists {
        for id in expect[list].as_array().expect("list") {
            let id = id.as_str().expect("string");
            let ok = if let Some(rec) = id.strip_prefix("rec:") {
                crate::support::known_rec(rec)
            } else if let Some(kind) = id.strip_prefix("timeline:") {
                TimelineKind::parse(kind).is_some()
            } else if let Some(kind) = id.strip_prefix("quality:") {
                QualityKind::parse(kind).is_some()
            } else if id.starts_with("alert:") {
                true
            } else {
                FindingId::parse(id.split('=').next().unwrap_or(id)).is_some()
            };
            if !ok {
                problems.push(format!("{name}: {list} names `{id}`, which does not exist"));
            }
        }
    }
    for list in ["recommendations_allowed", "recommendations_first"] {
        for id in expect[list].as_array().into_iter().flatten() {
            if !crate::support::known_rec(id.as_str().expect("string")) {
                problems.push(format!("{name}: {list} names `{id}`, which does not exist"));
            }
        }
    }
    for id in expect["slo"].as_object().expect("slo").keys() {
        if SloId::parse(id).is_none() {
            problems.push(format!("{name}: SLO `{id}` does not exist"));
        }
    }
    for kind in expect["phases"].as_array().expect("phases") {
        let kind = kind.as_str().expect("string").trim_end_matches('?');
        if PhaseKind::parse(kind).is_none() {
            problems.push(format!("{name}: phase kind `{kind}` does not exist"));
        }
    }
    problems
}

/// Each sample's report says what an expert must read in it and nothing
/// the ground truth contradicts: `samples/<name>.expect.json` gives the
/// verdict, the phases, every SLO status, findings and events that must and
/// must not fire, the only recommendations allowed (anything else is
/// generic advice), which come first, and why (`because`, from the truth).
#[test]
fn every_sample_reads_as_its_ground_truth_says() {
    let mut problems = Vec::new();
    for name in SAMPLES {
        let path = root().join(format!("samples/{name}.expect.json"));
        let expect: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("expect file")).expect("json");
        problems.extend(check_ids(name, &expect));
        assert!(
            expect["because"].as_object().is_some_and(|b| !b.is_empty()),
            "{name}: every expectation file says why"
        );
        let r = serde_json::to_value(report(name)).expect("serialises");
        let fired = fired(&r);
        if r["verdict"]["status"] != expect["verdict"] {
            problems.push(format!(
                "{name}: verdict {} ({}), want {}",
                r["verdict"]["status"], r["verdict"]["headline"], expect["verdict"]
            ));
        }
        let kinds: Vec<&str> = r["phases"]
            .as_array()
            .expect("phases")
            .iter()
            .map(|p| p["kind"].as_str().expect("kind"))
            .collect();
        let pattern: Vec<&str> = expect["phases"]
            .as_array()
            .expect("phases")
            .iter()
            .map(|p| p.as_str().expect("kind"))
            .collect();
        if !phases_match(&kinds, &pattern) {
            problems.push(format!("{name}: phases {kinds:?}, want {pattern:?}"));
        }
        for id in expect["must_fire"].as_array().expect("must_fire") {
            let id = id.as_str().expect("string");
            if let Some(alert) = id.strip_prefix("alert:") {
                let (alert, want) = alert.split_once(['=', '>']).expect("alert:NAME=N or >N");
                let n: u64 = want.parse().expect("a count");
                let got = alert_fired(&r, alert);
                let ok = match (id.contains('>'), got) {
                    (true, Some(g)) => g > n,
                    (false, Some(g)) => g == n,
                    (_, None) => false,
                };
                if !ok {
                    problems.push(format!("{name}: {id}: the alert fired in {got:?} windows"));
                }
            } else if !fired.iter().any(|f| f == id) {
                problems.push(format!("{name}: {id} did not fire"));
            }
        }
        for id in expect["must_not_fire"].as_array().expect("must_not_fire") {
            let id = id.as_str().expect("string");
            if fired.iter().any(|f| f == id) {
                problems.push(format!("{name}: {id} fired"));
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
                problems.push(format!("{name}: SLO {id}: {got:?}, want {want}"));
            }
        }
        let allowed: Vec<&str> = expect["recommendations_allowed"]
            .as_array()
            .expect("recommendations_allowed")
            .iter()
            .map(|x| x.as_str().expect("id"))
            .collect();
        let recs: Vec<&str> = r["recommendations"]
            .as_array()
            .expect("recs")
            .iter()
            .map(|x| x["id"].as_str().expect("id"))
            .collect();
        for rec in &recs {
            if !allowed.contains(rec) {
                problems.push(format!("{name}: recommendation {rec} is not allowed here"));
            }
        }
        if let Some(first) = expect["recommendations_first"].as_array() {
            let first: Vec<&str> = first.iter().map(|x| x.as_str().expect("id")).collect();
            let top: Vec<&str> = recs.iter().take(first.len()).copied().collect();
            let mut a = top.clone();
            let mut b = first.clone();
            a.sort_unstable();
            b.sort_unstable();
            if a != b {
                problems.push(format!(
                    "{name}: the first recommendations are {top:?}, want {first:?} (any order)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
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
        .filter(|x| x.key.replica.is_fleet())
        .collect();
    let eff: Vec<_> = r
        .rows
        .efficiency
        .iter()
        .filter(|x| x.key.replica.is_fleet())
        .collect();
    let wl: Vec<_> = r
        .rows
        .workload
        .iter()
        .filter(|x| x.key.replica.is_fleet())
        .collect();
    let mem: Vec<_> = r
        .rows
        .memory
        .iter()
        .filter(|x| x.key.replica.is_fleet())
        .collect();
    let gpu: Vec<_> = r
        .rows
        .gpu
        .iter()
        .filter(|x| x.key.replica.is_fleet())
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
        assert_eq!(r["schema_version"], 2);
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
    assert!(
        r.deployment
            .gpu_to_replica
            .values()
            .any(|v| v.as_str() == "vllm-0")
    );
    assert!(
        r.deployment
            .gpu_to_replica
            .values()
            .any(|v| v.as_str() == "vllm-1")
    );
    for replica in ["fleet", "vllm-0", "vllm-1"] {
        assert_eq!(
            r.rows
                .efficiency
                .iter()
                .filter(|x| x.key.replica.as_str() == replica)
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
            .filter(|x| x.key.replica.as_str() == replica)
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
    assert!(r.rows.gpu.iter().any(|x| x.gpu.is_all()));
}

/// `a10g-qwen3b-ramp` reports its 8-user and 32-user phases, and each
/// phase's figures match the ground truth within ±10 % (absolute for queue
/// time, which is 0): Step 1 figures as means over the phase, Step 5–6
/// figures as per-minute maxima, as in the guide.
#[test]
fn ramp_phases_match_the_truth() {
    let r = report("a10g-qwen3b-ramp");
    let truth: Value = serde_json::from_slice(
        &std::fs::read(root().join("samples/a10g-qwen3b-ramp.truth.json")).expect("truth"),
    )
    .expect("json");
    let windows = truth["windows"].as_array().expect("windows");
    let start = truth["start_ms"].as_i64().expect("start");
    let steady: Vec<_> = r
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Steady)
        .collect();
    assert_eq!(steady.len(), 2, "{:?}", r.phases);
    let fleet_gpu = |t: i64| {
        r.rows
            .gpu
            .iter()
            .find(|x| x.key.replica.is_fleet() && x.gpu.is_all() && x.key.window_start_ms == t)
            .map(|x| x.fields.clone())
    };
    let fleet_mem = |t: i64| {
        r.rows
            .memory
            .iter()
            .find(|x| x.key.replica.is_fleet() && x.key.window_start_ms == t)
            .map(|x| x.fields.clone())
    };
    for (p, users, minutes) in [(steady[0], 8.0, 0..5), (steady[1], 32.0, 5..10)] {
        let in_flight = p.in_flight_avg.expect("in flight");
        assert!(
            (in_flight - users).abs() <= 0.1 * users + 2.5,
            "phase at {users} users reads {in_flight} in flight"
        );
        // The truth over the phase's own minutes (a ramp window may be
        // left out of it).
        let first = ((p.start_ms - start) / 60_000) as usize;
        let last = ((p.end_ms - start) / 60_000) as usize;
        let mine: Vec<&Value> = windows[first.max(minutes.start)..last.min(minutes.end)]
            .iter()
            .collect();
        let mean =
            |k: &str| mine.iter().map(|w| w[k].as_f64().expect(k)).sum::<f64>() / mine.len() as f64;
        let max = |k: &str| {
            mine.iter()
                .map(|w| w[k].as_f64().expect(k))
                .fold(f64::MIN, f64::max)
        };
        let l = &p.figures.latency;
        let e = &p.figures.efficiency;
        let near = |what: &str, got: Option<f64>, want: f64, abs: f64| {
            let got = got.unwrap_or_else(|| panic!("{users} users: {what} missing"));
            let tol = (0.10 * want.abs()).max(abs);
            assert!(
                (got - want).abs() <= tol,
                "{users} users: {what} = {got:.3}, truth {want:.3} ± {tol:.3}"
            );
        };
        near("TTFT mean ms", l.ttft_ms, mean("ttft_ms"), 0.0);
        near(
            "inter-token mean ms",
            l.inter_token_ms,
            mean("inter_token_ms"),
            0.0,
        );
        near("decode mean ms", l.decode_ms, mean("decode_ms"), 0.0);
        near("queue mean ms", l.queue_ms, mean("queue_ms"), 5.0);
        near(
            "generated tokens/s",
            e.gen_tokens_per_sec,
            mean("gen_tokens_per_sec"),
            0.0,
        );
        // Step 5–6: per-minute maxima of the phase's windows.
        let times: Vec<i64> = (0..(p.end_ms - p.start_ms) / 60_000)
            .map(|i| p.start_ms + i * 60_000)
            .collect();
        let per_minute = |f: &dyn Fn(i64) -> Option<f64>| {
            times
                .iter()
                .filter_map(|t| f(*t))
                .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))
        };
        near(
            "tensor active % (per-minute max)",
            per_minute(&|t| fleet_gpu(t).and_then(|g| g.tensor_active_pct_avg)),
            max("tensor_active_pct"),
            0.0,
        );
        near(
            "DRAM active % (per-minute max)",
            per_minute(&|t| fleet_gpu(t).and_then(|g| g.dram_active_pct_avg)),
            max("dram_active_pct"),
            0.0,
        );
        near(
            "tokens/J (per-minute max)",
            per_minute(&|t| fleet_mem(t).and_then(|m| m.tokens_per_joule)),
            max("tokens_per_joule"),
            0.0,
        );
        // The phase's own means too.
        near(
            "tensor active % (phase mean)",
            p.figures.gpu.tensor_active_pct_avg,
            mean("tensor_active_pct"),
            0.0,
        );
        near(
            "tokens/J (phase)",
            p.figures.memory.tokens_per_joule,
            mean("tokens_per_joule"),
            0.0,
        );
    }
}

/// The contradiction rules (docs/report-schema.md, "Recommendations") hold
/// on every sample under several sets of objectives, read back from the
/// JSON independently of the code that applies them.
#[test]
fn recommendations_never_contradict_the_scorecard() {
    let variants: [(&str, SloThresholds); 4] = [
        ("default", SloThresholds::default()),
        (
            "strict",
            SloThresholds {
                ttft_p95_ms: 100.0,
                itl_p95_ms: 20.0,
                queue_concurrency: 4.0,
                error_abort_pct: 0.1,
                ..SloThresholds::default()
            },
        ),
        (
            "lax",
            SloThresholds {
                ttft_p95_ms: 60_000.0,
                itl_p95_ms: 1000.0,
                queue_concurrency: 64.0,
                error_abort_pct: 10.0,
                ..SloThresholds::default()
            },
        ),
        (
            "itl-only",
            SloThresholds {
                ttft_p95_ms: 60_000.0,
                itl_p95_ms: 10.0,
                ..SloThresholds::default()
            },
        ),
    ];
    let mut problems = Vec::new();
    let mut recs_seen = 0;
    for name in SAMPLES {
        let loaded = load_sample(name);
        for (label, slo) in &variants {
            let r = analyse(
                &loaded,
                &BundleMeta::default(),
                &Settings {
                    slo: *slo,
                    ..Settings::default()
                },
            )
            .expect("report");
            let status = |id: SloId| r.slo.iter().find(|s| s.id == id).map(|s| s.status);
            let doubt = |id: SloId| {
                matches!(
                    status(id),
                    Some(SloStatus::Fail) | Some(SloStatus::CannotTell)
                )
            };
            let kv = r.summary.efficiency.kv_cache_pct;
            let preempting = r
                .summary
                .efficiency
                .preemptions_per_min
                .is_some_and(|p| p > 0.0);
            let queued = r
                .slo
                .iter()
                .find(|s| s.id == SloId::QueueAtConcurrency)
                .and_then(|s| s.queueing_starts_at)
                .is_some();
            for rec in &r.recommendations {
                recs_seen += 1;
                let at = format!("{name} ({label}): {}", rec.id);
                let action = rec.action.to_lowercase();
                let lowers = |flag: &str| {
                    action.split(['.', ';']).any(|s| {
                        s.contains(flag)
                            && (s.contains("lower")
                                || s.contains("smaller")
                                || s.contains("reduce"))
                    })
                };
                for a in &rec.addresses {
                    if let Some(s) = a.slo()
                        && !doubt(s)
                    {
                        problems.push(format!("{at}: C1 addresses {s}, which is {:?}", status(s)));
                    }
                }
                if rec.addresses.is_empty() {
                    problems.push(format!("{at}: addresses nothing"));
                }
                // Its own evidence is in the capture.
                if !rec.evidence.iter().any(|e| e.value.is_some()) {
                    problems.push(format!("{at}: no evidence with a figure"));
                }
                if rec.id == crate::support::rec("stop_optimising_prefill") && doubt(SloId::TtftP95)
                {
                    problems.push(format!("{at}: C2 while TTFT is in doubt"));
                }
                if rec.id == crate::support::rec("raise_max_num_seqs")
                    && (kv.is_some_and(|k| k >= 90.0) || preempting)
                {
                    problems.push(format!("{at}: C3 with the KV cache full"));
                }
                if [
                    crate::support::rec("move_to_kserve"),
                    crate::support::rec("set_autoscaling_trigger"),
                ]
                .contains(&rec.id)
                    && !queued
                    && kv.is_none_or(|k| k < 60.0)
                {
                    problems.push(format!("{at}: C4 without pressure"));
                }
                if doubt(SloId::TtftP95) && lowers("--max-num-batched-tokens") {
                    problems.push(format!("{at}: C5 smaller chunks while TTFT is in doubt"));
                }
                if (doubt(SloId::QueueAtConcurrency) || doubt(SloId::TtftP95))
                    && lowers("--max-num-seqs")
                {
                    problems.push(format!(
                        "{at}: C6 fewer sequences while queueing or TTFT is in doubt"
                    ));
                }
            }
            // When every objective passes, no recommendation addresses one
            // and the report says so first.
            if r.verdict.status == VerdictStatus::Healthy {
                assert!(
                    r.verdict.headline.starts_with("Healthy"),
                    "{name} ({label})"
                );
            }
            if r.slo.iter().all(|s| s.status == SloStatus::Pass) {
                for rec in &r.recommendations {
                    if rec.addresses.iter().any(|a| a.slo().is_some()) {
                        problems.push(format!(
                            "{name} ({label}): {} addresses an objective of a passing report",
                            rec.id
                        ));
                    }
                }
            }
            // Failing means an objective fails; at risk never hides one.
            let any_fail = r.slo.iter().any(|s| s.status == SloStatus::Fail);
            assert_eq!(
                r.verdict.status == VerdictStatus::Failing,
                any_fail,
                "{name} ({label}): {}",
                r.verdict.headline
            );
        }
    }
    assert!(
        recs_seen >= 40,
        "only {recs_seen} recommendations exercised"
    );
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}

/// docs/report-schema.md lists every id in its tables (first column, in
/// backticks), and names no id that does not exist.
#[test]
fn schema_doc_names_every_id_and_only_real_ones() {
    let doc = std::fs::read_to_string(root().join("docs/report-schema.md")).expect("doc");
    // Rows of the id tables: those headed `| id |`, `| kind |` or `| target |`.
    let mut listed: Vec<&str> = Vec::new();
    let mut in_table = false;
    for line in doc.lines() {
        if ["| id |", "| kind |", "| target |"]
            .iter()
            .any(|h| line.starts_with(h))
        {
            in_table = true;
        } else if !line.starts_with('|') {
            in_table = false;
        } else if in_table
            && let Some(id) = line.strip_prefix("| `").and_then(|l| l.split('`').next())
        {
            listed.push(id);
        }
    }
    let exists = |id: &str| {
        FindingId::parse(id).is_some()
            || crate::support::known_rec(id)
            || SloId::parse(id).is_some()
            || Addresses::parse(id).is_some()
            || PhaseKind::parse(id).is_some()
            || TimelineKind::parse(id).is_some()
            || QualityKind::parse(id).is_some()
            || vllm_lens_core::analysis::ids::GpuFaultKind::parse(id).is_some()
            || vllm_lens_core::analysis::ids::LookNextId::parse(id).is_some()
            || vllm_lens_core::analysis::ids::FollowUpId::parse(id).is_some()
    };
    let unknown: Vec<&&str> = listed.iter().filter(|id| !exists(id)).collect();
    assert!(
        unknown.is_empty(),
        "docs/report-schema.md names ids that do not exist: {unknown:?}"
    );
    let mut missing: Vec<&str> = Vec::new();
    missing.extend(FindingId::ALL.iter().map(|x| x.as_str()));
    missing.extend(
        vllm_lens_core::analysis::rules::RULES
            .iter()
            .map(|x| x.id.as_str()),
    );
    missing.extend(SloId::ALL.iter().map(|x| x.as_str()));
    missing.extend(Addresses::ALL.iter().map(|x| x.as_str()));
    missing.extend(PhaseKind::ALL.iter().map(|x| x.as_str()));
    missing.extend(TimelineKind::ALL.iter().map(|x| x.as_str()));
    missing.extend(QualityKind::ALL.iter().map(|x| x.as_str()));
    missing.extend(
        vllm_lens_core::analysis::ids::GpuFaultKind::ALL
            .iter()
            .map(|x| x.as_str()),
    );
    missing.extend(
        vllm_lens_core::analysis::ids::LookNextId::ALL
            .iter()
            .map(|x| x.as_str()),
    );
    missing.extend(
        vllm_lens_core::analysis::ids::FollowUpId::ALL
            .iter()
            .map(|x| x.as_str()),
    );
    missing.retain(|id| !listed.contains(id));
    assert!(
        missing.is_empty(),
        "docs/report-schema.md does not list: {missing:?}"
    );
}
