#!/usr/bin/python3
"""s9's merge_bench.py, which the run scripts of docs/results call: now bench/merge_bench.py."""
import os
import runpy
import sys

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/merge_bench.py"), run_name="__main__")
