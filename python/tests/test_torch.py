"""cudapool.torch without torch: the stats mapping, the library lookup, and enable() against a
fake torch module that records what PyTorch would be asked."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from collections import OrderedDict
from pathlib import Path
from unittest import mock

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PACKAGE_ROOT))

import cudapool.torch as ct  # noqa: E402
from cudapool import _library  # noqa: E402

DOCUMENT = {
    "library": "cudapool_torch", "variant": "stream", "backend": "cuda", "byte_limit": 0, "failed_allocations": 1,
    "devices": [{"device": 1, "stats": {
        "variant": "stream", "backend": "cuda", "reserved_bytes": 4 << 20, "in_use_bytes": 8192,
        "requested_bytes": 5000, "free_bytes": 256, "cached_bytes": 512, "pending_bytes": 1024,
        "peak_reserved_bytes": 6 << 20, "peak_in_use_bytes": 1 << 20, "peak_requested_bytes": 900000,
        "allocs": 10, "frees": 8, "grows": 2, "trims": 1, "ooms": 1, "invalid_frees": 0, "events_recorded": 3,
        "epochs_reclaimed": 3, "stream_waits": 0, "pending_epochs": 1,
        "heap": {"segments": 1, "maps": 3, "unmaps": 1, "mapped_bytes": 4 << 20},
        "classes": [{"block_bytes": 4096, "capacity_blocks": 512, "free_blocks": 500, "cached_blocks": 8,
                     "pending_blocks": 2, "in_use_blocks": 2, "allocs": 10, "frees": 8, "slabs": 1}]}}],
}


class StatsMapping(unittest.TestCase):
    def test_torch_names_where_they_map(self):
        s = ct.stats_to_dict(DOCUMENT, 1)
        self.assertIsInstance(s, OrderedDict)
        expected = {
            "allocated_bytes.all.current": 8192, "allocated_bytes.all.peak": 1 << 20,
            "requested_bytes.all.current": 5000, "requested_bytes.all.peak": 900000,
            "reserved_bytes.all.current": 4 << 20, "reserved_bytes.all.peak": 6 << 20,
            "allocation.all.allocated": 10, "allocation.all.freed": 8, "allocation.all.current": 2,
            "num_ooms": 1, "segment.all.current": 1, "num_device_alloc": 3, "num_device_free": 1,
        }
        for key, value in expected.items():
            self.assertEqual(s[key], value, key)

    def test_cudapool_own_keys(self):
        s = ct.stats_to_dict(DOCUMENT, 1)
        self.assertEqual(s["cudapool.variant"], "stream")
        self.assertEqual(s["cudapool.failed_allocations"], 1)
        self.assertEqual(s["cudapool.pending_bytes"], 1024)
        self.assertEqual(s["cudapool.cached_bytes"], 512)
        self.assertEqual(s["cudapool.pending_epochs"], 1)
        self.assertEqual(s["cudapool.heap.mapped_bytes"], 4 << 20)
        self.assertEqual(s["cudapool.class.4096.pending_blocks"], 2)
        self.assertNotIn("cudapool.class.4096.block_bytes", s)

    def test_a_device_without_a_pool_is_zeros(self):
        s = ct.stats_to_dict(DOCUMENT, 0)
        self.assertEqual(s["allocated_bytes.all.current"], 0)
        self.assertEqual(s["reserved_bytes.all.peak"], 0)
        self.assertEqual(s["cudapool.variant"], "stream")

    def test_summary_is_a_table(self):
        text = ct.summary_text(ct.stats_to_dict(DOCUMENT, 1), 1)
        self.assertIn("device 1", text)
        self.assertIn("4.00 MiB", text)  # reserved now
        self.assertIn("6.00 MiB", text)  # reserved at peak
        self.assertIn("4.00 KiB", text)  # the size class
        widths = {len(line) for line in text.splitlines()}
        self.assertEqual(len(widths), 1, text)


class Lookup(unittest.TestCase):
    def test_an_unknown_variant_is_refused(self):
        with self.assertRaisesRegex(ValueError, "unknown variant 'nope'"):
            ct.enable(variant="nope")

    def test_the_environment_wins(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f, mock.patch.dict(os.environ, {"CUDAPOOL_TORCH_LIB": f.name}):
            self.assertEqual(_library.find(), str(Path(f.name).resolve()))

    def test_a_missing_named_file_is_an_error(self):
        with mock.patch.dict(os.environ, {"CUDAPOOL_TORCH_LIB": "/no/such/libcudapool_torch.so"}):
            with self.assertRaisesRegex(FileNotFoundError, "CUDAPOOL_TORCH_LIB"):
                _library.find()

    def test_beside_the_package_first(self):
        self.assertEqual(_library.candidates()[0], Path(_library.__file__).resolve().parent / "libcudapool_torch.so")

    def test_the_install_prefix_of_the_package(self):
        with tempfile.TemporaryDirectory() as root:
            package = Path(root, "usr/lib/python3/dist-packages/cudapool")
            with mock.patch.object(_library, "_PACKAGE_DIR", package):
                self.assertIn(Path(root, "usr/lib/libcudapool_torch.so"), _library.candidates())
                lib = Path(root, "usr/lib/libcudapool_torch.so")
                lib.parent.mkdir(parents=True)
                lib.touch()
                env = {k: v for k, v in os.environ.items() if k != "CUDAPOOL_TORCH_LIB"}
                with mock.patch.dict(os.environ, env, clear=True):
                    self.assertEqual(_library.find(), str(lib))

    def test_not_found_says_where_it_looked(self):
        env = {k: v for k, v in os.environ.items() if k != "CUDAPOOL_TORCH_LIB"}
        with mock.patch.dict(os.environ, env, clear=True), \
                mock.patch.object(_library, "candidates", lambda: [Path("/nowhere/libcudapool_torch.so")]), \
                mock.patch("ctypes.util.find_library", lambda name: None):
            with self.assertRaisesRegex(FileNotFoundError, "/nowhere/libcudapool_torch.so"):
                _library.find()


FAKE_TORCH = '''
import types
calls = []
initialized = False
class CUDAPluggableAllocator:
    def __init__(self, path, malloc_name, free_name):
        calls.append(("allocator", path, malloc_name, free_name))
def change_current_allocator(allocator):
    calls.append(("change", allocator))
cuda = types.SimpleNamespace(is_initialized=lambda: initialized, current_device=lambda: 0,
                             memory=types.SimpleNamespace(CUDAPluggableAllocator=CUDAPluggableAllocator,
                                                          change_current_allocator=change_current_allocator))
'''


@unittest.skipUnless(os.environ.get("CUDAPOOL_TORCH_LIB"), "set CUDAPOOL_TORCH_LIB to libcudapool_torch.so")
class Enable(unittest.TestCase):
    def run_with_fake_torch(self, code: str) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "torch.py").write_text(FAKE_TORCH)
            env = dict(os.environ, CUDAPOOL_BACKEND="sim", PYTHONPATH=f"{d}{os.pathsep}{PACKAGE_ROOT}")
            env.pop("CUDAPOOL_VARIANT", None)
            return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                                  text=True, timeout=120)

    def test_installs_the_library_as_pytorch_allocator(self):
        r = self.run_with_fake_torch("""
            import os, torch
            import cudapool.torch as ct
            ct.enable(variant="tls", byte_limit=16 << 20)
            ct.enable(variant="tls", byte_limit=16 << 20)  # again, the same: nothing happens
            assert [c[0] for c in torch.calls] == ["allocator", "change"], torch.calls
            assert torch.calls[0][1] == os.path.realpath(os.environ["CUDAPOOL_TORCH_LIB"]), torch.calls
            assert torch.calls[0][2:] == ("cudapool_torch_malloc", "cudapool_torch_free")
            from cudapool import _library
            lib = _library.load()
            lib.cdll.cudapool_torch_free(lib.cdll.cudapool_torch_malloc(4096, 0, None), 4096, 0, None)
            s = ct.memory_stats()
            assert s["cudapool.variant"] == "tls" and s["cudapool.byte_limit"] == 16 << 20, s
            try:
                ct.enable(variant="mutex")
            except RuntimeError as e:
                assert "already called" in str(e)
            else:
                raise AssertionError("a second enable() with other arguments must fail")
            """)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_variant_after_the_library_read_its_settings_is_refused(self):
        r = self.run_with_fake_torch("""
            import cudapool.torch as ct
            ct.memory_stats()  # the library reads CUDAPOOL_VARIANT (unset: lockfree) now
            try:
                ct.enable(variant="stream")
            except RuntimeError as e:
                assert "came too late" in str(e) and "'lockfree'" in str(e), e
            else:
                raise AssertionError("enable(variant=...) after the library read its settings must fail")
            """)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_too_late_is_a_clear_error(self):
        r = self.run_with_fake_torch("""
            import torch
            import cudapool.torch as ct
            torch.initialized = True
            try:
                ct.enable()
            except RuntimeError as e:
                assert "before CUDA is initialised" in str(e), e
            else:
                raise AssertionError("enable() after CUDA initialisation must fail")
            assert torch.calls == []
            """)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
