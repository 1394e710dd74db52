//! The settings a shell hands the core, defined once for both shells: the
//! [`Settings`] type with its defaults (deserialisable, so the page sends
//! its form as JSON and reads the defaults from [`defaults_json`]), the
//! names the CLI's `--slo NAME=VALUE` takes ([`SLO_KNOBS`], the analysis'
//! registry of objectives), the parsers of
//! durations and sizes, and the checks every value passes before analysis
//! ([`check`]).

use std::fmt::Write as _;

pub use vllm_lens_model::{Settings, SloThresholds};
use vllm_lens_query::grid::{MAX_WINDOW_MS, MIN_WINDOW_MS};

/// A setting that cannot be used, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError(pub String);

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SettingsError {}

pub use vllm_lens_analysis::slo::registry::{SLOS as SLO_KNOBS, Slo as SloKnob, Unit};

/// The SLO objectives with their defaults, e.g. `ttft-p95=300ms,
/// itl-p95=50ms, queue-at=12, error-abort=0.5%` (for help text).
pub fn slo_defaults_text() -> String {
    let d = SloThresholds::default();
    let parts: Vec<String> = SLO_KNOBS
        .iter()
        .map(|k| format!("{}={}", k.name, k.show(&d)))
        .collect();
    parts.join(", ")
}

/// Each objective's name and meaning, one per line (for help text).
pub fn slo_names_text() -> String {
    let mut out = String::new();
    for k in SLO_KNOBS {
        let _ = writeln!(out, "  {:<12} {}", k.name, k.meaning);
    }
    out
}

/// Applies one `NAME=VALUE` objective, e.g. `ttft-p95=500ms`.
pub fn set_slo(slo: &mut SloThresholds, arg: &str) -> Result<(), SettingsError> {
    let bad = |e: String| SettingsError(format!("--slo {arg}: {e}"));
    let (name, value) = arg
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=VALUE, e.g. ttft-p95=300ms".into()))?;
    let name = name.trim();
    let Some(knob) = SLO_KNOBS.iter().find(|k| k.name == name) else {
        let names: Vec<&str> = SLO_KNOBS.iter().map(|k| k.name).collect();
        return Err(bad(format!("unknown SLO `{name}` ({})", names.join(", "))));
    };
    let value = value.trim();
    let v = match knob.unit {
        Unit::Millis => latency_ms(value).map_err(bad)?,
        Unit::Requests => value
            .parse()
            .map_err(|_| bad("expected a number of concurrent requests".into()))?,
        Unit::Percent => value
            .trim_end_matches('%')
            .trim()
            .parse()
            .map_err(|_| bad("expected a percentage such as 0.5%".into()))?,
    };
    (knob.set)(slo, v);
    check_slo(slo).map_err(|e| bad(e.0))
}

/// A latency objective: a bare number is milliseconds.
fn latency_ms(s: &str) -> Result<f64, String> {
    if s.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return s.parse().map_err(|_| format!("`{s}` is not a number"));
    }
    duration_ms(s)
}

/// A duration such as `1m`, `30s`, `300ms` or `2h`, in ms (a bare number
/// is seconds).
pub fn duration_ms(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration such as 1m, 30s or 300ms"))?;
    let scale = match unit {
        "ms" => 1.0,
        "" | "s" => 1000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(format!("unknown unit in `{s}` (use ms, s, m, h)")),
    };
    Ok(n * scale)
}

/// A window width, in ms: a duration from 15 s to 1 h.
pub fn window_ms(s: &str) -> Result<i64, String> {
    let ms = duration_ms(s)? as i64;
    check_window(ms).map_err(|_| format!("window `{s}` must be between 15s and 1h"))?;
    Ok(ms)
}

/// A size such as `4GiB`, `500MB` or `16e9` bytes… in bytes.
pub fn size_bytes(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a size such as 4GiB"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown size unit in `{s}` (use B, KiB, MiB, GiB)")),
    };
    Ok((number * scale) as u64)
}

fn check_window(ms: i64) -> Result<(), SettingsError> {
    if (MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&ms) {
        Ok(())
    } else {
        Err(SettingsError(format!(
            "window of {ms} ms is outside 15 s to 1 h"
        )))
    }
}

fn check_slo(slo: &SloThresholds) -> Result<(), SettingsError> {
    for k in SLO_KNOBS {
        let v = (k.get)(slo);
        let ok = v.is_finite()
            && match k.unit {
                Unit::Millis | Unit::Requests => v > 0.0,
                Unit::Percent => (0.0..=100.0).contains(&v),
            };
        if !ok {
            return Err(SettingsError(format!(
                "the {} objective must be {}, not {v}",
                k.name,
                match k.unit {
                    Unit::Percent => "from 0 to 100 %",
                    _ => "above 0",
                }
            )));
        }
    }
    if !(slo.queue_negligible_ms.is_finite() && slo.queue_negligible_ms >= 0.0) {
        return Err(SettingsError(format!(
            "queue_negligible_ms must be 0 or more, not {}",
            slo.queue_negligible_ms
        )));
    }
    Ok(())
}

/// Every value usable: the window from 15 s to 1 h, objectives above 0
/// (error + abort from 0 to 100 %), optional facts finite and not negative
/// (weights above 0).
pub fn check(s: &Settings) -> Result<(), SettingsError> {
    check_window(s.window_ms)?;
    check_slo(&s.slo)?;
    let facts = [
        ("gpu_hour_cost", s.gpu_hour_cost, 0.0),
        ("shared_prefix_tokens", s.shared_prefix_tokens, 0.0),
    ];
    for (name, v, min) in facts {
        if let Some(v) = v
            && !(v.is_finite() && v >= min)
        {
            return Err(SettingsError(format!("{name} must be 0 or more, not {v}")));
        }
    }
    if let Some(v) = s.model_bytes
        && !(v.is_finite() && v > 0.0)
    {
        return Err(SettingsError(format!(
            "model_bytes must be above 0, not {v}"
        )));
    }
    Ok(())
}

/// Reads settings from JSON (the page's form); missing fields take the
/// defaults. The result has passed [`check`].
pub fn from_json(json: &str) -> Result<Settings, SettingsError> {
    let s: Settings =
        serde_json::from_str(json).map_err(|e| SettingsError(format!("settings: {e}")))?;
    check(&s)?;
    Ok(s)
}

/// The defaults as JSON, for the page's form.
pub fn defaults_json() -> String {
    serde_json::to_string(&Settings::default()).unwrap_or_else(|_| "{}".into())
}

/// The objectives for a form, as JSON: per objective its settings field,
/// `--slo` name, label, unit and default, in the scorecard's order (the
/// page builds its SLO inputs from it).
pub fn slo_form_json() -> String {
    let list: Vec<serde_json::Value> = SLO_KNOBS
        .iter()
        .map(|k| {
            serde_json::json!({
                "field": k.field,
                "name": k.name,
                "label": k.label,
                "meaning": k.meaning,
                "unit": k.unit,
                "default": k.default_value(),
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slo_arguments_set_one_objective_each() {
        // (argument, the objective's value after it, or a part of the error)
        let cases: &[(&str, Result<f64, &str>)] = &[
            ("ttft-p95=500ms", Ok(500.0)),
            ("ttft-p95=0.5s", Ok(500.0)),
            ("ttft-p95=250", Ok(250.0)),
            ("itl-p95 = 40ms", Ok(40.0)),
            ("queue-at=24", Ok(24.0)),
            ("error-abort=1%", Ok(1.0)),
            ("error-abort=0.25", Ok(0.25)),
            ("ttft=300", Err("unknown SLO `ttft`")),
            ("ttft-p95", Err("expected NAME=VALUE")),
            ("queue-at=many", Err("a number of concurrent requests")),
            ("error-abort=150%", Err("from 0 to 100")),
            ("itl-p95=0", Err("above 0")),
            ("ttft-p95=3d", Err("unknown unit")),
        ];
        for (arg, want) in cases {
            let mut slo = SloThresholds::default();
            let name = arg.split('=').next().unwrap_or("").trim();
            match (set_slo(&mut slo, arg), want) {
                (Ok(()), Ok(value)) => {
                    let knob = SLO_KNOBS.iter().find(|k| k.name == name).unwrap();
                    assert_eq!((knob.get)(&slo), *value, "{arg}");
                    let others = SLO_KNOBS.iter().filter(|k| k.name != name);
                    for k in others {
                        assert_eq!((k.get)(&slo), (k.get)(&SloThresholds::default()), "{arg}");
                    }
                }
                (Err(e), Err(part)) => assert!(e.0.contains(part), "{arg}: {e}"),
                (got, _) => panic!("{arg}: {got:?}"),
            }
        }
    }

    #[test]
    fn durations_windows_and_sizes() {
        assert_eq!(duration_ms("1m"), Ok(60_000.0));
        assert_eq!(duration_ms("300ms"), Ok(300.0));
        assert_eq!(duration_ms("2"), Ok(2000.0));
        assert_eq!(window_ms("5m"), Ok(300_000));
        assert!(window_ms("10s").unwrap_err().contains("between 15s and 1h"));
        assert!(window_ms("2h").is_err());
        assert_eq!(size_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(size_bytes("16GB"), Ok(16_000_000_000));
        assert!(size_bytes("3 parsecs").is_err());
    }

    #[test]
    fn help_text_shows_the_defaults_by_name() {
        assert_eq!(
            slo_defaults_text(),
            "ttft-p95=300ms, itl-p95=50ms, queue-at=12, error-abort=0.5%"
        );
        assert!(slo_names_text().contains("queue-at"));
    }

    #[test]
    fn the_page_sends_part_of_the_settings_and_gets_the_rest_by_default() {
        let s = from_json(r#"{"slo":{"ttft_p95_ms":500},"gpu_hour_cost":null}"#).unwrap();
        assert_eq!(s.slo.ttft_p95_ms, 500.0);
        assert_eq!(s.slo.itl_p95_ms, SloThresholds::default().itl_p95_ms);
        assert_eq!(s.window_ms, Settings::default().window_ms);
        assert_eq!(s.gpu_hour_cost, None);
        let back: Settings = serde_json::from_str(&defaults_json()).unwrap();
        assert_eq!(back, Settings::default());
        for bad in [
            r#"{"window_ms":1000}"#,
            r#"{"gpu_hour_cost":-1}"#,
            r#"{"model_bytes":0}"#,
            r#"{"slo":{"queue_concurrency":0}}"#,
            r#"{"window_ms":"1m"}"#,
        ] {
            assert!(from_json(bad).is_err(), "{bad}");
        }
    }
}
