#!/usr/bin/env bash
# s23 call b: gpu-suite's replay part on HEAD (each allocator in its own processes, 3 rounds with
# the order rotating, 3 repetitions x 0.5 s per point; every trace of the bundle stream-ordered,
# /elided and /immediate; the four variants and cudaMallocAsync). Bundle: .ci/gpu-bundle's.
o=$OUT/b; mkdir -p $o; start=$(date +%s)
timeout 570 bash .bundle/gpu-suite $o replay > /dev/null 2>&1; echo "replay rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
tail -3 $o/replay.log
tar czf $OUT/b.tgz -C $OUT b
