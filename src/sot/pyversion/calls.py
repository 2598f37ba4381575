"""The two stack slots under a call's arguments, in the order the running CPython keeps them.

CALL expects a callable and a NULL (or `self`) below its arguments. On 3.11 and 3.12 an explicit
NULL (PUSH_NULL, LOAD_GLOBAL's null bit) sits below the callable; on 3.13 it sits above it. The
simulated stack and all generated code place the pair through these two functions, so nothing
outside this package knows which order the interpreter uses.
"""
from __future__ import annotations

from typing import Any

from .instruction import Instruction
from .versions import PY313

__all__ = ["with_null", "call_slots"]


def with_null(load: list[Instruction]) -> list[Instruction]:
    """`load` (instructions that push a callable) with the NULL slot CALL expects beside it."""
    null = Instruction("PUSH_NULL")
    return [*load, null] if PY313 else [null, *load]


def call_slots(callable_: Any, null: Any) -> list[Any]:
    """The callable and its NULL as the two stack items CALL expects, deepest first."""
    return [callable_, null] if PY313 else [null, callable_]
