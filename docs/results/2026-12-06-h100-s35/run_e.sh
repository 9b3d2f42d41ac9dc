#!/usr/bin/env bash
# s35 call E (device), the same bundle: where CUB's serve process meets its illegal memory access
# (call C: in both rounds it surfaced at the set-up of serve/cub/small at 64 threads, after the
# 16-thread point). Each point alone in fresh processes (cub at 16 and 64 threads, small and mixed;
# cudaMallocAsync at 16 as the control), then serve/cub/small at 16 threads under
# compute-sanitizer's memcheck (which kernel faults, and where), with what time is left.
#   OUT=... bash docs/results/2026-12-06-h100-s35/run_e.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s35_e}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
until=$(( $(date +%s) + ${BUDGET:-200} ))
point() {  # ALLOCATOR KIND THREADS MIN_TIME: one fresh process; its result lines and errors
  echo "-- serve/$1/$2 threads:$3"
  timeout 60 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter="^serve/$1/$2/real_time/threads:$3\$" \
    --benchmark_min_time="$4" --benchmark_repetitions=3 2>&1 | grep -E "serve/|error|rror:|failed|illegal" | cut -c1-300
  echo "exit ${PIPESTATUS[0]}"
}
{
  for i in 1 2 3; do point cub small 16 0.5; done
  for i in 1 2; do point cub small 64 0.5; done
  for i in 1 2; do point cub mixed 16 0.5; done
  point cudaMallocAsync small 16 0.5
} > "$out/points.txt" 2>&1
cat "$out/points.txt"
left=$(( until - $(date +%s) - 5 ))
if (( left > 20 )) && command -v compute-sanitizer > /dev/null; then
  timeout "$left" compute-sanitizer --tool memcheck --print-limit 5 .bundle/bin/bench --backend=cuda --traces= \
    --benchmark_filter='^serve/cub/small/real_time/threads:16$' --benchmark_min_time=0.2 --benchmark_repetitions=1 \
    > "$out/memcheck.txt" 2>&1
  echo "memcheck exit $?" >> "$out/memcheck.txt"
  grep -E "Invalid|at 0x|by thread|Address|ERROR SUMMARY|exit|Saved host backtrace|in " "$out/memcheck.txt" | head -40
fi
