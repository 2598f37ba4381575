"""Which run-time size each dynamic dim of a translation's tensors is, where ops tell it exactly.

A form is `(base, offset)`: the size some dynamic dim has when the graph runs (`base`, a token) plus
an int. A dynamic dim first asked about gets a base of its own; ops whose output sizes are exact
functions of their inputs' pass forms on: `concat` along a dim adds its inputs' sizes there (one
form plus static sizes: the form's base, offset grown), zeros/ones/full/empty, reshape/view and
expand/broadcast_to take the forms of the sizes they are given (`DimVariable.form`), and ops that
keep their input's shape (`tril`, `cast`, elementwise unary functions, `*_like`) keep its forms.
Every other op's dynamic dims get fresh bases when asked about: nothing is related that an op
did not make equal.

Two sizes of one base differ by a known int, so `k_len - past_len` is a Python int while both
are known only at run time, and a KV cache's `paddle.arange(past, past + n)` or a causal mask's
`mask[k_len - q_len:]` have static lengths (`sot.opcode_executor.dims`). Forms say equalities only:
a base's size is the dynamic dim it stands for, at least 2 like any (see `sot.dynamic.shapes`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .variables import ConstantVariable, DimVariable, TensorVariable, TupleVariable, Variable

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["SizeForms", "record_forms"]

Form = tuple[object, int]

# ops whose output has the shape of their first argument
_SAME_SHAPE = frozenset({
    "tril", "triu", "cast", "astype", "clone", "detach", "assign", "neg", "abs", "exp", "log", "sqrt", "rsqrt",
    "tanh", "sigmoid", "relu", "gelu", "silu", "softmax", "log_softmax", "scale", "logical_not", "full_like",
    "zeros_like", "ones_like", "empty_like", "dropout", "__neg__", "__abs__", "__invert__"})
# ops taking a list of sizes: the argument's position (a Tensor method's counted with self first) and name
_SIZED = {"zeros": (0, "shape"), "ones": (0, "shape"), "full": (0, "shape"), "empty": (0, "shape"),
          "reshape": (1, "shape"), "view": (1, "shape_or_dtype"), "expand": (1, "shape"),
          "broadcast_to": (1, "shape")}


class SizeForms:
    """The forms of the translation's tensors' dynamic dims, by symbol (each symbol kept with its
    entry: a rolled-back symbol's id is never another's)."""

    def __init__(self) -> None:
        self._dims: dict[int, tuple[Any, dict[int, Form]]] = {}

    def known(self, symbol: Any, dim: int) -> Form | None:
        """The form of `dim` of `symbol` an op told, or an earlier question gave (None: neither)."""
        entry = self._dims.get(id(symbol))
        return entry[1].get(dim) if entry is not None and entry[0] is symbol else None

    def of(self, symbol: Any, dim: int) -> Form:
        """The form of dynamic `dim` of `symbol`: a fresh base the first time nothing told it."""
        form = self.known(symbol, dim)
        if form is None:
            form = (object(), 0)
            self.tell(symbol, dim, form)
        return form

    def tell(self, symbol: Any, dim: int, form: Form) -> None:
        entry = self._dims.setdefault(id(symbol), (symbol, {}))
        if entry[0] is not symbol:
            entry = self._dims[id(symbol)] = (symbol, {})
        entry[1][dim] = form


def record_forms(ex: "OpcodeExecutor", name: str, args: list[Variable], kwargs: dict[str, Variable],
                 result: Variable) -> None:
    """After a recorded call of runtime op `name` (a Tensor method's `args` with self first): tell the
    forms of `result`'s dynamic dims that the op fixes."""
    if not isinstance(result, TensorVariable) or -1 not in result.meta.shape:
        return
    forms: SizeForms = ex.translation.size_forms
    shape = result.meta.shape
    told: dict[int, Form] = {}
    if name in _SAME_SHAPE and args and isinstance(args[0], TensorVariable) and args[0].meta.shape == shape:
        told = {d: forms.of(args[0].symbol, d) for d, n in enumerate(shape) if n == -1}
    elif name == "concat":
        told = _concat_forms(forms, args, kwargs, shape)
    elif name in _SIZED:
        position, key = _SIZED[name]
        sizes = args[position] if len(args) > position else kwargs.get(key)
        if isinstance(sizes, TupleVariable) and len(sizes.items) == len(shape):
            source = args[0] if name in ("expand", "broadcast_to") and isinstance(args[0], TensorVariable) else None
            told = _sized_forms(forms, sizes.items, shape, source)
    for d, form in told.items():
        if shape[d] == -1:
            forms.tell(result.symbol, d, form)


def _concat_forms(forms: SizeForms, args: list[Variable], kwargs: dict[str, Variable],
                  shape: tuple) -> dict[int, Form]:
    parts = args[0] if args else kwargs.get("x")
    axis_var = args[1] if len(args) > 1 else kwargs.get("axis", ConstantVariable(0))
    if not (isinstance(parts, TupleVariable) and parts.items and isinstance(axis_var, ConstantVariable)
            and type(axis_var.value) is int and all(isinstance(p, TensorVariable) and len(p.meta.shape) == len(shape)
                                                     for p in parts.items)):
        return {}
    axis = axis_var.value % len(shape)
    told = {}
    for d, n in enumerate(shape):
        if n != -1:
            continue
        if d != axis:  # every part has this size: the first part's dynamic dim tells it
            first = next((p for p in parts.items if p.meta.shape[d] == -1), None)
            if first is not None:
                told[d] = forms.of(first.symbol, d)
            continue
        dynamic = [p for p in parts.items if p.meta.shape[d] == -1]
        if len(dynamic) == 1:  # one run-time size plus static ones: the same base, offset grown
            base, offset = forms.of(dynamic[0].symbol, d)
            told[d] = (base, offset + sum(p.meta.shape[d] for p in parts.items if p is not dynamic[0]))
    return told


def _sized_forms(forms: SizeForms, items: list[Variable], shape: tuple, source: TensorVariable | None) -> dict:
    told = {}
    lead = len(shape) - len(source.meta.shape) if source is not None else 0
    for d, item in enumerate(items):
        if isinstance(item, DimVariable):
            told[d] = item.form
        elif source is not None and isinstance(item, ConstantVariable) and item.value == -1 and d >= lead \
                and source.meta.shape[d - lead] == -1:  # expand's -1 keeps the input's size
            told[d] = forms.of(source.symbol, d - lead)
    return told
