#!/usr/bin/python3
"""s43's serve ran in two calls of one held machine: mixed (4 rounds, call b), then small (2 rounds,
call e). One serve.json (and serve.log) for final/: the two files' benchmarks side by side (their
names differ by kind; each row keeps its own rounds), the first file's context.
    merge_serve.py OUT_DIR MIXED_ARCHIVE SMALL_ARCHIVE"""
import json
import os
import sys
import tarfile
import tempfile

out, *archives = sys.argv[1:]
merged, logs = None, []
with tempfile.TemporaryDirectory() as tmp:
    for i, a in enumerate(archives):
        with tarfile.open(a) as t:
            t.extractall(os.path.join(tmp, str(i)))
        d = json.load(open(os.path.join(tmp, str(i), "serve", "serve.json")))
        if merged is None:
            merged = d
        else:
            names = {b["name"] for b in merged["benchmarks"]}
            clash = names & {b["name"] for b in d["benchmarks"]}
            if clash:
                sys.exit(f"merge_serve: {a} repeats {sorted(clash)[:3]}")
            merged["benchmarks"] += d["benchmarks"]
        logs.append(open(os.path.join(tmp, str(i), "serve", "serve.log")).read())
json.dump(merged, open(os.path.join(out, "serve.json"), "w"), indent=1)
open(os.path.join(out, "serve.log"), "w").write("\n".join(logs))
