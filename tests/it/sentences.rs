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

/// The healthy ramp sample (one A10G, 40 DCGM scrapes 15 s apart) with
/// lines added to GPU 0's scrapes: `extra(labels, i)` for the i-th scrape,
/// `labels` the GPU's own label set.
fn ramp_with_dcgm(extra: fn(&str, usize) -> String) -> vllm_lens_core::analysis::model::Report {
    use std::io::Read;
    let bytes =
        std::fs::read(crate::support::root().join("samples/a10g-qwen3b-ramp.zip")).expect("sample");
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).expect("entry");
        let mut b = Vec::new();
        f.read_to_end(&mut b).expect("read");
        files.push((f.name().expect("name").to_string(), b));
    }
    let mut dcgm: Vec<usize> = (0..files.len())
        .filter(|&i| files[i].0.contains("/dcgm-0/"))
        .collect();
    dcgm.sort_by(|a, b| files[*a].0.cmp(&files[*b].0));
    assert_eq!(dcgm.len(), 40);
    for (n, &i) in dcgm.iter().enumerate() {
        let text = String::from_utf8(files[i].1.clone()).expect("utf-8");
        let line = text
            .lines()
            .find(|l| l.starts_with("DCGM_FI_DEV_SM_CLOCK{"))
            .expect("an SM clock line");
        let labels = &line[line.find('{').expect("{") + 1..line.find('}').expect("}")];
        files[i].1 = format!("{text}{}", extra(labels, n)).into_bytes();
    }
    let bundle = crate::support::zip(&files, true);
    vllm_lens_core::analysis::analyse(
        &crate::support::load_bytes("gpu-fault.zip", &bundle),
        &vllm_lens_core::analysis::BundleMeta::default(),
        &Settings::default(),
    )
    .expect("report")
}

/// The time of GPU 0's n-th DCGM scrape in the ramp sample.
fn dcgm_scrape_ms(r: &vllm_lens_core::analysis::model::Report, n: usize) -> i64 {
    // The sample's DCGM scrapes are 15 s apart from 14:00:00.160.
    r.bundle.start_ms.expect("start") / 1000 * 1000 + 160 + 15_000 * n as i64
}

/// Class 4: a GPU that reports XID 79 from its 21st scrape, two double-bit
/// ECC errors from its 26th and hw_thermal in four scrapes (beside the
/// software power cap, which is normal) puts a healthy capture at risk;
/// one recommendation names the GPU, each fault, its time and metric.
#[test]
fn a_gpu_fault_puts_the_verdict_at_risk_and_names_the_gpu() {
    use vllm_lens_core::analysis::TimelineKind;
    use vllm_lens_core::analysis::ids::GpuFaultKind;
    use vllm_lens_core::analysis::model::{Severity, VerdictStatus};
    let r = ramp_with_dcgm(|labels, n| {
        let mut s = String::new();
        if n >= 20 {
            s.push_str(&format!(
                "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\nDCGM_FI_DEV_XID_ERRORS{{{labels},err_code=\"79\",err_msg=\"GPU has fallen off the bus\"}} 79\n"
            ));
        }
        s.push_str(&format!(
            "# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter\nDCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{labels}}} {}\n",
            if n >= 25 { 2 } else { 0 }
        ));
        s.push_str(&format!(
            "# TYPE DCGM_FI_DEV_CLOCKS_EVENT_REASONS gauge\nDCGM_FI_DEV_CLOCKS_EVENT_REASONS{{{labels}}} {}\n",
            if (30..34).contains(&n) { 0x44 } else { 0x4 }
        ));
        s
    });
    let gpu = "GPU 0 (NVIDIA A10G) on ip-10-0-1-195.ec2.internal";
    let kinds: Vec<GpuFaultKind> = r.gpu_faults.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec![
            GpuFaultKind::Xid,
            GpuFaultKind::EccDoubleBit,
            GpuFaultKind::ClocksHeld
        ],
        "{:#?}",
        r.gpu_faults
    );
    let (xid, ecc, clocks) = (&r.gpu_faults[0], &r.gpu_faults[1], &r.gpu_faults[2]);
    assert_eq!(xid.name, gpu);
    assert_eq!(xid.value, 79.0);
    assert_eq!(
        xid.seen_ms,
        dcgm_scrape_ms(&r, 20),
        "the scrape that showed it"
    );
    assert!(!xid.before_capture);
    assert_eq!(
        (xid.scrapes, xid.of),
        (20, 20),
        "the series appears with the XID"
    );
    assert_eq!((ecc.value, ecc.new), (2.0, Some(2.0)));
    assert_eq!(ecc.seen_ms, dcgm_scrape_ms(&r, 25));
    assert_eq!(clocks.detail, "clocks held down by hw_thermal");
    assert_eq!(
        clocks.value, 64.0,
        "the fault bits only: sw_power_cap is not one"
    );
    assert_eq!((clocks.scrapes, clocks.of), (4, 40));

    let at = |n| vllm_lens_core::analysis::time::hhmm(dcgm_scrape_ms(&r, n));
    assert_eq!(
        r.verdict.status,
        VerdictStatus::AtRisk,
        "{}",
        r.verdict.headline
    );
    let xid_words = format!(
        "{gpu} reported XID 79 (GPU has fallen off the bus) from {}, counts 2 double-bit ECC errors (all during the capture) and had its clocks held down by hw_thermal in 4 of its 40 scrapes, the first at {} (DCGM_FI_DEV_XID_ERRORS, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, DCGM_FI_DEV_CLOCKS_EVENT_REASONS)",
        at(20),
        at(30)
    );
    let risk = format!("At risk: no objective fails, but {xid_words}.");
    let rest = r
        .verdict
        .headline
        .strip_prefix(&risk)
        .unwrap_or_else(|| panic!("{}", r.verdict.headline));
    // The provisioning may follow, but a failing GPU is inside the engine:
    // the verdict must not send the reader elsewhere.
    assert!(
        rest.is_empty() || rest.starts_with(" Over-provisioned: "),
        "{rest}"
    );
    assert!(!rest.contains("outside the engine"), "{rest}");
    for id in [
        FindingId::HardwareXid,
        FindingId::HardwareMemoryErrors,
        FindingId::HardwareClocksHeld,
    ] {
        let f = r
            .analyses
            .iter()
            .flat_map(|a| a.findings.iter())
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("{id} fired"));
        assert_eq!(f.severity, Severity::Fail);
        assert!(f.title.starts_with(gpu), "{}", f.title);
    }
    let rec = r
        .recommendations
        .iter()
        .find(|x| x.id == crate::support::rec("investigate_gpu_fault"))
        .expect("the GPU is diagnosed");
    assert_eq!(
        rec.title,
        format!("Diagnose {gpu}: it reported a hardware fault")
    );
    assert!(
        rec.action
            .contains("look XID 79 up in NVIDIA's XID catalogue"),
        "{}",
        rec.action
    );
    assert!(rec.action.contains("dcgmi diag -r 3"), "{}", rec.action);
    assert_eq!(rec.rationale, format!("{xid_words}."));
    assert!(
        rec.action.contains("PERFORMANCE,TEMPERATURE,POWER"),
        "{}",
        rec.action
    );
    assert_eq!(rec.evidence.len(), 3);
    let event = r
        .timeline
        .iter()
        .find(|e| e.kind == TimelineKind::Xid)
        .expect("an XID event");
    assert_eq!(event.time_ms, xid.seen_ms, "the time of its evidence");
    assert!(
        r.timeline
            .iter()
            .any(|e| e.kind == TimelineKind::GpuFault && e.time_ms == ecc.seen_ms)
    );
}

/// What is not a fault: idle and the software power cap among the clock
/// reasons, a last XID of 0, no remapped rows and no failed remap.
#[test]
fn normal_clock_reasons_and_zero_counts_are_not_faults() {
    use vllm_lens_core::analysis::model::VerdictStatus;
    let r = ramp_with_dcgm(|labels, n| {
        format!(
            "DCGM_FI_DEV_XID_ERRORS{{{labels}}} 0\n\
             DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{{labels}}} 0\n\
             DCGM_FI_DEV_ROW_REMAP_FAILURE{{{labels}}} 0\n\
             DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{{{labels}}} {}\n",
            if n % 2 == 0 { 0x1 } else { 0x4 | 0x2 }
        )
    });
    assert!(r.gpu_faults.is_empty(), "{:#?}", r.gpu_faults);
    assert_eq!(
        r.verdict.status,
        VerdictStatus::Healthy,
        "{}",
        r.verdict.headline
    );
}

/// Every sample and every real capture's report, with its name.
fn every_report() -> Vec<(String, vllm_lens_core::analysis::model::Report)> {
    let mut out: Vec<(String, vllm_lens_core::analysis::model::Report)> = crate::support::SAMPLES
        .iter()
        .map(|n| (n.to_string(), sample_report(n, &Settings::default())))
        .collect();
    let dir = crate::support::root().join("samples/real");
    let mut zips: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .expect("samples/real")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "zip"))
        .collect();
    zips.sort();
    for z in zips {
        let name = z
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string();
        let bytes = std::fs::read(&z).expect("capture");
        let r = vllm_lens_core::analysis::analyse(
            &crate::support::load_bytes(&name, &bytes),
            &vllm_lens_core::analysis::BundleMeta::default(),
            &Settings::default(),
        )
        .expect("report");
        out.push((format!("real/{name}"), r));
    }
    out
}

/// Class 5: "met the objectives up to N in flight" rests on 3 windows
/// within 10 % of N, or on a load phase of 3 windows whose own p95 met
/// it at a mean of N; never below a load phase the report shows meeting
/// it; a higher concurrency proved by fewer windows is shown apart, and
/// with nothing else the figure says "not enough windows".
#[test]
fn meeting_an_objective_rests_on_enough_windows() {
    use vllm_lens_core::analysis::model::MeetingFrom;
    let min = vllm_lens_core::analysis::thresholds::MEETING_MIN_WINDOWS;
    let mut phase_decided = 0;
    for (name, r) in every_report() {
        let m = &r.capacity.max_concurrency_meeting;
        let slo = r.settings.slo;
        for (at, windows, from, too_few, objective, ttft) in [
            (
                m.ttft_p95,
                m.ttft_p95_windows,
                m.ttft_p95_from,
                m.ttft_p95_too_few,
                slo.ttft_p95_ms,
                true,
            ),
            (
                m.itl_p95,
                m.itl_p95_windows,
                m.itl_p95_from,
                m.itl_p95_too_few,
                slo.itl_p95_ms,
                false,
            ),
        ] {
            if let Some(at) = at {
                assert!(windows >= min, "{name}: {at} rests on {windows} windows");
                assert!(from.is_some(), "{name}");
                phase_decided += usize::from(from == Some(MeetingFrom::Phase));
            }
            if r.capacity.replicas > 1 {
                continue;
            }
            // Every load phase whose own p95 meets the objective: at or
            // below the figure, or shown as too few windows above it.
            for p in r.phases.iter().filter(|p| p.kind.is_load()) {
                let b = &p.figures.latency.bounds;
                let (bound, level) = if ttft {
                    (b.ttft_p95_ms, p.in_flight_avg)
                } else {
                    (b.itl_p95_ms, p.figures.efficiency.running_avg)
                };
                let (Some(bound), Some(level)) = (bound, level) else {
                    continue;
                };
                if bound.high.is_none_or(|h| h > objective) {
                    continue;
                }
                let level = (level * 10.0).round() / 10.0;
                let shown =
                    at.is_some_and(|a| a >= level) || too_few.is_some_and(|t| t.at >= level);
                assert!(
                    shown,
                    "{name}: a phase meets {} at {level}, the figure says {at:?} ({too_few:?})",
                    if ttft { "TTFT" } else { "ITL" }
                );
            }
        }
    }
    assert!(phase_decided > 0, "some figure rests on a phase");

    // A real server ramped 2 → 20 in flight against a cap of 16: no
    // concurrency has 3 proving windows, so there is no figure, and the
    // page says why.
    let bytes =
        std::fs::read(crate::support::root().join("samples/real/ramp-cap16.zip")).expect("capture");
    let r = vllm_lens_core::analysis::analyse(
        &crate::support::load_bytes("ramp-cap16.zip", &bytes),
        &vllm_lens_core::analysis::BundleMeta::default(),
        &Settings::default(),
    )
    .expect("report");
    let m = &r.capacity.max_concurrency_meeting;
    assert_eq!(m.ttft_p95, None);
    let t = m.ttft_p95_too_few.expect("why");
    assert!(t.windows < min);
    let html = vllm_lens_core::render::html(&r);
    let words = format!(
        "TTFT p95: not enough windows: at {} in flight only {} window{} proved it, too few to count (3 are needed)",
        vllm_lens_core::analysis::text::num(t.at),
        t.windows,
        if t.windows == 1 { "" } else { "s" }
    );
    assert!(html.contains(&words), "{words}");
}

/// Class 6: a real server whose prompts share their first 300 tokens (two
/// whole 128-token blocks, a 60 % hit rate), told the shared prefix is 100
/// or 200 tokens: what those allow (0 %, 30 %) is below what was served,
/// so it is no ceiling. The report says prompts share more than stated,
/// never "served against a ceiling", and gives no block-size advice.
#[test]
fn a_hit_rate_above_the_stated_prefix_is_no_ceiling() {
    use vllm_lens_core::analysis::RecId;
    let bytes = std::fs::read(crate::support::root().join("samples/real/prefix-long.zip"))
        .expect("capture");
    let loaded = crate::support::load_bytes("prefix-long.zip", &bytes);
    for (stated, allows) in [(100.0, 0.0), (200.0, 30.0)] {
        let r = vllm_lens_core::analysis::analyse(
            &loaded,
            &vllm_lens_core::analysis::BundleMeta::default(),
            &Settings {
                shared_prefix_tokens: Some(stated),
                ..Settings::default()
            },
        )
        .expect("report");
        let p = &r.capacity.prefix;
        let hit = p.hit_pct.expect("hit rate");
        assert!((hit - 60.3).abs() < 0.5, "{hit}");
        assert!(p.exceeded, "{stated}: {p:?}");
        assert_eq!(p.ceiling_pct.map(|c| c.round()), Some(allows));
        let findings: Vec<_> = r.analyses.iter().flat_map(|a| &a.findings).collect();
        assert!(
            !findings
                .iter()
                .any(|f| f.id == FindingId::EfficiencyPrefixCeiling),
            "{stated}"
        );
        let f = findings
            .iter()
            .find(|f| f.id == FindingId::EfficiencyPrefixAboveStated)
            .expect("the statement is short");
        assert_eq!(
            f.title,
            format!(
                "Prefix cache: 60 % served, more than the {allows:.0} % the stated {stated:.0}-token shared prefix allows: prompts share more than stated"
            )
        );
        let ids: Vec<RecId> = r.recommendations.iter().map(|x| x.id.clone()).collect();
        assert!(
            !ids.contains(&crate::support::rec("shrink_block_size"))
                && !ids.contains(&crate::support::rec("standardise_prompt_prefix")),
            "{stated}: {ids:?}"
        );
        let html = vllm_lens_core::render::html(&r);
        assert!(
            html.contains(&format!(
                "the stated {stated:.0}-token shared prefix allows only {} % in whole blocks, less than was served: prompts share more than stated",
                vllm_lens_core::analysis::text::num(p.ceiling_pct.expect("ceiling"))
            )),
            "{stated}"
        );
        assert!(!html.contains("never reused"), "{stated}");
    }
}

/// 20 scrapes 15 s apart of a server where, per scrape, 8 requests set no
/// max_tokens (so vLLM gives them max_model_len − prompt: 4,096 − 300) and
/// stop after 200 tokens, and `cut` set max_tokens 64 and end on length.
fn max_tokens_capture(cut: u64) -> vllm_lens_core::analysis::model::Report {
    use vllm_lens_core::{Input, MemoryFiles, Options, load};
    let mut files = MemoryFiles::default();
    let (mut stop, mut length) = (0u64, 0u64);
    for step in 0..20u32 {
        let at = crate::support::T0 + i64::from(step) * 15_000;
        stop += 8;
        length += cut;
        let n = stop + length;
        let (gen_sum, max_sum) = (stop * 200 + length * 64, stop * 3796 + length * 64);
        let hist = |name: &str, sum: u64| {
            format!(
                "# TYPE {name} histogram\n\
                 {name}_bucket{{le=\"+Inf\",model_name=\"m\"}} {n}\n\
                 {name}_sum{{model_name=\"m\"}} {sum}\n\
                 {name}_count{{model_name=\"m\"}} {n}\n"
            )
        };
        let text = format!(
            "# TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{model_name=\"m\"}} 6\n\
             # TYPE vllm:num_requests_waiting gauge\n\
             vllm:num_requests_waiting{{model_name=\"m\"}} 0\n\
             # TYPE vllm:request_success_total counter\n\
             vllm:request_success_total{{finished_reason=\"stop\",model_name=\"m\"}} {stop}\n\
             vllm:request_success_total{{finished_reason=\"length\",model_name=\"m\"}} {length}\n\
             # TYPE vllm:prompt_tokens_total counter\n\
             vllm:prompt_tokens_total{{model_name=\"m\"}} {}\n\
             # TYPE vllm:generation_tokens_total counter\n\
             vllm:generation_tokens_total{{model_name=\"m\"}} {gen_sum}\n\
             {}{}{}",
            n * 300,
            hist("vllm:request_generation_tokens", gen_sum),
            hist("vllm:request_params_max_tokens", max_sum),
            hist("vllm:request_prompt_tokens", n * 300),
        );
        files.push(&format!("vllm-0/{at}.prom"), text.into_bytes(), None);
    }
    let loaded = load(Input::Files(&mut files), &Options::default()).expect("loads");
    vllm_lens_core::analysis::analyse(
        &loaded,
        &vllm_lens_core::analysis::BundleMeta::default(),
        &Settings::default(),
    )
    .expect("report")
}

/// Class 7: requests that set no max_tokens get the server's default
/// (max_model_len − prompt, 3,796 tokens here), which inflates the mean
/// max_tokens: 20 % of requests end on length while answers "use 6 % of
/// max_tokens". The share ending on length comes first and the diluted
/// mean is named as such; a real capture with a quarter on length (steps:
/// 3,835 of 16,181) leads with that share too.
#[test]
fn the_share_ending_on_length_comes_before_a_diluted_mean() {
    use vllm_lens_core::analysis::model::Severity;
    let finding = |r: &vllm_lens_core::analysis::model::Report| {
        r.analyses
            .iter()
            .flat_map(|a| a.findings.iter())
            .find(|f| {
                matches!(
                    f.id,
                    FindingId::WorkloadTruncated
                        | FindingId::WorkloadPartlyTruncated
                        | FindingId::WorkloadNotTruncated
                )
            })
            .cloned()
            .expect("a truncation finding")
    };
    let r = max_tokens_capture(2);
    let w = &r.summary.workload;
    let util = w.max_tokens_utilisation_pct.expect("utilisation");
    assert!((util - 5.7).abs() < 0.1, "{util}");
    let f = finding(&r);
    assert_eq!(f.id, FindingId::WorkloadPartlyTruncated);
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.title,
        "20.0 % of requests end on length: their answers were cut at max_tokens; the mean max_tokens (3,050 tokens) includes requests that set none and got the server's default (max_model_len − prompt), so the 6 % of it answers use says nothing about the others"
    );
    // Most on length: cut off, and the advice does not quote the mean.
    let r = max_tokens_capture(12);
    let f = finding(&r);
    assert_eq!(f.id, FindingId::WorkloadTruncated);
    assert!(
        f.title.starts_with("Answers are cut off at max_tokens: 60.0 % of requests end on length; the mean max_tokens"),
        "{}",
        f.title
    );
    let rec = r
        .recommendations
        .iter()
        .find(|x| x.id == crate::support::rec("raise_max_tokens"))
        .expect("raise max_tokens");
    assert_eq!(
        rec.rationale,
        "60 % of requests end on length and answers use an unknown share of their own max_tokens (the mean includes server defaults): answers are being cut off, which users see as truncated output."
    );
    // No request on length: nothing cut, and no mean to doubt.
    let r = max_tokens_capture(0);
    let f = finding(&r);
    assert_eq!(f.id, FindingId::WorkloadNotTruncated);
    assert!(
        f.title
            .starts_with("Answers end on their own: 0 % of requests end on length"),
        "{}",
        f.title
    );

    let bytes =
        std::fs::read(crate::support::root().join("samples/real/steps.zip")).expect("capture");
    let r = vllm_lens_core::analysis::analyse(
        &crate::support::load_bytes("steps.zip", &bytes),
        &vllm_lens_core::analysis::BundleMeta::default(),
        &Settings::default(),
    )
    .expect("report");
    let f = finding(&r);
    assert_eq!(f.id, FindingId::WorkloadPartlyTruncated, "{}", f.title);
    assert!(
        f.title.starts_with("23.") && f.title.contains("% of requests end on length"),
        "{}",
        f.title
    );
}

/// Class 8: every timeline event at the time of its evidence. A scrape
/// missing at 00:01:45 is seen only when the next one arrives at 00:02:00,
/// in the next window; the event says 00:01:45. A failed scrape recorded
/// in a manifest (jitter-gaps) is placed at its own time.
#[test]
fn a_missing_scrape_is_placed_when_it_was_due() {
    use vllm_lens_core::analysis::TimelineKind;
    let mut files = crate::support::capture_80();
    let missing = crate::support::T0 + 7 * 15_000;
    files.retain(|(p, _)| p != &format!("vllm/{missing}.prom"));
    let r = vllm_lens_core::analysis::analyse(
        &crate::support::load_bytes("gap.zip", &crate::support::zip(&files, false)),
        &vllm_lens_core::analysis::BundleMeta::default(),
        &Settings::default(),
    )
    .expect("report");
    let gaps: Vec<_> = r
        .timeline
        .iter()
        .filter(|e| e.kind == TimelineKind::ScrapeGap)
        .collect();
    assert_eq!(gaps.len(), 1, "{gaps:#?}");
    assert_eq!(gaps[0].time_ms, missing, "when the scrape was due");
    assert_eq!(
        gaps[0].description,
        "vllm: 1 scrape missing or failed from 00:01:45, the next successful one at 00:02:00"
    );

    let r = sample_report("jitter-gaps", &Settings::default());
    let loaded = crate::engine::load_sample("jitter-gaps");
    let failed: Vec<i64> = loaded
        .store
        .targets()
        .iter()
        .filter(|t| t.name() == "vllm-0")
        .flat_map(|t| t.scrapes().iter().filter(|s| !s.up).map(|s| s.time_ms))
        .collect();
    assert_eq!(failed.len(), 2);
    let at: Vec<i64> = r
        .timeline
        .iter()
        .filter(|e| e.kind == TimelineKind::ScrapeGap && e.subject.as_str() == "vllm-0")
        .map(|e| e.time_ms)
        .collect();
    assert_eq!(at, failed, "each failed scrape at its own time");
}

/// The number just before `at` in `s` ("79" in "79 % served"), if any.
fn number_before(s: &str, at: usize) -> Option<f64> {
    let head = s[..at].trim_end();
    let start = head
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map_or(0, |i| i + 1);
    head[start..].replace(',', "").parse().ok()
}

/// The number at the start of `s`.
fn number_after(s: &str) -> Option<f64> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(s.len());
    s[..end].trim_end_matches('.').replace(',', "").parse().ok()
}

/// What the scan finds wrong in one report's words.
fn false_phrases(name: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Sentences (and lines) mentioning a burst never quote "0.0 %".
    for sentence in text.split(['\n', ';']).flat_map(|l| l.split(". ")) {
        if sentence.to_lowercase().contains("burst") && sentence.contains("0.0 %") {
            out.push(format!("{name}: a burst beside 0.0 %: {sentence}"));
        }
        // A phase line that says steady never describes a queue that grew.
        if sentence.contains("steady") && sentence.contains("queue grew") {
            out.push(format!("{name}: steady beside a growing queue: {sentence}"));
        }
    }
    // A ceiling is never below what was served.
    let key = " % served against a ceiling of ";
    let mut from = 0;
    while let Some(i) = text[from..].find(key) {
        let at = from + i;
        let served = number_before(text, at);
        let ceiling = number_after(&text[at + key.len()..]);
        if let (Some(s), Some(c)) = (served, ceiling)
            && s > c + 2.0
        {
            out.push(format!("{name}: {s} % served against a ceiling of {c} %"));
        }
        from = at + key.len();
    }
    out
}

/// The acceptance scan: the Markdown and the page's text of every sample
/// and every real capture, with no shared prefix stated and with 40, 100
/// and 300 tokens stated, read end to end for the phrases that gave the
/// false claims away: "0.0 %" beside a burst, "steady" beside a growing
/// queue, a ceiling below its measured value. The JSON agrees: no steady
/// phase has a queue that grew by the overload rule's measure.
#[test]
fn every_sample_reads_true_end_to_end() {
    use vllm_lens_core::analysis::PhaseKind;
    let mut problems = Vec::new();
    let mut read = 0;
    let reports = every_report();
    for (name, base) in &reports {
        for shared in [None, Some(40.0), Some(100.0), Some(300.0)] {
            let r = match shared {
                None => base.clone(),
                Some(s) => {
                    let settings = Settings {
                        shared_prefix_tokens: Some(s),
                        ..Settings::default()
                    };
                    match name.strip_prefix("real/") {
                        Some(file) => {
                            let bytes = std::fs::read(
                                crate::support::root().join("samples/real").join(file),
                            )
                            .expect("capture");
                            vllm_lens_core::analysis::analyse(
                                &crate::support::load_bytes(file, &bytes),
                                &vllm_lens_core::analysis::BundleMeta::default(),
                                &settings,
                            )
                            .expect("report")
                        }
                        None => sample_report(name, &settings),
                    }
                }
            };
            let label = format!("{name} (shared prefix {shared:?})");
            let md = vllm_lens_core::render::markdown(&r);
            let html = vllm_lens_core::render::html(&r);
            // The page's visible text, one line per text node (not the
            // embedded report data).
            let doc = scraper::Html::parse_document(&html);
            let mut page = String::new();
            for node in doc.root_element().descendants() {
                let Some(t) = node.value().as_text() else {
                    continue;
                };
                let hidden = node.ancestors().any(|a| {
                    a.value()
                        .as_element()
                        .is_some_and(|e| matches!(e.name(), "script" | "style"))
                });
                if !hidden {
                    page.push_str(t);
                    page.push('\n');
                }
            }
            problems.extend(false_phrases(&format!("{label} Markdown"), &md));
            problems.extend(false_phrases(&format!("{label} page"), &page));
            for p in &r.phases {
                let grew = p.queue_trend.as_ref().is_some_and(|t| {
                    t.waiting
                        .is_some_and(|w| w.last >= w.first + 3.0 && w.last >= 2.0 * w.first)
                        || t.queue_ms
                            .is_some_and(|q| q.last >= q.first * 2.0 && q.last >= q.first + 1000.0)
                });
                if p.kind == PhaseKind::Steady && grew {
                    problems.push(format!("{label}: a steady phase whose queue grew: {p:?}"));
                }
            }
            read += 1;
        }
    }
    assert!(read >= 4 * 20, "{read} reports read");
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}

/// The scan finds each phrase it looks for (the false sentences as the
/// issue quotes them), so its silence on the samples means something.
#[test]
fn the_scan_finds_what_it_looks_for() {
    let bad = "Errors burst 14:02–14:03: 1 of 2,400 finished requests ended in error or abort (0.0 %, against 0.0 % over the capture).\n\
               09:04–09:10 steady: the queue grew across it (requests waiting 4 → 25).\n\
               Prefix cache: 79 % served against a ceiling of 27 % from the 40-token shared prefix";
    let found = false_phrases("bad", bad);
    assert_eq!(found.len(), 3, "{found:#?}");
    let fine = "Prefix cache: 27 % served against a ceiling of 27 % from the 40-token shared prefix.\n\
                09:04–09:10 overload: the queue grew across it.\n\
                errors burst 14:02–14:03: 52 of 1,310 (4.0 %, against 0.3 % over the capture)";
    assert!(false_phrases("fine", fine).is_empty());
}

/// Found by a cold review and on a new real capture: every request ending
/// at exactly its max_tokens is a load test's fixed length (low
/// confidence, said so); a real server whose clients mostly set no
/// max_tokens on /v1/completions (samples/real/defaults: a quarter set 16,
/// the rest got the API's default of 16) is told where the 16 comes from;
/// batching reads running per replica; a known bug is one of the release
/// the server states.
#[test]
fn advice_names_what_the_capture_is() {
    use vllm_lens_core::analysis::model::{Confidence, QualityKind};
    let r = sample_report("a10g-qwen3b-ramp", &Settings::default());
    let rec = r
        .recommendations
        .iter()
        .find(|x| x.id == crate::support::rec("raise_max_tokens"))
        .expect("raise max_tokens");
    assert_eq!(rec.confidence, Confidence::Low);
    assert!(
        rec.rationale
            .contains("the signature of a load test that fixes the answer length"),
        "{}",
        rec.rationale
    );
    // The server says 0.23.0: the 0.20 bug is not its.
    assert!(
        !r.data_quality
            .notes
            .iter()
            .any(|n| n.kind == QualityKind::KnownBug && n.message.contains("vllm#41368")),
        "{:#?}",
        r.data_quality.notes
    );

    let bytes =
        std::fs::read(crate::support::root().join("samples/real/defaults.zip")).expect("capture");
    let r = vllm_lens_core::analysis::analyse(
        &crate::support::load_bytes("defaults.zip", &bytes),
        &vllm_lens_core::analysis::BundleMeta::default(),
        &Settings::default(),
    )
    .expect("report");
    let rec = r
        .recommendations
        .iter()
        .find(|x| x.id == crate::support::rec("raise_max_tokens"))
        .expect("raise max_tokens");
    assert!(
        rec.rationale
            .contains("Most requests went to /v1/completions, which gives 16 tokens to a request that sets no max_tokens"),
        "{}",
        rec.rationale
    );
    let f = r
        .analyses
        .iter()
        .flat_map(|a| a.findings.iter())
        .find(|f| f.id == FindingId::WorkloadTruncated)
        .expect("truncated");
    assert!(
        f.title.contains(
            "(max_tokens 16 on average: what /v1/completions gives requests that set none)"
        ),
        "{}",
        f.title
    );

    let r = sample_report("two-replicas-rr", &Settings::default());
    let f = r
        .analyses
        .iter()
        .flat_map(|a| a.findings.iter())
        .find(|f| f.id == FindingId::EfficiencyBatchingOk)
        .expect("batching");
    assert!(
        f.title.ends_with("running per replica on average"),
        "{}",
        f.title
    );
}

/// The headroom over the whole capture can hide a load level's: the ramp
/// sample's inter-token p95 is 10–25 ms over the capture but 25–50 ms at
/// ~30 in flight, and the headroom line says both.
#[test]
fn headroom_names_the_worst_load_level() {
    let r = sample_report("a10g-qwen3b-ramp", &Settings::default());
    let line = r
        .verdict
        .narrative
        .iter()
        .find(|l| l.starts_with("Headroom:"))
        .expect("a headroom line");
    assert!(
        line.contains("inter-token p95 between 10 and 25 ms over the capture, between 25 and 50 ms at ~30 in flight (14:05–14:10) against 50 ms"),
        "{line}"
    );
}
