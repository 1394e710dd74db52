//! Parses a scrape file N times and prints MB/s: a quick profiling target.
//!
//! `cargo run --release -p vllm-lens-expo --example parse_file -- FILE [N]`

use std::time::Instant;

use vllm_lens_expo::{Event, Parser};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: parse_file FILE [N]");
    let n: usize = args
        .next()
        .map_or(2000, |s| s.parse().expect("N is a number"));
    let text = std::fs::read_to_string(&path).expect("readable UTF-8 file");
    let start = Instant::now();
    let mut samples = 0usize;
    for _ in 0..n {
        for event in Parser::new(&text) {
            if let Event::Sample(s) = event {
                samples += usize::from(s.value.is_finite());
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (text.len() * n) as f64 / 1e6;
    println!("{samples} samples, {:.1} MB/s", mb / secs);
}
