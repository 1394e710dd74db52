//! What the model reads from the report: the loaded windows (per replica),
//! the configuration replayed as "today", and the workload's lengths.

use vllm_lens_model::Report;
use vllm_lens_model::forecast::{EngineSettings, WorkloadFit};
use vllm_lens_model::ids::{PhaseKind, Scope};
use vllm_lens_model::report::{BindingLimit, Bounds, ConfigSource};

/// What [`crate::forecast`] reads.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    /// The report, without its forecast.
    pub report: &'a Report,
    /// `[upper bound, requests]` per bucket of the prompt lengths.
    pub prompt_buckets: Vec<[f64; 2]>,
    /// The same for generated lengths.
    pub generation_buckets: Vec<[f64; 2]>,
    /// The TTFT histogram's finite upper bounds, ms.
    pub ttft_ladder_ms: Vec<f64>,
    /// The inter-token histogram's finite upper bounds, ms.
    pub itl_ladder_ms: Vec<f64>,
}

/// A setting a scenario changes (the CLI's `--set`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    /// `--max-num-seqs`.
    MaxNumSeqs(u32),
    /// `--max-num-batched-tokens`.
    MaxNumBatchedTokens(u32),
    /// KV blocks per replica.
    KvBlocks(u32),
    /// Prefix caching on or off.
    PrefixCaching(bool),
    /// Replicas sharing the load.
    Replicas(u32),
    /// Tokens every prompt shares at its start.
    SharedPrefixTokens(u32),
}

impl Setting {
    /// Parses `name=value` (`max-num-seqs=16`, `replicas=2`,
    /// `prefix-caching=on`, ...).
    pub fn parse(s: &str) -> Result<Setting, String> {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("'{s}': expected NAME=VALUE, e.g. max-num-seqs=16"))?;
        let k = k.trim().trim_start_matches("--").replace('_', "-");
        let v = v.trim();
        let num = || {
            v.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("'{s}': {v} is not a positive whole number"))
        };
        match k.as_str() {
            "max-num-seqs" => num().map(Setting::MaxNumSeqs),
            "max-num-batched-tokens" => num().map(Setting::MaxNumBatchedTokens),
            "kv-blocks" | "num-gpu-blocks" => num().map(Setting::KvBlocks),
            "replicas" => num().map(Setting::Replicas),
            "shared-prefix-tokens" => num().map(Setting::SharedPrefixTokens),
            "prefix-caching" | "enable-prefix-caching" => match v.to_ascii_lowercase().as_str() {
                "on" | "true" | "1" | "yes" => Ok(Setting::PrefixCaching(true)),
                "off" | "false" | "0" | "no" => Ok(Setting::PrefixCaching(false)),
                _ => Err(format!("'{s}': prefix-caching is on or off")),
            },
            _ => Err(format!(
                "'{s}': unknown setting {k} (max-num-seqs, max-num-batched-tokens, kv-blocks, prefix-caching, replicas, shared-prefix-tokens)"
            )),
        }
    }

    /// Applies it.
    pub fn apply(self, s: &mut EngineSettings, w: &mut WorkloadFit) {
        match self {
            Setting::MaxNumSeqs(n) => s.max_num_seqs = n,
            Setting::MaxNumBatchedTokens(n) => s.max_num_batched_tokens = n,
            Setting::KvBlocks(n) => s.kv_blocks = n,
            Setting::PrefixCaching(on) => s.prefix_caching = on,
            Setting::Replicas(n) => s.replicas = n,
            Setting::SharedPrefixTokens(n) => w.shared_prefix_tokens = Some(f64::from(n)),
        }
    }

    /// The flag it sets and its value.
    pub fn describe(self) -> (&'static str, String) {
        match self {
            Setting::MaxNumSeqs(n) => ("--max-num-seqs", n.to_string()),
            Setting::MaxNumBatchedTokens(n) => ("--max-num-batched-tokens", n.to_string()),
            Setting::KvBlocks(n) => ("KV blocks", n.to_string()),
            Setting::PrefixCaching(on) => (
                "--enable-prefix-caching",
                if on { "on" } else { "off" }.to_string(),
            ),
            Setting::Replicas(n) => ("replicas", n.to_string()),
            Setting::SharedPrefixTokens(n) => ("shared prefix tokens", n.to_string()),
        }
    }
}

/// A scenario asked for: settings changed and a load factor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ask {
    /// Settings changed from the capture's.
    pub changes: Vec<Setting>,
    /// × the capture's peak load level (1 when `None`).
    pub load: Option<f64>,
}

/// One loaded window, per replica.
#[derive(Clone, Debug, PartialEq)]
pub struct Win {
    /// Window start, ms.
    pub start_ms: i64,
    /// Window end, ms.
    pub end_ms: i64,
    /// Finished requests per second.
    pub per_s: f64,
    /// Requests in the engine (finished per second × mean e2e).
    pub in_flight: f64,
    /// Decode tokens per second (generated minus first tokens).
    pub decode_per_s: f64,
    /// Prompt tokens computed per second (not from the prefix cache).
    pub prefill_per_s: f64,
    /// Mean inter-token latency, s.
    pub itl_s: f64,
    /// Share of the window the engine was stepping (0.2–1): the tokens
    /// the window's rates put in a mean step, against the tokens per
    /// step it counted (`vllm:iteration_tokens_total`); 1 when that is
    /// missing. Under 1 where the engine idled: between a light load's
    /// requests, or after the load stopped inside the window.
    pub busy: f64,
    /// Prompts a step that finished prompts finished, on average (1 or
    /// more): finished requests per second against the steps that finished
    /// a prompt (`vllm:iteration_tokens_total` above the decode-only
    /// bucket). Prompts that arrive while a step runs are scheduled
    /// together in the next one, so a prompt's step holds the others' too.
    /// `None` where the histogram cannot tell.
    pub prompts_per_step: Option<f64>,
    /// Mean prefill time, s.
    pub prefill_s: Option<f64>,
    /// Mean queue time, s.
    pub queue_s: Option<f64>,
    /// Mean TTFT, s.
    pub ttft_s: Option<f64>,
    /// TTFT p95, ms, and its bucket.
    pub ttft_p95: Option<(f64, Bounds)>,
    /// Inter-token p95, ms, and its bucket.
    pub itl_p95: Option<(f64, Bounds)>,
    /// Mean prompt tokens.
    pub prompt: f64,
    /// Mean generated tokens.
    pub generated: f64,
    /// Share of prompt tokens from the prefix cache, 0–1.
    pub hit: f64,
    /// Running + waiting at its peak scrape minus its mean (fleet).
    pub gauge_spread: Option<f64>,
    /// Some request waited at one of its scrapes.
    pub waited: bool,
    /// In a steady or overload phase (the load held over the window).
    pub steady: bool,
    /// Users behind the load: the most requests the engine held at one
    /// scrape (running + waiting), never fewer than in flight.
    pub users: f64,
}

impl Win {
    /// Think time that makes `users` carry this window's rate: the time a
    /// user spends outside the engine between answers, s.
    pub fn think_s(&self) -> f64 {
        if self.per_s <= 0.0 {
            return 0.0;
        }
        (self.users / self.per_s - self.in_flight / self.per_s).max(0.0)
    }

    /// Decoding sequences in a mean step: Little's law over the steps
    /// (decode tokens per second of stepping × the mean step), never more
    /// than the requests the engine held (tokens of requests that never
    /// finished, aborted or failed, count in the rates but not in it).
    pub fn batch(&self) -> f64 {
        let b = self.decode_per_s * self.itl_s;
        (b / self.busy).min(b.max(self.users))
    }

    /// Prompt tokens computed in a mean step.
    pub fn prefill_tokens(&self) -> f64 {
        self.prefill_per_s * self.itl_s / self.busy
    }
}

/// Fewest finished requests a window needs to be fitted on.
const MIN_FINISHED: f64 = 20.0;

/// The windows of the steady, ramp and overload phases with latency,
/// per replica.
pub fn windows(r: &Report) -> Vec<Win> {
    let reps = r.deployment.replicas.len().max(1) as f64;
    let loaded = |start: i64| {
        r.phases.iter().any(|p| {
            matches!(
                p.kind,
                PhaseKind::Steady | PhaseKind::Ramp | PhaseKind::Overload
            ) && start >= p.start_ms
                && start < p.end_ms
        })
    };
    let mut out = Vec::new();
    for lat in &r.rows.latency {
        if lat.key.replica != Scope::Fleet || !loaded(lat.key.window_start_ms) {
            continue;
        }
        let key = &lat.key;
        let (Some(e), Some(w)) = (
            find_row(&r.rows.efficiency, key),
            find_row(&r.rows.workload, key),
        ) else {
            continue;
        };
        let l = &lat.fields;
        let (Some(rpm), Some(e2e), Some(itl)) = (w.requests_per_min, l.e2e_ms, l.inter_token_ms)
        else {
            continue;
        };
        let minutes = (key.window_end_ms - key.window_start_ms) as f64 / 60_000.0;
        if rpm * minutes < MIN_FINISHED || itl <= 0.0 {
            continue;
        }
        let per_s = rpm / 60.0 / reps;
        let hit = e
            .cached_prompt_share_pct
            .or(e.prefix_cache_hit_pct)
            .unwrap_or(0.0)
            .clamp(0.0, 100.0)
            / 100.0;
        let prompt = w.avg_prompt_tokens.unwrap_or(0.0);
        let generated = w.avg_generated_tokens.unwrap_or(1.0).max(1.0);
        let gen_per_s = e.gen_tokens_per_sec.map_or(per_s * generated, |g| g / reps);
        let prompt_per_s = e.prompt_tokens_per_sec.map_or(per_s * prompt, |p| p / reps);
        let with = |v: Option<f64>, b: Option<Bounds>| v.zip(b);
        let in_flight = per_s * e2e / 1000.0;
        let peak_gauges = e.running.zip(e.waiting).map(|(r, w)| (r + w) / reps);
        // vLLM counts a prompt's tokens once, cached or not, in the
        // iteration that gives its first token.
        let busy = e
            .tokens_per_iteration
            .filter(|t| *t > 0.0)
            .map_or(1.0, |t| {
                ((prompt_per_s + gen_per_s) * itl / 1000.0 / t).clamp(0.2, 1.0)
            });
        out.push(Win {
            start_ms: key.window_start_ms,
            end_ms: key.window_end_ms,
            per_s,
            in_flight,
            waited: e.waiting.is_some_and(|w| w > 0.0),
            steady: r.phases.iter().any(|p| {
                matches!(p.kind, PhaseKind::Steady | PhaseKind::Overload)
                    && key.window_start_ms >= p.start_ms
                    && key.window_start_ms < p.end_ms
            }),
            users: peak_gauges
                .map_or(in_flight, |g| g.max(in_flight))
                .round()
                .max(1.0),
            decode_per_s: (gen_per_s - per_s).max(0.0),
            prefill_per_s: prompt_per_s * (1.0 - hit),
            itl_s: itl / 1000.0,
            busy,
            prompts_per_step: e
                .prompt_steps_per_sec
                .filter(|s| *s > 0.0)
                .map(|s| (per_s * reps / s).max(1.0)),
            prefill_s: l.prefill_ms.map(|x| x / 1000.0),
            queue_s: l.queue_ms.map(|x| x / 1000.0),
            ttft_s: l.ttft_ms.map(|x| x / 1000.0),
            ttft_p95: with(l.ttft_p95_ms, l.bounds.ttft_p95_ms),
            itl_p95: with(l.itl_p95_ms, l.bounds.itl_p95_ms),
            prompt,
            generated,
            hit,
            gauge_spread: match (e.running, e.running_avg, e.waiting, e.waiting_avg) {
                (Some(rm), Some(ra), Some(wm), Some(wa)) => Some((rm + wm) - (ra + wa)),
                _ => None,
            },
        });
    }
    drop_partial(r, out)
}

/// A steady phase's window whose rate is under 60 % of the phase's median,
/// or whose engine stepped for under 80 % of the share of time it did in
/// the phase's median window ([`Win::busy`]), saw the load start or stop
/// inside it: its means mix a load and none, which no replay of one load
/// reproduces.
fn drop_partial(r: &Report, wins: Vec<Win>) -> Vec<Win> {
    let steady: Vec<(i64, i64)> = r
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Steady)
        .map(|p| (p.start_ms, p.end_ms))
        .collect();
    let median_of = |a: i64, b: i64, f: fn(&Win) -> f64| {
        let mut xs: Vec<f64> = wins
            .iter()
            .filter(|w| w.start_ms >= a && w.start_ms < b)
            .map(f)
            .collect();
        xs.sort_by(f64::total_cmp);
        (xs.len() >= 3).then(|| xs[xs.len() / 2])
    };
    // Per steady phase: its span and its median rate and busy share.
    type Medians = (i64, i64, Option<(f64, f64)>);
    let medians: Vec<Medians> = steady
        .iter()
        .map(|&(a, b)| {
            let rate = median_of(a, b, |w| w.per_s);
            let busy = median_of(a, b, |w| w.busy);
            (a, b, rate.zip(busy))
        })
        .collect();
    wins.iter()
        .filter(|w| {
            !medians.iter().any(|&(a, b, m)| {
                w.start_ms >= a
                    && w.start_ms < b
                    && m.is_some_and(|(rate, busy)| w.per_s < 0.6 * rate || w.busy < 0.8 * busy)
            })
        })
        .cloned()
        .collect()
}

fn find_row<'a, T>(
    rows: &'a [vllm_lens_model::report::Row<T>],
    key: &vllm_lens_model::report::RowKey,
) -> Option<&'a T> {
    rows.iter().find(|x| x.key == *key).map(|x| &x.fields)
}

/// A configuration row's value as a number, when stated (not inferred).
fn stated(r: &Report, name: &str) -> Option<f64> {
    let row = r.deployment.configuration.iter().find(|c| c.name == name)?;
    if row.source == Some(ConfigSource::Inferred) {
        return None;
    }
    row.value
        .as_deref()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
}

fn stated_bool(r: &Report, name: &str) -> Option<bool> {
    let row = r.deployment.configuration.iter().find(|c| c.name == name)?;
    match row.value.as_deref()?.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Some(true),
        "false" | "0" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// vLLM's defaults where the capture does not state a setting.
const DEFAULT_MAX_NUM_SEQS: f64 = 256.0;
const DEFAULT_BUDGET: f64 = 2048.0;
const DEFAULT_BLOCK: f64 = 16.0;

/// The configuration replayed as "today", per replica, and what was
/// assumed.
pub fn settings(r: &Report) -> (EngineSettings, Vec<String>) {
    let mut assumed = Vec::new();
    let cap = &r.capacity;
    let seqs = stated(r, "max_num_seqs").or_else(|| {
        (cap.binding_limit == BindingLimit::MaxNumSeqs)
            .then_some(cap.admission_cap)
            .flatten()
    });
    let seqs = seqs.unwrap_or_else(|| {
        assumed.push(format!(
            "--max-num-seqs {DEFAULT_MAX_NUM_SEQS:.0} (vLLM's default; the capture neither states it nor shows a cap)"
        ));
        DEFAULT_MAX_NUM_SEQS
    });
    let budget = stated(r, "max_num_batched_tokens").unwrap_or_else(|| {
        assumed.push(format!(
            "--max-num-batched-tokens {DEFAULT_BUDGET:.0} (vLLM V1's default for the API server; not stated)"
        ));
        DEFAULT_BUDGET
    });
    let block = cap
        .block_size
        .or_else(|| stated(r, "block_size"))
        .unwrap_or_else(|| {
            assumed.push(format!(
                "--block-size {DEFAULT_BLOCK:.0} (vLLM's default; not stated)"
            ));
            DEFAULT_BLOCK
        });
    let blocks = cap
        .kv_tokens
        .map(|t| t / block)
        .or_else(|| stated(r, "num_gpu_blocks"))
        .unwrap_or_else(|| {
            assumed.push("a KV pool that never binds (its size is not in the capture)".into());
            1_000_000.0
        });
    let caching = stated_bool(r, "enable_prefix_caching").unwrap_or_else(|| {
        let hits = r
            .summary
            .efficiency
            .prefix_cache_hit_pct
            .is_some_and(|h| h > 0.0);
        if !hits {
            assumed.push("prefix caching off (not stated, no hit seen)".into());
        }
        hits
    });
    (
        EngineSettings {
            max_num_seqs: seqs.round().clamp(1.0, 65_536.0) as u32,
            max_num_batched_tokens: budget.round().clamp(16.0, 1_048_576.0) as u32,
            kv_blocks: blocks.round().clamp(1.0, 4_000_000.0) as u32,
            block_size: block.round().clamp(1.0, 4096.0) as u32,
            prefix_caching: caching,
            replicas: r.deployment.replicas.len().max(1) as u32,
        },
        assumed,
    )
}

/// The workload over the loaded windows.
pub fn workload(input: &Input<'_>, wins: &[Win]) -> Option<WorkloadFit> {
    let n: f64 = wins.iter().map(|w| w.per_s).sum();
    if n <= 0.0 {
        return None;
    }
    let mean = |f: fn(&Win) -> f64| wins.iter().map(|w| f(w) * w.per_s).sum::<f64>() / n;
    let prompt = mean(|w| w.prompt);
    let hit = mean(|w| w.hit);
    let stated = input.report.settings.shared_prefix_tokens;
    Some(WorkloadFit {
        prompt_tokens: prompt,
        generated_tokens: mean(|w| w.generated),
        prefix_hit_pct: hit * 100.0,
        shared_prefix_tokens: stated.or_else(|| (hit > 0.0).then_some(hit * prompt)),
        think_s: 0.0,
        prompt_buckets: input.prompt_buckets.clone(),
        generation_buckets: input.generation_buckets.clone(),
    })
}
