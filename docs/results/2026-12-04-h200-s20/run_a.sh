#!/usr/bin/env bash
# GPU call a of 2026-12-04 s20: the stream variant's completed steal changed (note the stack, ask
# the donor's stream, take only what was noted; a stream found busy held for steal_busy_hold).
#  1. stream_pool_test on the CUDA backend (its conformance instantiations run on the GPU);
#  2. a 60 s stress soak of the stream variant, 64 threads x 16 streams, cross-stream 0.3, sizes
#     mixed (1 in 64 of 1 .. 64 MiB), and the injected early reuse (must exit 1);
#  3. serve/mixed at 16 and 64 threads, A/B in one run: bench_old (main before s20, 9fa4b6e) with
#     stream and lockfree against this build with stream, stream-hold0 (steal_busy_hold 0) and
#     lockfree; each in its own process per round, 6 rounds, the order rotating, 3 x 0.5 s.
set -u
b=.bundle/bin
o=$OUT/a; mkdir -p $o/ab; start=$(date +%s)
timeout 150 $b/stream_pool_test > $o/stream_pool_test.log 2>&1
echo "stream_pool_test exit=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $o/stream_pool_test.log | tr '\n' ' ')" | tee $o/summary.txt
timeout 120 $b/stress --backend=cuda --variant=stream --threads=64 --streams=16 --duration=60 --cross-stream=0.3 \
  --sizes=mixed --quiet --json=$o/soak_stream.json > $o/soak_stream.txt 2>&1
echo "soak stream exit=$?" | tee -a $o/summary.txt
timeout 60 $b/stress --backend=cuda --variant=stream --threads=64 --streams=16 --duration=10 --inject=early-reuse \
  --quiet > $o/fault_early_reuse.txt 2>&1
echo "fault early-reuse exit=$? (must be 1)" | tee -a $o/summary.txt
bash "$(dirname "$0")/ab_rounds.sh" a "bench_old stream" "bench stream" "bench_old lockfree" "bench stream-hold0" "bench lockfree"
