//! The browser shell: the sans-IO core behind wasm-bindgen. It runs inside a
//! Web Worker (see `web/app.js`): the page hands it a bundle's bytes, it
//! keeps the loaded bundle in a [`Session`] and renders the report for any
//! settings without reading the bundle again. It performs no IO of its own:
//! no network, no storage, no clock.

use serde::{Deserialize, Serialize};
use vllm_lens_core::analysis::{BundleMeta, Settings, SloThresholds, analyse};
use vllm_lens_core::{Input, Loaded, MemoryFiles, Options, load, render, sha256_hex};
use wasm_bindgen::prelude::*;

/// The sample bundle, compiled into the app (never fetched).
const SAMPLE: &[u8] = include_bytes!("../../samples/a10g-qwen3b-ramp.zip");
/// The sample's file name.
pub const SAMPLE_NAME: &str = "a10g-qwen3b-ramp.zip";

/// Installs the panic hook, so a bug shows a message instead of a blank page.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The sample bundle's bytes.
#[wasm_bindgen]
pub fn sample_bundle() -> Vec<u8> {
    SAMPLE.to_vec()
}

/// The sample bundle's file name.
#[wasm_bindgen]
pub fn sample_name() -> String {
    SAMPLE_NAME.to_string()
}

/// The tool version.
#[wasm_bindgen]
pub fn version() -> String {
    vllm_lens_core::VERSION.to_string()
}

/// Settings as the page's form sends them (JSON).
#[derive(Debug, Deserialize)]
#[serde(default)]
pub struct PageSettings {
    /// Window width, ms.
    pub window_ms: i64,
    /// TTFT p95 objective, ms.
    pub ttft_p95_ms: f64,
    /// Inter-token p95 objective, ms.
    pub itl_p95_ms: f64,
    /// Requests in flight (per replica) that must be admitted without waiting.
    pub queue_concurrency: f64,
    /// Error + abort objective, %.
    pub error_abort_pct: f64,
    /// What one GPU costs per hour, when given.
    pub gpu_hour_cost: Option<f64>,
    /// Tokens every prompt shares at its start, when given.
    pub shared_prefix_tokens: Option<f64>,
    /// The weights' size in bytes, when given.
    pub model_bytes: Option<f64>,
}

impl Default for PageSettings {
    fn default() -> PageSettings {
        let s = Settings::default();
        PageSettings {
            window_ms: s.window_ms,
            ttft_p95_ms: s.slo.ttft_p95_ms,
            itl_p95_ms: s.slo.itl_p95_ms,
            queue_concurrency: s.slo.queue_concurrency,
            error_abort_pct: s.slo.error_abort_pct,
            gpu_hour_cost: None,
            shared_prefix_tokens: None,
            model_bytes: None,
        }
    }
}

impl PageSettings {
    /// The core's settings.
    pub fn settings(&self) -> Settings {
        Settings {
            window_ms: self.window_ms,
            slo: SloThresholds {
                ttft_p95_ms: self.ttft_p95_ms,
                itl_p95_ms: self.itl_p95_ms,
                queue_concurrency: self.queue_concurrency,
                error_abort_pct: self.error_abort_pct,
                ..SloThresholds::default()
            },
            gpu_hour_cost: self.gpu_hour_cost.filter(|x| x.is_finite() && *x >= 0.0),
            shared_prefix_tokens: self
                .shared_prefix_tokens
                .filter(|x| x.is_finite() && *x >= 0.0),
            model_bytes: self.model_bytes.filter(|x| x.is_finite() && *x > 0.0),
        }
    }
}

/// A problem with one file (and line), for the page's error panel.
#[derive(Debug, Serialize)]
struct PanelDiagnostic {
    file: String,
    line: Option<u32>,
    severity: String,
    message: String,
}

/// A loaded bundle.
#[wasm_bindgen]
pub struct Session {
    loaded: Loaded,
    meta: BundleMeta,
}

fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

#[wasm_bindgen]
impl Session {
    /// Loads one file: a `.zip`, `.tar.gz`, `.tar`, `.gz` or a single scrape.
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, bytes: &[u8]) -> Result<Session, JsError> {
        let mut session = Session::unhashed(name, bytes)?;
        session.meta.sha256 = Some(sha256_hex(bytes));
        Ok(session)
    }

    /// Like [`Session::new`] without the bytes' SHA-256: the worker has the
    /// browser's Web Crypto hash them on its own thread while the bundle
    /// loads here, then hands the digest over with [`Session::set_sha256`].
    pub fn unhashed(name: &str, bytes: &[u8]) -> Result<Session, JsError> {
        let loaded = load(
            Input::Bytes {
                name,
                bytes,
                mtime_ms: None,
            },
            &Options::default(),
        )
        .map_err(js_error)?;
        Ok(Session {
            loaded,
            meta: BundleMeta {
                name: name.to_string(),
                sha256: None,
            },
        })
    }

    /// Records the bundle's SHA-256 (64 hex digits); false, and nothing
    /// recorded, for anything else.
    pub fn set_sha256(&mut self, hex: &str) -> bool {
        if hex.len() != 64 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
        self.meta.sha256 = Some(hex.to_ascii_lowercase());
        true
    }

    /// Hashes the bundle's bytes here (where Web Crypto is unavailable).
    pub fn hash(&mut self, bytes: &[u8]) {
        self.meta.sha256 = Some(sha256_hex(bytes));
    }

    /// Loads several files (loose scrapes, or a folder's files with their
    /// relative paths) as one bundle named `name`.
    pub fn from_files(
        name: &str,
        paths: Vec<String>,
        files: Vec<js_sys::Uint8Array>,
    ) -> Result<Session, JsError> {
        let mut source = MemoryFiles::default();
        for (path, data) in paths.iter().zip(files) {
            source.push(path, data.to_vec(), None);
        }
        let loaded = load(Input::Files(&mut source), &Options::default()).map_err(js_error)?;
        Ok(Session {
            loaded,
            meta: BundleMeta {
                name: name.to_string(),
                sha256: None,
            },
        })
    }

    /// Every line or file that could not be read (JSON array of
    /// `{file, line, severity, message}`), informational notes excluded.
    pub fn diagnostics(&self) -> String {
        let list: Vec<PanelDiagnostic> = self
            .loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity != vllm_lens_core::Severity::Info)
            .map(|d| PanelDiagnostic {
                file: d.file.clone(),
                line: d.line,
                severity: format!("{:?}", d.severity).to_lowercase(),
                message: d.message.clone(),
            })
            .collect();
        serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
    }

    /// Renders the report for `settings` (JSON of [`PageSettings`]).
    pub fn report(&self, settings: &str) -> Result<Rendered, JsError> {
        let page: PageSettings = serde_json::from_str(settings).map_err(js_error)?;
        let report = analyse(&self.loaded, &self.meta, &page.settings()).map_err(js_error)?;
        Ok(Rendered {
            html: render::html(&report),
            model: Model::Report(Box::new(report)),
        })
    }
}

/// Compares two loaded bundles (before, after) under the same settings.
#[wasm_bindgen]
pub fn compare_sessions(
    before: &Session,
    after: &Session,
    settings: &str,
) -> Result<Rendered, JsError> {
    let page: PageSettings = serde_json::from_str(settings).map_err(js_error)?;
    let s = page.settings();
    let a = analyse(&before.loaded, &before.meta, &s).map_err(js_error)?;
    let b = analyse(&after.loaded, &after.meta, &s).map_err(js_error)?;
    let c = vllm_lens_core::analysis::compare::compare(&a, &b);
    Ok(Rendered {
        html: render::compare::html(&c),
        model: Model::Comparison(Box::new(c)),
    })
}

enum Model {
    Report(Box<vllm_lens_core::analysis::Report>),
    Comparison(Box<vllm_lens_core::analysis::compare::Comparison>),
}

/// One rendering of the report: the HTML at once, the Markdown and JSON
/// when asked for (the page shows the report first, then fetches them).
#[wasm_bindgen]
pub struct Rendered {
    html: String,
    model: Model,
}

#[wasm_bindgen]
impl Rendered {
    /// The self-contained HTML report (what "Download report" saves).
    #[wasm_bindgen(getter)]
    pub fn html(&self) -> String {
        self.html.clone()
    }
    /// The Markdown summary.
    #[wasm_bindgen(getter)]
    pub fn markdown(&self) -> String {
        match &self.model {
            Model::Report(r) => render::markdown(r),
            Model::Comparison(c) => render::compare::markdown(c),
        }
    }
    /// The report model as JSON.
    #[wasm_bindgen(getter)]
    pub fn json(&self) -> String {
        match &self.model {
            Model::Report(r) => render::json(r),
            Model::Comparison(c) => render::compare::json(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_renders_like_the_cli() {
        let s = Session::new(SAMPLE_NAME, SAMPLE).unwrap_or_else(|_| panic!("loads"));
        let r = s.report("{}").unwrap_or_else(|_| panic!("renders"));
        assert!(r.html.contains("vllm-lens-report"));
        let v: serde_json::Value = serde_json::from_str(&r.json()).expect("json");
        assert_eq!(v["bundle"]["name"], SAMPLE_NAME);
        assert_eq!(s.diagnostics(), "[]");
    }

    #[test]
    fn a_digest_from_the_page_is_checked_before_it_is_recorded() {
        let mut s = Session::unhashed(SAMPLE_NAME, SAMPLE).unwrap_or_else(|_| panic!("loads"));
        assert_eq!(s.meta.sha256, None);
        assert!(!s.set_sha256("<script>"));
        assert!(!s.set_sha256(&"g".repeat(64)));
        assert_eq!(s.meta.sha256, None);
        let want = sha256_hex(SAMPLE);
        assert!(s.set_sha256(&want.to_ascii_uppercase()));
        assert_eq!(s.meta.sha256.as_deref(), Some(want.as_str()));
        s.hash(SAMPLE);
        assert_eq!(s.meta.sha256.as_deref(), Some(want.as_str()));
    }
}

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
