"""The four statement kinds of a StatementIR (Paddle SOT's StatementIR design) and their text form.

Each statement is one call whose arguments (`args`, `kwargs`) are nested tuples/lists/dicts of
Symbols and Python constants, and whose `outputs` have the nesting of the call's result with a
Symbol for every tensor in it:

- `ApiStatement`    call_api:    a runtime public function, `runtime.add(var_0, var_1)`;
- `MethodStatement` call_method: a Tensor method of `args[0]`, `var_0.reshape([2, -1])`;
- `LayerStatement`  call_layer:  a `runtime.nn.Layer` instance, called;
- `SirStatement`    call_sir:    another StatementIR, its inputs bound to `args`.

Eager tensors may appear among the constants (a parameter an inlined forward reads, a global
tensor): lowering binds them to the program, it never copies them. Statements describe; the
`replay` module runs them.

`grad` is the grad mode the call ran under in the simulated frame: None inherits the mode of the
compiled call's caller (most statements), False inside `with paddle.no_grad():` (its outputs take
no part in backward, as eager's ops under no_grad record nothing), True inside `enable_grad()`.
"""
from __future__ import annotations

import os
import types
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np

from runtime.parameter import is_parameter
from runtime.tensor import Tensor

from .pytree import tree_leaves, tree_map
from .symbol import Meta, Symbol

if TYPE_CHECKING:
    from runtime.nn import Layer

    from .sir import StatementIR

__all__ = ["Statement", "ApiStatement", "MethodStatement", "LayerStatement", "SirStatement", "api_name"]


class Statement:
    """One recorded call: what is called, its arguments and its output symbols."""

    kind: ClassVar[str]
    __slots__ = ("args", "kwargs", "outputs", "grad", "where")

    def __init__(self, args: tuple, kwargs: dict, outputs: Any, grad: bool | None = None):
        self.args = tuple(args)
        self.kwargs = dict(kwargs)
        self.outputs = outputs
        self.grad = grad
        self.where: str | None = None  # the user's file:line that made the call (None: not known)

    def output_symbols(self) -> list[Symbol]:
        """The symbols the call defines, in result order."""
        return [x for x in tree_leaves(self.outputs) if isinstance(x, Symbol)]

    def callee(self, layers: dict[int, str]) -> str:
        """What is called, as the text form shows it (`layers` numbers the Layers of the SIR)."""
        raise NotImplementedError

    def arguments(self) -> tuple[tuple, dict]:
        """The arguments the text form shows after the callee."""
        return self.args, self.kwargs

    def text(self, layers: dict[int, str]) -> str:
        """`kind || outputs = callee(arguments)  # output metas  # file.py:12` (one line; the file's
        base name keeps lines short, the dump's source.py and the logs carry the full path)."""
        args, kwargs = self.arguments()
        parts = [_value_text(a) for a in args] + [f"{k}={_value_text(v)}" for k, v in kwargs.items()]
        outs = self.output_symbols()
        metas = ", ".join(str(s.meta) for s in outs)
        metas = metas if len(outs) == 1 else f"({metas})"
        mode = "" if self.grad is None else "  [enable_grad]" if self.grad else "  [no_grad]"
        where = "" if self.where is None else f"  # {os.path.basename(self.where)}"
        return (f"{self.kind:<6} || {_value_text(self.outputs)} = {self.callee(layers)}({', '.join(parts)})"
                f"  # {metas}{mode}{where}")


class ApiStatement(Statement):
    """call_api: a runtime public function called with the arguments."""

    kind = "api"
    __slots__ = ("fn",)

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, outputs: Any):
        super().__init__(args, kwargs, outputs)
        self.fn = fn

    def callee(self, layers: dict[int, str]) -> str:
        return api_name(self.fn)


class MethodStatement(Statement):
    """call_method: the Tensor method `method` of `args[0]`, called with the other arguments."""

    kind = "method"
    __slots__ = ("method",)

    def __init__(self, method: str, args: tuple, kwargs: dict, outputs: Any):
        super().__init__(args, kwargs, outputs)
        self.method = method

    def callee(self, layers: dict[int, str]) -> str:
        return f"{_value_text(self.args[0])}.{self.method}"

    def arguments(self) -> tuple[tuple, dict]:
        return self.args[1:], self.kwargs


class LayerStatement(Statement):
    """call_layer: a Layer instance called with the arguments (its parameters are bound)."""

    kind = "layer"
    __slots__ = ("layer",)

    def __init__(self, layer: "Layer", args: tuple, kwargs: dict, outputs: Any):
        super().__init__(args, kwargs, outputs)
        self.layer = layer

    def callee(self, layers: dict[int, str]) -> str:
        return f"{layers[id(self.layer)]}:{type(self.layer).__name__}"


class SirStatement(Statement):
    """call_sir: another StatementIR; its inputs are bound to `args`, its outputs to `outputs`."""

    kind = "sir"
    __slots__ = ("sir",)

    def __init__(self, sir: "StatementIR", args: tuple, outputs: tuple):
        super().__init__(args, {}, outputs)
        self.sir = sir

    def callee(self, layers: dict[int, str]) -> str:
        return self.sir.name


# ---------------------------------------------------------------- text of values and callees
def _value_text(value: Any) -> str:
    """Symbols by name, eager tensors by parameter name or meta, constants by repr."""
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, Tensor):
        return f"param<{value.name}>" if is_parameter(value) else f"tensor<{Meta.from_tensor(value)}>"
    if isinstance(value, np.dtype):
        return value.name
    kind = type(value)
    if kind is tuple or kind is list or kind is dict:
        inner = tree_map(_value_text, value)
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in inner.items()) + "}"
        body = ", ".join(inner) + ("," if kind is tuple and len(inner) == 1 else "")
        return f"({body})" if kind is tuple else f"[{body}]"
    return repr(value)


_PUBLIC_NAMES: dict[int, str] = {}


def api_name(fn: Callable) -> str:
    """The shortest public dotted name of `fn` in the runtime package (`runtime.nn.functional.relu`)."""
    if not _PUBLIC_NAMES:
        _index_public_names()
    name = _PUBLIC_NAMES.get(id(fn))
    if name is not None:
        return name
    return f"{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', repr(fn))}"


def _index_public_names() -> None:
    """Breadth first over runtime's public modules, so the first name found is the shortest."""
    import runtime  # noqa: PLC0415 - only needed when a statement is printed

    queue: list[tuple[str, types.ModuleType]] = [("runtime", runtime)]
    seen = {id(runtime)}
    while queue:
        prefix, module = queue.pop(0)
        for attr in sorted(vars(module)):
            if attr.startswith("_"):
                continue
            value = vars(module)[attr]
            if isinstance(value, types.ModuleType):
                if value.__name__.startswith("runtime.") and id(value) not in seen:
                    seen.add(id(value))
                    queue.append((f"{prefix}.{attr}", value))
            elif callable(value):
                _PUBLIC_NAMES.setdefault(id(value), f"{prefix}.{attr}")
