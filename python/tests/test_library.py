"""The ctypes layer against the real libcudapool_torch.so on the simulated device
(CUDAPOOL_BACKEND=sim), without torch. CUDAPOOL_TORCH_LIB names the library (ctest sets it). Each
case runs in a child process: the library's pools live as long as the process."""

import json
import os
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def run(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, CUDAPOOL_BACKEND="sim", PYTHONPATH=str(PACKAGE_ROOT), **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment, capture_output=True,
                          text=True, timeout=120)


@unittest.skipUnless(os.environ.get("CUDAPOOL_TORCH_LIB"), "set CUDAPOOL_TORCH_LIB to libcudapool_torch.so")
class Library(unittest.TestCase):
    def check(self, code: str, **env: str) -> str:
        r = run(code, **env)
        self.assertEqual(r.returncode, 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        return r.stdout

    def test_stats_follow_allocations_on_two_devices(self):
        out = self.check("""
            import json
            import cudapool.torch as ct
            from cudapool import _library
            lib = _library.load()
            assert ct.raw_stats()["devices"] == [], ct.raw_stats()
            assert ct.memory_stats()["allocated_bytes.all.current"] == 0
            p = lib.cdll.cudapool_torch_malloc(4096, 0, None)
            q = lib.cdll.cudapool_torch_malloc(1 << 20, 1, None)
            s0, s1 = ct.memory_stats(0), ct.memory_stats(1)
            assert s0["allocated_bytes.all.current"] == 4096, s0
            assert s1["allocated_bytes.all.current"] == 1 << 20, s1
            assert s0["reserved_bytes.all.current"] >= 4096 and s0["allocation.all.current"] == 1
            assert s0["cudapool.backend"] == "sim" and s0["cudapool.variant"] == "lockfree"
            assert s0["cudapool.class.4096.in_use_blocks"] == 1, s0
            lib.cdll.cudapool_torch_free(p, 4096, 0, None)
            lib.cdll.cudapool_torch_free(q, 1 << 20, 1, None)
            s0 = ct.memory_stats(0)
            assert s0["allocated_bytes.all.current"] == 0 and s0["allocated_bytes.all.peak"] == 4096, s0
            assert s0["allocation.all.freed"] == 1 and s0["num_ooms"] == 0
            print(ct.memory_summary(0))
            print("released", ct.empty_cache())
            """)
        self.assertIn("cudapool memory summary, device 0", out)
        self.assertIn("Reserved memory", out)

    def test_a_small_buffer_gets_the_size_needed(self):
        self.check("""
            import ctypes, json
            from cudapool import _library
            lib = _library.load()
            p = lib.cdll.cudapool_torch_malloc(256, 0, None)
            tiny = ctypes.create_string_buffer(8)
            needed = lib.cdll.cudapool_torch_stats_json(tiny, 8)
            assert needed > 8 and tiny.value == b"", (needed, tiny.raw)
            big = ctypes.create_string_buffer(needed)
            assert lib.cdll.cudapool_torch_stats_json(big, needed) == needed
            assert len(big.value) == needed - 1
            assert json.loads(big.value)["devices"][0]["stats"]["in_use_bytes"] == 256
            assert lib.cdll.cudapool_torch_stats_json(None, 0) == needed
            """)

    def test_trim_gives_memory_back(self):
        self.check("""
            import time
            import cudapool.torch as ct
            from cudapool import _library
            lib = _library.load()
            ps = [lib.cdll.cudapool_torch_malloc(1 << 20, 0, None) for _ in range(16)]
            for p in ps:
                lib.cdll.cudapool_torch_free(p, 1 << 20, 0, None)
            before = ct.memory_stats(0)["reserved_bytes.all.current"]
            released = 0
            # Stream-ordered frees complete asynchronously on the sim device (its stream's thread),
            # late on a loaded machine: retry until a deadline, not a count of tries.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                released += ct.empty_cache()
                if ct.memory_stats(0)["reserved_bytes.all.current"] == 0:
                    break
                time.sleep(0.01)
            after = ct.memory_stats(0)["reserved_bytes.all.current"]
            assert before > 0 and released > 0 and after < before, (before, released, after)
            """)

    def test_byte_limit_before_the_first_allocation_only(self):
        self.check("""
            import cudapool.torch as ct
            from cudapool import _library
            lib = _library.load()
            lib.set_byte_limit(8 << 20)
            p = lib.cdll.cudapool_torch_malloc(4096, 0, None)
            assert ct.memory_stats(0)["cudapool.byte_limit"] == 8 << 20
            assert ct.raw_stats()["byte_limit"] == 8 << 20
            try:
                lib.set_byte_limit(1 << 30)
            except RuntimeError as e:
                assert "before the first CUDA allocation" in str(e)
            else:
                raise AssertionError("a byte limit after the first allocation must be refused")
            """)

    def test_environment_is_what_the_stats_report(self):
        self.check("""
            import cudapool.torch as ct
            from cudapool import _library
            lib = _library.load()
            lib.cdll.cudapool_torch_free(lib.cdll.cudapool_torch_malloc(4096, 0, None), 4096, 0, None)
            assert ct.memory_stats(0)["cudapool.variant"] == "tls", ct.memory_stats(0)
            """, CUDAPOOL_VARIANT="tls")


if __name__ == "__main__":
    unittest.main()
