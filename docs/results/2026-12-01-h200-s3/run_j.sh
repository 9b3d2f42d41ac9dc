#!/usr/bin/env bash
# GPU call J: serve (every variant, tls through cuda::mr, the peers; small and mixed; 1..64
# threads), stress over the peers (cudaMallocAsync, cub), a 2-minute mixed-size soak of every
# variant side by side, slabs doubling from 64 KiB against whole 2 MiB slabs (replay, pair), and single-thread pair/tls in five fresh processes (issue 15 item 7).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/j; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
timeout 200 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^serve/' --benchmark_repetitions=3 \
  --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true --benchmark_out=$o/serve.json \
  --benchmark_out_format=json > $o/serve.log 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s"
PEER_SECONDS=30 timeout 100 bash .bundle/gpu-suite $o peers > /dev/null 2>&1; echo "peers rc=$? $(( $(date +%s)-start ))s"
SOAK_SECONDS=120 SOAK_SIZES=mixed timeout 170 bash .bundle/gpu-suite $o soak > /dev/null 2>&1; echo "soak rc=$? $(( $(date +%s)-start ))s"
timeout 90 .bundle/bin/bench --backend=cuda --traces=.bundle/traces --benchmark_filter='^replay/(tls|stream|tls-slab2m|stream-slab2m)/(lm_train|transformer_lm_train|cnn_varbatch)|^pair/(tls|stream|tls-slab2m|stream-slab2m)/4096/real_time/threads:(1|16)$' \
  --benchmark_repetitions=3 --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true --benchmark_out=$o/slab_ab.json \
  --benchmark_out_format=json > $o/slab_ab.log 2>&1; echo "slab a/b rc=$? $(( $(date +%s)-start ))s"
grep median $o/slab_ab.log | awk '{print $1, $2, $3, $NF}' | sed 's/real_time_median//'
for i in 1 2 3 4 5; do
  timeout 30 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^pair/tls/4096/real_time/threads:1$' \
    --benchmark_repetitions=5 --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true \
    --benchmark_format=json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin)
print('fresh process $i', [round(b['real_time'],2) for b in d['benchmarks'] if b['name'].endswith('_median')])"
done | tee $o/pair_fresh.txt; echo "fresh rc=$? $(( $(date +%s)-start ))s"
grep median $o/serve.log | awk '{print $1, $2, $3, $NF}' | sed 's/real_time_median//' | cut -c1-150 | head -70
grep -E "peer allocator" $o/peers.log; grep -E "soak variant|violations" $o/soak.log | head -12
tar czf $OUT/j.tgz -C $OUT j
