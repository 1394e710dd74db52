#!/bin/sh
# Every test: formatting, lints, unit and integration tests, the core's
# wasm32 build, and the parser benchmark in quick mode (figures printed,
# never asserted), and the generation of the simulated `day` workload (its
# time printed).
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
VLLM_LENS_ORACLE=require cargo test --workspace
cargo build -p vllm-lens-core --target wasm32-unknown-unknown
cargo bench -p vllm-lens-expo --bench parse -- --quick
# The 24-hour simulated workload: its generation time is printed (target
# < 60 s), and its HTML report must stay under 3 MB.
day=$(mktemp -d)
cargo run --release --quiet -p vllm-lens-sim -- samples/scenarios/day.toml -o "$day" --no-truth
start=$(date +%s)
cargo run --release --quiet -- report "$day/day.zip" -o "$day/day.html"
size=$(wc -c < "$day/day.html")
echo "day: report in $(( $(date +%s) - start )) s, HTML $size bytes"
rm -rf "$day"
if [ "$size" -ge 3000000 ]; then
    echo "day: the HTML report is $size bytes, over the 3 MB budget" >&2
    exit 1
fi
