"""`bisect(fn, *args)`: when the compiled result of `fn` differs from eager, name the smallest
subgraph whose compiled result differs.

`fn` is called eagerly (under `sot.disable()`) and under `to_static` of a fresh copy (an empty
cache) on the same arguments, so it must not mutate them. While the JIT call runs, every compiled
SIR is recorded with the tensors it was fed (CompiledSIR's two run methods are wrapped for that
call: a debugging tool, not for use while other threads run compiled code). For each SIR whose
compiled outputs differ from an eager run of its own statements, one half of its statements at a
time is compiled alone and fed the eager values of its inputs: a half that differs is searched
further; when neither half differs alone, the range itself is the answer (the difference needs
both halves together). Statements have no source lines, so the answer names the SIR, the
statement range with each statement's text, and the translated function's file:line.
"""
from __future__ import annotations

import contextlib
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from runtime.tensor import Tensor
from sot.api import disable, to_static
from sot.ir import CompiledSIR, Statement, StatementIR, Symbol
from sot.ir.eager import eager_env
from sot.ir.pytree import tree_leaves

__all__ = ["Culprit", "bisect"]


@dataclass(frozen=True)
class Culprit:
    """The smallest subgraph found whose compiled result differs from eager."""

    sir: str
    start: int
    stop: int
    statements: tuple[str, ...]
    where: str
    max_abs_diff: float

    def __str__(self) -> str:
        lines = [f"statements {self.start}..{self.stop - 1} of {self.sir} (function at {self.where}) differ "
                 f"compiled vs eager (max |diff| {self.max_abs_diff:g}):"]
        return "\n".join(lines + [f"  [{self.start + i}] {s}" for i, s in enumerate(self.statements)])


def bisect(fn: Callable, *args: Any, rtol: float = 0.0, atol: float = 0.0, **kwargs: Any) -> Culprit | None:
    """The smallest subgraph whose compiled result differs from eager, or None when none does."""
    plain = getattr(fn, "__wrapped__", fn)
    if not isinstance(plain, types.FunctionType):
        raise TypeError(f"bisect: expected a Python function, got {type(fn).__name__}")
    with disable():
        eager = plain(*args, **kwargs)
    fresh = types.FunctionType(plain.__code__.replace(), plain.__globals__, plain.__name__, plain.__defaults__,
                               plain.__closure__)
    runs: list[tuple[StatementIR, tuple]] = []
    with _recording(runs):
        compiled = to_static(fresh)(*args, **kwargs)
    if _diff(compiled, eager, rtol, atol) is None:
        return None
    where = f"{plain.__code__.co_filename}:{plain.__code__.co_firstlineno}"
    for sir, inputs in runs:
        found = _search(sir, list(sir.statements), _eager_env(sir, inputs), 0, len(sir.statements), rtol, atol)
        if found is not None:
            start, stop, diff = found
            layers = sir.layers()
            return Culprit(sir.name, start, stop, tuple(st.text(layers) for st in sir.statements[start:stop]),
                           where, diff)
    return None


@contextlib.contextmanager
def _recording(runs: list[tuple[StatementIR, tuple]]) -> Iterator[None]:
    """Record (SIR, inputs) of every CompiledSIR run while the block translates and runs code."""
    run_checked, output_runner = CompiledSIR.run_checked, CompiledSIR.output_runner

    def recorded_run(self: CompiledSIR, *inputs: Tensor) -> tuple:
        runs.append((self.sir, inputs))
        return run_checked(self, *inputs)

    def recorded_runner(self: CompiledSIR, index: int) -> Callable:
        def run(*inputs: Tensor) -> Tensor:
            return recorded_run(self, *inputs)[index]
        return run

    CompiledSIR.run_checked, CompiledSIR.output_runner = recorded_run, recorded_runner
    try:
        yield
    finally:
        CompiledSIR.run_checked, CompiledSIR.output_runner = run_checked, output_runner


def _eager_env(sir: StatementIR, inputs: tuple) -> dict[Symbol, Any]:
    """Every symbol of `sir` computed eagerly from `inputs` (nested to_static code run eagerly too)."""
    with disable():
        return eager_env(sir, inputs)


def _search(sir: StatementIR, statements: list[Statement], env: dict[Symbol, Any], start: int, stop: int,
            rtol: float, atol: float) -> tuple[int, int, float] | None:
    """(start, stop, diff) of the smallest differing range within [start, stop), None if it agrees."""
    diff = _range_diff(sir, statements[start:stop], env, rtol, atol)
    if diff is None:
        return None
    if stop - start > 1:
        middle = (start + stop) // 2
        for lo, hi in ((start, middle), (middle, stop)):
            found = _search(sir, statements, env, lo, hi, rtol, atol)
            if found is not None:
                return found
    return start, stop, diff


def _range_diff(sir: StatementIR, statements: list[Statement], env: dict[Symbol, Any], rtol: float,
                atol: float) -> float | None:
    """Compile `statements` alone, feed them eager inputs; the largest difference of their outputs from eager."""
    defined: dict[Symbol, None] = {}
    inputs: dict[Symbol, None] = {}
    for st in statements:
        for x in tree_leaves((st.args, st.kwargs)):
            if isinstance(x, Symbol) and x not in defined:
                inputs[x] = None
        defined.update(dict.fromkeys(st.output_symbols()))
    outputs = [s for s in defined if isinstance(env.get(s), Tensor)]
    if not outputs:
        return None
    part = CompiledSIR(StatementIR(f"{sir.name}_part", list(inputs), outputs, statements))
    got = part(*(env[s] for s in inputs))
    return _diff(tuple(got), tuple(env[s] for s in outputs), rtol, atol)


def _diff(got: Any, want: Any, rtol: float, atol: float) -> float | None:
    """The largest absolute difference where `got` and `want` disagree (inf for a structure or
    non-tensor mismatch), None when they agree within rtol/atol."""
    got_leaves, want_leaves = tree_leaves(got), tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        return float("inf")
    worst = None
    for g, w in zip(got_leaves, want_leaves):
        if isinstance(w, Tensor) and isinstance(g, Tensor):
            a, b = g.numpy(), w.numpy()
            if a.shape != b.shape or a.dtype != b.dtype:
                return float("inf")
            if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                d = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
                worst = max(worst or 0.0, d)
        elif type(g) is not type(w) or g != w:
            return float("inf")
    return worst
