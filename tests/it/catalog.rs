//! The catalogue: data-driven cases for each rename and exporter flavour
//! (`tests/data/catalog/*.prom` against `*.prom.expect`; `UPDATE_EXPECT=1`
//! rewrites), and every era among the samples.

use expect_test::expect_file;
use vllm_lens_core::catalog::{Catalogue, Engine, Signal, Status, Version};
use vllm_lens_core::store::{Store, TargetKind};

use crate::engine::load_sample;
use crate::support::data;

fn render(cat: &Catalogue) -> String {
    let mut out = String::new();
    for t in &cat.era.targets {
        out += &format!(
            "era {}: {:?} {}{}\n",
            t.target,
            t.engine,
            vllm_lens_core::catalog::era::range_text(t.min_version, t.max_version),
            if t.consistent { "" } else { " (inconsistent)" }
        );
        for m in &t.markers {
            out += &format!("  {} => {}\n", m.seen, m.implies);
        }
    }
    if let Some(d) = &cat.era.dcgm {
        out += &format!(
            "dcgm: host label {:?}, prof {}, fb_reserved {}, 4.6 names {}, 1.x namespace {}\n",
            d.hostname_label, d.prof_fields, d.fb_reserved, d.dcgm_46_names, d.namespace_1x
        );
    }
    let mut missing = Vec::new();
    for r in &cat.signals {
        if r.status == Status::Missing {
            missing.push(r.key);
            continue;
        }
        let series: usize = r.targets.iter().map(|t| t.series_count).sum();
        out += &format!(
            "{} {:?} via {} ({} series){}\n",
            r.key,
            r.status,
            r.used.join(", "),
            series,
            if r.also_present.is_empty() {
                String::new()
            } else {
                format!(" [also present, not read: {}]", r.also_present.join(", "))
            }
        );
        for n in &r.notes {
            out += &format!("  note: {n}\n");
        }
    }
    out += &format!("missing: {}\n", missing.join(" "));
    for g in &cat.gpus {
        out += &format!("gpu {} {:?}\n", g.key, g.model);
    }
    for u in &cat.unknown_vllm_families {
        out += &format!(
            "unknown vllm family: {} ({}, {} series)\n",
            u.name, u.kind, u.series
        );
    }
    for o in &cat.other_vllm_families {
        out += &format!("known optional family: {o}\n");
    }
    out
}

#[test]
fn catalogue_fixtures() {
    let dir = data("catalog");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/catalog")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "prom"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "fixtures missing: {cases:?}");
    for case in cases {
        let text = std::fs::read_to_string(&case).expect("fixture is UTF-8");
        let mut store = Store::default();
        let t = store.add_target("t", TargetKind::Other, &[]);
        store.ingest(t, &text, Some(0));
        store.finish();
        let cat = Catalogue::resolve(&store);
        let mut expect_path = case.clone().into_os_string();
        expect_path.push(".expect");
        expect_file![expect_path].assert_eq(&render(&cat));
    }
}

fn version(s: &str) -> Version {
    let mut p = s.split('.').map(|x| x.parse::<u16>().expect("number"));
    Version(
        p.next().expect("major"),
        p.next().expect("minor"),
        p.next().unwrap_or(0),
    )
}

/// Every sample's era is inferred from its data alone, and the release that
/// made it lies in the range.
#[test]
fn every_sample_era_is_inferred() {
    let cases = [
        ("a10g-qwen3b-ramp", "0.23.0", Engine::V1),
        ("saturated", "0.23.0", Engine::V1),
        ("rag-prefill-bound", "0.18.0", Engine::V1),
        ("truncation", "0.13.0", Engine::V1),
        ("errors-aborts", "0.23.0", Engine::V1),
        ("pod-restart", "0.11.0", Engine::V1),
        ("two-replicas-rr", "0.20.0", Engine::V1),
        ("v0-legacy", "0.6.6", Engine::V0),
        ("no-prof-fields", "0.16.0", Engine::V1),
        ("jitter-gaps", "0.23.0", Engine::V1),
    ];
    for (name, release, engine) in cases {
        let l = load_sample(name);
        let cat = Catalogue::resolve(&l.store);
        let era = &cat.era;
        assert_eq!(era.engine, engine, "{name}");
        assert!(!era.mixed, "{name}");
        let (lo, hi) = (era.min_version.expect(name), era.max_version.expect(name));
        let v = version(release);
        assert!(
            lo <= v && v <= hi,
            "{name}: {release} outside {}",
            era.range_text().unwrap_or_default()
        );
        for t in &era.targets {
            assert!(t.consistent, "{name} {}: {:?}", t.target, t.markers);
        }
        assert!(
            cat.unknown_vllm_families.is_empty(),
            "{name}: {:?}",
            cat.unknown_vllm_families
        );
        println!(
            "{name}: {:?} {}",
            era.engine,
            era.range_text().unwrap_or_default()
        );
    }
}

/// What each era resolves to.
#[test]
fn samples_resolve_their_eras_names() {
    let status = |name: &str, s: Signal| {
        let l = load_sample(name);
        let cat = Catalogue::resolve(&l.store);
        let r = cat.get(s).clone();
        (r.status, r.used, r.also_present)
    };
    // V0: old names, the lifetime gauge, no HTTP, no windowed prefix counters.
    let v0 = "v0-legacy";
    assert_eq!(status(v0, Signal::KvUsage).1, ["vllm:gpu_cache_usage_perc"]);
    assert_eq!(status(v0, Signal::KvUsage).0, Status::Aliased);
    assert_eq!(
        status(v0, Signal::InterTokenLatency).1,
        ["vllm:time_per_output_token_seconds"]
    );
    assert_eq!(status(v0, Signal::PrefixHits).0, Status::Missing);
    assert_eq!(status(v0, Signal::PrefixHitRateLifetime).0, Status::Found);
    assert_eq!(status(v0, Signal::HttpRequests).0, Status::Missing);
    assert_eq!(
        status(v0, Signal::GenerationThroughputGauge).0,
        Status::Found
    );
    // 0.11: ITL and the deprecated TPOT side by side; only ITL is read.
    let (s, used, also) = status("pod-restart", Signal::InterTokenLatency);
    assert_eq!(
        (s, used),
        (Status::Found, vec!["vllm:inter_token_latency_seconds"])
    );
    assert_eq!(also, ["vllm:time_per_output_token_seconds"]);
    // 0.23: cached prompt tokens counter; no PROF on the TP2 sample.
    assert_eq!(
        status("a10g-qwen3b-ramp", Signal::CachedPromptTokens).1,
        ["vllm:prompt_tokens_cached_total"]
    );
    assert_eq!(
        status("truncation", Signal::CachedPromptTokens).1,
        ["vllm:prefix_cache_hits_total"]
    );
    assert_eq!(
        status("no-prof-fields", Signal::TensorActive).0,
        Status::Missing
    );
    assert_eq!(
        status("no-prof-fields", Signal::FbReserved).0,
        Status::Missing
    );
    let l = load_sample("no-prof-fields");
    let cat = Catalogue::resolve(&l.store);
    assert_eq!(cat.gpus.len(), 2, "{:?}", cat.gpus);
    assert_eq!(
        cat.era
            .dcgm
            .as_ref()
            .and_then(|d| d.hostname_label.as_deref()),
        Some("hostname")
    );
    let l = load_sample("two-replicas-rr");
    let cat = Catalogue::resolve(&l.store);
    assert_eq!(cat.gpus.len(), 2);
    assert_eq!(cat.get(Signal::Running).targets.len(), 2);
}
