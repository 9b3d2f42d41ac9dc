#!/usr/bin/env bash
# GPU call f of 2026-12-04 s19: gpu-suite's spread part (the single-thread pair of each variant and
# limit/stack in 5 free processes, one pinned to each CPU, 5 pinned to CPU 2; 10 interleaved
# repetitions each), on the last of the session's device time.
o=$OUT/f; mkdir -p $o; start=$(date +%s)
timeout 170 bash .bundle/gpu-suite $o spread > /dev/null 2>&1; echo "spread rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
cat $o/spread.log
