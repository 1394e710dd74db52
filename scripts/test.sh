#!/bin/sh
# Every test: formatting, lints, unit and integration tests, the core's
# wasm32 build, and the parser benchmark in quick mode (figures printed,
# never asserted), the generation of the simulated `day` workload and its
# report (times printed, HTML size checked), and the browser app: built with
# trunk offline and tested end to end in headless Chromium.
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
VLLM_LENS_ORACLE=require VLLM_LENS_REQUIRE_TOOLS=1 cargo test --workspace
# The slow tests the fast loop (scripts/check.sh) leaves out: a week
# exported from Prometheus.
VLLM_LENS_REQUIRE_TOOLS=1 cargo test --test it -- --ignored
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo build -p vllm-lens-core --target wasm32-unknown-unknown
# The fuzz targets build and run 30 s each (docs/errors.md).
scripts/fuzz.sh 30
cargo bench -p vllm-lens-expo --bench parse -- --quick
cargo bench -p vllm-lens-core --bench pipeline -- --quick
# The 24-hour simulated workload: its generation time is printed (target
# < 60 s), and its HTML report must stay under 3 MB.
day=$(mktemp -d)
cargo build --release --quiet
cargo run --release --quiet -p vllm-lens-sim -- samples/scenarios/day.toml -o "$day" --no-truth
t0=$(date +%s%N)
"${CARGO_TARGET_DIR:-target}/release/vllm-lens" report "$day/day.zip" -o "$day/day.html"
native=$(awk "BEGIN { printf \"%.2f\", ($(date +%s%N) - $t0) / 1e9 }")
size=$(wc -c < "$day/day.html")
echo "day: native report in $native s, HTML $size bytes"
if [ "$size" -ge 3000000 ]; then
    echo "day: the HTML report is $size bytes, over the 3 MB budget" >&2
    exit 1
fi

# The browser app: build it offline, then drive it in headless Chromium and
# hold it against the CLI on every sample and on the day bundle.
scripts/web-build.sh
cli=$(mktemp -d)
bin="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/vllm-lens"
export VLLM_LENS_BIN="$bin"
(cd samples && for z in *.zip; do
    "$bin" report "$z" --json "$cli/${z%.zip}.json" -o "$cli/${z%.zip}.html" 2>/dev/null
done)
node web/tests/e2e.mjs dist "$cli" "$day/day.zip" "$native"
rm -rf "$day" "$cli"
