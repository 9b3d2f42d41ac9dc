#!/usr/bin/python3
"""Calls d and e of s19 as one run of 10 rounds: serve/mixed at 16 and 64 threads, each allocator in
its own process per round (d/serve_rounds, e/serve_rounds: each file one process's median of 3
repetitions). Per thread count and allocator: the median over the rounds of the round's ratio to
the best pool of that round, its range, how many rounds it was the best, the median requests/s and
their cv over the rounds, and the device calls per 1000 allocations; then each allocator's median
requests/s over the best pool's median.
Run from the repository root: /usr/bin/python3 docs/results/2026-12-04-h200-s19/summarize_de.py"""
import collections
import glob
import json
import os
import re
import statistics as st

here = os.path.dirname(os.path.abspath(__file__))
pools = ["mutex", "lockfree", "tls", "stream"]
ips = collections.defaultdict(dict)  # (call, round) -> (alloc, threads) -> requests/s
calls = collections.defaultdict(lambda: collections.defaultdict(list))
for call in "de":
    for f in sorted(glob.glob(f"{here}/{call}/serve_rounds/*_r*.json")):
        a, r = re.match(r".*/(.+)_r(\d+)\.json$", f).groups()
        for b in json.load(open(f))["benchmarks"]:
            if b.get("aggregate_name") != "median":
                continue
            m = re.match(r"serve/(.+)/mixed/real_time/threads:(\d+)$", b["run_name"])
            key = (m.group(1), int(m.group(2)))
            ips[(call, int(r))][key] = b["items_per_second"]
            for k in ("device_stream_queries_per_1k_allocs", "device_records_per_1k_allocs",
                      "stream_waits_per_1k_allocs", "failures", "reserved_MiB"):
                if k in b:
                    calls[key][k].append(b[k])
print(f"serve/mixed, {len(ips)} rounds (calls d and e), each allocator in its own process per round")
for t in (16, 64):
    print(f"\n{t} threads: allocator, x best pool of the round (median [min-max]), rounds best, "
          "k requests/s (median, cv over rounds), per 1k allocs: stream queries, events; stream waits; failures; reserved MiB")
    for a in pools + ["none"]:
        rs = [v[(a, t)] / max(v[(p, t)] for p in pools) for v in ips.values()]
        xs = [v[(a, t)] for v in ips.values()]
        c = calls[(a, t)]
        med = lambda k: f"{st.median(c[k]):.1f}" if c.get(k) else "-"
        print(f"  {a:9s} {st.median(rs):.3f} [{min(rs):.3f}-{max(rs):.3f}]  {sum(x == 1.0 for x in rs):2d}  "
              f"{st.median(xs) / 1e3:5.1f}k cv {100 * st.pstdev(xs) / st.mean(xs):4.1f}%  "
              f"{med('device_stream_queries_per_1k_allocs')} {med('device_records_per_1k_allocs')}; "
              f"{med('stream_waits_per_1k_allocs')}; {max(c['failures']) if c.get('failures') else '-'}; {med('reserved_MiB')}")
    meds = {a: st.median(v[(a, t)] for v in ips.values()) for a in pools + ["none"]}
    best = max(meds[p] for p in pools)
    print("  median requests/s over the best pool's median: " + ", ".join(f"{a} {meds[a] / best:.3f}" for a in meds))
