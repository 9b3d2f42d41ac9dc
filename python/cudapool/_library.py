"""Finding and loading libcudapool_torch.so, and its C ABI (cudapool_torch.h) through ctypes.

Thread-safety: load() is safe to call from several threads (a lock); the C functions are
thread-safe themselves.
"""

import ctypes
import ctypes.util
import os
import sys
import threading
from pathlib import Path
from typing import List, Optional

LIBRARY_NAME = "libcudapool_torch.so"
ENVIRONMENT_VARIABLE = "CUDAPOOL_TORCH_LIB"

_PACKAGE_DIR = Path(__file__).resolve().parent


def _prefixes() -> List[Path]:
    """Install prefixes to search, nearest first: the one this package is installed in
    (<prefix>/lib/python3/dist-packages/cudapool or <prefix>/lib/python3.X/site-packages/cudapool),
    Python's own, /usr/local, /usr."""
    found = []
    parts = _PACKAGE_DIR.parts
    for marker in ("lib", "lib64"):
        if marker in parts:
            index = len(parts) - 1 - parts[::-1].index(marker)
            found.append(Path(*parts[:index]))
    found += [Path(sys.prefix), Path("/usr/local"), Path("/usr")]
    unique = []
    for p in found:
        if p not in unique:
            unique.append(p)
    return unique


def candidates() -> List[Path]:
    """Where the library is looked for, in order, without CUDAPOOL_TORCH_LIB (which wins)."""
    paths = [_PACKAGE_DIR / LIBRARY_NAME]
    multiarch = getattr(sys.implementation, "_multiarch", None)
    for prefix in _prefixes():
        for libdir in ["lib"] + ([f"lib/{multiarch}"] if multiarch else []) + ["lib64"]:
            paths.append(prefix / libdir / LIBRARY_NAME)
    return paths


def find() -> str:
    """The path of libcudapool_torch.so. Raises FileNotFoundError naming every place tried."""
    named = os.environ.get(ENVIRONMENT_VARIABLE)
    if named:
        if not Path(named).is_file():
            raise FileNotFoundError(f"{ENVIRONMENT_VARIABLE}={named!r} is not a file")
        return str(Path(named).resolve())
    tried = candidates()
    for path in tried:
        if path.is_file():
            return str(path)
    loader = ctypes.util.find_library("cudapool_torch")  # the dynamic loader's cache
    if loader:
        return loader
    where = "\n  ".join(str(p) for p in tried)
    raise FileNotFoundError(
        f"{LIBRARY_NAME} not found: set {ENVIRONMENT_VARIABLE}=/path/to/{LIBRARY_NAME}, or install cudapool "
        f"(cmake --install, or the libcudapool-dev package). Tried:\n  {where}\n  and the loader's path")


class Library:
    """The loaded library and its C functions, typed."""

    def __init__(self, path: str):
        self.path = path
        self.cdll = ctypes.CDLL(path)
        c = self.cdll
        c.cudapool_torch_stats_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        c.cudapool_torch_stats_json.restype = ctypes.c_size_t
        c.cudapool_torch_trim.argtypes = []
        c.cudapool_torch_trim.restype = ctypes.c_size_t
        c.cudapool_torch_set_byte_limit.argtypes = [ctypes.c_size_t]
        c.cudapool_torch_set_byte_limit.restype = ctypes.c_int
        c.cudapool_torch_malloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        c.cudapool_torch_malloc.restype = ctypes.c_void_p
        c.cudapool_torch_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        c.cudapool_torch_free.restype = None

    def stats_json(self) -> str:
        """The statistics document (the CUDAPOOL_STATS file's form) as text."""
        size = 4096
        while True:
            buffer = ctypes.create_string_buffer(size)
            needed = self.cdll.cudapool_torch_stats_json(buffer, size)
            if needed == 0:
                raise RuntimeError("cudapool_torch_stats_json failed (the reason is on stderr)")
            if needed <= size:
                return buffer.value.decode("utf-8")
            size = needed  # the pools changed meanwhile: the next try may need more again

    def trim(self) -> int:
        return int(self.cdll.cudapool_torch_trim())

    def set_byte_limit(self, byte_limit: int) -> None:
        if byte_limit < 0:
            raise ValueError(f"byte_limit must be >= 0, not {byte_limit}")
        if self.cdll.cudapool_torch_set_byte_limit(byte_limit) != 0:
            raise RuntimeError("cudapool: the byte limit must be set before the first CUDA allocation "
                               "(a device pool already exists)")


_lock = threading.Lock()
_loaded: Optional[Library] = None


def load() -> Library:
    """The library, loaded once per process (find() the first time)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = Library(find())
        return _loaded
