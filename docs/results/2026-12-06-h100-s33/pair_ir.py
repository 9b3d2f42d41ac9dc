#!/usr/bin/python3
"""pair_ir.py BUNDLE... : instructions per alloc+free pair of pair/<variant>/4096 at 1 thread, for each
bundle's bench on the sim backend (no GPU needed), under callgrind. Each bench runs twice (min_time
0.4 and 1.2 s); the pool's allocate and deallocate are found by name in the call graph, and the
marginal instructions per call between the two runs (inclusive: the refills they make included)
leave out what is paid once (start-up, first slabs). Deterministic where a host's timings are not.
  VARIANTS="stream tls" LD_LIBRARY_PATH=.bundle/lib python3 pair_ir.py .bundle .bundle_main
A bundle holds bin/bench or bin.tar.xz (unpacked to a temporary directory)."""
import collections
import os
import re
import subprocess
import sys
import tarfile
import tempfile

LISTS = {"stream": "stream_free_lists", "tls": "tls_free_lists", "lockfree": "lockfree_free_lists",
         "mutex": "mutex_free_lists"}


def calls_of(path, lists):
    """{'allocate'|'deallocate': (calls, inclusive Ir)} of pool_model<basic_pool<lists>>."""
    names, calls, incl, cur = {}, collections.Counter(), collections.Counter(), None
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", lines[i])
        if m:
            kind, idx, name = m.groups()
            if name:
                names[idx] = name
            if kind == "cfn":
                cur = idx
        elif lines[i].startswith("calls="):
            calls[cur] += int(lines[i].split("=")[1].split()[0])
            incl[cur] += int(lines[i + 1].split()[1])
            i += 1
        i += 1
    out = {}
    for idx, n in calls.items():
        m = re.search(r"pool_model<cudapool::basic_pool<cudapool::" + lists + r"\b.*>::(allocate|deallocate)\(", names.get(idx, ""))
        if m:
            a, b = out.get(m.group(1), (0, 0))
            out[m.group(1)] = (a + n, b + incl[idx])
    return out


def bench_of(bundle, tmp):
    if os.path.exists(f"{bundle}/bin/bench"):
        return f"{bundle}/bin/bench"
    d = f"{tmp}/{abs(hash(bundle))}"
    tarfile.open(f"{bundle}/bin.tar.xz").extractall(d)
    return f"{d}/bin/bench"


with tempfile.TemporaryDirectory() as tmp:
    for variant in os.environ.get("VARIANTS", "stream tls").split():
        for bundle in sys.argv[1:]:
            bench = bench_of(bundle, tmp)
            runs = []
            for t in ("0.4", "1.2"):
                out = f"{tmp}/cg.{variant}.{abs(hash(bundle))}.{t}"
                subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", bench, "--backend=sim",
                                "--traces=", f"--benchmark_filter=^pair/{variant}/4096/real_time/threads:1$",
                                f"--benchmark_min_time={t}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                runs.append(calls_of(out, LISTS[variant]))
            per = {}
            for op in ("allocate", "deallocate"):
                (n0, i0), (n1, i1) = runs[0].get(op, (0, 0)), runs[1].get(op, (0, 0))
                per[op] = (i1 - i0) / (n1 - n0) if n1 > n0 else float("nan")
            print(f"pair/{variant}/4096 {bundle}: allocate {per['allocate']:.1f} + deallocate {per['deallocate']:.1f}"
                  f" = {per['allocate'] + per['deallocate']:.1f} instructions per pair")
