//! What the engine cannot see (issue [2/3] of the judgement's third
//! round): the provisioning, where to look next, the tuning guide's
//! follow-ups, the gauges held against Little's law, and disconnects as a
//! lower bound. On the guide's own sample, a simulated fleet, the saturated
//! sample, a simulated engine whose gauges are stale, and real captures.

use vllm_lens_core::analysis::ids::{FindingId, FollowUpId, LookNextId, PhaseKind, SloId};
use vllm_lens_core::analysis::model::{ProvisioningStatus, Report};
use vllm_lens_core::analysis::{BundleMeta, Settings, analyse};
use vllm_lens_sim::scenario::Scenario;
use vllm_lens_sim::{generate, zip_bundle};

use crate::support::{SAMPLES, load_bytes, root, sample_report};

fn scenario(name: &str) -> Scenario {
    let path = root().join(format!("samples/scenarios/{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn simulate(name: &str, s: Scenario) -> Report {
    let zip = zip_bundle(&generate(s.resolve().expect("resolves")));
    let loaded = load_bytes(&format!("{name}.zip"), &zip);
    analyse(&loaded, &BundleMeta::default(), &Settings::default()).expect("report")
}

fn finding(r: &Report, id: FindingId) -> Option<&str> {
    r.analyses
        .iter()
        .flat_map(|a| &a.findings)
        .find(|f| f.id == id)
        .map(|f| f.title.as_str())
}

fn look_next(r: &Report) -> Vec<LookNextId> {
    r.verdict.look_next.iter().map(|l| l.id).collect()
}

/// The guide's deployment: the configuration holds every objective, the
/// department is over-provisioned, and "it feels slow" is to be looked for
/// in the front end, the gateway and the prompt, with the guide's seven
/// follow-ups in its own terms.
#[test]
fn the_guides_sample_is_over_provisioned_and_points_outside_the_engine() {
    let r = sample_report("a10g-qwen3b-ramp", &Settings::default());
    let p = &r.capacity.provisioning;
    println!("{}\n{}", r.verdict.headline, p.explanation);
    assert_eq!(p.status, ProvisioningStatus::Over, "{}", p.explanation);
    let x = p.headroom_x.expect("headroom");
    assert!(x >= 2.0, "{x}");
    assert!(p.limiting.is_some() && !p.cannot_prove.is_empty());
    assert!(
        r.verdict.headline.contains("Over-provisioned")
            && r.verdict.headline.contains("outside the engine"),
        "{}",
        r.verdict.headline
    );
    let ln = look_next(&r);
    assert_eq!(
        &ln[..2],
        &[LookNextId::FrontEnd, LookNextId::GatewayOrNetwork],
        "{ln:?}"
    );
    assert!(ln.contains(&LookNextId::ClientMaxTokens) && ln.contains(&LookNextId::PromptPrefix));
    assert!(!ln.contains(&LookNextId::Engine));
    // The front end's evidence quotes the engine's TTFT as the engine's,
    // and the HTTP duration against the engine's e2e.
    let fe = &r.verdict.look_next[0].evidence;
    assert!(
        fe.contains("vllm:time_to_first_token_seconds")
            && fe.contains("http_request_duration_highr_seconds"),
        "{fe}"
    );
    let follow: Vec<FollowUpId> = r.verdict.follow_ups.iter().map(|f| f.id).collect();
    assert_eq!(follow, FollowUpId::ALL, "{follow:?}");
    for f in &r.verdict.follow_ups {
        assert!(
            f.evidence.chars().any(|c| c.is_ascii_digit()),
            "{}: {}",
            f.id,
            f.evidence
        );
    }
    // Every latency objective says where it is measured.
    for s in r
        .slo
        .iter()
        .filter(|s| matches!(s.id, SloId::TtftP95 | SloId::ItlP95))
    {
        assert!(s.title.contains("in the engine"), "{}", s.title);
    }
    // The prefix advice: the guide's benchmark, named as such, with the gain.
    let rec = r
        .recommendations
        .iter()
        .find(|x| x.id.as_str() == "standardise_prompt_prefix")
        .expect("standardise_prompt_prefix");
    assert!(
        rec.rationale.contains("32 %")
            && rec.rationale.contains("tuning guide's benchmark")
            && rec.rationale.contains("prefill tokens per request"),
        "{}",
        rec.rationale
    );
}

/// 64 H100s at a small share of their capacity: over-provisioned, with what
/// could be given back. The committed scenario, shortened to 15 minutes
/// (the load is flat: the hour adds nothing but time).
#[test]
fn a_fleet_far_from_its_limits_names_what_to_give_back() {
    let mut s = scenario("fleet-hour");
    s.duration_s = 900.0;
    let r = simulate("fleet-hour", s);
    let p = &r.capacity.provisioning;
    println!("{}\n{}", r.verdict.headline, p.explanation);
    for g in &p.give_back {
        println!("  give back {}: {} ({})", g.id, g.title, g.evidence);
    }
    assert_eq!(p.status, ProvisioningStatus::Over, "{}", p.explanation);
    assert!(!p.give_back.is_empty(), "{}", p.explanation);
    let fewer = p
        .give_back
        .iter()
        .find(|g| g.id == "fewer_replicas")
        .expect("fewer_replicas");
    assert!(fewer.title.starts_with("8 → "), "{}", fewer.title);
    assert!(r.verdict.headline.contains("Over-provisioned"));
}

/// The saturated sample fails its latency objective under its load: under-
/// provisioned, naming what runs out first.
#[test]
fn a_saturated_server_is_under_provisioned() {
    let r = sample_report("saturated", &Settings::default());
    let p = &r.capacity.provisioning;
    println!("{}\n{}", r.verdict.headline, p.explanation);
    assert_eq!(p.status, ProvisioningStatus::Under, "{}", p.explanation);
    assert!(p.limiting.is_some());
    assert!(p.give_back.is_empty());
    assert!(r.verdict.headline.contains("Under-provisioned"));
    assert_eq!(look_next(&r).first(), Some(&LookNextId::Engine));
    assert!(r.verdict.follow_ups.is_empty());
}

/// A simulated engine whose running and waiting gauges read 0 at nine
/// scrapes in ten (as a real 0.23.0 with two API servers did) while 14
/// users keep it busy: the report says the gauges disagree with Little's
/// law, quotes Little's figure in the phase and never "~1 request in
/// flight".
#[test]
fn stale_gauges_are_caught_by_littles_law() {
    let text = std::fs::read_to_string(root().join("samples/scenarios/a10g-qwen3b-ramp.toml"))
        .expect("scenario");
    // 14 closed-loop users throughout.
    let text = text.replace("phases = [[0, 8], [300, 32]]", "phases = [[0, 14]]");
    assert!(text.contains("[[0, 14]]"));
    let mut s = Scenario::from_toml(&text).expect("parses");
    s.server.stale_gauges = 10;
    let r = simulate("stale-gauges", s);
    let title = finding(&r, FindingId::DataQualityGaugesDisagree).expect("gauges_disagree");
    println!("{title}");
    assert!(title.contains("Little's law"), "{title}");
    let steady: Vec<_> = r
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Steady)
        .collect();
    assert!(!steady.is_empty());
    for p in steady {
        println!("{}", p.description);
        let little = p.in_flight_from_latency.expect("Little's figure");
        assert!((12.0..=15.0).contains(&little), "{little}");
        assert!(p.in_flight_avg.expect("gauges") < 3.0);
        assert!(
            p.description.starts_with(&format!(
                "~{} requests in the engine by Little's law",
                little.round()
            )),
            "{}",
            p.description
        );
        assert!(!p.description.contains("~1 request in flight"));
    }
    // Nothing queued (the sim has 256 slots): no queueing start read off
    // the stale gauges.
    assert_eq!(r.capacity.queueing_starts_at, None);
}

/// The property: on every sample and every real capture, a phase whose
/// gauges and Little's-law figure differ by more than 2× and 2 requests
/// comes with the finding (restarts and down time aside: requests lost
/// there finish nowhere).
#[test]
fn gauges_that_contradict_littles_law_are_always_flagged() {
    let mut reports: Vec<(String, Report)> = SAMPLES
        .iter()
        .map(|n| (n.to_string(), sample_report(n, &Settings::default())))
        .collect();
    for c in crate::real::captures() {
        let r = crate::real::report(&c);
        reports.push((c.name, r));
    }
    let mut flagged = 0;
    for (name, r) in &reports {
        let has = finding(r, FindingId::DataQualityGaugesDisagree).is_some();
        flagged += usize::from(has);
        for p in &r.phases {
            if matches!(p.kind, PhaseKind::Restart | PhaseKind::Down) {
                continue;
            }
            let (Some(g), Some(l)) = (p.in_flight_avg, p.in_flight_from_latency) else {
                continue;
            };
            let (lo, hi) = (g.min(l), g.max(l));
            let differ = hi - lo > 2.0 && (lo <= 0.0 || hi / lo > 2.0);
            println!(
                "{name} {:?}: gauges {g:.1}, Little's {l:.1}{}",
                p.kind,
                if differ { " (differ)" } else { "" }
            );
            assert!(
                !differ || has,
                "{name}: a {:?} phase reads {g:.1} in flight by the gauges and {l:.1} by Little's law, without data_quality.gauges_disagree",
                p.kind
            );
        }
    }
    // The property is exercised: the stale real capture is among them.
    assert!(flagged >= 1, "no report flags its gauges");
}

/// Real vLLM 0.23.0 with `--api-server-count 2` and clients hanging up
/// after 4 s: the disconnects are reported as at least N, and the client's
/// own count of time-outs is at or above N.
#[test]
fn disconnects_on_a_real_capture_are_a_lower_bound() {
    let c = crate::real::captures()
        .into_iter()
        .find(|c| c.name == "api2-timeouts-v023")
        .expect("samples/real/api2-timeouts-v023.zip");
    let r = crate::real::report(&c);
    let n = r.summary.outcomes.client_disconnects.expect("an estimate");
    let timeouts = c.requests.iter().filter(|q| q.outcome == "timeout").count() as f64;
    let title = finding(&r, FindingId::OutcomesClientDisconnects).expect("client_disconnects");
    println!(
        "{title}\nclient time-outs {timeouts}, visible to the engine {}",
        crate::real::visible_time_outs(&c)
    );
    assert!(n > 0.0);
    assert!(title.starts_with("At least"), "{title}");
    assert!(title.contains("lower bound"), "{title}");
    assert!(timeouts >= n, "client {timeouts} < estimate {n}");
}

/// The first figure after `marker` in `text`.
fn figure_after(text: &str, marker: &str) -> Option<f64> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let n: String = rest
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    n.trim_end_matches('.').parse().ok()
}

/// The verdict's "set the autoscaling trigger" follow-up names the same
/// in-flight target as the KEDA trigger the report ships (what the capture
/// measured), not the headroom's extrapolation beyond the peak.
#[test]
fn the_trigger_follow_up_and_the_keda_trigger_agree() {
    let mut both = 0;
    for name in SAMPLES {
        let r = sample_report(name, &Settings::default());
        let follow = r
            .verdict
            .follow_ups
            .iter()
            .find(|f| f.id == FollowUpId::SetAutoscalingTrigger);
        let keda = r.alerts.iter().find(|a| a.kind == "keda");
        let (Some(f), Some(k)) = (follow, keda) else {
            continue;
        };
        both += 1;
        let said = figure_after(&f.evidence, "a trigger at ~").expect("the follow-up's target");
        let kept = figure_after(&k.text, "Keeps about").expect("the KEDA target");
        assert_eq!(said, kept, "{name}: {} against {}", f.evidence, k.text);
    }
    assert!(both >= 1, "no sample has both");
}
