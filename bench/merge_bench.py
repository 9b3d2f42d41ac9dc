#!/usr/bin/python3
"""merge_bench.py OUT IN...: one Google Benchmark JSON from several runs of the same binary (the
context of the first, the benchmarks of all, in order), for docs/make_results.py: gpu-suite's
pagebench part (its two filters), and the run scripts of docs/results since s9."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # beside it, also when run through runpy
from merge_rounds import read_json  # noqa: E402

out, ins = sys.argv[1], sys.argv[2:]
merged = None
for path in ins:
    d = read_json(path, "merge_bench")
    if d is None:
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
