"""Aliasing between the values a translation read: what it relied on about which of them are one object.

A translation that writes into an object it read (`a.v = 1`, a list append, a tensor updated in place)
simulates the write once, on the Variables it holds: whether another value it read is the same object,
or a tensor viewing the same memory, decides what later reads see and what the replay writes. So the
relation it saw is guarded: `a is b` or `a is not b` between each object written into and every other
object of its type read from the frame, and for a tensor input written in place, that it shares no
memory with any other tensor read (`disjoint_memory`; a translation where they do share runs the update
for real: see `OpcodeExecutor.writes_back`). A tensor the frame made and stored where code outside it can
reach it (`held_outside`) is not updated in place by renaming either.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from runtime import Tensor
from sot.guards import Guard
from sot.guards.source import Source, expression

from .live import reachable
from .side_effects import Refill, SetAttr, SetGlobal, SideEffects, WriteBack
from .variables import CellVariable, InstanceVariable, TensorVariable, Variable
from .wording import shown

__all__ = ["aliasing_guards", "shares_memory", "held_outside"]


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


def _pairs(target: Variable, tracked: list[Variable], kind: type) -> list[tuple[Variable, Source, Source]]:
    """(other, first source, second source) for each other `kind` Variable read from a source of its own,
    when `target` is one too: the two sources in a fixed order, so one pair always gives one guard."""
    src = target.tracker.source
    if src is None or not isinstance(target, kind):
        return []
    return [(other, *sorted((src, other.tracker.source))) for other in tracked
            if isinstance(other, kind) and other.tracker.source not in (None, src)]


def _identity_guards(target: Variable, tracked: list[Variable]) -> list[Guard]:
    """`a is b` / `a is not b` between an object written into and the other objects of its type read."""
    return [Guard(expression(f"{first} {'is' if other.value is target.value else 'is not'} {second}"), "value_eq", True)
            for other, first, second in _pairs(target, tracked, InstanceVariable)
            if type(other.value) is type(target.value)]


def _memory_guards(target: Variable, tracked: list[Variable]) -> list[Guard]:
    """The tensor input written in place shares no memory with any other tensor read."""
    return [Guard(expression(f"({first}, {second})"), "disjoint_memory")
            for other, first, second in _pairs(target, tracked, TensorVariable) if isinstance(other.value, Tensor)]


def held_outside(tensor: TensorVariable, effects: SideEffects, cells: list[CellVariable]) -> str | None:
    """Where the frame stored `tensor` so that code outside it can reach it (None: nowhere): an attribute
    or global it wrote, a list or dict from outside it wrote into, a closure cell shared with other code
    (directly or inside containers and objects the frame built)."""
    roots: list[tuple[Variable, str]] = []
    for record in effects.records:
        if isinstance(record, SetAttr):
            roots.append((record.value, f"it was stored into the attribute {record.name!r} of {shown(record.target)}"))
        elif isinstance(record, SetGlobal):
            roots.append((record.value, f"it was stored into the global {record.name!r}"))
        elif isinstance(record, Refill):
            roots.append((record.target, f"it was stored into {shown(record.target)} from outside the function"))
    roots += [(cell.content, "it was stored into a closure cell") for cell in cells if cell.real and cell.content]
    for root, where in roots:
        if _reaches(root, tensor):
            return where
    return None


def _reaches(var: Variable, tensor: TensorVariable) -> bool:
    """Whether `var` is `tensor` (a Variable of its symbol) or holds it: in containers or objects the frame built."""
    return any(isinstance(v, TensorVariable) and v.symbol is tensor.symbol for v in reachable([var]))
