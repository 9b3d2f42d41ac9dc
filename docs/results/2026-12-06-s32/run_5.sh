#!/usr/bin/env bash
# s32 call 5 (device; never ran), cut to the device time left (394 s with the machine's start):
# probe6 in two orders, limit/epoch_event, backend_test (the lazy verify state and guard ring, now
# zeroed and synchronized once), the injected faults (which the verify kernels must catch: stress
# exit 1), then one round of a replay A/B of the heap's walk for runs (.bundle against .bundle_s32b,
# the same library without it): lm_infer_varseq and transformer_lm_train, stream-ordered and /elided.
#   bash docs/results/2026-12-06-s32/run_5.sh   (OUT; carry .bundle, .bundle_s32b, .bundle_base_slim)
set -u
out=${OUT:-/tmp/s32_5}
mkdir -p "$out/ab" "$out/traces"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ./.bundle_base_slim/probe6 vgn; ./.bundle_base_slim/probe6 gnv; } > "$out/probe6.txt" 2>&1
./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
  --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median > "$out/epoch_event.txt"
./.bundle/bin/backend_test > "$out/backend_test.log" 2>&1; echo "backend_test exit $?" >> "$out/backend_test.log"
for inject in early-reuse double-handout; do
  for v in mutex lockfree tls stream; do
    ./.bundle/bin/stress --backend=cuda --variant=$v --threads=64 --streams=16 --duration=4 --inject=$inject --quiet >> "$out/faults.log" 2>&1
    echo "inject=$inject variant=$v exit=$? (want 1)" >> "$out/faults.log"
  done
done
./.bundle/bin/stress --backend=cuda --variant=tls --threads=64 --streams=16 --duration=5 --quiet > "$out/soak_tls.log" 2>&1; echo "soak exit $? (want 0)" >> "$out/soak_tls.log"
for t in lm_infer_varseq transformer_lm_train; do cp .bundle/traces/$t.csv "$out/traces/"; done
F='^replay/(lockfree|mutex|tls|stream)/(lm_infer_varseq|transformer_lm_train)(/elided)?/real_time$'
ROUNDS=${ROUNDS:-1} REPS=3 MIN_TIME=0.3 TRACES="$out/traces" bash bench/ab_bundles.sh "$out/ab" "$F" .bundle .bundle_s32b > "$out/ab/rounds.txt" 2>&1
python3 docs/results/2026-12-06-s32/summary_2.py "$out" > "$out/summary.txt" 2>&1
tar -cJf "$out/s32_5.tar.xz" -C "$out" probe6.txt epoch_event.txt backend_test.log faults.log soak_tls.log ab summary.txt
cat "$out/probe6.txt" "$out/epoch_event.txt" "$out/summary.txt"; tail -3 "$out/backend_test.log"; grep exit "$out/faults.log" "$out/soak_tls.log"
