#!/usr/bin/env bash
# GPU call d of 2026-12-02 s12. 1. Call c's tls soak with --remap-ratio=1.01 never finished (killed
# at 200 s of a 120 s run; the other variants passed): the same for 30 s with progress lines, the new
# stress (151d317 + d0daa73) and `stress_old` (a4e86b7, remap without the wait, with d0daa73's
# --remap-ratio), each killed 60 s after its end with every thread's stack (gdb, else /proc) if it
# hangs. 2. gpu-suite torch (TORCH_ROUNDS=2, as s10's run_c.sh) with the plug-in's new default
# (no remap).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
B=.bundle/bin
for s in stress stress_old; do
  $B/$s --variant=tls --backend=cuda --threads=64 --streams=16 --sizes=mixed --remap-ratio=1.01 --duration=30 \
    --json=$o/${s}_tls.json > $o/${s}_tls.log 2>&1 &
  pid=$!
  for i in $(seq 1 90); do kill -0 $pid 2> /dev/null || break; sleep 1; done
  if kill -0 $pid 2> /dev/null; then
    el "$s hung"
    if command -v gdb > /dev/null; then
      timeout 60 gdb -p $pid -batch -ex "thread apply all bt 12" > $o/${s}_stacks.txt 2>&1
    else
      for t in /proc/$pid/task/*; do echo "$t $(cat $t/wchan 2>/dev/null) $(cat $t/syscall 2>/dev/null | cut -d' ' -f1-3)"; done > $o/${s}_stacks.txt
    fi
    kill -9 $pid
  fi
  wait $pid; el "$s rc=$?"
done
TORCH_ROUNDS=2 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 330 bash .bundle/gpu-suite $o torch > /dev/null 2>&1; el torch rc=$?
grep -E "identical|differ|Error" $o/torch.log | head -5
tar czf $OUT/d.tgz -C $OUT d; el done
