#!/usr/bin/env bash
# GPU call V, the session's final code. (1) CUDA tests of the core and every variant. (2) Hot
# paths, the s3 code (33e276f, .bundle/head/bench_s3_nosweep) against this code, each binary in 8
# fresh processes with address randomisation off at 8 environment sizes (8 stack placements):
# pair/<variant>/4096 at 1 and 16 threads, prodcons at 2 and 16; medians over placements.
# (3) Five fresh processes at one placement, and five as a user runs them (randomisation on).
# (4) serve, every allocator, small and mixed, 16 and 64 threads, 3 repetitions interleaved.
# (5) Replay (stream-ordered), every trace, the pools and cudaMallocAsync. (6) A 120 s mixed soak
# of the stream variant (64 threads, 16 streams), as call q's. (7) PyTorch workloads.py: torch,
# torch-expandable, the plug-in's tls and stream, tls with 256 KiB classes, tls with remap 1.02.
# Calls: v (PARTS="tests hot serve", code fdb6c1e), v2 (the bounded partition scan bf6bbf3, since
# reverted; PARTS="tests serve replay soak torch"), v3 (code a44a01e = fdb6c1e; PARTS="serve soak",
# SERVE_FILTER mixed only).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PARTS=${PARTS:-tests hot serve replay soak torch}; has() { [[ " $PARTS " == *" $1 "* ]]; }
o=$OUT/${CALL:-v}; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; H=.bundle/head; el() { echo "$* $(( $(date +%s)-start ))s"; }
if has tests; then
  for t in $(ls $B | grep _test); do
    timeout 150 $B/$t --gtest_brief=1 > $o/test_$t.log 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $o/test_$t.log | tr '\n' ' ')"
  done | tee $o/tests.log; el tests
fi
if has hot; then
  f='^(pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:(1|16)|prodcons/(mutex|lockfree|tls|stream)/real_time/threads:(2|16))$'
  for pad in 0 512 1024 1536 2048 2560 3072 3584; do for b in head new; do
    bin=$B/bench; [ $b = head ] && bin=$H/bench_s3_nosweep
    timeout 60 env PAD_ENV="$(head -c $pad /dev/zero | tr '\0' x)" setarch -R $bin --backend=cuda --traces= \
      --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_report_aggregates_only=true \
      --benchmark_out=$o/hot_${b}_pad$pad.json --benchmark_out_format=json > /dev/null 2>&1 || echo "hot $b $pad rc=$?"
  done; done; el hot
  f1='^pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:1$'
  for i in 1 2 3 4 5; do
    setarch -R $B/bench --backend=cuda --traces= --benchmark_filter="$f1" --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_report_aggregates_only=true --benchmark_out=$o/fixed_$i.json --benchmark_out_format=json > /dev/null 2>&1
    $B/bench --backend=cuda --traces= --benchmark_filter="$f1" --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_report_aggregates_only=true --benchmark_out=$o/random_$i.json --benchmark_out_format=json > /dev/null 2>&1
  done; el fresh
fi
has serve && { timeout 400 $B/bench --backend=cuda --traces= \
  --benchmark_filter="${SERVE_FILTER:-^serve/(mutex|lockfree|tls|stream|tls-mr|cudaMallocAsync|cub|none)/(small|mixed)/real_time/threads:(16|64)\$}" \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_out=$o/serve.json --benchmark_out_format=json > /dev/null 2>$o/serve.err; el serve rc=$?; }
has replay && { timeout 200 $B/bench --backend=cuda --traces=.bundle/traces \
  --benchmark_filter='^replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/[a-z_0-9]+/real_time$' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out=$o/replay.json --benchmark_out_format=json > /dev/null 2>$o/replay.err; el replay rc=$?; }
has soak && { timeout 200 $B/stress --backend=cuda --variant=stream --threads=64 --streams=16 --sizes=mixed --duration=120 --quiet \
  --json=$o/stress_stream.json > $o/soak_stream.log 2>&1; el soak rc=$?; }
if has torch; then
  py=python3; W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so; runs=()
  for a in torch torch-expandable; do $py $W --allocator=$a --steps=40 --out=$o/wl_$a.json >> $o/torch.log 2>&1; runs+=($o/wl_$a.json); done
  for cfg in "tls" "stream" "tls --max-class-bytes=256k" "tls --remap-ratio=1.02"; do
    set -- $cfg; tag=$(echo "$cfg" | tr -d ' -' | tr '=' '_')
    CUDAPOOL_STATS=$o/stats_$tag.json $py $W --allocator=cudapool --lib=$L --variant=$cfg --steps=40 --out=$o/wl_$tag.json >> $o/torch.log 2>&1
    runs+=($o/wl_$tag.json); el torch $tag
  done
  $py $W --summary "${runs[@]}" --out=$o/workloads.json >> $o/torch.log 2>&1
fi
python3 .bundle/summarize_v.py $o > $o/summary.txt 2>&1; cat $o/summary.txt
tar czf $OUT/${CALL:-v}.tgz -C $OUT ${CALL:-v}
