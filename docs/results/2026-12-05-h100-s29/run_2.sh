#!/usr/bin/env bash
# s29 call 2 of 3: the GPU suite on the final library (s29's, 4f44010's marks rule dropped), real
# programs first, one round of each: gpu-suite's torch part (train_compare.py 100 steps; workloads.py
# 40 steps: torch, torch-expandable, cudaMallocAsync, the four variants with the plug-in's defaults,
# then tls with the library's), serve (every variant and the peers, 1..64 threads, small and mixed),
# replay (every allocator in its own process, stream-ordered, /elided, /immediate), pagebench (pair
# scaling, prodcons, limit/epoch_event, limit/stack), the peers through stress, the sanitizer demos.
# From the repository root after `bash .ci/gpu-bundle`, .bundle carried. Each part is packed into
# $OUT/<part>.tar.xz as it ends (.ci/gpu-run).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCH_ROUNDS=1 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 SERVE_ROUNDS=1 REPLAY_ROUNDS=1
bash .bundle/gpu-run "$OUT" "${BUDGET:-565}" torch serve replay pagebench peers sanitizer
