#!/usr/bin/env bash
# GPU call e of 2026-12-02 s9: is the step-time spread in final/workloads.json (lm_train: stream
# 1.11x, lockfree 1.07x PyTorch's allocator, one process each) the variants' or the processes'?
# lm_train alone (workloads.py, 40 steps), torch and the four variants with the plug-in's defaults,
# one process each, alternating, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/e; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
for r in 1 2; do
  timeout 40 python3 $W --allocator=torch --only-workload=lm_train --steps=40 --out=$o/wl_torch_r$r.json >> $o/torch.log 2>&1; el torch r$r
  for v in mutex lockfree tls stream; do
    timeout 40 python3 $W --allocator=cudapool --lib=$L --variant=$v --only-workload=lm_train --steps=40 --out=$o/wl_${v}_r$r.json >> $o/torch.log 2>&1; el $v r$r
  done
done
python3 - $o <<'PY'
import json, sys, glob, os, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/wl_*_r*.json")):
    name = os.path.basename(f)[3:-5]; a, r = name.rsplit("_r", 1)
    d = json.load(open(f)); w = d["workloads"]["lm_train"] if "workloads" in d else d
    rows.setdefault(r, {})[a] = w
json.dump(rows, open(sys.argv[1] + "/summary.json", "w"), indent=1)
PY
tar czf $OUT/e.tgz -C $OUT e; el done
