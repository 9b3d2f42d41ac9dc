#!/usr/bin/env bash
# s24 call c: gpu-suite's replay part on HEAD (each allocator in its own processes, REPLAY_ROUNDS
# rounds (default here 3) with the order rotating, 3 repetitions x 0.5 s per point, each process's
# repetitions in random order (REPLAY_INTERLEAVE=1, gpu-suite's default since c89052a); every trace
# of the bundle stream-ordered, /elided and /immediate; the four variants and cudaMallocAsync).
o=$OUT/c; mkdir -p $o; start=$(date +%s)
REPLAY_ROUNDS=${REPLAY_ROUNDS:-3} timeout ${LIMIT:-570} bash .bundle/gpu-suite $o replay > /dev/null 2>&1; echo "replay rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
tail -3 $o/replay.log
tar cJf $OUT/c.tar.xz -C $OUT c
