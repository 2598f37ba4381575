"""Per-thread reusable work arrays for kernels' temporaries (NumPy only).

A kernel's large temporary that never leaves the kernel (im2col columns, a centred copy)
can live in one buffer reused call after call. Past glibc's largest mmap threshold (32 MiB)
a fresh array is mapped anew and page-faulted in full on every call, which costs about as much
as filling it; on a loaded machine page faults cost more still. The buffer is thread-local, so
kernels running in parallel executor threads never share one.
"""
from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

__all__ = ["scratch"]

_MAX_BYTES = 256 << 20  # larger temporaries are allocated per call rather than kept for good
_local = threading.local()


def scratch(xp, shape: tuple, dtype) -> Any:
    """An uninitialised array of `shape` and `dtype` in this thread's work buffer.

    Valid until the next `scratch` call on the same thread: a kernel must not return it, nor
    hold it across a call to anything that may take the buffer itself.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if xp is not np or nbytes > _MAX_BYTES:
        return xp.empty(shape, dtype=dtype)
    buf = getattr(_local, "buf", None)
    if buf is None or buf.nbytes < nbytes:
        buf = _local.buf = np.empty(nbytes, dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)
