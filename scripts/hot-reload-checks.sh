#!/usr/bin/env bash
# `hot_reload --check` on three real inputs, each at default settings and with
# `--reload-ms 0` (reloads back to back): the bundled word list, a copy of /etc/services
# grown to about 7,000 entries (each service line again under 19 suffixed names), and a
# generated table of 1,000 routes (`/api/vN/resource-K` with three backends). With `--busy`,
# two CPU-bound processes run beside each check, as on a machine shared with builds: readers
# that are descheduled hold their versions longer, which is where a writer that builds
# while a free version waits shows (each check also fails if the pool built more than
# readers + 2 versions).
#
# Usage: scripts/hot-reload-checks.sh [--busy] [--secs N]
# Exits non-zero if any check fails; prints each run's allocation and versions-built lines.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

busy=0
secs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --busy) busy=1 ;;
        --secs) secs=$2; shift ;;
        *) echo "usage: $0 [--busy] [--secs N]" >&2; exit 2 ;;
    esac
    shift
done

cargo build --locked --release --example hot_reload
bin=${CARGO_TARGET_DIR:-target}/release/examples/hot_reload

dir=$(mktemp -d)
hogs=()
cleanup() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT

# /etc/services grown: every service line, then 19 more copies under suffixed names.
services=$dir/services
if [ -r /etc/services ]; then
    cp /etc/services "$services"
    for i in $(seq 1 19); do
        awk -v i="$i" '!/^#/ && NF { $1 = $1 "-" i; print }' /etc/services >>"$services"
    done
fi
routes=$dir/routes
for k in $(seq 0 999); do
    printf '/api/v%d/resource-%d 10.0.%d.%d:8080 10.1.%d.%d:8080 10.2.%d.%d:8080\n' \
        $((k % 3 + 1)) "$k" $((k / 250)) $((k % 250)) $((k / 250)) $((k % 250)) \
        $((k / 250)) $((k % 250))
done >"$routes"

if [ "$busy" = 1 ]; then
    for _ in 1 2; do
        sh -c 'while :; do :; done' &
        hogs+=($!)
    done
    echo "two CPU-bound processes beside each check: ${hogs[*]}"
fi

failed=0
for input in examples/data/american-english "$services" "$routes"; do
    [ -r "$input" ] || { echo "skipped (not readable): $input"; continue; }
    for extra in "" "--reload-ms 0"; do
        echo "=== $(basename "$input") $extra"
        # shellcheck disable=SC2086 # $extra is zero or two words
        if out=$("$bin" "$input" --secs "$secs" $extra --check 2>&1); then
            status=passed
        else
            status=FAILED
            failed=1
        fi
        grep -E 'alloc, steady reloads|versions built|check failed|keys in last' <<<"$out" || true
        echo "--- $status"
    done
done
exit "$failed"
