//! What `collect.sh` keeps beside the scrapes about the server itself
//! (`meta/`): vLLM's `/version`, `/v1/models` and `/server_info` answers,
//! and the flags each server was started with (`meta/cmdline/<target>.txt`,
//! one argument per line). Read into [`Facts`]; a file that cannot be read
//! is a diagnostic, never a failure.

use std::collections::BTreeMap;

use serde::Serialize;

/// A collector file about the server, by what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FactFile {
    /// `meta/version.json`: `{"version": "0.32.0"}`.
    Version,
    /// `meta/models.json`: the `/v1/models` list.
    Models,
    /// `meta/server_info.json`: `/server_info` (`VLLM_SERVER_DEV_MODE=1`).
    ServerInfo,
    /// `meta/cmdline/<target>.txt`: that target's command line.
    CommandLine(String),
}

impl FactFile {
    /// The fact file at `relative` (a path below the bundle's root).
    pub(crate) fn at(relative: &str) -> Option<FactFile> {
        match relative {
            "meta/version.json" => Some(FactFile::Version),
            "meta/models.json" => Some(FactFile::Models),
            "meta/server_info.json" => Some(FactFile::ServerInfo),
            _ => relative
                .strip_prefix("meta/cmdline/")
                .and_then(|r| r.strip_suffix(".txt"))
                .filter(|t| !t.is_empty() && !t.contains('/'))
                .map(|t| FactFile::CommandLine(t.to_string())),
        }
    }
}

/// One model `/v1/models` lists.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServedModel {
    /// Its id (`--served-model-name`, else the path).
    pub id: String,
    /// `max_model_len`, the context length it was given.
    pub max_model_len: Option<u64>,
}

/// What the collector recorded about the servers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Facts {
    /// vLLM's `/version`.
    pub version: Option<String>,
    /// vLLM's `/v1/models`.
    pub models: Vec<ServedModel>,
    /// Scalar settings of `/server_info`'s `vllm_config`, by vLLM's own
    /// field name (`max_num_batched_tokens`, `enable_prefix_caching`, ...).
    pub server_info: BTreeMap<String, String>,
    /// The flags each target's server was started with, by target, then by
    /// flag name without dashes (`max-num-seqs` → `"64"`; a bare flag is
    /// `"true"`, its `--no-` form `"false"`; the model is `model`).
    pub command_lines: BTreeMap<String, BTreeMap<String, String>>,
}

impl Facts {
    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.version.is_none()
            && self.models.is_empty()
            && self.server_info.is_empty()
            && self.command_lines.is_empty()
    }

    /// Reads one file into the facts; `Err` says why it could not be read.
    pub(crate) fn read(&mut self, file: &FactFile, bytes: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_string())?;
        match file {
            FactFile::Version => {
                let v: serde_json::Value = json(text)?;
                self.version = v.get("version").and_then(|v| v.as_str()).map(String::from);
            }
            FactFile::Models => {
                let v: serde_json::Value = json(text)?;
                let list = v.get("data").and_then(|d| d.as_array());
                for m in list.into_iter().flatten() {
                    let Some(id) = m.get("id").and_then(|i| i.as_str()) else {
                        continue;
                    };
                    self.models.push(ServedModel {
                        id: id.to_string(),
                        max_model_len: m.get("max_model_len").and_then(|l| l.as_u64()),
                    });
                }
            }
            FactFile::ServerInfo => {
                let v: serde_json::Value = json(text)?;
                let config = v
                    .get("vllm_config")
                    .ok_or_else(|| "has no vllm_config".to_string())?;
                self.server_info = match config {
                    serde_json::Value::String(s) => scalar_fields(s),
                    serde_json::Value::Object(_) => flatten(config),
                    _ => BTreeMap::new(),
                };
            }
            FactFile::CommandLine(target) => {
                // One argument per line (collect.sh, from /proc/<pid>/cmdline);
                // a command line pasted on one line is split at spaces.
                let mut args: Vec<&str> = text
                    .lines()
                    .map(|l| l.trim_end_matches('\r'))
                    .filter(|l| !l.is_empty())
                    .collect();
                if let [line] = args[..] {
                    args = line.split_whitespace().collect();
                }
                self.command_lines
                    .insert(target.clone(), parse_flags(&args));
            }
        }
        Ok(())
    }
}

fn json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("is not JSON ({e})"))
}

/// The scalar `key=value` fields of a Python dataclass's `str()`
/// (`model='m', max_num_seqs=64, enable_prefix_caching=False, ...`), at any
/// depth (`scheduler_config=SchedulerConfig(max_num_batched_tokens=256,
/// ...)`): numbers, `True`/`False`/`None` and quoted strings. The first
/// occurrence of a name wins.
fn scalar_fields(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // A name: [A-Za-z_][A-Za-z0-9_]* right before '=' (not '==').
        if (b[i].is_ascii_alphabetic() || b[i] == b'_')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && b[i] == b'=' && b.get(i + 1) != Some(&b'=') {
                let name = &s[start..i];
                i += 1;
                let (value, next) = scalar_at(s, i);
                if let Some(v) = value {
                    out.entry(name.to_string()).or_insert(v);
                }
                i = next.max(i);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// A scalar value starting at byte `i`, and where it ends.
fn scalar_at(s: &str, i: usize) -> (Option<String>, usize) {
    let b = s.as_bytes();
    match b.get(i) {
        Some(&q) if q == b'\'' || q == b'"' => match s[i + 1..].find(q as char) {
            Some(end) => (Some(s[i + 1..i + 1 + end].to_string()), i + 2 + end),
            None => (None, b.len()),
        },
        Some(_) => {
            let end = s[i..]
                .find([',', ')', ' ', '}', ']'])
                .map_or(s.len(), |e| i + e);
            let v = &s[i..end];
            let scalar = matches!(v, "True" | "False" | "None") || v.parse::<f64>().is_ok();
            // A nested value (`SchedulerConfig(...)`, `{...}`) is read
            // into: the scan goes on right after the `=`.
            if scalar {
                (Some(v.to_string()), end)
            } else {
                (None, i)
            }
        }
        None => (None, i),
    }
}

/// A JSON object's scalar leaves by their last key.
fn flatten(v: &serde_json::Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
        if let serde_json::Value::Object(m) = v {
            for (k, x) in m {
                match x {
                    serde_json::Value::Object(_) => walk(x, out),
                    serde_json::Value::String(s) => {
                        out.entry(k.clone()).or_insert_with(|| s.clone());
                    }
                    serde_json::Value::Bool(b) => {
                        out.entry(k.clone())
                            .or_insert_with(|| if *b { "True" } else { "False" }.into());
                    }
                    serde_json::Value::Number(n) => {
                        out.entry(k.clone()).or_insert_with(|| n.to_string());
                    }
                    serde_json::Value::Null => {
                        out.entry(k.clone()).or_insert_with(|| "None".into());
                    }
                    serde_json::Value::Array(_) => {}
                }
            }
        }
    }
    walk(v, &mut out);
    out
}

/// Short options vLLM accepts, by their long name.
const SHORT: [(&str, &str); 4] = [
    ("-tp", "tensor-parallel-size"),
    ("-pp", "pipeline-parallel-size"),
    ("-dp", "data-parallel-size"),
    ("-q", "quantization"),
];

/// Flags from a command line: everything after `serve` (or the API
/// server's module), else every `--flag`. `--flag value`, `--flag=value`,
/// a bare `--flag` (`"true"`) and `--no-flag` (`"false"`); the first
/// positional argument after `serve` is the model. Names as
/// `max-num-seqs` (`_` read as `-`).
pub(crate) fn parse_flags(args: &[&str]) -> BTreeMap<String, String> {
    let start = args
        .iter()
        .position(|a| *a == "serve" || a.ends_with("vllm.entrypoints.openai.api_server"))
        .map_or(0, |p| p + 1);
    let mut out = BTreeMap::new();
    let after_serve = start > 0 && args[start - 1] == "serve";
    let mut i = start;
    let mut first = true;
    while i < args.len() {
        let a = args[i];
        let long = SHORT
            .iter()
            .find(|(s, _)| *s == a)
            .map(|(_, l)| (*l).to_string());
        let name = long.or_else(|| a.strip_prefix("--").map(|n| n.replace('_', "-")));
        match name {
            Some(n) if !n.is_empty() => {
                let is_flag = |v: &&&str| v.starts_with("--") || SHORT.iter().any(|(s, _)| s == *v);
                if let Some((k, v)) = n.split_once('=') {
                    out.insert(k.to_string(), v.to_string());
                    i += 1;
                } else if let Some(off) = n.strip_prefix("no-") {
                    out.insert(off.to_string(), "false".into());
                    i += 1;
                } else if let Some(v) = args.get(i + 1).filter(|v| !is_flag(v)) {
                    out.insert(n, (*v).to_string());
                    i += 2;
                } else {
                    out.insert(n, "true".into());
                    i += 1;
                }
            }
            _ => {
                if first && after_serve {
                    out.insert("model".into(), a.to_string());
                }
                i += 1;
            }
        }
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(line: &str) -> String {
        let args: Vec<&str> = line.split_whitespace().collect();
        parse_flags(&args)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn command_lines_read_as_flags() {
        let cases = [
            (
                "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64 --enable-chunked-prefill",
                "enable-chunked-prefill=true max-num-seqs=64 model=meta-llama/Llama-3.1-8B",
            ),
            (
                "/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model /m --max_num_batched_tokens=256 --no-enable-prefix-caching -tp 2",
                "enable-prefix-caching=false max-num-batched-tokens=256 model=/m tensor-parallel-size=2",
            ),
            (
                "--max-num-seqs 9 --gpu-memory-utilization 0.85",
                "gpu-memory-utilization=0.85 max-num-seqs=9",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(flags(line), want, "{line}");
        }
    }

    #[test]
    fn server_info_reads_scalars_at_any_depth() {
        let s = "model='/m', speculative_config=None, tokenizer='/m', max_seq_len=4096, \
                 scheduler_config=SchedulerConfig(max_num_batched_tokens=256, max_num_seqs=64, \
                 enable_chunked_prefill=True), cache_config=CacheConfig(block_size=16, \
                 enable_prefix_caching=False), compilation_config={\"level\": 0}";
        let f = scalar_fields(s);
        assert_eq!(f["max_num_batched_tokens"], "256");
        assert_eq!(f["max_num_seqs"], "64");
        assert_eq!(f["enable_prefix_caching"], "False");
        assert_eq!(f["enable_chunked_prefill"], "True");
        assert_eq!(f["model"], "/m");
        assert_eq!(f["speculative_config"], "None");
        assert!(!f.contains_key("compilation_config"));
    }

    #[test]
    fn files_read_into_facts() {
        let mut f = Facts::default();
        f.read(&FactFile::Version, br#"{"version":"0.32.0"}"#)
            .unwrap();
        f.read(
            &FactFile::Models,
            br#"{"object":"list","data":[{"id":"tiny","max_model_len":4096,"permission":[{"id":"p"}]}]}"#,
        )
        .unwrap();
        f.read(
            &FactFile::CommandLine("vllm-0".into()),
            b"python3\n-m\nvllm.entrypoints.openai.api_server\n--max-num-seqs\n64\n",
        )
        .unwrap();
        assert_eq!(f.version.as_deref(), Some("0.32.0"));
        assert_eq!(
            f.models,
            vec![ServedModel {
                id: "tiny".into(),
                max_model_len: Some(4096)
            }]
        );
        assert_eq!(f.command_lines["vllm-0"]["max-num-seqs"], "64");
        // Pasted on one line.
        f.read(
            &FactFile::CommandLine("vllm-1".into()),
            b"vllm serve m --max-num-seqs 32 --enable-prefix-caching\n",
        )
        .unwrap();
        assert_eq!(f.command_lines["vllm-1"]["max-num-seqs"], "32");
        assert_eq!(f.command_lines["vllm-1"]["enable-prefix-caching"], "true");
        assert!(f.read(&FactFile::Models, b"{not json").is_err());
        assert_eq!(
            FactFile::at("meta/cmdline/vllm-1.txt"),
            Some(FactFile::CommandLine("vllm-1".into()))
        );
        assert_eq!(FactFile::at("meta/cmdline/a/b.txt"), None);
    }
}
