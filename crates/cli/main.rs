//! The `vllm-lens` command: argument parsing, file IO and exit codes around
//! the sans-IO core. Exit codes: 0 done; 2 the input could not be used.

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
            eprintln!("vllm-lens: {err:#}");
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
            match stdout.write_all(text.as_bytes()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => other.context("writing to stdout")?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
