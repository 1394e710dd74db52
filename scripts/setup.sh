#!/bin/sh
# Installs what building and testing need, skipping what is present.
# Only the package registries are used; nothing prebuilt is downloaded.
#   scripts/setup.sh       everything scripts/test.sh needs
#   scripts/setup.sh web   only what building the browser app needs (the
#                          wasm32 target, trunk, wasm-bindgen, wasm-opt):
#                          what scripts/demo.sh uses
set -eu
mode=${1:-all}
case "$mode" in
    all | web) ;;
    *) echo "usage: scripts/setup.sh [web]" >&2; exit 2 ;;
esac

if ! rustup target list --installed 2>/dev/null | grep -qx 'wasm32-unknown-unknown'; then
    echo "setup: adding the wasm32-unknown-unknown target" >&2
    rustup target add wasm32-unknown-unknown
fi

# Prometheus and promtool (Debian's package, 2.42) are the oracle the tests
# hold our figures against. The packaged service is never left running.
if [ "$mode" = all ] && { ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; }; then
    echo "setup: installing Debian's prometheus package (the test oracle)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    $sudo pkill -u prometheus -x prometheus 2>/dev/null || true
fi

# The fuzz targets (fuzz/, docs/errors.md): cargo-fuzz 0.13.2 from
# crates.io. They run on the nightly toolchain where the machine has one;
# no toolchain is ever fetched (scripts/fuzz.sh falls back to stable).
if [ "$mode" = all ] && { ! command -v cargo-fuzz >/dev/null 2>&1 || ! cargo-fuzz --version | grep -q ' 0\.13\.2'; }; then
    echo "setup: installing cargo-fuzz 0.13.2" >&2
    cargo install cargo-fuzz --version 0.13.2 --locked
fi

# The browser app: trunk 0.21.14 (0.22 needs a newer rustc), wasm-bindgen-cli
# at exactly the web crate's wasm-bindgen version, binaryen's wasm-opt and a
# Chromium driver from npm (never Debian's binaryen, never a downloaded
# browser), Debian's chromium for the browser tests.
if ! command -v trunk >/dev/null 2>&1 || ! trunk --version | grep -q ' 0\.21\.14'; then
    # trunk only orchestrates the build: a debug build of it compiles in
    # 4 min instead of 9.5 on 2 cores and builds the app as fast (measured).
    echo "setup: installing trunk 0.21.14 (building it from source: about 4 min on 2 cores)" >&2
    cargo install trunk --version 0.21.14 --locked --debug
fi
if ! command -v wasm-bindgen >/dev/null 2>&1 || ! wasm-bindgen --version | grep -q ' 0\.2\.130'; then
    # Debug as well: 1.5 min to build instead of 3, and the app it makes is
    # byte for byte the same.
    echo "setup: installing wasm-bindgen-cli 0.2.130 (building it from source: about 1.5 min)" >&2
    cargo install wasm-bindgen-cli --version 0.2.130 --debug
fi
if [ ! -x web/tools/node_modules/.bin/wasm-opt ]; then
    echo "setup: installing binaryen's wasm-opt from npm (web/tools)" >&2
    (cd web/tools && npm install --no-audit --no-fund --silent)
fi
if [ "$mode" = web ]; then
    exit 0
fi
if [ ! -d web/tests/node_modules/playwright-core ]; then
    echo "setup: installing playwright-core from npm (web/tests; it never downloads a browser)" >&2
    (cd web/tests && npm install --no-audit --no-fund --silent)
fi
if ! command -v chromium >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium (browser tests)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi

# The shell linter (tests run it on scripts/collect.sh) and zip (collect.sh's default
# output), from Debian.
if ! command -v shellcheck >/dev/null 2>&1 || ! command -v zip >/dev/null 2>&1; then
    echo "setup: installing shellcheck and zip from Debian" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends shellcheck zip >/dev/null
fi
