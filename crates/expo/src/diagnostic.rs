//! Diagnostics: why a line of a scrape was skipped or read with a caveat.

use std::fmt;

/// One problem found on one line of a scrape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line number in the scrape text.
    pub line: u32,
    /// What was wrong.
    pub kind: DiagnosticKind,
}

/// The classes of problems the parser reports.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// The line does not start with a metric name, `{` or `#`: curl progress
    /// output, a Markdown fence, an HTML error page and the like.
    NotAMetricLine,
    /// The label block `{...}` is malformed; the text says where.
    BadLabels(&'static str),
    /// The sample value is missing or not a number.
    BadValue,
    /// The timestamp is not an integer of milliseconds (text format) or a
    /// number of seconds (OpenMetrics).
    BadTimestamp,
    /// Text follows the timestamp that is not an OpenMetrics exemplar.
    TrailingText,
    /// `# HELP`, `# TYPE` or `# UNIT` without a valid metric name.
    BadMetadata,
    /// `# TYPE` with a type word the formats do not define.
    UnknownType(String),
    /// Lines after the OpenMetrics `# EOF` marker (reported once).
    AfterEof,
    /// More diagnostics than the parser keeps; the count of those dropped.
    Suppressed(u32),
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.kind)
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnosticKind::NotAMetricLine => {
                f.write_str("not a metric line (expected a metric name, `{` or `#`); skipped")
            }
            DiagnosticKind::BadLabels(why) => write!(f, "malformed labels: {why}; line skipped"),
            DiagnosticKind::BadValue => {
                f.write_str("missing or invalid sample value; line skipped")
            }
            DiagnosticKind::BadTimestamp => f.write_str("invalid timestamp; line skipped"),
            DiagnosticKind::TrailingText => {
                f.write_str("unexpected text after the sample; line skipped")
            }
            DiagnosticKind::BadMetadata => {
                f.write_str("HELP/TYPE/UNIT line without a valid metric name; skipped")
            }
            DiagnosticKind::UnknownType(word) => {
                write!(f, "unknown metric type `{word}`; family read as untyped")
            }
            DiagnosticKind::AfterEof => f.write_str("content after `# EOF` ignored"),
            DiagnosticKind::Suppressed(n) => write!(f, "{n} further diagnostics not shown"),
        }
    }
}

impl DiagnosticKind {
    /// A short stable identifier for machine consumers (JSON output).
    pub fn code(&self) -> &'static str {
        match self {
            DiagnosticKind::NotAMetricLine => "not_a_metric_line",
            DiagnosticKind::BadLabels(_) => "bad_labels",
            DiagnosticKind::BadValue => "bad_value",
            DiagnosticKind::BadTimestamp => "bad_timestamp",
            DiagnosticKind::TrailingText => "trailing_text",
            DiagnosticKind::BadMetadata => "bad_metadata",
            DiagnosticKind::UnknownType(_) => "unknown_type",
            DiagnosticKind::AfterEof => "after_eof",
            DiagnosticKind::Suppressed(_) => "suppressed",
        }
    }
}
