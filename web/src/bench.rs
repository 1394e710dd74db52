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

/// Benchmark hook: the forecast alone (calibration and the standard
/// scenarios) of a bundle's report, `times` times; returns the
/// milliseconds per run by the page's clock (the report without its
/// forecast is made once, outside the time).
#[wasm_bindgen]
pub fn bench_forecast(name: &str, bytes: &[u8], times: u32) -> f64 {
    let input = vllm_lens_core::Input::Bytes {
        name,
        bytes,
        mtime_ms: None,
    };
    let Ok(s) = vllm_lens_core::Session::load(name, input, &vllm_lens_core::Options::default())
    else {
        return f64::NAN;
    };
    let Ok((report, pending)) = s.report_deferred(&vllm_lens_core::Settings::default()) else {
        return f64::NAN;
    };
    let times = times.max(1);
    let t0 = crate::now_ms();
    for _ in 0..times {
        let mut r = report.clone();
        pending.clone().fill(&mut r);
        std::hint::black_box(&r);
    }
    (crate::now_ms() - t0) / f64::from(times)
}
