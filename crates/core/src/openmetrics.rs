//! A store written back out as OpenMetrics text with a timestamp on every
//! sample: the form `promtool tsdb create-blocks-from openmetrics` loads into
//! a Prometheus TSDB, so a capture can be queried in the user's own
//! Prometheus and Grafana (and, in our tests, by real Prometheus as the
//! oracle for our figures).
//!
//! Families are written whole, one after the other; within a family each
//! series' points in time order. Every label the store holds is written,
//! the target's identity labels (`job`, `instance`, ...) included. Counters
//! whose samples lack `_total` (dcgm-exporter's) are written as `unknown`,
//! since OpenMetrics requires the suffix; Prometheus' functions do not look
//! at the type.

use std::fmt::Write;

use vllm_lens_store::{MetricType, Role, Store};

fn valid_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn escape_label(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn push_value(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v == f64::INFINITY {
        out.push_str("+Inf");
    } else if v == f64::NEG_INFINITY {
        out.push_str("-Inf");
    } else {
        let _ = write!(out, "{v}");
    }
}

fn push_time(ms: i64, out: &mut String) {
    let _ = write!(out, "{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000));
}

/// What [`write()`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Families written.
    pub families: usize,
    /// Series written.
    pub series: usize,
    /// Samples written.
    pub samples: u64,
    /// Families skipped because their name is not a valid metric name.
    pub skipped_families: usize,
}

/// Appends the whole store to `out` as OpenMetrics, ending in `# EOF`.
pub fn write(store: &Store, out: &mut String) -> Written {
    let mut stats = Written::default();
    for family in store.families() {
        let series: Vec<_> = family
            .series()
            .iter()
            .copied()
            .filter(|&s| !store.series(s).is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let declared = family.name();
        if !valid_metric_name(declared) {
            stats.skipped_families += 1;
            continue;
        }
        let (name, kind) = match family.kind() {
            MetricType::Counter => {
                let all_total = series
                    .iter()
                    .all(|&s| store.series(s).role() == Role::Total);
                if all_total {
                    (
                        declared.strip_suffix("_total").unwrap_or(declared),
                        "counter",
                    )
                } else {
                    (declared, "unknown")
                }
            }
            MetricType::Gauge => (declared, "gauge"),
            MetricType::Histogram => (declared, "histogram"),
            MetricType::Summary => (declared, "summary"),
            MetricType::GaugeHistogram => (declared, "gaugehistogram"),
            MetricType::Info | MetricType::StateSet | MetricType::Untyped => (declared, "unknown"),
        };
        let _ = writeln!(out, "# TYPE {name} {kind}");
        stats.families += 1;
        for sid in series {
            let s = store.series(sid);
            let sample_name = store.series_name(sid);
            if !valid_metric_name(sample_name) {
                continue;
            }
            let mut head = String::with_capacity(64);
            head.push_str(sample_name);
            let mut first = true;
            for (k, v) in store.labels(sid) {
                if !valid_label_name(k) {
                    continue;
                }
                head.push(if first { '{' } else { ',' });
                first = false;
                head.push_str(k);
                head.push_str("=\"");
                escape_label(v, &mut head);
                head.push('"');
            }
            if !first {
                head.push('}');
            }
            stats.series += 1;
            for (&t, &v) in s.times().iter().zip(s.values()) {
                out.push_str(&head);
                out.push(' ');
                push_value(v, out);
                out.push(' ');
                push_time(t, out);
                out.push('\n');
                stats.samples += 1;
            }
        }
    }
    out.push_str("# EOF\n");
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use vllm_lens_store::{Store, TargetKind};

    #[test]
    fn writes_families_whole_with_timestamps() {
        let mut store = Store::default();
        let t = store.add_target("vllm-0", TargetKind::Vllm, &[]);
        let text = "# TYPE vllm:prompt_tokens_total counter\n\
                    vllm:prompt_tokens_total{engine=\"0\"} 10\n\
                    # TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n\
                    DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",modelName=\"NVIDIA \\\"A10G\\\"\"} 5\n";
        store.ingest(t, text, Some(1_000));
        store.ingest(t, &text.replace(" 10\n", " 12\n"), Some(16_500));
        store.finish();
        let mut out = String::new();
        let w = write(&store, &mut out);
        assert_eq!((w.families, w.series, w.samples), (2, 2, 4));
        expect_test::expect![[r#"
            # TYPE vllm:prompt_tokens counter
            vllm:prompt_tokens_total{engine="0",instance="vllm-0",job="vllm"} 10 1.000
            vllm:prompt_tokens_total{engine="0",instance="vllm-0",job="vllm"} 12 16.500
            # TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown
            DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",instance="vllm-0",job="vllm",modelName="NVIDIA \"A10G\""} 5 1.000
            DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",instance="vllm-0",job="vllm",modelName="NVIDIA \"A10G\""} 5 16.500
            # EOF
        "#]]
        .assert_eq(&out);
    }
}
