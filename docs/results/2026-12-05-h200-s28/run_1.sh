#!/usr/bin/env bash
# s28 call 1 of 3 (one GPU-suite run of the final library; real programs first), from the repository
# root after `bash .ci/gpu-bundle` with .bundle carried: gpu-suite's torch part (train_compare.py 100
# steps; workloads.py 40 steps: torch, torch-expandable, cudaMallocAsync, the four variants with the
# plug-in's defaults, then tls with the library's defaults), up to TORCH_ROUNDS rounds while they fit
# (PART_DEADLINE), then its replay part, up to 3 rounds while they fit (every allocator in its own
# processes, the order rotating, 3 repetitions x 0.5 s a point; stream-ordered, /elided, /immediate).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > $o/gpu.txt 2>&1
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .bundle/bin.tar.xz .bundle
PART_DEADLINE=$(( start + ${TORCH_UNTIL:-270} )) TORCH_ROUNDS=${TORCH_ROUNDS:-2} TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 \
  timeout $(( ${TORCH_UNTIL:-270} + 30 )) bash .bundle/gpu-suite $o torch > /dev/null 2>&1; el torch rc=$?
grep -E "identical|differ|Error|rounds|stopped" $o/torch.log | head -8
PART_DEADLINE=$(( start + 575 )) REPLAY_ROUNDS=${REPLAY_ROUNDS:-3} timeout $(( 588 - ($(date +%s)-start) )) \
  bash .bundle/gpu-suite $o replay > /dev/null 2>&1; el replay rc=$?
tail -4 $o/replay.log
tar cJf $OUT/c.tar.xz -C $OUT c; el done
