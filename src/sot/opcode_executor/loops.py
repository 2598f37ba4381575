"""Loops whose body breaks: decide how they run.

A break in a loop body continues the loop in a resume function, which breaks again in the next
iteration and calls the next resume function from inside it: one more nested Python call per
iteration. That is fine for a few iterations; `hot_loop` says when it is not (more than
SOT_MAX_LOOP_BREAKS iterations left, or an unknown number).

A hot loop of the translated frame is then run for real by the generated code, which calls a
*body function* per iteration (`plan_loop` here; its code: sot.codegen.loop_body): the loop body
as a function of its own, translated like a resume function (so its work is compiled and its own
break resumes inside it), whose parameters are the item (a `for` loop's) and the locals bound at
the loop head, and which returns `(flag, value, *changed locals)`: flag 0 at the end of an
iteration or a `continue`, 1 for a `return value` in the body, 2 + i for leaving by the loop's
i-th exit (a `break`; a `while` loop's failing test). A `while` loop's body includes its test.
Locals first assigned in the body (unbound at the head) must be body temporaries: assigned before
any read in every iteration and not read after the loop before being assigned again; otherwise,
and for loops with a `try` or `with` inside them, `plan_loop` says no and the frame's rest runs
eagerly instead (SOT-C002). A loop inside a `try` or `with` body is fine: what its body raises
leaves the body function and goes to the handler from the generated code.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from sot import config
from sot.pyversion import ExceptionEntry, NormalisedCode

from .breaks import FrameState
from .variables import (IteratorVariable, LazyIteratorVariable, ObjectVariable, TensorVariable, TupleVariable,
                        Variable)

__all__ = ["LoopPlan", "enclosing", "hot_loop", "loops_around", "outermost_loop", "past_unroll_limit", "plan_loop"]

_READS = frozenset({"LOAD_FAST", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"})
_STOPS = frozenset({"JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"})  # no fall-through


@dataclass(frozen=True)
class LoopPlan:
    """How a hot loop runs for real: its first instruction (`head`: a `for` loop's FOR_ITER, a
    `while` loop's first) and last (`end`), where it goes when it leaves (`exits`), the body
    function's parameters after the item (`params`: every local bound at the head, in order) and
    the locals it hands back (`changed`)."""

    head: int
    end: int
    is_for: bool
    exits: tuple[int, ...]
    params: tuple[str, ...]
    changed: tuple[str, ...]


def loops_around(code: NormalisedCode, index: int) -> list[tuple[int, int]]:
    """The (head, last instruction) of every loop of `code` containing `index`, outermost first: a
    backward jump reached without an exception (3.12 jumps back from a `with` block's handler to
    the code after the block, which is no loop)."""
    ends: dict[int, int] = {}
    for n in _normal_flow(code):
        ins = code.instructions[n]
        if ins.target is not None and (head := code.index(ins.target)) < n:
            ends[head] = max(ends.get(head, n), n)
    return sorted((head, end) for head, end in ends.items() if head <= index <= end)


def _normal_flow(code: NormalisedCode) -> set[int]:
    """The instructions reachable from the first one by falling through and jumping."""
    seen: set[int] = set()
    work = [0]
    while work:
        n = work.pop()
        if n in seen or n >= len(code.instructions):
            continue
        seen.add(n)
        ins = code.instructions[n]
        if ins.opname not in _STOPS:
            work.append(n + 1)
        if ins.target is not None:
            work.append(code.index(ins.target))
    return seen


def past_unroll_limit(iterator: Variable) -> bool:
    """Whether the translated frame's FOR_ITER stops unrolling the loop over `iterator` (SOT-C003): it
    unrolled SOT_MAX_UNROLL items and more are left. Not where the next item is pinned by identity
    (a Layer, a parameter: a body function would be translated once per item, so translations would
    grow with the loop's length): such a loop is unrolled whole."""
    return isinstance(iterator, IteratorVariable) and config.max_unroll() <= iterator.position < len(
        iterator.items) and not _pinned(iterator.items[iterator.position])


def _pinned(var: Variable) -> bool:
    """Whether a translation guards `var` by identity (directly or through an item of a tuple)."""
    if isinstance(var, TupleVariable):
        return any(_pinned(v) for v in var.items)
    if isinstance(var, TensorVariable):
        return var.bound
    return isinstance(var, ObjectVariable)


def hot_loop(frame: FrameState, limit: int) -> str | None:
    """Why the frame's resume function must not nest one call per iteration: its instruction is
    inside loops of the frame that would break more than `limit` more times, or an unknown number
    of times (a `while`, an iterator of unknown length), or it is the head of a loop longer than
    SOT_MAX_UNROLL (which then runs as a loop, its body translated once whatever its length); None
    if not."""
    code = frame.executor.normalised
    if frame.executor.parent is None and frame.instruction.opname == "FOR_ITER" and frame.stack and \
            past_unroll_limit(frame.stack[-1]):
        return f"a loop longer than SOT_MAX_UNROLL={config.max_unroll()} at line {frame.instruction.lineno}"
    loops = loops_around(code, code.index(frame.instruction))
    iterators = [v for v in frame.stack if _remaining(v) is not None]
    left = 1
    for head, _ in reversed(loops):  # innermost first: the iterators on the stack are the innermost loops' last
        if code.instructions[head].opname != "FOR_ITER":
            return f"a while loop at line {code.instructions[head].lineno}"
        count = _remaining(iterators.pop()) if iterators else -1
        if count < 0:
            return f"a loop over an iterator of unknown length at line {code.instructions[head].lineno}"
        left *= count + 1
    return f"loops with {left} iterations left" if left > limit else None


def _remaining(var: Any) -> int | None:
    """Items left in an iterator Variable (-1: unknown length); None if `var` is no iterator."""
    if isinstance(var, IteratorVariable):  # its items are known at translation time
        return len(var.items) - var.position
    if isinstance(var, LazyIteratorVariable):  # (a generator: how long it runs is known when it has run)
        return -1
    if not isinstance(var, ObjectVariable):
        return None  # (a constant's value may be a dynamic number's, which reading would specialise)
    value = var.value
    if hasattr(type(value), "__next__"):
        return operator.length_hint(value, -1)
    return None


def outermost_loop(code: NormalisedCode, index: int) -> tuple[int, int] | None:
    """The outermost loop of `code` containing instruction `index`: (its head, its end)."""
    loops = loops_around(code, index)
    return loops[0] if loops else None


def plan_loop(code: NormalisedCode, head: int, end: int, bound: list[str]) -> LoopPlan | None:
    """The plan for running the loop at `head` for real with a body function, or None where its
    body cannot be one (see the module docstring)."""
    ins = code.instructions
    around = enclosing(code, head, end)
    if around is None:
        return None  # an exception raised in the body must reach a handler in this frame
    is_for = ins[head].opname == "FOR_ITER"
    first = head + 1 if is_for else head
    if any(e.lasti for e in around) and any(i.opname == "RETURN_VALUE" for i in ins[first:end + 1]):
        return None  # a `return` leaves a `with` block through its __exit__, which the body function has not
    if any(i.opname in ("LIST_APPEND", "SET_ADD", "MAP_ADD") for i in ins[first:end + 1]):
        return None  # a comprehension's loop (3.12+ inline it) adds to its result under the iterator: a
        #              stack item the body function has only a placeholder for
    exits: list[int] = []
    for n in range(first, end + 1):
        target = ins[n].target
        if target is None or head <= code.index(target) <= end:
            continue
        if is_for and (ins[n].opname != "JUMP" or ins[n - 1].opname != "POP_TOP"):
            return None  # only `break` (pop the iterator, jump out) leaves a for loop's body by a jump
        exits.append(code.index(target))
    if ins[end].opname not in _STOPS:
        exits.append(end + 1)  # a while loop's last test falls through out of it
    stored = {i.argval for i in ins[first:end + 1] if i.opname in ("STORE_FAST", "DELETE_FAST")}
    if any(i.opname == "DELETE_FAST" for i in ins[first:end + 1]):
        return None
    temporaries = stored - set(bound)
    exits_all = [*exits, code.index(ins[head].target)] if is_for else exits
    if _read_after(code, exits_all, temporaries) or not _assigned_before_read(code, first, end, temporaries):
        return None
    return LoopPlan(head, end, is_for, tuple(dict.fromkeys(exits)), tuple(bound),
                    tuple(n for n in bound if n in stored))


# left out of exception ranges by CPython (a conditional jump tests an exact bool there: 3.13's
# compare made it, or the jump's folded TO_BOOL, which keeps the jump inside the range)
_NEVER_RAISE = frozenset({"JUMP", "NOP", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE",
                          "POP_JUMP_IF_NOT_NONE"})


def enclosing(code: NormalisedCode, head: int, end: int) -> list[ExceptionEntry] | None:
    """The exception entries of the `try` or `with` around the whole loop from `head` to `end`
    ([]: none), or None where a handler covers only part of it (a `try` in the body). What the
    body raises then leaves the body function, and the generated code running the loop sends it to
    that handler (see sot.codegen.break_code). One range may be split into entries at instructions
    that cannot raise (3.12+ leave jumps out), so it is the entries of one handler covering every
    other instruction of the loop."""
    overlapping = [e for e in code.exception_table if code.index(e.start) <= end and code.index(e.end) >= head]
    if not overlapping:
        return []
    covered = {n for e in overlapping for n in range(code.index(e.start), code.index(e.end) + 1)}
    can_raise = {n for n in range(head, end + 1) if code.instructions[n].opname not in _NEVER_RAISE}
    if len({(id(e.target), e.depth, e.lasti) for e in overlapping}) > 1 or not can_raise <= covered:
        return None
    return overlapping


def _read_after(code: NormalisedCode, starts: list[int], names: set[str]) -> bool:
    """Whether any of `names` may be read after the loop before being assigned again: on a path from
    one of `starts` (the loop's exits), or anywhere in an exception handler (not followed by paths)."""
    if not names:
        return False
    ins = code.instructions
    flow = _normal_flow(code)
    if any(i.opname in _READS and i.argval in names for n, i in enumerate(ins) if n not in flow):
        return True
    seen: set[tuple[int, frozenset]] = set()
    work = [(s, frozenset(names)) for s in starts]
    while work:
        n, pending = work.pop()
        if n >= len(ins) or (n, pending) in seen or not pending:
            continue
        seen.add((n, pending))
        if ins[n].opname in _READS and ins[n].argval in pending:
            return True
        if ins[n].opname == "STORE_FAST":
            pending = pending - {ins[n].argval}
        if ins[n].opname not in _STOPS:
            work.append((n + 1, pending))
        if ins[n].target is not None:
            work.append((code.index(ins[n].target), pending))
    return False


def _assigned_before_read(code: NormalisedCode, start: int, end: int, names: set[str]) -> bool:
    """Whether each of `names` is assigned before every read of it on every path through one
    iteration of the body [start, end] (a forward "definitely assigned" analysis from its start)."""
    if not names:
        return True
    ins = code.instructions
    assigned: dict[int, frozenset[str]] = {start: frozenset()}
    work = [start]
    while work:
        n = work.pop()
        here = assigned[n]
        if ins[n].opname in _READS and ins[n].argval in names and ins[n].argval not in here:
            return False
        after = here | {ins[n].argval} if ins[n].opname == "STORE_FAST" and ins[n].argval in names else here
        successors = []
        if ins[n].opname not in _STOPS and n + 1 <= end:
            successors.append(n + 1)
        if ins[n].target is not None and start <= (t := code.index(ins[n].target)) <= end:
            successors.append(t)
        for s in successors:
            merged = after if s not in assigned else assigned[s] & after
            if s not in assigned or merged != assigned[s]:
                assigned[s] = merged
                work.append(s)
    return True
