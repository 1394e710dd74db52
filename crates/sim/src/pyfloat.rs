//! Number formatting exactly as the real emitters print it.
//!
//! vLLM prints through Python's `prometheus_client`, whose `floatToGoString`
//! starts from `repr(float)` (shortest round-trip digits, scientific below
//! 1e-4 and from 1e16) and forces positive values of 1e6 and more into
//! Go's exponent form. Releases up to 0.25.0 pad that exponent with a
//! literal `0` (`1.2884901888e+010`); 0.26.0 does not (`e+10`).
//! dcgm-exporter prints doubles with C's `%f` and integers with `%d`.

/// Which `prometheus_client` exponent style to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoExp {
    /// `prometheus_client` ≤ 0.25: `e+0{exp}` (so `e+010` from 1e10).
    Padded,
    /// 0.26 and later: `e+06`, `e+10`.
    Fixed,
}

/// Python's `repr(float)`.
pub fn py_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Shortest round-trip digits and the decimal exponent, from Rust's `{:e}`.
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{digits}{}.0", "0".repeat((int_len - n) as usize))
            } else {
                format!(
                    "{}.{}",
                    &digits[..int_len as usize],
                    &digits[int_len as usize..]
                )
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() == 1 {
            digits.clone()
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let es = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    }
}

/// `prometheus_client`'s `floatToGoString`.
pub fn go_string(x: f64, style: GoExp) -> String {
    if x == f64::INFINITY {
        return "+Inf".into();
    }
    if x == f64::NEG_INFINITY {
        return "-Inf".into();
    }
    if x.is_nan() {
        return "NaN".into();
    }
    let s = py_repr(x);
    match s.find('.') {
        Some(dot) if x > 0.0 && dot > 6 => {
            let digits = format!("{}{}{}", &s[..1], &s[1..dot], &s[dot + 1..]);
            let tail = digits[1..].trim_end_matches(['0', '.']);
            let mantissa = if tail.is_empty() {
                digits[..1].to_string()
            } else {
                format!("{}.{tail}", &digits[..1])
            };
            match style {
                GoExp::Padded => format!("{mantissa}e+0{}", dot - 1),
                GoExp::Fixed => format!("{mantissa}e+{:02}", dot - 1),
            }
        }
        _ => s,
    }
}

/// C's `%f`: six decimals.
pub fn c_f(x: f64) -> String {
    format!("{x:.6}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr() {
        for (x, want) in [
            (0.0, "0.0"),
            (1.0, "1.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (3.5e-5, "3.5e-05"),
            (1e-4, "0.0001"),
            (123456.0, "123456.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (2560.0, "2560.0"),
            (0.001, "0.001"),
            (1733155200.25, "1733155200.25"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(py_repr(x), want, "{x}");
        }
    }

    #[test]
    fn go_strings() {
        for (x, style, want) in [
            (1048576.0, GoExp::Fixed, "1.048576e+06"),
            (1733155200.25, GoExp::Fixed, "1.73315520025e+09"),
            (12884901888.0, GoExp::Padded, "1.2884901888e+010"),
            (12884901888.0, GoExp::Fixed, "1.2884901888e+10"),
            (1048576.0, GoExp::Padded, "1.048576e+06"),
            (1e6, GoExp::Fixed, "1e+06"),
            (999999.0, GoExp::Fixed, "999999.0"),
            (f64::INFINITY, GoExp::Fixed, "+Inf"),
            (0.25, GoExp::Fixed, "0.25"),
        ] {
            assert_eq!(go_string(x, style), want, "{x}");
        }
    }
}
