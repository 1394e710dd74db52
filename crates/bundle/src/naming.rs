//! Capture times and target names read from file and folder names.
//!
//! Accepted time forms (anywhere in a name): Unix seconds (10 digits,
//! optionally with a fraction), milliseconds (13), microseconds (16) or
//! nanoseconds (19), all between 2000 and 2100; RFC 3339 in the extended
//! (`2026-07-27T22:55:00Z`, with `-` allowed for `:` as file names need) or
//! basic (`20260727T225500Z`) form, with optional fraction and zone. A time
//! without zone is read as UTC.

use std::ops::Range;

/// A time found in a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameTime {
    /// Milliseconds since the Unix epoch.
    pub ms: i64,
    /// False for an RFC 3339 time without zone (read as UTC).
    pub zoned: bool,
    /// Where in the name the time was.
    pub span: Range<usize>,
}

const MIN_MS: i64 = 946_684_800_000; // 2000-01-01
const MAX_MS: i64 = 4_102_444_800_000; // 2100-01-01

/// Finds a capture time in `name` (a file stem or folder name).
pub fn find_time(name: &str) -> Option<NameTime> {
    let b = name.as_bytes();
    for start in 0..b.len() {
        if b[start].is_ascii_digit()
            && (start == 0 || !b[start - 1].is_ascii_digit())
            && let Some(found) = rfc3339_at(b, start)
        {
            return Some(found);
        }
    }
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = &name[start..i];
        let found = match digits.len() {
            10 => {
                let secs: i64 = digits.parse().ok()?;
                let mut end = i;
                let mut frac_ms = 0i64;
                if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    let mut j = i + 1;
                    let mut scale = 100;
                    while j < b.len() && b[j].is_ascii_digit() {
                        if scale > 0 {
                            frac_ms += i64::from(b[j] - b'0') * scale;
                            scale /= 10;
                        }
                        j += 1;
                    }
                    end = j;
                }
                Some((secs * 1000 + frac_ms, end))
            }
            13 => digits.parse::<i64>().ok().map(|ms| (ms, i)),
            16 => digits.parse::<i64>().ok().map(|us| (us / 1000, i)),
            19 => digits.parse::<i64>().ok().map(|ns| (ns / 1_000_000, i)),
            _ => None,
        };
        if let Some((ms, end)) = found
            && (MIN_MS..MAX_MS).contains(&ms)
        {
            return Some(NameTime {
                ms,
                zoned: true,
                span: start..end,
            });
        }
    }
    None
}

fn digits_at(b: &[u8], i: usize, n: usize) -> Option<i64> {
    let slice = b.get(i..i + n)?;
    if !slice.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        slice
            .iter()
            .fold(0i64, |acc, &c| acc * 10 + i64::from(c - b'0')),
    )
}

fn rfc3339_at(b: &[u8], start: usize) -> Option<NameTime> {
    let mut i = start;
    let year = digits_at(b, i, 4)?;
    i += 4;
    let extended = b.get(i) == Some(&b'-');
    if extended {
        i += 1;
    }
    let month = digits_at(b, i, 2)?;
    i += 2;
    if extended {
        if b.get(i) != Some(&b'-') {
            return None;
        }
        i += 1;
    }
    let day = digits_at(b, i, 2)?;
    i += 2;
    if !matches!(b.get(i), Some(b'T' | b't' | b'_' | b' ')) {
        return None;
    }
    i += 1;
    let hour = digits_at(b, i, 2)?;
    i += 2;
    if matches!(b.get(i), Some(b':' | b'-')) {
        i += 1;
    }
    let minute = digits_at(b, i, 2)?;
    i += 2;
    if matches!(b.get(i), Some(b':' | b'-')) {
        i += 1;
    }
    let second = digits_at(b, i, 2)?;
    i += 2;
    let mut frac_ms = 0;
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        let mut scale = 100;
        while i < b.len() && b[i].is_ascii_digit() {
            if scale > 0 {
                frac_ms += i64::from(b[i] - b'0') * scale;
                scale /= 10;
            }
            i += 1;
        }
    }
    let mut offset_min = 0;
    let mut zoned = false;
    match b.get(i) {
        Some(b'Z' | b'z') => {
            zoned = true;
            i += 1;
        }
        Some(&sign @ (b'+' | b'-')) => {
            if let Some(hh) = digits_at(b, i + 1, 2) {
                let mut j = i + 3;
                if matches!(b.get(j), Some(b':' | b'-')) {
                    j += 1;
                }
                let mm = digits_at(b, j, 2);
                let j = if mm.is_some() { j + 2 } else { i + 3 };
                if hh <= 14 && mm.unwrap_or(0) < 60 {
                    offset_min = (hh * 60 + mm.unwrap_or(0)) * if sign == b'-' { -1 } else { 1 };
                    zoned = true;
                    i = j;
                }
            }
        }
        _ => {}
    }
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_min * 60;
    let ms = secs * 1000 + frac_ms;
    (MIN_MS..MAX_MS).contains(&ms).then_some(NameTime {
        ms,
        zoned,
        span: start..i,
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The file name without `.gz` and without one textual extension
/// (`.prom`, `.txt`, `.csv`, ...); numeric tails such as the `.123` of
/// `1767225600.123` are kept.
pub fn stem(file_name: &str) -> &str {
    let name = file_name.strip_suffix(".gz").unwrap_or(file_name);
    match name.rfind('.') {
        Some(dot) if dot > 0 => {
            let ext = &name[dot + 1..];
            let textual = !ext.is_empty()
                && ext.len() <= 12
                && ext.as_bytes()[0].is_ascii_alphabetic()
                && ext.bytes().all(|c| c.is_ascii_alphanumeric());
            if textual { &name[..dot] } else { name }
        }
        _ => name,
    }
}

/// `name` with `span` removed and separators trimmed: what is left of a
/// file stem once its time is taken out, e.g. `vllm` from
/// `1767225600123-vllm`.
pub fn remainder(name: &str, span: &Range<usize>) -> String {
    let left = name[..span.start].trim_end_matches(is_separator);
    let right = name[span.end..].trim_start_matches(is_separator);
    let joined = match (left.is_empty(), right.is_empty()) {
        (false, false) => format!("{left}-{right}"),
        (false, true) => left.to_string(),
        _ => right.to_string(),
    };
    joined.trim_matches(is_separator).to_string()
}

fn is_separator(c: char) -> bool {
    matches!(c, '-' | '_' | '.' | ' ' | '@' | '+')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> Option<(i64, bool, String)> {
        let stem = stem(name);
        find_time(stem).map(|nt| (nt.ms, nt.zoned, remainder(stem, &nt.span)))
    }

    #[test]
    fn epoch_forms() {
        assert_eq!(
            t("1767225600123.prom"),
            Some((1_767_225_600_123, true, String::new()))
        );
        assert_eq!(
            t("1767225600123-vllm.prom"),
            Some((1_767_225_600_123, true, "vllm".into()))
        );
        assert_eq!(
            t("dcgm_1767225600.prom"),
            Some((1_767_225_600_000, true, "dcgm".into()))
        );
        assert_eq!(
            t("vllm-1767225600.25.txt"),
            Some((1_767_225_600_250, true, "vllm".into()))
        );
        assert_eq!(
            t("1767225600123456.prom"),
            Some((1_767_225_600_123, true, String::new()))
        );
        assert_eq!(
            t("1767225600123456789.prom"),
            Some((1_767_225_600_123, true, String::new()))
        );
        assert_eq!(t("scrape-0001.prom"), None);
        assert_eq!(t("0000000001.prom"), None, "1970 is not a capture time");
    }

    #[test]
    fn rfc3339_forms() {
        let at = 1_785_192_900_000; // 2026-07-27T22:55:00Z
        assert_eq!(
            t("2026-07-27T22-55-00Z_dcgm.txt"),
            Some((at, true, "dcgm".into()))
        );
        assert_eq!(
            t("2026-07-27T22:55:00Z.prom"),
            Some((at, true, String::new()))
        );
        assert_eq!(
            t("20260727T225500Z-vllm.prom"),
            Some((at, true, "vllm".into()))
        );
        assert_eq!(
            t("vllm-2026-07-27T22:55:00.5Z.prom"),
            Some((at + 500, true, "vllm".into()))
        );
        assert_eq!(
            t("2026-07-28T00:55:00+02:00.prom"),
            Some((at, true, String::new()))
        );
        assert_eq!(
            t("2026-07-27_22-55-00.prom"),
            Some((at, false, String::new()))
        );
        assert_eq!(t("2026-13-27T22-55-00Z.prom"), None);
    }

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 1, 1) * 86_400, 1_767_225_600);
    }
}
