#!/bin/sh
# Renders the sample report and takes the headless-Chromium screenshot shown
# in the README (docs/report.png). Needs Debian's chromium (scripts/setup.sh
# does not install it; `apt-get install chromium`). Nothing is fetched: the
# page loads nothing.
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d)
cargo run --release --quiet -- report samples/a10g-qwen3b-ramp.zip -o "$out/report.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$out/profile" --hide-scrollbars --window-size=1280,2300 \
    --screenshot="$PWD/docs/report.png" "file://$out/report.html" 2>/dev/null
rm -rf "$out"
echo "wrote docs/report.png"
