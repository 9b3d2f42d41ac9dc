# Medians over the rounds of ab.sh's files in DIR, per benchmark: ns per operation base, new,
# new/base; events recorded per 1000 operations and peak reserved / peak live (the last round's;
# both the same in every round but mlp_4stream's) base -> new.
import collections, glob, json, os, statistics as st, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
ctr = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'ab_*_*.json'))):
    side = os.path.basename(f).split('_')[1]
    for x in json.load(open(f))['benchmarks']:
        if x.get('aggregate_name') not in (None, 'median'):  # run_ab_gpu.sh's repetitions: their medians
            continue
        d[x['name']][side].append(x['real_time'])
        ctr[x['name']][side] = (x.get('events_per_op'), x.get('reserved_over_live'))
print("| benchmark | base ns | new ns | new/base | events per 1000 ops base -> new | reserved/live base -> new |")
print("|---|---|---|---|---|---|")
def f3(v, k=1):
    return '-' if v is None else f"{v * k:.3g}"
for n in sorted(d):
    a, c = st.median(d[n]['base']), st.median(d[n]['new'])
    (eb, rb), (en, rn) = ctr[n].get('base', (None, None)), ctr[n].get('new', (None, None))
    print(f"| {n.replace('/real_time', '').replace('_median', '')} | {a:.1f} | {c:.1f} | {c / a:.3f} | {f3(eb, 1000)} -> {f3(en, 1000)} | {f3(rb)} -> {f3(rn)} |")
