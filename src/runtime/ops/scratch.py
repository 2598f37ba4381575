"""Per-thread reusable work arrays for kernels' temporaries (NumPy only).

A kernel's large temporary that never leaves the kernel (im2col columns, a padded copy, a
centred copy) can live in one buffer reused call after call. Past glibc's largest mmap
threshold (32 MiB) a fresh array is mapped anew and page-faulted in full on every call, which
costs about as much as filling it; on a loaded machine page faults cost more still. A
kernel that needs several temporaries at once takes each from its own named slot. The
buffers are thread-local, so kernels running in parallel executor threads never share one.
"""
from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

__all__ = ["scratch"]

_MAX_BYTES = 256 << 20  # larger temporaries are allocated per call rather than kept for good
_local = threading.local()


def scratch(xp, shape: tuple, dtype, slot: str = "work") -> Any:
    """An uninitialised array of `shape` and `dtype` in this thread's work buffer named `slot`.

    Valid until the next `scratch` call for the same slot on the same thread: a kernel must not
    return it, nor hold it across a call to anything that may take the same slot itself.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if xp is not np or nbytes > _MAX_BYTES:
        return xp.empty(shape, dtype=dtype)
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < nbytes:
        buf = bufs[slot] = np.empty(nbytes, dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)
