//! The judgement on captures the samples were not tuned on: bundles made
//! from the samples for one class of mistake each (an abort or three, a
//! burst beside a failing objective, a DCGM-only bundle, one scrape, two
//! models, a fixed KV pool), the real captures, and a property test: for
//! any sample and any subset of its windows, the advice never turns one
//! knob both ways and never says an objective holds that the scorecard
//! does not pass.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use vllm_lens_core::analysis::model::{Knob, Report, SloStatus, VerdictStatus};
use vllm_lens_core::analysis::{
    BundleMeta, PhaseKind, RecId, Settings, SloId, SloThresholds, analyse,
};

use crate::support::{SAMPLES, load_bytes, root, zip};

/// The files of a zip bundle, in order.
pub fn members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut z = zip::ZipArchive::new(f).expect("a zip");
    (0..z.len())
        .filter_map(|i| {
            let mut e = z.by_index(i).ok()?;
            if e.is_dir() {
                return None;
            }
            let name = e.name().ok()?.to_string();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).ok()?;
            Some((name, bytes))
        })
        .collect()
}

/// The report of some files, zipped.
fn report_of(name: &str, files: &[(String, Vec<u8>)], settings: &Settings) -> Report {
    let loaded = load_bytes(&format!("{name}.zip"), &zip(files, false));
    analyse(
        &loaded,
        &BundleMeta {
            name: format!("{name}.zip"),
            sha256: None,
        },
        settings,
    )
    .expect("report")
}

/// The capture time a member's name carries (13 digits, ms).
fn time_of(path: &str) -> Option<i64> {
    let name = path.rsplit('/').next()?;
    let digits: String = name.chars().take_while(char::is_ascii_digit).collect();
    (digits.len() == 13).then(|| digits.parse().ok()).flatten()
}

/// Adds `by` to the `finished_reason="abort"` counter of every vLLM scrape
/// at or after `from_ms` (an abort that happened just before `from_ms`).
fn add_aborts(files: &mut [(String, Vec<u8>)], from_ms: i64, by: f64) {
    for (path, bytes) in files.iter_mut() {
        if !path.contains("vllm") || time_of(path).is_none_or(|t| t < from_ms) {
            continue;
        }
        let text = String::from_utf8(std::mem::take(bytes)).expect("utf-8");
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            if line.starts_with("vllm:request_success_total{")
                && line.contains("finished_reason=\"abort\"")
                && let Some((head, value)) = line.rsplit_once(' ')
                && let Ok(v) = value.parse::<f64>()
            {
                out.push_str(&format!("{head} {:?}\n", v + by));
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        *bytes = out.into_bytes();
    }
}

fn sample_files(name: &str) -> Vec<(String, Vec<u8>)> {
    members(&root().join(format!("samples/{name}.zip")))
}

fn first_time(files: &[(String, Vec<u8>)]) -> i64 {
    files
        .iter()
        .filter_map(|(p, _)| time_of(p))
        .min()
        .expect("timed files")
}

fn status(r: &Report, id: SloId) -> SloStatus {
    r.slo.iter().find(|s| s.id == id).expect("slo").status
}

/// Class 1: one abort among a minute's requests is noise, not a burst; a
/// burst needs at least three failures that the capture's own rate cannot
/// explain; and a headline never quotes "0.0 %".
#[test]
fn one_abort_is_not_a_burst_and_three_are() {
    let mut files = sample_files("a10g-qwen3b-ramp");
    let t0 = first_time(&files);
    add_aborts(&mut files, t0 + 3 * 60_000 + 20_000, 1.0);
    let r = report_of("one-abort", &files, &Settings::default());
    assert!(
        !r.phases.iter().any(|p| p.kind == PhaseKind::Burst),
        "{:?}",
        r.phases
    );
    assert_eq!(
        r.verdict.status,
        VerdictStatus::Healthy,
        "{}",
        r.verdict.headline
    );
    assert!(
        !r.recommendations
            .iter()
            .any(|x| x.id == crate::support::rec("investigate_error_burst"))
    );
    // Three in one minute, none elsewhere: the capture's rate (3 in about
    // 2,800) makes that many in 280 requests a 1-in-300 event.
    let mut files = sample_files("a10g-qwen3b-ramp");
    add_aborts(&mut files, t0 + 3 * 60_000 + 20_000, 3.0);
    let r = report_of("three-aborts", &files, &Settings::default());
    let bursts: Vec<_> = r
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Burst)
        .collect();
    assert_eq!(bursts.len(), 1, "{:?}", r.phases);
    assert!(
        bursts[0].description.contains("3 of "),
        "{}",
        bursts[0].description
    );
    assert!(
        bursts[0].description.contains("binomial p"),
        "{}",
        bursts[0].description
    );
    assert_eq!(
        r.verdict.status,
        VerdictStatus::AtRisk,
        "{}",
        r.verdict.headline
    );
    assert_eq!(status(&r, SloId::ErrorAbortRate), SloStatus::Pass);
    for text in std::iter::once(&r.verdict.headline).chain(&r.verdict.reasons) {
        assert!(!text.contains("0.0 %"), "{text}");
    }
}

/// Class 1: a burst never outranks the change that fixes a failing
/// objective.
#[test]
fn a_burst_never_outranks_a_failing_objective() {
    let mut files = sample_files("truncation");
    let t0 = first_time(&files);
    add_aborts(&mut files, t0 + 4 * 60_000 + 20_000, 3.0);
    let r = report_of("burst-and-ttft", &files, &Settings::default());
    assert_eq!(status(&r, SloId::TtftP95), SloStatus::Fail);
    let ids: Vec<RecId> = r.recommendations.iter().map(|x| x.id.clone()).collect();
    let burst = ids
        .iter()
        .position(|x| *x == crate::support::rec("investigate_error_burst"))
        .unwrap_or_else(|| panic!("a burst: {ids:?}; {:?}", r.phases));
    let ttft = r
        .recommendations
        .iter()
        .position(|x| x.addresses.iter().any(|a| a.slo() == Some(SloId::TtftP95)))
        .expect("advice on the failing TTFT");
    assert!(ttft < burst, "{ids:?}");
}

/// Class 6: a bundle of DCGM scrapes only says what is missing and gives no
/// verdict, no phases and no advice.
#[test]
fn dcgm_only_cannot_tell() {
    let files: Vec<_> = sample_files("a10g-qwen3b-ramp")
        .into_iter()
        .filter(|(p, _)| !p.contains("vllm") && !p.ends_with("manifest.json"))
        .collect();
    let r = report_of("dcgm-only", &files, &Settings::default());
    assert_eq!(r.verdict.status, VerdictStatus::CannotTell);
    assert!(
        r.verdict.headline.contains("GPU metrics only"),
        "{}",
        r.verdict.headline
    );
    assert!(r.phases.is_empty(), "{:?}", r.phases);
    assert!(r.recommendations.is_empty());
    assert!(r.slo.iter().all(|s| s.status == SloStatus::NotExercised));
}

/// Class 6: one scrape of `/metrics` holds no rate: it says so.
#[test]
fn one_scrape_cannot_tell() {
    let files: Vec<_> = sample_files("a10g-qwen3b-ramp")
        .into_iter()
        .filter(|(p, _)| p.contains("vllm"))
        .take(1)
        .collect();
    let r = report_of("one-scrape", &files, &Settings::default());
    assert_eq!(r.verdict.status, VerdictStatus::CannotTell);
    assert!(
        r.verdict.headline.contains("scraped 1 time"),
        "{}",
        r.verdict.headline
    );
    assert!(r.phases.is_empty(), "{:?}", r.phases);
}

/// Class 6: two models are both named; the report judges one, says which
/// and why, and writes its alerts for that model.
#[test]
fn two_models_are_named_and_one_is_judged() {
    let mut files = sample_files("two-replicas-rr");
    for (path, bytes) in files.iter_mut() {
        if path.contains("vllm-1/") {
            let text = String::from_utf8(std::mem::take(bytes)).expect("utf-8");
            *bytes = text
                .replace(
                    "model_name=\"Qwen/Qwen2.5-3B-Instruct\"",
                    "model_name=\"other/model\"",
                )
                .into_bytes();
        }
    }
    let r = report_of("two-models", &files, &Settings::default());
    let models: Vec<&str> = r
        .deployment
        .models
        .iter()
        .map(|m| m.model.as_str())
        .collect();
    assert_eq!(models.len(), 2, "{models:?}");
    assert!(models.contains(&"other/model"), "{models:?}");
    let judged = &r.deployment.models[0];
    assert!(judged.judged && !r.deployment.models[1].judged);
    assert_eq!(r.deployment.model.as_deref(), Some(judged.model.as_str()));
    let narrative = r.verdict.narrative.join(" ");
    for m in &models {
        assert!(narrative.contains(m), "{m}: {narrative}");
    }
    for s in &r.alerts {
        assert!(s.expr.contains(&judged.model), "{}", s.expr);
        assert!(
            !s.expr.contains(&r.deployment.models[1].model),
            "{}",
            s.expr
        );
    }
    // The judged model's replicas only.
    assert_eq!(r.deployment.replicas, judged.replicas);
}

/// Class 4: a KV pool fixed by `num_gpu_blocks_override` does not grow
/// with memory: the advice for preemptions offers the other levers.
#[test]
fn a_fixed_kv_pool_gets_no_memory_advice() {
    let r = crate::support::sample_report("saturated", &Settings::default());
    let tune = r
        .recommendations
        .iter()
        .find(|x| x.id == crate::support::rec("tune_for_preemptions"))
        .expect("preemptions advice");
    assert!(tune.levers.iter().any(|l| l.knob == Knob::KvCacheMemory));
    let mut files = sample_files("saturated");
    let mut changed = false;
    for (path, bytes) in files.iter_mut() {
        if path.contains("vllm") {
            let text = String::from_utf8(std::mem::take(bytes)).expect("utf-8");
            changed |= text.contains("num_gpu_blocks_override=\"None\"");
            *bytes = text
                .replace(
                    "num_gpu_blocks_override=\"None\"",
                    "num_gpu_blocks_override=\"2048\"",
                )
                .into_bytes();
        }
    }
    assert!(changed, "the sample exports num_gpu_blocks_override");
    let r = report_of("saturated-override", &files, &Settings::default());
    assert!(r.capacity.blocks_overridden);
    let tune = r
        .recommendations
        .iter()
        .find(|x| x.id == crate::support::rec("tune_for_preemptions"))
        .expect("preemptions advice");
    assert!(
        !tune.levers.iter().any(|l| l.knob == Knob::KvCacheMemory),
        "{:?}",
        tune.levers
    );
    assert!(
        !tune.action.contains("gpu-memory-utilization"),
        "{}",
        tune.action
    );
}

/// Class 4: quantization is never offered for an inter-token objective that
/// FP8 weights cannot reach on this hardware (half the decode floor still
/// above it).
#[test]
fn quantization_never_promises_an_unreachable_objective() {
    let r = crate::support::sample_report("saturated", &Settings::default());
    let floor = r.capacity.itl_floor_ms.expect("a decode floor");
    let settings = Settings {
        slo: SloThresholds {
            itl_p95_ms: (floor / 2.0 * 0.8).max(1.0),
            ..SloThresholds::default()
        },
        ..Settings::default()
    };
    let r = crate::support::sample_report("saturated", &settings);
    for x in r
        .recommendations
        .iter()
        .filter(|x| x.id == crate::support::rec("quantize_before_buying"))
    {
        assert!(
            !x.addresses.iter().any(|a| a.slo() == Some(SloId::ItlP95)),
            "{:?}: {}",
            x.addresses,
            x.rationale
        );
    }
}

/// Class 5: the share of a latency beyond three times its objective is read
/// from the buckets, with its bounds, never "1 %".
#[test]
fn a_stall_states_the_share_the_buckets_prove() {
    let mut seen = 0;
    for name in SAMPLES {
        let r = crate::support::sample_report(name, &Settings::default());
        for f in r.analyses.iter().flat_map(|a| a.findings.iter()) {
            if matches!(
                f.id,
                vllm_lens_core::analysis::FindingId::LatencyTtftStall
                    | vllm_lens_core::analysis::FindingId::LatencyItlStall
            ) {
                seen += 1;
                assert!(!f.title.starts_with("1 % of"), "{name}: {}", f.title);
                assert!(f.title.contains(" % of "), "{name}: {}", f.title);
            }
        }
    }
    assert!(seen > 0, "no sample stalls");
}

/// Class 5: DCGM's energy counter moves in steps of its collect interval;
/// windows shorter than two steps give no tokens per joule.
#[test]
fn tokens_per_joule_needs_two_energy_steps() {
    let r = crate::support::sample_report(
        "a10g-qwen3b-ramp",
        &Settings {
            window_ms: 15_000,
            ..Settings::default()
        },
    );
    let any = r
        .rows
        .memory
        .iter()
        .any(|m| m.fields.tokens_per_joule.is_some());
    let coarse = crate::support::sample_report("a10g-qwen3b-ramp", &Settings::default());
    assert!(
        coarse
            .rows
            .memory
            .iter()
            .any(|m| m.fields.tokens_per_joule.is_some())
    );
    assert!(
        !any,
        "15 s windows against a 15 s-or-longer energy step give tokens per joule"
    );
    assert!(r.summary.memory.tokens_per_joule.is_some());
}

/// Every report's advice is consistent on its levers and claims.
fn consistent(r: &Report) -> Result<(), String> {
    let status = |id: SloId| r.slo.iter().find(|s| s.id == id).map(|s| s.status);
    for (i, a) in r.recommendations.iter().enumerate() {
        for b in &r.recommendations[i + 1..] {
            for la in &a.levers {
                if let Some(lb) = b.levers.iter().find(|lb| la.opposes(**lb)) {
                    return Err(format!("{} turns {la:?}, {} turns {lb:?}", a.id, b.id));
                }
            }
        }
        for s in &a.claims_hold {
            if status(*s) != Some(SloStatus::Pass) {
                return Err(format!("{} says {s} holds: {:?}", a.id, status(*s)));
            }
        }
        let words = format!("{} {}", a.rationale, a.action).to_lowercase();
        if ["still holds", "objective holds", "objective is met"]
            .iter()
            .any(|w| words.contains(w))
            && a.claims_hold.is_empty()
        {
            return Err(format!(
                "{}'s words claim an objective holds: {words}",
                a.id
            ));
        }
        for t in &a.addresses {
            if let Some(s) = t.slo()
                && !matches!(status(s), Some(SloStatus::Fail | SloStatus::CannotTell))
            {
                return Err(format!("{} addresses {s}, which is {:?}", a.id, status(s)));
            }
        }
    }
    Ok(())
}

/// A bundle's files: (path, bytes).
type Files = Vec<(String, Vec<u8>)>;

/// Every sample and real capture, its files.
fn pool() -> &'static Vec<(String, Files)> {
    static POOL: OnceLock<Vec<(String, Files)>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut out: Vec<(String, Files)> = SAMPLES
            .iter()
            .map(|n| (n.to_string(), sample_files(n)))
            .collect();
        let real = root().join("samples/real");
        let mut zips: Vec<_> = std::fs::read_dir(&real)
            .expect("samples/real")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "zip"))
            .collect();
        zips.sort();
        for z in zips {
            let name = z
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            out.push((format!("real/{name}"), members(&z)));
        }
        out
    })
}

/// Default, strict and lax objectives; an objective not named keeps its
/// default.
fn objectives_at(i: usize) -> SloThresholds {
    let d = SloThresholds::default();
    [
        d,
        SloThresholds {
            ttft_p95_ms: 100.0,
            itl_p95_ms: 20.0,
            queue_concurrency: 4.0,
            error_abort_pct: 0.1,
            ..d
        },
        SloThresholds {
            ttft_p95_ms: 60_000.0,
            itl_p95_ms: 1000.0,
            queue_concurrency: 64.0,
            error_abort_pct: 10.0,
            ..d
        },
    ][i]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// For any sample and any subset of its (1-minute) windows, under
    /// default, strict and lax objectives: no two recommendations turn one
    /// knob opposite ways, none claims an objective holds that does not
    /// pass, and none addresses one that passes.
    #[test]
    fn any_subset_of_windows_gives_consistent_advice(
        pick in any::<prop::sample::Index>(),
        mask in any::<u64>(),
        objectives in 0usize..3,
        window in prop::sample::select(vec![30_000i64, 60_000, 120_000]),
    ) {
        let (name, files) = &pool()[pick.index(pool().len())];
        let t0 = first_time(files);
        let kept: Vec<(String, Vec<u8>)> = files
            .iter()
            .filter(|(p, _)| {
                time_of(p).is_none_or(|t| mask >> (((t - t0) / 60_000) % 64) & 1 == 1)
            })
            .cloned()
            .collect();
        let vllm = kept.iter().filter(|(p, _)| p.contains("vllm") && time_of(p).is_some()).count();
        prop_assume!(vllm >= 2);
        let r = report_of(name, &kept, &Settings {
            window_ms: window,
            slo: objectives_at(objectives),
            ..Settings::default()
        });
        let ok = consistent(&r);
        prop_assert!(ok.is_ok(), "{name}, mask {mask:#x}, objectives {objectives}: {:?}", ok.err());
    }
}
