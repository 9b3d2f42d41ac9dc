#!/usr/bin/env bash
# GPU call b of 2026-12-01 s6: an experiment binary (5b6da3c + two knobs read from the environment,
# not committed: XB = pool_options::epoch_batch, XW = the stream variant's busy window in us, during
# which a completed-mode steal skips a partition whose stream it found busy). Rounds interleave the
# settings, one fresh process each. (1) replay, stream-ordered, the four pools, every trace, XB 64,
# 256, 1024. (2) The same replay of tls and lockfree on the sim backend, on this host. (3) serve,
# every variant, small and mixed, 16 and 64 threads, XB 64 and 256; serve/stream/mixed with XB=256
# and XW 300 and 1000. (4) workloads.py, the plug-in's tls and stream at XB 64 and 256.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
j() { echo --benchmark_out=$o/$1.json --benchmark_out_format=json; }
rf='^replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/real_time$'
for r in 1 2 3; do for xb in 64 256 1024; do
  XB=$xb timeout 60 $B/bench --backend=cuda --traces=.bundle/traces --benchmark_filter="$rf" --benchmark_min_time=0.2 $(j replay_xb${xb}_r$r) > /dev/null 2>>$o/err.txt
done; done; el replay
timeout 60 $B/bench --backend=sim --traces=.bundle/traces --benchmark_filter='^replay/(lockfree|tls)/(lm_train|transformer_lm_train)(/immediate)?/real_time$' \
  --benchmark_min_time=0.2 --benchmark_repetitions=3 $(j replay_sim) > /dev/null 2>>$o/err.txt; el sim
sf='^serve/(mutex|lockfree|tls|stream)/(small|mixed)/real_time/threads:(16|64)$'
for r in 1 2 3; do
  for xb in 64 256; do XB=$xb timeout 60 $B/bench --backend=cuda --traces= --benchmark_filter="$sf" $(j serve_xb${xb}_r$r) > /dev/null 2>>$o/err.txt; done
  for xw in 300 1000; do XB=256 XW=$xw timeout 30 $B/bench --backend=cuda --traces= --benchmark_filter='^serve/stream/mixed/real_time/threads:(16|64)$' $(j serve_xw${xw}_r$r) > /dev/null 2>>$o/err.txt; done
done; el serve
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
for xb in 64 256; do for v in tls stream; do
  XB=$xb timeout 60 python3 $W --allocator=cudapool --lib=$L --variant=$v --steps=40 --out=$o/wl_${v}_xb$xb.json >> $o/torch.log 2>&1; el torch $v $xb
done; done
tar czf $OUT/b.tgz -C $OUT b; el done
