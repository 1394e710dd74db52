/*!
The sans-IO core of vLLM Lens. It never opens a file, reads a clock, starts a
thread or touches the network: the shells (the CLI and the WASM page) hand it
bytes and settings and get back data models and rendered text.

The pipeline: bundle ([`bundle`]) → exposition parser ([`expo`]) → series
store ([`store`]) → catalogue ([`catalog`]) → windows, rates and quantiles
([`query`]) → analyses and the report model ([`analysis`]) → HTML, Markdown
and JSON ([`render`]).

# Brief overview

* [`Session`] is the one API both shells use: load a bundle once, make its
  report for any [`Settings`], redact it, compare two, and render with
  [`Format`].
* [`settings`] defines the settings once: defaults, the `--slo` names,
  duration and size parsers, the checks, the JSON the page sends.
* [`load`] reads an [`Input`] into a [`Loaded`] bundle (re-exported from
  [`bundle`]).
* [`inspect::Inspect`] is the serialisable inventory behind
  `vllm-lens inspect`: targets, families, diagnostics, sample counts.
* [`catalog::Catalogue`] resolves each logical signal to the family the
  bundle holds and infers the vLLM era (re-exported from [`catalog`]).
* [`query::Query`] reads signals through clock-aligned windows: reset-aware
  increases and rates, `histogram_quantile`, gauge statistics (re-exported
  from [`query`]).
* [`analysis::analyse`] makes the [`analysis::Report`]: per-window rows,
  the six analyses, the SLO scorecard, recommendations, timeline and data
  quality; [`report::to_text`] prints its gist for a terminal.
* [`render`] prints a report as one self-contained HTML file, Markdown or
  JSON (re-exported from [`render`]).
* [`redact::Redactor`] hides hostnames, pods, IPs, UUIDs and the model name
  behind stable placeholders (`--redact`).
* [`sha256_hex`] fingerprints a bundle's bytes for the report header.
* [`openmetrics::write`] writes a store as OpenMetrics with timestamps, for
  `promtool tsdb create-blocks-from openmetrics`.
* [`time::format_rfc3339`] prints times for humans without a clock.

# Example

```
use vllm_lens_core::{Input, Options, inspect::Inspect, load};

let text = b"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n";
let loaded = load(
    Input::Bytes { name: "1767225600000-vllm.prom", bytes: text, mtime_ms: None },
    &Options::default(),
)?;
let inventory = Inspect::new("1767225600000-vllm.prom", &loaded);
assert_eq!(inventory.targets[0].name, "vllm");
assert_eq!(inventory.targets[0].kind, "vllm");
assert_eq!(inventory.families[0].name, "vllm:num_requests_running");
assert_eq!(inventory.samples, 1);
# Ok::<(), vllm_lens_core::Error>(())
```
*/
#![deny(missing_docs)]

pub mod inspect;
pub mod openmetrics;
pub mod redact;
pub mod report;
pub mod session;
pub mod settings;

pub use session::{Format, Session};
pub use settings::Settings;

pub use vllm_lens_analysis as analysis;
pub use vllm_lens_bundle as bundle;
pub use vllm_lens_bundle::{
    Archive, Diagnostic, Error, ErrorKind, FileInfo, FileSource, Input, Limits, Listing, Loaded,
    Loader, MemoryFiles, Options, Severity, load,
};
pub use vllm_lens_catalog as catalog;
pub use vllm_lens_expo as expo;
pub use vllm_lens_forecast as forecast;
pub use vllm_lens_model::time;
pub use vllm_lens_query as query;
pub use vllm_lens_render as render;
pub use vllm_lens_store as store;

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut digest = Sha256::default();
    digest.update(bytes);
    digest.hex()
}

/// SHA-256 taken piece by piece, for a bundle that is never whole in one
/// place (the page's inflating worker hashes the file it reads in slices
/// where Web Crypto is missing).
#[derive(Clone, Default)]
pub struct Sha256(sha2::Sha256);

impl Sha256 {
    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        use sha2::Digest;
        // Fed in 64 KiB pieces: one call over a whole bundle never leaves
        // WebAssembly's baseline tier (V8 does not tier up a running call),
        // and hashing `day` took 0.2 s there instead of 0.05 s.
        for piece in bytes.chunks(1 << 16) {
            self.0.update(piece);
        }
    }

    /// The digest, lowercase hex.
    pub fn hex(self) -> String {
        use sha2::Digest;
        let mut out = String::with_capacity(64);
        for b in self.0.finalize() {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }
}

/// The tool's version, as printed in reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
