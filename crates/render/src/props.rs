//! Property test: rendering never panics on any report model, and text
//! from the model never becomes markup. Models are the golden reports
//! (tests/golden/*.json) with random leaves replaced: nulls, extreme
//! numbers, hostile and odd strings, emptied lists or lists with an element repeated.

use proptest::prelude::*;
use serde_json::Value;
use vllm_lens_model::Report;

const GOLDEN: [&str; 3] = [
    include_str!("../../../tests/golden/a10g-qwen3b-ramp.json"),
    include_str!("../../../tests/golden/errors-aborts.json"),
    include_str!("../../../tests/golden/jitter-gaps.json"),
];

const MARKER: &str = "<vllm-lens-prop onload=x>";

#[derive(Clone, Debug)]
enum Change {
    Null,
    Number(f64),
    Text(String),
    EmptyList,
    RepeatList,
}

fn change() -> impl Strategy<Value = Change> {
    // Null is rarer: most fields that are not `Option` refuse it, and a
    // model that does not deserialise is not rendered (about a quarter with even odds).
    prop_oneof![
        1 => Just(Change::Null),
        4 => prop::sample::select(vec![
            0.0, -0.0, -1.0, 1e-300, 1e300, -1e300, f64::MAX, f64::MIN, 1.5e15, 9.9e15, -9.9e15,
            0.5, 100.0, 1e9
        ])
        .prop_map(Change::Number),
        4 => prop::sample::select(vec![
            String::new(),
            MARKER.to_string(),
            "</script><script>alert(1)</script>".to_string(),
            "\u{1b}[31m\u{0}\u{7}".to_string(),
            "ü🙂\u{202e}rtl".to_string(),
            "x".repeat(5000),
            "| pipe | table |\n# heading\n```".to_string(),
            "]]><!--".to_string(),
        ])
        .prop_map(Change::Text),
        1 => Just(Change::EmptyList),
        1 => Just(Change::RepeatList),
    ]
}

/// JSON pointers of every node.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn apply(v: &mut Value, c: &Change) {
    match (c, &mut *v) {
        (Change::EmptyList, Value::Array(a)) => a.clear(),
        (Change::RepeatList, Value::Array(a)) => {
            if let Some(first) = a.first().cloned() {
                a.push(first);
            }
        }
        (Change::EmptyList | Change::RepeatList, _) => {}
        (Change::Null, x) => *x = Value::Null,
        (Change::Number(n), x @ Value::Number(_)) => {
            if let Some(n) = serde_json::Number::from_f64(*n) {
                *x = Value::Number(n);
            }
        }
        (Change::Text(t), x @ Value::String(_)) => *x = Value::String(t.clone()),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn rendering_never_panics_on_any_report_model(
        which in 0usize..GOLDEN.len(),
        changes in prop::collection::vec((any::<prop::sample::Index>(), change()), 1..25),
    ) {
        let mut model: Value = serde_json::from_str(GOLDEN[which]).expect("golden JSON");
        for (index, c) in &changes {
            let mut all = Vec::new();
            pointers(&model, String::new(), &mut all);
            let at = index.get(&all).clone();
            if let Some(node) = model.pointer_mut(&at) {
                apply(node, c);
            }
        }
        // Changes the model's types cannot hold are not reports.
        let Ok(report) = serde_json::from_value::<Report>(model) else { return Ok(()) };
        let html = crate::html(&report);
        let md = crate::markdown(&report);
        let json = crate::json(&report);
        prop_assert!(html.ends_with("</html>\n") || html.ends_with("</html>"));
        prop_assert_eq!(html.matches("<script").count(), 1);
        prop_assert!(!html.contains("<vllm-lens-prop"), "markup from the model in the HTML");
        // Markdown escapes `<` as `\<` (CommonMark shows it as text).
        let raw = md.match_indices("<vllm-lens-prop").filter(|(i, _)| !md[..*i].ends_with('\\')).count();
        prop_assert_eq!(raw, 0, "markup from the model in the Markdown: {}", md);
        prop_assert!(serde_json::from_str::<Value>(&json).is_ok());
    }
}
