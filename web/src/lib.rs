//! The browser shell: the sans-IO core behind wasm-bindgen. It runs inside a
//! Web Worker (see `web/app.js`): the page hands it a bundle's bytes, it
//! keeps the loaded bundle in a [`Session`] and renders the report for any
//! settings without reading the bundle again. It performs no IO of its own:
//! no network, no storage, no clock.

use serde::Serialize;
use vllm_lens_core::{Format, Input, MemoryFiles, Options, settings};
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

/// The settings' defaults as JSON (the core's `Settings`): the page fills
/// its form from them, so they are defined once, in the core.
#[wasm_bindgen]
pub fn default_settings() -> String {
    settings::defaults_json()
}

/// The objectives (the core's registry) for the page's form: field, name,
/// label, unit and default of each.
#[wasm_bindgen]
pub fn slo_fields() -> String {
    settings::slo_form_json()
}

/// A problem with one file (and line), for the page's error panel.
#[derive(Debug, Serialize)]
struct PanelDiagnostic {
    file: String,
    line: Option<u32>,
    severity: String,
    message: String,
}

/// A loaded bundle: the core's [`vllm_lens_core::Session`] behind
/// wasm-bindgen.
#[wasm_bindgen]
pub struct Session(pub(crate) vllm_lens_core::Session);

/// The shell's clock, ms: the page's in the browser, the system's in the
/// native tests (the core has none).
pub(crate) fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }
}

pub(crate) fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

#[wasm_bindgen]
impl Session {
    /// Loads one file: a `.zip`, `.tar.gz`, `.tar`, `.gz` or a single scrape.
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, bytes: &[u8]) -> Result<Session, JsError> {
        let mut session = Session::unhashed(name, bytes)?;
        session.0.hash(bytes);
        Ok(session)
    }

    /// Like [`Session::new`] without the bytes' SHA-256: the worker has the
    /// browser's Web Crypto hash them on its own thread while the bundle
    /// loads here, then hands the digest over with [`Session::set_sha256`].
    pub fn unhashed(name: &str, bytes: &[u8]) -> Result<Session, JsError> {
        let input = Input::Bytes {
            name,
            bytes,
            mtime_ms: None,
        };
        let session = vllm_lens_core::Session::load(name, input, &Options::default());
        Ok(Session(session.map_err(js_error)?))
    }

    /// Records the bundle's SHA-256 (64 hex digits); false, and nothing
    /// recorded, for anything else.
    pub fn set_sha256(&mut self, hex: &str) -> bool {
        self.0.set_sha256(hex)
    }

    /// Hashes the bundle's bytes here (where Web Crypto is unavailable).
    pub fn hash(&mut self, bytes: &[u8]) {
        self.0.hash(bytes);
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
        let session =
            vllm_lens_core::Session::load(name, Input::Files(&mut source), &Options::default());
        Ok(Session(session.map_err(js_error)?))
    }

    /// Every line or file that could not be read (JSON array of
    /// `{file, line, severity, message}`), informational notes excluded.
    pub fn diagnostics(&self) -> String {
        let list: Vec<PanelDiagnostic> = self
            .0
            .problems()
            .map(|d| PanelDiagnostic {
                file: d.file.clone(),
                line: d.line,
                severity: format!("{:?}", d.severity).to_lowercase(),
                message: d.message.clone(),
            })
            .collect();
        serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
    }

    /// Renders the report for `settings` (JSON of the core's `Settings`;
    /// missing fields take the defaults). (No redaction here: it reads the
    /// report back from JSON, and that code would add 0.5 MB to the page;
    /// `vllm-lens report --redact` does it.)
    pub fn report(&self, settings: &str) -> Result<Rendered, JsError> {
        let s = settings::from_json(settings).map_err(js_error)?;
        let (mut report, pending) = self.0.report_deferred(&s).map_err(js_error)?;
        let t0 = now_ms();
        pending.fill(&mut report);
        let forecast_ms = now_ms() - t0;
        Ok(Rendered {
            html: Format::Html.report(&report),
            model: Model::Report(Box::new(report)),
            forecast_ms,
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
    let s = settings::from_json(settings).map_err(js_error)?;
    let c = before.0.compare(&after.0, &s).map_err(js_error)?;
    Ok(Rendered {
        html: Format::Html.comparison(&c),
        model: Model::Comparison(Box::new(c)),
        forecast_ms: 0.0,
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
    forecast_ms: f64,
}

#[wasm_bindgen]
impl Rendered {
    /// The self-contained HTML report (what "Download report" saves).
    #[wasm_bindgen(getter)]
    pub fn html(&self) -> String {
        self.html.clone()
    }
    /// Milliseconds the forecast took (the page's clock, included in the
    /// report's time; 0 for a comparison).
    #[wasm_bindgen(getter)]
    pub fn forecast_ms(&self) -> f64 {
        self.forecast_ms
    }
    /// The Markdown summary.
    #[wasm_bindgen(getter)]
    pub fn markdown(&self) -> String {
        match &self.model {
            Model::Report(r) => Format::Markdown.report(r),
            Model::Comparison(c) => Format::Markdown.comparison(c),
        }
    }
    /// The report model as JSON.
    #[wasm_bindgen(getter)]
    pub fn json(&self) -> String {
        match &self.model {
            Model::Report(r) => Format::Json.report(r),
            Model::Comparison(c) => Format::Json.comparison(c),
        }
    }
    /// The same JSON handed to `sink` (a function of one `Uint8Array`, a
    /// copy) in pieces of about 1 MiB as it is written: the page makes a
    /// `Blob` of them, so the model (156 MB of JSON for a fleet-day) is
    /// never one string in WebAssembly memory, which never shrinks.
    pub fn json_parts(&self, sink: &js_sys::Function) -> Result<(), JsError> {
        let mut w = Pieces::new(|piece: &[u8]| {
            sink.call1(&JsValue::NULL, &js_sys::Uint8Array::from(piece))
                .map(|_| ())
                .map_err(|e| {
                    // (Not `{e:?}`: JsValue's Debug pulls a long printer
                    // into the glue.)
                    let why = e.as_string();
                    std::io::Error::other(why.unwrap_or_else(|| "the page refused a piece".into()))
                })
        });
        self.write_json(&mut w)
            .and_then(|()| w.finish())
            .map_err(|e| JsError::new(&e.to_string()))
    }
}

impl Rendered {
    fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match &self.model {
            Model::Report(r) => Format::Json.write_report(r, w),
            Model::Comparison(c) => w.write_all(Format::Json.comparison(c).as_bytes()),
        }
    }
}

/// A writer that hands its bytes on in pieces of [`Pieces::SIZE`].
struct Pieces<F: FnMut(&[u8]) -> std::io::Result<()>> {
    buf: Vec<u8>,
    sink: F,
}

impl<F: FnMut(&[u8]) -> std::io::Result<()>> Pieces<F> {
    const SIZE: usize = 1 << 20;

    fn new(sink: F) -> Self {
        Pieces {
            buf: Vec::with_capacity(Self::SIZE),
            sink,
        }
    }

    /// Hands on what is left.
    fn finish(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            (self.sink)(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl<F: FnMut(&[u8]) -> std::io::Result<()>> std::io::Write for Pieces<F> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= Self::SIZE {
            (self.sink)(&self.buf)?;
            self.buf.clear();
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

    /// The pieces joined are the JSON, for a report and a comparison.
    #[test]
    fn json_in_pieces_joins_to_the_json() {
        let s = Session::new(SAMPLE_NAME, SAMPLE).unwrap_or_else(|_| panic!("loads"));
        let r = s.report("{}").unwrap_or_else(|_| panic!("renders"));
        let c = compare_sessions(&s, &s, "{}").unwrap_or_else(|_| panic!("compares"));
        for rendered in [&r, &c] {
            let (mut joined, mut pieces) = (Vec::new(), 0);
            let mut w = Pieces::new(|piece: &[u8]| {
                assert!(!piece.is_empty());
                joined.extend_from_slice(piece);
                pieces += 1;
                Ok(())
            });
            rendered.write_json(&mut w).expect("in memory");
            w.finish().expect("in memory");
            drop(w);
            assert_eq!(String::from_utf8(joined).expect("utf-8"), rendered.json());
            assert!(pieces >= 1);
        }
    }

    #[test]
    fn a_digest_from_the_page_is_checked_before_it_is_recorded() {
        let mut s = Session::unhashed(SAMPLE_NAME, SAMPLE).unwrap_or_else(|_| panic!("loads"));
        assert_eq!(s.0.meta().sha256, None);
        assert!(!s.set_sha256("<script>"));
        assert!(!s.set_sha256(&"g".repeat(64)));
        assert_eq!(s.0.meta().sha256, None);
        let want = vllm_lens_core::sha256_hex(SAMPLE);
        assert!(s.set_sha256(&want.to_ascii_uppercase()));
        assert_eq!(s.0.meta().sha256.as_deref(), Some(want.as_str()));
        s.hash(SAMPLE);
        assert_eq!(s.0.meta().sha256.as_deref(), Some(want.as_str()));
    }
}

#[cfg(feature = "bench")]
mod bench;
mod split;

pub use split::{Batch, Hasher, Inflater, Loading};
