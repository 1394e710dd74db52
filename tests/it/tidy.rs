//! Codebase rules checked as tests: module docs, the sans-IO core, the
//! architecture map, the README contract.

use std::path::{Path, PathBuf};

use crate::support::root;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crates that form the sans-IO core.
const CORE_CRATES: [&str; 9] = [
    "crates/model",
    "crates/expo",
    "crates/store",
    "crates/bundle",
    "crates/catalog",
    "crates/query",
    "crates/analysis",
    "crates/render",
    "crates/core",
];

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let mut files = Vec::new();
    for dir in ["crates", "tests", "web"] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 10);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        assert!(
            text.starts_with("//!") || text.starts_with("/*!"),
            "{} does not start with a `//!` module doc",
            file.display()
        );
    }
}

#[test]
fn the_core_does_no_io() {
    let forbidden = [
        "std::fs",
        "std::net",
        "std::thread",
        "std::process",
        "std::env",
        "SystemTime",
        "Instant::now",
        "println!",
        "eprintln!",
        "print!(",
        "dbg!(",
    ];
    for krate in CORE_CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate).join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable");
            // Unit tests may print; the rule is for the library code.
            let code = text.split("#[cfg(test)]").next().unwrap_or(&text);
            for word in forbidden {
                assert!(
                    !code.contains(word),
                    "{} uses `{word}`: the core must stay sans-IO",
                    file.display()
                );
            }
        }
    }
}

/// Every path ARCHITECTURE.md names in backticks (a token with a `/`,
/// not a URL path, a pattern or a bundle's inner path) exists in the tree.
/// Build products (under a folder `.gitignore` names, such as `dist/`) are
/// not in a clean checkout, so they are exempt.
#[test]
fn architecture_md_names_only_paths_that_exist() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let ignored = std::fs::read_to_string(root().join(".gitignore")).expect(".gitignore");
    let built: Vec<&str> = ignored
        .lines()
        .filter_map(|l| l.strip_suffix('/'))
        .map(|l| l.trim_start_matches('/'))
        .filter(|l| !l.is_empty() && !l.contains('/'))
        .collect();
    assert!(built.contains(&"dist"), ".gitignore lists dist/: {built:?}");
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, token) in text.split('`').enumerate() {
        // Odd pieces are inside backticks.
        if i % 2 == 0 || token.contains(char::is_whitespace) || !token.contains('/') {
            continue;
        }
        let pattern = token.contains(['<', '>', '*', '{', '}', '$', ':', '='])
            || token.starts_with('/')
            || token.starts_with("..");
        if pattern {
            continue;
        }
        if built.iter().any(|b| token.split('/').next() == Some(*b)) {
            continue;
        }
        checked += 1;
        if !root().join(token.trim_end_matches('/')).exists() {
            missing.push(token.to_string());
        }
    }
    assert!(checked >= 40, "only {checked} paths found");
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn architecture_md_maps_every_crate_and_folder() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut dirs: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| format!("crates/{}", e.file_name().to_string_lossy()))
        .collect();
    dirs.extend(["web", "samples", "tests", "docs", "scripts", ".ci"].map(String::from));
    for dir in dirs {
        assert!(
            doc.contains(&format!("`{dir}`")),
            "ARCHITECTURE.md does not map `{dir}`"
        );
    }
}

#[test]
fn readme_starts_with_two_commands_and_ci_runs_the_second() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let blocks: Vec<&str> = readme.split("```").collect();
    assert!(blocks.len() >= 5, "README needs two fenced commands first");
    let first = blocks[1].trim_start_matches("sh").trim();
    let second = blocks[3].trim_start_matches("sh").trim();
    assert_eq!(
        first.lines().count(),
        1,
        "first command is one line: {first}"
    );
    assert_eq!(
        second.lines().count(),
        1,
        "second command is one line: {second}"
    );
    let before_first = blocks[0];
    assert!(
        !before_first.contains("    "),
        "nothing but a title and words before the commands"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == second),
        ".ci/run must run `{second}`"
    );
}

#[test]
fn core_crates_build_for_wasm_in_the_test_script() {
    let script = std::fs::read_to_string(root().join("scripts/test.sh")).expect("scripts/test.sh");
    assert!(
        script.contains("--target wasm32-unknown-unknown"),
        "scripts/test.sh must build the core for wasm32"
    );
}

/// The web crate can reach no network API: it has no networking crate,
/// web-sys (if it ever comes back) enables no networking type, and the
/// page's scripts call none.
#[test]
fn the_web_shell_has_no_networking() {
    let manifest = std::fs::read_to_string(root().join("web/Cargo.toml")).expect("web/Cargo.toml");
    for line in manifest.lines() {
        for crate_name in ["reqwest", "gloo-net", "ureq", "hyper", "surf", "ehttp"] {
            assert!(
                !line.starts_with(crate_name),
                "web/Cargo.toml depends on {crate_name}"
            );
        }
    }
    let line = manifest
        .lines()
        .find(|l| l.starts_with("web-sys"))
        .unwrap_or("");
    let features = line.split("features").nth(1).unwrap_or("");
    for forbidden in [
        "\"Request",
        "\"Response",
        "\"Headers",
        "XmlHttpRequest",
        "WebSocket",
        "EventSource",
        "RtcPeerConnection",
        "Navigator",
        "Fetch",
    ] {
        assert!(
            !features.contains(forbidden),
            "web/Cargo.toml enables a networking type in web-sys: {forbidden}"
        );
    }
    for file in [
        "web/app.js",
        "web/worker.js",
        "web/src/lib.rs",
        "web/src/bench.rs",
        "index.html",
    ] {
        let text = std::fs::read_to_string(root().join(file)).expect(file);
        for call in [
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "EventSource",
            "sendBeacon",
            "importScripts",
            "http://",
            "https://",
            // No code from strings, no markup from strings: bundle-derived
            // text reaches the page only as textContent or inside the
            // report, which the escaping renderer wrote (docs/errors.md).
            "eval(",
            "Function(",
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "srcdoc",
        ] {
            assert!(!text.contains(call), "{file} uses `{call}`");
        }
    }
    let html = std::fs::read_to_string(root().join("index.html")).expect("index.html");
    assert!(html.contains("connect-src 'none'") && html.contains("default-src 'none'"));
}

/// A test marked `#[ignore]` (too slow for the fast loop) is still run:
/// `scripts/test.sh`, which CI runs, runs the ignored tests.
#[test]
fn ignored_tests_run_in_the_test_script() {
    let mut ignored = 0;
    for entry in std::fs::read_dir(root().join("tests/it")).expect("tests/it") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        ignored += text.matches("#[ignore").count();
    }
    let script = std::fs::read_to_string(root().join("scripts/test.sh")).expect("test.sh");
    assert!(
        ignored == 0 || script.contains("cargo test --test it -- --ignored"),
        "{ignored} ignored tests, and scripts/test.sh does not run them"
    );
}
