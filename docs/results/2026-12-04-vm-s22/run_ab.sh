#!/usr/bin/env bash
# The H200 A/B planned in s22 (no GPU was lent then): HEAD's bench (.bundle/bin/bench) against the
# bench of 71d0ecb (.bundle/bin/bench_base, prepare_ab.sh), each in its own processes, alternating
# (round 2 new first): the replay of every trace (stream-ordered, elided and immediate; the four
# variants) with limit/epoch_event at min_time 0.3, 3 rounds; pair/<variant>/4096 at 1 and 16
# threads, 0.2 s x 3 repetitions, 3 rounds. About 6 minutes.
# On the device, from the repository root with .bundle carried: bash docs/results/2026-12-04-vm-s22/run_ab.sh
# ROUNDS=n: n rounds instead of 3. BACKEND=sim runs the same on the CPU (a check of the script, not a measurement).
# Then: python3 docs/results/2026-12-04-vm-s22/ab.py DIR reads ab_<base|new>_<round>.json.
set -u
o=${OUT:?}/ab; mkdir -p "$o"; start=$(date +%s)
for b in bench bench_base; do [ -f .bundle/bin/$b.gz ] && gunzip -f .bundle/bin/$b.gz; chmod +x .bundle/bin/$b; done
export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s) - start ))s" | tee -a "$o/times.txt"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$o/gpu.txt" 2>&1; cat /proc/loadavg >> "$o/gpu.txt"
F='^(replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+(/elided|/immediate)?/real_time|limit/epoch_event/real_time|pair/(tls|lockfree|stream|mutex)/4096/real_time/threads:(1|16))$'
for r in $(seq 1 "${ROUNDS:-3}"); do
  if [ $r = 2 ]; then order="bench bench_base"; else order="bench_base bench"; fi
  for b in $order; do
    side=new; [ $b = bench_base ] && side=base
    timeout 150 .bundle/bin/$b --backend=${BACKEND:-cuda} --traces=.bundle/traces --benchmark_filter="$F" --benchmark_min_time=0.3 \
      --benchmark_format=json > "$o/ab_${side}_$r.json" 2> "$o/ab_${side}_$r.err"
    el "$side r$r rc=$?"
    tar czf "$OUT/ab.tgz" -C "$OUT" ab  # after each process: what ran comes back if the call is cut short
  done
done
tar czf "$OUT/ab.tgz" -C "$OUT" ab; el done
