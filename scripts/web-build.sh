#!/bin/sh
# Builds the browser app offline: dist/index.html and dist/vllm-lens.html,
# each the whole app in one file. Tools come from PATH and web/tools.
# Arguments go to `trunk build` (scripts/bench.sh: --features bench --dist DIR).
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/web/tools/node_modules/.bin:${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin:$PATH"
export PATH
trunk build --release "$@"
