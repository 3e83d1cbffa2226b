#!/usr/bin/env bash
# Runs the heavy, read and pool benchmarks (the others are run by hand: BENCHMARKS.md gives
# each one's command) and writes their results:
#   bench-results/results.md   markdown tables (heavy, read, pool) with machine,
#                              toolchain, date and command
#   bench-results/heavy.svg    plot of the heavy table
#
# The heavy bench runs twice: under glibc's defaults, and with
# MALLOC_MMAP_THRESHOLD_=131072 (every block of 128 KiB or more comes fresh from the
# OS and goes back on free, as in a memory-capped container; it stands in for the Go
# benchmark's GOMEMLIMIT). The Go original's figures join the heavy tables when
# compare/go/results/summary.tsv exists (compare/go/run.sh).
#
# Usage: scripts/bench.sh [--quick]
#   --quick   ~10x shorter warm-up and measurement (POOLSWAP_BENCH_QUICK=1), to check
#             the pipeline; the figures are then rough.
# Environment: CARGO_TARGET_DIR (default target), BENCH_OUT (default bench-results),
#              MMAP_THRESHOLD (default 131072).
# Then scripts/benchmarks_tables.py copies the tables into BENCHMARKS.md (between its
# bench-results markers). A full run takes about 10 minutes on 2 cores. Run it on an
# otherwise idle machine.
#
# The benches are the workspace member poolswap-benches (benches/Cargo.toml), hence
# `-p poolswap-benches`; their criterion and side files still go to the workspace's target/.
# For CI, a smoke run of a bench is: cargo bench -p poolswap-benches --bench <name> -- --test
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ "${1:-}" == "--quick" ]]; then
    export POOLSWAP_BENCH_QUICK=1
    shift
fi
if [[ $# -gt 0 ]]; then
    echo "usage: scripts/bench.sh [--quick]" >&2
    exit 2
fi
target=${CARGO_TARGET_DIR:-target}
out=${BENCH_OUT:-bench-results}
threshold=${MMAP_THRESHOLD:-131072}
command="scripts/bench.sh${POOLSWAP_BENCH_QUICK:+ --quick}"

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" -v c="$(nproc)" 'BEGIN { exit !(l > 0.5 * c) }'; then
    echo "bench.sh: warning: load average $load on $(nproc) cores; results will be noisy" >&2
fi

start=$SECONDS
cargo bench -p poolswap-benches --no-run
rm -rf "$target/bench-alloc"
cargo bench -p poolswap-benches --bench pool
cargo bench -p poolswap-benches --bench read
# poolswap's rows again with the fallback barrier (the peers are not re-run).
POOLSWAP_BARRIER=fence cargo bench -p poolswap-benches --bench read
cargo bench -p poolswap-benches --bench heavy
MALLOC_MMAP_THRESHOLD_=$threshold cargo bench -p poolswap-benches --bench heavy
python3 scripts/tables.py --target "$target" --out "$out" --command "$command" \
    --seconds $((SECONDS - start))
python3 scripts/benchmarks_tables.py "$out"
