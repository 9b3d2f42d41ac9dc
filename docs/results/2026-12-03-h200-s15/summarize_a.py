#!/usr/bin/env python3
"""summarize_a.py DIR: call a's base-against-new tables (run_a.sh's JSON files in DIR).

Per benchmark: the median over rounds of each side's figure (replay and pair: ns per operation,
pair's figure per process the median of its repetitions; serve: requests per second), new over
base, and for replay the events per 1000 operations and peak reserved over peak live of each side
(deterministic given the device's completions)."""
import glob
import json
import os
import statistics
import sys


def load(d, side, part):
    """{run_name: [per-round value dict]} for bench files of one side and part."""
    out = {}
    for f in sorted(glob.glob(os.path.join(d, f"{side}_{part}_r*.json"))):
        rows = {}
        for b in json.load(open(f))["benchmarks"]:
            if b.get("run_type") == "aggregate" or b.get("error_occurred"):
                continue
            rows.setdefault(b["run_name"], []).append(b)
        for name, bs in rows.items():
            rec = {"time": statistics.median(b["real_time"] for b in bs),
                   "items": statistics.median(b.get("items_per_second", 0.0) for b in bs)}
            for k in ("events_per_op", "reserved_over_live", "failures", "stream_waits_per_1k_allocs"):
                if k in bs[0]:
                    rec[k] = statistics.median(b[k] for b in bs)
            out.setdefault(name, []).append(rec)
    return out


def med(recs, key):
    vals = [r[key] for r in recs if key in r]
    return statistics.median(vals) if vals else float("nan")


def table(d, part, key, label, extra=()):
    base, new = load(d, "bench_base", part), load(d, "bench", part)
    print(f"\n### {part}: {label}, median of rounds (rounds: base {len(next(iter(base.values()), []))}, "
          f"new {len(next(iter(new.values()), []))})\n")
    head = ["benchmark", "base", "new", "new / base"] + [f"{e} base / new" for e in extra]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in sorted(set(base) & set(new)):
        b, n = med(base[name], key), med(new[name], key)
        row = [name.replace("/real_time", ""), f"{b:,.1f}", f"{n:,.1f}", f"{n / b:.3f}" if b else "-"]
        for e in extra:
            scale = 1000.0 if e == "events_per_op" else 1.0
            row.append(f"{med(base[name], e) * scale:.4g} / {med(new[name], e) * scale:.4g}")
        print("| " + " | ".join(row) + " |")


def main():
    d = sys.argv[1]
    table(d, "replay", "time", "ns per operation (events per 1000 operations; peak reserved / peak live)",
          ("events_per_op", "reserved_over_live"))
    table(d, "pair", "time", "ns per pair")
    table(d, "serve", "items", "requests per second", ("failures", "stream_waits_per_1k_allocs"))


if __name__ == "__main__":
    main()
