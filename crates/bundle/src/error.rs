//! The error returned when a bundle cannot be used at all.

use std::fmt;

/// Why a bundle could not be read. Problems with single files or lines are
/// not errors: they become [`crate::Diagnostic`]s and the rest is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
}

/// The classes of fatal problems.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The archive is damaged (truncated zip, bad gzip stream, ...).
    Corrupt {
        /// The archive or member.
        file: String,
        /// What the decoder said.
        detail: String,
    },
    /// Decompressed content exceeds the total size limit.
    TooLarge {
        /// The member being read when the limit was hit.
        file: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// A member inflates far more than real scrapes do (zip bomb).
    Bomb {
        /// The member.
        file: String,
        /// Its compressed size.
        compressed: u64,
        /// The limit it would exceed, in bytes.
        limit: u64,
    },
    /// More members than the limit.
    TooManyMembers {
        /// Members found.
        found: usize,
        /// The limit.
        limit: usize,
    },
    /// Nothing in the bundle is a scrape.
    NoScrapes {
        /// A few of the files looked at.
        looked_at: Vec<String>,
        /// How many files there were.
        files: usize,
        /// Why files could not be read (the first few), when that is why.
        unreadable: Vec<String>,
    },
    /// Some scrapes have no capture time, or several share one, so they
    /// cannot be put in order.
    Unordered {
        /// The files concerned (the first few).
        files: Vec<String>,
        /// Why.
        reason: String,
    },
}

impl Error {
    /// A new error of this kind.
    pub fn new(kind: ErrorKind) -> Error {
        Error { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

const NAMING_HINT: &str = "name each scrape file by its capture time, e.g. `vllm/1767225600123.prom` \
     (Unix milliseconds), `1767225600123-vllm.prom` or `2026-07-27T22-55-00Z_dcgm.txt`, \
     or add a manifest.json listing each file's time (see docs/bundle.md)";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Corrupt { file, detail } => {
                write!(f, "{file}: damaged archive, cannot be read: {detail}")
            }
            ErrorKind::TooLarge { file, limit } => write!(
                f,
                "{file}: the bundle inflates beyond the {} limit; split the capture or raise the limit",
                human_bytes(*limit)
            ),
            ErrorKind::Bomb {
                file,
                compressed,
                limit,
            } => write!(
                f,
                "{file}: {} compressed would inflate beyond {} (more than real scrapes ever do: a zip bomb?); refused",
                human_bytes(*compressed),
                human_bytes(*limit)
            ),
            ErrorKind::TooManyMembers { found, limit } => write!(
                f,
                "the bundle holds {found} files, more than the limit of {limit}"
            ),
            ErrorKind::NoScrapes {
                looked_at,
                files,
                unreadable,
            } => {
                if *files == 0 {
                    write!(f, "no scrapes found: the bundle is empty; {NAMING_HINT}")
                } else if !unreadable.is_empty() {
                    write!(
                        f,
                        "no scrape could be read among {files} file(s): {}",
                        unreadable.join("; ")
                    )
                } else {
                    write!(
                        f,
                        "no scrapes found among {files} file(s) ({}); expected Prometheus text from vLLM or dcgm-exporter, or nvidia-smi/dcgmi output; {NAMING_HINT}",
                        looked_at.join(", ")
                    )
                }
            }
            ErrorKind::Unordered { files, reason } => write!(
                f,
                "the scrapes cannot be ordered in time: {reason} ({}); {NAMING_HINT}",
                files.join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {}

/// `1.5 GiB`, `200 MiB`, `12 KiB`, `100 B`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
