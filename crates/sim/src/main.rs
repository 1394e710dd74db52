//! `vllm-lens-sim`: writes the bundle (`<name>.zip`) and the ground truth
//! (`<name>.truth.json`) of each scenario file given.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use vllm_lens_sim::scenario::Scenario;

/// Simulate vLLM servers and dcgm-exporter and write capture bundles whose truth is known.
#[derive(Parser, Debug)]
#[command(
    version,
    after_help = "Examples:\n  vllm-lens-sim samples/scenarios/*.toml -o samples\n  vllm-lens-sim --check samples/scenarios/*.toml -o samples\n  vllm-lens-sim samples/scenarios/day.toml -o /tmp"
)]
struct Cli {
    /// Scenario files (TOML).
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Folder the bundles and truth files go to.
    #[arg(short, long, default_value = ".")]
    out: PathBuf,
    /// Compare with the files already in --out instead of writing; exit 1 on any difference.
    #[arg(long)]
    check: bool,
    /// Do not write `<name>.truth.json`.
    #[arg(long)]
    no_truth: bool,
}

fn run_one(path: &Path, cli: &Cli) -> Result<bool> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let scenario =
        Scenario::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let resolved = scenario
        .resolve()
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let started = Instant::now();
    let g = vllm_lens_sim::generate(resolved);
    let zip = vllm_lens_sim::zip_bundle(&g);
    let mut truth = serde_json::to_vec_pretty(&g.truth)?;
    truth.push(b'\n');
    let zip_path = cli.out.join(format!("{}.zip", g.folder));
    let truth_path = cli.out.join(format!("{}.truth.json", g.folder));
    let scrapes = g.files.len() - 1;
    let raw: usize = g.files.iter().map(|f| f.1.len()).sum();
    if cli.check {
        let mut same = std::fs::read(&zip_path).ok().as_deref() == Some(zip.as_slice());
        if !cli.no_truth {
            same &= std::fs::read(&truth_path).ok().as_deref() == Some(truth.as_slice());
        }
        println!(
            "{}: {}",
            zip_path.display(),
            if same { "identical" } else { "DIFFERS" }
        );
        return Ok(same);
    }
    std::fs::create_dir_all(&cli.out)?;
    std::fs::write(&zip_path, &zip).with_context(|| format!("writing {}", zip_path.display()))?;
    if !cli.no_truth {
        std::fs::write(&truth_path, &truth)?;
    }
    println!(
        "{}: {} scrapes, {:.1} MB of text, {:.2} MB zipped, {:.1} s",
        zip_path.display(),
        scrapes,
        raw as f64 / 1e6,
        zip.len() as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut ok = true;
    for path in &cli.scenarios {
        match run_one(path, &cli) {
            Ok(same) => ok &= same,
            Err(e) => {
                eprintln!("vllm-lens-sim: {e:#}");
                return ExitCode::from(2);
            }
        }
    }
    if !ok {
        let _ = bail_msg();
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn bail_msg() -> Result<()> {
    eprintln!(
        "vllm-lens-sim: generated output differs from the committed files; rerun without --check to update them"
    );
    bail!("differs")
}
