#!/usr/bin/env bash
# s48: what the stream arenas' front costs the small-class hot path (issue 14's pair check, and the
# measurement a default with arenas on would need): pair/<v>/4096 against pair/<v>-arenas/4096 for
# tls and stream at 1 thread (pinned to CPU PIN, default 2) and at 16 threads (unpinned), each
# allocator in its own fresh process, ROUNDS rounds (4), the allocators' order rotating by one per
# round, REPS (3) x MIN_TIME (0.3) s a point. bench's pair gives pools the default stream (only
# peers get a stream per thread: bench_allocator::wants_home_streams), so every -arenas pair goes
# through arena 0: the front's cost to a program on the default stream, the cost a default with
# arenas on would put on it (not an owner's path; this comment corrected after the run, which
# first said each thread owned an arena). WORKLOADS (s49; default "pair", s48's run) may add
# `streams`, the owner's path: streams/<v>/same against streams/<v>-arenas/same (thread t allocates
# 4 KiB on stream t % 16 and frees it stream-ordered there; behind arenas each stream owns an arena,
# where that free is immediate); its files are named streams_<allocator>_t<threads>_r<round>.json.
# Needs .bundle unpacked (gpu-suite's first part).
# BACKEND=sim runs it without a GPU (a check of the script).
#   bash docs/results/2026-12-07-s48/pair_front.sh OUT_DIR     (repository root)
set -u
out=${1:?usage: pair_front.sh OUT_DIR}
b=${BUNDLE:-.bundle}
[ -x $b/bin/bench ] || { echo "pair_front.sh: $b/bin/bench is missing (run a gpu-suite part first)" >&2; exit 2; }
export LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
allocs=(tls tls-arenas stream stream-arenas)
status=0
for r in $(seq 1 "${ROUNDS:-4}"); do
  for k in "${!allocs[@]}"; do
    a=${allocs[$(( (k + r) % ${#allocs[@]} ))]}
    for w in ${WORKLOADS:-pair}; do
      for t in 1 16; do
        pin=(); [ "$t" = 1 ] && pin=(taskset -c "${PIN:-2}")
        case $w in
        pair) filter="^pair/$a/4096/real_time/threads:$t\$" name=${a}_t${t}_r$r ;;
        streams) filter="^streams/$a/same/real_time/threads:$t\$" name=streams_${a}_t${t}_r$r ;;
        *) echo "pair_front.sh: unknown workload '$w'" >&2; exit 2 ;;
        esac
        "${pin[@]}" $b/bin/bench --backend="${BACKEND:-cuda}" --traces= --benchmark_filter="$filter" \
          --benchmark_min_time="${MIN_TIME:-0.3}" --benchmark_repetitions="${REPS:-3}" \
          --benchmark_report_aggregates_only=true --benchmark_format=json > "$out/$name.json" 2> "$out/$name.err" ||
          { echo "pair_front.sh: $w $a threads:$t round $r failed" >&2; status=1; }
      done
    done
  done
done
python3 "$(dirname "$0")/pair_front.py" "$out" | tee "$out/summary.txt"
exit $status
