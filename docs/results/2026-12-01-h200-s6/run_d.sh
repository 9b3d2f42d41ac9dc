#!/usr/bin/env bash
# GPU call d of 2026-12-01 s6: the large path's close of open epochs only when a range waits behind
# another stream's epoch (segment_heap::pending_elsewhere), against closing whenever any range is
# pending (as before), in one experiment binary: XL set = the new rule (the env switch was removed
# after this call; the rule is the code's). Rounds interleave the two, a fresh process each:
# replay (stream-ordered, four pools, every trace), serve/mixed (16, 64 threads), workloads.py
# (tls, stream).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib; B=.bundle/bin
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
j() { echo --benchmark_out=$o/$1.json --benchmark_out_format=json; }
run() { if [ "$1" = new ]; then shift; XL=1 "$@"; else shift; "$@"; fi; }
for r in 1 2; do for m in old new; do
  run $m timeout 40 $B/bench --backend=cuda --traces=.bundle/traces --benchmark_filter='^replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/real_time$' \
    --benchmark_min_time=0.3 $(j replay_${m}_r$r) > /dev/null 2>>$o/err.txt
  run $m timeout 30 $B/bench --backend=cuda --traces= --benchmark_filter='^serve/(mutex|lockfree|tls|stream)/mixed/real_time/threads:(16|64)$' \
    $(j serve_${m}_r$r) > /dev/null 2>>$o/err.txt
done; done; el bench
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
for m in old new; do for v in tls stream; do
  run $m timeout 40 python3 $W --allocator=cudapool --lib=$L --variant=$v --steps=30 --out=$o/wl_${v}_$m.json >> $o/torch.log 2>&1; el torch $v $m
done; done
tar czf $OUT/d.tgz -C $OUT d; el done
