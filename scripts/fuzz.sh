#!/bin/sh
# Runs each cargo-fuzz target (fuzz/) for SECONDS (default 30) from the
# committed seeds, with a fresh corpus; fails on any crash, hang or
# out-of-memory. docs/errors.md records the ten-minute runs.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# VLLM_LENS_FUZZ_STABLE=1 forces the stable fallback below.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-30}
[ $# -gt 0 ] && shift
targets=${*:-parse bundle pipeline}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd fuzz
# cargo fuzz wants nightly (for AddressSanitizer); on a machine with only
# the stable toolchain it runs without a sanitizer, stable told to accept
# the nightly flags libFuzzer's build needs. Nothing is downloaded.
if [ -z "${VLLM_LENS_FUZZ_STABLE:-}" ] && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz() { cargo +nightly fuzz "$@"; }
    echo "fuzz: nightly toolchain, AddressSanitizer on"
else
    fuzz() {
        sub=$1
        shift
        RUSTC_BOOTSTRAP=1 cargo fuzz "$sub" -s none "$@"
    }
    echo "fuzz: no nightly toolchain here: stable, no sanitizer"
fi
fuzz build -O >/dev/null 2>&1 || fuzz build -O
for t in $targets; do
    mkdir -p "$work/$t"
    if ! fuzz run -O "$t" "$work/$t" "seeds/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        >"$work/$t.log" 2>&1; then
        tail -40 "$work/$t.log" >&2
        echo "fuzz: $t failed; the input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
    echo "fuzz: $t: $runs runs in $secs s, no crash, hang or out-of-memory"
done
