"""What the frames at a graph break hold: the values the break's generated code must rebuild.

The break code (see sot.codegen.break_code) rebuilds every frame of the inline call stack at the
break from the simulated state: each frame's stack (a caller's under the value its CALL pushes),
the locals the simulation changed (every local of an inlined frame, which has no real frame) and
the contents of the cells a frame made. These functions read that state off the executors; the
translator also asks them which of the recorded tensors the compiled prefix must output.
"""
from __future__ import annotations

from typing import Any

from sot.ir import Symbol

from .breaks import FrameState, GraphBreak, successors
from .trackers import LocalTracker
from .variables import (NULL, BoundMethodVariable, DictVariable, IteratorVariable, ListVariable, TensorVariable,
                        TupleVariable, Variable)

__all__ = ["GENERATED", "below_call", "frame_locals", "live_values", "needed_outputs"]

GENERATED = "__sot_"  # the prefix of every name generated code adds to a frame's locals


def frame_locals(ex: Any) -> tuple[dict[str, Variable], list[str]]:
    """A frame's locals at the break: those the generated code must set (the ones the simulation
    changed; every local of an inlined frame, which has no real frame) and every bound local's name."""
    root = ex.parent is None
    changed, bound = {}, []
    for name in ex.code.co_varnames:
        if name.startswith(GENERATED):
            continue  # a resume or body function's stack or item argument: dead after its prologue
        var = ex.locals.get(name)
        if var is None:
            if root and name in ex.f_locals:
                bound.append(name)  # an argument never read: still in the real frame
            continue
        if var is NULL:
            continue
        bound.append(name)
        if not root or not (isinstance(var.tracker, LocalTracker) and var.tracker.name == name):
            changed[name] = var  # (else: the translated frame's argument itself)
    return changed, bound


def below_call(frame: FrameState) -> list[Variable]:
    """A caller's stack under the value its CALL pushes."""
    ((_, effect, pushed),) = successors(frame.executor.normalised, frame.instruction)
    return frame.stack[:len(frame.stack) + effect - pushed]


def live_values(brk: GraphBreak) -> list[Variable]:
    """Every value the frames at the break hold (stacks, locals and the contents of the cells they
    made): what the generated code rebuilds."""
    values = list(brk.frames[0].stack)
    for frame in brk.frames[1:]:
        values += below_call(frame)
    for frame in brk.frames:
        values += frame_locals(frame.executor)[0].values()
        values += [cell.content for name, cell in frame.executor.cells.items()
                   if name in frame.executor.code.co_cellvars and cell.content is not None]
    return values


def needed_outputs(ex: Any, values: list[Variable]) -> list[Symbol]:
    """The SIR symbols the rebuilt frame needs: tensors the prefix computed, found in `values`."""
    inputs = {id(v) for v in ex.inputs}
    found: dict[Symbol, None] = {}
    seen: set[int] = set()

    def walk(var: Any) -> None:
        if id(var) in seen:
            return
        seen.add(id(var))
        if isinstance(var, TensorVariable) and not var.bound and id(var) not in inputs:
            found[var.symbol] = None
        elif isinstance(var, TupleVariable):  # (an unread list is reloaded, its appends replayed: read none)
            for item in var.appended if isinstance(var, ListVariable) and var.unread else var.items:
                walk(item)
        elif isinstance(var, DictVariable):
            for item in var.items.values():
                walk(item)
        elif isinstance(var, IteratorVariable):
            for item in var.items[var.position:]:
                walk(item)
        elif isinstance(var, BoundMethodVariable):
            walk(var.receiver)

    for value in values:
        walk(value)
    return list(found)
