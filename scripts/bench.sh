#!/bin/sh
# The performance benchmark (docs/performance.md): generates the `day` and
# `fleet-hour` workloads with the simulator, then measures vllm-lens against
# its peers on the same bytes (vllm-lens-bench), and the browser app on
# both in headless Chromium. Prints Markdown; asserts nothing.
#   scripts/bench.sh            day and fleet-hour
#   scripts/bench.sh --large    also a week of one server (2.46 GB of text)
#                               and a fleet-day (8 replicas x 8 GPUs, 24 h),
#                               read streaming; about 20 minutes more
set -eu
cd "$(dirname "$0")/.."
large=0
case "${1:-}" in
    --large) large=1 ;;
    '') ;;
    *) echo "usage: scripts/bench.sh [--large]" >&2; exit 2 ;;
esac

scripts/setup.sh
if ! python3 -c 'import prometheus_client' 2>/dev/null; then
    echo "bench: installing prometheus_client from PyPI (the Python peer)" >&2
    python3 -m pip install --quiet prometheus_client
fi
work=$(mktemp -d)
cargo build --release --quiet
cargo build --release --quiet -p vllm-lens-bench
scenarios="samples/scenarios/day.toml samples/scenarios/fleet-hour.toml"
bundles="$work/day.zip $work/fleet-hour.zip"
if [ "$large" = 1 ]; then
    scenarios="$scenarios samples/scenarios/week.toml samples/scenarios/fleet-day.toml"
    bundles="$bundles $work/week.zip $work/fleet-day.zip"
fi
# shellcheck disable=SC2086 # lists of paths without spaces
cargo run --release --quiet -p vllm-lens-sim -- $scenarios -o "$work" --no-truth >&2
echo "## Native, one run on $(nproc) cores ($(date -u +%Y-%m-%d))"
# shellcheck disable=SC2086
"${CARGO_TARGET_DIR:-target}/release/vllm-lens-bench" $bundles

# The browser: drop-to-report, peak WASM memory, longest main-thread task.
# The production app plus two timing hooks (web crate feature `bench`),
# built apart from dist/.
bench_dist="${CARGO_TARGET_DIR:-target}/web-bench"
VLLM_LENS_PAGE_BUDGET=off scripts/web-build.sh --features bench --dist "$bench_dist" >/dev/null 2>&1
echo
echo "## In headless Chromium (the one-file build from file://)"
# shellcheck disable=SC2086
node web/tests/bench.mjs "$bench_dist" $bundles
rm -rf "$work"
