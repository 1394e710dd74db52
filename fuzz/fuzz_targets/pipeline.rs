//! The whole pipeline: load whatever loads, analyse it, render HTML,
//! Markdown and JSON. Never panics; the HTML never carries a script or
//! an element from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vllm_lens_core::analysis::{BundleMeta, Settings, analyse};
use vllm_lens_core::{Input, Options, load, render};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = if pick & 1 == 0 {
        "bundle.zip"
    } else {
        "vllm-0_20260101T000000Z.prom"
    };
    let mut options = Options::default();
    options.limits.max_total_bytes = 64 << 20;
    options.limits.max_series = 10_000;
    let Ok(loaded) = load(
        Input::Bytes {
            name,
            bytes,
            mtime_ms: None,
        },
        &options,
    ) else {
        return;
    };
    let meta = BundleMeta {
        name: name.to_string(),
        sha256: None,
    };
    let settings = Settings::default();
    let Ok(report) = analyse(&loaded, &meta, &settings) else {
        return;
    };
    let html = render::html(&report);
    let _ = render::markdown(&report);
    let json = render::json(&report);
    assert!(serde_json_valid(&json));
    // The one script element is the report's JSON (not executable; the
    // report's CSP allows no script): nothing in the input adds another.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(
        !html.contains("<vllm-lens-fuzz"),
        "an element from the input"
    );
});

fn serde_json_valid(s: &str) -> bool {
    s.starts_with('{') && s.trim_end().ends_with('}')
}
