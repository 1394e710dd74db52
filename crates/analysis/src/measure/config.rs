//! What the server was told: every setting the bundle states, each with
//! its source, and what the metrics let us infer where nothing states it.
//!
//! Sources, the server's own account first: vLLM's info families
//! (`vllm:cache_config_info`, `vllm:kv_offload_config_info`,
//! `vllm:simple_kv_offload_info`, `vllm:lora_requests_info`: every label),
//! `/server_info`, the command line `collect.sh` read (`meta/cmdline/`), the
//! manifest's `engine_args`, `/v1/models` (`max_model_len`). Where two
//! disagree the first wins and the row says what the other stated. A key
//! setting no source states is a row without a value (missing, never a
//! default guessed from the release), with the bound the metrics give:
//! on V0 no engine step carried more than the top occupied bucket of
//! `vllm:iteration_tokens_total` (V1 counts a prompt whole at the step its
//! prefill ends, so there it bounds nothing), and `--max-num-seqs` is at
//! least the most requests ever running.

use std::collections::BTreeMap;

use vllm_lens_bundle::Loaded;
use vllm_lens_catalog::Signal;
use vllm_lens_store::{SeriesId, Store, TargetId};

use crate::measure::inputs::Inputs;
use crate::model::{ConfigSetting, ConfigSource};
use crate::text::num;

/// A key setting: what the judgement reads, shown first, missing or not.
struct Key {
    /// vLLM's field name.
    name: &'static str,
    /// The flag that sets it.
    flag: Option<&'static str>,
    /// Its label in `vllm:cache_config_info`.
    cache_label: Option<&'static str>,
    /// Its names in `/server_info`'s `vllm_config`.
    server_info: &'static [&'static str],
    /// Its flag names on a command line or in the manifest (no dashes).
    args: &'static [&'static str],
}

/// The key settings, in the order the table shows them.
const KEYS: &[Key] = &[
    Key {
        name: "max_num_seqs",
        flag: Some("--max-num-seqs"),
        cache_label: None,
        server_info: &["max_num_seqs"],
        args: &["max-num-seqs"],
    },
    Key {
        name: "max_num_batched_tokens",
        flag: Some("--max-num-batched-tokens"),
        cache_label: None,
        server_info: &["max_num_batched_tokens"],
        args: &["max-num-batched-tokens"],
    },
    Key {
        name: "enable_chunked_prefill",
        flag: Some("--enable-chunked-prefill"),
        cache_label: None,
        server_info: &["enable_chunked_prefill", "chunked_prefill_enabled"],
        args: &["enable-chunked-prefill"],
    },
    Key {
        name: "enable_prefix_caching",
        flag: Some("--enable-prefix-caching"),
        cache_label: Some("enable_prefix_caching"),
        server_info: &["enable_prefix_caching"],
        args: &["enable-prefix-caching"],
    },
    Key {
        name: "max_model_len",
        flag: Some("--max-model-len"),
        cache_label: None,
        server_info: &["max_model_len", "max_seq_len"],
        args: &["max-model-len"],
    },
    Key {
        name: "block_size",
        flag: Some("--block-size"),
        cache_label: Some("block_size"),
        server_info: &["block_size"],
        args: &["block-size"],
    },
    Key {
        name: "num_gpu_blocks",
        flag: None,
        cache_label: Some("num_gpu_blocks"),
        server_info: &[],
        args: &[],
    },
    Key {
        name: "num_gpu_blocks_override",
        flag: Some("--num-gpu-blocks-override"),
        cache_label: Some("num_gpu_blocks_override"),
        server_info: &["num_gpu_blocks_override"],
        args: &["num-gpu-blocks-override"],
    },
    Key {
        name: "gpu_memory_utilization",
        flag: Some("--gpu-memory-utilization"),
        cache_label: Some("gpu_memory_utilization"),
        server_info: &["gpu_memory_utilization"],
        args: &["gpu-memory-utilization"],
    },
    Key {
        name: "cache_dtype",
        flag: Some("--kv-cache-dtype"),
        cache_label: Some("cache_dtype"),
        server_info: &["cache_dtype", "kv_cache_dtype"],
        args: &["kv-cache-dtype"],
    },
    Key {
        name: "tensor_parallel_size",
        flag: Some("--tensor-parallel-size"),
        cache_label: None,
        server_info: &["tensor_parallel_size"],
        args: &["tensor-parallel-size"],
    },
];

/// Info families whose labels are settings, with the source they name.
const INFO_FAMILIES: [(&str, ConfigSource); 4] = [
    ("vllm:cache_config_info", ConfigSource::CacheConfigInfo),
    (
        "vllm:kv_offload_config_info",
        ConfigSource::KvOffloadConfigInfo,
    ),
    (
        "vllm:simple_kv_offload_info",
        ConfigSource::SimpleKvOffloadInfo,
    ),
    ("vllm:lora_requests_info", ConfigSource::LoraRequestsInfo),
];

/// Labels that identify a series rather than state a setting.
const IDENTITY: [&str; 9] = [
    "engine",
    "model_name",
    "instance",
    "job",
    "pod",
    "namespace",
    "node",
    "container",
    "endpoint",
];

/// The server's configuration: the table, and the settings the judgement
/// reads, typed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Config {
    /// Every row of the table.
    pub rows: Vec<ConfigSetting>,
    /// `--max-num-seqs` as stated (per replica).
    pub max_num_seqs: Option<f64>,
    /// `--max-num-batched-tokens` as stated.
    pub max_num_batched_tokens: Option<f64>,
    /// Prefix caching on or off, as stated (or seen working).
    pub prefix_caching: Option<bool>,
    /// Chunked prefill on or off, as stated.
    pub chunked_prefill: Option<bool>,
    /// `num_gpu_blocks_override` as stated, when set.
    pub blocks_override: Option<String>,
    /// The context length.
    pub max_model_len: Option<f64>,
    /// The top occupied bucket of tokens per engine step over the capture:
    /// (lower bound, upper bound]; the upper bound is infinite past the
    /// last finite bucket.
    pub step_tokens_top: Option<(f64, f64)>,
}

/// The latest series of `name` on any of `replicas`, with its labels.
fn latest<'s>(
    store: &'s Store,
    replicas: &[(TargetId, String)],
    name: &str,
) -> Option<(SeriesId, Vec<(&'s str, &'s str)>)> {
    let mut best: Option<(i64, f64, SeriesId)> = None;
    for (i, s) in store.all_series().iter().enumerate() {
        let sid = SeriesId(i as u32);
        if !replicas.iter().any(|(t, _)| *t == s.target()) || store.series_name(sid) != name {
            continue;
        }
        let (Some(&t), Some(&v)) = (s.times().last(), s.values().last()) else {
            continue;
        };
        // lora_requests_info's value is the time its adapters last changed:
        // the current state is the largest; for the others (1.0) the latest.
        if best.is_none_or(|b| (t, v) > (b.0, b.1)) {
            best = Some((t, v, sid));
        }
    }
    best.map(|(_, _, sid)| (sid, store.labels(sid).collect()))
}

/// A value as a setting reads it: `None`, empty and `null` state nothing.
fn stated(v: &str) -> Option<&str> {
    (!matches!(v.trim(), "" | "None" | "none" | "null")).then_some(v.trim())
}

fn as_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn as_num(v: &str) -> Option<f64> {
    v.trim_matches('"')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// What the stages read to build the table.
pub(crate) struct ConfigInput<'a> {
    pub loaded: &'a Loaded,
    pub replicas: &'a [(TargetId, String)],
    pub whole: &'a Inputs,
    /// The most requests running on one replica at a scrape.
    pub peak_running: Option<f64>,
    /// The V1 engine: its `vllm:iteration_tokens_total` counts a prompt
    /// whole at the step its prefill ends, so it bounds no step budget.
    pub engine_v1: bool,
}

/// Reads the configuration.
pub(crate) fn read(i: &ConfigInput<'_>) -> Config {
    let store = &i.loaded.store;
    // Every source as (source, setting name → value).
    let mut info: Vec<(ConfigSource, BTreeMap<String, String>)> = Vec::new();
    for (family, source) in INFO_FAMILIES {
        if let Some((_, labels)) = latest(store, i.replicas, family) {
            let map = labels
                .into_iter()
                .filter(|(k, _)| !IDENTITY.contains(k) && *k != "__name__")
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            info.push((source, map));
        }
    }
    let facts = &i.loaded.facts;
    // The command line of a replica (the first with one).
    let cmdline: BTreeMap<String, String> = i
        .replicas
        .iter()
        .find_map(|(_, name)| facts.command_lines.get(name))
        .or_else(|| facts.command_lines.values().next())
        .cloned()
        .unwrap_or_default();
    let manifest: BTreeMap<String, String> = i
        .loaded
        .manifest
        .as_ref()
        .and_then(|m| m.environment.as_ref())
        .map(|e| {
            e.engine_args
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect()
        })
        .unwrap_or_default();
    let models_len = facts
        .models
        .iter()
        .find_map(|m| m.max_model_len)
        .map(|l| l.to_string());

    let mut rows = Vec::new();
    let mut used: Vec<(ConfigSource, String)> = Vec::new();
    for key in KEYS {
        let mut found: Vec<(ConfigSource, String)> = Vec::new();
        if let Some(l) = key.cache_label
            && let Some((_, m)) = info
                .iter()
                .find(|(s, _)| *s == ConfigSource::CacheConfigInfo)
            && let Some(v) = m.get(l)
        {
            used.push((ConfigSource::CacheConfigInfo, l.to_string()));
            found.push((ConfigSource::CacheConfigInfo, v.clone()));
        }
        if let Some(v) = key
            .server_info
            .iter()
            .find_map(|n| facts.server_info.get(*n))
        {
            found.push((ConfigSource::ServerInfo, v.clone()));
        }
        if let Some((a, v)) = key
            .args
            .iter()
            .find_map(|a| cmdline.get(*a).map(|v| (a, v)))
        {
            used.push((ConfigSource::CommandLine, (*a).to_string()));
            found.push((ConfigSource::CommandLine, v.clone()));
        }
        if let Some((a, v)) = key
            .args
            .iter()
            .find_map(|a| manifest.get(*a).map(|v| (a, v)))
        {
            used.push((ConfigSource::Manifest, (*a).to_string()));
            found.push((ConfigSource::Manifest, v.clone()));
        }
        if key.name == "max_model_len"
            && let Some(v) = &models_len
        {
            found.push((ConfigSource::Models, v.clone()));
        }
        rows.push(key_row(key, &found));
    }
    let mut config = Config::default();
    infer(i, &mut rows, &mut config);

    // Every other label and flag, by source.
    for (source, map) in &info {
        for (k, v) in map {
            if used.iter().any(|(s, n)| s == source && n == k) {
                continue;
            }
            rows.push(other_row(k, v, *source, None));
        }
    }
    for (source, map) in [
        (ConfigSource::CommandLine, &cmdline),
        (ConfigSource::Manifest, &manifest),
    ] {
        for (k, v) in map {
            if !used.iter().any(|(s, n)| *s == source && n == k) {
                rows.push(other_row(k, v, source, Some(format!("--{k}"))));
            }
        }
    }
    if let Some(v) = &facts.version {
        rows.push(other_row("vllm_version", v, ConfigSource::Version, None));
    }

    let value = |name: &str| {
        rows.iter()
            .find(|r| r.key && r.name == name && r.source != Some(ConfigSource::Inferred))
            .and_then(|r| r.value.as_deref())
            .and_then(stated)
    };
    config.max_num_seqs = value("max_num_seqs").and_then(as_num);
    config.max_num_batched_tokens = value("max_num_batched_tokens").and_then(as_num);
    config.chunked_prefill = value("enable_chunked_prefill").and_then(as_bool);
    config.blocks_override = value("num_gpu_blocks_override").map(String::from);
    config.max_model_len = value("max_model_len").and_then(as_num);
    config.prefix_caching = value("enable_prefix_caching")
        .and_then(as_bool)
        .or_else(|| {
            // Queries counted mean the cache was asked: it is on.
            i.whole
                .counters
                .get(&Signal::PrefixQueries)
                .filter(|c| c.increase > 0.0)
                .map(|_| true)
        });
    config.rows = rows;
    config
}

/// A key setting's row from what the sources state, the first winning.
fn key_row(key: &Key, found: &[(ConfigSource, String)]) -> ConfigSetting {
    let first = found.first();
    let others: Vec<String> = found
        .iter()
        .skip(1)
        .filter(|(_, v)| {
            Some(v) != first.map(|f| &f.1) && stated(v) != first.and_then(|f| stated(&f.1))
        })
        .map(|(s, v)| format!("{} says {v}", s.describe()))
        .collect();
    ConfigSetting {
        name: key.name.to_string(),
        flag: key.flag.map(String::from),
        value: first.map(|f| f.1.clone()),
        source: first.map(|f| f.0),
        key: true,
        note: (!others.is_empty()).then(|| {
            format!(
                "{}; the first source is the server's own account",
                others.join("; ")
            )
        }),
    }
}

fn other_row(name: &str, value: &str, source: ConfigSource, flag: Option<String>) -> ConfigSetting {
    ConfigSetting {
        name: name.to_string(),
        flag,
        value: Some(value.to_string()),
        source: Some(source),
        key: false,
        note: None,
    }
}

/// Bounds the metrics give where nothing states a key setting.
fn infer(i: &ConfigInput<'_>, rows: &mut [ConfigSetting], config: &mut Config) {
    config.step_tokens_top = if i.engine_v1 {
        None
    } else {
        i.whole
            .hists
            .get(&Signal::IterationTokens)
            .and_then(|h| top_bucket(&h.buckets))
    };
    for row in rows.iter_mut().filter(|r| r.value.is_none()) {
        match row.name.as_str() {
            "max_num_batched_tokens" => {
                if let Some((lo, hi)) = config.step_tokens_top {
                    row.source = Some(ConfigSource::Inferred);
                    if hi.is_finite() {
                        row.value = Some(format!("≥ {}", num(lo + 1.0)));
                        row.note = Some(format!(
                            "not stated; the fullest engine steps carried {}–{} tokens (vllm:iteration_tokens_total), so the budget is at least {}",
                            num(lo + 1.0),
                            num(hi),
                            num(lo + 1.0)
                        ));
                    } else {
                        row.value = Some(format!("> {}", num(lo)));
                        row.note = Some(format!(
                            "not stated; some engine steps carried more than {} tokens (vllm:iteration_tokens_total)",
                            num(lo)
                        ));
                    }
                }
            }
            "max_num_seqs" => {
                if let Some(p) = i.peak_running.filter(|p| *p > 0.0) {
                    row.source = Some(ConfigSource::Inferred);
                    row.value = Some(format!("≥ {}", num(p)));
                    row.note = Some(format!(
                        "not stated; {} requests ran at once at a scrape (vllm:num_requests_running)",
                        num(p)
                    ));
                }
            }
            _ => {}
        }
    }
}

/// The top bucket with observations: (lower bound, upper bound].
pub(crate) fn top_bucket(b: &vllm_lens_query::Buckets) -> Option<(f64, f64)> {
    let norm = b.normalised()?;
    let mut prev = (0.0, 0.0);
    let mut top = None;
    for &(le, count) in &norm {
        if count > prev.1 + 1e-9 {
            top = Some((prev.0, le));
        }
        prev = (le, count);
    }
    top
}

/// Steps of a window in the bucket `(lo, hi]`, and all its steps.
pub(crate) fn steps_in(b: &vllm_lens_query::Buckets, lo: f64, hi: f64) -> Option<(f64, f64)> {
    let norm = b.normalised()?;
    let at = |x: f64| {
        norm.iter()
            .rev()
            .find(|(le, _)| *le <= x + 1e-9)
            .map_or(0.0, |(_, c)| *c)
    };
    let total = norm.last().map(|(_, c)| *c)?;
    Some(((at(hi) - at(lo)).max(0.0), total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vllm_lens_query::Buckets;

    #[test]
    fn the_top_bucket_is_the_last_that_grew() {
        let b = Buckets {
            les: vec![128.0, 256.0, 512.0, f64::INFINITY],
            counts: vec![10.0, 90.0, 90.0, 90.0],
        };
        assert_eq!(top_bucket(&b), Some((128.0, 256.0)));
        assert_eq!(steps_in(&b, 128.0, 256.0), Some((80.0, 90.0)));
        let over = Buckets {
            les: vec![128.0, f64::INFINITY],
            counts: vec![10.0, 12.0],
        };
        assert_eq!(top_bucket(&over), Some((128.0, f64::INFINITY)));
    }
}
