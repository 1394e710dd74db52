//! The `vllm-lens` command: argument parsing, file IO and exit codes around
//! the sans-IO core. Exit codes: 0 done; 1 an SLO failed and
//! `--fail-on-slo` was given; 2 the input could not be used.

mod input;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use vllm_lens_core::inspect::Inspect;
use vllm_lens_core::{Limits, Options};

/// Turn captured vLLM and dcgm-exporter scrapes into a tuning report,
/// entirely on this machine.
#[derive(Parser)]
#[command(name = "vllm-lens", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List what a bundle holds: targets, time ranges, families, problems.
    #[command(
        after_help = "Examples:\n  vllm-lens inspect capture.zip\n  vllm-lens inspect ./capture-dir --json > inventory.json\n  curl -s localhost:8000/metrics | vllm-lens inspect -"
    )]
    Inspect {
        /// A .zip, .tar.gz/.tgz, .tar, a folder, a single scrape file, or `-` for stdin.
        bundle: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Write a bundle as OpenMetrics with a timestamp on every sample, for
    /// `promtool tsdb create-blocks-from openmetrics` (then query it in your
    /// own Prometheus and Grafana).
    #[command(
        after_help = "Examples:\n  vllm-lens export capture.zip --openmetrics capture.om\n  promtool tsdb create-blocks-from openmetrics capture.om ./data"
    )]
    Export {
        /// A .zip, .tar.gz/.tgz, .tar, a folder, a single scrape file, or `-` for stdin.
        bundle: String,
        /// Where to write the OpenMetrics text (`-` for stdout).
        #[arg(long, value_name = "FILE")]
        openmetrics: String,
        /// Replace hostnames, pod names, IPs, UUIDs and the model name with
        /// stable placeholders.
        #[arg(long)]
        redact: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Compare two captures (before and after a change) and say whether it helped.
    #[command(
        after_help = "Examples:\n  vllm-lens compare before.zip after.zip\n  vllm-lens compare before.zip after.zip -o diff.html --json diff.json --md diff.md\n\nThe comparability guard comes first: a different model, workload, GPU, release or scrape interval makes the comparison weak or impossible, and the report says why."
    )]
    Compare {
        /// The capture before the change.
        before: String,
        /// The capture after the change.
        after: String,
        #[command(flatten)]
        out: OutputArgs,
        #[command(flatten)]
        analysis: AnalysisArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Analyse a bundle: SLO scorecard, what to do, the six analyses.
    #[command(
        after_help = "Examples:\n  vllm-lens report capture.zip\n  vllm-lens report capture.zip -o report.html --md summary.md --json report.json\n  vllm-lens report capture.zip --window 5m --slo ttft-p95=500ms --slo error-abort=1% --fail-on-slo\n\nSLO names: ttft-p95 (ms or s), itl-p95 (ms or s), queue-at (requests in flight per replica that must be admitted without waiting), error-abort (%).\nExit codes: 0 done; 1 an SLO failed (proven by the data; \"cannot tell\" is not a failure) and --fail-on-slo was given; 2 the input could not be used."
    )]
    Report {
        /// A .zip, .tar.gz/.tgz, .tar, a folder, a single scrape file, or `-` for stdin.
        bundle: String,
        #[command(flatten)]
        out: OutputArgs,
        #[command(flatten)]
        analysis: AnalysisArgs,
        /// Exit with 1 when an SLO fails (proven; "cannot tell" does not).
        #[arg(long)]
        fail_on_slo: bool,
        /// Replace hostnames, pod names, IPs, UUIDs and the model name with
        /// stable placeholders in every output (for tickets outside the team).
        #[arg(long)]
        redact: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
}

/// Where the result goes: any of the three, or none for a summary in the
/// terminal (`report` and `compare` share them).
#[derive(Args)]
struct OutputArgs {
    /// Write it as one self-contained HTML file (`-` for stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
    /// Write it as JSON (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write a Markdown summary for a ticket (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    md: Option<String>,
}

/// How a bundle is cut into windows and judged (`report` and `compare`
/// share them).
#[derive(Args)]
struct AnalysisArgs {
    /// Window width: 15s to 1h.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_window)]
    window: i64,
    /// An SLO threshold, NAME=VALUE (repeatable): ttft-p95=300ms, itl-p95=50ms, queue-at=12, error-abort=0.5%.
    #[arg(long = "slo", value_name = "NAME=VALUE")]
    slo: Vec<String>,
    #[command(flatten)]
    facts: FactArgs,
}

impl AnalysisArgs {
    /// The analysis settings these flags give.
    fn settings(&self) -> anyhow::Result<vllm_lens_core::analysis::Settings> {
        let mut settings = vllm_lens_core::analysis::Settings {
            window_ms: self.window,
            ..Default::default()
        };
        self.facts.apply(&mut settings);
        for s in &self.slo {
            apply_slo(&mut settings.slo, s)?;
        }
        Ok(settings)
    }
}

/// What the user knows that `/metrics` does not say.
#[derive(Args)]
struct FactArgs {
    /// The model's weights in bytes (e.g. 16GB, 15GiB), when the model
    /// table does not know it: sets the decode floor.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    model_bytes: Option<u64>,
    /// Tokens every prompt shares at its start (system prompt, tools):
    /// compares the prefix-cache hit rate with what it allows.
    #[arg(long, value_name = "TOKENS")]
    shared_prefix_tokens: Option<f64>,
    /// What one GPU costs per hour (any currency): adds cost per million
    /// tokens.
    #[arg(long, value_name = "COST")]
    gpu_hour_cost: Option<f64>,
}

impl FactArgs {
    fn apply(&self, s: &mut vllm_lens_core::analysis::Settings) {
        s.model_bytes = self.model_bytes.map(|b| b as f64);
        s.shared_prefix_tokens = self.shared_prefix_tokens.filter(|x| *x >= 0.0);
        s.gpu_hour_cost = self.gpu_hour_cost.filter(|x| *x >= 0.0);
    }
}

fn parse_duration_ms(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration such as 1m, 30s or 300ms"))?;
    let scale = match unit {
        "ms" => 1.0,
        "" | "s" => 1000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(format!("unknown unit in `{s}` (use ms, s, m, h)")),
    };
    Ok(n * scale)
}

fn parse_window(s: &str) -> Result<i64, String> {
    let ms = parse_duration_ms(s)? as i64;
    if !(15_000..=3_600_000).contains(&ms) {
        return Err(format!("window `{s}` must be between 15s and 1h"));
    }
    Ok(ms)
}

fn apply_slo(slo: &mut vllm_lens_core::analysis::SloThresholds, arg: &str) -> anyhow::Result<()> {
    let (name, value) = arg
        .split_once('=')
        .with_context(|| format!("--slo {arg}: expected NAME=VALUE, e.g. ttft-p95=300ms"))?;
    let bad = |e: String| anyhow::anyhow!("--slo {arg}: {e}");
    match name.trim() {
        "ttft-p95" => slo.ttft_p95_ms = parse_duration_ms_ms(value).map_err(bad)?,
        "itl-p95" => slo.itl_p95_ms = parse_duration_ms_ms(value).map_err(bad)?,
        "queue-at" => {
            slo.queue_concurrency = value
                .trim()
                .parse()
                .map_err(|_| bad("expected a number of concurrent requests".into()))?
        }
        "error-abort" => {
            slo.error_abort_pct = value
                .trim()
                .trim_end_matches('%')
                .parse()
                .map_err(|_| bad("expected a percentage such as 0.5%".into()))?
        }
        other => anyhow::bail!(
            "--slo {arg}: unknown SLO `{other}` (ttft-p95, itl-p95, queue-at, error-abort)"
        ),
    }
    Ok(())
}

/// A latency threshold: a bare number is milliseconds.
fn parse_duration_ms_ms(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return t.parse().map_err(|_| format!("`{s}` is not a number"));
    }
    parse_duration_ms(t)
}

/// Limits that protect memory from oversized or hostile bundles.
#[derive(Args)]
struct LimitArgs {
    /// Maximum decompressed size of the whole bundle, e.g. 4GiB, 500MiB.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse_size)]
    max_bytes: u64,
    /// Maximum decompressed ÷ compressed size of one member (zip-bomb guard).
    #[arg(long, value_name = "RATIO", default_value_t = 200)]
    max_ratio: u64,
    /// Maximum number of files in the bundle.
    #[arg(long, value_name = "N", default_value_t = 250_000)]
    max_files: usize,
}

impl LimitArgs {
    fn options(&self) -> Options {
        Options {
            limits: Limits {
                max_total_bytes: self.max_bytes,
                max_ratio: self.max_ratio,
                max_members: self.max_files,
                ..Limits::default()
            },
            ..Options::default()
        }
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a size such as 4GiB"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown size unit in `{s}` (use B, KiB, MiB, GiB)")),
    };
    Ok((number * scale) as u64)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("vllm-lens: {}", terminal_safe(&format!("{err:#}")));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Inspect {
            bundle,
            json,
            limits,
        } => {
            let loaded = input::load_path(&bundle, &limits.options())?;
            let inventory = Inspect::new(&bundle, &loaded);
            let mut stdout = std::io::stdout().lock();
            let text = if json {
                let mut s = serde_json::to_string_pretty(&inventory)
                    .context("serialising the inventory")?;
                s.push('\n');
                s
            } else {
                inventory.to_text()
            };
            write_out(&mut stdout, &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare {
            before,
            after,
            out,
            analysis,
            limits,
        } => {
            let settings = analysis.settings()?;
            let mut reports = Vec::new();
            for path in [&before, &after] {
                let (loaded, sha256) = input::load_with_digest(path, &limits.options())?;
                let meta = vllm_lens_core::analysis::BundleMeta {
                    name: path.clone(),
                    sha256,
                };
                reports.push(
                    vllm_lens_core::analysis::analyse(&loaded, &meta, &settings)
                        .map_err(|e| anyhow::anyhow!("{e}"))?,
                );
            }
            let c = vllm_lens_core::analysis::compare::compare(&reports[0], &reports[1]);
            let outputs = [
                (
                    out.output.as_deref(),
                    vllm_lens_core::render::compare::html as fn(&_) -> String,
                ),
                (out.json.as_deref(), vllm_lens_core::render::compare::json),
                (out.md.as_deref(), vllm_lens_core::render::compare::markdown),
            ];
            emit(&c, &outputs, vllm_lens_core::render::compare::markdown)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            bundle,
            openmetrics,
            redact,
            limits,
        } => {
            let loaded = input::load_path(&bundle, &limits.options())?;
            let mut text = String::new();
            let written = vllm_lens_core::openmetrics::write(&loaded.store, &mut text);
            let redactor = redact.then(|| vllm_lens_core::redact::Redactor::new(&loaded, &[&text]));
            if let Some(r) = &redactor {
                text = r.text(&text);
            }
            print_diagnostics(&loaded, redactor.as_ref());
            if openmetrics == "-" {
                // The data as read, byte for byte: a pipe to promtool, not a
                // terminal, is what this is for.
                write_raw(&mut std::io::stdout().lock(), &text)?;
            } else {
                std::fs::write(&openmetrics, text)
                    .with_context(|| format!("{openmetrics}: cannot be written"))?;
            }
            eprintln!(
                "vllm-lens: {} families, {} series, {} samples written{}",
                written.families,
                written.series,
                written.samples,
                if written.skipped_families > 0 {
                    format!(
                        " ({} families with names OpenMetrics cannot hold skipped)",
                        written.skipped_families
                    )
                } else {
                    String::new()
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Report {
            bundle,
            out,
            analysis,
            fail_on_slo,
            redact,
            limits,
        } => {
            let settings = analysis.settings()?;
            let (loaded, sha256) = input::load_with_digest(&bundle, &limits.options())?;
            let meta = vllm_lens_core::analysis::BundleMeta {
                name: bundle.clone(),
                sha256,
            };
            let spin = input::spinner("analysing");
            let mut report = vllm_lens_core::analysis::analyse(&loaded, &meta, &settings)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            spin.finish_and_clear();
            let redactor = redact.then(|| {
                let json = vllm_lens_core::render::json(&report);
                vllm_lens_core::redact::Redactor::new(&loaded, &[&json])
            });
            if let Some(r) = &redactor {
                report = r.report(&report);
            }
            print_diagnostics(&loaded, redactor.as_ref());
            let outputs = [
                (
                    out.output.as_deref(),
                    vllm_lens_core::render::html as fn(&_) -> String,
                ),
                (out.json.as_deref(), vllm_lens_core::render::json),
                (out.md.as_deref(), vllm_lens_core::render::markdown),
            ];
            emit(&report, &outputs, vllm_lens_core::report::to_text)?;
            let failed = report
                .slo
                .iter()
                .any(|s| s.status == vllm_lens_core::analysis::model::SloStatus::Fail);
            Ok(if failed && fail_on_slo {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// A requested output file (`None`: not asked for) and how to render it.
type Output<'a, T> = (Option<&'a str>, fn(&T) -> String);

/// Writes each requested rendering (`-` for stdout); with none requested,
/// prints `fallback` on stdout.
fn emit<T>(value: &T, outputs: &[Output<'_, T>], fallback: fn(&T) -> String) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let mut wrote = false;
    for (path, render) in outputs {
        let Some(path) = path else { continue };
        wrote = true;
        let text = render(value);
        if *path == "-" {
            write_out(&mut stdout, &text)?;
        } else {
            std::fs::write(path, text).with_context(|| format!("{path}: cannot be written"))?;
            eprintln!("vllm-lens: wrote {path}");
        }
    }
    if !wrote {
        write_out(&mut stdout, &fallback(value))?;
    }
    Ok(())
}

/// Prints the bundle's problems (not its notes) on stderr, redacted if asked.
fn print_diagnostics(
    loaded: &vllm_lens_core::Loaded,
    redactor: Option<&vllm_lens_core::redact::Redactor>,
) {
    for d in loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity != vllm_lens_core::Severity::Info)
    {
        let line = d.to_string();
        let line = redactor.map_or(line.clone(), |r| r.text(&line));
        eprintln!("vllm-lens: {}", terminal_safe(&line));
    }
}

/// Text from a bundle (file names, label values) as it may reach a
/// terminal: control characters other than line breaks and tabs are shown
/// as `\u{1b}`, so a crafted bundle cannot drive the terminal with escape
/// sequences.
fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Writes to stdout (made [`terminal_safe`]); a closed pipe is not an error.
fn write_out(out: &mut impl Write, text: &str) -> anyhow::Result<()> {
    write_raw(out, &terminal_safe(text))
}

/// Writes to stdout as is; a closed pipe is not an error.
fn write_raw(out: &mut impl Write, text: &str) -> anyhow::Result<()> {
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}
