#!/usr/bin/env bash
# GPU call d of 2026-12-02 s9: why the stream variant holds 20-28 MiB more than the others in
# PyTorch (final/workloads.json: +28 MiB after lm_train). workloads.py --only-workload=lm_train
# (40 steps, one process each) for torch-expandable, and for tls and stream with the plug-in's
# defaults and with remap off, each with CUDAPOOL_STATS (the pool's stats at exit: heap free,
# pending, extents, maps, epochs by reason).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so; runs=()
python3 $W --allocator=torch-expandable --only-workload=lm_train --steps=40 --out=$o/wl_expandable.json >> $o/torch.log 2>&1; runs+=($o/wl_expandable.json); el expandable
for v in tls stream; do
  CUDAPOOL_STATS=$o/stats_$v.json python3 $W --allocator=cudapool --lib=$L --variant=$v --only-workload=lm_train --steps=40 --out=$o/wl_$v.json >> $o/torch.log 2>&1; runs+=($o/wl_$v.json); el $v
  CUDAPOOL_STATS=$o/stats_${v}_noremap.json python3 $W --allocator=cudapool --lib=$L --variant=$v --remap-ratio=0 --only-workload=lm_train --steps=40 --out=$o/wl_${v}_noremap.json >> $o/torch.log 2>&1; runs+=($o/wl_${v}_noremap.json); el $v noremap
done
python3 $W --summary "${runs[@]}" --out=$o/workloads.json >> $o/torch.log 2>&1
python3 - $o <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/stats_*.json")):
    d = json.load(open(f))["devices"][0]["stats"]; h = d["heap"]
    M = 2**20
    print(os.path.basename(f), "reserved", d["reserved_bytes"] // M, "peak", d["peak_reserved_bytes"] // M, "in_use", d["in_use_bytes"] // M,
          "peak_in_use", d["peak_in_use_bytes"] // M, "slab", h["slab_bytes"] // M, "large", h["large_bytes"] // M, "free", h["free_bytes"] // M,
          "pending", h["pending_bytes"] // M, "extents", h["free_extents"], "largest", h["largest_free_bytes"] // M, "maps", h["maps"], "unmaps", h["unmaps"],
          "events", d["events_recorded"], "closed", d["epochs_closed"], "grows", d["grows"])
PY
grep -E "^\| lm_train" $o/torch.log | tail -6
tar czf $OUT/d.tgz -C $OUT d; el done
