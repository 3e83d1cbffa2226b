#!/usr/bin/env bash
# Device run: read scaling, pool pipeline 1x1 and 8x8, heavy t2/t16 (+ Go), delta n=100k.
set -u
D=$(dirname "$0"); cd "$D"
export CARGO_TARGET_DIR=/tmp/t
mkdir -p $CARGO_TARGET_DIR
C="--warm-up-time 0.3 --measurement-time 0.8 --noplot"
{ date -u; nproc; lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)"; uname -r; cat /proc/loadavg; } > $OUT/machine.txt
step() { echo "=== $1 $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"; }
{
step read; timeout 100 ./read --bench '^read/' $C
step update; timeout 40 ./read --bench '^update/poolswap/t(2|16|64)$|^update-two/' $C
step pool1; timeout 40 ./pool --bench 'pool-local|pool-pipeline-spin' $C
step pool8; PIPE_PAIRS=8 timeout 40 ./pool --bench 'pool-pipeline-spin' $C
step delta; DELTA_N=100000 timeout 170 ./delta
step heavy; timeout 90 ./heavy --bench 't16|t2|/w' --warm-up-time 0.3 --measurement-time 1 --noplot
step go; GOMEMLIMIT=512MiB timeout 40 ./gobench -test.run '^$' -test.bench BenchmarkHotSwap -test.benchtime 300x -test.cpu 2,16
step end
} > $OUT/log.txt 2>&1
cp -r $CARGO_TARGET_DIR/bench-alloc $CARGO_TARGET_DIR/bench-delta $OUT/ 2>/dev/null
grep -E "^=== |time:|thrpt:|allocs/op|ratio" $OUT/log.txt | tail -150
