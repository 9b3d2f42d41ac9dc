#!/usr/bin/env bash
# s44, call a: is the extra host work of mlp_4stream's stream-ordered replay (elided minus
# immediate: 57 ns on s43's H100, 13-15 ns on the development VM's sim) the CUDA backend's or the
# host CPU's? The same bench binary replays the same traces on the sim backend and on the CUDA
# backend, on this host, in one process each, interleaved repetitions.
#   OUT=$OUT bash docs/results/2026-12-07-s44/probe_a.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
[ -x .bundle/bin/bench ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name --format=csv,noheader
filter='^replay/(lockfree|stream|tls)/(mlp_4stream|lm_infer_varseq)(/elided|/immediate)?/real_time$'
for backend in cuda sim; do
  taskset -c 2 .bundle/bin/bench --backend=$backend --traces=.bundle/traces --benchmark_filter="$filter" \
    --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
    --benchmark_format=json --benchmark_out="$out/probe_$backend.json" --benchmark_out_format=json \
    >"$out/probe_$backend.log" 2>&1 || echo "bench $backend: exit $?"
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
for backend in ("cuda", "sim"):
    d = json.load(open(f"{out}/probe_{backend}.json"))
    for b in d["benchmarks"]:
        if b.get("aggregate_name") == "median":
            print(backend, b["run_name"], round(b["real_time"], 1), "events/1k allocs",
                  round(b.get("events_per_1k_allocs", 0), 1))
PY
