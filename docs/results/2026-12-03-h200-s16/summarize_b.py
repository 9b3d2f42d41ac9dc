#!/usr/bin/python3
"""summarize_b.py B_DIR: call b's pinned/: limit/stack per CPU, then the stream-ordered replays
pinned to the fastest and the slowest CPU by it: ns per operation (median of 3), x cudaMallocAsync
on the same CPU, and whether <= 80 ns."""
import glob, json, re, sys

d = sys.argv[1] + "/pinned"
stack = {}
for f in glob.glob(d + "/stack_cpu*.json"):
    c = int(re.search(r"cpu(\d+)", f).group(1))
    for x in json.load(open(f))["benchmarks"]:
        if x.get("aggregate_name") == "median":
            stack[c] = x["real_time"]
print("limit/stack, ns per push+pop, median of 3 per CPU: " + ", ".join(f"cpu{c} {stack[c]:.2f}" for c in sorted(stack)))
print(open(d + "/cpus.txt").read().strip())
for f in sorted(glob.glob(d + "/replay_cpu*.json")):
    c = int(re.search(r"cpu(\d+)", f).group(1))
    ns = {}
    for x in json.load(open(f))["benchmarks"]:
        if x.get("aggregate_name") != "median":
            continue
        n = x["name"].replace("/real_time", "").split("_median")[0]
        ns[n] = x["real_time"]
    print(f"\n### pinned to cpu {c} (limit/stack in this process: {ns.get('limit/stack/threads:1', float('nan')):.2f} ns)\n")
    traces = sorted({n.split("/")[2] for n in ns if n.startswith("replay/")})
    allocs = ["mutex", "lockfree", "tls", "stream"]
    print("| trace | cudaMallocAsync ns | " + " | ".join(f"{a} ns (x cMA)" for a in allocs) + " |")
    print("|---|---|" + "---|" * len(allocs))
    for t in traces:
        cma = ns.get(f"replay/cudaMallocAsync/{t}")
        cells = []
        for a in allocs:
            v = ns.get(f"replay/{a}/{t}")
            cells.append("-" if v is None else f"{v:.1f}{'' if v <= 80 else '*'} ({cma / v:.1f})" if cma else f"{v:.1f}")
        print(f"| {t} | {cma:.0f} | " + " | ".join(cells) + " |")
    print("\n(* above 80 ns)")
