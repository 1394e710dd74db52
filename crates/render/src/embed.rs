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
use vllm_lens_model::Report;

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

/// The `<script>` element holding the report. The JSON is written
/// straight into the compressor once it passes [`COMPRESS_ABOVE`], so a
/// large report (a fleet-day's is over 100 MB of JSON) never exists as one
/// string.
pub fn script(r: &Report) -> Markup {
    let mut w = std::io::BufWriter::with_capacity(64 << 10, Spill::default());
    serde_json::to_writer(&mut w as &mut dyn Write, r).expect("the report serialises");
    let spill = w.into_inner().map_err(|_| ()).expect("in memory");
    match spill.deflate {
        Some(enc) => packed(enc),
        None => plain(std::str::from_utf8(&spill.head).expect("serde_json writes UTF-8")),
    }
}

/// The `<script>` element holding any JSON document.
pub fn script_json(json: &str) -> Markup {
    if json.len() > COMPRESS_ABOVE {
        let mut enc = encoder();
        enc.write_all(json.as_bytes()).expect("in memory");
        packed(enc)
    } else {
        plain(json)
    }
}

fn encoder() -> flate2::write::DeflateEncoder<Vec<u8>> {
    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default())
}

fn packed(enc: flate2::write::DeflateEncoder<Vec<u8>>) -> Markup {
    let packed = enc.finish().expect("in memory");
    let text = base64::engine::general_purpose::STANDARD.encode(packed);
    html! { script type="application/json" id=(ID) data-encoding="deflate-base64" { (PreEscaped(text)) } }
}

fn plain(json: &str) -> Markup {
    html! { script type="application/json" id=(ID) { (PreEscaped(escape_json(json))) } }
}

/// JSON as it is written: held while it is at most [`COMPRESS_ABOVE`]
/// bytes, then everything (what was held first) goes through the
/// compressor. Above the threshold the compressed bytes differ from
/// [`script_json`]'s (zlib-rs' output depends on how its input is cut into
/// writes), never what they inflate to.
#[derive(Default)]
struct Spill {
    head: Vec<u8>,
    deflate: Option<flate2::write::DeflateEncoder<Vec<u8>>>,
}

impl Write for Spill {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if let Some(enc) = &mut self.deflate {
            enc.write_all(b)?;
        } else if self.head.len() + b.len() > COMPRESS_ABOVE {
            let mut enc = encoder();
            enc.write_all(&std::mem::take(&mut self.head))?;
            enc.write_all(b)?;
            self.deflate = Some(enc);
        } else {
            self.head.extend_from_slice(b);
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

    /// The streamed element reads back as the same JSON on both sides of
    /// the threshold and across it, whatever the writes; below it, it is
    /// the whole text's element byte for byte.
    #[test]
    fn spilled_json_reads_back_the_same() {
        for len in [
            10,
            COMPRESS_ABOVE - 3,
            COMPRESS_ABOVE,
            COMPRESS_ABOVE + 1,
            3 << 20,
        ] {
            let json: String = "ab<c\u{2028}".chars().cycle().take(len).collect();
            let json = &json[..json.floor_char_boundary(len)];
            for cut in [1usize, 7, 4096, 64 << 10, 1 << 20] {
                if len > COMPRESS_ABOVE && cut < 4096 {
                    continue; // slow, and no different
                }
                let mut s = Spill::default();
                for piece in json.as_bytes().chunks(cut) {
                    s.write_all(piece).expect("in memory");
                }
                let got = match s.deflate {
                    Some(enc) => packed(enc),
                    None => plain(std::str::from_utf8(&s.head).expect("utf-8")),
                }
                .into_string();
                let back = read(&got).expect("reads back");
                assert_eq!(
                    back.replace("\\u003c", "<").replace("\\u2028", "\u{2028}"),
                    json,
                    "{len} bytes in writes of {cut}"
                );
                assert_eq!(
                    got.contains("deflate-base64"),
                    json.len() > COMPRESS_ABOVE,
                    "{len}"
                );
                if json.len() <= COMPRESS_ABOVE {
                    assert_eq!(got, script_json(json).into_string());
                }
            }
        }
    }

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
