# Medians over run_ab_gpu.sh's rounds (each round's median of the repetitions), per benchmark: ns
# per operation of each bundle, each over bundle 0's, and x cudaMallocAsync (its ns over the pool's,
# both from the same bundle's processes) for the last bundle.
import collections, glob, json, os, re, statistics as st, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'ab_b*_*.json'))):
    side = int(re.match(r'ab_b(\d+)_', os.path.basename(f)).group(1))
    for x in json.load(open(f))['benchmarks']:
        if x.get('aggregate_name') not in (None, 'median'):
            continue
        d[x['run_name'].replace('/real_time', '')][side].append(x['real_time'])
sides = sorted({s for v in d.values() for s in v})
last = sides[-1]
print("| benchmark | " + " | ".join(f"b{s} ns" for s in sides) + " | " +
      " | ".join(f"b{s}/b0" for s in sides[1:]) + f" | x cudaMallocAsync (b{last}) |")
print("|---|" + "---|" * (2 * len(sides)))
for n in sorted(d):
    m = {s: st.median(d[n][s]) for s in sides if d[n][s]}
    if not m:
        continue
    trace = n.split('/')[2]
    cma = d.get(f"replay/cudaMallocAsync/{trace}", {}).get(last)
    x = f"{st.median(cma) / m[last]:.1f}" if cma and last in m and not n.startswith('replay/cudaMallocAsync') and not n.endswith('/elided') else '-'
    print(f"| {n} | " + " | ".join(f"{m[s]:.1f}" if s in m else '-' for s in sides) + " | " +
          " | ".join(f"{m[s] / m[0]:.3f}" if s in m and 0 in m else '-' for s in sides[1:]) + f" | {x} |")
