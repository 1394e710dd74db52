#!/bin/sh
# Writes the JSON, Markdown, HTML and terminal report of every sample,
# every real capture and its curl twin, and the simulated fleet-hour (with
# the default settings and with a stated prefix, cost and 5 min windows),
# and the comparison of every before/after pair, into OUT: a refactoring
# is proven byte-identical by running it before and after, then
# `diff -r BEFORE AFTER`.
#   scripts/snapshot.sh OUT [BIN]
set -eu
cd "$(dirname "$0")/.."
out=$1
bin=${2:-${CARGO_TARGET_DIR:-target}/release/vllm-lens}
mkdir -p "$out"
# The simulated fleet-hour at a fixed path: the report names its bundle.
sim=${TMPDIR:-/tmp}/vllm-lens-snapshot
if [ ! -f "$sim/fleet-hour.zip" ]; then
    mkdir -p "$sim"
    cargo run --release --quiet -p vllm-lens-sim -- samples/scenarios/fleet-hour.toml -o "$sim" --no-truth >/dev/null
fi
for z in samples/*.zip samples/real/*.zip samples/real/*.curl.tar.gz "$sim/fleet-hour.zip"; do
    name=$(basename "$z")
    name=${name%.zip}
    for variant in plain prefix; do
        case $variant in
            plain) args= ;;
            prefix) args="--shared-prefix-tokens 100 --gpu-hour-cost 1.20 --window 5m" ;;
        esac
        # shellcheck disable=SC2086 # the arguments are words
        "$bin" report "$z" $args --json "$out/$name.$variant.json" --md "$out/$name.$variant.md" \
            -o "$out/$name.$variant.html" >/dev/null 2>&1 || echo "exit $?" >"$out/$name.$variant.exit"
        # shellcheck disable=SC2086
        "$bin" report "$z" $args >"$out/$name.$variant.txt" 2>&1 || echo "exit $?" >>"$out/$name.$variant.txt"
    done
done
compare() {
    "$bin" compare "$2" "$3" --json "$out/compare-$1.json" --md "$out/compare-$1.md" \
        -o "$out/compare-$1.html" >/dev/null 2>&1 || echo "exit $?" >"$out/compare-$1.exit"
    "$bin" compare "$2" "$3" >"$out/compare-$1.txt" 2>&1 || echo "exit $?" >>"$out/compare-$1.txt"
}
compare max-tokens samples/pair-max-tokens-before.zip samples/pair-max-tokens-after.zip
compare fp8 samples/pair-fp8-before.zip samples/pair-fp8-after.zip
compare real samples/real/ramp-cap8.zip samples/real/ramp-cap16.zip
echo "snapshot: $(find "$out" -type f | wc -l) files in $out"
