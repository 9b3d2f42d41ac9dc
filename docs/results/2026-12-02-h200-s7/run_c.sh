#!/usr/bin/env bash
# GPU call c of 2026-12-02 s7. .bundle/bin/bench_x is this session's code after the remap fix
# (b47b24e) plus one knob read from the environment, not committed: XS=0 skips the stream
# variant's completed-mode steal (refill step 2a: a stream query of every other partition that holds
# blocks of the class); XS=1 is the code as committed. .bundle/bin/bench_base is main before the
# session (f674342). libcudapool_torch.so is b47b24e.
# (1) workloads.py (40 steps), two rounds: torch, torch-expandable, tls with
#     CUDAPOOL_MAX_CLASS_BYTES=64k and CUDAPOOL_REMAP_RATIO=1.01, tls with the 64k classes alone,
#     stream with both;
# (2) serve/mixed, stream and lockfree, 16 and 64 threads, XS=1 and XS=0 alternating, 3 rounds;
# (3) replay of every trace, stream, XS=1 and XS=0 alternating, 2 rounds;
# (4) replay of every trace, the four pools, bench_base and bench_x (XS=1) alternating, 2 rounds
#     of 1 repetition (how far one process's figures move from the next).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
left() { [ $(( $(date +%s)-start )) -lt $1 ]; }
j() { echo --benchmark_out=$o/$1.json --benchmark_out_format=json; }
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
wl() { local name=$1; shift; left 300 || return; CUDAPOOL_STATS=$o/stats_$name.json timeout 60 python3 $W "$@" --steps=40 --out=$o/wl_$name.json >> $o/torch.log 2>&1; el torch $name; }
for r in 1 2; do
  wl torch_r$r --allocator=torch
  wl torch-expandable_r$r --allocator=torch-expandable
  wl tls-c64k-remap_r$r --allocator=cudapool --lib=$L --variant=tls --max-class-bytes=64k --remap-ratio=1.01
  wl tls-c64k_r$r --allocator=cudapool --lib=$L --variant=tls --max-class-bytes=64k
  wl stream-c64k-remap_r$r --allocator=cudapool --lib=$L --variant=stream --max-class-bytes=64k --remap-ratio=1.01
  ls $o/wl_*_r$r.json > /dev/null 2>&1 && python3 $W --summary $o/wl_*_r$r.json --out=$o/workloads_r$r.json >> $o/torch.log 2>&1
done
S="--backend=cuda --traces= --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_filter=^serve/(stream|lockfree)/mixed/real_time/threads:(16|64)\$"
for r in 1 2 3; do for x in 1 0; do left 420 && XS=$x timeout 40 $B/bench_x $S $(j serve_xs${x}_r$r) > /dev/null 2>>$o/serve.err; done; done; el serve
R="--backend=cuda --traces=.bundle/traces --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_filter=^replay/stream/[a-z_0-9]+/real_time\$"
for r in 1 2; do for x in 1 0; do left 470 && XS=$x timeout 30 $B/bench_x $R $(j replay_xs${x}_r$r) > /dev/null 2>>$o/replay.err; done; done; el replay_xs
R="--backend=cuda --traces=.bundle/traces --benchmark_filter=^replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/real_time\$"
for r in 1 2; do
  left 530 && timeout 30 $B/bench_base $R $(j replay_base_r$r) > /dev/null 2>>$o/replay.err
  left 545 && XS=1 timeout 30 $B/bench_x $R $(j replay_new_r$r) > /dev/null 2>>$o/replay.err
done; el replay_ab
tar czf $OUT/c.tgz -C $OUT c; el done
