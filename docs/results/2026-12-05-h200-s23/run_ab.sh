#!/usr/bin/env bash
# s23's H200 A/B (prepare_ab.sh made the bundle): HEAD's bench against BASE_REV's, each in its own
# processes, alternating (even rounds new first): the replay of every trace (stream-ordered, elided
# and immediate; the four variants) with limit/epoch_event and limit/stack at min_time 0.3; pair/<variant>/4096
# at 1 and 16 threads. ROUNDS rounds (default 2). The archive is rewritten after each process, so
# a call cut short still brings back what ran.
# On the device, from the repository root with .bundle carried:
#   OUT=... bash docs/results/2026-12-05-h200-s23/run_ab.sh      (BACKEND=sim: the same on the CPU)
# Then: python3 docs/results/2026-12-04-vm-s22/ab.py DIR reads ab_<base|new>_<round>.json.
set -u
o=${OUT:?}/ab; mkdir -p "$o"; start=$(date +%s)
b=.bundle
[ -d $b/bin ] || tar -xJf $b/bin.tar.xz -C $b 2>/dev/null || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' $b/bin.tar.xz $b
[ -f $b/bin/bench_base ] || { xz -dc $b/bench_base.xz 2>/dev/null > $b/bin/bench_base && [ -s $b/bin/bench_base ]; } ||
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' $b/bench_base.xz $b/bin/bench_base
chmod +x $b/bin/bench $b/bin/bench_base
export LD_LIBRARY_PATH=$PWD/$b/lib
el() { echo "$* $(( $(date +%s) - start ))s" | tee -a "$o/times.txt"; }
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv; cat /proc/loadavg; lscpu | grep -E 'Model name|MHz'; } > "$o/host.txt" 2>&1
F='^(replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+(/elided|/immediate)?/real_time|limit/epoch_event/real_time|limit/stack/real_time/threads:1|pair/(tls|lockfree|stream|mutex)/4096/real_time/threads:(1|16))$'
for r in $(seq 1 "${ROUNDS:-2}"); do
  if [ $((r % 2)) = 0 ]; then order="bench bench_base"; else order="bench_base bench"; fi
  for x in $order; do
    side=new; [ $x = bench_base ] && side=base
    timeout 150 $b/bin/$x --backend=${BACKEND:-cuda} --traces=$b/traces --benchmark_filter="$F" --benchmark_min_time=0.3 \
      --benchmark_format=json > "$o/ab_${side}_$r.json" 2> "$o/ab_${side}_$r.err"
    el "$side r$r rc=$?"
    tar czf "$OUT/ab.tgz" -C "$OUT" ab
  done
done
el done
