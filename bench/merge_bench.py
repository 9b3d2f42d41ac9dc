#!/usr/bin/python3
"""merge_bench.py OUT IN...: one Google Benchmark JSON from several runs of the same binary (the
context of the first, the benchmarks of all, in order), for docs/make_results.py: gpu-suite's
pagebench part (its two filters), and the run scripts of docs/results since s9."""
import json
import sys

out, ins = sys.argv[1], sys.argv[2:]
merged = None
for path in ins:
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        print(f"merge_bench: {path}: {e}", file=sys.stderr)
        continue
    if merged is None:
        merged = d
    else:
        merged["benchmarks"] += d["benchmarks"]
if merged is None:
    sys.exit("merge_bench: no input")
with open(out, "w") as f:
    json.dump(merged, f, indent=1)
print(f"{out}: {len(merged['benchmarks'])} benchmarks from {len(ins)} files")
