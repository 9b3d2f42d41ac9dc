#!/usr/bin/python3
"""ab_replay.py DIR: call d's / e's replay A/B (replay_<old|new>_r<k>.json): per benchmark the
rounds' medians (ns per operation), the ratio of new's median over rounds to old's, reserved/live
and events per 1000 allocations."""
import json
import statistics
import sys

d = sys.argv[1]
res = {}
for w in ("old", "new"):
    for r in (1, 2, 3):
        for b in json.load(open(f"{d}/replay_{w}_r{r}.json"))["benchmarks"]:
            if b.get("aggregate_name") == "median":
                n = b["name"].replace("/real_time_median", "")
                res.setdefault((n, w), []).append((b["real_time"], b.get("reserved_over_live"), b.get("events_per_1k_allocs")))
for n in sorted({k[0] for k in res}):
    o, nw = res[(n, "old")], res[(n, "new")]
    print(f"{n:32s} old {[round(x[0]) for x in o]} new {[round(x[0]) for x in nw]} "
          f"new/old {statistics.median(x[0] for x in nw) / statistics.median(x[0] for x in o):.3f} "
          f"reserved/live {o[0][1]:.3f} -> {nw[0][1]:.3f} events/1k allocs {o[0][2]:.1f} -> {nw[0][2]:.1f}")
