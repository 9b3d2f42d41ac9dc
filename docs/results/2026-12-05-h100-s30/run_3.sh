#!/usr/bin/env bash
# s30 call 3, optional, for what the budget leaves after run_1.sh and run_2.sh (about 150 s):
# tls's two memory levels in PyTorch (issue 14; 2,834 or 2,946-2,948 MiB over the baseline after
# lm_train, s29). PROCESSES (default 6) processes of workloads.py lm_train with the tls variant, 40
# steps each, each recording its allocation trace (CUDAPOOL_TRACE, now with the host thread of each
# call) and its stats file, packed into $OUT/tls_traces.tar.xz. Then, on this machine, the traces
# of a high and a low process replay with `bench --trace=F --benchmark_filter='^replay/tls/.*/threads'`
# on the sim (each operation on its recorded thread): does the replay keep the two levels apart,
# and at which operation does the high one map the pages the low one does not?
# From the repository root after `bash .ci/gpu-bundle` (the bundle's plug-in records the thread).
set -u
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle  # the plug-in travels packed
dir=$OUT/tls_traces
mkdir -p "$dir"
for i in $(seq 1 "${PROCESSES:-6}"); do
  mkdir -p "$dir/p$i"
  CUDAPOOL_STATS="$dir/p$i/stats.json" timeout 120 python3 .bundle/workloads.py --allocator=cudapool \
    --lib=.bundle/lib/libcudapool_torch.so --variant=tls --only-workload=lm_train --steps=40 \
    --trace-dir="$dir/p$i" --out="$dir/p$i/lm_train.json" > "$dir/p$i/log.txt" 2>&1
  echo "process $i: exit $? $(grep -o '[0-9.]* MiB over baseline' "$dir/p$i/log.txt" | head -1)" | tee -a "$dir/summary.txt"
done
tar -cJf "$OUT/tls_traces.tar.xz" -C "$OUT" tls_traces && rm -rf "$dir"
