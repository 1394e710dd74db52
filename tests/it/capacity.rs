//! The capacity model against ground truth: the samples' simulated pools
//! and hardware, and hand-computed fixtures for what the samples lack
//! (vLLM's `estimated_*` counters, `kv_cache_size_tokens`, a CPU server, a
//! stated shared prefix and GPU cost).

use serde_json::Value;
use vllm_lens_core::analysis::model::{BindingLimit, Report};
use vllm_lens_core::analysis::{BundleMeta, FindingId, Settings, SloId, analyse};
use vllm_lens_core::{Input, MemoryFiles, Options, load};

use crate::support::{T0, root, sample_report};

fn report_with(name: &str, settings: &Settings) -> Report {
    sample_report(name, settings)
}

fn report(name: &str) -> Report {
    report_with(name, &Settings::default())
}

fn truth(name: &str) -> Value {
    serde_json::from_slice(
        &std::fs::read(root().join(format!("samples/{name}.truth.json"))).expect("truth"),
    )
    .expect("json")
}

/// The reference deployment's pool is the simulator's: 19,255 blocks of 16
/// tokens; in requests of its observed size (≈ 50 prompt + 104 generated
/// tokens, 10 blocks each) 1,925 at once, which the truth supports: 32
/// requests in flight filled at most ~1.1 % of the pool, so the full pool
/// holds at least that many requests of that size.
#[test]
fn reference_kv_capacity_is_the_simulated_pool() {
    let r = report("a10g-qwen3b-ramp");
    let t = truth("a10g-qwen3b-ramp");
    let blocks = t["deployment"]["num_gpu_blocks"].as_f64().expect("blocks");
    let c = &r.capacity;
    assert_eq!(c.kv_tokens, Some(blocks * 16.0));
    assert!(!c.kv_estimated);
    assert_eq!(c.block_size, Some(16.0));
    let per = (c.request_tokens.expect("request size") / 16.0).ceil();
    assert_eq!(per, 10.0);
    assert_eq!(c.kv_requests, Some((blocks / per).floor()));
    // The truth: at 32 users the pool was at most this full.
    let fullest = t["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .map(|w| w["kv_cache_pct"].as_f64().expect("kv"))
        .fold(0.0, f64::max);
    let supported = 32.0 / (fullest / 100.0);
    assert!(
        c.kv_requests.expect("requests") <= supported,
        "{:?} requests at once, but the truth's 32 in flight filled {fullest} %",
        c.kv_requests
    );
    assert_eq!(c.binding_limit, BindingLimit::NoneSeen);
    // The A10G streams Qwen2.5-3B's 6.18 GB of bf16 weights in 10.3 ms.
    let floor = c.itl_floor_ms.expect("floor");
    let weights = t["deployment"]["weight_bytes"].as_f64().expect("weights");
    assert!((floor - weights / 600e9 * 1000.0).abs() < 0.05, "{floor}");
    assert!(c.floor.as_ref().expect("floor").infeasible.is_empty());
    // Points behind the chart, and the concurrency that met the objectives.
    assert_eq!(c.points.len(), 10);
    let m = &c.max_concurrency_meeting;
    assert!(m.itl_p95.is_some_and(|x| x > 28.0), "{m:?}");
    assert!(m.ttft_p95.is_some_and(|x| x > 28.0), "{m:?}");
    assert!(m.itl_p95_windows >= 1 && m.ttft_p95_windows >= 1);
}

/// `saturated`: the KV cache binds (99 % full, preempting while requests
/// wait), and Llama-3.1-8B in bf16 on an L4 (300 GB/s) cannot decode a
/// step faster than ≈ 53.5 ms: the 50 ms inter-token objective is out of
/// reach there, and the report says so.
#[test]
fn saturated_is_kv_bound_below_its_floor() {
    let r = report("saturated");
    let t = truth("saturated");
    let c = &r.capacity;
    assert_eq!(c.binding_limit, BindingLimit::KvCache);
    let blocks = t["deployment"]["num_gpu_blocks"].as_f64().expect("blocks");
    assert_eq!(c.kv_tokens, Some(blocks * 16.0));
    let weights = t["deployment"]["weight_bytes"].as_f64().expect("weights");
    let floor = c.itl_floor_ms.expect("floor");
    assert!((floor - weights / 300e9 * 1000.0).abs() < 0.1, "{floor}");
    assert!((53.0..54.0).contains(&floor), "{floor}");
    let f = c.floor.as_ref().expect("floor");
    assert_eq!(f.infeasible, [SloId::ItlP95]);
    assert!(
        r.analyses
            .iter()
            .flat_map(|a| &a.findings)
            .any(|x| x.id.as_str() == "latency.objective_below_floor")
    );
    assert!(
        r.verdict
            .headline
            .contains("out of reach with these weights on this hardware"),
        "{}",
        r.verdict.headline
    );
    // The admission cap is the queue objective's, the same function.
    let queue = r
        .slo
        .iter()
        .find(|s| s.id == SloId::QueueAtConcurrency)
        .expect("queue");
    assert_eq!(c.admission_cap, queue.admission_cap);
    assert_eq!(c.queueing_starts_at, queue.queueing_starts_at);
    // Preemptions cost recomputation, as an estimate.
    let p = c.preemption.as_ref().expect("preemptions");
    assert!(p.recompute_ms_per_min.is_some_and(|x| x > 0.0));
    // What-ifs: FP8 weights halve the floor and enlarge the pool.
    let fp8 = c
        .what_ifs
        .iter()
        .find(|w| w.id == "fp8_weights")
        .expect("fp8");
    assert!((fp8.itl_floor_ms.expect("floor") - floor / 2.0).abs() < 0.01);
    assert!(fp8.kv_requests > c.kv_requests);
    let kv8 = c
        .what_ifs
        .iter()
        .find(|w| w.id == "fp8_kv_cache")
        .expect("fp8 kv");
    assert!(kv8.kv_requests > c.kv_requests);
}

/// `rag-prefill-bound`: requests queue at four in flight with the KV cache
/// at 16 %: not the sequence cap, not memory: the token budget.
#[test]
fn rag_is_bound_by_the_token_budget() {
    let c = report("rag-prefill-bound").capacity;
    assert_eq!(c.binding_limit, BindingLimit::TokenBudget);
}

/// The prefix cache's ceiling from a stated shared prefix: truncation's
/// prompts share 40 tokens, 2 whole blocks of 16 (32 tokens): the hit rate
/// already sits at that ceiling, so nothing is advised. A stated prefix
/// shorter than a block, beside a cache that serves more, is a short
/// statement, and no block-size advice follows.
#[test]
fn prefix_ceiling_from_the_stated_shared_prefix() {
    let settings = Settings {
        shared_prefix_tokens: Some(40.0),
        ..Settings::default()
    };
    let r = report_with("truncation", &settings);
    let p = &r.capacity.prefix;
    let prompt = p.prompt_tokens.expect("prompt");
    let want = 100.0 * 32.0 / prompt;
    assert!((p.ceiling_pct.expect("ceiling") - want).abs() < 1e-9);
    let hit = p.hit_pct.expect("hit");
    assert!(
        (hit - want).abs() < 0.15 * want,
        "hit {hit} against ceiling {want}"
    );
    assert!(!p.shorter_than_a_block);
    let ceiling = r
        .analyses
        .iter()
        .flat_map(|a| &a.findings)
        .find(|f| f.id.as_str() == "efficiency.prefix_ceiling")
        .expect("ceiling finding");
    assert_eq!(
        ceiling.severity,
        vllm_lens_core::analysis::model::Severity::Pass
    );
    assert!(
        !r.recommendations
            .iter()
            .any(|x| x.id.as_str() == "standardise_prompt_prefix")
    );
    let r = report_with(
        "truncation",
        &Settings {
            shared_prefix_tokens: Some(10.0),
            ..Settings::default()
        },
    );
    // Told 10 tokens (under a block) while the cache serves two blocks a
    // request: the statement is short, not the block size too large
    // (samples/real/prefix-short is the prefix that is really shorter).
    assert!(r.capacity.prefix.shorter_than_a_block);
    assert!(r.capacity.prefix.exceeded);
    assert!(
        !r.recommendations
            .iter()
            .any(|x| x.id.as_str() == "shrink_block_size")
    );
    // Without the statement, no prefix advice on the hit rate alone.
    let r = report("truncation");
    assert!(!r.recommendations.iter().any(|x| matches!(
        x.id.as_str(),
        "standardise_prompt_prefix" | "shrink_block_size"
    )));
}

/// Cost per million tokens from `--gpu-hour-cost`, by hand: GPU-hours over
/// the capture ÷ millions of tokens; tokens per joule for generated (the
/// memory step's figure, quoted once) and for computed tokens (prompt
/// tokens not served from cache + generated).
#[test]
fn energy_and_cost_per_token() {
    let r = report_with(
        "truncation",
        &Settings {
            gpu_hour_cost: Some(1.2),
            ..Settings::default()
        },
    );
    let s = &r.summary;
    let minutes = (s.window_end_ms - s.window_start_ms) as f64 / 60_000.0;
    let generated = s.efficiency.gen_tokens_per_sec.expect("gen") * minutes * 60.0;
    let want = 1.2 * minutes / 60.0 / (generated / 1e6);
    let e = &r.capacity.economics;
    assert!((e.cost_per_million_generated.expect("cost") - want).abs() < 1e-9 * want);
    // One figure for tokens per joule: the memory step's (the tokens
    // counter's increase over the energy counter's), near the rate's.
    let joules = s.gpu.energy_j.expect("energy");
    assert_eq!(e.generated_tokens_per_joule, s.memory.tokens_per_joule);
    let by_rate = generated / joules;
    let per_j = e.generated_tokens_per_joule.expect("per J");
    assert!(
        (per_j - by_rate).abs() < 0.05 * by_rate,
        "{per_j} against {by_rate}"
    );
    assert!(e.computed_tokens_per_joule > e.generated_tokens_per_joule);
    // Without a price, no cost.
    assert_eq!(
        report("truncation")
            .capacity
            .economics
            .cost_per_million_generated,
        None
    );
}

/// A hand-made capture with what the samples lack: vLLM 0.32's
/// `kv_cache_size_tokens`, the `estimated_*` counters of
/// `--enable-mfu-metrics` (every 15 s: 1.21e14 FLOPs, 2.4e12 bytes read,
/// 0.1e12 written), `admission_rejections_total` (3 requests per scrape
/// for `max_num_queued_reqs`, none for tokens), and an L4 from DCGM.
fn fixture(mfu_metrics: bool, dcgm: bool) -> Report {
    let mut files = MemoryFiles::default();
    for step in 0..20u32 {
        let at = T0 + i64::from(step) * 15_000;
        let k = f64::from(step);
        let (flops, read, write) = if mfu_metrics {
            (1.21e14 * k, 2.4e12 * k, 0.1e12 * k)
        } else {
            (0.0, 0.0, 0.0)
        };
        let text = format!(
            "# TYPE vllm:cache_config_info gauge\n\
             vllm:cache_config_info{{block_size=\"16\",engine=\"0\",kv_cache_size_tokens=\"120000\",num_gpu_blocks=\"7500\"}} 1.0\n\
             vllm:cache_config_info{{block_size=\"16\",engine=\"1\",kv_cache_size_tokens=\"120000\",num_gpu_blocks=\"7500\"}} 1.0\n\
             # TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 4.0\n\
             # TYPE vllm:num_requests_waiting gauge\n\
             vllm:num_requests_waiting{{engine=\"0\",model_name=\"m\"}} 0.0\n\
             # TYPE vllm:generation_tokens_total counter\n\
             vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {}\n\
             # TYPE vllm:estimated_flops_per_gpu_total counter\n\
             vllm:estimated_flops_per_gpu_total{{engine=\"0\",model_name=\"m\"}} {flops}\n\
             # TYPE vllm:estimated_read_bytes_per_gpu_total counter\n\
             vllm:estimated_read_bytes_per_gpu_total{{engine=\"0\",model_name=\"m\"}} {read}\n\
             # TYPE vllm:estimated_write_bytes_per_gpu_total counter\n\
             vllm:estimated_write_bytes_per_gpu_total{{engine=\"0\",model_name=\"m\"}} {write}\n\
             # TYPE vllm:admission_rejections_total counter\n\
             vllm:admission_rejections_total{{model_name=\"m\",reason=\"max_num_queued_reqs\"}} {}\n\
             vllm:admission_rejections_total{{model_name=\"m\",reason=\"max_num_queued_tokens\"}} 0\n",
            100.0 * k,
            3.0 * k
        );
        files.push(&format!("vllm-0/{at}.prom"), text.into_bytes(), None);
        if dcgm {
            let gpu = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\",Hostname=\"h\"} 90\n\
                 DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\",Hostname=\"h\"} 20000\n\
                 DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\",Hostname=\"h\"} 2000\n";
            files.push(&format!("dcgm-0/{at}.prom"), gpu.as_bytes().to_vec(), None);
        }
    }
    let loaded = load(Input::Files(&mut files), &Options::default()).expect("loads");
    analyse(&loaded, &BundleMeta::default(), &Settings::default()).expect("report")
}

#[test]
fn estimated_counters_give_achieved_utilisation() {
    let r = fixture(true, true);
    let c = &r.capacity;
    // kv_cache_size_tokens, once (the two engines repeat the same pool).
    assert_eq!(c.kv_tokens, Some(120_000.0));
    assert!(c.sources["kv_tokens"].contains("kv_cache_size_tokens"));
    let flops = c.achieved_flops_per_s.expect("flops");
    assert!((flops - 1.21e14 / 15.0).abs() < 1e-6 * flops, "{flops}");
    let bytes = c.achieved_bytes_per_s.expect("bytes");
    assert!((bytes - 2.5e12 / 15.0).abs() < 1e-6 * bytes, "{bytes}");
    // The L4: 121 TFLOP/s dense BF16, 300 GB/s.
    assert!((c.mfu_pct.expect("mfu") - 100.0 * flops / 121e12).abs() < 1e-9);
    assert!((c.mbu_pct.expect("mbu") - 100.0 * bytes / 300e9).abs() < 1e-9);
    assert!(c.sources["achieved_flops_per_s"].contains("estimated_flops_per_gpu_total"));
    // DCGM without profiling fields: the kind of work comes from the
    // estimates (MBU 55.6 %, MFU 6.7 %: memory-bound).
    let kinds: Vec<_> = r
        .analyses
        .iter()
        .flat_map(|a| &a.findings)
        .filter(|f| f.id.as_str().starts_with("hardware."))
        .map(|f| (f.id, f.title.clone()))
        .collect();
    assert!(
        kinds
            .iter()
            .any(|(id, t)| *id == FindingId::HardwareMemoryBound
                && t.contains("vLLM's estimates: MBU 56 %, MFU 7 %")),
        "{kinds:?}"
    );
    // Without the estimates, the same capture cannot tell.
    let flat = fixture(false, true);
    assert!(
        flat.analyses
            .iter()
            .flat_map(|a| &a.findings)
            .any(|f| f.id == FindingId::HardwareProfMissing)
    );
}

#[test]
fn flat_estimated_counters_are_missing_not_zero() {
    let r = fixture(false, true);
    let c = &r.capacity;
    assert_eq!(c.achieved_flops_per_s, None);
    assert_eq!(c.achieved_bytes_per_s, None);
    assert!(
        c.notes.iter().any(|n| n.contains("--enable-mfu-metrics")),
        "{:?}",
        c.notes
    );
}

#[test]
fn a_cpu_server_has_no_mfu_and_says_why() {
    let r = fixture(true, false);
    let c = &r.capacity;
    assert!(c.achieved_flops_per_s.is_some());
    assert_eq!(c.mfu_pct, None);
    assert_eq!(c.mbu_pct, None);
    assert!(
        c.notes.iter().any(|n| n.contains("no GPU peak")),
        "{:?}",
        c.notes
    );
    assert_eq!(c.itl_floor_ms, None);
}

/// 0.32's queue limits: 3 rejections a scrape over 19 intervals is 57,
/// by the reason that fired; the outcome finding names them.
#[test]
fn rejected_requests_are_counted_by_reason() {
    let r = fixture(true, true);
    let rj = r.capacity.rejections.as_ref().expect("rejections");
    assert_eq!(rj.total, 57.0);
    assert_eq!(
        rj.by_reason.iter().collect::<Vec<_>>(),
        [(&"max_num_queued_reqs".to_string(), &57.0)]
    );
    // Per minute of the report's span (its whole windows), as every rate.
    let s = &r.summary;
    let minutes = (s.window_end_ms - s.window_start_ms) as f64 / 60_000.0;
    assert_eq!(rj.per_min, Some((57.0 / minutes * 1000.0).round() / 1000.0));
    let f = r
        .analyses
        .iter()
        .flat_map(|a| &a.findings)
        .find(|f| f.id == FindingId::OutcomesAdmissionRejected)
        .expect("finding");
    assert!(
        f.title.starts_with("57 requests turned away"),
        "{}",
        f.title
    );
    // The samples predate 0.32: no figure, no finding.
    let old = report("a10g-qwen3b-ramp");
    assert_eq!(old.capacity.rejections, None);
    assert!(
        !old.analyses
            .iter()
            .flat_map(|a| &a.findings)
            .any(|f| f.id == FindingId::OutcomesAdmissionRejected)
    );
}

/// The configuration table reads every label of every info family, as each
/// release exports it (`../shared/reference/vllm-metrics.md` §2; 0.32's
/// set as a real server printed it), with the family as the source, and
/// never an identity label (`engine`, `model_name`).
#[test]
fn the_configuration_reads_every_label_of_every_info_family() {
    use vllm_lens_core::analysis::model::ConfigSource;
    let real_032 = "_block_size_resolved=\"True\",block_size=\"128\",cache_dtype=\"auto\",cache_hit_alignment_tokens=\"None\",effective_attention_block_size=\"128\",enable_prefix_caching=\"True\",engine=\"0\",gpu_memory_utilization=\"0.92\",kv_cache_max_concurrency=\"512.0\",kv_cache_memory_bytes=\"1073741824\",kv_cache_size_tokens=\"2097152\",kv_offloading_backend=\"native\",mamba_cache_mode=\"none\",num_cpu_blocks=\"None\",num_gpu_blocks=\"16384\",num_gpu_blocks_override=\"None\",prefix_caching_hash_algo=\"sha256\",sliding_window=\"None\"";
    let cases: [(&str, &str, &str, ConfigSource); 6] = [
        (
            "0.4.0",
            "vllm:cache_config_info",
            "block_size=\"16\",cache_dtype=\"auto\",enable_prefix_caching=\"False\",gpu_memory_utilization=\"0.9\",num_cpu_blocks=\"2048\",num_gpu_blocks=\"7000\",num_gpu_blocks_override=\"None\",sliding_window=\"None\",swap_space_bytes=\"4294967296\"",
            ConfigSource::CacheConfigInfo,
        ),
        (
            "0.10.0",
            "vllm:cache_config_info",
            "block_size=\"16\",cache_dtype=\"auto\",calculate_kv_scales=\"False\",cpu_offload_gb=\"0\",enable_prefix_caching=\"True\",engine=\"0\",gpu_memory_utilization=\"0.9\",is_attention_free=\"False\",num_cpu_blocks=\"None\",num_gpu_blocks=\"19255\",num_gpu_blocks_override=\"512\",prefix_caching_hash_algo=\"builtin\",sliding_window=\"None\",swap_space=\"4\"",
            ConfigSource::CacheConfigInfo,
        ),
        (
            "0.32.0",
            "vllm:cache_config_info",
            real_032,
            ConfigSource::CacheConfigInfo,
        ),
        (
            "0.31.0",
            "vllm:simple_kv_offload_info",
            "backend=\"cpu\",capacity_blocks=\"4096\",engine=\"0\",lazy_offload=\"False\",model_name=\"m\",page_cache=\"True\"",
            ConfigSource::SimpleKvOffloadInfo,
        ),
        (
            "0.33.0",
            "vllm:kv_offload_config_info",
            "backend=\"native\",cpu_bytes=\"8589934592\",engine=\"0\",model_name=\"m\"",
            ConfigSource::KvOffloadConfigInfo,
        ),
        (
            "0.8.0",
            "vllm:lora_requests_info",
            "max_lora=\"4\",running_lora_adapters=\"a,b\",waiting_lora_adapters=\"\"",
            ConfigSource::LoraRequestsInfo,
        ),
    ];
    for (release, family, labels, source) in cases {
        let mut files = MemoryFiles::default();
        for step in 0..4u32 {
            let at = T0 + i64::from(step) * 15_000;
            let text = format!(
                "# TYPE {family} gauge\n{family}{{{labels}}} 1.0\n\
                 # TYPE vllm:num_requests_running gauge\n\
                 vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 2.0\n"
            );
            files.push(&format!("vllm-0/{at}.prom"), text.into_bytes(), None);
        }
        let loaded = load(Input::Files(&mut files), &Options::default()).expect("loads");
        let r = analyse(&loaded, &BundleMeta::default(), &Settings::default()).expect("report");
        let rows = &r.deployment.configuration;
        for pair in labels.split("\",") {
            let (k, v) = pair.split_once("=\"").expect("label");
            let v = v.trim_end_matches('"');
            let found = rows
                .iter()
                .find(|c| c.name == k && c.source == Some(source));
            if k == "engine" || k == "model_name" {
                assert!(found.is_none(), "{release} {family}: {k} is identity");
                continue;
            }
            let found = found.unwrap_or_else(|| panic!("{release} {family}: {k} not in {rows:?}"));
            assert_eq!(found.value.as_deref(), Some(v), "{release} {family}: {k}");
        }
    }
}

/// A KV pool fixed by `num_gpu_blocks_override` that runs out (95 % full,
/// preempting while requests wait): removing the override comes before any
/// memory advice, and more `--gpu-memory-utilization` is never offered
/// (lever rule L7).
#[test]
fn a_fixed_pool_that_runs_out_loses_its_override_first() {
    use vllm_lens_core::analysis::RecId;
    let mut files = MemoryFiles::default();
    for step in 0..24u32 {
        let at = T0 + i64::from(step) * 15_000;
        let k = f64::from(step);
        let text = format!(
            "# TYPE vllm:cache_config_info gauge\n\
             vllm:cache_config_info{{block_size=\"16\",engine=\"0\",gpu_memory_utilization=\"0.9\",num_gpu_blocks=\"1000\",num_gpu_blocks_override=\"1000\"}} 1.0\n\
             # TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 10.0\n\
             # TYPE vllm:num_requests_waiting gauge\n\
             vllm:num_requests_waiting{{engine=\"0\",model_name=\"m\"}} 4.0\n\
             # TYPE vllm:kv_cache_usage_perc gauge\n\
             vllm:kv_cache_usage_perc{{engine=\"0\",model_name=\"m\"}} 0.95\n\
             # TYPE vllm:num_preemptions_total counter\n\
             vllm:num_preemptions_total{{engine=\"0\",model_name=\"m\"}} {}\n\
             # TYPE vllm:generation_tokens_total counter\n\
             vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {}\n",
            2.0 * k,
            500.0 * k
        );
        files.push(&format!("vllm-0/{at}.prom"), text.into_bytes(), None);
    }
    let loaded = load(Input::Files(&mut files), &Options::default()).expect("loads");
    let r = analyse(&loaded, &BundleMeta::default(), &Settings::default()).expect("report");
    assert_eq!(
        r.capacity.binding_limit,
        BindingLimit::KvCache,
        "{:?}",
        r.capacity.limits
    );
    let ids: Vec<RecId> = r.recommendations.iter().map(|x| x.id.clone()).collect();
    assert_eq!(
        ids.first(),
        Some(&crate::support::rec("remove_num_gpu_blocks_override")),
        "{ids:?}"
    );
    assert!(
        r.recommendations
            .iter()
            .flat_map(|x| &x.levers)
            .all(|l| l.knob.as_str() != "kv_cache_memory"),
        "{ids:?}"
    );
}

/// What one limit leaves in `/metrics` on a server under a ramp of 2 → 16
/// requests in flight (two more every 90 s, scraped every 15 s).
pub(crate) struct Limited {
    /// V0 names (`gpu_cache_usage_perc`, `iteration_tokens_total`), else V1.
    pub v0: bool,
    /// Requests running at a level of requests in flight and a step; the
    /// rest wait.
    pub running: fn(u32, u32) -> u32,
    /// KV cache usage, 0–1.
    pub kv: f64,
    /// Preemptions per scrape.
    pub preemptions: u32,
    /// The server's command line (meta/cmdline/vllm-0.txt), if recorded.
    pub cmdline: Option<&'static str>,
}

/// 48 scrapes 15 s apart of one server whose requests in flight climb
/// 2, 4, … 16 (six scrapes each); `running` says how many of them run.
pub(crate) fn limited(l: &Limited) -> Report {
    let mut files = MemoryFiles::default();
    let (mut finished, mut prompt, mut generated, mut preempted) = (0u64, 0u64, 0u64, 0u64);
    // vllm:iteration_tokens_total: cumulative counts per bucket.
    let les = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
    let mut steps = [0u64; 12];
    for step in 0..48u32 {
        let at = T0 + i64::from(step) * 15_000;
        let level = 2 + 2 * (step / 6);
        let running = (l.running)(level, step);
        let waiting = level - running;
        finished += u64::from(running) / 2;
        prompt += u64::from(running) / 2 * 1500;
        generated += u64::from(running) * 150;
        preempted += u64::from(if waiting > 0 { l.preemptions } else { 0 });
        // Ten steps a second: while requests wait, 80 % of them carry a
        // full 2048-token budget (the (1024, 2048] bucket); else decode.
        let full = if waiting > 0 { 120 } else { 0 };
        steps[9] += full;
        steps[5] += 150 - full;
        let kv = if l.v0 {
            "vllm:gpu_cache_usage_perc"
        } else {
            "vllm:kv_cache_usage_perc"
        };
        let mut text = format!(
            "# TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{model_name=\"m\"}} {running}\n\
             # TYPE vllm:num_requests_waiting gauge\n\
             vllm:num_requests_waiting{{model_name=\"m\"}} {waiting}\n\
             # TYPE {kv} gauge\n\
             {kv}{{model_name=\"m\"}} {}\n\
             # TYPE vllm:num_preemptions_total counter\n\
             vllm:num_preemptions_total{{model_name=\"m\"}} {preempted}\n\
             # TYPE vllm:request_success_total counter\n\
             vllm:request_success_total{{finished_reason=\"stop\",model_name=\"m\"}} {finished}\n\
             # TYPE vllm:prompt_tokens_total counter\n\
             vllm:prompt_tokens_total{{model_name=\"m\"}} {prompt}\n\
             # TYPE vllm:generation_tokens_total counter\n\
             vllm:generation_tokens_total{{model_name=\"m\"}} {generated}\n",
            if waiting > 0 { l.kv } else { l.kv / 2.0 }
        );
        if l.v0 {
            text.push_str(
                "# TYPE vllm:num_requests_swapped gauge\n\
                 vllm:num_requests_swapped{model_name=\"m\"} 0\n\
                 # TYPE vllm:iteration_tokens_total histogram\n",
            );
            let mut cum = 0;
            for (le, n) in les.iter().zip(steps) {
                cum += n;
                text.push_str(&format!(
                    "vllm:iteration_tokens_total_bucket{{le=\"{le}.0\",model_name=\"m\"}} {cum}\n"
                ));
            }
            text.push_str(&format!(
                "vllm:iteration_tokens_total_bucket{{le=\"+Inf\",model_name=\"m\"}} {cum}\n\
                 vllm:iteration_tokens_total_count{{model_name=\"m\"}} {cum}\n\
                 vllm:iteration_tokens_total_sum{{model_name=\"m\"}} {}\n",
                cum * 600
            ));
        }
        files.push(&format!("vllm-0/{at}.prom"), text.into_bytes(), None);
    }
    if let Some(c) = l.cmdline {
        files.push("meta/cmdline/vllm-0.txt", c.as_bytes().to_vec(), None);
    }
    let loaded = load(Input::Files(&mut files), &Options::default()).expect("loads");
    analyse(&loaded, &BundleMeta::default(), &Settings::default()).expect("report")
}

fn rec_ids(r: &Report) -> Vec<vllm_lens_core::analysis::RecId> {
    r.recommendations.iter().map(|x| x.id.clone()).collect()
}

/// `--max-num-seqs 8`, unstated: running held at 8 whenever requests wait,
/// the KV cache at 30 %. The sequence cap binds and raising it comes first.
#[test]
fn running_pinned_at_its_cap_is_bound_by_max_num_seqs() {
    let r = limited(&Limited {
        v0: false,
        running: |level, _| level.min(8),
        kv: 0.3,
        preemptions: 0,
        cmdline: None,
    });
    let c = &r.capacity;
    assert_eq!(
        c.binding_limits,
        vec![BindingLimit::MaxNumSeqs],
        "{:#?}",
        c.limits
    );
    let ids = rec_ids(&r);
    assert_eq!(
        ids.first(),
        Some(&crate::support::rec("raise_max_num_seqs")),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&crate::support::rec("raise_max_num_batched_tokens")),
        "{ids:?}"
    );
}

/// A V0 server told `--max-num-seqs 256 --max-num-batched-tokens 2048`:
/// running spread between 3 and 6 while requests wait, 80 % of the steps
/// then in the budget's (1024, 2048] bucket, the KV cache at 40 %. The token
/// budget binds and raising it comes first; the sequence cap is not offered.
#[test]
fn full_steps_below_the_sequence_cap_are_bound_by_the_token_budget() {
    let r = limited(&Limited {
        v0: true,
        running: |level, step| level.min(3 + step % 4),
        kv: 0.4,
        preemptions: 0,
        cmdline: Some("vllm serve m --max-num-seqs 256 --max-num-batched-tokens 2048"),
    });
    let c = &r.capacity;
    assert_eq!(
        c.binding_limits,
        vec![BindingLimit::TokenBudget],
        "{:#?}",
        c.limits
    );
    let budget = c
        .limits
        .iter()
        .find(|l| l.limit == BindingLimit::TokenBudget)
        .expect("budget checked");
    assert!(
        budget
            .evidence
            .contains("of --max-num-batched-tokens 2,048")
            && budget.evidence.contains("below --max-num-seqs 256"),
        "{} {:#?}",
        budget.evidence,
        r.deployment.configuration
    );
    let ids = rec_ids(&r);
    assert_eq!(
        ids.first(),
        Some(&crate::support::rec("raise_max_num_batched_tokens")),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&crate::support::rec("raise_max_num_seqs")),
        "{ids:?}"
    );
}

/// The KV cache at 97 % with preemptions while requests wait, running
/// spread below its peak: the KV cache binds, and neither the sequence cap
/// nor the token budget is raised (more sequences need more KV).
#[test]
fn a_full_kv_cache_that_preempts_is_the_binding_limit() {
    let r = limited(&Limited {
        v0: false,
        running: |level, step| level.min(4 + step % 3),
        kv: 0.97,
        preemptions: 3,
        cmdline: None,
    });
    let c = &r.capacity;
    assert_eq!(
        c.binding_limits.first(),
        Some(&BindingLimit::KvCache),
        "{:#?}",
        c.limits
    );
    let ids = rec_ids(&r);
    assert!(
        !ids.contains(&crate::support::rec("raise_max_num_seqs"))
            && !ids.contains(&crate::support::rec("raise_max_num_batched_tokens")),
        "{ids:?}"
    );
    let first = r.recommendations.first().expect("a recommendation");
    assert!(
        first
            .levers
            .iter()
            .any(|l| l.knob.as_str().starts_with("kv_")),
        "{ids:?} {:?}",
        first.levers
    );
}

/// Every request admitted at once (running = in flight, nothing waits):
/// the client's own concurrency is the limit, and no server capacity lever
/// is offered.
#[test]
fn nothing_waiting_leaves_the_client_as_the_limit() {
    let r = limited(&Limited {
        v0: false,
        running: |level, _| level,
        kv: 0.3,
        preemptions: 0,
        cmdline: None,
    });
    assert_eq!(r.capacity.binding_limits, vec![BindingLimit::NoneSeen]);
    let ids = rec_ids(&r);
    for lever in [
        crate::support::rec("raise_max_num_seqs"),
        crate::support::rec("raise_max_num_batched_tokens"),
        crate::support::rec("move_to_kserve"),
        crate::support::rec("set_autoscaling_trigger"),
    ] {
        assert!(!ids.contains(&lever), "{ids:?}");
    }
}
