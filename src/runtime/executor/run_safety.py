"""The run-safety analysis of a build: what keeps a failed run from changing the scope.

Ops that produce a persistable's new value write it to the run's own storage; the scope's cells
are updated only after the last op (`commits`). In-place kernels (optimizer updates) change their
inputs' arrays, which for a persistable read from the scope are the scope's arrays; the plan makes
those updates undoable at the lowest cost: the in-place ops that end the program (the optimizer
ops of a training step, with only fetches after them) are checked with their meta functions on
the run's actual arrays before the first of them runs (`validate_tail`; the same "validate
everything, then mutate" rule as eager `optimizer.step`), so no copy is made; an in-place update
of a scope array that is followed by ordinary ops gets a snapshot (one copy) that is written back
if a later op fails. A var read before any op writes it must be a persistable (`loads`) or fed;
a fed var an op updates in place is copied first (`copy_feeds`: the caller's array is never written).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..ops.registry import OpDef
from .plan import FETCH_OP, NO_SLOT, Instruction
from .transfer import MEMCPY_D2H

__all__ = ["RunSafety", "analyse_run_safety"]


@dataclass(frozen=True)
class RunSafety:
    """The slots a run loads from the scope and commits to it, and how in-place updates are undone."""

    loads: list[int]                      # persistables read from their scope cells, in first-use order
    commits: list[int]                    # persistables whose new array the run's end stores in the scope
    copy_feeds: set[int]                  # fed vars an op updates in place
    validate_tail: int | None             # first op of the trailing updates checked before they run
    snapshots: dict[int, list[int]]       # op -> scope arrays copied before it updates them
    checked_snapshots: dict[int, list[int]]  # the same under the nan/inf check, which may fail after any update


def analyse_run_safety(instrs: Sequence[Instruction], opdefs: Sequence[OpDef | None], names: Sequence[str],
                       pers: set[int], fed: set[int], holders: set[int]) -> RunSafety:
    """Loads, commits, missing feeds (a ValueError naming the var and the op that reads it),
    skip-inplace copies and the guards of in-place updates."""
    written: set[int] = set()
    loads: list[int] = []
    scope_arrays: set[int] = set()     # persistables whose current value is the scope's array
    guards: list[tuple[int, int]] = []
    guarded: set[int] = set()
    for ins in instrs:
        for s in ins.inputs:
            if s == NO_SLOT or s in holders or s in written or s in scope_arrays:
                continue
            if s not in pers:
                raise ValueError(
                    f"Executor.run: variable '{names[s]}' is read by op '{ins.type}' (#{ins.index} of the "
                    f"plan, built at {ins.callsite}) but it is not fed and no op before it writes it; "
                    f"pass it in `feed`")
            loads.append(s)
            scope_arrays.add(s)
        for s in sorted(ins.inplace):
            if s in scope_arrays and s not in guarded:
                guards.append((ins.index, s))
                guarded.add(s)
        for s in ins.writes:
            if s not in ins.inplace:
                scope_arrays.discard(s)  # a new array: staged until the commit
            written.add(s)
    start = _tail_start(instrs, opdefs)
    snapshots: dict[int, list[int]] = {}
    checked_snapshots: dict[int, list[int]] = {}
    for i, s in guards:
        checked_snapshots.setdefault(i, []).append(s)
        if i < start:
            snapshots.setdefault(i, []).append(s)
    return RunSafety(loads=loads, commits=sorted(s for s in pers if s in written and s not in scope_arrays),
                     copy_feeds={s for s in fed if any(s in ins.inplace for ins in instrs)},
                     validate_tail=start if any(i >= start for i, _ in guards) else None,
                     snapshots=snapshots, checked_snapshots=checked_snapshots)


def _tail_start(instrs: Sequence[Instruction], opdefs: Sequence[OpDef | None]) -> int:
    """Start of the longest suffix of in-place kernels and fetches whose inputs all exist at
    its start (no op of the suffix makes a new value another one of them reads)."""
    start = len(instrs)
    while start > 0:
        ins, d = instrs[start - 1], opdefs[start - 1]
        if not (ins.kind in (FETCH_OP, MEMCPY_D2H) or (d is not None and d.inplace and ins.inplace_pair is None)):
            break
        start -= 1
    i, fresh = start, {}
    while i < len(instrs):
        ins = instrs[i]
        clash = [fresh[s] for s in ins.inputs if s in fresh]
        if clash:
            start, i, fresh = max(clash) + 1, max(clash) + 1, {}
            continue
        if ins.kind == "kernel":
            for s in set(ins.outputs) - ins.inplace:
                fresh[s] = i
        i += 1
    return start
