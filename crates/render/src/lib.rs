/*!
Rendering the report model, shared by the CLI and the page: one
self-contained HTML file ([`html()`]), a Markdown summary ([`markdown()`]) and JSON
([`json()`]). Deterministic: the same report gives the same bytes on every
platform (no clock, no text measurement, no hash-map order).

* [`svg`]: our own small SVG chart module (lines, stacked areas, thresholds,
  gaps, min/max envelopes for long captures).
* [`embed`]: the report's JSON inside the HTML, escaped, and read back.
* [`words`]: the phrases the terminal, Markdown and HTML share.
*/
#![deny(missing_docs)]

pub mod compare;
pub mod embed;
pub mod html;
pub mod md;
pub mod svg;
pub mod words;

#[cfg(test)]
mod props;

use vllm_lens_analysis::model::Report;

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
    let mut s = serde_json::to_string_pretty(report).expect("the report serialises");
    s.push('\n');
    s
}
