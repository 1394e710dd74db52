//! `vllm-lens-bench BUNDLE.zip...`: measures, on the same bytes, the
//! machine's limit (inflate + a bare line scan), our parser, the
//! `prometheus-parse` crate, Python `prometheus_client`'s parser, the whole
//! pipeline natively (bundle → HTML, in a child process so its peak RSS is
//! its own), and the do-it-yourself alternative (`promtool tsdb
//! create-blocks-from openmetrics` plus the report's queries on a local
//! Prometheus). Prints one Markdown table per bundle (docs/performance.md).
//! Figures are printed, never asserted.

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use vllm_lens_core::analysis::{BundleMeta, Settings, analyse};
use vllm_lens_core::{Input, Options, load, render};
use vllm_lens_expo::{Event, Parser};

fn members(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip bundle");
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).expect("entry");
        if f.is_dir() {
            continue;
        }
        let mut buf = Vec::with_capacity(f.size() as usize);
        f.read_to_end(&mut buf).expect("inflate");
        out.push(buf);
    }
    out
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Reads and loads a bundle file; its bytes are dropped on return, as the
/// CLI drops them once loaded.
fn load_file(path: &str) -> Result<vllm_lens_core::Loaded, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let input = Input::Bytes {
        name: path,
        bytes: &bytes,
        mtime_ms: None,
    };
    load(input, &Options::default()).map_err(|e| e.to_string())
}

/// The child: bundle → HTML, timed; prints `seconds rss_kib points store_bytes html_bytes`.
fn e2e(path: &str) {
    let t = Instant::now();
    let loaded = load_file(path).expect("loads");
    let t_load = t.elapsed().as_secs_f64();
    let report = analyse(&loaded, &BundleMeta::default(), &Settings::default()).expect("report");
    let t_analyse = t.elapsed().as_secs_f64() - t_load;
    let html = render::html(&report);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{secs} {} {} {} {} {t_load} {t_analyse} {}",
        peak_rss_kib(),
        loaded.store.points(),
        loaded.store.heap_bytes(),
        html.len(),
        secs - t_load - t_analyse
    );
}

fn mb_s(bytes: usize, secs: f64) -> String {
    format!("{:.0} MB/s", bytes as f64 / 1e6 / secs)
}

/// promtool backfill + the report's queries on a local Prometheus; seconds.
fn promtool(path: &str, dir: &Path) -> Option<(f64, f64, usize)> {
    let loaded = load_file(path).ok()?;
    let start = loaded
        .store
        .targets()
        .iter()
        .filter_map(|t| t.sample_times().first().copied())
        .min()?;
    let end = loaded
        .store
        .targets()
        .iter()
        .filter_map(|t| t.sample_times().last().copied())
        .max()?;
    let t = Instant::now();
    let data = vllm_lens_oracle::backfill(&loaded.store, dir).ok()?;
    let backfill = t.elapsed().as_secs_f64();
    drop(loaded);
    let prom =
        vllm_lens_oracle::Prometheus::serve(&data, dir, &[], Duration::from_secs(120)).ok()?;
    // The report's figures as an SRE would query them: 1-minute windows
    // over the whole capture.
    let queries = [
        "sum(rate(vllm:generation_tokens_total[1m]))",
        "sum(rate(vllm:prompt_tokens_total[1m]))",
        "sum by (finished_reason) (increase(vllm:request_success_total[1m]))",
        "histogram_quantile(0.95, sum by (le) (increase(vllm:time_to_first_token_seconds_bucket[1m])))",
        "histogram_quantile(0.95, sum by (le) (increase(vllm:inter_token_latency_seconds_bucket[1m])))",
        "sum(increase(vllm:request_queue_time_seconds_sum[1m])) / sum(increase(vllm:request_queue_time_seconds_count[1m]))",
        "sum(increase(vllm:request_prefill_time_seconds_sum[1m])) / sum(increase(vllm:request_prefill_time_seconds_count[1m]))",
        "sum(increase(vllm:request_decode_time_seconds_sum[1m])) / sum(increase(vllm:request_decode_time_seconds_count[1m]))",
        "sum(increase(vllm:prefix_cache_hits_total[1m])) / sum(increase(vllm:prefix_cache_queries_total[1m]))",
        "max_over_time(vllm:kv_cache_usage_perc[1m])",
        "max_over_time(vllm:num_requests_running[1m])",
        "max_over_time(vllm:num_requests_waiting[1m])",
        "avg_over_time(DCGM_FI_DEV_GPU_UTIL[1m])",
        "avg_over_time(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE[1m])",
        "avg_over_time(DCGM_FI_PROF_DRAM_ACTIVE[1m])",
        "avg_over_time(DCGM_FI_DEV_POWER_USAGE[1m])",
        "increase(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[1m])",
    ];
    let t = Instant::now();
    let mut answered = 0;
    for q in queries {
        if prom.query_range(q, start, end, 60_000).is_ok() {
            answered += 1;
        }
    }
    let query_secs = t.elapsed().as_secs_f64();
    Some((backfill, query_secs, answered))
}

/// Python `prometheus_client`'s text parser over the members; seconds.
fn python(members: &[Vec<u8>], dir: &Path) -> Option<(f64, u64)> {
    let mdir = dir.join("members");
    std::fs::create_dir_all(&mdir).ok()?;
    for (i, m) in members.iter().enumerate() {
        std::fs::write(mdir.join(format!("{i:06}.prom")), m).ok()?;
    }
    let script = r#"
import os, sys, time
from prometheus_client.parser import text_string_to_metric_families
d = sys.argv[1]
texts = [open(os.path.join(d, f), encoding='utf-8', errors='replace').read() for f in sorted(os.listdir(d))]
t = time.perf_counter()
n = 0
for text in texts:
    try:
        for fam in text_string_to_metric_families(text):
            n += len(fam.samples)
    except Exception:
        pass
print(time.perf_counter() - t, n)
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&mdir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--e2e") {
        e2e(&args[1]);
        return;
    }
    if args.is_empty() {
        eprintln!("usage: vllm-lens-bench BUNDLE.zip... (see docs/performance.md)");
        std::process::exit(2);
    }
    for path in &args {
        let bytes = std::fs::read(path).expect("bundle");
        if text_size(&bytes) > PEERS_MAX_TEXT {
            large(path, &bytes);
            continue;
        }
        // 1. The machine's limit: inflate and count lines.
        let t = Instant::now();
        let ms = members(&bytes);
        let mut lines = 0usize;
        for m in &ms {
            lines += memchr::memchr_iter(b'\n', m).count();
        }
        let inflate_scan = t.elapsed().as_secs_f64();
        let text: usize = ms.iter().map(Vec::len).sum();
        let texts: Vec<String> = ms
            .iter()
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .collect();
        // 2. Our parser.
        let t = Instant::now();
        let mut samples = 0u64;
        for s in &texts {
            for e in Parser::new(s) {
                if let Event::Sample(x) = e {
                    samples += 1;
                    std::hint::black_box(x.value);
                }
            }
        }
        let ours = t.elapsed().as_secs_f64();
        // 3. prometheus-parse, on an underscored copy (it drops `vllm:` names).
        let under: Vec<String> = texts.iter().map(|s| s.replace("vllm:", "vllm_")).collect();
        let t = Instant::now();
        let mut theirs_samples = 0usize;
        for s in &under {
            let lines = s.lines().map(|l| Ok(l.to_string()));
            if let Ok(scrape) = prometheus_parse::Scrape::parse(lines) {
                theirs_samples += scrape.samples.len();
            }
        }
        let theirs = t.elapsed().as_secs_f64();
        drop(under);
        // 4. The whole pipeline, in a child for its own peak RSS.
        let f = e2e_child(path);
        let (e2e_s, points) = (f[0], f[2]);
        let dir = std::env::temp_dir().join(format!("vllm-lens-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let py = python(&ms, &dir);
        drop(ms);
        drop(texts);
        let prom = promtool(path, &dir);
        let _ = std::fs::remove_dir_all(&dir);

        print_heading(path);
        println!(
            "{:.1} MB zipped, {:.1} MB of text in {} files, {} lines, {} samples, {} stored points\n",
            bytes.len() as f64 / 1e6,
            text as f64 / 1e6,
            members_count(&bytes),
            lines,
            samples,
            points as u64
        );
        println!("| what | time | throughput | vs vllm-lens |");
        println!("|---|---|---|---|");
        println!(
            "| inflate + line scan (memchr): the machine's limit | {inflate_scan:.2} s | {} | |",
            mb_s(text, inflate_scan)
        );
        println!(
            "| vllm-lens-expo parser | {ours:.2} s | {}, {:.1} M samples/s | 1× |",
            mb_s(text, ours),
            samples as f64 / 1e6 / ours
        );
        println!(
            "| prometheus-parse 0.2.5 (underscored copy; {theirs_samples} samples) | {theirs:.2} s | {} | {:.1}× slower |",
            mb_s(text, theirs),
            theirs / ours
        );
        match py {
            Some((s, n)) => println!(
                "| Python prometheus_client parser ({n} samples) | {s:.2} s | {} | {:.1}× slower |",
                mb_s(text, s),
                s / ours
            ),
            None => println!(
                "| Python prometheus_client parser | not run (python3 -m pip install prometheus_client) | | |"
            ),
        }
        println!(
            "| vllm-lens end to end (bundle → HTML), native | {e2e_s:.2} s | {} | |",
            mb_s(text, e2e_s)
        );
        match prom {
            Some((b, q, n)) => println!(
                "| promtool backfill + {n} report queries on Prometheus 2.42 | {:.2} s ({b:.2} s + {q:.2} s) | | {:.1}× slower than end to end |",
                b + q,
                (b + q) / e2e_s
            ),
            None => println!(
                "| promtool backfill + queries | not run (apt-get install prometheus) | | |"
            ),
        }
        print_e2e_split(&f, inflate_scan);
    }
}

/// The end-to-end child's figures (`e2e`'s line) split into its stages,
/// against the machine's limit (`limit_s`).
fn print_e2e_split(f: &[f64], limit_s: f64) {
    println!(
        "\nEnd to end: load (inflate, parse, store) {:.2} s, analyse {:.2} s, render {:.2} s.\npeak RSS {:.0} MiB; store {:.1} MiB, {:.1} bytes per stored point; HTML {:.2} MB; end to end = {:.1}× inflate + line scan.",
        f[5],
        f[6],
        f[7],
        f[1] / 1024.0,
        f[3] / 1048576.0,
        f[3] / f[2].max(1.0),
        f[4] / 1e6,
        f[0] / limit_s
    );
}

/// The heading of one bundle's table: its file name.
fn print_heading(path: &str) {
    let name = Path::new(path)
        .file_name()
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned());
    println!("\n### {name}\n");
}

/// Above this much text the peers are not run: each holds the whole text
/// in memory (and Python a copy on disk); a week or a fleet-day is
/// measured streaming, member by member, as the CLI and the page read it.
const PEERS_MAX_TEXT: u64 = 1 << 30;

/// The decompressed size the zip's directory states.
fn text_size(bytes: &[u8]) -> u64 {
    let Ok(mut z) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
        return 0;
    };
    (0..z.len())
        .filter_map(|i| z.by_index_raw(i).ok().map(|f| f.size()))
        .sum()
}

/// Runs the end-to-end child on `path`; its figures.
fn e2e_child(path: &str) -> Vec<f64> {
    let me = std::env::current_exe().expect("self");
    let out = Command::new(me)
        .args(["--e2e", path])
        .output()
        .expect("child");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

/// A bundle too large to hold as text (a week, a fleet-day): the machine's
/// limit and our parser measured streaming, one member at a time in one
/// reused buffer (inflate timed apart from parse), then the pipeline end
/// to end in a child with its peak RSS.
fn large(path: &str, bytes: &[u8]) {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip bundle");
    let mut buf: Vec<u8> = Vec::new();
    let (mut inflate, mut scan, mut parse) = (0.0f64, 0.0f64, 0.0f64);
    let (mut text, mut lines, mut samples, mut files) = (0usize, 0usize, 0u64, 0usize);
    for i in 0..z.len() {
        let mut f = z.by_index(i).expect("entry");
        if f.is_dir() {
            continue;
        }
        files += 1;
        buf.clear();
        let t = Instant::now();
        f.read_to_end(&mut buf).expect("inflate");
        inflate += t.elapsed().as_secs_f64();
        let t = Instant::now();
        lines += memchr::memchr_iter(b'\n', &buf).count();
        scan += t.elapsed().as_secs_f64();
        text += buf.len();
        let s = String::from_utf8_lossy(&buf);
        let t = Instant::now();
        for e in Parser::new(&s) {
            if let Event::Sample(x) = e {
                samples += 1;
                std::hint::black_box(x.value);
            }
        }
        parse += t.elapsed().as_secs_f64();
    }
    let f = e2e_child(path);
    print_heading(path);
    println!(
        "{:.1} MB zipped, {:.1} MB of text in {files} files, {lines} lines, {samples} samples, {} stored points (read streaming: the peers, which hold the whole text, are not run above {} GiB)\n",
        bytes.len() as f64 / 1e6,
        text as f64 / 1e6,
        f.get(2).copied().unwrap_or(0.0) as u64,
        PEERS_MAX_TEXT >> 30
    );
    println!("| what | time | throughput |");
    println!("|---|---|---|");
    let limit = inflate + scan;
    println!(
        "| inflate + line scan (memchr), member by member: the machine's limit | {limit:.2} s | {} |",
        mb_s(text, limit)
    );
    println!(
        "| vllm-lens-expo parser | {parse:.2} s | {}, {:.1} M samples/s |",
        mb_s(text, parse),
        samples as f64 / 1e6 / parse
    );
    if f.len() >= 8 {
        println!(
            "| vllm-lens end to end (bundle → HTML), native | {:.2} s | {} |",
            f[0],
            mb_s(text, f[0])
        );
        print_e2e_split(&f, limit);
    } else {
        println!("| vllm-lens end to end | failed (above) | |");
    }
}

fn members_count(bytes: &[u8]) -> usize {
    zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_or(0, |z| z.len())
}
