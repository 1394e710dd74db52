//! `manifest.json`: what the collection script knows about a capture.
//! Every field is optional; unknown fields are ignored so that older tools
//! read newer manifests. The format is documented in `docs/bundle.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The manifest format version this reader writes and understands.
pub const MANIFEST_VERSION: u32 = 1;

/// The whole manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// Always `"vllm-lens-bundle"` when written by our tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Manifest format version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The endpoints scraped.
    pub targets: Vec<ManifestTarget>,
    /// Every scrape attempt, successful or not.
    pub scrapes: Vec<ManifestScrape>,
    /// How the capture was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<Capture>,
    /// Facts about the deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
}

/// One scraped endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ManifestTarget {
    /// Name used by `scrapes[].target`, and as the target's name.
    pub name: String,
    /// `vllm`, `dcgm` or `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The URL scraped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Prometheus `job` label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Prometheus `instance` label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Kubernetes pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// Kubernetes namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Node (host) name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// GPUs this target uses (vLLM) or exposes (DCGM), by UUID.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_uuids: Vec<String>,
    /// Further identity labels attached to every series of the target.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Facts that differ from the bundle-wide environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
}

/// One scrape attempt.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ManifestScrape {
    /// The target's `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Capture time, milliseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<i64>,
    /// The member holding the scrape (path inside the bundle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1 for success, 0 for a failed scrape; absent means 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up: Option<u8>,
    /// Why the scrape failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the scrape took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
}

/// Capture settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Capture {
    /// Scrape interval in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
    /// Start, milliseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<i64>,
    /// End, milliseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ms: Option<i64>,
    /// The tool and version that wrote the bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Delay between `dcgmi dmon` / `nvidia-smi dmon` rows, when those dumps
    /// are in the bundle and carry no timestamps of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dmon_delay_ms: Option<i64>,
    /// The window width of a pushdown export (`collect.sh --from-prometheus
    /// --window`), seconds: the bundle holds per-window statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushdown_window_s: Option<f64>,
}

/// Facts about the deployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// vLLM version (from `/version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vllm_version: Option<String>,
    /// Served model (from `/v1/models`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// GPU model name as NVML prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// GPU count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_count: Option<u32>,
    /// Driver version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// What vLLM runs on: `gpu` or `cpu` (a CPU server has no GPU, so no
    /// dcgm-exporter to scrape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Engine arguments, keyed by flag name without dashes
    /// (`max-model-len`, `gpu-memory-utilization`, ...).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_args: BTreeMap<String, serde_json::Value>,
}

impl Manifest {
    /// Parses manifest JSON; on error returns the line and a message.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, (u32, String)> {
        let mut manifest: Manifest =
            serde_json::from_slice(bytes).map_err(|e| (e.line() as u32, e.to_string()))?;
        for target in &mut manifest.targets {
            target.engine_args_normalise();
        }
        if let Some(env) = &mut manifest.environment {
            env.normalise();
        }
        Ok(manifest)
    }

    /// An index of the scrapes by file path, for looking many files up
    /// (the first entry for a path wins).
    pub fn file_index(&self) -> FileIndex<'_> {
        let mut map = std::collections::HashMap::new();
        for s in &self.scrapes {
            if let Some(f) = s.file.as_deref() {
                map.entry(clean_path(f)).or_insert(s);
            }
        }
        FileIndex { map }
    }

    /// The target entry with this name.
    pub fn target(&self, name: &str) -> Option<&ManifestTarget> {
        self.targets.iter().find(|t| t.name == name)
    }
}

impl ManifestTarget {
    fn engine_args_normalise(&mut self) {
        if let Some(env) = &mut self.environment {
            env.normalise();
        }
    }
}

impl Environment {
    /// Keys as `max-model-len`: leading dashes dropped, `_` read as `-`.
    fn normalise(&mut self) {
        let args = std::mem::take(&mut self.engine_args);
        self.engine_args = args
            .into_iter()
            .map(|(k, v)| (k.trim_start_matches('-').replace('_', "-"), v))
            .collect();
    }
}

/// Paths compare without a leading `./` or `/`.
fn clean_path(p: &str) -> String {
    p.trim_start_matches("./")
        .trim_start_matches('/')
        .replace('\\', "/")
}

/// Scrapes by file path ([`Manifest::file_index`]).
#[derive(Debug)]
pub struct FileIndex<'m> {
    map: std::collections::HashMap<String, &'m ManifestScrape>,
}

impl<'m> FileIndex<'m> {
    /// The entry for a path.
    pub fn get(&self, path: &str) -> Option<&'m ManifestScrape> {
        self.map.get(&clean_path(path)).copied()
    }
}
