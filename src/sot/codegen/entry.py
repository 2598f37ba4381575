"""Generated code that enters an original code elsewhere: a resume function (`resume_code`) and a
loop's body function (`loop_body`) are the frame's own code object, copied, with a prologue that
sets up the stack and jumps into it, and parameters for the values it is given.

What they share is here: the copy of the original's instructions (the original is not changed:
its own frames still run it), the parameter layout, and the first instructions of the prologue.
"""
from __future__ import annotations

import dataclasses
import inspect

from sot.pyversion import CodeMeta, ExceptionEntry, Instruction, NormalisedCode

__all__ = ["copy_entry", "copy_instructions", "entry_prologue", "with_params"]


def copy_instructions(normalised: NormalisedCode) -> dict[int, Instruction]:
    """A copy of each instruction of `normalised`, by the id of the original, its jump aimed at the copy."""
    mapping = {id(ins): dataclasses.replace(ins) for ins in normalised.instructions}
    for ins in mapping.values():
        if ins.target is not None:
            ins.target = mapping[id(ins.target)]
    return mapping


def copy_entry(entry: ExceptionEntry, mapping: dict[int, Instruction]) -> ExceptionEntry:
    """`entry` over the copies of its instructions (see `copy_instructions`)."""
    return ExceptionEntry(mapping[id(entry.start)], mapping[id(entry.end)], mapping[id(entry.target)], entry.depth,
                          entry.lasti)


def with_params(meta: CodeMeta, params: list[str]) -> CodeMeta:
    """`meta` for code whose parameters are `params`, positional, first among its locals. Its name,
    qualified name and file stay the user's: the generated function runs as the user's function,
    and frames, tracebacks and logging name it as eager code does."""
    return meta.replace(argcount=len(params), posonlyargcount=0, kwonlyargcount=0, docstring=None,
                        flags=meta.flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
                        varnames=(*params, *(v for v in meta.varnames if v not in params)))


def entry_prologue(meta: CodeMeta) -> list[Instruction]:
    """The first instructions of generated code entering an original code elsewhere: a closure's code
    copies its free variables into the frame first (the original's COPY_FREE_VARS is jumped over)."""
    free = len(meta.freevars)
    return [*([Instruction("COPY_FREE_VARS", arg=free, argval=free)] if free else []),
            Instruction("RESUME", arg=0, argval=0)]
