//! Where the heap goes, phase by phase, natively: a counting allocator
//! prints the live bytes, the high-water mark and the time of each step of
//! the pipeline on a bundle (`cargo run --release -p vllm-lens-bench
//! --example heap -- week.zip`; add `analyse` to stop after the analysis).
//! The HTML's embedded JSON (serialised, deflated, base64) is then made
//! and timed alone: the rest of the HTML step is the page around it.

use peak_alloc::PeakAlloc;

#[global_allocator]
static A: PeakAlloc = PeakAlloc;

fn step(what: &str, since: &mut std::time::Instant) {
    let mib = |x: usize| x as f64 / (1 << 20) as f64;
    println!(
        "{what:<28} live {:>8.1} MiB   high-water {:>8.1} MiB   {:>6.2} s",
        mib(A.current_usage()),
        mib(A.peak_usage()),
        since.elapsed().as_secs_f64()
    );
    A.reset_peak_usage();
    *since = std::time::Instant::now();
}

fn main() {
    use vllm_lens_core::{Format, Input, Options, Session, Settings};
    let path = std::env::args().nth(1).expect("a bundle");
    let file = std::fs::File::open(&path).expect("open");
    let mut t = std::time::Instant::now();
    step("start", &mut t);
    let s = Session::load(
        &path,
        Input::Zip {
            name: path.clone(),
            reader: Box::new(std::io::BufReader::new(file)),
        },
        &Options::default(),
    )
    .expect("load");
    step("load", &mut t);
    let r = s.report(&Settings::default()).expect("report");
    step("analyse", &mut t);
    if std::env::args().nth(2).as_deref() == Some("analyse") {
        return;
    }
    let html = Format::Html.report(&r);
    step("html", &mut t);
    println!("html {:.1} MB", html.len() as f64 / 1e6);
    drop(html);
    let embedded = vllm_lens_core::render::embed::script(&r).into_string();
    step("the HTML's embedded JSON", &mut t);
    println!("embedded {:.1} MB", embedded.len() as f64 / 1e6);
    drop(embedded);
    let md = Format::Markdown.report(&r);
    step("markdown", &mut t);
    drop(md);
    let json = Format::Json.report(&r);
    step("json", &mut t);
    println!("json {:.1} MB", json.len() as f64 / 1e6);
}
