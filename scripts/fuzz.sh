#!/bin/sh
# Runs each cargo-fuzz target (fuzz/) for SECONDS (default 30) from the
# committed seeds, with a fresh corpus; fails on any crash, hang or
# out-of-memory. docs/errors.md records the ten-minute runs.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -eu
cd "$(dirname "$0")/.."
secs=${1:-30}
[ $# -gt 0 ] && shift
targets=${*:-parse bundle pipeline}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd fuzz
cargo +nightly fuzz build -O >/dev/null 2>&1 || cargo +nightly fuzz build -O
for t in $targets; do
    mkdir -p "$work/$t"
    if ! cargo +nightly fuzz run -O "$t" "$work/$t" "seeds/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        >"$work/$t.log" 2>&1; then
        tail -40 "$work/$t.log" >&2
        echo "fuzz: $t failed; the input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
    echo "fuzz: $t: $runs runs in $secs s, no crash, hang or out-of-memory"
done
