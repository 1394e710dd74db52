/*!
A local Prometheus, the test oracle: a store written as OpenMetrics with
timestamps, backfilled with `promtool tsdb create-blocks-from openmetrics`,
served by `prometheus` on 127.0.0.1 (a free port), and queried over its
HTTP API. Used by the integration tests (`tests/it/oracle.rs`) and the
benchmark (`crates/bench`). Needs Debian's `prometheus` package (2.42);
nothing is downloaded.

Not part of the core: it runs processes, opens sockets and writes files.

# Brief overview

* [`backfill`]: a store → a TSDB folder (promtool).
* [`Prometheus::serve`]: serves a TSDB folder; killed on drop.
* [`Prometheus::query`], [`Prometheus::query_range`]: instant and range
  queries, parsed.
*/
#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vllm_lens_core::store::Store;

/// A series' labels (with `__name__`).
pub type Labels = BTreeMap<String, String>;

/// One series of a range query: its labels and `(time ms, value)` points.
pub type RangeSeries = (Labels, Vec<(i64, f64)>);

/// Writes `store` as OpenMetrics into `dir` and backfills it into
/// `dir/data` with promtool; the data folder, or promtool's complaint.
pub fn backfill(store: &Store, dir: &Path) -> Result<PathBuf, String> {
    let mut om = String::new();
    vllm_lens_core::openmetrics::write(store, &mut om);
    let om_path = dir.join("bundle.om");
    std::fs::write(&om_path, om).map_err(|e| format!("{}: {e}", om_path.display()))?;
    let data = dir.join("data");
    let out = Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&om_path)
        .arg(&data)
        .output()
        .map_err(|e| format!("promtool cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "promtool failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(data)
}

/// A running Prometheus, stopped when dropped.
pub struct Prometheus {
    child: Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Serves the TSDB in `data` (configuration and log in `dir`), with
    /// `extra` flags (e.g. `--query.max-samples=1000`), and waits up to
    /// `ready_within` for `/-/ready`.
    pub fn serve(
        data: &Path,
        dir: &Path,
        extra: &[&str],
        ready_within: Duration,
    ) -> Result<Prometheus, String> {
        let config = dir.join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 1h\n")
            .map_err(|e| format!("{}: {e}", config.display()))?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let log = std::fs::File::create(dir.join("prometheus.log"))
            .map_err(|e| format!("prometheus.log: {e}"))?;
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--storage.tsdb.retention.time=100y")
            .arg("--log.level=error")
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("prometheus cannot start: {e}"))?;
        let p = Prometheus { child, port };
        let started = Instant::now();
        while started.elapsed() < ready_within {
            if p.get("/-/ready").is_some_and(|(s, _)| s == 200) {
                return Ok(p);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "prometheus was not ready within {ready_within:?}; see {}",
            dir.join("prometheus.log").display()
        ))
    }

    /// Backfills `store` into `dir` and serves it.
    pub fn start(store: &Store, dir: &Path) -> Result<Prometheus, String> {
        let data = backfill(store, dir)?;
        Prometheus::serve(&data, dir, &[], Duration::from_secs(60))
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `GET path`: the status and body, or `None` when it does not answer.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut buf = String::new();
        s.read_to_string(&mut buf).ok()?;
        let status = buf.split(' ').nth(1)?.parse().ok()?;
        let body = buf.split_once("\r\n\r\n")?.1.to_string();
        Some((status, body))
    }

    fn api(&self, path: &str, expr: &str) -> Result<serde_json::Value, String> {
        let (status, body) = self
            .get(path)
            .ok_or_else(|| format!("{expr}: prometheus does not answer"))?;
        if status != 200 {
            return Err(format!("{expr}: HTTP {status}: {body}"));
        }
        serde_json::from_str(&body).map_err(|e| format!("{expr}: {e}"))
    }

    /// An instant query at `at_ms`: `(labels, value)` per result series.
    pub fn query(&self, expr: &str, at_ms: i64) -> Result<Vec<(Labels, f64)>, String> {
        let path = format!("/api/v1/query?query={}&time={}", encode(expr), secs(at_ms));
        let v = self.api(&path, expr)?;
        let result = v["data"]["result"]
            .as_array()
            .ok_or_else(|| format!("{expr}: not a vector: {v}"))?;
        result
            .iter()
            .map(|r| Ok((labels(&r["metric"]), value(&r["value"][1])?)))
            .collect()
    }

    /// A range query: per result series, its labels and `(time ms, value)`
    /// at each step.
    pub fn query_range(
        &self,
        expr: &str,
        start_ms: i64,
        end_ms: i64,
        step_ms: i64,
    ) -> Result<Vec<RangeSeries>, String> {
        let path = format!(
            "/api/v1/query_range?query={}&start={}&end={}&step={}",
            encode(expr),
            secs(start_ms),
            secs(end_ms),
            secs(step_ms)
        );
        let v = self.api(&path, expr)?;
        let result = v["data"]["result"]
            .as_array()
            .ok_or_else(|| format!("{expr}: not a matrix: {v}"))?;
        result
            .iter()
            .map(|r| {
                let points = r["values"]
                    .as_array()
                    .ok_or_else(|| format!("{expr}: no values"))?
                    .iter()
                    .map(|p| {
                        let at = p[0].as_f64().ok_or_else(|| format!("{expr}: bad time"))?;
                        Ok(((at * 1000.0).round() as i64, value(&p[1])?))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                Ok((labels(&r["metric"]), points))
            })
            .collect()
    }
}

/// Milliseconds as the API's seconds with three decimals.
fn secs(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    format!(
        "{sign}{}.{:03}",
        ms.unsigned_abs() / 1000,
        ms.unsigned_abs() % 1000
    )
}

fn labels(metric: &serde_json::Value) -> Labels {
    metric
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A sample value as the API writes it (a string; `NaN`, `±Inf`).
fn value(v: &serde_json::Value) -> Result<f64, String> {
    match v.as_str() {
        Some("NaN") => Ok(f64::NAN),
        Some("+Inf") => Ok(f64::INFINITY),
        Some("-Inf") => Ok(f64::NEG_INFINITY),
        Some(s) => s.parse().map_err(|_| format!("`{s}` is not a number")),
        None => Err(format!("{v} is not a sample value")),
    }
}

/// Percent-encodes a query parameter.
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_encoded_and_times_written_in_seconds() {
        assert_eq!(
            encode("sum(rate(vllm:x[1m]))"),
            "sum%28rate%28vllm%3Ax%5B1m%5D%29%29"
        );
        assert_eq!(secs(1_767_225_600_123), "1767225600.123");
        assert_eq!(secs(-1), "-0.001");
        assert_eq!(value(&serde_json::json!("+Inf")), Ok(f64::INFINITY));
        assert!(value(&serde_json::json!(3)).is_err());
    }
}
