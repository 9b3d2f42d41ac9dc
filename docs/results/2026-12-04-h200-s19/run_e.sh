#!/usr/bin/env bash
# GPU call e of 2026-12-04 s19: serve/mixed alone at 16 and 64 threads, the four variants and
# `none` (the ceiling), each in its own processes over 5 rounds with the order rotating, 3
# repetitions x 0.5 s per process (gpu-suite's serve part with SERVE_KINDS=mixed). Issue 15's
# target (>= 0.98x the best allocator of the run) with more rounds than call a's three. Call e repeats call d (5 more rounds).
o=$OUT/e; mkdir -p $o; start=$(date +%s)
SERVE_ALLOCATORS="mutex lockfree tls stream none" SERVE_ROUNDS=5 SERVE_KINDS=mixed SERVE_THREADS="16|64" \
  timeout 380 bash .bundle/gpu-suite $o serve > /dev/null 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
tail -3 $o/serve.log
tar czf $OUT/e.tgz -C $OUT e
