#!/usr/bin/env bash
# GPU call a of 2026-12-02 s7. Code: this session's (a miss reuses its own stream's open-epoch
# blocks and closes only the epochs that can serve it; the large path closes only other streams'
# range epochs; bench labels <v>-tight) as .bundle/bin/bench, and main before it (f674342) as
# .bundle/bin/bench_base, side by side:
# (1) replay, stream-ordered, every trace, 3 repetitions: base (the four pools), then new (the four
#     pools, the four -tight, cudaMallocAsync, limit/epoch_event);
# (2) serve/mixed, the four pools, 16 and 64 threads, base then new; then new serve, every
#     allocator, small and mixed, 16 and 64 threads, 3 interleaved repetitions;
# (3) pair/tls and pair/stream 4096 at 1 and 16 threads, base and new alternating, two rounds;
# (4) workloads.py (40 steps): torch-expandable, torch, the four variants with the plug-in's
#     defaults, tls and stream with CUDAPOOL_MAX_CLASS_BYTES=64k, and with it and
#     CUDAPOOL_REMAP_RATIO=1.01, and tls with the remap alone.
# Run from the repository root with .bundle carried (test binaries left out for the 64 MiB limit).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
left() { [ $(( $(date +%s)-start )) -lt $1 ]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
j() { echo --benchmark_out=$o/$1.json --benchmark_out_format=json; }
R="--backend=cuda --traces=.bundle/traces --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
timeout 80 $B/bench_base $R --benchmark_filter='^replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/real_time$' \
  $(j replay_base) > /dev/null 2>$o/replay_base.err; el replay_base rc=$?
timeout 150 $B/bench $R --benchmark_filter='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$' \
  $(j replay) > /dev/null 2>$o/replay.err; el replay rc=$?
S="--backend=cuda --traces= --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true"
timeout 60 $B/bench_base $S --benchmark_filter='^serve/(mutex|lockfree|tls|stream)/mixed/real_time/threads:(16|64)$' \
  $(j serve_base) > /dev/null 2>$o/serve_base.err; el serve_base rc=$?
timeout 120 $B/bench $S --benchmark_filter='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub)/(small|mixed)/real_time/threads:(16|64)$' \
  $(j serve) > /dev/null 2>$o/serve.err; el serve rc=$?
P="--backend=cuda --traces= --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_filter=^pair/(tls|stream)/4096/real_time/threads:(1|16)\$"
for r in 1 2; do
  timeout 30 $B/bench_base $P $(j pair_base_r$r) > /dev/null 2>>$o/pair.err
  timeout 30 $B/bench $P $(j pair_new_r$r) > /dev/null 2>>$o/pair.err
done; el pair
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so; runs=()
wl() { local name=$1; shift; left 520 || return; CUDAPOOL_STATS=$o/stats_$name.json timeout 60 python3 $W "$@" --steps=40 --out=$o/wl_$name.json >> $o/torch.log 2>&1; runs+=($o/wl_$name.json); el torch $name; }
wl torch-expandable --allocator=torch-expandable
wl torch --allocator=torch
for v in tls stream mutex lockfree; do wl $v --allocator=cudapool --lib=$L --variant=$v; done
for v in tls stream; do wl ${v}-c64k --allocator=cudapool --lib=$L --variant=$v --max-class-bytes=64k; done
for v in tls stream; do wl ${v}-c64k-remap --allocator=cudapool --lib=$L --variant=$v --max-class-bytes=64k --remap-ratio=1.01; done
wl tls-remap --allocator=cudapool --lib=$L --variant=tls --remap-ratio=1.01
[ ${#runs[@]} -gt 0 ] && python3 $W --summary "${runs[@]}" --out=$o/workloads.json >> $o/torch.log 2>&1
tar czf $OUT/a.tgz -C $OUT a; el done
