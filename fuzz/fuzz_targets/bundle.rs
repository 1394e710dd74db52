//! The bundle loader on any bytes under any of the names that select a
//! container (zip, tar.gz, tar, gz, a manifest, a scrape): never panics,
//! never exceeds its limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vllm_lens_core::{Input, Options, load};

const NAMES: [&str; 7] = [
    "bundle.zip",
    "bundle.tar.gz",
    "bundle.tar",
    "scrape.prom.gz",
    "manifest.json",
    "vllm-0_20260101T000000Z.prom",
    "query.json",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = NAMES[pick as usize % NAMES.len()];
    let mut options = Options::default();
    // Small limits, so a bomb is caught quickly and memory stays bounded.
    options.limits.max_total_bytes = 64 << 20;
    options.limits.max_series = 10_000;
    let _ = load(
        Input::Bytes {
            name,
            bytes,
            mtime_ms: None,
        },
        &options,
    );
});
