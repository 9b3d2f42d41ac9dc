#!/usr/bin/env bash
# Does where the main thread's stack starts (mod 4 KiB) set a single-thread pair's speed? With
# address-space randomization off (setarch -R), the initial stack pointer moves only with the size
# of the environment: PAD of k*STEP bytes moves it down by about that much. Each k is one fresh
# process of bench (sim backend), BENCH_FILTER (default pair/tls/4096 at 1 thread), REPS x
# MIN_TIME s; prints k, the pad's bytes and the median ns per pair. Then RANDOM_RUNS processes with
# randomization on and a fixed environment, for the spread that the randomization alone makes.
# KS="1 14 18": only these k, ROUNDS times each (default 1), in turn.
#   bash docs/results/2026-12-06-vm-s33/stack_offset.sh BENCH [STEPS] [STEP]
set -u
bench=${1:?usage: stack_offset.sh BENCH [STEPS] [STEP]}
steps=${2:-64}
step=${3:-64}
filter=${BENCH_FILTER:-^pair/tls/4096/real_time/threads:1\$}
run() {  # prints the median real_time of one process
  "$@" "$bench" --backend=sim --traces= --benchmark_filter="$filter" --benchmark_repetitions="${REPS:-3}" \
    --benchmark_min_time="${MIN_TIME:-0.2}" --benchmark_report_aggregates_only=true 2>/dev/null |
    awk '/_median/ {m = $2} /^[a-z]+\/.*threads/ && !/_(mean|median|stddev|cv) / {v = $2} END {print (m != "" ? m : v)}'
}
echo "# setarch -R, PAD of k*$step bytes: k pad_bytes ns"
for r in $(seq 1 "${ROUNDS:-1}"); do
  for k in ${KS:-$(seq 0 $((steps - 1)))}; do
    pad=$(head -c $((k * step)) /dev/zero | tr '\0' x)
    echo "$k $((k * step)) $(run env PAD="$pad" setarch "$(uname -m)" -R)"
  done
done
echo "# randomization on, the same environment: run ns"
for r in $(seq 1 "${RANDOM_RUNS:-16}"); do echo "$r $(run env)"; done
