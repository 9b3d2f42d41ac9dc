#!/usr/bin/env bash
# s42 call B (device), one bundle built at HEAD (.bundle) and abb4709's bench (.bundle_main, the
# pre-heap main's, for issue 14's hot-path check): replay (every trace, the four variants and
# cudaMallocAsync in their own processes, REPLAY_ROUNDS rounds), peers through stress, pagebench;
# then pair_ab.sh (pair/tls and pair/stream against main's, 1 thread pinned, 16 free) and the spread
# (five fresh processes per variant, pinned and free) with what is left. gpu-run skips a part that
# no longer fits. At most 8 files come back: gpu.txt, gpu-run.log, replay, peers, pagebench,
# spread (.tar.xz), pair_ab.tar.xz.
#   OUT=... BUDGET=585 bash docs/results/2026-12-07-s42/run_b.sh   (carry .bundle and .bundle_main)
set -u
out=${OUT:-/tmp/s42_b}
mkdir -p "$out"
here=$(dirname "$0")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
start=$(date +%s)
budget=${BUDGET:-585}
left() { echo $(( budget - 10 - ($(date +%s) - start) )); }
export REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} SPREAD_PROCESSES=5
bash .bundle/gpu-run "$out" "$(left)" ${PARTS:-replay:320 peers:62 pagebench:57}
if (( $(left) > 60 )) && [ -d .bundle_main ]; then
  mkdir -p "$out/pair_ab"
  timeout 90 bash "$here/pair_ab.sh" "$out/pair_ab" .bundle .bundle_main > "$out/pair_ab/pair_ab.log" 2>&1
  tar -cJf "$out/pair_ab.tar.xz" -C "$out" pair_ab && rm -rf "$out/pair_ab"
fi
mv "$out/gpu-run.log" "$out/gpu-run.1.log"
bash .bundle/gpu-run "$out" "$(left)" ${PARTS2:-spread:140}
cat "$out/gpu-run.1.log" "$out/gpu-run.log" > "$out/gpu-run.all" 2> /dev/null
mv "$out/gpu-run.all" "$out/gpu-run.log" && rm -f "$out/gpu-run.1.log"
cat "$out/gpu-run.log"
