//! Parser throughput on a realistic vLLM scrape, beside `prometheus-parse`.
//!
//! Both parse the same bytes: an underscore-named copy of the scrape, since
//! `prometheus-parse` drops every name containing `:`. Criterion prints the
//! throughput (MiB/s) of each.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use vllm_lens_expo::{Event, Parser};

const VLLM: &str = include_str!("../../../tests/data/scrapes/vllm-v1-0.23-2engines.prom");
const DCGM: &str = include_str!("../../../tests/data/scrapes/dcgm-4.x-2gpu-xid.prom");

fn ours(text: &str) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for event in Parser::new(text) {
        if let Event::Sample(s) = event {
            sum += s.value;
            n += s.key.len();
        }
    }
    sum + n as f64
}

fn theirs(text: &str) -> usize {
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("parses");
    scrape.samples.len()
}

fn bench(c: &mut Criterion) {
    let underscored = VLLM.replace("vllm:", "vllm_");
    let mut group = c.benchmark_group("parse_vllm_scrape");
    group.throughput(Throughput::Bytes(underscored.len() as u64));
    group.bench_function("vllm-lens-expo", |b| {
        b.iter(|| ours(black_box(&underscored)))
    });
    group.bench_function("prometheus-parse", |b| {
        b.iter(|| theirs(black_box(&underscored)))
    });
    group.finish();

    let mut group = c.benchmark_group("parse_dcgm_scrape");
    group.throughput(Throughput::Bytes(DCGM.len() as u64));
    group.bench_function("vllm-lens-expo", |b| b.iter(|| ours(black_box(DCGM))));
    group.bench_function("prometheus-parse", |b| b.iter(|| theirs(black_box(DCGM))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
