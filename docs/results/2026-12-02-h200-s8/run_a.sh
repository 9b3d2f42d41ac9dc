#!/usr/bin/env bash
# GPU call a of 2026-12-02 s8. Code: this session's (a miss reuses blocks of its own stream's closed
# epochs too; a miss that would grow first polls the pending epochs, pool_options::poll_before_growth
# 20 us; bench labels <v>-nopoll with the poll off) as .bundle/bin/bench, and main before it
# (bf123c3) as .bundle/bin/bench_base, side by side:
# (1) replay, stream-ordered, every trace, 3 repetitions: base (the four pools), then new (the four
#     pools, the four -nopoll, cudaMallocAsync, limit/epoch_event);
# (2) serve, base (the four pools, mixed, 16 and 64 threads), then new (the four pools, the four
#     -nopoll, cudaMallocAsync, cub; small and mixed; 16 and 64 threads), 3 interleaved repetitions;
# (3) workloads.py (40 steps): torch, torch-expandable, the four variants with the plug-in's defaults.
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
timeout 170 $B/bench $R --benchmark_filter='^(replay/(mutex|lockfree|tls|stream)(-nopoll)?/[a-z_0-9]+/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$' \
  $(j replay) > /dev/null 2>$o/replay.err; el replay rc=$?
S="--backend=cuda --traces= --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true"
timeout 40 $B/bench_base $S --benchmark_filter='^serve/(mutex|lockfree|tls|stream)/mixed/real_time/threads:(16|64)$' \
  $(j serve_base) > /dev/null 2>$o/serve_base.err; el serve_base rc=$?
timeout 130 $B/bench $S --benchmark_filter='^serve/(mutex|lockfree|tls|stream)(-nopoll)?/(small|mixed)/real_time/threads:(16|64)$|^serve/(cudaMallocAsync|cub)/(small|mixed)/real_time/threads:(16|64)$' \
  $(j serve) > /dev/null 2>$o/serve.err; el serve rc=$?
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so; runs=()
wl() { local name=$1; shift; left 560 || return; CUDAPOOL_STATS=$o/stats_$name.json timeout 60 python3 $W "$@" --steps=40 --out=$o/wl_$name.json >> $o/torch.log 2>&1; runs+=($o/wl_$name.json); el torch $name; }
wl torch-expandable --allocator=torch-expandable
wl torch --allocator=torch
for v in tls stream mutex lockfree; do wl $v --allocator=cudapool --lib=$L --variant=$v; done
[ ${#runs[@]} -gt 0 ] && python3 $W --summary "${runs[@]}" --out=$o/workloads.json >> $o/torch.log 2>&1
tar czf $OUT/a.tgz -C $OUT a; el done
