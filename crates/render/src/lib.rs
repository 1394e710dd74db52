/*!
Rendering the report model, shared by the CLI and the page: one
self-contained HTML file ([`html()`]), a Markdown summary ([`markdown()`]) and JSON
([`json()`], or written as it is made with [`json_to`]). Deterministic: the same report gives the same bytes on every
platform (no clock, no text measurement, no hash-map order).

* [`svg`]: our own small SVG chart module (lines, stacked areas, thresholds,
  gaps, min/max envelopes for long captures).
* [`embed`]: the report's JSON inside the HTML, escaped, and read back.
* [`forecast`]: the forecast in lines and tables (`vllm-lens forecast`).
* [`words`]: the phrases the terminal, Markdown and HTML share.
*/
#![deny(missing_docs)]

pub mod compare;
pub mod embed;
pub mod forecast;
pub mod html;
pub mod md;
pub mod svg;
pub mod words;

#[cfg(test)]
mod props;

use vllm_lens_model::Report;

/// The report as one self-contained HTML page.
pub fn html(report: &Report) -> String {
    html::render(report)
}

/// The report as Markdown for a ticket.
pub fn markdown(report: &Report) -> String {
    md::render(report)
}

/// The report model as pretty-printed JSON, newline-terminated.
pub fn json(report: &Report) -> String {
    let mut out = Vec::new();
    json_to(report, &mut out).expect("in memory");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// [`json()`]'s bytes written to `w` as they are made, so that a large
/// model (a fleet-day's JSON is 156 MB) is never held as one string. Give
/// it a buffered writer. (One writer type, `dyn`, for every caller: each
/// type adds its own copy of the model's serialiser to the page.)
pub fn json_to(report: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    w.write_all(b"\n")
}
