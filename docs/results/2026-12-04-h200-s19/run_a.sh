#!/usr/bin/env bash
# GPU call a of 2026-12-04 s19: gpu-suite's serve part on the final code, as committed (each
# allocator in its own processes, 3 rounds with the order rotating, 3 repetitions x 0.5 s per
# point; serve/small and serve/mixed at 1, 16 and 64 threads; the four variants, tls-mr,
# cudaMallocAsync, cub and none). Bundle: bench, its libraries, gpu-suite, merge_rounds.py.
o=$OUT/a; mkdir -p $o; start=$(date +%s)
timeout 570 bash .bundle/gpu-suite $o serve > /dev/null 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
tail -3 $o/serve.log
tar czf $OUT/a.tgz -C $OUT a
