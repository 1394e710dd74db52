#!/bin/sh
# collect.sh: capture a vLLM Lens bundle (docs/bundle.md) from vLLM and
# dcgm-exporter endpoints, from pods through kubectl, from nvidia-smi, or
# from an existing Prometheus. POSIX sh; needs curl or wget, and zip or tar.
set -u

usage() {
    cat <<'EOF'
Usage:
  collect.sh --vllm URL [--vllm URL ...] [--dcgm URL ...] [options] -o bundle.zip
  collect.sh --kube-namespace NS --kube-selector SEL [--kube-dcgm-selector SEL] [options] -o bundle.zip
  collect.sh --from-prometheus URL --start T --end T [--step 15s] [--match '{...}'] -o bundle.zip

Scrape mode (default): every --interval seconds for --duration, fetch each
/metrics URL and store it as <target>/<unix ms>.prom, with a manifest that
records every capture time, every failed scrape (up: 0 and the error), vLLM's
/version and /v1/models when reachable, and nvidia-smi facts when present.

Options:
  --vllm URL               a vLLM /metrics URL (repeatable)
  --dcgm URL               a dcgm-exporter /metrics URL (repeatable)
  --interval SECONDS       time between scrapes (default 15)
  --duration D             how long: 30m, 2h, 900s, or plain seconds (default 30m)
  -o, --output FILE        the bundle: .zip (needs zip) or .tar.gz (needs tar); default bundle.zip
  --nvidia-smi             also sample `nvidia-smi --query-gpu ... --format=csv`
                           (and `dcgmi dmon` when present) at the same interval
  --timeout SECONDS        per-request timeout (default 5)
  --force                  capture even when the estimated size is over 1 GiB
  --kube-namespace NS      kubectl mode: the namespace of the pods
  --kube-selector SEL      kubectl mode: label selector of the vLLM pods (e.g. app=vllm)
  --kube-dcgm-selector SEL kubectl mode: label selector of dcgm-exporter pods
  --kube-dcgm-namespace NS namespace of the dcgm-exporter pods (default: --kube-namespace)
  --kube-port PORT         vLLM pods' metrics port (default 8000)
  --kube-dcgm-port PORT    dcgm-exporter pods' port (default 9400)
  --from-prometheus URL    Prometheus mode: the Prometheus (or Thanos, Mimir) base URL
  --start T, --end T       the window to export: RFC 3339 or Unix seconds
  --step S                 resolution of the export (default 15s)
  --match '{...}'          extra label matchers, e.g. '{namespace="llm"}'
  --device KIND            what vLLM runs on, for the manifest: gpu, or cpu (a CPU
                           server: no GPU, so no dcgm-exporter to scrape)
  -h, --help               this text

Ctrl-C stops the capture cleanly and still writes the bundle.

Examples:
  collect.sh --vllm http://10.0.1.40:8000/metrics --dcgm http://10.0.1.40:9400/metrics --interval 15 --duration 30m -o bundle.zip
  collect.sh --kube-namespace llm --kube-selector app=vllm --kube-dcgm-namespace gpu-operator --kube-dcgm-selector app=nvidia-dcgm-exporter -o bundle.zip
  collect.sh --from-prometheus http://prometheus:9090 --start 2026-07-01T10:00:00Z --end 2026-07-01T11:00:00Z --match '{namespace="llm"}' -o bundle.zip
EOF
}

die() {
    printf 'collect.sh: %s\n' "$1" >&2
    exit 2
}

VLLM_URLS=""
DCGM_URLS=""
INTERVAL=15
DURATION=30m
OUTPUT=bundle.zip
NVSMI=0
TIMEOUT=5
FORCE=0
KUBE_NS=""
KUBE_SEL=""
KUBE_DCGM_SEL=""
KUBE_DCGM_NS=""
KUBE_PORT=8000
KUBE_DCGM_PORT=9400
PROM=""
START=""
END=""
STEP=15s
MATCH=""
DEVICE=""

need_arg() {
    [ "$2" -ge 2 ] || die "$1 needs a value (see --help)"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --vllm) need_arg "$1" $#; VLLM_URLS="$VLLM_URLS $2"; shift 2 ;;
        --dcgm) need_arg "$1" $#; DCGM_URLS="$DCGM_URLS $2"; shift 2 ;;
        --interval) need_arg "$1" $#; INTERVAL=$2; shift 2 ;;
        --duration) need_arg "$1" $#; DURATION=$2; shift 2 ;;
        -o|--output) need_arg "$1" $#; OUTPUT=$2; shift 2 ;;
        --nvidia-smi) NVSMI=1; shift ;;
        --timeout) need_arg "$1" $#; TIMEOUT=$2; shift 2 ;;
        --force) FORCE=1; shift ;;
        --kube-namespace) need_arg "$1" $#; KUBE_NS=$2; shift 2 ;;
        --kube-selector) need_arg "$1" $#; KUBE_SEL=$2; shift 2 ;;
        --kube-dcgm-selector) need_arg "$1" $#; KUBE_DCGM_SEL=$2; shift 2 ;;
        --kube-dcgm-namespace) need_arg "$1" $#; KUBE_DCGM_NS=$2; shift 2 ;;
        --kube-port) need_arg "$1" $#; KUBE_PORT=$2; shift 2 ;;
        --kube-dcgm-port) need_arg "$1" $#; KUBE_DCGM_PORT=$2; shift 2 ;;
        --from-prometheus) need_arg "$1" $#; PROM=$2; shift 2 ;;
        --start) need_arg "$1" $#; START=$2; shift 2 ;;
        --end) need_arg "$1" $#; END=$2; shift 2 ;;
        --step) need_arg "$1" $#; STEP=$2; shift 2 ;;
        --match) need_arg "$1" $#; MATCH=$2; shift 2 ;;
        --device) need_arg "$1" $#; DEVICE=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

case "$INTERVAL" in ''|*[!0-9]*) die "--interval must be whole seconds" ;; esac
case "$DEVICE" in ''|gpu|cpu) ;; *) die "--device must be gpu or cpu" ;; esac
[ "$INTERVAL" -ge 1 ] || die "--interval must be at least 1"
case "$TIMEOUT" in ''|*[!0-9]*) die "--timeout must be whole seconds" ;; esac

# Duration in seconds.
case "$DURATION" in
    *h) SECS=$(( ${DURATION%h} * 3600 )) ;;
    *m) SECS=$(( ${DURATION%m} * 60 )) ;;
    *s) SECS=${DURATION%s} ;;
    *) SECS=$DURATION ;;
esac
case "$SECS" in ''|*[!0-9]*) die "--duration must look like 30m, 2h, 900s or 900" ;; esac

if command -v curl >/dev/null 2>&1; then
    FETCH=curl
elif command -v wget >/dev/null 2>&1; then
    FETCH=wget
else
    die "needs curl or wget"
fi

case "$OUTPUT" in
    *.zip) command -v zip >/dev/null 2>&1 || die "writing $OUTPUT needs zip (or use -o bundle.tar.gz)" ;;
    *.tar.gz|*.tgz) command -v tar >/dev/null 2>&1 || die "writing $OUTPUT needs tar" ;;
    *) die "-o must end in .zip, .tar.gz or .tgz" ;;
esac

# Milliseconds since the Unix epoch (GNU date; whole seconds elsewhere).
now_ms() {
    ms=$(date +%s%3N 2>/dev/null)
    case "$ms" in
        *N*|'') echo "$(date +%s)000" ;;
        *) echo "$ms" ;;
    esac
}

# JSON string contents: backslashes, quotes and control characters escaped.
json_escape() {
    printf '%s' "$1" | tr '\n\r\t' '   ' | sed 's/\\/\\\\/g; s/"/\\"/g'
}

# json_first FILE KEY: the first string value of KEY in a JSON file (no jq
# needed; enough for /version and /v1/models).
json_first() {
    grep -o "\"$2\"[[:space:]]*:[[:space:]]*\"[^\"]*\"" "$1" | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/'
}

# fetch URL FILE ERRFILE: 0 on success.
fetch() {
    if [ "$FETCH" = curl ]; then
        curl -fsS --max-time "$TIMEOUT" -o "$2" "$1" 2>"$3"
    else
        wget -q -T "$TIMEOUT" -O "$2" "$1" 2>"$3" || { echo "wget: failed to fetch $1" >>"$3"; return 1; }
    fi
}

NAME=$(basename "$OUTPUT")
NAME=${NAME%.zip}
NAME=${NAME%.tar.gz}
NAME=${NAME%.tgz}
TMP=$(mktemp -d 2>/dev/null || mktemp -d -t collect)
WORK="$TMP/$NAME"
mkdir -p "$WORK"
# Records with fields separated by US (0x1f): a tab would be IFS white
# space, and empty fields would collapse.
US=$(printf '\037')
TARGETS="$TMP/targets.rec"   # name kind url pod namespace node
SCRAPES="$TMP/scrapes.rec"   # target ms up file error
: >"$TARGETS"
: >"$SCRAPES"
STOP=0
trap 'STOP=1' INT TERM
trap 'rm -rf "$TMP"' EXIT

add_target() { # name kind url pod namespace node
    printf '%s\037%s\037%s\037%s\037%s\037%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >>"$TARGETS"
}

# scrape_one NAME URL MS: one scrape, its outcome appended to $SCRAPES.
scrape_one() {
    mkdir -p "$WORK/$1"
    file="$1/$3.prom"
    err="$TMP/err.$1.$3"
    case "$2" in
        kube:*)
            raw=${2#kube:}
            if kubectl get --raw "$raw" >"$WORK/$file" 2>"$err"; then ok=1; else ok=0; fi
            ;;
        *)
            if fetch "$2" "$WORK/$file" "$err"; then ok=1; else ok=0; fi
            ;;
    esac
    if [ "$ok" = 1 ]; then
        printf '%s\037%s\0371\037%s\037\n' "$1" "$3" "$file" >>"$SCRAPES"
    else
        rm -f "$WORK/$file"
        printf '%s\037%s\0370\037\037%s\n' "$1" "$3" "$(head -c 300 "$err" | tr '\n\t\037' '   ')" >>"$SCRAPES"
    fi
    rm -f "$err"
}

# nvidia-smi (and dcgmi dmon) samples, stored as the loader reads them.
sample_gpu() {
    mkdir -p "$WORK/nvidia-smi"
    nvidia-smi --query-gpu=timestamp,index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.free,memory.total,power.draw,temperature.gpu,clocks.sm,clocks.mem --format=csv >"$WORK/nvidia-smi/$1.csv" 2>/dev/null || rm -f "$WORK/nvidia-smi/$1.csv"
    if command -v dcgmi >/dev/null 2>&1; then
        mkdir -p "$WORK/dcgmi"
        dcgmi dmon -e 203,204,252,251,155,150,100,1001,1004,1005 -c 1 >"$WORK/dcgmi/$1.txt" 2>/dev/null || rm -f "$WORK/dcgmi/$1.txt"
    fi
}

write_manifest() {
    m="$WORK/manifest.json"
    {
        printf '{\n  "format": "vllm-lens-bundle",\n  "version": 1,\n  "targets": ['
        sep=""
        while IFS="$US" read -r tname tkind turl tpod tns tnode; do
            printf '%s\n    {"name": "%s", "kind": "%s", "url": "%s"' "$sep" "$(json_escape "$tname")" "$tkind" "$(json_escape "$turl")"
            [ -n "$tpod" ] && printf ', "pod": "%s"' "$(json_escape "$tpod")"
            [ -n "$tns" ] && printf ', "namespace": "%s"' "$(json_escape "$tns")"
            [ -n "$tnode" ] && printf ', "node": "%s"' "$(json_escape "$tnode")"
            printf '}'
            sep=","
        done <"$TARGETS"
        printf '\n  ],\n  "scrapes": ['
        sep=""
        while IFS="$US" read -r starget sms sup sfile serr; do
            if [ "$sup" = 1 ]; then
                printf '%s\n    {"target": "%s", "time_ms": %s, "file": "%s", "up": 1}' "$sep" "$(json_escape "$starget")" "$sms" "$(json_escape "$sfile")"
            else
                printf '%s\n    {"target": "%s", "time_ms": %s, "up": 0, "error": "%s"}' "$sep" "$(json_escape "$starget")" "$sms" "$(json_escape "$serr")"
            fi
            sep=","
        done <"$SCRAPES"
        printf '\n  ],\n  "capture": {"interval_s": %s, "start_ms": %s, "end_ms": %s, "tool": "collect.sh"}' "$INTERVAL" "$T0" "$(now_ms)"
        printf ',\n  "environment": {'
        sep=""
        if [ -n "${VLLM_VERSION:-}" ]; then printf '"vllm_version": "%s"' "$(json_escape "$VLLM_VERSION")"; sep=", "; fi
        if [ -n "${MODEL:-}" ]; then printf '%s"model": "%s"' "$sep" "$(json_escape "$MODEL")"; sep=", "; fi
        if [ -n "${GPU_MODEL:-}" ]; then printf '%s"gpu_model": "%s", "gpu_count": %s' "$sep" "$(json_escape "$GPU_MODEL")" "$GPU_COUNT"; sep=", "; fi
        if [ -n "${DRIVER:-}" ]; then printf '%s"driver_version": "%s"' "$sep" "$(json_escape "$DRIVER")"; sep=", "; fi
        if [ -n "$DEVICE" ]; then printf '%s"device": "%s"' "$sep" "$(json_escape "$DEVICE")"; fi
        printf '}\n}\n'
    } >"$m"
}

pack() {
    case "$OUTPUT" in
        /*) out=$OUTPUT ;;
        *) out="$(pwd)/$OUTPUT" ;;
    esac
    rm -f "$out"
    case "$OUTPUT" in
        *.zip) (cd "$TMP" && zip -qr "$out" "$NAME") || die "zip failed" ;;
        *) tar -czf "$out" -C "$TMP" "$NAME" || die "tar failed" ;;
    esac
    ok_count=$(awk -F "$US" '$3 == 1' "$SCRAPES" | wc -l | tr -d ' ')
    bad_count=$(awk -F "$US" '$3 == 0' "$SCRAPES" | wc -l | tr -d ' ')
    printf 'collect.sh: wrote %s (%s scrapes, %s failed)\n' "$OUTPUT" "$ok_count" "$bad_count" >&2
}

T0=$(now_ms)

# --- Prometheus mode -------------------------------------------------------
if [ -n "$PROM" ]; then
    if [ -z "$START" ] || [ -z "$END" ]; then die "--from-prometheus needs --start and --end"; fi
    command -v curl >/dev/null 2>&1 || die "--from-prometheus needs curl"
    extra=""
    if [ -n "$MATCH" ]; then
        extra=$(printf '%s' "$MATCH" | sed 's/^[[:space:]]*{//; s/}[[:space:]]*$//')
        [ -n "$extra" ] && extra=",$extra"
    fi
    mkdir -p "$WORK/prometheus"
    add_target prometheus other "$PROM" "" "" ""
    for pair in 'vllm=vllm:.*' 'vllm-otel=vllm_.*' 'dcgm=DCGM_FI_.*' 'http=http_requests_total' 'process=process_start_time_seconds'; do
        group=${pair#*=}
        file="prometheus/${pair%%=*}.json"
        err="$TMP/err.prom"
        if curl -fsS --max-time 120 -G "${PROM%/}/api/v1/query_range" \
            --data-urlencode "query={__name__=~\"$group\"$extra}" \
            --data-urlencode "start=$START" --data-urlencode "end=$END" \
            --data-urlencode "step=$STEP" -o "$WORK/$file" 2>"$err"; then
            printf 'prometheus\037%s\0371\037%s\037\n' "$(now_ms)" "$file" >>"$SCRAPES"
        else
            rm -f "$WORK/$file"
            printf 'prometheus\037%s\0370\037\037%s\n' "$(now_ms)" "$(head -c 300 "$err" | tr '\n\t\037' '   ')" >>"$SCRAPES"
        fi
    done
    write_manifest
    pack
    exit 0
fi

# --- Targets ---------------------------------------------------------------
i=0
for url in $VLLM_URLS; do
    add_target "vllm-$i" vllm "$url" "" "" ""
    i=$((i + 1))
done
i=0
for url in $DCGM_URLS; do
    add_target "dcgm-$i" dcgm "$url" "" "" ""
    i=$((i + 1))
done
if [ -n "$KUBE_NS" ] || [ -n "$KUBE_SEL" ]; then
    if [ -z "$KUBE_NS" ] || [ -z "$KUBE_SEL" ]; then die "kubectl mode needs --kube-namespace and --kube-selector"; fi
    command -v kubectl >/dev/null 2>&1 || die "kubectl mode needs kubectl on PATH"
    discover() { # namespace selector kind port
        kubectl get pods -n "$1" -l "$2" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}' 2>"$TMP/err.kube" \
            || die "kubectl could not list pods in $1 with $2: $(head -c 300 "$TMP/err.kube")"
    }
    i=0
    for line in $(discover "$KUBE_NS" "$KUBE_SEL" | tr ' ' '|'); do
        pod=${line%%|*}
        node=${line#*|}
        add_target "vllm-$i" vllm "kube:/api/v1/namespaces/$KUBE_NS/pods/$pod:$KUBE_PORT/proxy/metrics" "$pod" "$KUBE_NS" "$node"
        i=$((i + 1))
    done
    [ "$i" -gt 0 ] || die "no pod in $KUBE_NS matches $KUBE_SEL"
    if [ -n "$KUBE_DCGM_SEL" ]; then
        dns=${KUBE_DCGM_NS:-$KUBE_NS}
        i=0
        for line in $(discover "$dns" "$KUBE_DCGM_SEL" | tr ' ' '|'); do
            pod=${line%%|*}
            node=${line#*|}
            add_target "dcgm-$i" dcgm "kube:/api/v1/namespaces/$dns/pods/$pod:$KUBE_DCGM_PORT/proxy/metrics" "$pod" "$dns" "$node"
            i=$((i + 1))
        done
    fi
fi
[ -s "$TARGETS" ] || die "nothing to capture: give --vllm/--dcgm URLs, kubectl mode or --from-prometheus (see --help)"

# --- Facts: vLLM's version and model, nvidia-smi ---------------------------
first_vllm=$(awk -F "$US" '$2 == "vllm" && $3 !~ /^kube:/ { print $3; exit }' "$TARGETS")
if [ -n "$first_vllm" ]; then
    base=${first_vllm%/metrics}
    mkdir -p "$WORK/meta"
    if fetch "$base/version" "$WORK/meta/version.json" /dev/null; then
        VLLM_VERSION=$(json_first "$WORK/meta/version.json" version)
    else
        rm -f "$WORK/meta/version.json"
    fi
    if fetch "$base/v1/models" "$WORK/meta/models.json" /dev/null; then
        # The first "id" is the first model's; each also carries permission
        # objects with ids of their own.
        MODEL=$(json_first "$WORK/meta/models.json" id)
    else
        rm -f "$WORK/meta/models.json"
    fi
fi
if command -v nvidia-smi >/dev/null 2>&1; then
    facts=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)
    if [ -n "$facts" ]; then
        GPU_MODEL=$(printf '%s\n' "$facts" | head -n 1 | cut -d, -f1 | sed 's/^ *//; s/ *$//')
        DRIVER=$(printf '%s\n' "$facts" | head -n 1 | cut -d, -f2 | sed 's/^ *//; s/ *$//')
        GPU_COUNT=$(printf '%s\n' "$facts" | wc -l | tr -d ' ')
    fi
fi

# --- Size estimate ----------------------------------------------------------
slots=$(( SECS / INTERVAL + 1 ))
probe_bytes=0
while IFS="$US" read -r tname _ turl _ _ _; do
    case "$turl" in
        kube:*) size=200000 ;;
        *)
            if fetch "$turl" "$TMP/probe" /dev/null; then size=$(wc -c <"$TMP/probe" | tr -d ' '); else size=0; fi
            ;;
    esac
    probe_bytes=$((probe_bytes + size))
    [ "$size" -gt 0 ] || printf 'collect.sh: %s (%s) does not answer yet; its failed scrapes will be recorded\n' "$tname" "$turl" >&2
done <"$TARGETS"
rm -f "$TMP/probe"
estimate=$(( probe_bytes * slots / 1048576 ))
printf 'collect.sh: %s target(s), %s scrapes each over %ss: about %s MiB of text (roughly a tenth zipped)\n' \
    "$(wc -l <"$TARGETS" | tr -d ' ')" "$slots" "$SECS" "$estimate" >&2
if [ "$estimate" -gt 1024 ] && [ "$FORCE" != 1 ]; then
    die "that is over 1 GiB: shorten --duration, raise --interval, or pass --force"
fi

# --- Capture loop -------------------------------------------------------------
start_s=$(date +%s)
slot=0
while [ "$STOP" = 0 ] && [ "$slot" -lt "$slots" ]; do
    ms=$(now_ms)
    while IFS="$US" read -r tname _ turl _ _ _; do
        scrape_one "$tname" "$turl" "$ms" &
    done <"$TARGETS"
    [ "$NVSMI" = 1 ] && command -v nvidia-smi >/dev/null 2>&1 && sample_gpu "$ms" &
    wait
    slot=$((slot + 1))
    [ "$slot" -lt "$slots" ] || break
    next=$(( start_s + slot * INTERVAL ))
    delay=$(( next - $(date +%s) ))
    if [ "$delay" -gt 0 ] && [ "$STOP" = 0 ]; then
        sleep "$delay" &
        wait $! 2>/dev/null || true
    fi
done
[ "$STOP" = 1 ] && printf 'collect.sh: stopped; writing what was captured\n' >&2

write_manifest
pack
