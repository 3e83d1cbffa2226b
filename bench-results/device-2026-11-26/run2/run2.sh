#!/usr/bin/env bash
# Device run 2: delta n=100k both barrier modes, pipeline 1x1 / 8x8, pool-local, heavy w10/w50 t2/t16 + Go.
set -u
D=$(dirname "$0"); cd "$D"
export CARGO_TARGET_DIR=/tmp/t
mkdir -p $CARGO_TARGET_DIR/m $CARGO_TARGET_DIR/f
C="--warm-up-time 0.3 --measurement-time 0.8 --noplot"
{ date -u; nproc; lscpu | grep -E "Model name|^CPU\(s\)"; uname -r; cat /proc/loadavg; } > $OUT/machine.txt
step() { echo "=== $1 $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"; }
{
step pool1; timeout 40 ./pool --bench 'pool-local|pool-pipeline-spin' $C
step pool8; PIPE_PAIRS=8 timeout 40 ./pool --bench 'pool-pipeline-spin' $C
step delta-membarrier; CARGO_TARGET_DIR=/tmp/t/m DELTA_N=100000 timeout 120 ./delta
step delta-fence; CARGO_TARGET_DIR=/tmp/t/f POOLSWAP_BARRIER=fence DELTA_N=100000 timeout 120 ./delta
step heavy; timeout 130 ./heavy --bench '(poolswap|arc-swap)/w(10|50)' --warm-up-time 0.3 --measurement-time 1 --noplot
step go; GOMEMLIMIT=512MiB timeout 40 ./gobench -test.run '^$' -test.bench 'BenchmarkHotSwap/.*impl=(PoolSwap|AtomicPtr)/' -test.benchtime 1000x -test.cpu 2,16
step end
} > $OUT/log.txt 2>&1
mkdir -p $OUT/m $OUT/f
cp -r /tmp/t/bench-alloc $OUT/ 2>/dev/null
cp /tmp/t/m/bench-delta/delta.md $OUT/m/ 2>/dev/null; cp /tmp/t/f/bench-delta/delta.md $OUT/f/ 2>/dev/null
grep -E "^=== |time:|allocs/op|Benchmark" $OUT/log.txt | tail -80
