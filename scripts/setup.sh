#!/bin/sh
# Installs what building and testing need, skipping what is present.
# Only the package registries are used; nothing prebuilt is downloaded.
set -eu

if ! rustup target list --installed 2>/dev/null | grep -qx 'wasm32-unknown-unknown'; then
    echo "setup: adding the wasm32-unknown-unknown target" >&2
    rustup target add wasm32-unknown-unknown
fi

# Prometheus and promtool (Debian's package, 2.42) are the oracle the tests
# hold our figures against. The packaged service is never left running.
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
    echo "setup: installing Debian's prometheus package (the test oracle)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    $sudo pkill -u prometheus -x prometheus 2>/dev/null || true
fi
