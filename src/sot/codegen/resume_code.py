"""The code of resume functions: a frame's original code entered after a graph break.

`resume_code(code, normalised, target, depth, made, bound)` is `code` with a prologue that pushes
its stack arguments and jumps to `target` (after a caller's CALL: the callee's result on top); its
parameters are the stack items and the frame's bound locals. The stack items it is not given it
makes itself (`made`): a NULL slot, or the `__exit__` of a grad-mode context it enters again, so
that its translation simulates the `with` block from its start. A stack argument is deleted once
pushed, so the frame's locals are the user's only. The code of a closure takes the frame's cells
as free variables, so writes through them are shared as CPython closures share them.

Resume functions are canonical: a resume function's own resume enters the original code, and each
entry point (target, stack depth, the items made, the bound locals) has one code object, so a loop
that breaks in every iteration reuses one resume function, translated once.
"""
from __future__ import annotations

import itertools
import types
import weakref
from typing import Any

from sot.opcode_executor.live import GENERATED
from sot.pyversion import Instruction, NormalisedCode, decode, encode, with_null

from .entry import copy_entry, copy_instructions, entry_prologue, with_params

__all__ = ["CodeMap", "is_resume_code", "resume_code", "stack_slot"]

_resume_ids = itertools.count()


class CodeMap:
    """A map keyed by code objects' identity, forgetting a code when it dies. (Code objects compare
    by value: a copy made by `code.replace()` must not share what the original maps to.)"""

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, code: types.CodeType) -> Any:
        item = self._items.get(id(code))
        return item[1] if item is not None and item[0]() is code else None

    def set(self, code: types.CodeType, value: Any) -> None:
        key = id(code)
        self._items[key] = (weakref.ref(code, lambda _: self._items.pop(key, None)), value)

    def setdefault(self, code: types.CodeType, default: Any) -> Any:
        """What `code` maps to, mapped to `default` first where it maps to nothing."""
        value = self.get(code)
        if value is None:
            self.set(code, default)
            value = default
        return value


_ORIGINS = CodeMap()  # a resume function's code -> (a weak ref to the code it continues, its decoded form,
#                       the prologue's length)
_RESUMES = CodeMap()  # an original code -> its resume codes by (target index, stack depth, NULL slots, bound locals)
_ENTERED = CodeMap()  # every resume function's code -> True: reports tell it from the user's code of the same name
_STACK_PREFIX = f"{GENERATED}s"


def is_resume_code(code: types.CodeType) -> bool:
    """Whether `code` is a resume function's (it has the user's name, file and first line)."""
    return _ENTERED.get(code) is not None


def stack_slot(name: str) -> int | None:
    """The stack slot at the break that a resume function's parameter `name` carries (None: not one), so
    a report can say what a guard on it checks without the generated name."""
    number, _, slot = name.removeprefix(_STACK_PREFIX).partition("_")
    return int(slot) if name.startswith(_STACK_PREFIX) and number.isdigit() and slot.isdigit() else None


def resume_code(code: types.CodeType, normalised: NormalisedCode, target: Instruction, depth: int,
                made: dict[int, type | None], bound: list[str]) -> types.CodeType:
    """The code of `code` (decoded: `normalised`) entered at `target` with `depth` stack items passed in
    as arguments before the bound locals, except those its prologue makes (`made`: index -> None for
    a NULL slot, or the type of a grad-mode context it enters, leaving that context's `__exit__`). A
    resume function's own resume enters the original code, and each entry point has one code object:
    a loop that breaks in every iteration reuses one resume function (translated once), where fresh
    code per iteration would translate again in every iteration."""
    origin = _ORIGINS.get(code)
    if origin is not None and origin[0]() is not None:
        code, original, offset = origin[0](), origin[1], origin[2]
        target = original.instructions[normalised.index(target) - offset]
        normalised = original
    key = (normalised.index(target), depth, frozenset(made.items()), tuple(bound))
    known = _RESUMES.setdefault(code, {})
    if key not in known:
        entered, offset = _enter_at(normalised, target, depth, made, bound)
        decoded = decode(entered)
        if [i.opname for i in decoded.instructions[offset:]] == [i.opname for i in normalised.instructions]:
            _ORIGINS.set(entered, (weakref.ref(code), normalised, offset))
        _ENTERED.set(entered, True)
        known[key] = entered
    return known[key]


def _enter_at(normalised: NormalisedCode, target: Instruction, depth: int, made: dict[int, type | None],
              bound: list[str]) -> tuple[types.CodeType, int]:
    """A new code object: `normalised` with a prologue that pushes its stack arguments (or makes them:
    see `resume_code`) and jumps to `target`; and the prologue's length."""
    mapping = copy_instructions(normalised)
    copies = [mapping[id(ins)] for ins in normalised.instructions]
    table = tuple(copy_entry(e, mapping) for e in normalised.exception_table)
    meta = normalised.meta  # its name, qualified name and file: the user's, as tracebacks and loggers show
    if meta.cellvars:  # its cells are the frame's, passed in as free variables, as CPython closures share them
        for ins in copies:
            if ins.opname in ("MAKE_CELL", "COPY_FREE_VARS"):  # (the original's entry: jumped over)
                ins.opname, ins.arg, ins.argval = "NOP", None, None
        meta = meta.replace(freevars=(*meta.freevars, *meta.cellvars), cellvars=(),
                            varnames=tuple(v for v in meta.varnames if v not in meta.cellvars))
    n = next(_resume_ids)
    stack_names = {i: f"{_STACK_PREFIX}{n}_{i}" for i in range(depth) if i not in made}  # unique: never a local's name
    params = [*stack_names.values(), *bound]
    meta = with_params(meta, params)
    prologue = entry_prologue(meta)
    for i in range(depth):
        if i in stack_names:  # pushed, then unbound: the frame's locals are the user's only
            prologue += [Instruction("LOAD_FAST", argval=stack_names[i]),
                         Instruction("DELETE_FAST", argval=stack_names[i])]
        elif made[i] is None:
            prologue.append(Instruction("PUSH_NULL"))
        else:  # `with <context type>():` entered again, its __exit__ left on the stack
            prologue += [*with_null([Instruction("LOAD_CONST", argval=made[i])]), Instruction("CALL", arg=0, argval=0),
                         Instruction("BEFORE_WITH"), Instruction("POP_TOP")]
    prologue.append(Instruction("JUMP", target=mapping[id(target)]))
    for ins in prologue:
        ins.lineno = target.lineno
    return encode(NormalisedCode(tuple(prologue + copies), table, meta)), len(prologue)
