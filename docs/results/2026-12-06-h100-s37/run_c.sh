#!/usr/bin/env bash
# s36 call C (device), the same bundle: replay first (every trace, the four variants and
# cudaMallocAsync in their own processes, 2 rounds: s35 fitted one after serve), then serve (every
# variant, the peers, the no-allocator ceiling; as many of 2 rounds as fit) and peers through stress.
# (Three failed machine starts cost 540 s of device time, so serve moved here from call D.)
#   OUT=... bash docs/results/<this directory>/run_c.sh   (carry .bundle)
# PARTS and SERVE_ROUNDS override the parts and serve's rounds (s39's plan for a short budget:
# PARTS='replay:300 serve:125' SERVE_ROUNDS=1).
set -u
out=${OUT:-/tmp/s36_c}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export REPLAY_ROUNDS=2 SERVE_ROUNDS=${SERVE_ROUNDS:-2}
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) ${PARTS:-replay:330 serve:125 peers}
cat "$out/gpu-run.log"
