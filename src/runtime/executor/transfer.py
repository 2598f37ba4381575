"""Data-transfer ops between host and device memory (Paddle's data-transfer ops).

When a kernel runs on a device stream and its input was made on the host (a feed, a CPU kernel),
or a host op (a CPU kernel, a fetch) reads a value a device kernel made, the build puts a copy
between them, as Paddle's BuildOpFuncList does: a `memcpy_h2d` op (launched like a device kernel,
on its own copy stream) or a `memcpy_d2h` op (a host waiter: it blocks until the device producer
finished, then copies), writing a new var named as Paddle names it,
`<var>_device_<source place>_<destination place>`. A copy is made once per version of a var
and shared by every later reader on the other side; a new write of the var drops it. Shape-only
inputs need no copy (no buffer is read). Persistable vars are not copied: the scope's arrays
are the memory both sides use. With CuPy the copies are `cupy.array(x)` and `x.get()`; on an
emulated device (a CPU place with device streams) device memory is NumPy's, and the copies are
real copies into new buffers, so a use of the wrong side's buffer, or of a freed one, shows up in
the tests. An op that updates a copied input in place updates the copy,
which from then on is the var's current value.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["MEMCPY_H2D", "MEMCPY_D2H", "insert_transfers", "h2d_kernel", "d2h_kernel"]

MEMCPY_H2D, MEMCPY_D2H = "memcpy_h2d", "memcpy_d2h"
HOST_PLACE, DEVICE_PLACE = "Place(cpu)", "Place(gpu:0)"


def h2d_kernel(xp: Any, x: Any) -> Any:
    """memcpy_h2d: a new device buffer with x's contents (`cupy.array` copies a host or a device
    array alike; on an emulated device, `xp` is NumPy and this is a plain copy)."""
    return xp.array(x, copy=True)


def d2h_kernel(xp: Any, x: Any) -> Any:
    """memcpy_d2h: a new host buffer with x's contents (`.get()` of a CuPy array)."""
    if xp is not np and isinstance(x, xp.ndarray):
        return x.get()
    return np.array(x, copy=True)


def insert_transfers(block: Any, on_device: Callable[[Any], bool], shape_only: Callable[[Any], Iterable[int]],
                     mutated: Callable[[Any], Iterable[int]], skip: Callable[[str], bool],
                     make_op: Callable[[str, str, str, str], Any]) -> dict[int, int]:
    """Insert the copies into `block` (a program the caller owns) in place; returns the old op
    index -> new op index map. `on_device(op)`: the op is a device kernel; `shape_only(op)` and
    `mutated(op)`: input positions read for their shape only / updated in place; `skip(name)`:
    never copied (persistables, holders); `make_op(type, src, dst, callsite)` builds a copy op."""
    side: dict[str, bool] = {}          # var -> its current value lives on the device
    current: dict[str, str] = {}        # var -> the var holding its current value (an updated copy)
    copies: dict[str, str] = {}         # var -> its copy on the other side, for the current version
    new_ops, moved = [], {}
    for old, op in enumerate(block.ops):
        here = on_device(op)
        no_buffer = set(shape_only(op))
        updated = set(mutated(op))
        for p, name in enumerate(op.inputs):
            if name is None or skip(name) or name not in side:
                continue
            name = current.get(name, name)
            src = op.inputs[p]
            if p in no_buffer or side[src] == here:
                op.inputs[p] = name
                continue
            copy = copies.get(src)
            if copy is None:
                copy = _copy_name(src, here)
                if not block.has_var(copy):     # a later version reuses the name (a rewrite)
                    var = block.var(name)
                    block.create_var(copy, var._shape, var._np_dtype)
                new_ops.append(make_op(MEMCPY_H2D if here else MEMCPY_D2H, name, copy, op.callsite))
                copies[src] = copy
            op.inputs[p] = copy
            if p in updated:        # the op updates the copy: it is the var's value from now on
                current[src] = copy
                side[src] = here
                copies.pop(src, None)
        moved[old] = len(new_ops)
        new_ops.append(op)
        for name in op.outputs:
            side[name] = here
            current.pop(name, None)
            copies.pop(name, None)
    block.ops = new_ops
    return moved


def _copy_name(name: str, to_device: bool) -> str:
    src, dst = (HOST_PLACE, DEVICE_PLACE) if to_device else (DEVICE_PLACE, HOST_PLACE)
    return f"{name}_device_{src}_{dst}"
