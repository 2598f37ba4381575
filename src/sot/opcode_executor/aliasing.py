"""Aliasing between the values a translation read: what it relied on about which of them are one object.

A translation that writes into an object it read (`a.v = 1`, a list append, a tensor updated in place)
simulates the write once, on the Variables it holds: whether another value it read is the same object,
or a tensor viewing the same memory, decides what later reads see and what the replay writes. So the
relation it saw is guarded: `a is b` or `a is not b` between each object written into and every other
object of its type read from the frame, and for a tensor input written in place, that it shares no
memory with any other tensor read (`disjoint_memory`; a translation where they do share runs the update
for real: see `OpcodeExecutor.writes_back`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from runtime import Tensor
from sot.guards import Guard

from .side_effects import SideEffects, SetAttr, WriteBack
from .variables import InstanceVariable, TensorVariable, Variable

__all__ = ["aliasing_guards", "shares_memory"]


def shares_memory(a: Tensor, b: Tensor) -> bool:
    """Whether two tensors' arrays may overlap (NumPy's cheap bounds test: a view counts, a copy does not)."""
    return bool(np.may_share_memory(a._data, b._data))


def aliasing_guards(effects: SideEffects, tracked: list[Variable]) -> list[Guard]:
    """The identity and memory relations between written and read values that the translation relied on."""
    guards = []
    written = {id(r.target): r.target for r in effects.records if isinstance(r, SetAttr)}
    for target in written.values():
        guards += _identity_guards(target, tracked)
    for record in effects.records:
        if isinstance(record, WriteBack):
            guards += _memory_guards(record.target, tracked)
    return guards


def _identity_guards(target: Variable, tracked: list[Variable]) -> list[Guard]:
    """`a is b` / `a is not b` between an object written into and the other objects of its type read."""
    src = target.tracker.source
    if src is None or not isinstance(target, InstanceVariable):
        return []
    out = []
    for other in tracked:
        other_src = other.tracker.source
        if not isinstance(other, InstanceVariable) or other_src is None or other_src == src or \
                type(other.value) is not type(target.value):
            continue
        first, second = sorted((src, other_src))
        relation = "is" if other.value is target.value else "is not"
        out.append(Guard(f"{first} {relation} {second}", "value_eq", True))
    return out


def _memory_guards(target: Variable, tracked: list[Variable]) -> list[Guard]:
    """The tensor input written in place shares no memory with any other tensor read."""
    src = target.tracker.source
    if src is None or not isinstance(target, TensorVariable):
        return []
    out = []
    for other in tracked:
        other_src = other.tracker.source
        if isinstance(other, TensorVariable) and other_src is not None and other_src != src and \
                isinstance(other.value, Tensor):
            first, second = sorted((src, other_src))
            out.append(Guard(f"({first}, {second})", "disjoint_memory"))
    return out
