//! Time formatting without a clock: milliseconds since the Unix epoch to
//! RFC 3339 text, and durations for humans.

/// `2026-01-01T00:00:00Z`, with `.mmm` when the milliseconds are not zero.
pub fn format_rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (sod / 3600, sod % 3600 / 60, sod % 60);
    if millis == 0 {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{millis:03}Z")
    }
}

/// `45 s`, `12 min`, `1 h 30 min`, `2 d 3 h`.
pub fn format_duration(ms: i64) -> String {
    let s = ms / 1000;
    if s < 120 {
        format!("{s} s")
    } else if s < 3600 {
        match s % 60 {
            0 => format!("{} min", s / 60),
            rem => format!("{} min {rem} s", s / 60),
        }
    } else if s < 172_800 {
        let m = (s + 30) / 60;
        format!("{} h {} min", m / 60, m % 60)
    } else {
        let h = (s + 1800) / 3600;
        format!("{} d {} h", h / 24, h % 24)
    }
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_rfc3339(1_767_225_600_123),
            "2026-01-01T00:00:00.123Z"
        );
        assert_eq!(format_rfc3339(1_785_192_900_000), "2026-07-27T22:55:00Z");
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(format_rfc3339(-1000), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(45_000), "45 s");
        assert_eq!(format_duration(600_000), "10 min");
        assert_eq!(format_duration(585_000), "9 min 45 s");
        assert_eq!(format_duration(5_400_000), "1 h 30 min");
        assert_eq!(format_duration(86_400_000 * 3), "3 d 0 h");
    }
}
