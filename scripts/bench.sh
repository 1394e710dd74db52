#!/bin/sh
# The performance benchmark (docs/performance.md): generates the `day` and
# `fleet-hour` workloads with the simulator, then measures vllm-lens against
# its peers on the same bytes (vllm-lens-bench), and the browser app on
# `day` in headless Chromium. Prints Markdown; asserts nothing.
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh
if ! python3 -c 'import prometheus_client' 2>/dev/null; then
    echo "bench: installing prometheus_client from PyPI (the Python peer)" >&2
    python3 -m pip install --quiet prometheus_client
fi
work=$(mktemp -d)
cargo build --release --quiet
cargo build --release --quiet -p vllm-lens-bench
cargo run --release --quiet -p vllm-lens-sim -- samples/scenarios/day.toml samples/scenarios/fleet-hour.toml -o "$work" --no-truth >&2
echo "## Native, one run on $(nproc) cores ($(date -u +%Y-%m-%d))"
"${CARGO_TARGET_DIR:-target}/release/vllm-lens-bench" "$work/day.zip" "$work/fleet-hour.zip"

# The browser: drop-to-report, peak WASM memory, longest main-thread task.
# The production app plus two timing hooks (web crate feature `bench`),
# built apart from dist/.
bench_dist="${CARGO_TARGET_DIR:-target}/web-bench"
scripts/web-build.sh --features bench --dist "$bench_dist" >/dev/null 2>&1
echo
echo "## In headless Chromium (the one-file build from file://)"
node web/tests/bench.mjs "$bench_dist" "$work/day.zip" "$work/fleet-hour.zip"
rm -rf "$work"
