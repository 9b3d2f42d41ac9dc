#!/usr/bin/env python3
"""Call a's serve/mixed A/B (run_a.sh): per configuration and thread count, the median over the
rounds of requests/s (each process's median of 3 repetitions), the ratio of medians to the best
configuration, the median per-round ratio to the round's best, and the pool's counters."""
import glob, json, os, re, statistics, sys
d = sys.argv[1] if len(sys.argv) > 1 else 'a'
rows = {}
for f in sorted(glob.glob(os.path.join(d, 'ab', '*_r*.json'))):
    tag, alloc, r = re.match(r'(old|new)_(.+)_r(\d+)\.json', os.path.basename(f)).groups()
    for b in json.load(open(f))['benchmarks']:
        if b.get('aggregate_name') != 'median':
            continue
        t = int(re.search(r'threads:(\d+)', b['name']).group(1))
        rows.setdefault(t, {}).setdefault(f'{tag} {alloc}', {})[int(r)] = b
for t in sorted(rows):
    cfgs = rows[t]
    med = {c: statistics.median(v['items_per_second'] for v in runs.values()) for c, runs in cfgs.items()}
    best = max(med.values())
    rounds = sorted({r for runs in cfgs.values() for r in runs})
    per_round = {c: [] for c in cfgs}
    for r in rounds:
        here = {c: cfgs[c][r]['items_per_second'] for c in cfgs if r in cfgs[c]}
        top = max(here.values())
        for c, v in here.items():
            per_round[c].append(v / top)
    print(f'{t} threads: config, k requests/s median (cv over rounds), x best median, median per-round x round best,'
          ' per 1k allocs: stream queries, events, grows; reserved MiB; failures')
    for c in sorted(cfgs):
        runs = cfgs[c].values()
        ips = [v['items_per_second'] for v in runs]
        cv = statistics.pstdev(ips) / statistics.mean(ips) * 100
        def m(k):
            vals = [v[k] for v in runs if k in v]
            return f'{statistics.median(vals):.1f}' if vals else '-'
        print(f'  {c:20s} {med[c]/1e3:6.1f}k cv {cv:4.1f}%  {med[c]/best:.3f}  {statistics.median(per_round[c]):.3f}  '
              f'{m("device_stream_queries_per_1k_allocs")} {m("events_per_1k_allocs")} {m("grows_per_1k_allocs")}; '
              f'{m("reserved_MiB")}; {m("failures")}  ({len(ips)} rounds)')
