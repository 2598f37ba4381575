"""A placeholder Executor: runs a Program's ops in order by name lookups (no plan, no GC).

It exists so static programs can run while the InterpreterCore (build once: dependency
analysis, GC plan; run many) is written; that core replaces this module behind the same
`Executor(place).run(program, feed, fetch_list, scope, return_numpy)` API.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.registry import get_op
from ..static.framework import Program, Variable, default_main_program
from .scope import Scope, global_scope

__all__ = ["Executor"]


class Executor:
    """Runs programs on `place` (CPU only for now)."""

    def __init__(self, place: Any = None):
        self.place = place

    def run(self, program: Program | None = None, feed: dict | None = None, fetch_list: list | None = None,
            scope: Scope | None = None, return_numpy: bool = True) -> list:
        program = default_main_program() if program is None else program
        scope = global_scope() if scope is None else scope
        block = program.global_block()
        local = dict((feed or {}).items())
        for name in local:
            if name not in block.vars:
                raise ValueError(f"Executor.run: feed key '{name}' is not a variable of the program")
            local[name] = np.asarray(local[name], dtype=block.vars[name]._np_dtype)

        def read(name: str):
            if name in local:
                return local[name]
            holder = scope.find_scope_of(name)
            if holder is None or holder.vars.get(name) is None:
                raise ValueError(f"Executor.run: variable '{name}' has no value (not fed, not initialised)")
            return holder.vars[name]

        for op in block.ops:
            opdef = get_op(op.type)
            arrays = [None if n is None else read(n) for n in op.inputs]
            out = opdef.kernel(np, *arrays, **op.attrs)
            outs = out if len(op.outputs) > 1 else (out,)
            for name, value in zip(op.outputs, outs):
                value = np.asarray(value)
                if block.vars[name].persistable:
                    scope.vars[name] = value
                else:
                    local[name] = value
        names = [f.name if isinstance(f, Variable) else f for f in (fetch_list or [])]
        return [read(n) for n in names]
