//! Property tests: the parser is total on any input, and reads back exactly
//! what a printer following the format writes.

use proptest::prelude::*;

use crate::{Event, Parser};

/// Fragments that exercise every branch: names, braces, quotes, escapes,
/// numbers, comments, whitespace, multi-byte characters.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("vllm:x".to_string()),
        Just("a_b".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("=".to_string()),
        Just(",".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("# HELP ".to_string()),
        Just("# TYPE ".to_string()),
        Just("# EOF".to_string()),
        Just(" # {".to_string()),
        Just("1.5e+010".to_string()),
        Just("NaN".to_string()),
        Just("-Inf".to_string()),
        Just("1767225600123".to_string()),
        Just("__name__".to_string()),
        Just("世界".to_string()),
        "[ -~]{0,6}",
    ]
}

fn label_value() -> impl Strategy<Value = String> {
    "[ -~\\n\u{e9}\u{4e16}]{0,12}"
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_reports_lines_within_the_input(parts in proptest::collection::vec(fragment(), 0..40)) {
        let input: String = parts.concat();
        let lines = input.split('\n').count() as u32;
        let mut parser = Parser::new(&input);
        for event in parser.by_ref() {
            if let Event::Sample(s) = event {
                prop_assert!(s.line >= 1 && s.line <= lines);
                prop_assert!(input.contains(s.key));
                for label in s.labels.iter() {
                    let _ = label.value();
                }
            }
        }
        for d in parser.into_diagnostics() {
            prop_assert!(d.line <= lines);
        }
    }

    #[test]
    fn lazy_format_detection_reads_as_eager_detection(parts in proptest::collection::vec(fragment(), 0..40)) {
        let input: String = parts.concat();
        let eager_format = crate::detect_format(&input);
        let mut lazy = Parser::new(&input);
        prop_assert_eq!(lazy.format(), eager_format);
        let mut eager = Parser::with_format(&input, eager_format);
        // Compared as printed: NaN values are not equal to themselves.
        let lazy_events: Vec<_> = lazy.by_ref().map(|e| format!("{e:?}")).collect();
        let eager_events: Vec<_> = eager.by_ref().map(|e| format!("{e:?}")).collect();
        prop_assert_eq!(lazy_events, eager_events);
        prop_assert_eq!(lazy.format(), eager_format);
        prop_assert_eq!(lazy.into_diagnostics(), eager.into_diagnostics());
    }

    #[test]
    fn hints_never_change_what_is_read(
        parts in proptest::collection::vec(fragment(), 0..40),
        other in proptest::collection::vec(fragment(), 0..40),
        lines in proptest::collection::vec(proptest::sample::select(vec![
            "vllm:x{a=\"1\"} 1", "vllm:x{a=\"1\"} 2 3", "vllm:x{a=\"2\"} 1", "vllm:x 1",
            "vllm:x  {a=\"1\"} 1", "{\"vllm:x\",a=\"1\"} 1", "vllm:x{a=\"1\"} bad",
            "vllm:x{a=\"1\"}\t4 # ex", "vllm:x{a=\"1\",} 1", "vllm:xy 1",
        ]), 0..12),
        seed in 0usize..1000,
    ) {
        // Hints from a reading of the same text and of another one, offered
        // in and out of order: the events are those of a plain reading.
        let input: String = parts.concat() + "\n" + &lines.join("\n");
        let other: String = other.concat() + "\n" + &lines.join("\n");
        let mut hints = Vec::new();
        for text in [&input, &other] {
            for e in Parser::new(text) {
                if let Event::Sample(s) = e {
                    hints.push((s.key.to_string(), s.shape()));
                }
            }
        }
        let mut plain_parser = Parser::new(&input);
        let plain: Vec<_> = plain_parser.by_ref().map(|e| format!("{e:?}")).collect();
        let mut hinted_parser = Parser::new(&input);
        let mut hinted = Vec::new();
        let mut i = seed;
        loop {
            let hint = (!hints.is_empty()).then(|| {
                let (k, shape) = &hints[i % hints.len()];
                (k.as_str(), *shape)
            });
            i = i.wrapping_mul(31).wrapping_add(7);
            let Some(e) = hinted_parser.next_hinted(hint) else { break };
            hinted.push(format!("{e:?}"));
        }
        prop_assert_eq!(plain, hinted);
        prop_assert_eq!(plain_parser.into_diagnostics(), hinted_parser.into_diagnostics());
    }

    #[test]
    fn reads_back_what_a_printer_writes(
        samples in proptest::collection::vec(
            (
                "[a-zA-Z_:][a-zA-Z0-9_:]{0,20}",
                proptest::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,8}", label_value(), 0..4),
                prop_oneof![any::<f64>(), Just(f64::INFINITY), Just(f64::NEG_INFINITY), (-1e6f64..1e6)],
                proptest::option::of(0i64..4_102_444_800_000),
            ),
            1..20,
        ),
    ) {
        let mut text = String::new();
        for (name, labels, value, ts) in &samples {
            text.push_str(name);
            if !labels.is_empty() {
                let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
                text.push_str(&format!("{{{}}}", pairs.join(",")));
            }
            let value = if value.is_nan() { "NaN".to_string() } else if value.is_infinite() {
                if *value > 0.0 { "+Inf".into() } else { "-Inf".into() }
            } else { format!("{value:?}") };
            text.push_str(&format!(" {value}"));
            if let Some(ts) = ts {
                text.push_str(&format!(" {ts}"));
            }
            text.push('\n');
        }
        let mut parser = Parser::new(&text);
        let read: Vec<_> = parser.by_ref().filter_map(|e| match e {
            Event::Sample(s) => Some((
                s.name.to_string(),
                s.labels.iter().map(|l| (l.name.to_string(), l.value().into_owned())).collect::<std::collections::BTreeMap<_, _>>(),
                s.value,
                s.timestamp_ms,
            )),
            _ => None,
        }).collect();
        prop_assert!(parser.diagnostics().is_empty(), "{:?}\n{text}", parser.diagnostics());
        prop_assert_eq!(read.len(), samples.len());
        for (got, want) in read.iter().zip(&samples) {
            prop_assert_eq!(&got.0, &want.0);
            prop_assert_eq!(&got.1, &want.1);
            prop_assert!(got.2 == want.2 || (got.2.is_nan() && want.2.is_nan()), "{} vs {}", got.2, want.2);
            prop_assert_eq!(got.3, want.3);
        }
    }
}
