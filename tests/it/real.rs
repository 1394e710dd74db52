//! Captures from a real vLLM server (`samples/real/`, made by
//! `scripts/real-vllm.sh`), held against the client's own record of every
//! request (`<name>.client.jsonl` beside each bundle). No vLLM is needed to
//! run these: the captures are committed. `VLLM_LENS_REAL_EXTRA=<dir>` adds
//! the captures of a folder (what `scripts/real-vllm.sh --check` does with a
//! fresh one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use vllm_lens_core::analysis::model::Report;
use vllm_lens_core::analysis::{BundleMeta, FindingId, Settings, SloId, TimelineKind, analyse};
use vllm_lens_core::catalog::{Catalogue, Signal};
use vllm_lens_core::query::{Query, Settings as QuerySettings};
use vllm_lens_core::{Input, Loaded, Options, load};

use crate::support::root;

/// A capture and its client record.
struct Capture {
    name: String,
    loaded: Loaded,
    meta: Value,
    requests: Vec<Request>,
}

/// One request as the client saw it.
#[derive(Debug)]
struct Request {
    kind: String,
    start_ms: i64,
    first_token_ms: Option<i64>,
    end_ms: i64,
    status: Option<u16>,
    outcome: String,
}

impl Request {
    /// It reached the engine (a 200 answer, or a time-out after sending).
    fn engine(&self) -> bool {
        self.status == Some(200) || (self.outcome == "timeout" && self.kind == "long")
    }
}

fn captures() -> Vec<Capture> {
    let mut dirs = vec![root().join("samples/real")];
    if let Ok(extra) = std::env::var("VLLM_LENS_REAL_EXTRA") {
        dirs.push(PathBuf::from(extra));
    }
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut zips: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "zip"))
            .collect();
        zips.sort();
        for zip in zips {
            out.push(read_capture(&zip));
        }
    }
    out
}

fn read_capture(zip: &Path) -> Capture {
    let name = zip
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("name")
        .to_string();
    let bytes = std::fs::read(zip).expect("bundle");
    let loaded = load(
        Input::Bytes {
            name: &format!("{name}.zip"),
            bytes: &bytes,
            mtime_ms: None,
        },
        &Options::default(),
    )
    .expect("loads");
    // Committed records are gzipped (`gzip -n`); a fresh capture's are not.
    let plain = zip.with_file_name(format!("{name}.client.jsonl"));
    let gz = zip.with_file_name(format!("{name}.client.jsonl.gz"));
    let text = match std::fs::read(&gz) {
        Ok(bytes) => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut s)
                .expect("gunzip");
            s
        }
        Err(_) => {
            std::fs::read_to_string(&plain).unwrap_or_else(|e| panic!("{}: {e}", plain.display()))
        }
    };
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json line"));
    let meta = lines.next().expect("meta line")["meta"].clone();
    let requests = lines
        .map(|r| Request {
            kind: r["kind"].as_str().expect("kind").to_string(),
            start_ms: r["start_ms"].as_i64().expect("start"),
            first_token_ms: r["first_token_ms"].as_i64(),
            end_ms: r["end_ms"].as_i64().expect("end"),
            status: r["status"].as_u64().map(|s| s as u16),
            outcome: r["outcome"].as_str().expect("outcome").to_string(),
        })
        .collect();
    Capture {
        name,
        loaded,
        meta,
        requests,
    }
}

fn report(c: &Capture) -> Report {
    analyse(&c.loaded, &BundleMeta::default(), &Settings::default()).expect("report")
}

/// The server's `--max-num-seqs`, from the scenario in the record.
fn cap(c: &Capture) -> Option<usize> {
    let serve = c.meta["scenario"]["serve"].as_array()?;
    let i = serve.iter().position(|v| v == "--max-num-seqs")?;
    serve.get(i + 1)?.as_str()?.parse().ok()
}

#[test]
fn real_captures_are_committed() {
    let names: Vec<String> = captures().into_iter().map(|c| c.name).collect();
    for want in [
        "ramp-cap16",
        "ramp-cap8",
        "prefix-long",
        "prefix-short",
        "restart",
        "errors",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "samples/real/{want}.zip: {names:?}"
        );
    }
}

/// Read with no error and no unknown `vllm:` family; the manifest holds
/// what the server said of itself.
#[test]
fn real_captures_read_cleanly() {
    for c in captures() {
        let problems: Vec<String> = c
            .loaded
            .diagnostics
            .iter()
            .map(|d| format!("{} {:?}: {}", d.file, d.line, d.message))
            .collect();
        assert!(problems.is_empty(), "{}: {problems:#?}", c.name);
        let cat = Catalogue::resolve(&c.loaded.store);
        assert!(
            cat.unknown_vllm_families.is_empty(),
            "{}: unknown families {:?}",
            c.name,
            cat.unknown_vllm_families
                .iter()
                .map(|u| u.name.clone())
                .collect::<Vec<_>>()
        );
        let env = c
            .loaded
            .manifest
            .as_ref()
            .and_then(|m| m.environment.as_ref())
            .expect("environment");
        assert_eq!(env.vllm_version.as_deref(), Some("0.32.0"), "{}", c.name);
        assert_eq!(env.model.as_deref(), Some("tiny-llama"), "{}", c.name);
        assert_eq!(env.device.as_deref(), Some("cpu"), "{}", c.name);
    }
}

/// Finished requests per window equal the client's answered requests by
/// the time they ended, give or take those that ended within 250 ms of a
/// window's edge scrape (the client's clock reads the end after the
/// server counted it, and collect.sh stamps a scrape just before asking).
#[test]
fn finished_requests_per_window_match_the_client() {
    const EDGE_MS: i64 = 250;
    for c in captures() {
        let store = &c.loaded.store;
        let catalogue = Catalogue::resolve(store);
        let q = Query::new(store, &catalogue, QuerySettings::default()).expect("grid");
        let finished = q.counter(Signal::FinishedRequests);
        let target = store
            .targets()
            .iter()
            .position(|t| t.kind().as_str() == "vllm")
            .expect("a vLLM target");
        let times = store.targets()[target].sample_times().to_vec();
        let answered: Vec<i64> = c
            .requests
            .iter()
            .filter(|r| r.outcome == "ok" && r.status == Some(200))
            .map(|r| r.end_ms)
            .collect();
        let mut compared = 0;
        for (w, x) in finished.windows.iter().enumerate() {
            let Some(x) = x else { continue };
            // The intervals ending in the window: (scrape before the first, last].
            let in_w: Vec<usize> = (0..times.len())
                .filter(|&i| q.grid().index(times[i]) == Some(w))
                .collect();
            let (Some(&first), Some(&last)) = (in_w.first(), in_w.last()) else {
                continue;
            };
            if first == 0 {
                continue;
            }
            let (from, to) = (times[first - 1], times[last]);
            let sure = answered
                .iter()
                .filter(|&&e| e > from + EDGE_MS && e <= to - EDGE_MS)
                .count() as f64;
            let edge = answered
                .iter()
                .filter(|&&e| (e - from).abs() <= EDGE_MS || (e - to).abs() <= EDGE_MS)
                .count() as f64;
            assert!(
                x.increase >= sure - 1e-9 && x.increase <= sure + edge + 1e-9,
                "{} w{w}: the server counted {} finished; the client saw {sure} (+{edge} at the edges)",
                c.name,
                x.increase
            );
            compared += 1;
        }
        println!(
            "{}: finished requests equal the client's in {compared} windows",
            c.name
        );
        assert!(compared >= 2, "{}: {compared} windows compared", c.name);
    }
}

/// HTTP 4xx answers equal the malformed requests the client sent; the
/// report's error + abort rate counts no engine errors (a random model
/// never fails), and its client-disconnect estimate is the client's
/// time-outs within ±max(2, 25 %).
#[test]
fn errors_and_time_outs_match_the_client() {
    for c in captures() {
        let store = &c.loaded.store;
        let catalogue = Catalogue::resolve(store);
        let q = Query::new(store, &catalogue, QuerySettings::default()).expect("grid");
        let by_status = q.counter_by(Signal::HttpRequests, &["handler", "status"]);
        let server_4xx: f64 = by_status
            .iter()
            .filter(|(k, _)| k.starts_with("/v1/completions,4"))
            .map(|(_, s)| s.total)
            .sum();
        let client_4xx = c
            .requests
            .iter()
            .filter(|r| r.status.is_some_and(|s| (400..500).contains(&s)))
            .count() as f64;
        assert_eq!(server_4xx, client_4xx, "{}: HTTP 4xx", c.name);
        let r = report(&c);
        let timeouts = c.requests.iter().filter(|r| r.outcome == "timeout").count() as f64;
        let estimate = r.summary.outcomes.client_disconnects.unwrap_or(0.0);
        let tolerance = (0.25 * timeouts).max(2.0);
        assert!(
            (estimate - timeouts).abs() <= tolerance,
            "{}: {timeouts} client time-outs, the report estimates {estimate} disconnects",
            c.name
        );
        println!(
            "{}: HTTP 4xx {server_4xx} = client {client_4xx}; client time-outs {timeouts}, estimated disconnects {estimate}",
            c.name
        );
        let slo = r
            .slo
            .iter()
            .find(|s| s.id == SloId::ErrorAbortRate)
            .expect("slo");
        assert_eq!(slo.value, Some(0.0), "{}: engine errors + aborts", c.name);
    }
}

/// The client's TTFT p95 (requests that got a first token) lies in the
/// bucket the report states for the whole capture, allowing the HTTP and
/// streaming margin: the client starts its clock before sending and reads
/// the first token after it crossed the socket (≤ 50 ms + 10 %).
#[test]
fn client_ttft_p95_lies_in_the_reported_bucket() {
    for c in captures() {
        let mut ttft: Vec<i64> = c
            .requests
            .iter()
            .filter_map(|r| r.first_token_ms.map(|f| f - r.start_ms))
            .collect();
        ttft.sort_unstable();
        let p95 = ttft[((ttft.len() as f64) * 0.95).ceil() as usize - 1] as f64;
        let r = report(&c);
        let slo = r.slo.iter().find(|s| s.id == SloId::TtftP95).expect("slo");
        let b = slo.bounds.as_ref().expect("bounds");
        let (lo, hi) = (b.low, b.high.unwrap_or(f64::INFINITY));
        println!(
            "{}: client TTFT p95 {p95} ms over {} requests; the report: between {lo} and {hi} ms",
            c.name,
            ttft.len()
        );
        assert!(
            p95 >= lo * 0.9 - 5.0 && p95 <= hi * 1.1 + 50.0,
            "{}: client TTFT p95 {p95} ms, the report says between {lo} and {hi} ms",
            c.name
        );
    }
}

/// Queueing: where the client kept more requests in flight than
/// `--max-num-seqs` at a scrape (by 2 or more), the report says requests
/// waited; where it never had more in flight than the cap, it says nothing
/// waited.
#[test]
fn queueing_verdict_matches_the_client() {
    for c in captures() {
        let Some(cap) = cap(&c) else { continue };
        let store = &c.loaded.store;
        let target = store
            .targets()
            .iter()
            .position(|t| t.kind().as_str() == "vllm")
            .expect("a vLLM target");
        let in_flight = |t: i64| {
            c.requests
                .iter()
                .filter(|r| r.engine() && r.start_ms <= t && r.end_ms > t)
                .count()
        };
        let at_scrapes = store.targets()[target]
            .sample_times()
            .iter()
            .map(|&t| in_flight(t))
            .max()
            .unwrap_or(0);
        let mut edges: Vec<(i64, i32)> = c
            .requests
            .iter()
            .filter(|r| r.engine())
            .flat_map(|r| [(r.start_ms, 1), (r.end_ms, -1)])
            .collect();
        edges.sort_unstable();
        let (mut now, mut peak) = (0i32, 0i32);
        for (_, d) in edges {
            now += d;
            peak = peak.max(now);
        }
        let r = report(&c);
        let waited = r
            .timeline
            .iter()
            .any(|e| e.kind == TimelineKind::WaitingStarted);
        println!(
            "{}: --max-num-seqs {cap}, client in flight at most {at_scrapes} at a scrape and {peak} ever; waiting reported: {waited}",
            c.name
        );
        if at_scrapes >= cap + 2 {
            assert!(
                waited,
                "{}: {at_scrapes} in flight at a scrape with --max-num-seqs {cap}, and no waiting reported",
                c.name
            );
        }
        if peak as usize <= cap {
            assert!(
                !waited,
                "{}: never more than {peak} in flight (cap {cap}), and waiting reported",
                c.name
            );
        }
        let _ = FindingId::LatencyQueueing;
    }
}

#[allow(dead_code)]
fn counts(c: &Capture) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for r in &c.requests {
        *out.entry(r.outcome.clone()).or_insert(0) += 1;
    }
    out
}
