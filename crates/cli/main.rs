//! The `vllm-lens` command: argument parsing, file IO and exit codes around
//! the sans-IO core. Exit codes: 0 done; 1 an SLO failed and
//! `--fail-on-slo` was given; 2 the input could not be used.

mod input;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use vllm_lens_core::inspect::Inspect;
use vllm_lens_core::settings::{self, Settings};
use vllm_lens_core::{Format, Limits, Options};

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
    /// Forecast what a change would give: a model of this server
    /// calibrated on the capture, back-tested on its windows, replayed
    /// with settings changed and the load scaled (docs/forecast.md).
    #[command(
        after_help = "Examples:\n  vllm-lens forecast capture.zip\n  vllm-lens forecast capture.zip --set max-num-seqs=16 --set replicas=2 --load 2x\n  vllm-lens forecast capture.zip --set prefix-caching=on --set shared-prefix-tokens=600 --json forecast.json --md forecast.md\n\nSettings: max-num-seqs, max-num-batched-tokens, kv-blocks, prefix-caching (on/off), replicas, shared-prefix-tokens.\nExit codes: 0 done (also when the model is not calibrated: it says so and predicts nothing); 2 the input or a setting could not be used."
    )]
    Forecast {
        /// A .zip, .tar.gz/.tgz, .tar, a folder, a single scrape file, or `-` for stdin.
        bundle: String,
        /// A setting changed, NAME=VALUE (repeatable).
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// The load, × the capture's peak load level (`2x`, `0.5`).
        #[arg(long, value_name = "FACTOR")]
        load: Option<String>,
        /// Write it as JSON (`-` for stdout).
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Write it as Markdown (`-` for stdout).
        #[arg(long, value_name = "FILE")]
        md: Option<String>,
        #[command(flatten)]
        analysis: AnalysisArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Analyse a bundle: SLO scorecard, what to do, the six analyses.
    #[command(after_help = report_after_help())]
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
/// share them). The defaults and names come from the core
/// (`vllm_lens_core::settings`), as the page's do.
#[derive(Args)]
struct AnalysisArgs {
    /// Window width: 15s to 1h.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = settings::window_ms)]
    window: i64,
    #[arg(long = "slo", value_name = "NAME=VALUE", help = slo_help())]
    slo: Vec<String>,
    #[command(flatten)]
    facts: FactArgs,
}

fn report_after_help() -> String {
    format!(
        "Examples:\n  vllm-lens report capture.zip\n  vllm-lens report capture.zip -o report.html --md summary.md --json report.json\n  vllm-lens report capture.zip --window 5m --slo ttft-p95=500ms --slo error-abort=1% --fail-on-slo\n\nSLO names (latencies in ms, s; error-abort in %):\n{}\nExit codes: 0 done; 1 an SLO failed (proven by the data; \"cannot tell\" is not a failure) and --fail-on-slo was given; 2 the input could not be used.",
        settings::slo_names_text()
    )
}

fn slo_help() -> String {
    format!(
        "An SLO objective, NAME=VALUE (repeatable); the defaults: {}",
        settings::slo_defaults_text()
    )
}

impl AnalysisArgs {
    /// The analysis settings these flags give, checked.
    fn settings(&self) -> anyhow::Result<Settings> {
        let mut s = Settings {
            window_ms: self.window,
            model_bytes: self.facts.model_bytes.map(|b| b as f64),
            shared_prefix_tokens: self.facts.shared_prefix_tokens,
            gpu_hour_cost: self.facts.gpu_hour_cost,
            ..Settings::default()
        };
        for arg in &self.slo {
            settings::set_slo(&mut s.slo, arg)?;
        }
        settings::check(&s)?;
        Ok(s)
    }
}

/// What the user knows that `/metrics` does not say.
#[derive(Args)]
struct FactArgs {
    /// The model's weights in bytes (e.g. 16GB, 15GiB), when the model
    /// table does not know it: sets the decode floor.
    #[arg(long, value_name = "SIZE", value_parser = settings::size_bytes)]
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

/// Limits that protect memory from oversized or hostile bundles.
#[derive(Args)]
struct LimitArgs {
    /// Maximum decompressed size of the whole bundle, e.g. 4GiB, 500MiB.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = settings::size_bytes)]
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
            let session = input::open(&bundle, &limits.options())?;
            let inventory = Inspect::new(&bundle, session.loaded());
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
            let before = input::open(&before, &limits.options())?;
            let after = input::open(&after, &limits.options())?;
            let c = before.compare(&after, &settings)?;
            emit(&out, |f, w| w.write_all(f.comparison(&c).as_bytes()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            bundle,
            openmetrics,
            redact,
            limits,
        } => {
            let session = input::open(&bundle, &limits.options())?;
            let mut text = String::new();
            let written = vllm_lens_core::openmetrics::write(&session.loaded().store, &mut text);
            let redactor =
                redact.then(|| vllm_lens_core::redact::Redactor::new(session.loaded(), &[&text]));
            if let Some(r) = &redactor {
                text = r.text(&text);
            }
            print_diagnostics(session.problems(), redactor.as_ref());
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
        Command::Forecast {
            bundle,
            set,
            load,
            json,
            md,
            analysis,
            limits,
        } => {
            let settings = analysis.settings()?;
            let ask = forecast_ask(&set, load.as_deref())?;
            let session = input::open(&bundle, &limits.options())?;
            let spin = input::spinner("forecasting");
            let report = session.report(&settings)?;
            let asked = (!ask.changes.is_empty() || ask.load.is_some())
                .then(|| vllm_lens_core::forecast::predict(&report, &ask))
                .flatten();
            spin.finish_and_clear();
            print_diagnostics(session.problems(), None);
            write_forecast(
                &report.forecast,
                asked.as_ref(),
                json.as_deref(),
                md.as_deref(),
            )?;
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
            let session = input::open(&bundle, &limits.options())?;
            let spin = input::spinner("analysing");
            let (report, redactor) = if redact {
                let (r, redactor) = session.redacted_report(&settings)?;
                (r, Some(redactor))
            } else {
                (session.report(&settings)?, None)
            };
            spin.finish_and_clear();
            print_diagnostics(session.problems(), redactor.as_ref());
            emit(&out, |f, w| f.write_report(&report, w))?;
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

/// The scenario `--set` and `--load` ask for.
fn forecast_ask(
    set: &[String],
    load: Option<&str>,
) -> anyhow::Result<vllm_lens_core::forecast::Ask> {
    let mut ask = vllm_lens_core::forecast::Ask::default();
    for s in set {
        ask.changes.push(
            vllm_lens_core::forecast::Setting::parse(s)
                .map_err(|e| anyhow::anyhow!("--set {e}"))?,
        );
    }
    if let Some(l) = load {
        let x: f64 = l
            .trim()
            .trim_end_matches(['x', 'X', '×'])
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x > 0.0 && *x <= 64.0)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--load {l}: a factor of the peak load between 0 and 64, e.g. 2x or 0.5"
                )
            })?;
        ask.load = Some(x);
    }
    Ok(ask)
}

type Asked = (
    vllm_lens_core::analysis::model::forecast::ForecastScenario,
    Option<vllm_lens_core::analysis::model::forecast::SweepRow>,
);

/// The forecast on the terminal, or as JSON and Markdown files.
fn write_forecast(
    f: &vllm_lens_core::analysis::model::forecast::Forecast,
    asked: Option<&Asked>,
    json: Option<&str>,
    md: Option<&str>,
) -> anyhow::Result<()> {
    use vllm_lens_core::render::forecast as fr;
    let text = |markdown: bool| {
        let mut t = fr::render(f, markdown);
        if let Some((s, row)) = asked {
            t.push_str(if markdown { "## Asked\n\n" } else { "Asked:\n" });
            t.push_str(&fr::scenario_text(s, row.as_ref(), markdown));
        }
        t
    };
    let mut stdout = std::io::stdout().lock();
    let mut put = |path: &str, body: String| -> anyhow::Result<()> {
        if path == "-" {
            write_out(&mut stdout, &body)
        } else {
            std::fs::write(path, body).with_context(|| format!("{path}: cannot be written"))?;
            eprintln!("vllm-lens: wrote {path}");
            Ok(())
        }
    };
    if let Some(p) = json {
        let v = serde_json::json!({
            "forecast": f,
            "asked": asked.map(|(s, row)| serde_json::json!({"scenario": s, "sweep": row})),
        });
        put(p, serde_json::to_string_pretty(&v)? + "\n")?;
    }
    if let Some(p) = md {
        put(p, text(true))?;
    }
    if json.is_none() && md.is_none() {
        put("-", text(false))?;
    }
    Ok(())
}

/// Writes each requested rendering (`-` for stdout); with none requested,
/// prints the text form on stdout. A file is written as the rendering is
/// made (a large report's JSON is never held whole).
fn emit(
    out: &OutputArgs,
    render: impl Fn(Format, &mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let text = |format: Format| -> anyhow::Result<String> {
        let mut v = Vec::new();
        render(format, &mut v)?;
        Ok(String::from_utf8(v)?)
    };
    let mut stdout = std::io::stdout().lock();
    let requested = [
        (&out.output, Format::Html),
        (&out.json, Format::Json),
        (&out.md, Format::Markdown),
    ];
    let mut wrote = false;
    for (path, format) in requested {
        let Some(path) = path else { continue };
        wrote = true;
        if path == "-" {
            write_out(&mut stdout, &text(format)?)?;
        } else {
            let cannot = || format!("{path}: cannot be written");
            let mut file =
                std::io::BufWriter::new(std::fs::File::create(path).with_context(cannot)?);
            render(format, &mut file).with_context(cannot)?;
            file.flush().with_context(cannot)?;
            eprintln!("vllm-lens: wrote {path}");
        }
    }
    if !wrote {
        write_out(&mut stdout, &text(Format::Text)?)?;
    }
    Ok(())
}

/// Prints the bundle's problems (not its notes) on stderr, redacted if asked.
fn print_diagnostics<'a>(
    problems: impl Iterator<Item = &'a vllm_lens_core::Diagnostic>,
    redactor: Option<&vllm_lens_core::redact::Redactor>,
) {
    for d in problems {
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
