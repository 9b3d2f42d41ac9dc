#!/usr/bin/env python3
"""CTest `workloads_summary`: workloads.py --summary (no PyTorch needed) on made-up runs of two
rounds. The memory target compares the process in all (mem_get_info, context included) with
PyTorch's expandable segments, whose context is larger: here expandable segments' baseline is 8 MiB
above the pool's, so over the baseline the pool looks 1.01x while the process holds exactly as
much. The rows must carry the process totals per round and their ratio, and the table must show
them.

  python3 workloads_summary_test.py [WORKLOADS_PY]
"""
import importlib.util
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20


def load(path):
    spec = importlib.util.spec_from_file_location("workloads", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_json(allocator, baseline_mib, used_mib, step_ms, variant=None):
    """One process of workloads.py: lm_train only, used_mib the process's total after it."""
    return {
        "allocator": allocator, "variant": variant, "remap_ratio": None, "max_class_bytes": None,
        "device": "test", "baseline_used_bytes": baseline_mib * MiB, "config": {"steps": 2, "warmup": 0},
        "workloads": {"lm_train": {
            "values": [2.0, 1.0], "median_step_ms": step_ms, "p90_step_ms": step_ms,
            "used_bytes": used_mib * MiB, "used_over_baseline_bytes": (used_mib - baseline_mib) * MiB,
            "peak_used_over_baseline_bytes": (used_mib - baseline_mib) * MiB}},
    }


class Summary(unittest.TestCase):
    def test_process_totals_per_round_and_against_expandable(self):
        w = load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "workloads.py"))
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            rounds = [  # (allocator, variant, baseline MiB, process MiB in round 1, in round 2)
                ("torch", None, 595, 3603, 3603),
                ("torch-expandable", None, 603, 3443, 3443),
                ("cudapool", "mutex", 595, 3443, 3463),
            ]
            for r in (0, 1):
                for alloc, variant, base, *used in rounds:
                    path = os.path.join(tmp, f"{alloc}_{variant}_r{r}.json")
                    with open(path, "w") as f:
                        json.dump(run_json(alloc, base, used[r], 30.0, variant), f)
                    files.append(path)
            out = os.path.join(tmp, "all.json")
            args = w.parse_args(["--summary", *files, f"--out={out}"])
            self.assertEqual(w.summary(args), 0)
            with open(out) as f:
                doc = json.load(f)
        rows = {r["allocator"]: r for r in doc["rows"]}
        pool = rows["cudapool-mutex"]
        self.assertEqual(pool["rounds"], 2)
        self.assertEqual(pool["used_mib_by_round"], [3443, 3463])
        self.assertEqual(pool["used_mib"], 3453)
        # Round 1: the same process total as expandable segments (1.0); round 2: 20 MiB more.
        self.assertAlmostEqual(pool["process_vs_torch_expandable"], (1.0 + 3463 / 3443) / 2)
        # Over the baseline the same round 1 reads 2848 against 2840: the context, not the pool.
        self.assertGreater(pool["used_vs_torch_expandable"], 1.0)
        self.assertEqual(rows["torch-expandable"]["process_vs_torch_expandable"], 1.0)
        header = doc["markdown"].splitlines()[0]
        self.assertIn("process MiB", header)
        self.assertIn("x torch-expandable (process)", header)
        self.assertIn("| 3453.0 | 1.003 |", doc["markdown"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
