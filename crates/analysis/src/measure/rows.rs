//! The figures of each section, from one window's (or the capture's)
//! inputs. Every figure is `None` when an input is missing or nothing was
//! observed: never 0 for "unknown".

use std::collections::BTreeMap;

use vllm_lens_catalog::Signal;
use vllm_lens_query::HistWindow;

use crate::measure::inputs::{GpuInputs, Inputs};
use crate::model::{
    Bounds, Efficiency, Gpu, Latency, LatencyBounds, Memory, Outcomes, Summary, Workload,
};

/// The API server's completion handlers (client disconnects are counted
/// on these).
pub(crate) const COMPLETION_HANDLERS: [&str; 2] = ["/v1/completions", "/v1/chat/completions"];

/// Finished-request reasons in display order.
pub(crate) const REASONS: [&str; 5] = ["stop", "length", "abort", "error", "repetition"];

fn ms(x: Option<f64>) -> Option<f64> {
    x.map(|s| s * 1000.0)
}

fn avg(i: &Inputs, s: Signal) -> Option<f64> {
    i.hists.get(&s).and_then(HistWindow::avg)
}

fn quantile(i: &Inputs, s: Signal, q: f64) -> Option<f64> {
    i.hists.get(&s).and_then(|h| h.quantile(q)).map(|x| x.value)
}

/// The bucket a quantile lies in, ms.
fn bucket(i: &Inputs, s: Signal, q: f64) -> Option<Bounds> {
    i.hists.get(&s).and_then(|h| h.quantile(q)).map(|x| Bounds {
        low: x.lower * 1000.0,
        high: x.upper.is_finite().then_some(x.upper * 1000.0),
    })
}

fn rate(i: &Inputs, s: Signal) -> Option<f64> {
    i.counters.get(&s).and_then(|x| x.rate())
}

fn increase(i: &Inputs, s: Signal) -> Option<f64> {
    i.counters.get(&s).map(|x| x.increase)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Step 1.
pub(crate) fn latency(i: &Inputs) -> Latency {
    let queue = ms(avg(i, Signal::QueueTime));
    let prefill = ms(avg(i, Signal::PrefillTime));
    let decode = ms(avg(i, Signal::DecodeTime));
    let decode_share = match (queue, prefill, decode) {
        (Some(q), Some(p), Some(d)) if q + p + d > 0.0 => Some(100.0 * d / (q + p + d)),
        _ => None,
    };
    Latency {
        queue_ms: queue,
        prefill_ms: prefill,
        decode_ms: decode,
        inference_ms: ms(avg(i, Signal::InferenceTime)),
        e2e_ms: ms(avg(i, Signal::E2eTime)),
        ttft_ms: ms(avg(i, Signal::Ttft)),
        ttft_p50_ms: ms(quantile(i, Signal::Ttft, 0.5)),
        ttft_p95_ms: ms(quantile(i, Signal::Ttft, 0.95)),
        ttft_p99_ms: ms(quantile(i, Signal::Ttft, 0.99)),
        inter_token_ms: ms(avg(i, Signal::InterTokenLatency)),
        itl_p50_ms: ms(quantile(i, Signal::InterTokenLatency, 0.5)),
        itl_p95_ms: ms(quantile(i, Signal::InterTokenLatency, 0.95)),
        itl_p99_ms: ms(quantile(i, Signal::InterTokenLatency, 0.99)),
        decode_share_pct: decode_share,
        bounds: LatencyBounds {
            ttft_p50_ms: bucket(i, Signal::Ttft, 0.5),
            ttft_p95_ms: bucket(i, Signal::Ttft, 0.95),
            ttft_p99_ms: bucket(i, Signal::Ttft, 0.99),
            itl_p50_ms: bucket(i, Signal::InterTokenLatency, 0.5),
            itl_p95_ms: bucket(i, Signal::InterTokenLatency, 0.95),
            itl_p99_ms: bucket(i, Signal::InterTokenLatency, 0.99),
        },
    }
}

/// Step 2.
pub(crate) fn efficiency(i: &Inputs) -> Efficiency {
    let g = |s: Signal| i.gauges.get(&s);
    let generated = rate(i, Signal::GenerationTokens)
        .or_else(|| g(Signal::GenerationThroughputGauge).map(|x| x.mean));
    let prompt =
        rate(i, Signal::PromptTokens).or_else(|| g(Signal::PromptThroughputGauge).map(|x| x.mean));
    Efficiency {
        prefix_cache_hit_pct: ratio(
            increase(i, Signal::PrefixHits),
            increase(i, Signal::PrefixQueries),
        )
        .map(|r| r * 100.0),
        cached_prompt_share_pct: ratio(
            increase(i, Signal::CachedPromptTokens),
            increase(i, Signal::PromptTokens),
        )
        .map(|r| r * 100.0),
        tokens_per_iteration: avg(i, Signal::IterationTokens),
        prompt_steps_per_sec: prompt_steps_per_sec(i),
        gen_tokens_per_sec: generated,
        prompt_tokens_per_sec: prompt,
        running: g(Signal::Running).map(|x| x.max),
        running_avg: g(Signal::Running).map(|x| x.mean),
        waiting: g(Signal::Waiting).map(|x| x.max),
        waiting_avg: g(Signal::Waiting).map(|x| x.mean),
        kv_cache_pct: g(Signal::KvUsage).map(|x| x.max * 100.0),
        kv_cache_pct_avg: g(Signal::KvUsage).map(|x| x.mean * 100.0),
        preemptions_per_min: rate(i, Signal::Preemptions).map(|r| r * 60.0),
    }
}

/// Engine steps per second that finished a prompt
/// ([`vllm_lens_model::Efficiency::prompt_steps_per_sec`]).
fn prompt_steps_per_sec(i: &Inputs) -> Option<f64> {
    let h = i.hists.get(&Signal::IterationTokens)?;
    let running = i.gauges.get(&Signal::Running)?.max;
    let prompt = avg(i, Signal::RequestPromptTokens).or_else(|| {
        ratio(
            increase(i, Signal::PromptTokens),
            increase(i, Signal::FinishedRequests),
        )
    })?;
    let b = h.buckets.normalised()?;
    // The bucket a step without a prompt falls in: its bound is the first
    // at or above the most requests running.
    let (bound, below) = b.iter().copied().find(|(le, _)| *le >= running.max(1.0))?;
    if !bound.is_finite() || prompt < 2.0 * bound || h.covered_ms <= 0 {
        return None;
    }
    let total = b.last()?.1;
    Some((total - below).max(0.0) * 1000.0 / h.covered_ms as f64)
}

/// Step 3.
pub(crate) fn workload(i: &Inputs) -> Workload {
    let finished = increase(i, Signal::FinishedRequests);
    let avg_prompt = avg(i, Signal::RequestPromptTokens)
        .or_else(|| ratio(increase(i, Signal::PromptTokens), finished));
    let avg_gen = avg(i, Signal::RequestGenerationTokens)
        .or_else(|| ratio(increase(i, Signal::GenerationTokens), finished));
    let avg_max = avg(i, Signal::MaxTokens);
    Workload {
        requests_per_min: rate(i, Signal::FinishedRequests).map(|r| r * 60.0),
        avg_prompt_tokens: avg_prompt,
        avg_generated_tokens: avg_gen,
        avg_max_tokens: avg_max,
        gen_to_prompt_ratio: ratio(
            increase(i, Signal::GenerationTokens),
            increase(i, Signal::PromptTokens),
        ),
        max_tokens_utilisation_pct: ratio(avg_gen, avg_max).map(|r| r * 100.0),
    }
}

/// Step 4.
pub(crate) fn outcomes(i: &Inputs) -> Outcomes {
    let per_min = |x: &vllm_lens_query::WindowIncrease| x.rate().map(|r| r * 60.0);
    let mut completions = BTreeMap::new();
    for (reason, x) in &i.reasons {
        if let Some(v) = per_min(x) {
            completions.insert(reason.clone(), v);
        }
    }
    // Every release has stop, length and abort; V0 creates their series
    // lazily, so one not yet seen is zero (later reasons may not exist).
    if !completions.is_empty() {
        for r in &REASONS[..3] {
            completions.entry((*r).to_string()).or_insert(0.0);
        }
    }
    let count = |r: &str| i.reasons.get(r).map(|x| x.increase);
    let total: f64 = 0.0 + i.reasons.values().map(|x| x.increase).sum::<f64>();
    let error_abort_pct = (!i.reasons.is_empty() && total > 0.0)
        .then(|| 100.0 * (count("abort").unwrap_or(0.0) + count("error").unwrap_or(0.0)) / total);
    let stop_to_length = ratio(count("stop"), count("length"));
    let mut by_status = BTreeMap::new();
    for (status, x) in &i.http_status {
        if let Some(v) = per_min(x) {
            by_status.insert(status.clone(), v);
        }
    }
    let mut by_handler: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for ((handler, status), x) in &i.http_handler {
        if let Some(v) = per_min(x) {
            by_handler
                .entry(handler.clone())
                .or_default()
                .insert(status.clone(), v);
        }
    }
    // (`Iterator::sum` of no floats is −0.0.)
    let http_total: f64 = 0.0 + i.http_status.values().map(|x| x.increase).sum::<f64>();
    let http_errors: f64 = i
        .http_status
        .iter()
        .filter(|(s, _)| s.starts_with('4') || s.starts_with('5'))
        .map(|(_, x)| x.increase)
        .sum::<f64>()
        + 0.0;
    // Client disconnects: 2xx on the completion handlers that never
    // finished in the engine.
    let completions_2xx: Option<(f64, f64)> = {
        let mut found = None;
        for ((handler, status), x) in &i.http_handler {
            if status == "2xx" && COMPLETION_HANDLERS.contains(&handler.as_str()) {
                let slot = found.get_or_insert((0.0, 0i64));
                slot.0 += x.increase;
                slot.1 = slot.1.max(x.covered_ms);
            }
        }
        found.map(|(n, ms)| (n, ms as f64))
    };
    let disconnects = disconnects_raw(i).map(|d| d.max(0.0));
    let disconnects_per_min = match (disconnects, completions_2xx) {
        (Some(d), Some((_, ms))) if ms > 0.0 => Some(d * 60_000.0 / ms),
        _ => None,
    };
    Outcomes {
        client_disconnects_per_min: disconnects_per_min,
        client_disconnects: disconnects,
        completions_per_min: completions,
        error_abort_pct,
        stop_to_length_ratio: stop_to_length,
        http_per_min_by_status: by_status,
        http_per_min_by_handler: by_handler,
        http_error_pct: (http_total > 0.0).then(|| 100.0 * http_errors / http_total),
    }
}

/// HTTP 2xx on the completion handlers minus finished requests, not
/// clamped: negative where finishes and answers fall on either side of a
/// scrape (the timing skew that bounds the estimate).
pub(crate) fn disconnects_raw(i: &Inputs) -> Option<f64> {
    let mut ok: Option<f64> = None;
    for ((handler, status), x) in &i.http_handler {
        if status == "2xx" && COMPLETION_HANDLERS.contains(&handler.as_str()) {
            *ok.get_or_insert(0.0) += x.increase;
        }
    }
    let finished = (!i.reasons.is_empty())
        .then(|| i.reasons.values().map(|x| x.increase).sum::<f64>() + 0.0)
        .or_else(|| increase(i, Signal::FinishedRequests));
    Some(ok? - finished?)
}

/// VRAM used share of one GPU (or group): (max, mean) in %.
fn vram_pct(g: &GpuInputs) -> (Option<f64>, Option<f64>) {
    let used = g.gauges.get(&Signal::FbUsed);
    let free = g.gauges.get(&Signal::FbFree);
    let reserved = g.gauges.get(&Signal::FbReserved).map_or(0.0, |x| x.mean);
    match (used, free) {
        (Some(u), Some(f)) => {
            let total = u.mean + f.mean + reserved;
            if total > 0.0 {
                (Some(100.0 * u.max / total), Some(100.0 * u.mean / total))
            } else {
                (None, None)
            }
        }
        _ => (None, None),
    }
}

/// Step 5.
pub(crate) fn gpu(g: &GpuInputs) -> Gpu {
    let max = |s: Signal, f: f64| g.gauges.get(&s).map(|x| x.max * f);
    let mean = |s: Signal, f: f64| g.gauges.get(&s).map(|x| x.mean * f);
    let (vram_pct_max, vram_pct_avg) = vram_pct(g);
    Gpu {
        gpu_util_pct: max(Signal::GpuUtil, 1.0),
        gpu_util_pct_avg: mean(Signal::GpuUtil, 1.0),
        mem_copy_util_pct: max(Signal::MemCopyUtil, 1.0),
        mem_copy_util_pct_avg: mean(Signal::MemCopyUtil, 1.0),
        vram_used_mib: max(Signal::FbUsed, 1.0),
        vram_used_mib_avg: mean(Signal::FbUsed, 1.0),
        vram_free_mib: g.gauges.get(&Signal::FbFree).map(|x| x.min),
        vram_free_mib_avg: mean(Signal::FbFree, 1.0),
        vram_used_pct: vram_pct_max,
        vram_used_pct_avg: vram_pct_avg,
        power_w: max(Signal::Power, 1.0),
        power_w_avg: mean(Signal::Power, 1.0),
        temp_c: max(Signal::GpuTemp, 1.0),
        temp_c_avg: mean(Signal::GpuTemp, 1.0),
        sm_clock_mhz: max(Signal::SmClock, 1.0),
        sm_clock_mhz_avg: mean(Signal::SmClock, 1.0),
        gr_engine_active_pct: max(Signal::GrEngineActive, 100.0),
        gr_engine_active_pct_avg: mean(Signal::GrEngineActive, 100.0),
        tensor_active_pct: max(Signal::TensorActive, 100.0),
        tensor_active_pct_avg: mean(Signal::TensorActive, 100.0),
        dram_active_pct: max(Signal::DramActive, 100.0),
        dram_active_pct_avg: mean(Signal::DramActive, 100.0),
        energy_j: g.energy.map(|e| e.increase / 1000.0),
    }
}

/// Step 6.
pub(crate) fn memory(i: &Inputs, g: Option<&GpuInputs>) -> Memory {
    let kv = i.gauges.get(&Signal::KvUsage);
    let (vram_max, vram_avg) = g.map_or((None, None), vram_pct);
    let gen_rate = rate(i, Signal::GenerationTokens);
    let power = g.and_then(|g| g.gauges.get(&Signal::Power)).map(|x| x.mean);
    let energy_j = g.and_then(|g| g.energy).map(|e| e.increase / 1000.0);
    Memory {
        kv_cache_pct: kv.map(|x| x.max * 100.0),
        kv_cache_pct_avg: kv.map(|x| x.mean * 100.0),
        vram_used_pct: vram_max,
        vram_used_pct_avg: vram_avg,
        tokens_per_watt: ratio(gen_rate, power),
        tokens_per_joule: ratio(increase(i, Signal::GenerationTokens), energy_j),
    }
}

/// The summary figures of some inputs (the whole capture, a phase).
pub(crate) fn summary(start: i64, end: i64, i: &Inputs, g: Option<&GpuInputs>) -> Summary {
    Summary {
        window_start_ms: start,
        window_end_ms: end,
        latency: latency(i),
        efficiency: efficiency(i),
        workload: workload(i),
        outcomes: outcomes(i),
        gpu: g.map(gpu).unwrap_or_default(),
        memory: memory(i, g),
    }
}
