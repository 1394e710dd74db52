#!/bin/sh
# The fast loop for someone changing the code: formatting, lints, every
# cargo test (unit, integration, goldens, the real-vLLM captures, the
# Prometheus comparison where Prometheus is installed) and the API docs with
# warnings denied. Installs nothing, and leaves out what scripts/test.sh
# adds (setup, the wasm build, fuzzing, benchmarks, the 24-hour workload,
# the ignored slow tests such as a week exported from Prometheus, the
# browser tests). Tests that need a tool that is missing pass without
# running and are listed at the end.
set -eu
cd "$(dirname "$0")/.."

skipped="${CARGO_TARGET_DIR:-target}/tmp/skipped-tests.txt"
rm -f "$skipped"
t0=$(date +%s)
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
if [ -s "$skipped" ]; then
    echo "check: skipped for want of a tool (scripts/setup.sh installs them; scripts/test.sh requires them):"
    sort -u "$skipped" | sed 's/^/  /'
fi
echo "check: passed in $(($(date +%s) - t0)) s"
