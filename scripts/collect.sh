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
  collect.sh --from-prometheus URL --start T --end T [--step 15s] [--piece 1h] [--window 5m] [--match '{...}'] -o bundle.zip

Scrape mode (default): every --interval seconds for --duration, fetch each
/metrics URL and store it as <target>/<unix ms>.prom, with a manifest that
records every capture time, every failed scrape (up: 0 and the error), vLLM's
/version, /v1/models and /server_info when reachable, the flags each vLLM
server was started with when they can be read, and nvidia-smi facts when
present.

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
  --step S                 the scrape interval, for the estimate and the smallest
                           piece (default 15s); the export keeps every raw sample
  --piece D                time per query (default 1h); a piece over the server's
                           sample limit is halved, then split by instance
  --window D               pushdown: instead of raw samples, ask Prometheus for each
                           window of D (15s to 1h, aligned like the report's) for
                           gauges' min/max/avg/count and counters' last value
                           (raw samples only where a counter reset); far smaller
                           for long ranges, per-scrape detail is lost
  --match '{...}'          extra label matchers, e.g. '{namespace="llm"}'
  --device KIND            what vLLM runs on, for the manifest: gpu, or cpu (a CPU
                           server: no GPU, so no dcgm-exporter to scrape)
  --server-args 'ARGS'     the flags vLLM was started with (e.g. '--max-num-seqs 64
                           --max-num-batched-tokens 2048'), for every vLLM target;
                           without it they are read from a local vLLM process on
                           the target's port (/proc) or from the pod spec (kubectl)
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
PIECE=1h
WINDOW=""
MATCH=""
DEVICE=""
SERVER_ARGS=""

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
        --piece) need_arg "$1" $#; PIECE=$2; shift 2 ;;
        --window) need_arg "$1" $#; WINDOW=$2; shift 2 ;;
        --match) need_arg "$1" $#; MATCH=$2; shift 2 ;;
        --device) need_arg "$1" $#; DEVICE=$2; shift 2 ;;
        --server-args) need_arg "$1" $#; SERVER_ARGS=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

if [ -n "$WINDOW" ] && [ -z "$PROM" ]; then die "--window pushes down to Prometheus: it needs --from-prometheus"; fi
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
        printf '\n  ],\n  "capture": {"interval_s": %s, "start_ms": %s, "end_ms": %s, "tool": "collect.sh"' "$INTERVAL" "$T0" "${CAPTURE_END_MS:-$(now_ms)}"
        if [ -n "${win_s:-}" ]; then printf ', "pushdown_window_s": %s' "$win_s"; fi
        printf '}'
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
# The raw samples with their own timestamps: per family group and per time
# piece, an instant query of a range selector ({__name__=~"vllm:.*"}[1h])
# at the piece's end, so the bundle holds exactly what was scraped (no
# resampling). A piece whose answer would exceed the server's sample limit
# is halved in time, and below one step split by instance; a failed piece is
# retried. Prometheus 2.x range selectors include both ends: a point on a
# piece's edge comes twice and the loader keeps one.

# to_ms T: RFC 3339 or Unix seconds (with up to 3 decimals) → Unix ms.
to_ms() {
    case "$1" in
        ''|*[!0-9.]*)
            ms=$(date -u -d "$1" +%s%3N 2>/dev/null)
            case "$ms" in *N*|'') ms=$(date -u -d "$1" +%s 2>/dev/null) && ms="${ms}000" ;; esac
            echo "$ms" ;;
        *.*)
            frac="${1#*.}000"
            echo "${1%%.*}$(printf '%.3s' "$frac")" | sed 's/^0*\([0-9]\)/\1/' ;;
        *) echo "${1}000" ;;
    esac
}

# dur_secs D: 1h, 30m, 15s or plain seconds → seconds.
dur_secs() {
    case "$1" in
        *h) echo $(( ${1%h} * 3600 )) ;;
        *m) echo $(( ${1%m} * 60 )) ;;
        *s) echo "${1%s}" ;;
        *) echo "$1" ;;
    esac
}

# prom_query FILE QUERY TIME: an instant query; prints the HTTP status (000
# when the server did not answer), the body in FILE.
prom_query() {
    curl -sS --max-time "$PROM_TIMEOUT" -G "${PROM%/}/api/v1/query" \
        --data-urlencode "query=$2" --data-urlencode "time=$3" \
        --data-urlencode "max_source_resolution=0s" \
        -o "$1" -w '%{http_code}' 2>>"$TMP/curl.err" || true
}

if [ -n "$PROM" ]; then
    if [ -z "$START" ] || [ -z "$END" ]; then die "--from-prometheus needs --start and --end"; fi
    command -v curl >/dev/null 2>&1 || die "--from-prometheus needs curl"
    start_ms=$(to_ms "$START"); end_ms=$(to_ms "$END")
    case "$start_ms" in ''|*[!0-9]*) die "--start $START: use RFC 3339 (2026-07-01T10:00:00Z) or Unix seconds" ;; esac
    case "$end_ms" in ''|*[!0-9]*) die "--end $END: use RFC 3339 (2026-07-01T10:00:00Z) or Unix seconds" ;; esac
    [ "$end_ms" -gt "$start_ms" ] || die "--end must be after --start"
    start_s=$(( start_ms / 1000 )); end_s=$(( (end_ms + 999) / 1000 ))
    step_s=$(dur_secs "$STEP"); piece_s=$(dur_secs "$PIECE")
    win_s=""
    if [ -n "$WINDOW" ]; then
        win_s=$(dur_secs "$WINDOW")
        case "$win_s" in ''|*[!0-9]*) die "--window must look like 1m, 5m or 1h" ;; esac
        if [ "$win_s" -lt 15 ] || [ "$win_s" -gt 3600 ]; then die "--window must be between 15s and 1h"; fi
        if [ "$win_s" -lt "$step_s" ]; then die "--window must be at least --step"; fi
    fi
    case "$step_s$piece_s" in ''|*[!0-9]*) die "--step and --piece must look like 15s, 5m or 1h" ;; esac
    if [ "$step_s" -lt 1 ] || [ "$piece_s" -lt "$step_s" ]; then die "--piece must be at least --step"; fi
    # Never a piece over 11,000 steps (Prometheus' limit per series).
    [ "$piece_s" -le $(( step_s * 11000 )) ] || piece_s=$(( step_s * 11000 ))
    PROM_TIMEOUT=$(( TIMEOUT > 120 ? TIMEOUT : 120 ))
    extra=""
    if [ -n "$MATCH" ]; then
        extra=$(printf '%s' "$MATCH" | sed 's/^[[:space:]]*{//; s/}[[:space:]]*$//')
        [ -n "$extra" ] && extra=",$extra"
    fi
    GROUPS_RE='vllm=vllm:.* vllm-otel=vllm_.* dcgm=DCGM_FI_.* http=http_.* process=process_.*'
    mkdir -p "$WORK/prometheus"
    add_target prometheus other "$PROM" "" "" ""
    : >"$TMP/curl.err"

    # The estimate: the series that existed in the range (the series API
    # reads the index, not the samples), one sample per step each.
    series=0
    for pair in $GROUPS_RE; do
        code=$(curl -sS --max-time "$PROM_TIMEOUT" -G "${PROM%/}/api/v1/series" \
            --data-urlencode "match[]={__name__=~\"${pair#*=}\"$extra}" \
            --data-urlencode "start=$start_s" --data-urlencode "end=$end_s" \
            -o "$TMP/series.json" -w '%{http_code}' 2>>"$TMP/curl.err" || true)
        if [ "$code" != 200 ]; then
            die "$PROM does not answer the series API (HTTP $code): $(head -c 300 "$TMP/series.json" "$TMP/curl.err" 2>/dev/null | tr '\n' ' ')"
        fi
        n=$(grep -o '"__name__"' "$TMP/series.json" | wc -l | tr -d ' ')
        series=$(( series + n ))
    done
    span=$(( end_s - start_s ))
    npieces=$(( (span + piece_s - 1) / piece_s ))
    total=0
    for pair in $GROUPS_RE; do total=$(( total + npieces )); done
    if [ -z "$WINDOW" ]; then
        printf 'collect.sh: exporting %s to %s: %s series, about %s samples at one per %ss, in %s pieces of %ss\n' \
            "$START" "$END" "$series" "$(( series * (span / step_s + 1) ))" "$step_s" "$total" "$piece_s" >&2
    else
        printf 'collect.sh: exporting %s to %s: %s series, pushed down to windows of %ss (about %s values instead of %s raw samples)\n' \
            "$START" "$END" "$series" "$win_s" "$(( series * (span / win_s + 1) ))" "$(( series * (span / step_s + 1) ))" >&2
    fi
    [ "$series" -gt 0 ] || die "no series match in the range (check --match, --start and --end): nothing to export"

    # Pieces are (start, end] in ms, end-to-end, so no sample is read twice
    # or missed: Prometheus 2.x range selectors include both ends (the range
    # is then 1 ms short), 3.x leave the start out. The first piece starts
    # 1 ms before --start so that --start itself is read.
    build=$(curl -sS --max-time "$PROM_TIMEOUT" "${PROM%/}/api/v1/status/buildinfo" 2>/dev/null || true)
    case "$build" in
        *'"version":"3.'*) closed_start=0 ;;
        *) closed_start=1 ;;
    esac
    # ms → the API's seconds with three decimals.
    api_time() { printf '%s.%03d' "$(( $1 / 1000 ))" "$(( $1 % 1000 ))"; }

    # The work queue: group name, regex, piece start (excluded), end, instance.
    QUEUE="$TMP/queue.rec"; NEXT="$TMP/queue.next"
    : >"$QUEUE"
    done_n=0; failed=0; empty=0; last_pct=-1; halved=0; by_instance=0
    progress() {
        pct=$(( (done_n + failed) * 10 / (total > 0 ? total : 1) ))
        if [ "$pct" != "$last_pct" ]; then
            last_pct=$pct
            printf 'collect.sh: %s of %s pieces (%s0 %%)\n' "$(( done_n + failed ))" "$total" "$pct" >&2
        fi
    }
    # kept FILE TIME: an answer that came is in the bundle (recorded at
    # TIME), or dropped when it holds no series.
    kept() {
        if grep -q '"result":\[\]' "$WORK/$1"; then
            empty=$(( empty + 1 )); rm -f "$WORK/$1"
        else
            printf 'prometheus\037%s\0371\037%s\037\n' "$2" "$1" >>"$SCRAPES"
        fi
        done_n=$(( done_n + 1 ))
    }
    # instances SEL FROM_MS TO_MS: the instances of the series SEL matches
    # in that time (the series API reads the index, not the samples).
    instances() {
        curl -sS --max-time "$PROM_TIMEOUT" -G "${PROM%/}/api/v1/series" \
            --data-urlencode "match[]={$1}" \
            --data-urlencode "start=$(api_time "$2")" --data-urlencode "end=$(api_time "$3")" \
            -o "$TMP/inst.json" 2>>"$TMP/curl.err" || : >"$TMP/inst.json"
        grep -o '"instance":"[^"]*"' "$TMP/inst.json" | sed 's/^"instance":"//; s/"$//' | sort -u
    }
    if [ -n "$WINDOW" ]; then
        # Pushdown: per metric name and piece of at most 11,000 windows, one
        # query_range at each window's last millisecond (windows aligned to
        # multiples of their width, as the report's are): the last value
        # of every series (last_over_time), and for gauges min, max, avg
        # and count over the window, each labelled vllm_lens_stat. Names
        # are restored with label_replace (functions drop them). Counters
        # (names ending _total, _bucket, _count, _sum, _created) are also
        # (and DCGM's energy counter) asked whether they reset in the
        # window or the one before, or
        # appear in it after a window without them (the capture's first
        # window, a return after a gap); those windows are then read raw,
        # so every increase stays exact.
        PUSH_NAMES="$TMP/names.json"; FLAGGED="$TMP/flagged"
        : >"$FLAGGED"
        w_ms=$(( win_s * 1000 ))
        first_win=$(( start_ms / w_ms * w_ms ))
        last_win=$(( (end_ms - 1) / w_ms * w_ms ))
        nwin=$(( (last_win - first_win) / w_ms + 1 ))
        per=$(( nwin < 11000 ? nwin : 11000 ))
        npush=$(( (nwin + per - 1) / per ))
        range_ms=$(( w_ms - closed_start ))
        range2_ms=$(( 2 * w_ms - closed_start ))
        names_all=""
        total=0
        for pair in $GROUPS_RE; do
            curl -sS --max-time "$PROM_TIMEOUT" -G "${PROM%/}/api/v1/label/__name__/values" \
                --data-urlencode "match[]={__name__=~\"${pair#*=}\"$extra}" \
                --data-urlencode "start=$start_s" --data-urlencode "end=$end_s" \
                -o "$PUSH_NAMES" 2>>"$TMP/curl.err" || : >"$PUSH_NAMES"
            names=$(sed 's/.*"data":\[//; s/\].*//' "$PUSH_NAMES" | tr ',' '\n' | sed 's/^"//; s/"$//' | grep -E '^[A-Za-z_:][A-Za-z0-9_:]*$' || true)
            for n in $names; do
                names_all="$names_all ${pair%%=*}=$n"
                total=$(( total + npush ))
            done
        done
        printf 'collect.sh: pushdown at %ss: %s windows, %s queries (one per metric name and piece of up to 11,000 windows)\n' \
            "$win_s" "$nwin" "$total" >&2
        for gn in $names_all; do
            [ "$STOP" = 0 ] || break
            gname=${gn%%=*}; n=${gn#*=}
            case "$n" in
                *_total|*_bucket|*_count|*_sum|*_created|*_ENERGY_CONSUMPTION) counter=1 ;;
                *) counter=0 ;;
            esac
            rl() { printf 'label_replace(%s,"__name__","%s","","")' "$1" "$n"; }
            st() { printf 'label_replace(%s,"vllm_lens_stat","%s","","")' "$(rl "$1_over_time({$sel}[${range_ms}ms])")" "$1"; }
            # The work list: first window:last window:instance. A piece
            # over the server's sample limit is halved, then (one window)
            # split by instance, as in the raw export.
            work=""
            p0=0
            while [ "$p0" -lt "$nwin" ]; do
                p1=$(( p0 + per - 1 )); [ "$p1" -lt "$nwin" ] || p1=$(( nwin - 1 ))
                work="$work $p0:$p1:"
                p0=$(( p1 + 1 ))
            done
            while [ -n "$work" ] && [ "$STOP" = 0 ]; do
                item=${work%% *}; [ -n "$item" ] || { work=${work# }; continue; }
                work=${work#"$item"}; work=${work# }
                p0=${item%%:*}; rest=${item#*:}; p1=${rest%%:*}; pinst=${rest#*:}
                sel="__name__=\"$n\"$extra${pinst:+,instance=\"$pinst\"}"
                # The last value and its own time (timestamp() of a selector
                # is the sample's; of a function, the evaluation's).
                expr="$(rl "last_over_time({$sel}[${range_ms}ms])") or label_replace($(rl "timestamp({$sel})"),\"vllm_lens_stat\",\"time\",\"\",\"\")"
                if [ "$counter" = 0 ]; then
                    expr="$expr or $(st max) or $(st min) or $(st avg) or $(st count)"
                fi
                te0=$(( first_win + p0 * w_ms + w_ms - 1 )); te1=$(( first_win + p1 * w_ms + w_ms - 1 ))
                dir="prometheus/pushdown/$gname"; mkdir -p "$WORK/$dir"
                file="$dir/$(printf '%s' "$n${pinst:+-$pinst}" | tr -c 'A-Za-z0-9._-' '_')-$te0-$te1.json"
                tries=0; outcome=retry
                while [ "$outcome" = retry ]; do
                    tries=$(( tries + 1 ))
                    code=$(curl -sS --max-time "$PROM_TIMEOUT" -G "${PROM%/}/api/v1/query_range" \
                        --data-urlencode "query=$expr" --data-urlencode "start=$(api_time "$te0")" \
                        --data-urlencode "end=$(api_time "$te1")" --data-urlencode "step=${win_s}s" \
                        --data-urlencode "max_source_resolution=0s" \
                        -o "$WORK/$file" -w '%{http_code}' 2>>"$TMP/curl.err" || true)
                    if [ "$code" = 200 ] && grep -q '"status":"success"' "$WORK/$file"; then
                        outcome=ok
                    elif grep -q 'too many samples' "$WORK/$file" 2>/dev/null; then
                        outcome="split"
                    elif [ "$tries" -ge 3 ]; then
                        outcome=failed
                    else
                        sleep "$tries"
                    fi
                done
                if [ "$outcome" = ok ] && [ "$counter" = 1 ]; then
                    rcode=$(curl -sS --max-time "$PROM_TIMEOUT" -G "${PROM%/}/api/v1/query_range" \
                        --data-urlencode "query=count(resets({$sel}[${range2_ms}ms]) > 0) or count(last_over_time({$sel}[${range_ms}ms]) unless last_over_time({$sel}[${range_ms}ms] offset ${w_ms}ms))" \
                        --data-urlencode "start=$(api_time "$te0")" --data-urlencode "end=$(api_time "$te1")" \
                        --data-urlencode "step=${win_s}s" --data-urlencode "max_source_resolution=0s" \
                        -o "$TMP/resets.json" -w '%{http_code}' 2>>"$TMP/curl.err" || true)
                    if [ "$rcode" = 200 ]; then
                        grep -o '\[[0-9.]*,"[0-9.e+]*"\]' "$TMP/resets.json" | sed 's/^\[//; s/,.*//' | while read -r t; do
                            printf '%s %s\n' "$gname" "$(to_ms "$t")"
                        done >>"$FLAGGED"
                    elif grep -q 'too many samples' "$TMP/resets.json" 2>/dev/null; then
                        outcome="split"
                    else
                        outcome=failed
                    fi
                fi
                if [ "$outcome" = split ]; then
                    rm -f "$WORK/$file"
                    if [ "$p1" -gt "$p0" ]; then
                        mid=$(( p0 + (p1 - p0) / 2 ))
                        work="$p0:$mid:$pinst $(( mid + 1 )):$p1:$pinst $work"
                        total=$(( total + 1 )); halved=$(( halved + 1 ))
                        continue
                    elif [ -z "$pinst" ]; then
                        insts=$(instances "$sel" $(( te0 - w_ms )) "$te1")
                        k=0
                        for i in $insts; do
                            work="$p0:$p1:$i $work"
                            k=$(( k + 1 ))
                        done
                        if [ "$k" -gt 0 ]; then
                            total=$(( total + k - 1 )); by_instance=$(( by_instance + 1 ))
                            continue
                        fi
                    fi
                    outcome=failed
                    printf '%s' "over the sample limit even for one window of one instance; raise --query.max-samples" >"$WORK/$file"
                fi
                case "$outcome" in
                    ok) kept "$file" "$te1" ;;
                    *)
                        failed=$(( failed + 1 ))
                        why=$(head -c 300 "$WORK/$file" 2>/dev/null | tr '\n\t\037' '   ')
                        [ -n "$why" ] || why="HTTP $code"
                        rm -f "$WORK/$file"
                        printf 'collect.sh: %s ending %s failed: %s\n' "$n${pinst:+ of $pinst}" "$(api_time "$te1")" "$why" >&2
                        printf 'prometheus\037%s\0370\037\037%s\n' "$te1" "$n: $why" >>"$SCRAPES" ;;
                esac
                progress
            done
        done
        # The windows where a counter reset or began (and the one before), raw.
        for pair in $GROUPS_RE; do
            g=${pair%%=*}
            # Each as (te - 2w, te], overlapping ones merged: no sample twice.
            awk -v g="$g" '$1 == g { print $2 }' "$FLAGGED" | sort -un |
                awk -v w="$w_ms" -v g="$g" -v re="${pair#*=}" '
                    function out() { if (to != "") printf "%s\037%s\037%.0f\037%.0f\037\n", g, re, from, to }
                    { f = $1 - 2 * w; if (to != "" && f <= to) { to = $1 } else { out(); from = f; to = $1 } }
                    END { out() }' >>"$QUEUE"
        done
        nraw=$(wc -l <"$QUEUE" | tr -d ' ')
        total=$(( total + nraw ))
        [ "$nraw" = 0 ] || printf 'collect.sh: %s stretches where a counter reset or began, read raw\n' "$nraw" >&2
    else
        first_ms=$(( start_ms - 1 ))
        for pair in $GROUPS_RE; do
            t=$end_ms
            while [ "$t" -gt "$first_ms" ]; do
                from=$(( t - piece_s * 1000 ))
                # A sliver under one step joins the piece (a range of
                # 1 ms would be empty on 2.x, whose ranges are 1 ms short).
                [ "$from" -gt $(( first_ms + step_s * 1000 )) ] || from=$first_ms
                printf '%s\037%s\037%s\037%s\037\n' "${pair%%=*}" "${pair#*=}" "$from" "$t" >>"$QUEUE"
                t=$from
            done
        done
        total=$(wc -l <"$QUEUE" | tr -d ' ')
    fi
    while [ -s "$QUEUE" ] && [ "$STOP" = 0 ]; do
        : >"$NEXT"
        while IFS="$US" read -r gname gre pfrom pend pinst; do
            [ "$STOP" = 0 ] || break
            sel="__name__=~\"$gre\"$extra"
            [ -n "$pinst" ] && sel="$sel,instance=\"$pinst\""
            dir="prometheus/$gname"; mkdir -p "$WORK/$dir"
            file="$dir/$pfrom-$pend${pinst:+-$(printf '%s' "$pinst" | tr -c 'A-Za-z0-9._-' '_')}.json"
            range_ms=$(( pend - pfrom - closed_start ))
            tries=0; outcome="retry"
            while [ "$outcome" = retry ]; do
                tries=$(( tries + 1 ))
                code=$(prom_query "$WORK/$file" "{$sel}[${range_ms}ms]" "$(api_time "$pend")")
                if [ "$code" = 200 ] && grep -q '"status":"success"' "$WORK/$file"; then
                    outcome="ok"
                elif grep -q 'too many samples' "$WORK/$file" 2>/dev/null; then
                    outcome="split"
                elif [ "$tries" -ge 3 ]; then
                    outcome="failed"
                else
                    sleep "$tries"
                fi
            done
            case "$outcome" in
                ok) kept "$file" "$pend" ;;
                split)
                    rm -f "$WORK/$file"
                    if [ $(( pend - pfrom )) -gt $(( step_s * 1000 )) ]; then
                        mid=$(( pfrom + (pend - pfrom) / 2 ))
                        printf '%s\037%s\037%s\037%s\037%s\n' "$gname" "$gre" "$pfrom" "$mid" "$pinst" >>"$NEXT"
                        printf '%s\037%s\037%s\037%s\037%s\n' "$gname" "$gre" "$mid" "$pend" "$pinst" >>"$NEXT"
                        total=$(( total + 1 )); halved=$(( halved + 1 ))
                    elif [ -z "$pinst" ]; then
                        # One step of every series is still too much: one
                        # instance at a time (the series API reads the
                        # index, not the samples).
                        insts=$(instances "$sel" "$pfrom" "$pend")
                        n=0
                        for i in $insts; do
                            printf '%s\037%s\037%s\037%s\037%s\n' "$gname" "$gre" "$pfrom" "$pend" "$i" >>"$NEXT"
                            n=$(( n + 1 ))
                        done
                        total=$(( total + n - 1 )); by_instance=$(( by_instance + 1 ))
                        if [ "$n" = 0 ]; then
                            failed=$(( failed + 1 ))
                            printf 'collect.sh: %s ending %s: over the sample limit and no instance to split by\n' "$gname" "$(api_time "$pend")" >&2
                        fi
                    else
                        failed=$(( failed + 1 ))
                        printf 'collect.sh: %s of %s ending %s: over the server'"'"'s sample limit even for one step of one instance; raise --query.max-samples\n' "$gname" "$pinst" "$(api_time "$pend")" >&2
                        printf 'prometheus\037%s\0370\037\037%s\n' "$pend" "over the sample limit: $gname $pinst" >>"$SCRAPES"
                    fi ;;
                failed)
                    failed=$(( failed + 1 ))
                    why=$(head -c 300 "$WORK/$file" 2>/dev/null | tr '\n\t\037' '   ')
                    [ -n "$why" ] || why="HTTP $code: $(tail -n 1 "$TMP/curl.err" | tr '\n\t\037' '   ')"
                    rm -f "$WORK/$file"
                    printf 'collect.sh: %s ending %s failed 3 times: %s\n' "$gname" "$(api_time "$pend")" "$why" >&2
                    printf 'prometheus\037%s\0370\037\037%s\n' "$pend" "$why" >>"$SCRAPES" ;;
            esac
            progress
        done <"$QUEUE"
        mv "$NEXT" "$QUEUE"
    done
    T0=$start_ms; CAPTURE_END_MS=$end_ms; INTERVAL=$step_s
    kept=$(awk -F "$US" '$3 == 1' "$SCRAPES" | wc -l | tr -d ' ')
    if [ "$kept" = 0 ]; then
        die "the export captured nothing ($failed pieces failed, $empty empty): no bundle written"
    fi
    if [ $(( halved + by_instance )) -gt 0 ]; then
        printf 'collect.sh: over the server'"'"'s sample limit, %s pieces were halved and %s split by instance\n' "$halved" "$by_instance" >&2
    fi
    write_manifest
    pack
    if [ "$failed" -gt 0 ] || [ "$STOP" = 1 ]; then
        printf 'collect.sh: the export is incomplete: %s of %s pieces missing%s; the bundle holds the rest\n' \
            "$(( total - done_n ))" "$total" "$( [ "$STOP" = 1 ] && echo ' (stopped)')" >&2
        exit 1
    fi
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

# --- Facts: the flags each vLLM server was started with ----------------------
# meta/cmdline/<target>.txt, one argument per line, from --server-args, else
# from a vLLM process on this host serving the target's port (/proc), else
# from the pod's spec (kubectl mode). meta/server_info.json is vLLM's
# /server_info (answered only with VLLM_SERVER_DEV_MODE=1).
is_local_host() {
    case "$1" in localhost|127.*|::1|'[::1]'|0.0.0.0) return 0 ;; esac
    [ "$1" = "$(hostname 2>/dev/null)" ] && return 0
    for a in $(hostname -I 2>/dev/null); do [ "$1" = "$a" ] && return 0; done
    return 1
}
# local_cmdline PORT FILE: the arguments of a vLLM server on this host that
# listens on PORT (its --port, 8000 when not given).
local_cmdline() {
    [ -d /proc ] || return 1
    for d in /proc/[0-9]*; do
        tr '\000' '\n' <"$d/cmdline" >"$TMP/cmdline" 2>/dev/null || continue
        grep -Eq '(vllm\.entrypoints\.openai\.api_server|vllm\.entrypoints\.cli\.main|(^|/)vllm$)' "$TMP/cmdline" || continue
        grep -Eq '^(serve|vllm\.entrypoints\.openai\.api_server)$|api_server' "$TMP/cmdline" || continue
        p=$(awk 'prev == "--port" { print; exit } /^--port=/ { sub(/^--port=/, ""); print; exit } { prev = $0 }' "$TMP/cmdline")
        [ "${p:-8000}" = "$1" ] || continue
        cp "$TMP/cmdline" "$2"
        return 0
    done
    return 1
}
while IFS="$US" read -r tname tkind turl tpod tns _; do
    [ "$tkind" = vllm ] || continue
    mkdir -p "$WORK/meta/cmdline"
    out="$WORK/meta/cmdline/$tname.txt"
    if [ -n "$SERVER_ARGS" ]; then
        # shellcheck disable=SC2086
        printf '%s\n' $SERVER_ARGS >"$out"
    elif [ -n "$tpod" ]; then
        kubectl get pod "$tpod" -n "$tns" -o jsonpath='{range .spec.containers[*]}{range .command[*]}{@}{"\n"}{end}{range .args[*]}{@}{"\n"}{end}{end}' >"$out" 2>/dev/null || rm -f "$out"
    else
        hostport=$(printf '%s' "$turl" | sed -E 's#^[A-Za-z]+://##; s#/.*$##')
        case "$hostport" in
            \[*\]:*) host=${hostport%:*}; port=${hostport##*:} ;;
            \[*) host=$hostport; port="" ;;
            *:*) host=${hostport%:*}; port=${hostport##*:} ;;
            *) host=$hostport; port="" ;;
        esac
        [ -n "$port" ] || case "$turl" in https:*) port=443 ;; *) port=80 ;; esac
        if ! is_local_host "$host" || ! local_cmdline "$port" "$out"; then rm -f "$out"; fi
    fi
    [ -s "$out" ] || rm -f "$out"
done <"$TARGETS"
rmdir "$WORK/meta/cmdline" 2>/dev/null
if [ -n "$first_vllm" ]; then
    # Only vllm_config is kept: the answer's vllm_env and system_env can
    # hold keys (VLLM_API_KEY) and facts about the host nobody asked for.
    if fetch "$base/server_info" "$TMP/server_info.json" /dev/null \
        && grep -q '"vllm_config"' "$TMP/server_info.json"; then
        mkdir -p "$WORK/meta"
        sed -E 's/^[[:space:]]*\{[[:space:]]*"vllm_config"[[:space:]]*:[[:space:]]*("([^"\\]|\\.)*").*$/{"vllm_config": \1}/' \
            "$TMP/server_info.json" >"$WORK/meta/server_info.json"
        grep -q '^{"vllm_config": ' "$WORK/meta/server_info.json" || rm -f "$WORK/meta/server_info.json"
    fi
    rm -f "$TMP/server_info.json"
fi
rmdir "$WORK/meta" 2>/dev/null

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
