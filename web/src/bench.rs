//! Timing hooks for `web/tests/bench.mjs` (`scripts/bench.sh`), built only
//! with `--features bench`: inflation and parsing alone, in the browser's
//! WebAssembly.

use wasm_bindgen::prelude::*;

/// Benchmark hook (`web/tests/bench.mjs`): inflates every member of a zip
/// bundle and returns the bytes of text, to time inflation alone in the
/// browser.
#[wasm_bindgen]
pub fn bench_inflate(bytes: &[u8]) -> usize {
    use std::io::Read;
    let Ok(mut z) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
        return 0;
    };
    let mut total = 0;
    let mut buf = Vec::new();
    for i in 0..z.len() {
        if let Ok(mut f) = z.by_index(i) {
            buf.clear();
            if f.read_to_end(&mut buf).is_ok() {
                total += buf.len();
            }
        }
    }
    total
}

/// Benchmark hook: parses a scrape text `times` times and returns the
/// samples seen, to time the parser alone in the browser.
#[wasm_bindgen]
pub fn bench_parse(text: &str, times: u32) -> usize {
    let mut n = 0;
    for _ in 0..times {
        n += vllm_lens_core::expo::Parser::new(text)
            .filter(|e| matches!(e, vllm_lens_core::expo::Event::Sample(_)))
            .count();
    }
    n
}
