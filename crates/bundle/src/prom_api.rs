//! Prometheus HTTP API results (`query_range` matrices, `query` vectors) as
//! a bundle member: what `collect.sh --from-prometheus` writes when the
//! fleet is already scraped by Prometheus, Thanos or Mimir. Each series
//! becomes exposition text with its own timestamps, grouped into one target
//! per `instance` (the label Prometheus gives every scraped endpoint), so
//! the rest of the pipeline reads it like captured scrapes.
//!
//! Types are not in the API's answer; they are recovered from the names:
//! a family with `_bucket` series carrying `le` is a histogram, a name
//! ending in `_total` a counter, anything else is left untyped (the
//! catalogue reads gauges and DCGM fields by name).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;
use vllm_lens_store::WindowStat;

/// One target's worth of converted samples.
#[derive(Debug)]
pub struct Converted {
    /// Target name: the series' `instance` (or `job`, or `prometheus`).
    pub target: String,
    /// Exposition text with a timestamp on every sample.
    pub text: String,
    /// A pushdown export's per-window statistics of gauges (series labelled
    /// `vllm_lens_stat="max"` and so on by `collect.sh --window`), as
    /// exposition text per statistic, the label removed.
    pub stats: Vec<(WindowStat, String)>,
}

/// The label `collect.sh --window` puts on each per-window statistic.
pub const STAT_LABEL: &str = "vllm_lens_stat";

/// True when the bytes look like a Prometheus API answer.
pub fn looks_like(head: &str) -> bool {
    let t = head.trim_start();
    t.starts_with('{')
        && (t.contains("\"resultType\"") || (t.contains("\"data\"") && t.contains("\"result\"")))
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Converts an API answer; `Err` with a message when it is not one.
pub fn convert(text: &str) -> Result<Vec<Converted>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    if v["status"] != "success" {
        return Err(format!(
            "the Prometheus API answered status {:?}: {}",
            v["status"].as_str().unwrap_or("?"),
            v["error"].as_str().unwrap_or("no error text")
        ));
    }
    let kind = v["data"]["resultType"].as_str().unwrap_or("");
    if kind != "matrix" && kind != "vector" {
        return Err(format!(
            "resultType {kind:?} is not a matrix or vector of series"
        ));
    }
    let results = v["data"]["result"]
        .as_array()
        .ok_or("data.result is not a list")?;
    // target → family name → lines.
    let mut groups: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut histograms: BTreeSet<String> = BTreeSet::new();
    // target → stat → lines.
    let mut stats: BTreeMap<String, BTreeMap<WindowStat, Vec<String>>> = BTreeMap::new();
    for r in results {
        let Some(metric) = r["metric"].as_object() else {
            continue;
        };
        let Some(name) = metric.get("__name__").and_then(Value::as_str) else {
            continue; // an expression result, not a series
        };
        let target = metric
            .get("instance")
            .or_else(|| metric.get("job"))
            .and_then(Value::as_str)
            .unwrap_or("prometheus")
            .to_string();
        let mut labels: Vec<(String, String)> = metric
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "__name__" | "instance" | STAT_LABEL))
            .map(|(k, v)| {
                let k = if k == "job" {
                    "scrape_job".to_string()
                } else {
                    k.clone()
                };
                (k, v.as_str().unwrap_or("").to_string())
            })
            .collect();
        labels.sort();
        if name.ends_with("_bucket") && labels.iter().any(|(k, _)| k == "le") {
            histograms.insert(name.trim_end_matches("_bucket").to_string());
        }
        let label_text = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect::<Vec<_>>()
            .join(",");
        let head = if label_text.is_empty() {
            name.to_string()
        } else {
            format!("{name}{{{label_text}}}")
        };
        let points: Vec<&Value> = match (&r["values"], &r["value"]) {
            (Value::Array(vs), _) => vs.iter().collect(),
            (_, v @ Value::Array(_)) => vec![v],
            _ => Vec::new(),
        };
        let stat = match metric.get(STAT_LABEL).and_then(Value::as_str) {
            Some(s) => match WindowStat::from_name(s) {
                Some(stat) => Some(stat),
                None => continue,
            },
            None => None,
        };
        let lines = match stat {
            Some(stat) => stats
                .entry(target.clone())
                .or_default()
                .entry(stat)
                .or_default(),
            None => groups
                .entry(target.clone())
                .or_default()
                .entry(name.to_string())
                .or_default(),
        };
        for p in points {
            let (Some(t), Some(val)) = (p[0].as_f64(), p[1].as_str()) else {
                continue;
            };
            let ms = (t * 1000.0).round() as i64;
            lines.push(format!("{head} {val} {ms}"));
        }
    }
    let mut out = Vec::new();
    for target in stats.keys() {
        groups.entry(target.clone()).or_default();
    }
    for (target, families) in groups {
        let mut text = String::new();
        let mut declared = BTreeSet::new();
        for name in families.keys() {
            let base = ["_bucket", "_count", "_sum"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .filter(|b| histograms.contains(*b));
            if let Some(b) = base {
                if declared.insert(b.to_string()) {
                    let _ = writeln!(text, "# TYPE {b} histogram");
                }
            } else if name.ends_with("_total") && declared.insert(name.clone()) {
                let _ = writeln!(text, "# TYPE {name} counter");
            }
        }
        // Histograms' parts together, each family whole.
        for lines in families.values() {
            for l in lines {
                text.push_str(l);
                text.push('\n');
            }
        }
        let stats = stats
            .remove(&target)
            .unwrap_or_default()
            .into_iter()
            .map(|(stat, lines)| {
                let mut text = String::new();
                for l in lines {
                    text.push_str(&l);
                    text.push('\n');
                }
                (stat, text)
            })
            .collect();
        out.push(Converted {
            target,
            text,
            stats,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_becomes_timestamped_text_per_instance() {
        let json = r#"{"status":"success","data":{"resultType":"matrix","result":[
          {"metric":{"__name__":"vllm:generation_tokens_total","instance":"10.0.0.1:8000","job":"vllm","model_name":"m"},"values":[[1767225600,"10"],[1767225615.5,"25"]]},
          {"metric":{"__name__":"vllm:e2e_request_latency_seconds_bucket","instance":"10.0.0.1:8000","le":"+Inf"},"values":[[1767225600,"3"]]},
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","instance":"node:9400","gpu":"0"},"values":[[1767225600,"99"]]}]}}"#;
        let c = convert(json).expect("converts");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].target, "10.0.0.1:8000");
        assert!(
            c[0].text
                .contains("# TYPE vllm:generation_tokens_total counter")
        );
        assert!(
            c[0].text
                .contains("# TYPE vllm:e2e_request_latency_seconds histogram")
        );
        assert!(c[0].text.contains(
            "vllm:generation_tokens_total{model_name=\"m\",scrape_job=\"vllm\"} 25 1767225615500"
        ));
        assert!(convert(r#"{"status":"error","error":"bad query"}"#).is_err());
        assert!(looks_like(
            "  {\"status\":\"success\",\"data\":{\"resultType\":\"matrix\""
        ));
    }
}
