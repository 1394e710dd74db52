#!/bin/sh
# Builds vllm-lens and runs it on the bundled sample capture.
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo run --release --quiet -- report samples/a10g-qwen3b-ramp.zip
