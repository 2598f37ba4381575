"""Replaying statements through runtime's public API in static mode (docs/sot-internals.md,
"Lowering replays, it does not re-describe").

Both the builder (to learn output metas: only meta functions run) and lowering (to build the
Program) call the SAME functions here: `call_api` calls the function, `call_method` the
Variable's method, `call_layer` the layer, `call_sir` replays the callee's statements. No
second description of any op exists.

Eager tensors are bound, not copied: a `Binder` gives each eager tensor a persistable Variable
named after it (a Parameter's own name, `tensor_<n>` otherwise), and a Layer is replayed as a
stand-in: a shallow copy of it (and of its sublayers) whose Parameters and buffers are those
Variables, so the layer's forward reads them as program inputs and no parameter is created. The
layer itself is never changed, so other threads may call it meanwhile.

A statement recorded under `no_grad` (`st.grad is False`) is replayed as usual and then its ops'
outputs are marked stop_gradient (`cut_gradients`): static mode's flags follow the inputs only,
so this is what keeps them, and what is computed from them alone, out of backward, as eager's
ops under no_grad record nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from runtime import static
from runtime.parameter import is_parameter
from runtime.static import Block, Variable, stand_in_layer
from runtime.tensor import Tensor

from .pytree import tree_leaves, tree_map
from .statement import ApiStatement, LayerStatement, MethodStatement, SirStatement, Statement
from .symbol import Symbol

if TYPE_CHECKING:
    from .sir import StatementIR

__all__ = ["Binder", "run_statement", "replay_sir", "cut_gradients"]


class Binder:
    """Persistable Variables of one block standing for eager tensors, one per tensor (by identity)."""

    def __init__(self, block: Block):
        self.block = block
        self.tensors: dict[str, Tensor] = {}  # var name -> the eager tensor bound to it, in binding order
        self._vars: dict[int, Variable] = {}

    def var(self, tensor: Tensor) -> Variable:
        """The Variable bound to `tensor` (created on first use, with its shape, dtype and flags)."""
        v = self._vars.get(id(tensor))
        if v is None:
            name = self._free_name(tensor.name if is_parameter(tensor) else f"tensor_{len(self.tensors)}")
            shape, dtype = list(tensor._data.shape), tensor._data.dtype
            if is_parameter(tensor):
                v = self.block.create_parameter(name, shape, dtype, trainable=not tensor.stop_gradient)
            else:
                v = self.block.create_var(name, shape, dtype, persistable=True, stop_gradient=tensor.stop_gradient)
            self._vars[id(tensor)] = v
            self.tensors[name] = tensor  # also keeps the tensor alive, so its id is never reused
        return v

    def _free_name(self, name: str) -> str:
        candidate, n = name, 0
        while candidate in self.tensors or candidate in self.block.vars:
            n += 1
            candidate = f"{name}_{n}"
        return candidate


def _call_api(st: ApiStatement, args: tuple, kwargs: dict, binder: Binder) -> Any:
    return st.fn(*args, **kwargs)


def _call_method(st: MethodStatement, args: tuple, kwargs: dict, binder: Binder) -> Any:
    return getattr(args[0], st.method)(*args[1:], **kwargs)


def _call_layer(st: LayerStatement, args: tuple, kwargs: dict, binder: Binder) -> Any:
    return stand_in_layer(st.layer, binder.var)(*args, **kwargs)


def _call_sir(st: SirStatement, args: tuple, kwargs: dict, binder: Binder) -> Any:
    return tuple(replay_sir(st.sir, args, binder))


_RUN: dict[type, Callable[[Any, tuple, dict, Binder], Any]] = {
    ApiStatement: _call_api, MethodStatement: _call_method, LayerStatement: _call_layer, SirStatement: _call_sir}


def run_statement(st: Statement, args: tuple, kwargs: dict, binder: Binder) -> Any:
    """Call what `st` calls on already-resolved arguments (static Variables); its result."""
    return _RUN[type(st)](st, args, kwargs, binder)


def resolve(value: Any, env: dict[Symbol, Variable], binder: Binder) -> Any:
    """A leaf of a statement's arguments as the replay passes it: symbols and eager tensors become Variables."""
    if isinstance(value, Symbol):
        return env[value]
    if isinstance(value, Tensor) and not isinstance(value, Variable):
        return binder.var(value)
    return value


def cut_gradients(block: Block, first_op: int) -> None:
    """Mark what the ops of `block` from `first_op` on write stop_gradient (persistable vars, the
    bound tensors a program updates, keep their flags): they ran under no_grad."""
    for op in block.ops[first_op:]:
        for name in op.outputs:
            var = block.var(name)
            if not var.persistable:
                var.stop_gradient = True


def replay_sir(sir: "StatementIR", inputs: Sequence[Variable], binder: Binder) -> list[Variable]:
    """Append the ops of every statement of `sir` (inputs bound to `inputs`); its output Variables."""
    env: dict[Symbol, Any] = dict(zip(sir.inputs, inputs))
    block = binder.block
    for st in sir.statements:
        args, kwargs = tree_map(lambda x: resolve(x, env, binder), (st.args, st.kwargs))
        first_op = len(block.ops)
        result = run_statement(st, args, kwargs, binder)
        if st.grad is False:
            cut_gradients(block, first_op)
        for sym, value in zip(tree_leaves(st.outputs), tree_leaves(result)):
            if isinstance(sym, Symbol):
                env[sym] = value
    return [env[s] for s in sir.outputs]
