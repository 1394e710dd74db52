//! Every sentence true (issue 29): one test per class of false claim an
//! SRE found on captures the project had never seen, each on a capture made
//! for it, and a scan of every sample's Markdown for the phrases that gave
//! them away.

use vllm_lens_core::analysis::FindingId;
use vllm_lens_core::analysis::model::{QualityKind, QueueingDecidedBy};
use vllm_lens_core::analysis::{PhaseKind, Settings, SloId};

use crate::capacity::{Limited, limited};
use crate::support::sample_report;

/// Class 1: one restart of one process is one restart, however many
/// counter series it reset; the series are counted apart.
#[test]
fn restarts_are_counted_per_process_not_per_series() {
    let r = sample_report("pod-restart", &Settings::default());
    let q = &r.data_quality;
    assert_eq!(q.restarts, 1, "one process restarted once");
    assert!(q.resets > 1, "it reset many series: {}", q.resets);
    let note = q
        .notes
        .iter()
        .find(|n| n.kind == QualityKind::Reset)
        .expect("a reset note");
    assert_eq!(
        note.message,
        format!(
            "1 restart of a process (vllm-0), which reset its counters: {} counter resets across the series (each series once per restart), read as restarts from zero, never as negative increases",
            q.resets
        )
    );
    let md = vllm_lens_core::render::markdown(&r);
    assert!(!md.contains("counter resets (restarts)"), "{md}");
}

/// Class 2: a server capped at 8 whose queue shows one waiting request at
/// 4 in flight for a single scrape (between two engine steps), and once
/// for two scrapes (a preempted request): neither is where queueing
/// starts. The cap decides it (running 8 while others wait → from 9), and
/// the report says which evidence decided.
#[test]
fn queueing_starts_from_sustained_waiting_or_the_cap() {
    let r = limited(&Limited {
        v0: false,
        running: |level, step| {
            if matches!(step, 7 | 9 | 10) {
                level - 1
            } else {
                level.min(8)
            }
        },
        kv: 0.3,
        preemptions: 0,
        cmdline: None,
    });
    let s = r
        .slo
        .iter()
        .find(|s| s.id == SloId::QueueAtConcurrency)
        .expect("queue objective");
    assert_eq!(s.admission_cap, Some(8.0));
    assert_eq!(s.queueing_starts_at, Some(9.0), "{}", s.explanation);
    assert_eq!(s.queueing_decided_by, Some(QueueingDecidedBy::AdmissionCap));
    assert!(
        s.explanation
            .contains("Queueing was seen from 9 requests in flight (decided by the admission cap"),
        "{}",
        s.explanation
    );
    assert_eq!(r.capacity.queueing_starts_at, Some(9.0));
    assert!(
        s.explanation
            .contains("2 sightings below that (4, 4 in flight) are too few"),
        "{}",
        s.explanation
    );
    let queued = r
        .analyses
        .iter()
        .flat_map(|a| &a.findings)
        .find(|f| f.id == FindingId::LatencyQueueing)
        .expect("the queueing finding");
    assert!(
        queued
            .title
            .contains("from 9 requests in flight (decided by the admission cap"),
        "{}",
        queued.title
    );
    let md = vllm_lens_core::render::markdown(&r);
    assert!(!md.contains("from 4 "), "{md}");
    assert!(md.contains("Requests queue from 9 in flight"), "{md}");
}

/// Class 3: a load level whose queue grows across it (saturated: about 4
/// waiting at its start, 19 at its end) is an overload with its trend,
/// never "steady".
#[test]
fn a_level_whose_queue_grows_is_an_overload() {
    let r = sample_report("saturated", &Settings::default());
    let p = r
        .phases
        .iter()
        .find(|p| p.kind == PhaseKind::Overload)
        .unwrap_or_else(|| panic!("an overload phase: {:#?}", r.phases));
    let t = p.queue_trend.as_ref().expect("its trend");
    let w = t.waiting.expect("waiting");
    assert!(w.first < 5.0 && w.last > 15.0, "{w:?}");
    assert!(
        p.description
            .starts_with("The queue grew across it (requests waiting 4 → 19"),
        "{}",
        p.description
    );
    for s in r.phases.iter().filter(|p| p.kind == PhaseKind::Steady) {
        assert!(
            !s.queue_trend
                .as_ref()
                .and_then(|t| t.waiting)
                .is_some_and(|w| w.last - w.first >= 3.0),
            "a steady phase whose queue grows: {s:#?}"
        );
    }
    let md = vllm_lens_core::render::markdown(&r);
    assert!(md.contains("overload: the queue grew across it"), "{md}");
}
