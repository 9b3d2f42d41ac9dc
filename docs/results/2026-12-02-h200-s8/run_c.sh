#!/usr/bin/env bash
# GPU call c of 2026-12-02 s8, this session's code (.bundle/bin/bench, libcudapool_torch.so) and
# main before it (bf123c3, .bundle/bin/bench_base):
# (1) lm_train's step time, interleaved, 3 rounds, one process each (workloads.py
#     --workloads=lm_train --steps=100): torch; the plug-in with its defaults (tls, 64 KiB classes,
#     remap 1.01); with the library's (1 MiB classes, no remap); with 64 KiB classes alone; with the
#     remap alone. Call b found the plug-in's defaults 1.006-1.072x torch: which setting costs it.
# (2) serve/mixed, the four pools, 16 and 64 threads, base and new alternating, 3 rounds of one
#     repetition each: whether the session's change (closed-epoch reuse, poll before growth) costs
#     requests/s (call a ran base first, then new, and found new 4-7% lower at 16 threads).
# Run from the repository root with .bundle carried (test binaries left out for the 64 MiB limit).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
left() { [ $(( $(date +%s)-start )) -lt $1 ]; }
j() { echo --benchmark_out=$o/$1.json --benchmark_out_format=json; }
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
wl() { local name=$1; shift; left 300 || return; CUDAPOOL_STATS=$o/stats_$name.json timeout 40 python3 $W "$@" --workloads=lm_train --steps=100 --out=$o/lm_$name.json >> $o/torch.log 2>&1; el torch $name; }
for r in 1 2 3; do
  wl torch_r$r --allocator=torch
  wl tls_r$r --allocator=cudapool --lib=$L
  wl tls-lib_r$r --allocator=cudapool --lib=$L --max-class-bytes=1m --remap-ratio=0
  wl tls-c64k_r$r --allocator=cudapool --lib=$L --remap-ratio=0
  wl tls-remap_r$r --allocator=cudapool --lib=$L --max-class-bytes=1m
done
S="--backend=cuda --traces= --benchmark_filter=^serve/(mutex|lockfree|tls|stream)/mixed/real_time/threads:(16|64)\$"
for r in 1 2 3; do
  left 450 && timeout 35 $B/bench_base $S $(j serve_base_r$r) > /dev/null 2>>$o/serve.err
  left 480 && timeout 35 $B/bench $S $(j serve_new_r$r) > /dev/null 2>>$o/serve.err
done; el serve
tar czf $OUT/c.tgz -C $OUT c; el done
