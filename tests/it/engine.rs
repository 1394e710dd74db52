//! The rate and quantile engine on the simulator's samples, held against the
//! model's own ground truth (`samples/<name>.truth.json`).

use vllm_lens_core::Loaded;
use vllm_lens_core::catalog::{Catalogue, Signal};
use vllm_lens_core::query::{Query, Settings};

use crate::support::root;

pub fn load_sample(name: &str) -> Loaded {
    let path = root().join(format!("samples/{name}.zip"));
    let bytes = std::fs::read(&path).expect("sample");
    crate::support::load_bytes(&format!("{name}.zip"), &bytes)
}

fn truth(name: &str) -> serde_json::Value {
    let path = root().join(format!("samples/{name}.truth.json"));
    serde_json::from_slice(&std::fs::read(path).expect("truth")).expect("json")
}

fn near(what: &str, w: usize, ours: Option<f64>, truth: f64, tol: f64) {
    let ours = ours.unwrap_or_else(|| panic!("window {w}: {what} missing"));
    let scale = truth.abs().max(1e-9);
    assert!(
        (ours - truth).abs() <= tol * scale,
        "window {w}: {what} ours {ours} vs truth {truth}"
    );
}

/// In steady minutes the engine's figures, read from the scrapes alone,
/// land on the model's ground truth. (Windows attribute each interval to
/// the window of its later scrape, so they lag the truth's minutes by up to
/// one scrape interval: the minutes where the load changes are skipped.)
#[test]
fn steady_windows_match_the_ground_truth() {
    let name = "a10g-qwen3b-ramp";
    let l = load_sample(name);
    let cat = Catalogue::resolve(&l.store);
    let q = Query::new(&l.store, &cat, Settings::default()).expect("grid");
    let t = truth(name);
    let tw = t["windows"].as_array().expect("windows");
    assert_eq!(q.grid().count, tw.len());
    let gen_tokens = q.counter(Signal::GenerationTokens);
    let finished = q.counter(Signal::FinishedRequests);
    let hits = q.counter(Signal::PrefixHits);
    let queries = q.counter(Signal::PrefixQueries);
    let ttft = q.histogram(Signal::Ttft);
    let itl = q.histogram(Signal::InterTokenLatency);
    let prefill = q.histogram(Signal::PrefillTime);
    let decode = q.histogram(Signal::DecodeTime);
    let iter = q.histogram(Signal::IterationTokens);
    let kv = q.gauge(Signal::KvUsage).expect("kv");
    let running = q.gauge(Signal::Running).expect("running");
    let avg = |h: &vllm_lens_core::query::HistogramSignal, w: usize| {
        h.combined().expect("one layout")[w]
            .as_ref()
            .and_then(|x| x.avg())
    };
    for w in [1, 2, 3, 4, 7, 8, 9] {
        let tw = &tw[w];
        let f = |k: &str| tw[k].as_f64().expect(k);
        near(
            "generated tokens/s",
            w,
            gen_tokens.windows[w].and_then(|x| x.rate()),
            f("gen_tokens_per_sec"),
            0.01,
        );
        near(
            "requests/min",
            w,
            finished.windows[w].and_then(|x| x.rate()).map(|r| r * 60.0),
            f("requests_per_min"),
            0.03,
        );
        near(
            "prefix-cache hit %",
            w,
            hits.windows[w]
                .zip(queries.windows[w])
                .map(|(h, q)| 100.0 * h.increase / q.increase),
            f("prefix_cache_hit_pct"),
            0.03,
        );
        near(
            "TTFT ms",
            w,
            avg(&ttft, w).map(|s| s * 1000.0),
            f("ttft_ms"),
            0.02,
        );
        near(
            "ITL ms",
            w,
            avg(&itl, w).map(|s| s * 1000.0),
            f("inter_token_ms"),
            0.02,
        );
        near(
            "prefill ms",
            w,
            avg(&prefill, w).map(|s| s * 1000.0),
            f("prefill_ms"),
            0.02,
        );
        near(
            "decode ms",
            w,
            avg(&decode, w).map(|s| s * 1000.0),
            f("decode_ms"),
            0.02,
        );
        near(
            "tokens/iteration",
            w,
            avg(&iter, w),
            f("tokens_per_iteration"),
            0.02,
        );
        near(
            "KV %",
            w,
            kv[w].map(|k| k.mean * 100.0),
            f("kv_cache_pct"),
            0.10,
        );
        near("running", w, running[w].map(|k| k.mean), f("running"), 0.05);
    }
    // The whole capture: token counters against the model's totals.
    let totals = &t["totals"];
    let gen_total: f64 = gen_tokens
        .windows
        .iter()
        .flatten()
        .map(|x| x.increase)
        .sum();
    assert!(gen_total > 0.0 && gen_total <= totals["generation_tokens"].as_f64().expect("total"));
}

/// A window with no requests reads "no data", not 0 or NaN.
#[test]
fn idle_windows_read_as_no_data() {
    let l = load_sample("pod-restart");
    let cat = Catalogue::resolve(&l.store);
    let q = Query::new(&l.store, &cat, Settings::default()).expect("grid");
    let ttft = q.histogram(Signal::Ttft);
    let windows = ttft.combined().expect("one layout");
    for w in windows.iter().flatten() {
        if w.count == 0.0 {
            assert_eq!(w.avg(), None);
            assert_eq!(w.quantile(0.95), None);
        } else {
            assert!(w.avg().is_some_and(f64::is_finite));
        }
    }
}

/// The restart shows up as resets, never as a negative increase.
#[test]
fn the_restart_is_a_reset_not_a_negative_increase() {
    let l = load_sample("pod-restart");
    let cat = Catalogue::resolve(&l.store);
    let q = Query::new(&l.store, &cat, Settings::default()).expect("grid");
    let target = l
        .store
        .targets()
        .iter()
        .position(|t| t.name() == "vllm-0")
        .expect("vllm-0");
    let restarts = q.restarts(vllm_lens_core::store::TargetId(target as u32));
    assert_eq!(restarts.len(), 1, "process_start_time_seconds changed once");
    let gen_tokens = q.counter(Signal::GenerationTokens);
    assert!(gen_tokens.resets >= 1);
    for w in gen_tokens.windows.iter().flatten() {
        assert!(w.increase >= 0.0);
    }
    let cov = q
        .coverage()
        .iter()
        .find(|c| c.target == "vllm-0")
        .expect("coverage");
    assert_eq!(cov.windows.iter().map(|w| w.failed).sum::<u32>(), 1);
    assert_eq!(cov.windows.iter().filter(|w| w.has_gap()).count(), 1);
}

/// Gaps: the DCGM target down for 3 minutes gives windows without data and
/// an increase kept apart, never spread over the windows.
#[test]
fn a_target_down_is_a_gap_not_a_bridge() {
    let l = load_sample("jitter-gaps");
    let cat = Catalogue::resolve(&l.store);
    let q = Query::new(&l.store, &cat, Settings::default()).expect("grid");
    let energy = q.counter(Signal::Energy);
    assert!(energy.unattributed > 0.0);
    assert!(energy.windows[4].is_none() && energy.windows[5].is_none());
    let power = q.gauge(Signal::Power).expect("power");
    assert!(power[4].is_none() && power[5].is_none());
    let cov = q
        .coverage()
        .iter()
        .find(|c| c.target == "dcgm-0")
        .expect("dcgm");
    assert_eq!(cov.windows.iter().map(|w| w.failed).sum::<u32>(), 12);
    let vllm = q
        .coverage()
        .iter()
        .find(|c| c.target == "vllm-0")
        .expect("vllm");
    assert_eq!(vllm.windows.iter().map(|w| w.failed).sum::<u32>(), 2);
    // One missed vLLM scrape is bridged and counted as such.
    let gen_tokens = q.counter(Signal::GenerationTokens);
    assert_eq!(gen_tokens.unattributed, 0.0);
    assert_eq!(
        gen_tokens
            .windows
            .iter()
            .flatten()
            .map(|w| w.bridged)
            .sum::<u32>(),
        2
    );
}
