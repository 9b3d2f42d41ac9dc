#!/usr/bin/env python3
"""Call f (run_f.sh): per benchmark and mode (aslr / noaslr), each process's median of its 10
repetitions, the spread of those medians (max/min), and the spread of the repetitions inside a
process (median over processes of max/min of its repetitions)."""
import glob, json, os, statistics, sys
d = sys.argv[1] if len(sys.argv) > 1 else 'f'
per = {}
for f in sorted(glob.glob(os.path.join(d, '*_*.json'))):
    mode = os.path.basename(f).split('_')[0]
    reps = {}
    for b in json.load(open(f))['benchmarks']:
        if b.get('run_type') == 'iteration':
            reps.setdefault(b['run_name'], []).append(b['real_time'])
    for name, v in reps.items():
        per.setdefault((name, mode), []).append(v)
print('benchmark, mode: processes; medians min-max ns (max/min); inside a process: median of max/min over its repetitions')
for (name, mode), procs in sorted(per.items()):
    meds = [statistics.median(v) for v in procs]
    inside = statistics.median(max(v) / min(v) for v in procs)
    print(f'{name:38s} {mode:7s} n={len(procs):2d}  {min(meds):6.2f}-{max(meds):6.2f} ({max(meds)/min(meds):.2f}x)  inside {inside:.2f}x'
          f'  medians: {" ".join(f"{m:.1f}" for m in meds)}')
