#!/usr/bin/env bash
# Go original against this port, interleaved: the poolswap strategy of both heavy
# benchmarks, one write ratio at a time, alternating Go and Rust runs (ABBA per
# round), so that a shared VM's drift over minutes lands on both sides alike.
# run.sh and scripts/bench.sh run one language after the other; on a VM whose
# speed drifts by more than the difference, that order decides the comparison.
#
# Writes results/interleave.tsv (one row per run: round, writes %, language, ns/op)
# and results/interleave-info.txt (when, what, and per write ratio: the Rust/Go ratio
# of each round, their median, and each side's median time), and prints the summary.
#
# Environment knobs (all optional):
#   ROUNDS=5                rounds; each runs every write ratio once per language
#   WRITES="01 10 50"       write ratios
#   GOMEMLIMIT_GO=512MiB    GOMEMLIMIT of the Go runs
#   BENCHTIME_01/_10/_50    Go's -test.benchtime per ratio, as in run.sh
#   POOLSWAP_GO_SRC, POOLSWAP_GO_REF   where the Go source comes from, as in run.sh
#   HASHERS="std foldhash"  the Rust side's hashers: `std` runs `poolswap/wNN` (std's
#                           SipHash), `foldhash` runs `poolswap-foldhash/wNN`; each round
#                           runs Go and every listed Rust side, Go first in odd rounds and
#                           last in even ones
# The Rust side runs benches/heavy.rs's `poolswap/wNN` under glibc's defaults (set
# MALLOC_MMAP_THRESHOLD_ to change that), with its criterion output and allocation
# side files in a scratch directory, so target/criterion (which scripts/tables.py
# reads) is left alone.
#
# About 7 minutes with the defaults on the 2-core VM (Go and both hashers, 3 rounds).
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(...) stops the script too

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ROUNDS=${ROUNDS:-5}
WRITES=${WRITES:-"01 10 50"}
GOMEMLIMIT_GO=${GOMEMLIMIT_GO:-512MiB}
HASHERS=${HASHERS:-"std foldhash"}
for h in $HASHERS; do
    [[ $h == std || $h == foldhash ]] ||
        { echo "interleave.sh: HASHERS takes std and foldhash, not $h" >&2; exit 2; }
done
BENCHTIME_01=${BENCHTIME_01:-1s}
BENCHTIME_10=${BENCHTIME_10:-1000x}
BENCHTIME_50=${BENCHTIME_50:-1000x}

for w in $WRITES; do
    bt_var=BENCHTIME_$w
    [[ -n ${!bt_var:-} ]] ||
        { echo "interleave.sh: no BENCHTIME_$w; WRITES takes 01, 10 and 50 (or set it)" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

source_desc=$(BUILD_ONLY="$tmp/poolswap.test" "$here/run.sh")
build_log=$(cd "$root" && cargo bench --locked -p poolswap-benches --bench heavy --no-run 2>&1) ||
    { printf '%s\n' "$build_log" >&2; exit 1; }
# Cargo names the bench by its path in its package, benches/ (poolswap-benches): `heavy.rs`.
rust_bin=$(sed -n 's/.*Executable heavy\.rs (\(.*\))$/\1/p' <<<"$build_log" | tail -n1)
[[ -n $rust_bin ]] || { echo "interleave.sh: cargo named no heavy bench binary" >&2; exit 1; }
[[ $rust_bin == /* ]] || rust_bin=$root/$rust_bin
[[ -f $rust_bin && -x $rust_bin ]] || { echo "interleave.sh: $rust_bin is not executable" >&2; exit 1; }

go_run() { # writes -> ns/op
    local w=$1 bt_var=BENCHTIME_$1
    GOMEMLIMIT=$GOMEMLIMIT_GO GOMAXPROCS=2 "$tmp/poolswap.test" -test.run '^$' \
        -test.bench "^BenchmarkHotSwap\$/^gomemlimit=/^impl=PoolSwap\$/^writes=$w\$" \
        -test.count 1 -test.benchtime "${!bt_var}" |
        awk '/^BenchmarkHotSwap\// { for (i = 3; i < NF; i++) if ($(i + 1) == "ns/op") print $i }'
}

rust_run() { # writes, strategy -> ns/op (criterion's mean; the heavy bench samples flat)
    local w=$((10#$1)) name=$2 id
    rm -rf "$tmp/criterion" "$tmp/target"
    (cd "$root" && CRITERION_HOME="$tmp/criterion" CARGO_TARGET_DIR="$tmp/target" \
        "$rust_bin" --bench "^heavy-[^/]*/$name/w$w\$" >"$tmp/rust.log" 2>&1) ||
        { cat "$tmp/rust.log" >&2; return 1; }
    id=$(cd "$tmp/criterion" && ls -d heavy-*/"$name"/w"$w" 2>/dev/null | head -n1) || true
    [[ -n $id ]] || { cat "$tmp/rust.log" >&2; echo "interleave.sh: no $name/w$w result" >&2; return 1; }
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["mean"]["point_estimate"])' \
        "$tmp/criterion/$id/new/estimates.json"
}

mkdir -p "$here/results"
tsv=$here/results/interleave.tsv
printf 'round\twrites\tlanguage\tns_per_op\n' >"$tsv"
rust_sides=""
for h in $HASHERS; do rust_sides+=" rust-$h"; done
for ((r = 1; r <= ROUNDS; r++)); do
    for w in $WRITES; do
        # ABBA: Go first in odd rounds, last in even ones.
        if ((r % 2)); then order="go$rust_sides"; else order="$rust_sides go"; fi
        for lang in $order; do
            case $lang in
                go) ns=$(go_run "$w") ;;
                rust-std) ns=$(rust_run "$w" poolswap) ;;
                rust-foldhash) ns=$(rust_run "$w" poolswap-foldhash) ;;
            esac
            [[ $ns =~ ^[0-9.]+$ ]] || { echo "interleave.sh: no ns/op from $lang at $w%" >&2; exit 1; }
            printf '%s\t%s\t%s\t%s\n' "$r" "$((10#$w))" "$lang" "$ns" | tee -a "$tsv" >&2
        done
    done
done

summary=$(python3 - "$tsv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
ns = {(int(r["round"]), int(r["writes"]), r["language"]): float(r["ns_per_op"]) for r in rows}
sides = sorted({k[2] for k in ns if k[2] != "go"})
for w in sorted({k[1] for k in ns}):
    rounds = sorted({k[0] for k in ns if k[1] == w})
    go = [ns[(r, w, "go")] for r in rounds]
    for side in sides:
        ru = [ns[(r, w, side)] for r in rounds]
        # Each round's runs are neighbours in time: their ratio cancels most drift.
        ratios = [b / a for a, b in zip(go, ru)]
        print(f"writes {w}%, {side}: Rust/Go per round {' '.join(f'{x:.2f}' for x in ratios)}, "
              f"median {statistics.median(ratios):.2f}x; "
              f"Go median {statistics.median(go)/1e3:.1f} us ({min(go)/1e3:.1f}-{max(go)/1e3:.1f}), "
              f"Rust median {statistics.median(ru)/1e3:.1f} us ({min(ru)/1e3:.1f}-{max(ru)/1e3:.1f}), "
              f"{len(rounds)} rounds")
EOF
)
echo "$summary"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git -C "$root" rev-parse --short HEAD)"
    echo "source: $source_desc"
    echo "go: $(go version)"
    echo "rustc: $(rustc --version)"
    echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "go_gomemlimit: $GOMEMLIMIT_GO"
    echo "rust_malloc_mmap_threshold: ${MALLOC_MMAP_THRESHOLD_:-glibc default}"
    echo "loadavg_start: $load_start"
    echo "loadavg_end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
    echo "command: ROUNDS=$ROUNDS WRITES=\"$WRITES\" HASHERS=\"$HASHERS\" compare/go/interleave.sh"
    echo "elapsed_s: $((SECONDS - start))"
    echo "$summary"
} >"$here/results/interleave-info.txt"
