"""cudapool from Python: the PyTorch allocator in ``cudapool.torch``.

Pure Python over the C ABI of ``libcudapool_torch.so`` (ctypes); importing this package does not
import torch.
"""

__version__ = "0.1.0"
