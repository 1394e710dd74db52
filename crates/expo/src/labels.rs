//! Label blocks: validation while parsing, iteration and unescaping on demand.

use std::borrow::Cow;

/// The validated text between `{` and `}` of one sample line.
///
/// Iterating yields the label pairs in the order written; the metric-name
/// forms (`__name__="x"` and a bare quoted name) are not labels and are
/// skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Labels<'a> {
    raw: &'a str,
}

/// One label pair as written in the scrape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label<'a> {
    /// The label name (without quotes when written quoted).
    pub name: &'a str,
    /// The value as written between the quotes, escapes not yet resolved.
    pub raw_value: &'a str,
}

impl<'a> Label<'a> {
    /// The value with `\\`, `\"` and `\n` resolved, as Prometheus does.
    /// Borrows when the value holds no backslash.
    pub fn value(&self) -> Cow<'a, str> {
        unescape(self.raw_value, true)
    }
}

impl<'a> Labels<'a> {
    /// No labels.
    pub const EMPTY: Labels<'static> = Labels { raw: "" };

    /// A label block already validated by the parser (its raw text).
    pub(crate) fn from_raw(raw: &'a str) -> Labels<'a> {
        Labels { raw }
    }

    /// The raw text between the braces.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Iterates the label pairs.
    pub fn iter(&self) -> LabelIter<'a> {
        LabelIter { rest: self.raw }
    }

    /// True when the sample carries no label pair.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The unescaped value of the label `name`, if present.
    pub fn get(&self, name: &str) -> Option<Cow<'a, str>> {
        self.iter().find(|l| l.name == name).map(|l| l.value())
    }
}

impl<'a> IntoIterator for &Labels<'a> {
    type Item = Label<'a>;
    type IntoIter = LabelIter<'a>;
    fn into_iter(self) -> LabelIter<'a> {
        self.iter()
    }
}

/// Iterator over the pairs of a validated label block.
#[derive(Clone, Debug)]
pub struct LabelIter<'a> {
    rest: &'a str,
}

impl<'a> Iterator for LabelIter<'a> {
    type Item = Label<'a>;

    fn next(&mut self) -> Option<Label<'a>> {
        loop {
            let s = self.rest.trim_start_matches([' ', '\t', ',']);
            if s.is_empty() {
                self.rest = s;
                return None;
            }
            let b = s.as_bytes();
            let (name, after_name) = if b[0] == b'"' {
                let close = scan_quoted(b, 1).ok()?;
                (&s[1..close], close + 1)
            } else {
                let end = b.iter().position(|&c| !is_label_char(c)).unwrap_or(b.len());
                (&s[..end], end)
            };
            let t = s[after_name..].trim_start_matches([' ', '\t']);
            if let Some(v) = t.strip_prefix('=') {
                let v = v.trim_start_matches([' ', '\t']);
                let vb = v.as_bytes();
                if vb.first() != Some(&b'"') {
                    self.rest = "";
                    return None;
                }
                let close = scan_quoted(vb, 1).ok()?;
                let raw_value = &v[1..close];
                self.rest = &v[close + 1..];
                if name == "__name__" {
                    continue;
                }
                return Some(Label { name, raw_value });
            }
            // A bare quoted metric name: not a label.
            self.rest = t;
        }
    }
}

/// What scanning a label block found.
pub(crate) struct Scanned<'a> {
    pub labels: Labels<'a>,
    /// The metric name given inside the braces (`__name__="x"` or `{"x"}`).
    pub inner_name: Option<&'a str>,
    /// Byte index just past the closing `}`.
    pub end: usize,
}

/// Validates the label block of `line` whose `{` is at byte `open`.
pub(crate) fn scan_block(line: &str, open: usize) -> Result<Scanned<'_>, &'static str> {
    let b = line.as_bytes();
    let mut i = open + 1;
    let mut inner_name = None;
    let mut first = true;
    loop {
        i = skip_ws(b, i);
        let Some(&c) = b.get(i) else {
            return Err("missing closing `}`");
        };
        if c == b'}' {
            break;
        }
        let quoted = c == b'"';
        let (name_start, name_end) = if quoted {
            let start = i + 1;
            let close = scan_quoted(b, start)?;
            i = close + 1;
            (start, close)
        } else if is_label_start(c) {
            let mut j = i + 1;
            while j < b.len() && is_label_char(b[j]) {
                j += 1;
            }
            let start = i;
            i = j;
            (start, j)
        } else {
            return Err("expected a label name");
        };
        i = skip_ws(b, i);
        if b.get(i) == Some(&b'=') {
            i = skip_ws(b, i + 1);
            if b.get(i) != Some(&b'"') {
                return Err("label value must be a quoted string");
            }
            let close = scan_quoted(b, i + 1)?;
            if &line[name_start..name_end] == "__name__" && !quoted {
                if inner_name.is_some() {
                    return Err("the metric name is given twice");
                }
                inner_name = Some(&line[i + 1..close]);
            }
            i = close + 1;
        } else if quoted {
            if !first || inner_name.is_some() {
                return Err("a bare quoted metric name must come first");
            }
            inner_name = Some(&line[name_start..name_end]);
        } else {
            return Err("expected `=` after the label name");
        }
        first = false;
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => break,
            Some(_) => return Err("expected `,` or `}` after a label"),
            None => return Err("missing closing `}`"),
        }
    }
    Ok(Scanned {
        labels: Labels {
            raw: &line[open + 1..i],
        },
        inner_name,
        end: i + 1,
    })
}

/// Index of the closing quote of a string whose content starts at `from`.
pub(crate) fn scan_quoted(b: &[u8], from: usize) -> Result<usize, &'static str> {
    // Label values are short: a plain loop beats memchr's set-up cost.
    let mut j = from;
    while j < b.len() {
        match b[j] {
            b'"' => return Ok(j),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    Err("unterminated quoted string")
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// Byte classes: bit 0 = may start a label name, bit 1 = may continue one.
const LABEL_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphabetic() || b == b'_' {
            t[c] = 3;
        } else if b.is_ascii_digit() {
            t[c] = 2;
        }
        c += 1;
    }
    t
};

fn is_label_start(c: u8) -> bool {
    LABEL_CLASS[c as usize] & 1 != 0
}

fn is_label_char(c: u8) -> bool {
    LABEL_CLASS[c as usize] & 2 != 0
}

/// Resolves escapes in a label value (`\\`, `\"`, `\n`) or HELP text (`\\`,
/// `\n`); any other backslash sequence is kept as written.
pub(crate) fn unescape(raw: &str, quotes: bool) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('"') if quotes => out.push('"'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// Resolves the escapes of a `# HELP` text (`\\` and `\n`).
pub fn unescape_help(raw: &str) -> Cow<'_, str> {
    unescape(raw, false)
}
