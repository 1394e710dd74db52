#!/usr/bin/env bash
# forecast-pairs.sh: the forecast held against before/after pairs
# (docs/forecast.md). From each "before" alone, forecast the "after"; the
# "after" capture's own report is the truth. Prints the Markdown tables of
# docs/forecast.md.
#   scripts/forecast-pairs.sh          the real pairs (samples/real/pairs,
#                                      made with scripts/real-vllm.sh)
#   scripts/forecast-pairs.sh --sim    the simulated pairs with known truth
#                                      (samples/scenarios/pairs: an L4, an
#                                      H100, TP 2), generated first
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${VLLM_LENS_BIN:-"$ROOT/target/release/vllm-lens"}
[ -x "$BIN" ] || (cd "$ROOT" && cargo build --release --quiet)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
case "${1:-}" in
    --sim)
        (cd "$ROOT" && cargo run --release --quiet -p vllm-lens-sim -- samples/scenarios/pairs/*.toml -o "$TMP/sim" --no-truth >/dev/null)
        DIR="$TMP/sim"
        # name | before | after | --set ... | extra analysis flags
        PAIRS=(
            "L4, Llama-3.1-8B: max-num-seqs 8 → 32|l4-seqs-before|l4-seqs-after|--set max-num-seqs=32|"
            "H100, Qwen2.5-7B: 24 → 48 users|h100-users-before|h100-users-after|--load 2x|"
            "A100 TP 2, Llama-3.1-8B: 1 → 2 replicas|tp2-replicas-before|tp2-replicas-after|--set replicas=2|"
        )
        ;;
    '')
        DIR="$ROOT/samples/real/pairs"
        PAIRS=(
            "max-num-seqs 8 → 32|pair-seqs-before|pair-seqs-after|--set max-num-seqs=32|"
            "token budget 256 → 2048|pair-budget-before|pair-budget-after|--set max-num-batched-tokens=2048|"
            "prefix caching off → on|pair-prefix-before|pair-prefix-after|--set prefix-caching=on|--shared-prefix-tokens 600"
            "8 → 16 users|pair-users-before|pair-users-after|--load 2x|"
            "1 → 2 servers (round robin)|pair-replicas-before|pair-replicas-after|--set replicas=2|"
            "held out: max-num-seqs 4 → 12|pair-cap4-before|pair-cap4-after|--set max-num-seqs=12|"
            "held out: max-num-seqs 16 → 4|pair-down-before|pair-down-after|--set max-num-seqs=4|"
        )
        ;;
    *) echo "usage: scripts/forecast-pairs.sh [--sim]" >&2; exit 2 ;;
esac
echo "| Pair | Objective | Forecast (from the before capture) | Measured (the after capture) | Hit |"
echo "|---|---|---|---|---|"
for p in "${PAIRS[@]}"; do
    IFS='|' read -r name before after set extra <<<"$p"
    # shellcheck disable=SC2086
    "$BIN" forecast "$DIR/$before.zip" --window 30s $set $extra --json "$TMP/f.json" 2>/dev/null
    # shellcheck disable=SC2086
    "$BIN" report "$DIR/$after.zip" --window 30s $extra --json "$TMP/r.json" 2>/dev/null
    python3 - "$name" "$TMP/f.json" "$TMP/r.json" <<'PY'
import json, sys
name, f, r = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
fc = f["forecast"]
if fc["status"] != "calibrated" or not f["asked"]:
    print(f"| {name} | all | {fc['status'].replace('_', ' ')}: {'; '.join(fc['calibration']['misses'])} | | miss |")
    sys.exit()
s = f["asked"]["scenario"]
meas = {x["id"]: x for x in r["slo"]}
def n(x):
    return "–" if x is None else (f"{x:.0f}" if x >= 10 else f"{x:.1f}")
for p in s["slo"]:
    m = meas[p["id"]]
    if p["id"] == "error_abort_rate":
        continue
    if p["unit"] == "ms":
        b = m.get("bounds") or {}
        lo, hi = p["low"], p["high"]
        bucket = f"{n(b.get('low'))}–{n(b.get('high'))} ms" if b else "–"
        v = m.get("value")
        inside = v is not None and lo is not None and (lo * 0.75 <= v <= hi * 1.25)
        overlap = b and lo is not None and hi >= b.get("low", 0) and (b.get("high") is None or lo <= b["high"])
        hit = p["status"] == m["status"] and (inside or overlap)
        print(f"| {name} | {p['id']} | {n(lo)}–{n(hi)} ms, {p['status']} | {n(v)} ms (bucket {bucket}), {m['status']} | {'hit' if hit else 'miss'} |")
    else:
        ms = r["capacity"]["queueing_starts_at"]
        # The earliest and latest start over the parameter sets (None:
        # one of them never queues).
        lo, hi = p["low"], p["high"]
        close = (ms is None and (lo is None or lo > m.get('value', 0))) or (
            ms is not None and lo is not None and lo - 2 <= ms <= (hi if hi is not None else float("inf")) + 2)
        hit = p["status"] == m["status"] and close
        span = n(lo) if hi is not None and lo is not None and abs(hi - lo) < 0.5 else f"{n(lo)}–{n(hi) if hi is not None else 'none'}"
        print(f"| {name} | {p['id']} | queues from {span} in flight, {p['status']} | queues from {n(ms)} (peak {n(m.get('value'))} without), {m['status']} | {'hit' if hit else 'miss'} |")
t = s["throughput"]["requests_per_min"]
print(f"| {name} | throughput | {n(t['low'])}–{n(t['high'])} requests/min | {n(r['summary']['workload']['requests_per_min'])} requests/min | {'hit' if t['low']*0.75 <= r['summary']['workload']['requests_per_min'] <= t['high']*1.25 else 'miss'} |")
PY
done
