//! The rendered report: golden snapshots of the HTML, Markdown and JSON of
//! every sample (`tests/golden/`, rewritten under `UPDATE_EXPECT=1`), the
//! page's safety (no injected markup, no network reference, a strict CSP),
//! its size, and the embedded JSON reading back.

use expect_test::expect_file;
use scraper::{Html, Selector};
use vllm_lens_core::analysis::{BundleMeta, Report, Settings, analyse};
use vllm_lens_core::render;
use vllm_lens_core::{Input, Options, load};

use crate::support::{SAMPLES, root, sample_report, zip};

fn report(name: &str) -> Report {
    sample_report(name, &Settings::default())
}

/// A large golden (the HTML and JSON, 150 to 230 KB each): compared here,
/// naming the first line that differs. `expect_file!` prints the whole
/// expected text, the whole actual text and their diff on a failure (about
/// 650 KB of log for one report), so it serves the small goldens only (the
/// Markdown, below). `UPDATE_EXPECT=1` rewrites both kinds.
fn golden(file: &str, fresh: &str) {
    let path = root().join("tests/golden").join(file);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, fresh).expect("write golden");
    }
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing; UPDATE_EXPECT=1 writes it", path.display()));
    if committed != fresh {
        let line = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or(committed.lines().count().min(fresh.lines().count()), |l| l);
        panic!(
            "{file} differs from the renderer at line {}; UPDATE_EXPECT=1 cargo test --test it render:: rewrites it\n committed: {:?}\n rendered:  {:?}",
            line + 1,
            committed.lines().nth(line),
            fresh.lines().nth(line)
        );
    }
}

/// Network references a report must never hold.
fn network_references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    let lower = html.to_ascii_lowercase();
    for needle in ["http:", "https:", "@import", "ftp://", "ws://", "wss://"] {
        if lower.contains(needle) {
            found.push(needle.to_string());
        }
    }
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("url(") {
        let after = rest[i + 4..].trim_start_matches(['"', '\'', ' ']);
        if !after.starts_with("data:") {
            found.push(format!("url({}", &after[..after.len().min(20)]));
        }
        rest = &rest[i + 4..];
    }
    let doc = Html::parse_document(html);
    let any =
        Selector::parse("[src], [href], [action], [srcset], [poster], [data]").expect("selector");
    for el in doc.select(&any) {
        for (k, v) in el.value().attrs() {
            if ["src", "href", "action", "srcset", "poster", "data"].contains(&k)
                && !(v.starts_with('#') || v.starts_with("data:"))
            {
                found.push(format!("{k}={v}"));
            }
        }
    }
    found
}

#[test]
fn golden_reports_of_every_sample() {
    for name in SAMPLES {
        let r = report(name);
        let html = render::html(&r);
        golden(&format!("{name}.html"), &html);
        let md = render::markdown(&r);
        expect_file![root().join("tests/golden").join(format!("{name}.md"))].assert_eq(&md);
        // A ticket-sized summary that opens with the verdict (72 lines: the
        // verdict's where-to-look-next list on a healthy capture and the
        // forecast's table included).
        assert!(
            md.lines().count() <= 72,
            "{name}: {} lines of Markdown",
            md.lines().count()
        );
        assert!(
            md.lines()
                .nth(2)
                .is_some_and(|l| l.starts_with(&format!("**{}", &r.verdict.headline[..6]))),
            "{name}: the verdict comes first"
        );
        // Every placeholder of the prose was filled.
        let prose =
            serde_json::to_string(&(&r.analyses, &r.recommendations, &r.verdict, &r.phases))
                .expect("json");
        let left: Vec<&str> = prose
            .split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|x| x.0))
            .filter(|inner| {
                !inner.is_empty() && inner.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
            .collect();
        assert!(
            left.is_empty(),
            "{name}: placeholders left in the prose: {left:?}"
        );
        golden(&format!("{name}.json"), &render::json(&r));
        // Determinism: a second rendering is byte-identical.
        assert_eq!(html, render::html(&report(name)), "{name}");
        // Safety and size.
        assert!(
            network_references(&html).is_empty(),
            "{name}: {:?}",
            network_references(&html)
        );
        assert!(html.contains(&format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            render::html::CSP
        )));
        assert!(html.len() < 1_500_000, "{name}: {} bytes", html.len());
        // The embedded JSON is the report.
        let back = render::embed::read(&html).expect("embedded JSON");
        let back: serde_json::Value = serde_json::from_str(&back).expect("valid JSON");
        let want = serde_json::to_value(&r).expect("json");
        if back != want {
            let (a, b) = (back.to_string(), want.to_string());
            let at = a
                .bytes()
                .zip(b.bytes())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            panic!(
                "{name}: embedded JSON differs at {at}: {:?} vs {:?}",
                &a[at.saturating_sub(80)..(at + 80).min(a.len())],
                &b[at.saturating_sub(80)..(at + 80).min(b.len())]
            );
        }
    }
}

/// Every id in a committed golden JSON exists: the typed model reads each
/// back (an unknown finding, recommendation, SLO, phase, event or note
/// kind fails to deserialise).
#[test]
fn golden_ids_exist() {
    for name in SAMPLES {
        let path = root().join(format!("tests/golden/{name}.json"));
        let text = std::fs::read_to_string(&path).expect("golden");
        let back: Result<Report, _> = serde_json::from_str(&text);
        assert!(back.is_ok(), "{name}: {:?}", back.err());
    }
}

/// The sample's HTML is a proper document: the verdict first, then the
/// scorecard (four SLO tiles), what to do, the phases, the capacity, what
/// to watch, the
/// six steps in order, every chart an inline SVG, no script but the data
/// block.
#[test]
fn the_page_has_the_walk_through_layout() {
    let html = render::html(&report("a10g-qwen3b-ramp"));
    let doc = Html::parse_document(&html);
    let sel = |s: &str| Selector::parse(s).expect("selector");
    let ids: Vec<&str> = doc
        .select(&sel("section[id]"))
        .map(|e| e.value().id().expect("id"))
        .collect();
    assert_eq!(
        ids,
        [
            "verdict",
            "scorecard",
            "what-to-do",
            "phases",
            "capacity",
            "forecast",
            "what-to-watch",
            "step-latency",
            "step-efficiency",
            "step-workload",
            "step-outcomes",
            "step-hardware",
            "step-memory",
            "timeline",
            "data-quality",
            "appendix"
        ]
    );
    assert_eq!(
        doc.select(&sel(".tile")).count(),
        vllm_lens_core::analysis::SloId::ALL.len()
    );
    let verdict = doc
        .select(&sel("#verdict .headline"))
        .next()
        .expect("a verdict headline")
        .text()
        .collect::<String>();
    assert!(verdict.starts_with("Healthy: "), "{verdict}");
    // Quantiles read as their bucket, never as a false 3-digit figure.
    let tiles: String = doc
        .select(&sel(".tile .value"))
        .flat_map(|e| e.text())
        .collect();
    assert!(tiles.contains("p95 between 60 and 80 ms"), "{tiles}");
    assert!(doc.select(&sel("figure.chart svg")).count() >= 12);
    let scripts: Vec<_> = doc.select(&sel("script")).collect();
    assert_eq!(scripts.len(), 1);
    assert_eq!(scripts[0].value().attr("type"), Some("application/json"));
    assert!(html.contains("@media print") && html.contains("prefers-color-scheme: dark"));
}

const HOSTILE: [&str; 6] = [
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(1)>",
    "</style><b>x</b>",
    "</script><i>y</i>",
    "]]><svg onload=alert(1)>",
    "line\u{2028}break",
];

/// A bundle whose label values, model name, HELP text, target and file
/// names are hostile: the page holds no element, attribute or script that
/// came from them, and the strings survive as text.
#[test]
fn hostile_strings_never_become_markup() {
    let model = HOSTILE.join(" ");
    let esc = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    };
    let mut files = Vec::new();
    for i in 0..8i64 {
        let t = 1_767_225_600_000 + i * 15_000;
        let vllm = format!(
            "# HELP vllm:num_requests_running {help}\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{model_name=\"{m}\"}} 3\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{model_name=\"{m}\"}} {g}\n# TYPE vllm:request_success_total counter\nvllm:request_success_total{{finished_reason=\"{m}\",model_name=\"{m}\"}} {n}\n",
            help = HOSTILE[0],
            m = esc(&model),
            g = 100 * i,
            n = 2 * i
        );
        let dcgm = format!(
            "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{{gpu=\"0\",UUID=\"{u}\",modelName=\"{m}\",Hostname=\"{m}\"}} 99\n",
            u = esc(HOSTILE[1]),
            m = esc(HOSTILE[4])
        );
        files.push((
            format!("vllm-\"><img src=x onerror=alert(1)>/{t}<script>.prom"),
            vllm.into_bytes(),
        ));
        files.push((format!("dcgm-</style>/{t}.prom"), dcgm.into_bytes()));
    }
    let bytes = zip(&files, true);
    let loaded = load(
        Input::Bytes {
            name: "<script>alert('bundle')</script>.zip",
            bytes: &bytes,
            mtime_ms: None,
        },
        &Options::default(),
    )
    .expect("loads");
    let r = analyse(
        &loaded,
        &BundleMeta {
            name: "\"><img src=x onerror=alert(1)>.zip".into(),
            sha256: None,
        },
        &Settings::default(),
    )
    .expect("report");
    assert!(
        r.deployment.model.as_deref() == Some(model.as_str()),
        "{:?}",
        r.deployment.model
    );
    for html in [render::html(&r)] {
        let doc = Html::parse_document(&html);
        let all = Selector::parse("*").expect("selector");
        let allowed = [
            "html",
            "head",
            "meta",
            "title",
            "style",
            "body",
            "main",
            "header",
            "div",
            "h1",
            "h2",
            "h3",
            "dl",
            "dt",
            "dd",
            "span",
            "nav",
            "a",
            "section",
            "details",
            "summary",
            "ul",
            "ol",
            "li",
            "p",
            "strong",
            "code",
            "pre",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "figure",
            "figcaption",
            "svg",
            "line",
            "text",
            "path",
            "rect",
            "circle",
            "footer",
            "script",
        ];
        for el in doc.select(&all) {
            let name = el.value().name();
            assert!(allowed.contains(&name), "unexpected element <{name}>");
            for (k, _) in el.value().attrs() {
                assert!(
                    !k.starts_with("on"),
                    "event handler attribute {k} on <{name}>"
                );
            }
        }
        let scripts = Selector::parse("script").expect("selector");
        let s: Vec<_> = doc.select(&scripts).collect();
        assert_eq!(s.len(), 1, "only the data block");
        assert_eq!(s[0].value().attr("type"), Some("application/json"));
        // The hostile strings are there, as text.
        let text: String = doc.root_element().text().collect();
        assert!(
            text.contains("\"><img src=x onerror=alert(1)>.zip"),
            "bundle name shown as text"
        );
        assert!(
            text.contains("<script>alert(1)</script>"),
            "model name shown as text"
        );
        assert!(
            network_references(&html).iter().all(|r| !r.contains('=')),
            "{:?}",
            network_references(&html)
        );
        // And the data block reads back to the same report.
        let back = render::embed::read(&html).expect("embedded");
        let back: serde_json::Value = serde_json::from_str(&back).expect("json");
        assert_eq!(back, serde_json::to_value(&r).expect("json"));
        assert!(
            !html.contains('\u{2028}')
                || !render::embed::read(&html).expect("x").contains('\u{2028}')
        );
    }
    // Markdown: nothing can become a link, an image or HTML.
    let md = render::markdown(&r);
    let unescaped = |pat: &str| {
        md.match_indices(pat)
            .any(|(i, _)| i == 0 || md.as_bytes()[i - 1] != b'\\')
    };
    assert!(
        !unescaped("<") && !unescaped("](") && !unescaped("!["),
        "{md}"
    );
}

/// A large model is stored compressed and still reads back.
#[test]
fn large_models_are_embedded_compressed() {
    let mut r = report("two-replicas-rr");
    let extra = r.rows.latency.clone();
    for _ in 0..300 {
        r.rows.latency.extend(extra.iter().cloned());
    }
    let html = render::html(&r);
    assert!(html.contains("data-encoding=\"deflate-base64\""));
    let back: serde_json::Value =
        serde_json::from_str(&render::embed::read(&html).expect("embedded")).expect("json");
    assert_eq!(back, serde_json::to_value(&r).expect("json"));
}
