//! The report's JSON inside the HTML, so the file can be read back by the
//! tool. It sits in `<script type="application/json" id="vllm-lens-report">`
//! (never executed; the page's CSP allows no script anyway), escaped so
//! that nothing in it can end the element: `<`, `>`, `&`, U+2028 and
//! U+2029 are written as `\uXXXX` escapes, which JSON reads back as the same
//! characters. Large models (over 1 MB of JSON) are stored deflated and
//! base64-encoded, marked `data-encoding="deflate-base64"`.

use std::io::{Read, Write};

use base64::Engine;
use maud::{Markup, PreEscaped, html};
use vllm_lens_analysis::model::Report;

/// The element id.
pub const ID: &str = "vllm-lens-report";
/// Above this many bytes of JSON, the embedded copy is compressed.
pub const COMPRESS_ABOVE: usize = 1 << 20;

/// JSON escaped for a `<script>` element.
pub fn escape_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The `<script>` element holding the report.
pub fn script(r: &Report) -> Markup {
    script_json(&serde_json::to_string(r).expect("the report serialises"))
}

/// The `<script>` element holding any JSON document.
pub fn script_json(json: &str) -> Markup {
    if json.len() > COMPRESS_ABOVE {
        let mut enc =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(json.as_bytes()).expect("in memory");
        let packed = enc.finish().expect("in memory");
        let text = base64::engine::general_purpose::STANDARD.encode(packed);
        html! { script type="application/json" id=(ID) data-encoding="deflate-base64" { (PreEscaped(text)) } }
    } else {
        html! { script type="application/json" id=(ID) { (PreEscaped(escape_json(json))) } }
    }
}

/// Reads the report's JSON back out of a report HTML file.
pub fn read(html: &str) -> Option<String> {
    let marker = format!("id=\"{ID}\"");
    let at = html.find(&marker)?;
    let open_end = at + html[at..].find('>')?;
    let tag = &html[html[..at].rfind('<')?..open_end];
    let body_start = open_end + 1;
    let body_end = body_start + html[body_start..].find("</script>")?;
    let body = &html[body_start..body_end];
    if tag.contains("data-encoding=\"deflate-base64\"") {
        let packed = base64::engine::general_purpose::STANDARD
            .decode(body.trim())
            .ok()?;
        let mut out = String::new();
        flate2::read::DeflateDecoder::new(packed.as_slice())
            .take(1 << 30)
            .read_to_string(&mut out)
            .ok()?;
        Some(out)
    } else {
        Some(body.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_json_reads_back_the_same() {
        let raw = serde_json::json!({"s": "</script><img src=x onerror=alert(1)>&\u{2028}]]>"})
            .to_string();
        let esc = escape_json(&raw);
        assert!(!esc.contains('<') && !esc.contains('>') && !esc.contains('\u{2028}'));
        let back: serde_json::Value = serde_json::from_str(&esc).expect("valid JSON");
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(&raw).expect("json")
        );
    }
}
