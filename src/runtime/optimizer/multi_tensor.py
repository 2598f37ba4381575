"""Multi-tensor optimizer updates: one kernel call for many small parameters.

An elementwise update (SGD, Momentum, Adam, AdamW, RMSProp, Adagrad, Adamax: an element's new
value depends only on that element and on scalars) gives the same bits whether it runs once per
parameter or once over several parameters laid end to end, as long as they share the scalars
(learning rate, attributes, beta powers). Each kernel call costs a dozen ufunc calls of fixed
overhead, which dominates for small parameters (biases, norms, small heads); so `plan` stages
small parameters (on one place) that share their scalars, when there are enough of them, in flat buffers
(gradients and parameters copied in, parameters copied back) and each `Batch` updates its
parameters with one call. Larger parameters are updated in place one by one: for them the copies
would cost more than the calls they save.

Accumulators are allocated flat (`allocate`): one buffer per accumulator name and dtype, small
parameters first, so a batch's moments are one contiguous slice of it and are updated where they
live. A batch checks that layout (`Slots`) before relying on it and copies whatever is not laid
out so, so state that was replaced, or created at a later step, is still updated correctly.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..place import module_of, place_of_array
from ..tensor import Tensor

__all__ = ["SMALL", "MIN_BATCH", "BATCH", "Slots", "Batch", "allocate", "plan"]

# When staging pays, measured on Adam, float32, one thread. Staging a parameter costs copies in
# proportion to its size, and saves one kernel call (a dozen ufunc calls): past SMALL elements the
# copies cost more (six parameters of 16384: 176 us one by one, 202 us staged; of 1024: 83 -> 71 us).
# A batch has a fixed cost too, so it takes MIN_BATCH parameters (three of 64: 39 -> 43 us; six:
# 72 -> 63 us). At most BATCH elements per batch keep its dozen passes in cache (100 parameters of
# 64x64 and 64 elements: 1.6 ms one by one, 1.1 ms in batches of 64K elements, 2.1 ms in one batch).
SMALL = 1 << 13
MIN_BATCH = 5
BATCH = 1 << 16

# update inputs are (param, grad, learning_rate, states...): the kernel writes param and states
_STATES = 3

# array id -> (flat buffer, start, stop, the view handed out); the view is kept to tell a live
# entry from a reused id
Slots = dict


def allocate(requests: list[tuple[str, tuple, Any, Any]], slots: Slots) -> list[Tensor]:
    """Accumulator Tensors for `requests` of (name, shape, dtype, initial value: a number or an
    array), NumPy views of one flat buffer per dtype in request order (recorded in `slots`)."""
    by_dtype: dict = {}
    for i, (_, shape, dtype, _) in enumerate(requests):
        by_dtype.setdefault(np.dtype(dtype), []).append(i)
    out: list = [None] * len(requests)
    for dtype, members in by_dtype.items():
        sizes = [math.prod(requests[i][1]) for i in members]
        buf = np.empty(sum(sizes), dtype)
        start = 0
        for i, size in zip(members, sizes):
            name, shape, _, value = requests[i]
            view = buf[start:start + size].reshape(shape)
            view[...] = value
            slots[id(view)] = (buf, start, start + size, view)
            t = Tensor._wrap(view)
            t.name = name
            t.persistable = True
            out[i] = t
            start += size
    return out


def _span(slots: Slots, arrays: list):
    """The flat slice holding `arrays` back to back, or None when they are not laid out so."""
    entry = slots.get(id(arrays[0]))
    if entry is None or entry[3] is not arrays[0]:
        return None
    buf, start, stop, _ = entry
    for a in arrays[1:]:
        entry = slots.get(id(a))
        if entry is None or entry[3] is not a or entry[0] is not buf or entry[1] != stop:
            return None
        stop = entry[2]
    return buf[start:stop]


def _key(arrays: tuple, attrs: dict, scalars_at: tuple) -> tuple | None:
    """What a batch must share (None: update this parameter alone)."""
    param = arrays[0]
    if param.size > SMALL or param.base is not None:
        return None  # a view may alias another parameter: keep the one-by-one order of writes
    # scalars by their bits and attributes by repr, so -0.0 and 0.0 never share a batch
    return (place_of_array(param), param.dtype, repr(attrs), *[arrays[k].tobytes() for k in scalars_at])


class Batch:
    """Small parameters updated by one kernel call on staged flat arrays."""

    __slots__ = ("params", "attrs", "staged", "writes", "xp")

    def __init__(self, members: list, per_element: tuple, slots: Slots):
        self.params = [p for p, _, _ in members]
        self.attrs = members[0][2]
        self.xp = module_of(members[0][1][0])  # the parameters' (a learning rate may stay on the host)
        self.staged: list = []
        # what the kernel's writes to a staged copy go back to: (copy, a flat run of states or the
        # members' arrays, per element?)
        self.writes: list = []
        for k, each in enumerate(per_element):
            arrays = [m[1][k] for m in members]
            span = _span(slots, arrays) if k >= _STATES else None
            if each and span is not None:
                self.staged.append(span)  # the flat state itself, updated where it lives
                continue
            # a scalar gets a private copy: the kernel may update it (a beta power)
            staged = self.xp.concatenate([a.reshape(-1) for a in arrays]) if each else arrays[0].copy()
            self.staged.append(staged)
            if k == 0 or k >= _STATES:  # the gradient and learning rate are only read
                self.writes.append((staged, arrays if span is None else span, each))

    def run(self, kernel: Callable) -> None:
        """Update, then write the staged copies of the parameters and states back."""
        kernel(self.xp, *self.staged, **self.attrs)
        for staged, target, each in self.writes:
            if type(target) is not list:
                target[...] = staged  # one flat run of scalar states: each takes the new value
                continue
            start = 0
            for a in target:
                if each:
                    a[...] = staged[start:start + a.size].reshape(a.shape)
                    start += a.size
                else:
                    a[...] = staged
        for p in self.params:
            p._version += 1


def plan(updates: list, per_element: tuple, slots: Slots) -> tuple[list, list[Batch]]:
    """Split (param Tensor, arrays, attrs) updates of an elementwise kernel into those run one by
    one and batches of small parameters sharing their scalars. Batches stage their copies here,
    so everything that allocates happens before the first parameter changes."""
    single, groups = [], {}
    scalars_at = tuple(k for k, each in enumerate(per_element) if not each)
    for update in updates:
        key = _key(update[1], update[2], scalars_at)
        if key is None:
            single.append(update)
        else:
            groups.setdefault(key, []).append(update)
    batches = []
    for members in groups.values():
        for packed in _packs(members):
            if len(packed) < MIN_BATCH:
                single.extend(packed)
            else:
                batches.append(Batch(packed, per_element, slots))
    return single, batches


def _packs(members: list) -> list[list]:
    """`members` cut into runs of at most BATCH elements (one parameter may exceed it alone)."""
    packs, current, size = [], [], 0
    for m in members:
        n = m[1][0].size
        if current and size + n > BATCH:
            packs.append(current)
            current, size = [], 0
        current.append(m)
        size += n
    if current:
        packs.append(current)
    return packs
