#!/usr/bin/env bash
# GPU call e of 2026-12-02 s12: call c's side-by-side soaks again (the four variants at once, 64
# threads x 16 streams, --sizes=mixed --remap-ratio=1.01, 120 s), to see whether tls's unfinished run
# comes back; any process still alive 40 s after its end gets every thread's stack (gdb, else /proc)
# and is killed. Call f ran it again as CALL=f (results in f/).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
c=${CALL:-e}; o=$OUT/$c; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
declare -A pids
for v in mutex lockfree tls stream; do
  .bundle/bin/stress --variant=$v --backend=cuda --threads=64 --streams=16 --sizes=mixed --remap-ratio=1.01 \
    --duration=120 --json=$o/stress_remap_$v.json > $o/stress_remap_$v.log 2>&1 &
  pids[$v]=$!
done
sleep 160
for v in mutex lockfree tls stream; do
  p=${pids[$v]}
  if kill -0 $p 2> /dev/null; then
    el "$v still running"
    if command -v gdb > /dev/null; then timeout 40 gdb -p $p -batch -ex "thread apply all bt 14" > $o/stacks_$v.txt 2>&1
    else for t in /proc/$p/task/*; do echo "$t $(cat $t/wchan 2>/dev/null) $(cut -d' ' -f1-3 $t/syscall 2>/dev/null)"; done > $o/stacks_$v.txt; fi
    kill -9 $p
  fi
done
wait
for v in mutex lockfree tls stream; do echo "$v: $(grep -E '^  (result|violations|ops/s)' $o/stress_remap_$v.log | tr -s ' ' | tr '\n' ' ')"; done | tee -a $o/times.txt
tar czf $OUT/$c.tgz -C $OUT $c; el done
