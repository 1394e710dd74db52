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
# The 24-hour simulated workload: its generation time is printed (target < 60 s).
day=$(mktemp -d)
cargo run --release --quiet -p vllm-lens-sim -- samples/scenarios/day.toml -o "$day" --no-truth
rm -rf "$day"
