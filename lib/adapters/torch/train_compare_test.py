#!/usr/bin/env python3
"""CTest `train_compare_pairs`: train_compare.py --compare (no PyTorch needed) on made-up runs.
One pair gives its ratio; pairs run in alternating order give the median of their ratios, each
pair's kept beside it; a pair whose losses or parameters differ, or whose reference is not the
first pair's loop, makes the verdict MISMATCH and the exit 1; an odd count of files is refused.

  python3 train_compare_test.py [TRAIN_COMPARE_PY]
"""
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    spec = importlib.util.spec_from_file_location("train_compare", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_json(allocator, median_ms, losses=(2.5, 2.25, 2.0), params="ab" * 32, steps=3):
    return {"allocator": allocator, "config": {"steps": steps}, "device": "test device",
            "losses": list(losses), "params_sha256": params, "median_step_ms": median_ms,
            "mean_step_ms": median_ms, "probe": {"oom_exception": None}}


class Compare(unittest.TestCase):
    def setUp(self):
        self.mod = load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "train_compare.py"))
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def compare(self, *runs):
        paths = []
        for i, r in enumerate(runs):
            paths.append(os.path.join(self.dir.name, f"run{i}.json"))
            with open(paths[-1], "w") as f:
                json.dump(r, f)
        out = os.path.join(self.dir.name, "combined.json")
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            rc = self.mod.main(["--compare", *paths, f"--out={out}"])
        with open(out) as f:
            return rc, json.load(f), printed.getvalue()

    def test_one_pair_gives_its_ratio(self):
        rc, d, _ = self.compare(run_json("torch", 10.0), run_json("cudapool", 12.0))
        self.assertEqual(rc, 0)
        self.assertEqual(d["verdict"], "identical")
        self.assertAlmostEqual(d["median_ratio"], 1.2)
        self.assertEqual(len(d["pair_ratios"]), 1)

    def test_alternating_pairs_give_the_median_of_their_ratios(self):
        # A B B A: the first process of each allocator on a slow level, the second on a fast one.
        rc, d, printed = self.compare(run_json("torch", 10.0), run_json("cudapool", 13.0),
                                      run_json("torch", 13.0), run_json("cudapool", 10.4),
                                      run_json("torch", 10.0), run_json("cudapool", 10.1))
        self.assertEqual(rc, 0, printed)
        self.assertEqual([round(r, 3) for r in d["pair_ratios"]], [1.3, 0.8, 1.01])
        self.assertAlmostEqual(d["median_ratio"], 1.01)
        self.assertEqual(d["pairs"][1]["median_step_ms"], {"torch": 13.0, "cudapool": 10.4})
        self.assertIn("(pairs: 1.300, 0.800, 1.010)", printed)
        self.assertEqual(d["runs"]["torch"]["median_step_ms"], 10.0)  # the first pair's runs

    def test_a_later_pair_that_differs_is_a_mismatch(self):
        rc, d, _ = self.compare(run_json("torch", 10.0), run_json("cudapool", 10.0),
                                run_json("torch", 10.0), run_json("cudapool", 10.0, losses=(2.5, 2.25, 2.01)))
        self.assertEqual(rc, 1)
        self.assertEqual(d["verdict"], "MISMATCH")
        self.assertTrue(any(p.startswith("pair 2: losses differ from step 2") for p in d["problems"]), d["problems"])

    def test_a_later_pair_of_another_loop_is_a_mismatch(self):
        rc, d, _ = self.compare(run_json("torch", 10.0), run_json("cudapool", 10.0),
                                run_json("torch", 10.0, params="cd" * 32), run_json("cudapool", 10.0, params="cd" * 32))
        self.assertEqual(rc, 1)
        self.assertIn("pair 2: not the first pair's loop: final parameters differ", d["problems"])

    def test_an_odd_count_is_refused(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
            self.mod.parse_args(["--compare", "a.json", "b.json", "c.json"])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
