//! The simulator (`crates/sim`): committed samples reproduce byte for byte,
//! every scrape parses cleanly, the model conserves what it counts, and the
//! reference scenario lands on the figures of issue [2/10].

use std::path::PathBuf;

use vllm_lens_core::bundle::{Input, Options, Severity, load};
use vllm_lens_expo::{Event, Parser};
use vllm_lens_sim::scenario::Scenario;
use vllm_lens_sim::truth::Window;
use vllm_lens_sim::{Generated, generate, zip_bundle};

/// The before/after pairs (`samples/pairs.json`).
const PAIRS: [&str; 4] = [
    "pair-max-tokens-before",
    "pair-max-tokens-after",
    "pair-fp8-before",
    "pair-fp8-after",
];

/// The committed scenarios (all but `day`, `week`, `fleet-hour`,
/// `fleet-day` and `week-export`, which are generated on demand).
fn committed() -> impl Iterator<Item = &'static str> {
    crate::support::SAMPLES.into_iter().chain(PAIRS)
}

fn scenario_path(name: &str) -> PathBuf {
    crate::support::root().join(format!("samples/scenarios/{name}.toml"))
}

fn scenario(name: &str) -> Scenario {
    let text =
        std::fs::read_to_string(scenario_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(name: &str) -> Generated {
    generate(
        scenario(name)
            .resolve()
            .unwrap_or_else(|e| panic!("{name}: {e}")),
    )
}

fn truth_json(g: &Generated) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(&g.truth).expect("truth serialises");
    v.push(b'\n');
    v
}

/// Every committed sample is what the generator makes today, byte for byte
/// (`UPDATE_SAMPLES=1` rewrites them), and stays under 3 MB.
#[test]
fn committed_samples_are_reproducible() {
    let root = crate::support::root().join("samples");
    let mut differ = Vec::new();
    for name in committed() {
        let g = run(name);
        let zip = zip_bundle(&g);
        let truth = truth_json(&g);
        let zip_path = root.join(format!("{name}.zip"));
        let truth_path = root.join(format!("{name}.truth.json"));
        if std::env::var_os("UPDATE_SAMPLES").is_some() {
            std::fs::write(&zip_path, &zip).expect("write sample");
            std::fs::write(&truth_path, &truth).expect("write truth");
        }
        if std::fs::read(&zip_path).ok() != Some(zip.clone())
            || std::fs::read(&truth_path).ok() != Some(truth)
        {
            differ.push(name);
        }
        assert!(zip.len() < 3_000_000, "{name}: {} bytes", zip.len());
    }
    assert!(
        differ.is_empty(),
        "samples differ from the generator: {differ:?}; UPDATE_SAMPLES=1 cargo test --test it sim:: rewrites them"
    );
}

/// The same scenario twice gives the same bytes.
#[test]
fn generation_is_deterministic() {
    let a = zip_bundle(&run("errors-aborts"));
    let b = zip_bundle(&run("errors-aborts"));
    assert!(a == b);
}

/// Every emitted scrape parses with zero diagnostics, and every bundle
/// loads with no warning or error.
#[test]
fn every_scrape_parses_cleanly() {
    for name in committed() {
        let g = run(name);
        let mut samples = 0;
        for (path, bytes) in &g.files {
            if !path.ends_with(".prom") {
                continue;
            }
            let text = std::str::from_utf8(bytes).expect("utf-8");
            let mut parser = Parser::new(text);
            for ev in parser.by_ref() {
                if let Event::Sample(_) = ev {
                    samples += 1;
                }
            }
            let diags = parser.diagnostics();
            assert!(diags.is_empty(), "{name}/{path}: {diags:?}");
        }
        assert!(samples > 10_000, "{name}: {samples} samples");
        let zip = zip_bundle(&g);
        let loaded = load(
            Input::Bytes {
                name: &format!("{name}.zip"),
                bytes: &zip,
                mtime_ms: None,
            },
            &Options::default(),
        )
        .expect("bundle loads");
        let bad: Vec<_> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity != Severity::Info)
            .collect();
        assert!(bad.is_empty(), "{name}: {bad:?}");
    }
}

/// Conservation, from the model's own counts: what the metrics say equals
/// what happened to the requests.
#[test]
fn the_model_conserves_requests_and_tokens() {
    for name in [
        "a10g-qwen3b-ramp",
        "saturated",
        "errors-aborts",
        "truncation",
        "v0-legacy",
        "two-replicas-rr",
    ] {
        let g = run(name);
        let t = &g.truth.totals;
        let mut success = [0.0; 5];
        let (
            mut gen_tokens,
            mut prompt_tokens,
            mut gen_sum,
            mut prompt_sum,
            mut gen_count,
            mut e2e_count,
        ) = (0.0, 0.0, 0.0, 0.0, 0, 0);
        for m in &g.final_metrics {
            for (s, x) in success.iter_mut().zip(m.success) {
                *s += x;
            }
            gen_tokens += m.generation_tokens;
            prompt_tokens += m.prompt_tokens;
            gen_sum += m.h_generation.sum;
            prompt_sum += m.h_prompt.sum;
            gen_count += m.h_generation.count;
            e2e_count += m.h_e2e.count;
        }
        let finished: u64 = t.finished_by_reason.iter().sum();
        for (i, s) in success.iter().enumerate() {
            assert_eq!(*s as u64, t.finished_by_reason[i], "{name}: reason {i}");
        }
        assert_eq!(
            gen_count, finished,
            "{name}: request_generation_tokens count"
        );
        assert_eq!(e2e_count, finished, "{name}: e2e count");
        assert_eq!(
            gen_sum as u64, t.finished_generation_tokens,
            "{name}: Σ request_generation_tokens"
        );
        assert_eq!(
            prompt_sum as u64, t.finished_prompt_tokens,
            "{name}: Σ request_prompt_tokens"
        );
        assert_eq!(
            gen_tokens as u64, t.generation_tokens,
            "{name}: generation_tokens_total"
        );
        assert_eq!(
            prompt_tokens as u64, t.prompt_tokens,
            "{name}: prompt_tokens_total"
        );
        // The counters run ahead of the histograms only by requests still in
        // flight (and, in errors-aborts, by clients that went away).
        assert!(
            gen_tokens >= gen_sum && prompt_tokens >= prompt_sum,
            "{name}"
        );
        assert!(finished > 100, "{name}: {finished}");
    }
}

fn within(name: &str, w: &Window, what: &str, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("minute {}: {what} missing", w.start_s / 60.0));
    let tol = if want == 0.0 { 1.0 } else { want.abs() * 0.10 };
    assert!(
        (got - want).abs() <= tol,
        "{name} minute {}: {what} = {got:.3}, want {want} ± 10 %",
        w.start_s / 60.0
    );
}

/// Scenario 1 lands within ±10 % of the reference figures in every minute,
/// read from the model's ground truth (not from any analysis of the
/// scrapes).
#[test]
fn reference_scenario_hits_the_reference_figures() {
    let g = run("a10g-qwen3b-ramp");
    let n = "a10g-qwen3b-ramp";
    assert_eq!(g.truth.windows.len(), 10);
    for w in &g.truth.windows[..5] {
        within(n, w, "TTFT ms", w.ttft_ms, 51.0);
        within(n, w, "inter-token ms", w.inter_token_ms, 16.0);
        within(n, w, "prefill ms", w.prefill_ms, 38.0);
        within(n, w, "decode ms", w.decode_ms, 1665.0);
        within(n, w, "queue ms", w.queue_ms, 0.0);
        within(n, w, "prefix-cache hit %", w.prefix_cache_hit_pct, 32.0);
        within(n, w, "tokens/iteration", w.tokens_per_iteration, 10.4);
        within(
            n,
            w,
            "generated tokens/s",
            Some(w.gen_tokens_per_sec),
            480.0,
        );
        within(n, w, "KV %", w.kv_cache_pct, 0.25);
        within(n, w, "requests/min", Some(w.requests_per_min), 280.0);
        within(n, w, "prompt tokens/request", w.avg_prompt_tokens, 50.0);
        within(
            n,
            w,
            "generated tokens/request",
            w.avg_generated_tokens,
            104.0,
        );
        let length = w
            .completions_per_min
            .iter()
            .find(|(r, _)| r == "length")
            .map(|x| x.1);
        assert_eq!(
            length,
            Some(w.requests_per_min),
            "every request ends on length"
        );
    }
    for w in &g.truth.windows[5..] {
        within(
            n,
            w,
            "generated tokens/s",
            Some(w.gen_tokens_per_sec),
            1627.0,
        );
        within(n, w, "VRAM %", w.vram_used_pct, 94.0);
        within(n, w, "GPU util %", Some(w.gpu_util_pct), 100.0);
        within(n, w, "GR engine %", Some(w.gr_engine_active_pct), 99.8);
        within(n, w, "tensor %", Some(w.tensor_active_pct), 16.6);
        within(n, w, "DRAM %", Some(w.dram_active_pct), 80.4);
        within(n, w, "power W", Some(w.power_w), 240.0);
        // The die needs a minute to warm up after the step to 32 users.
        if w.start_s >= 360.0 {
            within(n, w, "temperature °C", w.temp_c, 73.0);
        }
        within(n, w, "tokens/W", w.tokens_per_joule, 6.8);
        // KV usage follows the block arithmetic: 4× the sequences of the
        // 8-user phase, each holding ~6 blocks of a 19,255-block pool, is
        // ~1 %, not the 2.8 % of the issue (see samples/README.md).
        // Minute 5 still holds the ramp from 8 to 32 sequences.
        let kv = w.kv_cache_pct.expect("KV %");
        let band = if w.start_s >= 360.0 {
            0.8..1.2
        } else {
            0.5..1.2
        };
        assert!(band.contains(&kv), "KV % at 32 users = {kv}");
    }
}

/// Each scenario shows what `samples/README.md` says it shows.
#[test]
fn scenarios_show_their_findings() {
    let mean = |ws: &[Window], f: fn(&Window) -> Option<f64>| {
        let v: Vec<f64> = ws.iter().filter_map(f).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    // saturated: waiting, climbing queue time, KV > 60 %, preemptions, TTFT p95 > 300 ms.
    let w = run("saturated").truth.windows;
    let late = &w[5..];
    assert!(late.iter().any(|x| x.waiting.unwrap_or(0.0) > 1.0));
    assert!(mean(late, |x| x.queue_ms) > 10.0 * mean(&w[..3], |x| x.queue_ms).max(1.0));
    assert!(mean(late, |x| x.kv_cache_pct) > 60.0);
    assert!(late.iter().map(|x| x.preemptions_per_min).sum::<f64>() > 10.0);
    assert!(late.iter().all(|x| x.ttft_p95_ms.unwrap_or(0.0) > 300.0));
    // rag-prefill-bound: generated/prompt < 0.1, prompt tokens dominate.
    let w = run("rag-prefill-bound").truth.windows;
    for x in &w {
        assert!(x.gen_tokens_per_sec / x.prompt_tokens_per_sec < 0.1);
    }
    // truncation: most answers end on length, some on stop.
    let t = run("truncation").truth.totals;
    assert!(t.finished_by_reason[1] > 3 * t.finished_by_reason[0] && t.finished_by_reason[0] > 0);
    // errors-aborts: abort, error, 4xx and 5xx in the burst only.
    let w = run("errors-aborts").truth.windows;
    let count = |x: &Window, k: &str, v: &[(String, f64)]| {
        v.iter()
            .find(|(r, _)| r == k)
            .map(|p| p.1)
            .unwrap_or_else(|| panic!("{k} at {}", x.start_s))
    };
    for x in &w {
        let burst = (240.0..360.0).contains(&x.start_s);
        for k in ["abort", "error"] {
            assert_eq!(
                count(x, k, &x.completions_per_min) > 0.0,
                burst,
                "{k} at {}",
                x.start_s
            );
        }
        for k in ["4xx", "5xx"] {
            assert_eq!(
                count(x, k, &x.http_per_min) > 0.0,
                burst,
                "{k} at {}",
                x.start_s
            );
        }
    }
    // two-replicas-rr: round robin loses much of the hit rate session affinity gets.
    let rr = mean(&run("two-replicas-rr").truth.windows, |x| {
        x.prefix_cache_hit_pct
    });
    let mut sticky = scenario("two-replicas-rr");
    sticky.server.router = vllm_lens_sim::scenario::Router::Session;
    let sticky = mean(
        &generate(sticky.resolve().expect("resolves")).truth.windows,
        |x| x.prefix_cache_hit_pct,
    );
    assert!(
        rr < 0.7 * sticky,
        "round robin {rr:.1} % vs session affinity {sticky:.1} %"
    );
}

fn scrape_texts<'a>(g: &'a Generated, target: &str) -> Vec<(&'a str, &'a str)> {
    g.files
        .iter()
        .filter(|(p, _)| p.starts_with(&format!("{target}/")))
        .map(|(p, b)| (p.as_str(), std::str::from_utf8(b).expect("utf-8")))
        .collect()
}

fn value(text: &str, name: &str, label: &str) -> Option<f64> {
    Parser::new(text).find_map(|e| match e {
        Event::Sample(s) if s.name == name && s.key.contains(label) => Some(s.value),
        _ => None,
    })
}

/// Era details: V0's names and multiprocess order, 0.11's side-by-side
/// TPOT/ITL, the restart's resets and the manifest's failed scrapes.
#[test]
fn eras_and_capture_events_look_real() {
    let g = run("v0-legacy");
    let (_, text) = scrape_texts(&g, "vllm-0")[5];
    assert!(
        !text.contains("_created")
            && !text.contains("process_")
            && !text.contains("http_")
            && !text.contains("engine=")
    );
    assert!(
        text.contains("vllm:gpu_cache_usage_perc{model_name=")
            && text.contains("vllm:avg_generation_throughput_toks_per_s")
    );
    assert_eq!(
        value(text, "vllm:gpu_prefix_cache_hit_rate", ""),
        Some(-1.0)
    );
    let sum = text
        .find("vllm:time_to_first_token_seconds_sum")
        .expect("sum");
    let bucket = text
        .find("vllm:time_to_first_token_seconds_bucket")
        .expect("bucket");
    assert!(sum < bucket, "multiprocess order puts _sum first");
    assert!(
        !text.contains("finished_reason=\"abort\""),
        "V0 series are lazy"
    );

    let g = run("pod-restart");
    let texts = scrape_texts(&g, "vllm-0");
    assert_eq!(texts.len(), 39, "one scrape failed");
    let first = texts[0].1;
    assert!(
        first.contains("vllm:time_per_output_token_seconds_bucket")
            && first.contains("vllm:inter_token_latency_seconds_bucket")
    );
    assert!(
        !first.contains("vllm:gpu_cache_usage_perc")
            && !first.contains("finished_reason=\"error\"")
    );
    let starts: Vec<f64> = texts
        .iter()
        .map(|(_, t)| value(t, "process_start_time_seconds", "").expect("start"))
        .collect();
    let tokens: Vec<f64> = texts
        .iter()
        .map(|(_, t)| value(t, "vllm:generation_tokens_total", "").expect("tokens"))
        .collect();
    let resets = tokens.windows(2).filter(|p| p[1] < p[0]).count();
    assert_eq!(resets, 1);
    assert_eq!(starts.windows(2).filter(|p| p[1] != p[0]).count(), 1);
    let manifest = std::str::from_utf8(&g.files[0].1).expect("manifest");
    assert!(manifest.contains("\"up\": 0") && manifest.contains("Connection refused"));

    let g = run("no-prof-fields");
    let (_, text) = scrape_texts(&g, "dcgm-0")[3];
    assert!(
        !text.contains("DCGM_FI_PROF_")
            && !text.contains("FB_RESERVED")
            && text.contains("hostname=\"")
    );
    assert_eq!(text.matches("DCGM_FI_DEV_GPU_UTIL{").count(), 2, "two GPUs");

    let g = run("jitter-gaps");
    assert_eq!(scrape_texts(&g, "vllm-0").len(), 38);
    assert_eq!(scrape_texts(&g, "dcgm-0").len(), 28);

    // dcgm-exporter collects every 30 s: consecutive 15 s scrapes repeat.
    let g = run("a10g-qwen3b-ramp");
    let dcgm = scrape_texts(&g, "dcgm-0");
    let energy: Vec<f64> = dcgm
        .iter()
        .map(|(_, t)| value(t, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "").expect("energy"))
        .collect();
    let repeats = energy.windows(2).filter(|p| p[0] == p[1]).count();
    assert!(
        (18..=21).contains(&repeats),
        "{repeats} repeated values in {}",
        energy.len()
    );
}
