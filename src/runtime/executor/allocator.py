"""One allocator per (place, stream) for the emulated device streams (Paddle's
RecordStream GC, its `CUDAAllocatorMap` and `StreamSafeCUDAAllocator`).

With FastGC a var's memory is freed on the host as soon as the last op using it is LAUNCHED,
while that op may still be waiting in its stream's queue. That is safe only if the memory is
handed out again to ops of the same stream, which run after the queued use; handed to another
stream, it could be overwritten before the queued use reads it. So each stream has its own
`StreamAllocator` (a pool of free blocks by shape and dtype): a block returns to the pool of
the stream that allocated it and is handed out again only to outputs of ops on that stream.

The emulation allocates where a CUDA runtime does: on the host, when the op is launched. That
needs the output's shape and dtype before its inputs exist, and a kernel that writes into a
given buffer. So a pool serves exactly the outputs `pooled_outputs` finds:
- of an elementwise op on a device stream that has an `out=` form (`ops.fused.inplace_kernel`),
  no in-place role, and one output of a static shape (two elements or more) and a float dtype;
- a temporary (freeable) var written by that op only, and read only by ops whose results never
  share memory with their inputs (other elementwise ops, device-to-host copies) or only for its
  shape — so no view of the block outlives the var.
Every other kernel allocates its own NumPy result, as before; the pool cannot hand a buffer to
a kernel that does not take one, and copying into a pooled block would be pure cost.
`kernel_into_block` is the kernel the op then runs: it writes into the block when the result
has exactly the block's shape and dtype at run time, and otherwise falls back to the plain
kernel (whose result is bit-identical), so pooling never changes a value.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..ops.fused import ELEMENTWISE, inplace_kernel
from ..ops.registry import get_op
from .plan import Instruction
from .transfer import MEMCPY_D2H

__all__ = ["StreamAllocator", "pooled_outputs", "kernel_into_block"]

_FRESH_READERS = ELEMENTWISE | {"fused_elementwise", MEMCPY_D2H}   # results never share a reader's input


class StreamAllocator:
    """The free blocks of one (place, stream), by (shape, dtype); thread-safe. `allocated` counts
    blocks made new, `reused` blocks handed out again."""

    __slots__ = ("stream", "_free", "_lock", "allocated", "reused")

    def __init__(self, stream: str):
        self.stream = stream
        self._free: dict[tuple[tuple[int, ...], np.dtype], list[np.ndarray]] = {}
        self._lock = threading.Lock()
        self.allocated = 0
        self.reused = 0

    def allocate(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A block of `shape` and `dtype`: a free one of this stream, else a new one."""
        with self._lock:
            blocks = self._free.get((shape, dtype))
            if blocks:
                self.reused += 1
                return blocks.pop()
            self.allocated += 1
        return np.empty(shape, dtype)

    def free(self, block: np.ndarray) -> None:
        """Give `block` back to this stream's pool."""
        with self._lock:
            self._free.setdefault((block.shape, block.dtype), []).append(block)


def pooled_outputs(instrs: Sequence[Instruction], var_meta: Sequence[Any],
                   freeable: Sequence[bool]) -> dict[int, tuple[int, tuple[int, ...], np.dtype]]:
    """op index -> (output slot, shape, dtype) of the device ops whose output a stream's
    allocator provides (the rules in the module docstring)."""
    writers: dict[int, list[int]] = {}
    readers: dict[int, list[int]] = {}
    for ins in instrs:
        for v in ins.writes:
            writers.setdefault(v, []).append(ins.index)
        for v in ins.reads:
            readers.setdefault(v, []).append(ins.index)
    out = {}
    for ins in instrs:
        if (ins.context != "gpu" or ins.kind != "kernel" or ins.type not in ELEMENTWISE or ins.inplace
                or ins.inplace_pair is not None or len(ins.outputs) != 1 or inplace_kernel(ins.type) is None):
            continue
        v = ins.outputs[0]
        meta = var_meta[v]
        shape, dtype = meta._shape, meta._np_dtype
        if (not freeable[v] or writers[v] != [ins.index] or dtype.kind not in "fc" or any(d < 0 for d in shape)
                or math.prod(shape) < 2):
            continue
        if all(instrs[j].type in _FRESH_READERS for j in readers.get(v, ())):
            out[ins.index] = (v, shape, dtype)
    return out


def kernel_into_block(op_type: str) -> Callable[..., Any]:
    """fn(xp, block, *arrays, **attrs): op `op_type` computed into `block` when one of the
    inputs has the block's shape (so the result has it too) and the `out=` form accepts it;
    otherwise (no block, as in the scheduler mode, or another shape at run time) the plain kernel."""
    into, kernel = inplace_kernel(op_type), get_op(op_type).kernel

    def run(xp: Any, block: Any, *arrays: Any, **attrs: Any) -> Any:
        if block is not None:
            shape = block.shape
            for a in arrays:
                if a is not None and a.shape == shape:
                    return into(xp, block, *arrays, **attrs)
        return kernel(xp, *arrays, **attrs)
    return run
