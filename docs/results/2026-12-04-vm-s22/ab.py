# Medians over the rounds of ab.sh's files in DIR: ns per operation base, new, new/base, and the
# peak reserved MiB (the last round's) of each side.
import collections, glob, json, os, statistics as st, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
mem = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'ab_*_*.json'))):
    side = os.path.basename(f).split('_')[1]
    for x in json.load(open(f))['benchmarks']:
        d[x['name']][side].append(x['real_time'])
        if 'peak_reserved_MiB' in x:
            mem[x['name']][side] = x['peak_reserved_MiB']
print(f"| benchmark | base ns | new ns | new/base | reserved MiB base / new |\n|---|---|---|---|---|")
for n in sorted(d):
    a, c = st.median(d[n]['base']), st.median(d[n]['new'])
    print(f"| {n} | {a:.1f} | {c:.1f} | {c / a:.3f} | {mem[n].get('base', '')} / {mem[n].get('new', '')} |")
