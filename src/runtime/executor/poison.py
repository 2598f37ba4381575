"""Poisoning of freed buffers, a debug mode of the executor's GC (FLAGS_executor_poison_freed).

Freeing a var only drops the run's reference to its array, so a consumer that reads the var too
late gets `None` (an error) or, if it already holds the array, still the right numbers: a GC
that frees too early can go unseen. With poisoning on, a freed buffer is overwritten in place
with a sentinel (NaN for floating and complex dtypes, the minimum for signed integers, the
maximum for unsigned ones, True for bools) and stays in its slot, as freed device memory keeps
its address until the allocator hands it out again: a use after free computes with the
sentinel, and the wrong result shows in a test. A buffer that another live value still shares
(a view, an in-place output, a fed or fetched array, a program attribute) is not free memory and
is left alone; so are read-only arrays (broadcast stubs). The buffer of a var a stream's
allocator recycles (executor/allocator.py) goes on to that stream's next ops, which overwrite
it; the var's slot gets a poisoned array of its own instead, so a late read still sees NaN.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["poison_value", "poisoned_like", "release_poisoned"]


def poison_value(dtype: np.dtype) -> Any:
    """The sentinel a freed buffer of `dtype` is filled with."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    if dtype.kind == "b":
        return True
    return None


def poisoned_like(a: np.ndarray) -> np.ndarray:
    """A new array of `a`'s shape and (floating) dtype holding the sentinel: what the slot of a
    freed var shows when its buffer itself is handed on to another op (a stream's pool)."""
    return np.full(a.shape, poison_value(a.dtype), a.dtype)


def release_poisoned(slots: list, v: int, others: Iterable[Iterable[Any]], keep: Iterable[Any]) -> bool:
    """Poison the array in `slots[v]` unless another live value shares its memory; True if it did.
    `others`: lists of values that stay alive (feeds, fetches); `keep`: arrays never to touch."""
    a = slots[v]
    if not isinstance(a, np.ndarray) or not a.flags.writeable or a.size == 0:
        return False
    value = poison_value(a.dtype)
    if value is None:
        return False
    for k, b in enumerate(slots):
        if k != v and isinstance(b, np.ndarray) and np.may_share_memory(a, b):
            return False
    for group in (*others, keep):
        for b in group:
            if isinstance(b, np.ndarray) and np.may_share_memory(a, b):
                return False
    a[...] = value
    return True
