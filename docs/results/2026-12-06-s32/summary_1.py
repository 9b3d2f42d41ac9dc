#!/usr/bin/python3
"""summary_1.py OUT: run_1.sh's replay table. Per trace and allocator (median over the rounds):
ns per operation stream-ordered and /elided, their difference, events (records) and queries per
1000 operations, what the difference comes to per event, the time inside record() and query() per
call where the pool makes them, reserved/live, and x cudaMallocAsync."""
import json
import sys

out = sys.argv[1]
d = json.load(open(f"{out}/replay/replay.json"))
med = {b["run_name"]: b for b in d["benchmarks"] if b.get("aggregate_name") == "median"}


def row(alloc, trace, mode=""):
    return med.get(f"replay/{alloc}/{trace}{mode}/real_time")


for trace in ("lm_infer_varseq", "transformer_lm_train", "mlp_4stream"):
    base = row("cudaMallocAsync", trace)
    print(f"\n{trace}: cudaMallocAsync {base['real_time']:.0f} ns" if base else f"\n{trace}: no cudaMallocAsync")
    print("allocator | ordered | elided | diff | records/1k | queries/1k | diff per record (ns) | record ns | query ns | reserved/live | x cMA")
    for a in ("lockfree", "lockfree-batch256", "mutex", "tls", "stream"):
        o, e = row(a, trace), row(a, trace, "/elided")
        if not o:
            continue
        rec = o.get("device_records_per_op", 0) * 1000
        qry = o.get("device_queries_per_op", 0) * 1000
        diff = o["real_time"] - e["real_time"] if e else float("nan")
        per = diff / rec * 1000 if rec else float("nan")
        x = base["real_time"] / o["real_time"] if base else float("nan")
        print(f"{a} | {o['real_time']:.1f} | {e['real_time'] if e else float('nan'):.1f} | {diff:.1f} | {rec:.2f} | {qry:.2f} | "
              f"{per:.0f} | {o.get('device_record_ns_per_call', float('nan')):.0f} | {o.get('device_query_ns_per_call', float('nan')):.0f} | "
              f"{o.get('reserved_over_live', float('nan')):.3f} | {x:.2f}")
