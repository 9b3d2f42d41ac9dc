#!/usr/bin/env bash
# GPU call M: what raised the mixed-size soak's reserved peak (2.4-5.6 GiB in the s2 soaks, 10.7-19.4
# GiB in call L): 2-minute soaks side by side, mutex and stream, slabs doubling from 64 KiB
# (default) against every slab 2 MiB (--first-slab-bytes=2097152).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/m; mkdir -p $o; export LD_LIBRARY_PATH=$PWD/.bundle/lib; pids=()
for v in mutex stream; do for f in 0 2097152; do
  .bundle/bin/stress --backend=cuda --variant=$v --threads=64 --streams=16 --duration=120 --cross-stream=0.3 --sizes=mixed \
    --first-slab-bytes=$f --quiet --json=$o/stress_${v}_$f.json > $o/soak_${v}_$f.txt 2>&1 & pids+=($!)
done; done
for p in "${pids[@]}"; do wait $p; echo "exit=$?"; done
for f in $o/soak_*.txt; do echo "== $f"; grep -E "peak live|reserved peak|violations|result" $f; done
tar czf $OUT/m.tgz -C $OUT m
