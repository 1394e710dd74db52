//! Before/after on the sample pairs (`samples/pairs.json`): the fairness
//! verdict (the non-comparable pair flagged first), the direction of the key
//! figures, the recommendations that went away; and the rendered outputs.

use serde_json::Value;
use vllm_lens_core::analysis::compare::{Comparison, compare};
use vllm_lens_core::analysis::{BundleMeta, Settings, analyse};
use vllm_lens_core::render;

use crate::engine::load_sample;
use crate::support::root;

fn pair(before: &str, after: &str) -> Comparison {
    let report = |name: &str| {
        analyse(
            &load_sample(name),
            &BundleMeta {
                name: format!("{name}.zip"),
                sha256: None,
            },
            &Settings::default(),
        )
        .expect("report")
    };
    compare(&report(before), &report(after))
}

#[test]
fn sample_pairs_get_their_expected_verdicts() {
    let spec: Value = serde_json::from_slice(
        &std::fs::read(root().join("samples/pairs.json")).expect("pairs.json"),
    )
    .expect("json");
    for p in spec["pairs"].as_array().expect("pairs") {
        let name = p["name"].as_str().expect("name");
        let c = pair(
            p["before"].as_str().expect("before"),
            p["after"].as_str().expect("after"),
        );
        let v = serde_json::to_value(&c).expect("json");
        assert_eq!(v["fairness"], p["fairness"], "{name}: {:?}", c.reasons);
        for m in p["reasons_mention"].as_array().expect("list") {
            let m = m.as_str().expect("text");
            assert!(
                c.reasons.iter().any(|r| r.contains(m)),
                "{name}: no reason mentions {m}: {:?}",
                c.reasons
            );
        }
        if p["fairness"] == "comparable" {
            assert!(c.reasons.is_empty(), "{name}: {:?}", c.reasons);
        }
        for (key, want) in p["verdicts"].as_object().expect("verdicts") {
            let f = v["figures"]
                .as_array()
                .expect("figures")
                .iter()
                .find(|f| f["key"] == key.as_str())
                .unwrap_or_else(|| panic!("{name}: no figure {key}"));
            assert_eq!(&f["direction"], want, "{name}: {key}: {f}");
        }
        for gone in p["recommendations_gone"].as_array().expect("list") {
            assert!(
                c.recommendations_gone
                    .iter()
                    .any(|g| g.as_str() == gone.as_str().expect("id")),
                "{name}: {gone} did not go away: {:?}",
                c.recommendations_gone
            );
        }
        // The page leads with the guard, and holds no network reference.
        let html = render::compare::html(&c);
        let fairness_at = html.find("id=\"fairness\"").expect("guard section");
        let figures_at = html.find("id=\"figures\"").expect("figures section");
        assert!(fairness_at < figures_at, "{name}: the guard comes first");
        assert!(!html.contains("http:") && !html.contains("https:"));
        let back: Value =
            serde_json::from_str(&render::embed::read(&html).expect("embedded")).expect("json");
        assert_eq!(back, v);
        let headline = match p["fairness"].as_str() {
            Some("comparable") => "**Comparable:",
            Some("weak") => "**A weak comparison",
            _ => "**Not comparable",
        };
        assert!(render::compare::markdown(&c).contains(headline), "{name}");
    }
}

/// A change within each capture's own window-to-window variation is "no
/// clear change", even when the averages differ.
#[test]
fn a_capture_compared_with_itself_shows_no_change() {
    let c = pair("jitter-gaps", "jitter-gaps");
    assert_eq!(c.reasons, Vec::<String>::new());
    for f in &c.figures {
        assert!(
            matches!(
                f.direction,
                vllm_lens_core::analysis::compare::Direction::NoClearChange
                    | vllm_lens_core::analysis::compare::Direction::Missing
            ),
            "{}: {:?}",
            f.key,
            f.direction
        );
    }
}

/// A second capture whose first window already hits the prefix cache far
/// more than the first capture's did is called out as a warm start.
#[test]
fn a_warm_prefix_cache_in_the_second_run_is_called_out() {
    let report = |name: &str| {
        analyse(
            &load_sample(name),
            &BundleMeta::default(),
            &Settings::default(),
        )
        .expect("report")
    };
    let before = report("pair-fp8-before");
    let cold = compare(&before, &before.clone());
    assert!(!cold.warm_prefix_cache);
    let mut after = before.clone();
    let first = after
        .rows
        .efficiency
        .iter_mut()
        .find(|r| r.key.replica.is_fleet())
        .expect("a fleet row");
    first.fields.prefix_cache_hit_pct = first.fields.prefix_cache_hit_pct.map(|h| h + 30.0);
    let c = compare(&before, &after);
    assert!(c.warm_prefix_cache);
    assert!(
        c.reasons.iter().any(|r| r.contains("warm prefix cache")),
        "{:?}",
        c.reasons
    );
    assert_eq!(
        c.fairness,
        vllm_lens_core::analysis::compare::Fairness::Weak
    );
}
