#!/usr/bin/env bash
# s33 call D (device; never ran: no machine could be started, then no device time was left), the same bundle as run_a.sh, with what call A-C left open: serve/mixed at 16
# and 64 threads in three rounds (call A had one: the stream variant at 0.80 and 0.74 of the best)
# for stream, lockfree, tls, mutex and the no-allocator ceiling; pair_ab.sh again (call B: pair/stream
# at 1 thread 1.18x main's); the heap A/B of run_c.sh in two more rounds (call C's one round: every
# point of the first process 1.2-1.8x slower, /elided too); stack_offset.sh (added after s33's tries,
# for the next session).
#   OUT=... bash docs/results/2026-12-06-h100-s33/run_d.sh   (carry .bundle, .bundle_main, .bundle_s32b)
set -u
out=${OUT:-/tmp/s33_d}
mkdir -p "$out/ab/traces" "$out/pair_ab"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
SERVE_ROUNDS=3 SERVE_KINDS=mixed SERVE_THREADS='16|64' SERVE_ALLOCATORS=${SERVE_ALLOCATORS:-'stream lockfree tls mutex none'} \
  bash .bundle/gpu-run "$out" ${SERVE_SECONDS:-150} serve:60
timeout 45 bash docs/results/2026-12-05-h100-s30/pair_ab.sh "$out/pair_ab" .bundle .bundle_main > "$out/pair_ab/pair_ab.log" 2>&1
echo "pair_ab: exit $?" >> "$out/gpu-run.log"
tar -cJf "$out/pair_ab.tar.xz" -C "$out" pair_ab && rm -rf "$out/pair_ab"
for t in lm_infer_varseq transformer_lm_train; do cp .bundle/traces/$t.csv "$out/ab/traces/"; done
F='^replay/(lockfree|mutex|tls|stream)/(lm_infer_varseq|transformer_lm_train)(/elided)?/real_time$'
ROUNDS=2 REPS=3 MIN_TIME=0.3 TRACES="$out/ab/traces" timeout ${AB_SECONDS:-80} \
  bash bench/ab_bundles.sh "$out/ab" "$F" .bundle .bundle_s32b > "$out/ab/rounds.txt" 2>&1
echo "heap ab: exit $?" >> "$out/gpu-run.log"
rm -rf "$out/ab/traces"; tar -cJf "$out/ab.tar.xz" -C "$out" ab && rm -rf "$out/ab"
# tls's two levels (issue 15 item 7): the main thread's stack offset walked through a page
# (docs/results/2026-12-06-vm-s33; no effect on the AMD development VM).
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
timeout ${STACK_SECONDS:-100} bash docs/results/2026-12-06-vm-s33/stack_offset.sh .bundle/bin/bench > "$out/stack_offset_tls.txt" 2>&1
echo "stack_offset: exit $?" >> "$out/gpu-run.log"
cat "$out/gpu-run.log"
