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
from .variables import (NULL, BoundMethodVariable, DictVariable, IteratorVariable, ListVariable, NewObjectVariable,
                        TensorVariable, TupleVariable, Variable)

__all__ = ["GENERATED", "below_call", "frame_locals", "live_values", "needed_outputs", "reachable"]

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


def reachable(values: list[Variable]) -> list[Variable]:
    """Every Variable the caller reaches through `values`: themselves, the items of containers the frame
    built (of a list it only appended to, the appended ones), the attributes of objects it made, bound
    methods' receivers. Each once, in the order met."""
    found: dict[int, Variable] = {}

    def walk(var: Any) -> None:
        if id(var) in found:
            return
        found[id(var)] = var
        if isinstance(var, ListVariable) and var.unread:  # (an unread list is reloaded, its appends replayed)
            items = var.appended
        elif isinstance(var, TupleVariable):
            items = var.items
        elif isinstance(var, DictVariable):
            items = list(var.items.values())
        elif isinstance(var, IteratorVariable):
            items = var.items[var.position:]
        elif isinstance(var, NewObjectVariable):
            items = list(var.attrs.values())
        elif isinstance(var, BoundMethodVariable):
            items = [var.receiver]
        else:
            items = []
        for item in items:
            walk(item)

    for value in values:
        walk(value)
    return list(found.values())


def needed_outputs(ex: Any, values: list[Variable]) -> list[Symbol]:
    """The SIR symbols the rebuilt frame needs: tensors the prefix computed, reachable through `values`."""
    inputs = {id(v) for v in ex.inputs}
    found = {var.symbol: None for var in reachable(values)
             if isinstance(var, TensorVariable) and not var.bound and id(var) not in inputs}
    return list(found)
