#!/bin/sh
# Installs what is missing (idempotent), prints the tuning report of the
# sample capture, builds the browser app and serves it on 127.0.0.1 with the
# sample built in ("Try the sample"). Set VLLM_LENS_NO_SERVE=1 to stop after
# the build.
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo run --release --quiet -- report samples/a10g-qwen3b-ramp.zip -o samples-report.html
echo "demo: the same report as one HTML file: samples-report.html"
scripts/web-build.sh >/dev/null 2>&1 || scripts/web-build.sh
echo "demo: the browser app is dist/vllm-lens.html (one file: open it from disk, or copy it to an air-gapped laptop)"
if [ "${VLLM_LENS_NO_SERVE:-}" = "1" ]; then
    exit 0
fi
echo "demo: serving it at http://127.0.0.1:8080/ (Ctrl-C to stop); press \"Try the sample\""
exec python3 -m http.server 8080 --bind 127.0.0.1 --directory dist
