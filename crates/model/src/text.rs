//! Figures in words, shared by the analyses' prose and the renderers: no
//! false precision (three significant digits), durations in the unit a
//! reader expects, and histogram quantiles as the bucket they lie in.

/// A figure for humans: 3 significant digits, thousands separated, no
/// needless decimals.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        return "—".into();
    }
    if a >= 1000.0 {
        let s = format!("{v:.0}");
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        trim(format!("{v:.1}"))
    } else if a >= 1.0 || a == 0.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.3}"))
    }
}

/// `2.50` → `2.5`, `3.00` → `3`.
fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A bucket edge: plain decimal, as few digits as it has (`0.25`, `2.5`).
fn edge(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    let whole: f64 = s.parse().unwrap_or(v);
    if whole >= 1000.0 {
        num(whole)
    } else {
        s.to_string()
    }
}

/// The unit a duration reads best in: ms below a second, s below ten
/// minutes, min above.
fn unit_for(ms: f64) -> (f64, &'static str) {
    if ms.abs() >= 600_000.0 {
        (60_000.0, "min")
    } else if ms.abs() >= 1000.0 {
        (1000.0, "s")
    } else {
        (1.0, "ms")
    }
}

/// A duration: `50 ms`, `1.5 s`, `5.96 s`, `20 s`, `12 min`.
pub fn ms_text(ms: f64) -> String {
    if ms.is_infinite() {
        return "∞".into();
    }
    let (scale, unit) = unit_for(ms);
    format!("{} {unit}", num(ms / scale))
}

fn edge_or_num(v: f64) -> String {
    if (v * 1000.0).fract() == 0.0 && v.abs() < 1000.0 {
        edge(v)
    } else {
        num(v)
    }
}

/// A quantile's bucket in ms, in words: `between 250 and 500 ms`,
/// `at most 5 ms` (the first bucket), `above 10 s` (the `+Inf` bucket).
pub fn bucket_text(low_ms: f64, high_ms: f64) -> String {
    if high_ms.is_infinite() {
        return format!("above {}", ms_text(low_ms));
    }
    if low_ms <= 0.0 {
        return format!("at most {}", ms_text(high_ms));
    }
    let (scale, unit) = unit_for(high_ms);
    format!(
        "between {} and {} {unit}",
        edge_or_num(low_ms / scale),
        edge_or_num(high_ms / scale)
    )
}

/// A bucket, short, for table cells: `250–500 ms`, `≤ 5 ms`, `20–40 s`,
/// `> 10 s`.
pub fn bucket_cell(low_ms: f64, high_ms: Option<f64>) -> String {
    let (scale, unit) = unit_for(high_ms.unwrap_or(low_ms));
    let v = |x: f64| edge_or_num(x / scale);
    match high_ms {
        None => format!("> {} {unit}", v(low_ms)),
        Some(h) if low_ms <= 0.0 => format!("≤ {} {unit}", v(h)),
        Some(h) => format!("{}–{} {unit}", v(low_ms), v(h)),
    }
}

/// `n` things, with the plural.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The sentence with its first letter in upper case.
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Four significant digits are plenty for evidence.
pub fn round(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 4 - (v.abs().log10().floor() as i32 + 1);
    let f = 10f64.powi(digits.clamp(-6, 12));
    (v * f).round() / f
}

/// "a", "a or b", "a, b or c".
pub fn list_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Fills `{name}` placeholders.
pub fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// A share in words that never rounds a non-zero share to "0.0 %".
pub fn share_text(pct: Option<f64>) -> String {
    match pct {
        None => "?".into(),
        Some(0.0) => "0 %".into(),
        Some(p) if p < 0.1 => "under 0.1 %".into(),
        Some(p) => format!("{p:.1} %"),
    }
}

/// An upper bound on a percentage, as "at most X %" says it: two decimals
/// under 1 %, one above, rounded up so the bound is never below the figure
/// (0.116 → "0.12 %", not "0.1 %").
pub fn pct_at_most(p: f64) -> String {
    let decimals = if p < 1.0 { 2 } else { 1 };
    let scale = 10f64.powi(decimals);
    // A hair under the next step (floating point) does not round up.
    let up = ((p * scale) - 1e-9).ceil() / scale;
    format!("{up:.*} %", decimals as usize)
}

/// A duration as Prometheus writes it.
pub fn prom_duration(ms: i64) -> String {
    if ms % 3_600_000 == 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms % 60_000 == 0 {
        format!("{}m", ms / 60_000)
    } else {
        format!("{}s", ms / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upper_bound_rounds_up() {
        assert_eq!(pct_at_most(0.116), "0.12 %");
        assert_eq!(pct_at_most(0.12), "0.12 %");
        assert_eq!(pct_at_most(3.41), "3.5 %");
        assert_eq!(pct_at_most(41.2), "41.2 %");
        assert_eq!(pct_at_most(41.23), "41.3 %");
        assert_eq!(pct_at_most(100.0), "100.0 %");
    }

    #[test]
    fn words() {
        assert_eq!(fill("a {x} b {x}", &[("x", "1".into())]), "a 1 b 1");
        assert_eq!(prom_duration(60_000), "1m");
        assert_eq!(prom_duration(15_000), "15s");
        assert_eq!(prom_duration(3_600_000), "1h");
        assert_eq!(num(33380.4), "33,380");
        assert_eq!(num(49.94), "49.9");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(0.0), "0");
        assert_eq!(ms_text(5958.0), "5.96 s");
        assert_eq!(ms_text(50.0), "50 ms");
        assert_eq!(ms_text(1500.0), "1.5 s");
        assert_eq!(ms_text(20_000.0), "20 s");
        assert_eq!(ms_text(900_000.0), "15 min");
        assert_eq!(bucket_text(250.0, 500.0), "between 250 and 500 ms");
        assert_eq!(bucket_text(20_000.0, 40_000.0), "between 20 and 40 s");
        assert_eq!(bucket_text(0.0, 5.0), "at most 5 ms");
        assert_eq!(bucket_text(10_000.0, f64::INFINITY), "above 10 s");
        assert_eq!(bucket_text(750.0, 1000.0), "between 0.75 and 1 s");
        assert_eq!(bucket_cell(25.0, Some(50.0)), "25–50 ms");
        assert_eq!(bucket_cell(0.0, Some(1.0)), "≤ 1 ms");
        assert_eq!(bucket_cell(20_000.0, Some(40_000.0)), "20–40 s");
        assert_eq!(bucket_cell(2560000.0, None), "> 42.7 min");
        assert_eq!(plural(1, "window", "windows"), "1 window");
    }
}
