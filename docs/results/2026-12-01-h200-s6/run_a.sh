#!/usr/bin/env bash
# GPU call a of 2026-12-01 s6 (code 5b6da3c, the reclaim passes and the device-call counters):
# (1) replay of every trace, stream-ordered for the four pools and cudaMallocAsync, immediate for tls
# and lockfree, with the counting backend's device calls per operation; limit/epoch_event (the host's
# cost of one epoch). (2) serve, small and mixed, 16 and 64 threads, every allocator, 3 interleaved
# repetitions. (3) PyTorch workloads.py for torch-expandable, torch and the plug-in (tls, stream), if the
# time allows. Run from the repository root after .ci/gpu-bundle, with .bundle carried.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PARTS=${PARTS:-replay serve torch}; has() { [[ " $PARTS " == *" $1 "* ]]; }
o=$OUT/${CALL:-a}; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
left() { [ $(( $(date +%s)-start )) -lt $1 ]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
j() { echo --benchmark_out=$o/$1.json --benchmark_out_format=json; }
if has replay; then
  timeout 240 $B/bench --backend=cuda --traces=.bundle/traces \
    --benchmark_filter='^(replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/[a-z_0-9]+/real_time|replay/(tls|lockfree)/[a-z_0-9]+/immediate/real_time|limit/epoch_event/real_time)$' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true $(j replay) > /dev/null 2>$o/replay.err; el replay rc=$?
fi
if has serve && left 330; then
  timeout 200 $B/bench --backend=cuda --traces= \
    --benchmark_filter="${SERVE_FILTER:-^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub)/(small|mixed)/real_time/threads:(16|64)\$}" \
    --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
    $(j serve) > /dev/null 2>$o/serve.err; el serve rc=$?
fi
if has torch; then
  py=python3; W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so; runs=()
  for a in torch-expandable torch; do left 420 || break
    timeout 90 $py $W --allocator=$a --steps=40 --out=$o/wl_$a.json >> $o/torch.log 2>&1; runs+=($o/wl_$a.json); el $a
  done
  for v in tls stream; do left 500 || break
    CUDAPOOL_STATS=$o/stats_$v.json timeout 90 $py $W --allocator=cudapool --lib=$L --variant=$v --steps=40 --out=$o/wl_$v.json >> $o/torch.log 2>&1
    runs+=($o/wl_$v.json); el torch $v
  done
  [ ${#runs[@]} -gt 0 ] && $py $W --summary "${runs[@]}" --out=$o/workloads.json >> $o/torch.log 2>&1
fi
tar czf $OUT/${CALL:-a}.tgz -C $OUT ${CALL:-a}; el done
