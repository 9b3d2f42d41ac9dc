#!/usr/bin/env bash
# GPU call T (issue 15 item 7, issue 16's 2% bound): where the single-thread spread of pair/tls
# comes from. The same binary in fresh processes: as is, pinned to one core, and with address
# randomisation off while the environment's size (and so the stack's placement) varies. limit/stack
# (no pool, the same loop shape) is the host's own floor in the same processes.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/t; mkdir -p $o; export LD_LIBRARY_PATH=$PWD/.bundle/lib
bin=${BIN:-.bundle/bin/bench}
{ lscpu; grep -m1 MHz /proc/cpuinfo; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1; which perf setarch taskset numactl; nproc; } > $o/host.txt 2>&1
f='^(pair/(tls|mutex)/4096/real_time/threads:1|limit/stack/real_time/threads:1)$'
one() {  # name, then the command prefix
  local name=$1; shift
  "$@" $bin --backend=cuda --traces= --benchmark_filter="$f" --benchmark_repetitions=5 --benchmark_min_time=0.05 \
    --benchmark_report_aggregates_only=true --benchmark_out=$o/$name.json --benchmark_out_format=json > /dev/null 2>$o/$name.err
}
for i in 1 2 3 4 5 6 7 8; do one free_$i; done
for i in 1 2 3 4 5 6 7 8; do one pin_$i taskset -c 3; done
setarch -R true && for pad in 0 256 512 768 1024 1280 1536 1792 2048 2304 2560 2816 3072 3328 3584 3840; do
  PAD=$(head -c $pad /dev/zero | tr '\0' x) one norand_pad${pad}_a env PAD_ENV=$PAD taskset -c 3 setarch -R
  [ $((pad % 1024)) = 0 ] && PAD=$(head -c $pad /dev/zero | tr '\0' x) one norand_pad${pad}_b env PAD_ENV=$PAD taskset -c 3 setarch -R
done
python3 - $o > $o/summary.txt <<'PY'
import json, sys, glob, os
o = sys.argv[1]
for f in sorted(glob.glob(o + '/*.json'), key=lambda f: (os.path.basename(f).split('_')[0], len(f), f)):
  try: d = json.load(open(f))['benchmarks']
  except Exception as e: print(os.path.basename(f), 'ERR', e); continue
  m = {x['run_name']: x['real_time'] for x in d if x.get('aggregate_name') == 'median'}
  s = {x['run_name']: x['real_time'] for x in d if x.get('aggregate_name') == 'stddev'}
  print(f"{os.path.basename(f)[:-5]:24s}", '  '.join(f"{k.split('/')[1] if k.startswith('pair') else 'stack'} {m[k]:6.2f}±{s.get(k,0):4.2f}" for k in sorted(m)))
PY
cat $o/summary.txt; tar czf $OUT/t.tgz -C $OUT t
