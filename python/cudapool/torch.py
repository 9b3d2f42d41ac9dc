"""cudapool as PyTorch's CUDA allocator, from Python.

    import cudapool.torch
    cudapool.torch.enable()                 # before anything allocates CUDA memory
    ...
    print(cudapool.torch.memory_summary())

enable() installs libcudapool_torch.so through torch.cuda.memory.CUDAPluggableAllocator; PyTorch's
own torch.cuda.memory_stats() and empty_cache() do not reach a pluggable allocator, so this module
has its own: memory_stats() (PyTorch's key names where they map, plus cudapool's own),
empty_cache(), memory_summary(). These three need only the library, not torch.
"""

import json
import os
import sys
import threading
from collections import OrderedDict
from typing import Any, Dict, Optional

from . import _library

VARIANTS = ("mutex", "lockfree", "tls", "stream")  # the registry's names (variants/registry.cpp)

_enable_lock = threading.Lock()
_enabled: Optional[Dict[str, Any]] = None


def enable(variant: Optional[str] = None, byte_limit: Optional[int] = None) -> None:
    """Makes cudapool PyTorch's CUDA allocator for this process.

    variant: "mutex", "lockfree", "tls" or "stream"; None: CUDAPOOL_VARIANT, else "lockfree".
    byte_limit: bytes of device memory each device's pool may hold (0: no limit); None: CUDAPOOL_BYTE_LIMIT.

    Must run before CUDA is initialised in this process (before any tensor is put on a GPU and
    before torch.cuda calls that initialise CUDA; torch.cuda.is_available() is fine): raises
    RuntimeError after. The library reads its settings once, at its first call: a variant given
    after memory_stats() (or anything else that reached the library) is refused with RuntimeError
    too. Calling it again with the same arguments does nothing.
    """
    global _enabled
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"cudapool: unknown variant {variant!r}; valid: {', '.join(VARIANTS)}")
    wanted = {"variant": variant, "byte_limit": byte_limit}
    with _enable_lock:
        if _enabled is not None:
            if _enabled != wanted:
                raise RuntimeError(f"cudapool.torch.enable() was already called with {_enabled}")
            return
        import torch  # only enable() needs torch

        if torch.cuda.is_initialized():
            raise RuntimeError(
                "cudapool.torch.enable() must run before CUDA is initialised: PyTorch's allocator is already in "
                "use in this process (call it first, before any tensor goes to the GPU)")
        if variant is not None:
            os.environ["CUDAPOOL_VARIANT"] = variant  # the library reads it once, at its first call
        lib = _library.load()
        current = json.loads(lib.stats_json())["variant"]
        if variant is not None and current != variant:
            raise RuntimeError(f"cudapool.torch.enable(variant={variant!r}) came too late: the library already "
                               f"runs {current!r} (memory_stats() or an allocation came first)")
        if byte_limit is not None:
            lib.set_byte_limit(byte_limit)
        allocator = torch.cuda.memory.CUDAPluggableAllocator(lib.path, "cudapool_torch_malloc", "cudapool_torch_free")
        try:
            torch.cuda.memory.change_current_allocator(allocator)
        except RuntimeError as e:
            raise RuntimeError(f"cudapool.torch.enable() came too late: PyTorch refused the allocator ({e})") from e
        _enabled = wanted


def _device(device: Optional[int]) -> int:
    if device is not None:
        return int(getattr(device, "index", device) or 0)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return 0


def raw_stats() -> Dict[str, Any]:
    """The library's document, as the CUDAPOOL_STATS file has it: {"library", "variant",
    "backend", "byte_limit", "failed_allocations", "devices": [{"device", "stats"}]}."""
    return json.loads(_library.load().stats_json())


# PyTorch's key (torch.cuda.memory_stats) -> cudapool's pool_stats field.
_TORCH_KEYS = (
    ("allocated_bytes.all.current", "in_use_bytes"),
    ("allocated_bytes.all.peak", "peak_in_use_bytes"),
    ("requested_bytes.all.current", "requested_bytes"),
    ("requested_bytes.all.peak", "peak_requested_bytes"),
    ("reserved_bytes.all.current", "reserved_bytes"),
    ("reserved_bytes.all.peak", "peak_reserved_bytes"),
    ("allocation.all.allocated", "allocs"),
    ("allocation.all.freed", "frees"),
    ("num_ooms", "ooms"),
)


def stats_to_dict(document: Dict[str, Any], device: int) -> "OrderedDict[str, Any]":
    """memory_stats() of `device` from the library's document (raw_stats())."""
    out: "OrderedDict[str, Any]" = OrderedDict()
    pools = [d["stats"] for d in document.get("devices", []) if d.get("device") == device]
    s = pools[0] if pools else None
    for torch_key, field in _TORCH_KEYS:
        out[torch_key] = s[field] if s else 0
    out["allocation.all.current"] = (s["allocs"] - s["frees"]) if s else 0
    out["segment.all.current"] = s["heap"]["segments"] if s else 0
    out["num_device_alloc"] = s["heap"]["maps"] if s else 0
    out["num_device_free"] = s["heap"]["unmaps"] if s else 0
    # cudapool's own, flat as PyTorch's are.
    out["cudapool.variant"] = s["variant"] if s else document.get("variant")
    out["cudapool.backend"] = s["backend"] if s else document.get("backend")
    out["cudapool.byte_limit"] = document.get("byte_limit", 0)
    out["cudapool.failed_allocations"] = document.get("failed_allocations", 0)
    if s is None:
        return out
    for key, value in s.items():
        if key in ("variant", "backend", "heap", "classes"):
            continue
        out[f"cudapool.{key}"] = value
    for key, value in s["heap"].items():
        out[f"cudapool.heap.{key}"] = value
    for c in s["classes"]:
        for key, value in c.items():
            if key != "block_bytes":
                out[f"cudapool.class.{c['block_bytes']}.{key}"] = value
    return out


def memory_stats(device: Optional[int] = None) -> "OrderedDict[str, Any]":
    """The statistics of `device`'s pool (default: the current device) as a dict: PyTorch's
    key names where they map (allocated_bytes.all.current/peak, reserved_bytes.all.current/peak,
    requested_bytes.*, allocation.all.*, num_ooms, segment.all.current, num_device_alloc/free),
    then cudapool's own under "cudapool." (cached, pending, free bytes, events, per size class
    "cudapool.class.<block bytes>.<field>", the heap "cudapool.heap.<field>"). Zeros before the
    device's first allocation."""
    return stats_to_dict(raw_stats(), _device(device))


def empty_cache() -> int:
    """Gives what the pools hold unused back to the device (trim of every device's pool); returns
    the bytes released. torch.cuda.empty_cache() does not reach a pluggable allocator."""
    return _library.load().trim()


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def summary_text(stats: "OrderedDict[str, Any]", device: int) -> str:
    """memory_summary()'s table from a memory_stats() dict."""
    width = 75
    rule, thick = "|" + "-" * (width - 2) + "|", "|" + "=" * (width - 2) + "|"

    def row(text: str) -> str:
        return "| " + text.ljust(width - 4) + " |"

    lines = [thick, row(f"cudapool memory summary, device {device}".center(width - 4)), rule,
             row(f"variant: {stats['cudapool.variant']}   backend: {stats['cudapool.backend']}   "
                 f"byte limit: {_size(stats['cudapool.byte_limit']) if stats['cudapool.byte_limit'] else 'none'}"),
             row(f"OOMs: {stats['num_ooms']}   failed allocations: {stats['cudapool.failed_allocations']}"),
             rule, row(f"{'Metric':<26}{'Cur Usage':>20}{'Peak Usage':>20}"), rule]
    for label, cur, peak in (("Allocated memory", "allocated_bytes.all.current", "allocated_bytes.all.peak"),
                             ("Requested memory", "requested_bytes.all.current", "requested_bytes.all.peak"),
                             ("Reserved memory", "reserved_bytes.all.current", "reserved_bytes.all.peak")):
        lines.append(row(f"{label:<26}{_size(stats[cur]):>20}{_size(stats[peak]):>20}"))
    for label, key in (("Free (shared lists)", "cudapool.free_bytes"), ("Cached (thread/stream)", "cudapool.cached_bytes"),
                       ("Pending (stream order)", "cudapool.pending_bytes")):
        if key in stats:
            lines.append(row(f"{label:<26}{_size(stats[key]):>20}{'':>20}"))
    lines += [rule, row(f"{'Allocations':<26}{stats['allocation.all.current']:>20}{'':>20}"),
              row(f"{'  allocated / freed':<26}{stats['allocation.all.allocated']:>20}{stats['allocation.all.freed']:>20}"),
              rule]
    classes = sorted({int(k.split(".")[2]) for k in stats if k.startswith("cudapool.class.")})
    if classes:
        lines.append(row(f"{'Size class':>12}{'capacity':>10}{'free':>9}{'cached':>9}{'pending':>9}{'in use':>9}{'allocs':>13}"))
        for c in classes:
            def get(field: str) -> Any:
                return stats.get(f"cudapool.class.{c}.{field}", 0)
            lines.append(row(f"{_size(c):>12}{get('capacity_blocks'):>10}{get('free_blocks'):>9}{get('cached_blocks'):>9}"
                             f"{get('pending_blocks'):>9}{get('in_use_blocks'):>9}{get('allocs'):>13}"))
        lines.append(rule)
    lines[-1] = thick
    return "\n".join(lines)


def memory_summary(device: Optional[int] = None) -> str:
    """A table of memory_stats(device), like torch.cuda.memory_summary()."""
    d = _device(device)
    return summary_text(memory_stats(d), d)
