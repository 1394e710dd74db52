//! The pipeline's stages on the reference sample (40 vLLM + 40 DCGM
//! scrapes): store ingest, windows (counters and histograms through the
//! engine), the whole analysis, and rendering the HTML. Criterion prints
//! the times; nothing is asserted on them.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use vllm_lens_core::analysis::{BundleMeta, Settings, analyse};
use vllm_lens_core::catalog::{Catalogue, Signal};
use vllm_lens_core::query::{Query, Settings as QuerySettings};
use vllm_lens_core::{Input, Options, load, render};

const SAMPLE: &[u8] = include_bytes!("../../../samples/a10g-qwen3b-ramp.zip");

fn loaded() -> vllm_lens_core::Loaded {
    load(
        Input::Bytes {
            name: "a10g-qwen3b-ramp.zip",
            bytes: SAMPLE,
            mtime_ms: None,
        },
        &Options::default(),
    )
    .expect("the sample loads")
}

fn bench(c: &mut Criterion) {
    let l = loaded();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Bytes(l.bytes_read));
    g.bench_function("load (inflate, parse, store)", |b| {
        b.iter(|| black_box(loaded()))
    });
    g.throughput(Throughput::Elements(l.store.points()));
    g.bench_function("windows (counters and histograms)", |b| {
        b.iter(|| {
            let cat = Catalogue::resolve(&l.store);
            let q = Query::new(&l.store, &cat, QuerySettings::default()).expect("grid");
            black_box(q.counter(Signal::GenerationTokens));
            black_box(q.histogram(Signal::Ttft));
            black_box(q.histogram(Signal::InterTokenLatency));
            black_box(q.gauge(Signal::KvUsage));
        })
    });
    g.bench_function("analyse (the whole report model)", |b| {
        b.iter(|| {
            black_box(analyse(&l, &BundleMeta::default(), &Settings::default()).expect("report"))
        })
    });
    let report = analyse(&l, &BundleMeta::default(), &Settings::default()).expect("report");
    g.bench_function("render HTML", |b| {
        b.iter(|| black_box(render::html(&report)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
