"""Running a StatementIR eagerly: each statement called on eager tensors, in order.

A subgraph too small to be worth compiling (`SOT_MIN_GRAPH_SIZE`) still has its translation,
guards and graph breaks; only its statements run through the eager API instead of a compiled
Program: `EagerSIR(sir)(*inputs)` returns the outputs as `CompiledSIR` does, and eager autograd
records each op as usual (a statement recorded under no_grad or enable_grad runs under it again).
"""
from __future__ import annotations

from typing import Any

from runtime.autograd import enable_grad, no_grad

from .pytree import tree_leaves, tree_map
from .sir import StatementIR
from .statement import ApiStatement, LayerStatement, MethodStatement, SirStatement, Statement
from .symbol import Symbol

__all__ = ["EagerSIR", "eager_env", "run_eagerly"]


class EagerSIR:
    """Runs `sir`'s statements through the eager API (no Program, no executor)."""

    def __init__(self, sir: StatementIR):
        self.sir = sir

    def __call__(self, *inputs: Any) -> tuple:
        return run_eagerly(self.sir, inputs)

    run_checked = __call__  # the guards already checked the inputs, as for CompiledSIR

    def output_runner(self, index: int) -> Any:
        """A callable returning only output `index` (CompiledSIR's one-output fast path)."""
        sir = self.sir
        return lambda *inputs: run_eagerly(sir, inputs)[index]


def run_eagerly(sir: StatementIR, inputs: tuple) -> tuple:
    """The outputs of `sir` on eager `inputs`, computed statement by statement."""
    env = eager_env(sir, inputs)
    return tuple(env[s] for s in sir.outputs)


def eager_env(sir: StatementIR, inputs: tuple) -> dict[Symbol, Any]:
    """Every symbol of `sir` computed eagerly from `inputs`, statement by statement."""
    env: dict[Symbol, Any] = dict(zip(sir.inputs, inputs))

    def value(x: Any) -> Any:
        return env[x] if isinstance(x, Symbol) else x

    for st in sir.statements:
        args, kwargs = tree_map(value, (st.args, st.kwargs))
        if st.grad is None:
            result = _call(st, args, kwargs)
        else:
            with (enable_grad if st.grad else no_grad)():
                result = _call(st, args, kwargs)
        for sym, out in zip(tree_leaves(st.outputs), tree_leaves(result)):
            if isinstance(sym, Symbol):
                env[sym] = out
    return env


def _call(st: Statement, args: tuple, kwargs: dict) -> Any:
    """What `st` calls, called on eager values."""
    if isinstance(st, ApiStatement):
        return st.fn(*args, **kwargs)
    if isinstance(st, MethodStatement):
        return getattr(args[0], st.method)(*args[1:], **kwargs)
    if isinstance(st, LayerStatement):
        return st.layer(*args, **kwargs)
    if isinstance(st, SirStatement):
        return run_eagerly(st.sir, args)
    raise TypeError(f"run_eagerly: unknown statement {type(st).__name__}")
