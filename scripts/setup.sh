#!/bin/sh
# Installs what building and testing need, skipping what is present.
# Only the package registries are used; nothing prebuilt is downloaded.
set -eu

if ! rustup target list --installed 2>/dev/null | grep -qx 'wasm32-unknown-unknown'; then
    echo "setup: adding the wasm32-unknown-unknown target" >&2
    rustup target add wasm32-unknown-unknown
fi
