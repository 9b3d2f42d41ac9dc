#!/usr/bin/env bash
# s24 call a: gpu-suite's serve part on HEAD (each allocator in its own processes, 3 rounds with the
# order rotating, 3 repetitions x 0.5 s per point; serve/small and serve/mixed at 1, 16 and 64
# threads; the four variants, tls-mr, cudaMallocAsync, cub and none), then the spread part short
# (2 processes per placement, 6 repetitions; with the instances probe). Bundle: .ci/gpu-bundle's.
o=$OUT/a; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
timeout 420 bash .bundle/gpu-suite $o serve > /dev/null 2>&1; el serve rc=$?
tail -3 $o/serve.log
SPREAD_PROCESSES=2 SPREAD_REPETITIONS=6 timeout 140 bash .bundle/gpu-suite $o spread > /dev/null 2>&1; el spread rc=$?
tail -3 $o/spread.log
tar cJf $OUT/a.tar.xz -C $OUT a; el done
