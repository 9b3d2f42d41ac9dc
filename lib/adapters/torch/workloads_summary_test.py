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


def summarise(w, docs):
    """Writes each run JSON of docs (name -> run) to a file, summarises them all, returns the rows by
    allocator label."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, doc in docs.items():
            path = os.path.join(tmp, f"{name}.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            files.append(path)
        out = os.path.join(tmp, "all.json")
        assert w.summary(w.parse_args(["--summary", *files, f"--out={out}"])) == 0
        with open(out) as f:
            doc = json.load(f)
    return {r["allocator"]: r for r in doc["rows"]}, doc


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

    def test_arena_runs_are_rows_of_their_own(self):
        # A variant with CUDAPOOL_STREAM_ARENAS is another allocator (cudapool-<v>-arenas), not a
        # second round of the variant's row; a run JSON from before s46 has no stream_arenas.
        w = load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "workloads.py"))
        docs = {}
        for alloc, variant, arenas, used in (("torch", None, None, 3603), ("torch-expandable", None, None, 3443),
                                             ("cudapool", "tls", None, 3500), ("cudapool", "tls", 16, 3400)):
            doc = run_json(alloc, 595, used, 30.0, variant)
            if arenas is not None:
                doc["stream_arenas"] = arenas
            docs[f"{alloc}_{variant}_{arenas}"] = doc
        rows, _ = summarise(w, docs)
        self.assertEqual(rows["cudapool-tls"]["used_mib"], 3500)
        self.assertEqual(rows["cudapool-tls-arenas"]["used_mib"], 3400)
        self.assertEqual(rows["cudapool-tls-arenas"]["rounds"], 1)

    def test_device_bound_steps_against_torch(self):
        # Step by step against PyTorch's allocator, only where both processes waited for the device
        # (host_ms <= 0.8 step_ms): steps 0-1 are host-bound in both (the process's level: 1.5x
        # here), step 2 only in the pool's process; steps 3-4 count, at 1.01x and 1.03x.
        w = load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "workloads.py"))
        steps = {  # allocator: (step_ms, host_ms)
            "torch": ([10.0, 10.0, 20.0, 20.0, 30.0], [9.9, 9.9, 5.0, 5.0, 5.0]),
            "cudapool": ([15.0, 15.0, 21.0, 20.2, 30.9], [14.9, 14.9, 20.9, 5.0, 5.0]),
        }
        docs = {}
        for alloc, variant in (("torch", None), ("torch-expandable", None), ("cudapool", "lockfree")):
            doc = run_json(alloc, 595, 3443, 12.0, variant)
            doc["config"]["steps"] = 5
            if alloc in steps:
                doc["workloads"]["lm_train"]["step_ms"], doc["workloads"]["lm_train"]["host_ms"] = steps[alloc]
            docs[alloc] = doc
        rows, doc = summarise(w, docs)
        pool = rows["cudapool-lockfree"]
        self.assertAlmostEqual(pool["device_bound_vs_torch"], (1.01 + 1.03) / 2)
        self.assertEqual(pool["device_bound_steps_by_round"], [2])
        self.assertAlmostEqual(rows["torch"]["device_bound_vs_torch"], 1.0)
        # A run without host_ms (workloads.py before s37) has no such figure.
        self.assertIsNone(rows["torch-expandable"]["device_bound_vs_torch"])
        self.assertIn("x torch (device-bound steps)", doc["markdown"].splitlines()[0])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
