#!/usr/bin/env bash
# s32 call 4 (device), replacing run_3.sh (which never got a machine): (1) the lazy verify state and
# guard ring now zeroed and the device synchronized once: probe6 in two orders, limit/epoch_event,
# gpu-suite's tests part (every test binary; the injected faults the verify kernels catch); (2) the
# heap's walk for runs skipped with one stream unless a merge was refused (.bundle) against the same
# library without it (.bundle_s32b, bench only): replay of lm_infer_varseq and transformer_lm_train,
# stream-ordered and /elided, two alternating rounds, and cudaMallocAsync.
#   bash docs/results/2026-12-06-s32/run_4.sh   (OUT; carry .bundle, .bundle_s32b, .bundle_base_slim)
set -u
out=${OUT:-/tmp/s32_4}
mkdir -p "$out/ab" "$out/traces"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ./.bundle_base_slim/probe6 vgn; ./.bundle_base_slim/probe6 gnv; } > "$out/probe6.txt" 2>&1
./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
  --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median > "$out/epoch_event.txt"
for t in lm_infer_varseq transformer_lm_train; do cp .bundle/traces/$t.csv "$out/traces/"; done
F='^replay/(lockfree|mutex|tls|stream)/(lm_infer_varseq|transformer_lm_train)(/elided)?/real_time$'
ROUNDS=${ROUNDS:-2} REPS=3 MIN_TIME=0.3 TRACES="$out/traces" bash bench/ab_bundles.sh "$out/ab" "$F" .bundle .bundle_s32b > "$out/ab/rounds.txt" 2>&1
for r in 1 2; do
  ./.bundle/bin/bench --backend=cuda --traces="$out/traces" --benchmark_filter='^replay/cudaMallocAsync/[^/]+/real_time$' \
    --benchmark_repetitions=3 --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true --benchmark_format=json \
    > "$out/ab/cudaMallocAsync_$r.json" 2> /dev/null
done
python3 docs/results/2026-12-06-s32/summary_2.py "$out" > "$out/summary.txt" 2>&1
FAULT_SECONDS=5 timeout ${TESTS_BUDGET:-200} bash .bundle/gpu-suite "$out/tests" tests > "$out/tests_part.log" 2>&1; echo "tests part exit $?" >> "$out/tests_part.log"
tar -cJf "$out/s32_4.tar.xz" -C "$out" probe6.txt epoch_event.txt ab summary.txt tests tests_part.log
cat "$out/probe6.txt" "$out/epoch_event.txt" "$out/summary.txt"; grep -E "FAILED|exit=|== done|tests part" "$out/tests_part.log"
