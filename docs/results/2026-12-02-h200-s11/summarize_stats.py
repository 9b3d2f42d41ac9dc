#!/usr/bin/env python3
"""Calls d and e of s11: per process, the lm_train figure workloads.py measured (MiB over the
baseline after the workload) beside the pool's stats at exit (CUDAPOOL_STATS).
Usage: summarize_stats.py DIR..."""
import glob
import json
import sys


def used_over_baseline(o):
    if isinstance(o, dict):
        if "used_over_baseline_bytes" in o:
            return o["used_over_baseline_bytes"]
        o = list(o.values())
    if isinstance(o, list):
        for v in o:
            r = used_over_baseline(v)
            if r is not None:
                return r
    return None


M = 1 << 20
print("| process | MiB over baseline | heap mapped MiB | peak used MiB | maps | unmaps | trims | free extents | largest free MiB | grows |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    for f in sorted(glob.glob(f"{d}/stats_*.json")):
        st = json.load(open(f))["devices"][0]["stats"]
        h = st["heap"]
        used = used_over_baseline(json.load(open(f.replace("stats_", "wl_"))))
        print(f"| {f.split('/')[-2]}/{f.split('/')[-1][6:-5]} | {used // M if used else '-'} | {h['mapped_bytes'] // M} | "
              f"{h['peak_used_bytes'] // M} | {h['maps']} | {h['unmaps']} | {st['trims']} | {h['free_extents']} | "
              f"{h['largest_free_bytes'] // M} | {st['grows']} |")
