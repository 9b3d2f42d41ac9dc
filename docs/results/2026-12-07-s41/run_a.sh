#!/usr/bin/env bash
# s41 call A (device), one bundle built at HEAD with `bash .ci/gpu-bundle`: replay (every trace, the
# four variants and cudaMallocAsync in their own processes, 2 rounds), serve (every variant, the
# peers, the no-allocator ceiling; the rounds that fit), peers through stress, the sanitizer demos,
# pagebench. s37's calls C and D less the spread, plus the sanitizer: a session with ~1,060 s of
# device time left after failed starts fits two calls, not three.
#   OUT=... BUDGET=585 bash docs/results/2026-12-07-s41/run_a.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s41_a}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export REPLAY_ROUNDS=2 SERVE_ROUNDS=${SERVE_ROUNDS:-2}
bash .bundle/gpu-run "$out" $(( ${BUDGET:-585} - 10 )) ${PARTS:-replay:320 serve:125 peers:62 sanitizer:10 pagebench:57}
cat "$out/gpu-run.log"
