#!/bin/sh
# The product in one command. First, after one release build of the CLI, the
# tuning report of the sample capture in the terminal (verdict, scorecard,
# what to do) and as one HTML file; then it installs what the browser app
# needs and nothing else (scripts/setup.sh web: the wasm32 target, trunk,
# wasm-bindgen, wasm-opt; skipped when present), builds the app and serves
# it on 127.0.0.1 with the sample built in ("Try the sample"). Set
# VLLM_LENS_NO_SERVE=1 to stop after the build.
set -eu
cd "$(dirname "$0")/.."

t0=$(date +%s)
sample=samples/a10g-qwen3b-ramp.zip
cargo build --release --quiet --bin vllm-lens
bin="${CARGO_TARGET_DIR:-target}/release/vllm-lens"
"$bin" report "$sample"
"$bin" report "$sample" -o samples-report.html 2>/dev/null
echo
echo "demo: the report above, as one HTML file: samples-report.html ($(($(date +%s) - t0)) s so far)"

echo "demo: now the browser app (the first time, cargo builds trunk and wasm-bindgen from source)"
scripts/setup.sh web
scripts/web-build.sh >/dev/null 2>&1 || scripts/web-build.sh
echo "demo: the browser app is dist/vllm-lens.html (one file: open it from disk, or copy it to an air-gapped laptop); $(($(date +%s) - t0)) s in all"
if [ "${VLLM_LENS_NO_SERVE:-}" = "1" ]; then
    exit 0
fi
echo "demo: serving it at http://127.0.0.1:8080/ (Ctrl-C to stop); press \"Try the sample\""
exec python3 -m http.server 8080 --bind 127.0.0.1 --directory dist
