#!/bin/sh
# Every test: formatting, lints, unit and integration tests, the core's
# wasm32 build, and the parser benchmark in quick mode (figures printed,
# never asserted).
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
cargo build -p vllm-lens-core --target wasm32-unknown-unknown
cargo bench -p vllm-lens-expo --bench parse -- --quick
