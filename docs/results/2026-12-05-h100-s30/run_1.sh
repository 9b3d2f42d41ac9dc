#!/usr/bin/env bash
# s30 call 1 of 2: the GPU suite's real programs on the final library (e4d5eda; 4d22d41 changed
# only tests, gpu-suite's spread order and Python), two rounds each so that a ratio has a spread:
# gpu-suite's torch part (train_compare.py 100 steps; workloads.py 40 steps a workload: torch,
# torch-expandable, cudaMallocAsync, the four variants with the plug-in's defaults, then tls with
# the library's), then serve (every variant, tls-mr, the peers and the no-allocator ceiling, 1, 16
# and 64 threads, small and mixed). From the repository root after `bash .ci/gpu-bundle`, .bundle
# carried. Each part is packed into $OUT/<part>.tar.xz as it ends (.ci/gpu-run); PART_DEADLINE
# stops a part's rounds before the call's time runs out.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCH_ROUNDS=2 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 SERVE_ROUNDS=2
bash .bundle/gpu-run "$OUT" "${BUDGET:-580}" torch serve
