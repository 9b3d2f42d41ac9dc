#!/usr/bin/env bash
# s23 call c: gpu-suite's serve part on HEAD (each allocator in its own processes, 3 rounds with the
# order rotating, 3 repetitions x 0.5 s per point; serve/small and serve/mixed at 1, 16 and 64
# threads; the four variants, tls-mr, cudaMallocAsync, cub and none). Bundle: .ci/gpu-bundle's.
o=$OUT/c; mkdir -p $o; start=$(date +%s)
timeout 570 bash .bundle/gpu-suite $o serve > /dev/null 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
tail -3 $o/serve.log
tar czf $OUT/c.tgz -C $OUT c
