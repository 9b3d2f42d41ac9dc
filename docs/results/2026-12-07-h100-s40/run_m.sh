#!/usr/bin/env bash
# s40: does mlp_4stream's stream-ordered replay cost the GPU host's CPU more on the CUDA backend
# than on the sim? On this repository's 2-core VM (sim) lockfree's elided replay of mlp_4stream
# costs 1.3-1.6x lm_infer_varseq's; on the H100 host (CUDA backend, s38) 1.7x (112 against 63-68
# ns), while s38's run_h.sh found lm_infer_varseq's sim and CUDA replays equal there (66.9, 67.6).
# Both backends on the same host, elided and immediate, 3 repetitions each:
#   OUT=... bash docs/results/<this directory>/run_m.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s40_m}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
for backend in sim cuda; do
  ./.bundle/bin/bench --backend=$backend --traces=.bundle/traces \
    --benchmark_filter='^replay/(lockfree|mutex)/(mlp_4stream|lm_infer_varseq|transformer_lm_train)/(elided|immediate)/real_time' \
    --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
    --benchmark_format=json --benchmark_out="$out/mlp_$backend.json" > /dev/null
  echo "mlp probe $backend exit $?"
done
python3 - "$out" <<'PY'
import json, sys
for b in ("sim", "cuda"):
    try:
        d = json.load(open(f"{sys.argv[1]}/mlp_{b}.json"))
    except (OSError, ValueError) as e:
        print(b, "no result:", e)
        continue
    for x in d["benchmarks"]:
        if x.get("aggregate_name") == "median":
            print(b, x["run_name"], round(x["real_time"], 1))
PY
