#!/usr/bin/env bash
# Runs the Go original's own BenchmarkHotSwap (poolswap_benchmark_test.go, shipped
# inside github.com/keilerkonzept/poolswap) once per GOMEMLIMIT setting, and
# writes:
#   results/raw-<memlimit>.txt  raw `go test -bench` output (benchstat-readable)
#   results/summary.tsv         median over COUNT runs per strategy x write% x memlimit
#   results/run-info.txt        when, where, which source, how long
#
# Environment knobs (all optional):
#   COUNT=3                 -test.count (runs per sub-benchmark; summary takes the median)
#   BENCHTIME=...           one -test.benchtime for every write ratio; by default it
#                           is set per write ratio, see BENCHTIME_01/_10/_50 below
#   BENCHTIME_01=1s         -test.benchtime for the writes=01 sub-benchmarks
#   BENCHTIME_10=1000x      -test.benchtime for the writes=10 sub-benchmarks
#   BENCHTIME_50=1000x      -test.benchtime for the writes=50 sub-benchmarks
#                           (why fixed counts: README.md, "Write ratio and b.N")
#   MEMLIMITS="512MiB 50MiB" GOMEMLIMIT values, one process per value
#   PROCS=2                 GOMAXPROCS for the benchmark process (one per core here)
#   POOLSWAP_GO_SRC=DIR     use a local copy of the Go repository instead of the
#                           module proxy: a git repository (bare or not) or a plain
#                           source tree; see README.md
#   POOLSWAP_GO_REF=vX.Y.Z  with a git POOLSWAP_GO_SRC: the tag to build
#                           (default: its highest v* tag)
#   BUILD_ONLY=PATH         build the benchmark binary, copy it to PATH, print its
#                           source line, and stop (compare/go/interleave.sh uses it)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

COUNT=${COUNT:-3}
BENCHTIME=${BENCHTIME:-}
BENCHTIME_01=${BENCHTIME:-${BENCHTIME_01:-1s}}
BENCHTIME_10=${BENCHTIME:-${BENCHTIME_10:-1000x}}
BENCHTIME_50=${BENCHTIME:-${BENCHTIME_50:-1000x}}
MEMLIMITS=${MEMLIMITS:-"512MiB 50MiB"}
PROCS=${PROCS:-2}
POOLSWAP_GO_SRC=${POOLSWAP_GO_SRC:-}
POOLSWAP_GO_REF=${POOLSWAP_GO_REF:-}

pkg=github.com/keilerkonzept/poolswap
results=$here/results
start=$SECONDS
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }
load_start=$(loadavg)
cores=$(nproc 2>/dev/null || echo 1)
# Anything else busy on the machine (a cargo build, another benchmark) skews the
# numbers badly on a small VM: say so up front, and record the load with the results.
if awk -v l="${load_start%% *}" -v c="$cores" 'BEGIN { exit !(l > 0.5 * c) }' 2>/dev/null; then
    echo "run.sh: warning: 1-min load average is ${load_start%% *} on $cores cores; results will be noisy" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Work on a scratch copy of go.mod/go.sum (go's -modfile), so a local-source run
# never edits the committed files.
cp go.mod "$tmp/go.mod"
cp go.sum "$tmp/go.sum"
modfile=(-modfile="$tmp/go.mod")
pinned=$(awk -v p="$pkg" '$1 == p { print $2; exit }' go.mod)

if [[ -z $POOLSWAP_GO_SRC ]]; then
    # The published module from the Go module proxy, checked against the checksum DB.
    if ! go mod download "${modfile[@]}" "$pkg" 2>"$tmp/download.err"; then
        cat "$tmp/download.err" >&2
        cat >&2 <<EOF
run.sh: could not download $pkg@$pinned from GOPROXY ($(go env GOPROXY)).
        Where the proxy does not serve it, point POOLSWAP_GO_SRC at a clone of
        https://github.com/keilerkonzept/poolswap (see README.md), e.g.
          POOLSWAP_GO_SRC=/path/to/poolswap ./run.sh
EOF
        exit 1
    fi
    if ! cmp -s go.sum "$tmp/go.sum"; then
        cp "$tmp/go.sum" go.sum
        echo "run.sh: recorded the checksums of $pkg@$pinned in go.sum" >&2
    fi
    source_desc="$pkg@$pinned from $(go env GOPROXY)"
else
    mkdir "$tmp/src"
    if git -C "$POOLSWAP_GO_SRC" rev-parse --git-dir >/dev/null 2>&1; then
        ref=${POOLSWAP_GO_REF:-$(git -C "$POOLSWAP_GO_SRC" tag --list 'v*' --sort=-v:refname | head -n1)}
        [[ -n $ref ]] || { echo "run.sh: no v* tag in $POOLSWAP_GO_SRC; set POOLSWAP_GO_REF" >&2; exit 1; }
        commit=$(git -C "$POOLSWAP_GO_SRC" rev-parse "$ref^{commit}")
        git -C "$POOLSWAP_GO_SRC" archive "$commit" | tar -x -C "$tmp/src"
        source_desc="$pkg $ref (commit $commit) from local git $POOLSWAP_GO_SRC, not the proxy"
        if [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
            go mod edit -require="$pkg@$ref" "$tmp/go.mod"
        fi
    else
        cp -R "$POOLSWAP_GO_SRC"/. "$tmp/src/"
        source_desc="$pkg from local tree $POOLSWAP_GO_SRC, not the proxy"
    fi
    [[ -f $tmp/src/poolswap_benchmark_test.go ]] ||
        { echo "run.sh: $POOLSWAP_GO_SRC has no poolswap_benchmark_test.go" >&2; exit 1; }
    go mod edit -replace="$pkg=$tmp/src" "$tmp/go.mod"
fi
echo "source: $source_desc" >&2

# Build the module's test binary once; every run below is that same binary.
go test "${modfile[@]}" -c -o "$tmp/poolswap.test" "$pkg"
if [[ -n ${BUILD_ONLY:-} ]]; then
    cp "$tmp/poolswap.test" "$BUILD_ONLY"
    echo "$source_desc"
    exit 0
fi

mkdir -p "$results"
rm -f "$results"/raw-*.txt
go_version=$(go version)
for m in $MEMLIMITS; do
    raw=$results/raw-$m.txt
    {
        # benchstat treats "key: value" lines as configuration.
        echo "poolswap-source: $source_desc"
        echo "go-version: $go_version"
        echo "gomemlimit: $m"
        echo "gomaxprocs: $PROCS"
    } >"$raw"
    for w in 01 10 50; do
        bt_var=BENCHTIME_$w
        bt=${!bt_var}
        echo "== GOMEMLIMIT=$m GOMAXPROCS=$PROCS writes=$w count=$COUNT benchtime=$bt" >&2
        {
            echo "benchtime: $bt"
            echo "loadavg-before: $(loadavg)"
            # The benchmark only reads GOMEMLIMIT for its sub-benchmark names; the Go
            # runtime applies it at process start, so one process per setting.
            GOMEMLIMIT=$m GOMAXPROCS=$PROCS "$tmp/poolswap.test" \
                -test.run '^$' -test.bench "^BenchmarkHotSwap\$/^gomemlimit=/^impl=/^writes=$w\$" \
                -test.benchmem -test.count "$COUNT" -test.benchtime "$bt"
        } | tee -a "$raw" | grep --line-buffered -E '^Benchmark|^(ok|FAIL|PASS)' >&2
    done
done

# Median per strategy x write% x memlimit over the COUNT runs.
summary=$results/summary.tsv
awk -v OFS='\t' '
function median(s,    a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) {            # insertion sort, numeric
        t = a[i] + 0
        for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkHotSwap\// {
    split($1, part, "/")
    mem = part[2]; sub(/^gomemlimit=/, "", mem)
    impl = part[3]; sub(/^impl=/, "", impl)
    w = part[4]; sub(/^writes=/, "", w); sub(/-[0-9]+$/, "", w); w += 0
    k = impl SUBSEP w SUBSEP mem
    if (!(k in ns)) { order[++nk] = k }
    for (i = 3; i < NF; i++) {
        if ($(i + 1) == "ns/op") ns[k] = ns[k] " " $i
        if ($(i + 1) == "B/op") by[k] = by[k] " " $i
        if ($(i + 1) == "allocs/op") al[k] = al[k] " " $i
    }
}
END {
    print "strategy", "write_pct", "memlimit", "ns_per_op", "bytes_per_op", "allocs_per_op"
    for (o = 1; o <= nk; o++) {
        k = order[o]; split(k, f, SUBSEP)
        printf "%s\t%d\t%s\t%.0f\t%.0f\t%.0f\n", f[1], f[2], f[3], median(ns[k]), median(by[k]), median(al[k])
    }
}' "$results"/raw-*.txt >"$summary.tmp"
# Stable order: memlimit as given, then write%, then the README column order.
{
    head -n1 "$summary.tmp"
    for m in $MEMLIMITS; do
        for w in 1 10 50; do
            for s in PoolSwap AtomicPtr MutexAlloc MutexInPlace; do
                awk -F'\t' -v s="$s" -v w="$w" -v m="$m" '$1 == s && $2 == w && $3 == m' "$summary.tmp"
            done
        done
    done
} >"$summary"
rm -f "$summary.tmp"

elapsed=$((SECONDS - start))
if [[ -n $BENCHTIME ]]; then
    bt_desc="BENCHTIME=$BENCHTIME"
else
    bt_desc="BENCHTIME_01=$BENCHTIME_01 BENCHTIME_10=$BENCHTIME_10 BENCHTIME_50=$BENCHTIME_50"
fi
cat >"$results/run-info.txt" <<EOF
date: $(date -u +%Y-%m-%dT%H:%M:%SZ)
source: $source_desc
go: $go_version
cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
cores: $cores
loadavg_start: $load_start
loadavg_end: $(loadavg)
command: COUNT=$COUNT $bt_desc MEMLIMITS="$MEMLIMITS" PROCS=$PROCS${POOLSWAP_GO_SRC:+ POOLSWAP_GO_SRC=$POOLSWAP_GO_SRC}${POOLSWAP_GO_REF:+ POOLSWAP_GO_REF=$POOLSWAP_GO_REF} compare/go/run.sh
elapsed_s: $elapsed
EOF

# Human-readable view: µs/op (B/op) per write ratio, like the README's heavy table.
echo
echo "Median of $COUNT runs, µs/op (MB/op); GOMAXPROCS=$PROCS; $go_version"
awk -F'\t' '
NR == 1 { next }
{
    key = $2 "%|" $3
    if (!(key in seen)) { seen[key] = 1; rows[++n] = key }
    cell[key, $1] = sprintf("%.1f (%.1f)", $4 / 1000, $5 / 1048576)
}
END {
    printf "%-14s %-18s %-18s %-18s %-18s\n", "writes|limit", "PoolSwap", "AtomicPtr", "MutexAlloc", "MutexInPlace"
    for (i = 1; i <= n; i++) {
        k = rows[i]
        printf "%-14s %-18s %-18s %-18s %-18s\n", k, cell[k, "PoolSwap"], cell[k, "AtomicPtr"], cell[k, "MutexAlloc"], cell[k, "MutexInPlace"]
    }
}' "$summary"
echo
echo "wrote $summary ($(($(wc -l <"$summary") - 1)) rows), raw output in $results/raw-*.txt; took ${elapsed}s"
