#!/usr/bin/python3
"""merge_rounds.py OUT IN...: one Google Benchmark JSON from rounds of fresh processes.

Each IN is one process's --benchmark_out (aggregates only), named <anything>_r<round>.json; the
same benchmark may appear in several rounds. For each benchmark OUT holds:
  - a `median` aggregate: every numeric field the median over the rounds of the rounds' medians;
  - a `cv` aggregate: each metric's standard deviation over its mean across those round medians;
  - `round_medians`: {round: items_per_second} on the median row, so that a reader can form a
    ratio within each round (docs/make_results.py: serve's `x best of run`) before taking the
    median over the rounds.
gpu-suite's serve part writes the IN files (each allocator in its own processes, the order rotating
round by round): a point measured in one process moves with that process's host state, and one
process per allocator per round keeps a process's state out of the comparison of allocators.
"""
import json
import re
import statistics
import sys


def read_json(path, who):
    """The JSON at path, or None after a line on stderr: a process that wrote nothing is skipped
    (merge_bench.py and docs/make_results.py too)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{who}: {path}: {e}", file=sys.stderr)
        return None


def main(out, ins):
    context = None
    # run_name -> round -> the round's median row
    rows = {}
    order = []
    for path in ins:
        m = re.search(r"_r(\d+)\.json$", path)
        if not m:
            sys.exit(f"merge_rounds: {path}: the name does not end in _r<round>.json")
        rnd = int(m.group(1))
        d = read_json(path, "merge_rounds")
        if d is None:
            continue
        if context is None:
            context = d.get("context", {})
        for b in d.get("benchmarks", []):
            if b.get("error_occurred"):
                # A point that failed in any round is its error row: never a median of the rest.
                name = b.get("run_name") or b["name"]
                if name not in rows:
                    order.append(name)
                if "error" not in rows.get(name, {}):
                    rows[name] = {"error": b}
                continue
            if b.get("aggregate_name") != "median":
                continue
            name = b["run_name"]
            if name not in rows:
                rows[name] = {}
                order.append(name)
            if "error" in rows[name]:
                continue
            rows[name][rnd] = b
    if context is None:
        sys.exit("merge_rounds: no input")
    if not rows:
        # Google Benchmark writes aggregates only with --benchmark_repetitions >= 2: a part run with
        # one repetition per process would merge into nothing.
        sys.exit("merge_rounds: no median row in the inputs: each process needs --benchmark_repetitions >= 2 "
                 "(gpu-suite: SERVE_REPS / REPLAY_REPS >= 2)")
    benchmarks = []
    for name in order:
        by_round = rows[name]
        if "error" in by_round:
            benchmarks.append(by_round["error"])
            continue
        rounds = sorted(by_round)
        first = by_round[rounds[0]]
        metrics = sorted({k for b in by_round.values() for k, v in b.items()
                          if isinstance(v, (int, float)) and not isinstance(v, bool)})
        med = dict(first)
        cv = dict(first)
        med["name"] = name + "_median"
        cv["name"] = name + "_cv"
        cv["aggregate_name"] = "cv"
        cv["aggregate_unit"] = "percentage"
        for k in metrics:
            vals = [by_round[r][k] for r in rounds if k in by_round[r]]
            med[k] = statistics.median(vals)
            mean = statistics.fmean(vals)
            cv[k] = statistics.pstdev(vals) / mean if len(vals) > 1 and mean else 0.0
        med["rounds"] = cv["rounds"] = len(rounds)
        med["round_medians"] = {str(r): by_round[r].get("items_per_second") for r in rounds}
        benchmarks += [med, cv]
    with open(out, "w") as f:
        json.dump({"context": context, "benchmarks": benchmarks}, f, indent=1)
    print(f"{out}: {len(order)} benchmarks from {len(ins)} files")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: merge_rounds.py OUT IN...")
    main(sys.argv[1], sys.argv[2:])
