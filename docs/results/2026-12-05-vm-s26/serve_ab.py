# Medians over serve_ab.sh's rounds: requests/s base, new, new/base, and new's failures and stream
# waits per 1000 allocations (the last round's). Reads ab_<side>_<round>.json (serve_ab.sh through
# s22's ab.sh) and serve_<side>_<round>.json (the files of this session's runs, serve.tar.xz).
import collections, glob, json, os, statistics as st, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
extra = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'serve_*_*.json')) + glob.glob(os.path.join(sys.argv[1], 'ab_*_*.json'))):
    side = os.path.basename(f).split('_')[1]
    for x in json.load(open(f))['benchmarks']:
        d[x['name']][side].append(x['items_per_second'])
        if side == 'new':
            extra[x['name']] = f"failures={x.get('failures', 0):.0f}, stream_waits_per_1k_allocs={x.get('stream_waits_per_1k_allocs', 0):.3g}"
print("| point | base req/s | new req/s | new/base | new: failures, stream waits |")
print("|---|---|---|---|---|")
for n in sorted(d):
    a, c = st.median(d[n]['base']), st.median(d[n]['new'])
    print(f"| {n.replace('/real_time', '')} | {a / 1e3:.1f}k | {c / 1e3:.1f}k | {c / a:.3f} | {extra.get(n, '')} |")
