#!/usr/bin/env bash
# GPU call e of 2026-12-04 s20: serve/small alone at 16 and 64 threads over 6 rounds (s19's call a
# had 3: tls 3.97x the better peer at 16 threads), every variant, both peers and `none`, each in its
# own processes, the order rotating, 3 x 0.5 s (gpu-suite's serve part with SERVE_KINDS=small).
o=$OUT/e; mkdir -p $o; start=$(date +%s)
SERVE_ALLOCATORS="mutex lockfree tls stream cudaMallocAsync cub none" SERVE_ROUNDS=6 SERVE_KINDS=small SERVE_THREADS="16|64" \
  timeout 560 bash .bundle/gpu-suite $o serve > /dev/null 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
tail -3 $o/serve.log
tar czf $OUT/e.tgz -C $OUT e
