"""Which symbols an in-place update may not rename: those a recorded call leaves sharing memory with
another tensor as eager code runs it, and leaf tensors that require grad.

The opcode executor captures an in-place update of a tensor the frame made (`out += identity`,
`mask[:, 0:2] = v`, `h.add_(b)`) by renaming: the SIR computes the new value out of place and the
tensor's Variable stands for it from then on. That is eager's result only where nothing else sees
the tensor's memory: a view of it (`t.reshape(...)`, `paddle.split(t)`) or the tensor a call
returned as it was (`F.dropout(t, training=False)` is `t`) would keep the old value where eager's
shows the new one. `shared_memory` finds those symbols for one call from what its static replay
appended: the ops whose eager kernels return NumPy views (`VIEW_OPS`) chained from a tensor that
existed before the call, the calls whose eager result shares its argument's memory with no view op
in static mode (`detach`), and results that are a tensor the call got (a symbol the SIR had before,
a parameter). A leaf that requires grad (`paddle.to_tensor(v, stop_gradient=False)`) is kept too:
eager code refuses to update it in place.
"""
from __future__ import annotations

from typing import Any, Callable

from runtime.static.framework import CONTROL_FLOW_OPS

from .pytree import tree_leaves
from .statement import ApiStatement, MethodStatement, Statement, api_name
from .symbol import Symbol

__all__ = ["VIEW_OPS", "unrenamable"]

# registry ops whose eager kernel may return a view of an input (tests/test_to_static_in_place_fresh.py
# checks every op's kernel on the registry's samples against this list)
VIEW_OPS = frozenset({"reshape", "reshape_as", "reshape_sizes", "squeeze", "unsqueeze", "flatten", "transpose",
                      "split", "split_sizes", "unbind", "flip", "einsum", "sum_like"})
# Tensor methods / runtime functions whose eager result shares its argument's memory although their
# static replay copies (`detach` is an `assign` op there)
_ALIASING_CALLS = frozenset({"detach"})


def _name(st: Statement) -> str:
    """The called method's or function's name ('' for a Layer or SIR call)."""
    if isinstance(st, MethodStatement):
        return st.method
    if isinstance(st, ApiStatement):
        return getattr(st.fn, "__name__", "")
    return ""


def _describe(st: Statement) -> str:
    return f"Tensor.{st.method}" if isinstance(st, MethodStatement) else \
        api_name(st.fn) if isinstance(st, ApiStatement) else st.kind


def unrenamable(st: Statement, ops: list, outputs: Any, block: Any, symbol_of: Callable[[str], Symbol | None],
                var_name: Callable[[Symbol], str]) -> dict[Symbol, str]:
    """The symbols `st` leaves that an in-place update may not rename, each with why: its results that are
    not a new op output (a tensor it got, returned as it was), those that view a tensor older than the
    call, the older symbols they view, and new leaves that require grad. `ops` are the static ops the call
    appended to `block`, `outputs` its result with Symbols; `symbol_of(var name)` / `var_name(symbol)` map
    between symbols and the replay's static vars."""
    found: dict[Symbol, str] = {}
    results = [s for s in tree_leaves(outputs) if isinstance(s, Symbol)]
    call = _describe(st)
    made = {name for op in ops for name in op.outputs}
    for sym in results:
        if var_name(sym) not in made:
            found[sym] = f"{call} returned a tensor it got, as it was (another reference holds it)"
    if _name(st) in _ALIASING_CALLS:
        for sym in results:
            found[sym] = f"it shares memory with the argument of {call}"
        for sym in tree_leaves((st.args, st.kwargs)):
            if isinstance(sym, Symbol):
                found[sym] = f"{call} made a tensor sharing its memory"
    viewed: dict[str, tuple[set[str], str]] = {}  # var made by the call -> (older vars it may view, via which op)
    for op in ops:
        if op.type not in VIEW_OPS and op.type not in CONTROL_FLOW_OPS:
            continue
        roots = set()
        for name in op.input_arg_names:
            roots |= viewed[name][0] if name in viewed else set() if name in made else {name}
        if roots:
            for out in op.outputs:
                viewed[out] = (roots, op.type)
    for sym in results:
        if sym not in found and var_name(sym) in viewed:
            roots, op_type = viewed[var_name(sym)]
            found[sym] = f"it is a view ({op_type} in {call}) of another tensor"
            for root in roots:
                older = symbol_of(root)
                if older is not None:
                    found[older] = f"{call} made a view of it ({op_type})"
    producers = {name: op for op in ops for name in op.outputs}
    for sym in results:
        var = block.var(var_name(sym))
        op = producers.get(var.name)
        if sym not in found and not var.stop_gradient and op is not None and all(
                block.var(name).stop_gradient for name in op.input_arg_names):
            found[sym] = f"it is a leaf tensor that requires grad ({call} made it)"
    return found
