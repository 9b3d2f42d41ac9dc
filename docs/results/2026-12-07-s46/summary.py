#!/usr/bin/env python3
"""s46's tables from gpu-suite's merged JSON (merge_rounds.py: medians over rounds, each round's
median kept as round_medians, items per second).
  summary.py replay REPLAY_JSON     per trace: ns per operation (each round's and their median),
                                    x cudaMallocAsync within each round, reserved/live
  summary.py serve SERVE_JSON       per kind and threads: requests/s, against the better peer
                                    (cudaMallocAsync, cub) and the best of the run, failures
"""
import json
import sys


def rows(path):
    return [b for b in json.load(open(path))["benchmarks"] if b.get("aggregate_name") == "median"]


def replay(path):
    by = {}
    for b in rows(path):
        _, alloc, trace, _ = b["run_name"].split("/")
        by.setdefault(trace, {})[alloc] = b
    for trace, allocs in sorted(by.items()):
        cma = allocs.get("cudaMallocAsync")
        live = next(iter(allocs.values()))["peak_live_MiB"]
        print(f"\n{trace} (live peak {live:.0f} MiB; cudaMallocAsync "
              f"{1e9 / cma['items_per_second']:.0f} ns)" if cma else f"\n{trace}")
        print("| allocator | ns/op (median) | ns/op by round | x cudaMallocAsync by round | reserved/live |")
        print("|---|---|---|---|---|")
        for alloc, b in sorted(allocs.items()):
            rm = b.get("round_medians", {})
            ns = [1e9 / rm[k] for k in sorted(rm)]
            x = [rm[k] / cma["round_medians"][k] for k in sorted(rm) if cma and k in cma.get("round_medians", {})]
            print(f"| {alloc} | {1e9 / b['items_per_second']:.1f} | {' / '.join(f'{v:.1f}' for v in ns)} | "
                  f"{' / '.join(f'{v:.1f}' for v in x)} | {b.get('reserved_over_live', float('nan')):.3f} |")


def serve(path):
    by = {}
    for b in rows(path):
        _, alloc, kind, _, threads = b["run_name"].split("/")
        by.setdefault((kind, threads), {})[alloc] = b
    for (kind, threads), allocs in sorted(by.items()):
        rps = {a: b["items_per_second"] for a, b in allocs.items()}
        peer = max(rps.get("cudaMallocAsync", 0), rps.get("cub", 0))
        best = max(v for a, v in rps.items() if a != "none")
        print(f"\nserve/{kind} {threads} (better peer {peer:.0f}/s, best {best:.0f}/s)")
        print("| allocator | requests/s | x better peer | x best of the run | failures | stream waits/1k allocs |")
        print("|---|---|---|---|---|---|")
        for a, b in sorted(allocs.items()):
            print(f"| {a} | {rps[a]:.0f} | {rps[a] / peer:.2f} | {rps[a] / best:.3f} | {b.get('failures', 0):.0f} | "
                  f"{b.get('stream_waits_per_1k_allocs', 0):.2f} |")


if __name__ == "__main__":
    {"replay": replay, "serve": serve}[sys.argv[1]](sys.argv[2])
