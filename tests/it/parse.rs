//! Data-driven parser cases: each file in `tests/data/expo/` is parsed and
//! rendered (events, diagnostics, then the families and roles the store
//! gives them) and compared with its `.expect` sibling. `UPDATE_EXPECT=1`
//! rewrites the expectations.

use expect_test::expect_file;
use vllm_lens_expo::{Event, Parser};
use vllm_lens_store::{Store, TargetKind};

use crate::support::data;

fn render(text: &str) -> String {
    let mut out = String::new();
    let mut parser = Parser::new(text);
    out += &format!("format: {:?}\n", parser.format());
    for event in parser.by_ref() {
        match event {
            Event::Help { name, text, line } => out += &format!("{line}: HELP {name} {text:?}\n"),
            Event::Type { name, kind, line } => out += &format!("{line}: TYPE {name} {kind}\n"),
            Event::Unit { name, unit, line } => out += &format!("{line}: UNIT {name} {unit}\n"),
            Event::Sample(s) => {
                let labels: Vec<String> = s
                    .labels
                    .iter()
                    .map(|l| format!("{}={:?}", l.name, l.value()))
                    .collect();
                out += &format!(
                    "{}: {} {{{}}} {:?}",
                    s.line,
                    s.name,
                    labels.join(", "),
                    s.value
                );
                if let Some(ts) = s.timestamp_ms {
                    out += &format!(" @{ts}");
                }
                out.push('\n');
            }
        }
    }
    for d in parser.into_diagnostics() {
        out += &format!("! {d} [{}]\n", d.kind.code());
    }
    let mut store = Store::default();
    let t = store.add_target("t", TargetKind::Other, &[]);
    store.ingest(t, text, Some(0));
    store.finish();
    out += "--- families\n";
    for family in store.families() {
        let mut roles: Vec<String> = family
            .series()
            .iter()
            .map(|&s| format!("{:?}", store.series(s).role()))
            .collect();
        roles.dedup();
        out += &format!(
            "{} {} series={} roles={}\n",
            family.name(),
            family.kind(),
            family.series().len(),
            roles.join(",")
        );
    }
    out
}

#[test]
fn expo_fixtures() {
    let dir = data("expo");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/expo")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_none_or(|e| e != "expect"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "fixtures missing: {cases:?}");
    for case in cases {
        let text = std::fs::read_to_string(&case).expect("fixture is UTF-8");
        let mut expect_path = case.clone().into_os_string();
        expect_path.push(".expect");
        expect_file![expect_path].assert_eq(&render(&text));
    }
}

/// The realistic vLLM scrape: every line is read, nothing is reported.
#[test]
fn realistic_vllm_scrape_reads_clean() {
    let text = crate::support::read("scrapes/vllm-v1-0.23-2engines.prom");
    let mut parser = Parser::new(&text);
    let samples = parser
        .by_ref()
        .filter(|e| matches!(e, Event::Sample(_)))
        .count();
    assert!(
        parser.diagnostics().is_empty(),
        "{:?}",
        parser.diagnostics()
    );
    let lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count();
    assert_eq!(samples, lines);
    assert!(text.len() > 60_000 && text.len() < 150_000);
}
