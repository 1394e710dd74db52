//! The line parser: comments (HELP, TYPE, UNIT, EOF) and sample lines.

use std::fmt;

use memchr::memchr;

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::labels::{Labels, scan_block};

/// Which of the two text formats a scrape is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text format 0.0.4: timestamps are integer milliseconds.
    Prometheus,
    /// OpenMetrics 1.0 text: ends with `# EOF`; timestamps are seconds.
    OpenMetrics,
}

/// Tells OpenMetrics (a `# EOF` line, normally the last) from text 0.0.4.
pub fn detect_format(src: &str) -> Format {
    if ends_with_eof(src) {
        return Format::OpenMetrics;
    }
    let b = src.as_bytes();
    let is_eof_line = |at: usize| {
        let rest = &b[at + 5..];
        rest.is_empty() || rest[0] == b'\n' || rest[0] == b'\r'
    };
    if b.starts_with(b"# EOF") && is_eof_line(0) {
        return Format::OpenMetrics;
    }
    for i in memchr::memmem::find_iter(b, b"\n# EOF") {
        if is_eof_line(i + 1) {
            return Format::OpenMetrics;
        }
    }
    Format::Prometheus
}

/// True when the last line (trailing line breaks aside) is `# EOF`: the
/// cheap, common case of [`detect_format`], which otherwise scans the text.
fn ends_with_eof(src: &str) -> bool {
    let t = src.trim_end_matches(['\n', '\r']).as_bytes();
    t.ends_with(b"# EOF") && (t.len() == 5 || t[t.len() - 6] == b'\n')
}

/// The metric types of both formats (`unknown` is read as untyped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricType {
    /// `counter`.
    Counter,
    /// `gauge`.
    Gauge,
    /// `histogram`.
    Histogram,
    /// OpenMetrics `gaugehistogram`.
    GaugeHistogram,
    /// `summary`.
    Summary,
    /// OpenMetrics `info`.
    Info,
    /// OpenMetrics `stateset`.
    StateSet,
    /// `untyped` (0.0.4), `unknown` (OpenMetrics), or no TYPE line at all.
    Untyped,
}

impl MetricType {
    /// Parses a TYPE word.
    pub fn from_word(word: &str) -> Option<MetricType> {
        Some(match word {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" => MetricType::Histogram,
            "gaugehistogram" => MetricType::GaugeHistogram,
            "summary" => MetricType::Summary,
            "info" => MetricType::Info,
            "stateset" => MetricType::StateSet,
            "untyped" | "unknown" => MetricType::Untyped,
            _ => return None,
        })
    }

    /// The word used in `# TYPE` lines of the text format.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
            MetricType::GaugeHistogram => "gaugehistogram",
            MetricType::Summary => "summary",
            MetricType::Info => "info",
            MetricType::StateSet => "stateset",
            MetricType::Untyped => "untyped",
        }
    }
}

impl fmt::Display for MetricType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing read from a scrape.
#[derive(Clone, Debug, PartialEq)]
pub enum Event<'a> {
    /// `# HELP name text`; `text` is raw (see [`crate::unescape_help`]).
    Help {
        /// Family name.
        name: &'a str,
        /// Raw HELP text.
        text: &'a str,
        /// Line number.
        line: u32,
    },
    /// `# TYPE name type`.
    Type {
        /// Family name.
        name: &'a str,
        /// The declared type.
        kind: MetricType,
        /// Line number.
        line: u32,
    },
    /// `# UNIT name unit` (OpenMetrics).
    Unit {
        /// Family name.
        name: &'a str,
        /// The unit word.
        unit: &'a str,
        /// Line number.
        line: u32,
    },
    /// A sample line.
    Sample(Sample<'a>),
}

/// One sample line.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample<'a> {
    /// Sample name as written (`vllm:e2e_request_latency_seconds_bucket`).
    pub name: &'a str,
    /// The label pairs.
    pub labels: Labels<'a>,
    /// The raw text of name and label block: equal keys mean the same
    /// series within one scrape (different keys may still be the same
    /// series, e.g. with labels in another order).
    pub key: &'a str,
    /// The value; `NaN` and `±Inf` included.
    pub value: f64,
    /// The sample's own timestamp in milliseconds since the Unix epoch.
    pub timestamp_ms: Option<i64>,
    /// 1-based line number.
    pub line: u32,
}

/// Where the name and the label block sit inside a sample's `key`, as byte
/// ranges: enough to rebuild the [`Sample`] of a line that starts with the
/// same key without scanning it again (see [`Parser::next_hinted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KeyShape {
    name: (u32, u32),
    labels: (u32, u32),
}

impl Sample<'_> {
    /// The shape of this sample's key.
    pub fn shape(&self) -> KeyShape {
        let base = self.key.as_ptr() as usize;
        let range = |s: &str| {
            let start = (s.as_ptr() as usize).wrapping_sub(base);
            if s.is_empty() || start > self.key.len() {
                (0, 0)
            } else {
                (start as u32, (start + s.len()) as u32)
            }
        };
        KeyShape {
            name: range(self.name),
            labels: range(self.labels.raw()),
        }
    }
}

/// Parses one scrape. See the crate documentation.
#[derive(Clone, Debug)]
pub struct Parser<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    format: Format,
    /// False while `format` is a guess: [`Parser::new`] on a text that does
    /// not end with `# EOF` reads it as 0.0.4 and scans the whole text for a
    /// `# EOF` line (the full [`detect_format`]) only when the answer
    /// matters: at a sample timestamp or an `EOF` comment. Most scrapes
    /// have neither, and the scan was 15 % of parsing in WebAssembly.
    format_known: bool,
    after_eof: bool,
    diagnostics: Vec<Diagnostic>,
    suppressed: u32,
    max_diagnostics: usize,
    hint_matched: bool,
}

const DEFAULT_MAX_DIAGNOSTICS: usize = 100;

impl<'a> Parser<'a> {
    /// A parser over `src`, with the format detected by [`detect_format`].
    pub fn new(src: &'a str) -> Parser<'a> {
        let mut parser = Parser::with_format(src, Format::Prometheus);
        if ends_with_eof(src) {
            parser.format = Format::OpenMetrics;
        } else {
            parser.format_known = false;
        }
        parser
    }

    /// A parser over `src` in the given format.
    pub fn with_format(src: &'a str, format: Format) -> Parser<'a> {
        Parser {
            src,
            pos: 0,
            line: 0,
            format,
            format_known: true,
            after_eof: false,
            diagnostics: Vec::new(),
            suppressed: 0,
            max_diagnostics: DEFAULT_MAX_DIAGNOSTICS,
            hint_matched: false,
        }
    }

    /// Keeps at most `n` diagnostics; the rest are counted (default 100).
    pub fn max_diagnostics(mut self, n: usize) -> Parser<'a> {
        self.max_diagnostics = n;
        self
    }

    /// The format the parser reads.
    pub fn format(&self) -> Format {
        if self.format_known {
            self.format
        } else {
            detect_format(self.src)
        }
    }

    fn settle_format(&mut self) -> Format {
        if !self.format_known {
            self.format = detect_format(self.src);
            self.format_known = true;
        }
        self.format
    }

    /// Diagnostics so far, with a final [`DiagnosticKind::Suppressed`] entry
    /// when some were dropped.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Consumes the parser and returns its diagnostics.
    pub fn into_diagnostics(mut self) -> Vec<Diagnostic> {
        self.flush_suppressed();
        self.diagnostics
    }

    /// Number of lines read so far.
    pub fn lines_read(&self) -> u32 {
        self.line
    }

    fn flush_suppressed(&mut self) {
        if self.suppressed > 0 {
            self.diagnostics.push(Diagnostic {
                line: self.line,
                kind: DiagnosticKind::Suppressed(self.suppressed),
            });
            self.suppressed = 0;
        }
    }

    fn report(&mut self, kind: DiagnosticKind) {
        if self.diagnostics.len() < self.max_diagnostics {
            self.diagnostics.push(Diagnostic {
                line: self.line,
                kind,
            });
        } else {
            self.suppressed += 1;
        }
    }

    fn next_line(&mut self) -> Option<&'a str> {
        if self.pos >= self.src.len() {
            return None;
        }
        let rest = &self.src[self.pos..];
        let (line, advance) = match memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += advance;
        self.line += 1;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    fn comment(&mut self, line: &'a str) -> Option<Event<'a>> {
        let body = &line[1..];
        let body = body.strip_prefix(' ').unwrap_or(body);
        let (word, rest) = split_word(body);
        match word {
            "HELP" | "TYPE" | "UNIT" => {}
            "EOF" if rest.trim().is_empty() => {
                if self.settle_format() == Format::OpenMetrics {
                    self.after_eof = true;
                }
                return None;
            }
            _ => return None,
        }
        let (name, rest) = split_word(rest);
        if !is_metric_name(name) {
            self.report(DiagnosticKind::BadMetadata);
            return None;
        }
        let line_no = self.line;
        match word {
            "HELP" => Some(Event::Help {
                name,
                text: rest,
                line: line_no,
            }),
            "TYPE" => {
                let (kind_word, _) = split_word(rest);
                let kind = match MetricType::from_word(kind_word) {
                    Some(kind) => kind,
                    None => {
                        self.report(DiagnosticKind::UnknownType(kind_word.to_string()));
                        MetricType::Untyped
                    }
                };
                Some(Event::Type {
                    name,
                    kind,
                    line: line_no,
                })
            }
            _ => Some(Event::Unit {
                name,
                unit: split_word(rest).0,
                line: line_no,
            }),
        }
    }

    fn sample(&mut self, line: &'a str) -> Option<Sample<'a>> {
        let b = line.as_bytes();
        let first = b[0];
        let name;
        let mut labels = Labels::EMPTY;
        let mut i;
        if is_name_start(first) {
            i = 1;
            while i < b.len() && is_name_char(b[i]) {
                i += 1;
            }
            name = &line[..i];
            let j = skip_ws(b, i);
            if b.get(j) == Some(&b'{') {
                match scan_block(line, j) {
                    Ok(scanned) => {
                        if scanned.inner_name.is_some() {
                            self.report(DiagnosticKind::BadLabels(
                                "the metric name is given twice",
                            ));
                            return None;
                        }
                        labels = scanned.labels;
                        i = scanned.end;
                    }
                    Err(why) => {
                        self.report(DiagnosticKind::BadLabels(why));
                        return None;
                    }
                }
            }
        } else if first == b'{' {
            match scan_block(line, 0) {
                Ok(scanned) => match scanned.inner_name {
                    Some(inner) if !inner.is_empty() => {
                        name = inner;
                        labels = scanned.labels;
                        i = scanned.end;
                    }
                    _ => {
                        self.report(DiagnosticKind::BadLabels("no metric name in the braces"));
                        return None;
                    }
                },
                Err(why) => {
                    self.report(DiagnosticKind::BadLabels(why));
                    return None;
                }
            }
        } else {
            self.report(DiagnosticKind::NotAMetricLine);
            return None;
        }
        let key = &line[..i];
        let rest = &line[i..];
        if !matches!(rest.as_bytes().first(), Some(b' ' | b'\t')) {
            self.report(if rest.is_empty() {
                DiagnosticKind::BadValue
            } else {
                DiagnosticKind::TrailingText
            });
            return None;
        }
        let (value_word, rest) = split_ws(rest);
        let Some(value) = parse_value(value_word) else {
            self.report(DiagnosticKind::BadValue);
            return None;
        };
        let (ts_word, rest) = split_ws(rest);
        let mut timestamp_ms = None;
        if !ts_word.is_empty() && ts_word != "#" {
            match parse_timestamp(ts_word, self.settle_format()) {
                Some(ts) => timestamp_ms = Some(ts),
                None => {
                    self.report(DiagnosticKind::BadTimestamp);
                    return None;
                }
            }
            let rest = &rest[skip_ws(rest.as_bytes(), 0)..];
            if !rest.is_empty() && !rest.starts_with('#') {
                self.report(DiagnosticKind::TrailingText);
                return None;
            }
        }
        // Anything from ` #` on is an OpenMetrics exemplar: skipped.
        Some(Sample {
            name,
            labels,
            key,
            value,
            timestamp_ms,
            line: self.line,
        })
    }
}

impl<'a> Iterator for Parser<'a> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        self.next_hinted(None)
    }
}

impl<'a> Parser<'a> {
    /// The next event, given the key (and its [`KeyShape`]) the next sample
    /// line is expected to start with: a target prints its series in the
    /// same order every scrape, so a caller that remembers the last scrape's
    /// keys can predict each line. A line that starts with the hinted key
    /// followed by a blank is not scanned again (the key was validated when
    /// it was first read, and the same bytes read the same); any other line
    /// is read in full. The events are exactly those of [`Iterator::next`];
    /// [`Parser::hint_matched`] tells whether the last sample matched.
    ///
    /// The hint must be the key and shape of a sample read by this crate's
    /// parser (from any scrape); anything else may misplace name and labels.
    pub fn next_hinted(&mut self, hint: Option<(&str, KeyShape)>) -> Option<Event<'a>> {
        self.hint_matched = false;
        loop {
            let Some(line) = self.next_line() else {
                self.flush_suppressed();
                return None;
            };
            let trimmed = &line[skip_ws(line.as_bytes(), 0)..];
            if trimmed.is_empty() {
                continue;
            }
            if self.after_eof {
                self.report(DiagnosticKind::AfterEof);
                self.pos = self.src.len();
                continue;
            }
            if trimmed.as_bytes()[0] == b'#' {
                if let Some(event) = self.comment(trimmed) {
                    return Some(event);
                }
                continue;
            }
            if let Some((key, shape)) = hint
                && let Some(sample) = self.sample_with_key(trimmed, key, shape)
            {
                self.hint_matched = true;
                return Some(Event::Sample(sample));
            }
            if let Some(sample) = self.sample(trimmed) {
                return Some(Event::Sample(sample));
            }
        }
    }

    /// True when the last sample returned by [`Parser::next_hinted`] started
    /// with the hinted key.
    pub fn hint_matched(&self) -> bool {
        self.hint_matched
    }

    /// The hinted fast path: `None` when the line does not start with `key`
    /// and a blank, or when the rest of the line needs the full path's
    /// diagnostics (a bad value or timestamp).
    fn sample_with_key(&mut self, line: &'a str, key: &str, shape: KeyShape) -> Option<Sample<'a>> {
        let b = line.as_bytes();
        let n = key.len();
        if n == 0
            || b.len() <= n
            || !matches!(b[n], b' ' | b'\t')
            || !same_bytes(&b[..n], key.as_bytes())
        {
            return None;
        }
        let slice = |(start, end): (u32, u32)| line.get(start as usize..end as usize);
        let name = slice(shape.name)?;
        let labels = Labels::from_raw(slice(shape.labels)?);
        let (value_word, rest) = split_ws(&line[n..]);
        let value = parse_value(value_word)?;
        let (ts_word, rest) = split_ws(rest);
        let mut timestamp_ms = None;
        if !ts_word.is_empty() && ts_word != "#" {
            timestamp_ms = Some(parse_timestamp(ts_word, self.settle_format())?);
            let rest = &rest[skip_ws(rest.as_bytes(), 0)..];
            if !rest.is_empty() && !rest.starts_with('#') {
                return None;
            }
        }
        Some(Sample {
            name,
            labels,
            key: &line[..n],
            value,
            timestamp_ms,
            line: self.line,
        })
    }
}

/// Byte equality eight bytes at a time (WebAssembly's `memcmp` goes byte by
/// byte; keys are ~100 bytes).
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        let x = u64::from_ne_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
        let y = u64::from_ne_bytes([y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]]);
        if x != y {
            return false;
        }
    }
    ca.remainder() == cb.remainder()
}

/// Parses a sample value: decimal and exponent forms (`1.17e+010` as well as
/// `1.17e+10`), `NaN`, `+Inf`, `-Inf`. Go-style hex and `_` are rejected.
pub fn parse_value(word: &str) -> Option<f64> {
    let b = word.as_bytes();
    let &first = b.first()?;
    if let Some(v) = parse_plain_decimal(b) {
        return Some(v);
    }
    if first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.' {
        // Rust's parser accepts "inf"/"nan" after a sign; so does Go.
        return word.parse::<f64>().ok();
    }
    match word {
        "NaN" | "nan" => Some(f64::NAN),
        "Inf" | "inf" => Some(f64::INFINITY),
        _ => None,
    }
}

/// Exact fast path for `digits[.digits]` (Clinger): when the digits form an
/// integer below 2^53 and there are at most 22 decimals, one IEEE division
/// by an exact power of ten is correctly rounded.
fn parse_plain_decimal(b: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 17 {
        return None;
    }
    let mut mantissa: u64 = 0;
    let mut frac_digits: Option<usize> = None;
    for (i, &c) in digits.iter().enumerate() {
        match c {
            b'0'..=b'9' => mantissa = mantissa * 10 + u64::from(c - b'0'),
            b'.' if frac_digits.is_none() && i > 0 => frac_digits = Some(digits.len() - i - 1),
            _ => return None,
        }
    }
    if mantissa >= 1 << 53 || frac_digits == Some(0) {
        return None;
    }
    let v = mantissa as f64 / POW10[frac_digits.unwrap_or(0)];
    Some(if neg { -v } else { v })
}

fn parse_timestamp(word: &str, format: Format) -> Option<i64> {
    match format {
        Format::Prometheus => word.parse::<i64>().ok(),
        Format::OpenMetrics => {
            let secs = parse_value(word)?;
            if !secs.is_finite() {
                return None;
            }
            let ms = (secs * 1000.0).round();
            if ms.abs() > 9.0e15 {
                return None;
            }
            Some(ms as i64)
        }
    }
}

fn split_word(s: &str) -> (&str, &str) {
    match memchr(b' ', s.as_bytes()) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    }
}

/// Skips blanks, then splits off the next blank-delimited word.
fn split_ws(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    let start = skip_ws(b, 0);
    let mut end = start;
    while end < b.len() && b[end] != b' ' && b[end] != b'\t' {
        end += 1;
    }
    (&s[start..end], &s[end..])
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// Byte classes: bit 0 = may start a metric name, bit 1 = may continue one.
const NAME_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let alpha = b.is_ascii_alphabetic() || b == b'_' || b == b':';
        if alpha {
            t[c] = 3;
        } else if b.is_ascii_digit() {
            t[c] = 2;
        }
        c += 1;
    }
    t
};

fn is_name_start(c: u8) -> bool {
    NAME_CLASS[c as usize] & 1 != 0
}

fn is_name_char(c: u8) -> bool {
    NAME_CLASS[c as usize] & 2 != 0
}

fn is_metric_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && is_name_start(b[0]) && b[1..].iter().all(|&c| is_name_char(c))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;
