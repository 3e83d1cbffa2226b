#!/usr/bin/env bash
# The service's load run (issue 45): each backend of poolswap-service, in alternating rounds
# of one run each, loaded by oha at a fixed request rate (open loop, latency corrected for
# coordinated omission: `oha -q RATE --latency-correction`), without and with a reload every
# 100 ms. Writes, under bench-results/service-<commit>/ (or $OUT):
#
#   <backend>-<noreload|reload>-r<round>.oha.json    oha's JSON summary (percentiles, errors)
#   <backend>-<noreload|reload>-r<round>.stats.json  the server's own figures, printed on
#                                                    exit (reload time, bytes per reload,
#                                                    peak RSS = VmHWM)
#   oplog-all-changed.stats.json                     the op log reloading a table whose every
#                                                    line changes (against the 64-line runs)
#   timeline-<backend>.csv                           each request's handling time and each
#                                                    reload, server side (poolswap, arcswap)
#   machine.txt, results.md, latency.png, timeline.png
#
# Installs oha with `cargo install --locked` if it is not on PATH. Settings (environment):
# RATE (requests/s, default 4000: see BENCHMARKS.md for why), SECS (per run, default 10), ROUNDS (default 2), CONNS
# (oha's connections, default 32), BACKENDS, OUT.
#
#   service/load.sh
#   RATE=1000 SECS=5 ROUNDS=1 service/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RATE=${RATE:-4000}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-2}
CONNS=${CONNS:-32}
BACKENDS=${BACKENDS:-"poolswap oplog arcswap rwlock"}
OUT=${OUT:-bench-results/service-$(git rev-parse --short HEAD)}
OHA_VERSION=1.16.0

if ! command -v oha >/dev/null; then
    echo "load.sh: installing oha $OHA_VERSION (cargo install --locked)" >&2
    cargo install --locked oha --version "$OHA_VERSION"
fi
cargo build --release --locked -p poolswap-service --bins
BIN=target/release/poolswap-service
GEN=target/release/gen-table

# The tables: 100,000 entries, and the same with 64 lines changed (the timed reloads read
# the two in turn, so every reload changes 64 entries) or with every line changed.
DATA=target/service-data
mkdir -p "$DATA" "$OUT"
"$GEN" 100000 > "$DATA/table.txt"
"$GEN" 100000 --changed 64 > "$DATA/table-64.txt"
"$GEN" 100000 --changed 100000 > "$DATA/table-all.txt"

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(git rev-parse --short HEAD)"
    echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "rustc: $(rustc --version)"
    echo "oha: $(oha --version)"
    echo "rate: $RATE req/s, $SECS s per run, $ROUNDS rounds, $CONNS connections"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt"

SERVER_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill -INT "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" || echo "load.sh: the server exited with $?" >&2
        SERVER_PID=
    fi
}
trap stop_server EXIT

# start_server LOG ARGS...: starts the server on a free port; sets SERVER_PID and ADDR.
start_server() {
    local log=$1
    shift
    "$BIN" "$DATA/table.txt" --port 0 "$@" > "$log.out" 2> "$log.err" &
    SERVER_PID=$!
    for _ in $(seq 1 600); do
        ADDR=$(sed -n 's/^listening on //p' "$log.out")
        [ -n "$ADDR" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "load.sh: the server did not start; see $log.err" >&2
    exit 1
}

# load SECS FILE: oha at $RATE against random keys of the table, JSON to FILE.
load() {
    oha --no-tui -z "$1s" -w -q "$RATE" --latency-correction -c "$CONNS" \
        --rand-regex-url "http://$ADDR/route/route-0[0-9]{5}" \
        --output-format json -o "$2"
}

# run BACKEND MODE ROUND: one measured run.
run() {
    local backend=$1 mode=$2 round=$3 name="$OUT/$1-$2-r$3"
    local extra=()
    [ "$mode" = reload ] && extra=(--reload-ms 100 --alternate "$DATA/table-64.txt")
    start_server "$name" --backend "$backend" "${extra[@]}"
    load 2 /dev/null # warm-up: connections, first reloads
    load "$SECS" "$name.oha.json"
    stop_server
    tail -n 1 "$name.out" > "$name.stats.json"
    rm -f "$name.out"
    [ -s "$name.err" ] || rm -f "$name.err"
    echo "$backend $mode r$round: $(python3 service/plot.py --one "$name")"
}

for round in $(seq 1 "$ROUNDS"); do
    for mode in noreload reload; do
        for backend in $BACKENDS; do
            run "$backend" "$mode" "$round"
        done
    done
done

# The op log's reload time when every line changes, against the 64 lines above.
name="$OUT/oplog-all-changed"
start_server "$name" --backend oplog --reload-ms 100 --alternate "$DATA/table-all.txt"
load "$SECS" /dev/null
stop_server
tail -n 1 "$name.out" > "$name.stats.json"
rm -f "$name.out"
[ -s "$name.err" ] || rm -f "$name.err"

# Where the tail goes: each request on a timeline around the reloads, server side.
for backend in poolswap arcswap; do
    name="$OUT/timeline-$backend"
    start_server "$name" --backend "$backend" --reload-ms 100 --alternate "$DATA/table-64.txt" \
        --timeline "$name.csv"
    load 3 /dev/null
    stop_server
    rm -f "$name.out"
    [ -s "$name.err" ] || rm -f "$name.err"
done

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
python3 service/plot.py "$OUT"
echo "load.sh: results in $OUT"
