//! `prometheus-parse` was the planned parser. This test records, on a
//! real-shaped vLLM scrape, what it loses, so that the decision to write our
//! own (docs/decisions.md, "Why our own parser") stays checked against the
//! crate as it is.

use vllm_lens_expo::{Event, Parser};

use crate::support::read;

fn theirs(text: &str) -> prometheus_parse::Scrape {
    let lines = text.lines().map(|l| Ok(l.to_string()));
    prometheus_parse::Scrape::parse(lines).expect("prometheus-parse reads the text")
}

#[test]
fn prometheus_parse_drops_every_vllm_family() {
    let text = read("scrapes/vllm-v1-0.23-2engines.prom");
    let ours: Vec<String> = Parser::new(&text)
        .filter_map(|e| match e {
            Event::Sample(s) => Some(s.name.to_string()),
            _ => None,
        })
        .collect();
    let scrape = theirs(&text);
    let ours_vllm = ours.iter().filter(|n| n.starts_with("vllm:")).count();
    let theirs_vllm = scrape
        .samples
        .iter()
        .filter(|s| s.metric.starts_with("vllm"))
        .count();
    assert!(ours_vllm > 600, "we read {ours_vllm} vllm: samples");
    assert_eq!(
        theirs_vllm, 0,
        "prometheus-parse now reads `vllm:` names: revisit docs/decisions.md"
    );
    // What it does read is only the non-vLLM remainder.
    assert!(
        scrape.samples.len() < ours.len() / 10,
        "{} of {}",
        scrape.samples.len(),
        ours.len()
    );
}

#[test]
fn prometheus_parse_cuts_label_values_at_punctuation() {
    let text = read("scrapes/dcgm-4.x-2gpu-xid.prom");
    let scrape = theirs(&text);
    let xid = scrape
        .samples
        .iter()
        .find(|s| s.metric == "DCGM_FI_DEV_XID_ERRORS")
        .map(|s| s.labels.get("err_msg").map(str::to_string));
    let full = "GPU has fallen off the bus (reset required, see dmesg)";
    // Either the sample is lost or its free-text label is cut at the comma.
    assert_ne!(
        xid,
        Some(Some(full.to_string())),
        "prometheus-parse now keeps err_msg whole: revisit"
    );
    let ours = Parser::new(&text).find_map(|e| match e {
        Event::Sample(s) if s.name == "DCGM_FI_DEV_XID_ERRORS" => {
            s.labels.get("err_msg").map(|v| v.into_owned())
        }
        _ => None,
    });
    assert_eq!(ours.as_deref(), Some(full));
}
