//! The pipeline's stages on the reference sample (40 vLLM + 40 DCGM
//! scrapes): store ingest, windows (counters and histograms through the
//! engine), the whole analysis, rendering the HTML, and the forecast alone
//! (calibration and the standard scenarios). Criterion prints
//! the times; nothing is asserted on them.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use vllm_lens_core::analysis::{BundleMeta, Settings, analyse, analyse_deferred};
use vllm_lens_core::catalog::{Catalogue, Signal};
use vllm_lens_core::query::{Query, Settings as QuerySettings};
use vllm_lens_core::{Input, Options, load, render};

const SAMPLE: &[u8] = include_bytes!("../../../samples/a10g-qwen3b-ramp.zip");
const RAMP_CAP8: &[u8] = include_bytes!("../../../samples/real/ramp-cap8.zip");

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

/// The forecast alone (calibration: the fit and the back-test's replays;
/// then today's scenario, each modelled lever and the load sweep), on the
/// reference sample and on a real capture whose report has a lever.
fn forecast(c: &mut Criterion) {
    let mut g = c.benchmark_group("forecast");
    g.sample_size(10);
    for (name, bytes) in [("a10g-qwen3b-ramp", SAMPLE), ("real/ramp-cap8", RAMP_CAP8)] {
        let l = load(
            Input::Bytes {
                name,
                bytes,
                mtime_ms: None,
            },
            &Options::default(),
        )
        .expect("loads");
        let (report, pending) =
            analyse_deferred(&l, &BundleMeta::default(), &Settings::default()).expect("report");
        g.bench_function(format!("calibrate + standard scenarios ({name})"), |b| {
            b.iter_batched(
                || (report.clone(), pending.clone()),
                |(mut r, p)| {
                    p.fill(&mut r);
                    black_box(r)
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench, forecast);
criterion_main!(benches);
