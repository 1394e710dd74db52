//! Where the heap goes, phase by phase, natively: a counting allocator
//! prints the live bytes and the high-water mark after each step of the
//! pipeline on a bundle (`cargo run --release -p vllm-lens-bench --example
//! heap -- week.zip`).

use peak_alloc::PeakAlloc;

#[global_allocator]
static A: PeakAlloc = PeakAlloc;

fn step(what: &str) {
    let mib = |x: usize| x as f64 / (1 << 20) as f64;
    println!(
        "{what:<28} live {:>8.1} MiB   high-water {:>8.1} MiB",
        mib(A.current_usage()),
        mib(A.peak_usage())
    );
    A.reset_peak_usage();
}

fn main() {
    use vllm_lens_core::{Format, Input, Options, Session, Settings};
    let path = std::env::args().nth(1).expect("a bundle");
    let file = std::fs::File::open(&path).expect("open");
    step("start");
    let s = Session::load(
        &path,
        Input::Zip {
            name: path.clone(),
            reader: Box::new(std::io::BufReader::new(file)),
        },
        &Options::default(),
    )
    .expect("load");
    step("load");
    let r = s.report(&Settings::default()).expect("report");
    step("analyse");
    if std::env::args().nth(2).as_deref() == Some("analyse") {
        return;
    }
    let html = Format::Html.report(&r);
    step("html");
    println!("html {:.1} MB", html.len() as f64 / 1e6);
    drop(html);
    let md = Format::Markdown.report(&r);
    step("markdown");
    drop(md);
    let json = Format::Json.report(&r);
    step("json");
    println!("json {:.1} MB", json.len() as f64 / 1e6);
}
