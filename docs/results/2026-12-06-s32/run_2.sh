#!/usr/bin/env bash
# s32 call 2 (device): the cuda backend with its verify state, guard ring and NVTX domain made on
# first use (.bundle) against call 1's, which made them at construction (.bundle_s32a, bench only).
# 1. probe5 (the old backend, built at 402616f: alive, after cudaDeviceSynchronize, destroyed; and
#    its constructor's calls replayed, released one by one) and probe6 (the new backend, then each
#    lazy part made in turn): the bare event ring after each step.
# 2. limit/epoch_event, new and old bench, alternating.
# 3. replay A/B of lm_infer_varseq, transformer_lm_train and mlp_4stream (stream-ordered and
#    /elided), new against old, three alternating rounds (bench/ab_bundles.sh); cudaMallocAsync.
# 4. gpu-suite's tests part (every test binary, the injected faults: verify kernels catch them) and
#    its sanitizer part (the NVTX heap registration the sanitizer demos need), each under a timeout.
#   bash docs/results/2026-12-06-s32/run_2.sh   (OUT; carry .bundle, .bundle_s32a, .bundle_base_slim)
set -u
out=${OUT:-/tmp/s32_2}
mkdir -p "$out/ab" "$out/traces"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
[ -d .bundle_s32a/bin ] || tar -xJf .bundle_s32a/bin.tar.xz -C .bundle_s32a
P=./.bundle_base_slim/probe5 Q=./.bundle_base_slim/probe6
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u +%FT%TZ
  for i in 1 2; do $P sync; $Q vgn; $P replica; $Q gnv; $P hostalloc; $Q nvg; $P devstate; $P nvtx; done
} > "$out/probes.txt" 2>&1
for i in 1 2; do
  for b in .bundle .bundle_s32a; do
    echo "$b: $($b/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
      --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median)"
  done
done > "$out/epoch_event.txt"
for t in lm_infer_varseq transformer_lm_train mlp_4stream; do cp .bundle/traces/$t.csv "$out/traces/"; done
F='^replay/(lockfree|mutex|tls|stream)/(mlp_4stream|lm_infer_varseq|transformer_lm_train)(/elided)?/real_time$'
ROUNDS=${ROUNDS:-3} REPS=3 MIN_TIME=0.3 TRACES="$out/traces" bash bench/ab_bundles.sh "$out/ab" "$F" .bundle .bundle_s32a > "$out/ab/rounds.txt" 2>&1
for r in 1 2; do
  ./.bundle/bin/bench --backend=cuda --traces="$out/traces" --benchmark_filter='^replay/cudaMallocAsync/[^/]+/real_time$' \
    --benchmark_repetitions=3 --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true --benchmark_format=json \
    > "$out/ab/cudaMallocAsync_$r.json" 2> /dev/null
done
python3 docs/results/2026-12-06-s32/summary_2.py "$out" > "$out/summary.txt" 2>&1
FAULT_SECONDS=5 timeout ${TESTS_BUDGET:-200} bash .bundle/gpu-suite "$out/tests" tests > "$out/tests_part.log" 2>&1; echo "tests part exit $?" >> "$out/tests_part.log"
timeout ${SAN_BUDGET:-120} bash .bundle/gpu-suite "$out/san" sanitizer > "$out/san_part.log" 2>&1; echo "sanitizer part exit $?" >> "$out/san_part.log"
tar -cJf "$out/s32_2.tar.xz" -C "$out" probes.txt epoch_event.txt ab summary.txt tests san tests_part.log san_part.log
cat "$out/probes.txt" "$out/epoch_event.txt" "$out/summary.txt"; tail -3 "$out/tests_part.log" "$out/san_part.log"
grep -E "FAILED|exit=" "$out/tests/tests.log" | head -20
