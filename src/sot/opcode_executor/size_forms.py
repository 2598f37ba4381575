"""Which run-time size each dynamic dim of a translation's tensors is, where ops tell it exactly.

A form is `(base, offset)`: the size some dynamic dim has when the graph runs (`base`, a token) plus
an int. A dynamic dim first asked about gets a base of its own; ops whose output sizes are exact
functions of their inputs' pass forms on (`record_forms`, by the op's name):

- shape-keeping ops (`tril`, `cast`, `layer_norm`, `softmax`, elementwise functions, `*_like`) keep
  their input's; broadcasting ops (`+`, `where`, comparisons, ...) give a dim the form its inputs'
  dynamic dims there share (none where they differ: one may be a size 1 that broadcast);
- `linear` and `embedding` keep the leading dims, `matmul` takes its rows and columns from its
  operands, `split`/`chunk` keep the dims they do not split, `transpose` permutes, `unsqueeze`
  and basic indexing (`x[:, 0]`, `x[None]`) move them, reductions keep the dims they do not reduce;
- `concat` along a dim adds its parts' sizes there (one form plus static sizes: the form's base,
  offset grown);
- zeros/ones/full/empty, reshape/view and expand/broadcast_to take the forms of the sizes they are
  given (`DimVariable.form`).

Every other op's dynamic dims get fresh bases when asked about: nothing is related that an op did
not make equal. Two sizes of one base differ by a known int, so `k_len - past_len` is a Python int
while both are known only at run time, a KV cache's `paddle.arange(past, past + n)` or a causal
mask's `mask[k_len - q_len:]` have static lengths, and `x.reshape([B, T, -1])` of x [B, T, 2, 8]
has 16 there (`sot.opcode_executor.dims`). Forms say equalities only: a base's size is the dynamic
dim it stands for, at least 2 like any (see `sot.dynamic.shapes`).
"""
from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable

from .variables import ConstantVariable, DimVariable, TensorVariable, TupleVariable, Variable

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["SizeForms", "record_forms"]

Form = tuple[object, int]

# ops whose output has the shape of their first argument
_SAME_SHAPE = frozenset({
    "tril", "triu", "cast", "astype", "clone", "detach", "assign", "neg", "abs", "exp", "log", "sqrt", "rsqrt",
    "square", "reciprocal", "sign", "floor", "ceil", "round", "sin", "cos", "erf", "clip", "tanh", "sigmoid", "relu",
    "relu6", "gelu", "silu", "swish", "mish", "elu", "leaky_relu", "softplus", "hardswish", "hardsigmoid", "softmax",
    "log_softmax", "layer_norm", "scale", "logical_not", "full_like", "zeros_like", "ones_like", "empty_like",
    "dropout", "masked_fill", "__neg__", "__pos__", "__abs__", "__invert__"})
# ops that broadcast their tensor arguments against each other
_BROADCAST = frozenset({
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "mod", "pow", "maximum", "minimum",
    "where", "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "__add__", "__radd__", "__sub__",
    "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
    "__rmod__", "__pow__", "__rpow__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__and__",
    "__rand__", "__or__", "__ror__", "__xor__", "__rxor__"})
# reductions over `axis`, keeping the other dims (`keepdim`: the reduced ones as 1)
_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "amax", "amin", "logsumexp", "std", "var", "argmax",
                         "argmin", "all", "any", "nansum", "nanmean"})
# ops taking a list of sizes: the argument's name
_SIZED = {"zeros": "shape", "ones": "shape", "full": "shape", "empty": "shape", "reshape": "shape",
          "view": "shape_or_dtype", "expand": "shape", "broadcast_to": "shape"}


class SizeForms:
    """The forms of the translation's tensors' dynamic dims, by symbol (each symbol kept with its
    entry: a rolled-back symbol's id is never another's), and the input dim each base is, where it
    is one (`inputs`: the translation's input TensorVariables)."""

    def __init__(self, inputs: list[TensorVariable]) -> None:
        self._dims: dict[int, tuple[Any, dict[int, Form]]] = {}
        self._inputs = inputs
        self._origins: dict[int, tuple[object, tuple[str, int, int]]] = {}

    def origin(self, base: object) -> tuple[str, int, int] | None:
        """(source, rank, dim) of the input dim whose size `base` is; None for a size made in the frame."""
        entry = self._origins.get(id(base))
        return entry[1] if entry is not None and entry[0] is base else None

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
            own = next((v for v in self._inputs if v.symbol is symbol), None)
            if own is not None:
                self._origins[id(form[0])] = (form[0], (own.tracker.source.text, len(own.meta.shape), dim))
        return form

    def tell(self, symbol: Any, dim: int, form: Form) -> None:
        entry = self._dims.setdefault(id(symbol), (symbol, {}))
        if entry[0] is not symbol:
            entry = self._dims[id(symbol)] = (symbol, {})
        entry[1][dim] = form


def record_forms(ex: "OpcodeExecutor", fn: Any, name: str, args: list[Variable], kwargs: dict[str, Variable],
                 result: Variable) -> None:
    """After a recorded call of runtime function or Tensor method `fn` named `name` (a method's `args`
    with self first): tell the forms of the dynamic dims of `result` (or of each tensor it holds) that
    the op fixes: those it takes from an input dim, or is given as sizes."""
    outputs = [result] if isinstance(result, TensorVariable) else \
        [r for r in result.items if isinstance(r, TensorVariable)] if isinstance(result, TupleVariable) else []
    outputs = [r for r in outputs if -1 in r.meta.shape]
    if not outputs:
        return
    forms: SizeForms = ex.translation.size_forms
    bound = _bind(fn, args, kwargs)
    rule = _RULES.get(name) or (_same_shape if name in _SAME_SHAPE else _broadcast if name in _BROADCAST
                                else _reduced if name in _REDUCTIONS else None)
    if rule is None:
        return
    for out in outputs:
        try:
            told = rule(forms, bound, args, out.meta.shape)
        except (TypeError, ValueError, IndexError, KeyError):  # an argument of a kind no rule reads: nothing told
            continue
        for d, form in told.items():
            if out.meta.shape[d] == -1 and form is not None:
                forms.tell(out.symbol, d, form)


@functools.lru_cache(maxsize=None)
def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _bind(fn: Any, args: list[Variable], kwargs: dict[str, Variable]) -> dict[str, Variable]:
    """The call's arguments by parameter name (empty where `fn` has no signature to bind them to)."""
    sig = _signature(fn) if fn is not None else None
    try:
        return dict(sig.bind_partial(*args, **kwargs).arguments) if sig is not None else {}
    except TypeError:
        return {}


def _tensor(var: Any) -> TensorVariable | None:
    return var if isinstance(var, TensorVariable) else None


def _constant(bound: dict[str, Variable], key: str, default: Any = None) -> Any:
    """The Python value of argument `key` (a constant, or a tuple/list of them)."""
    var = bound.get(key)
    return default if var is None else _value(var)


def _value(var: Variable) -> Any:
    if isinstance(var, TupleVariable):
        return [_value(v) for v in var.items]
    if not isinstance(var, ConstantVariable) or isinstance(var, DimVariable):
        raise TypeError("not a constant")
    return var.value


def _dims_of(forms: SizeForms, t: TensorVariable) -> list[Form | None]:
    """Each dim's form (None: a static dim)."""
    return [forms.of(t.symbol, d) if n == -1 else None for d, n in enumerate(t.meta.shape)]


def _same_shape(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    first = _tensor(args[0]) if args else None
    if first is None or first.meta.shape != shape:
        return {}
    return dict(enumerate(_dims_of(forms, first)))


def _broadcast(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    """Each dynamic output dim takes the form its inputs' dynamic dims there share (right-aligned);
    inputs of different forms there tell nothing (one of them may be a size 1 that broadcast)."""
    tensors = [a for a in [*args, *bound.values()] if isinstance(a, TensorVariable)]
    told = {}
    for d in range(len(shape)):
        found = {forms.of(t.symbol, k) for t in tensors
                 if 0 <= (k := d - len(shape) + len(t.meta.shape)) and t.meta.shape[k] == -1}
        if len(found) == 1:
            told[d] = found.pop()
    return told


def _reduced(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    x = _tensor(args[0])
    axis, keepdim = _constant(bound, "axis"), bool(_constant(bound, "keepdim", False))
    rank = len(x.meta.shape)
    axes = set(range(rank)) if axis is None else {a % rank for a in ([axis] if type(axis) is int else axis)}
    kept = [d for d in range(rank) if keepdim or d not in axes]
    dims = _dims_of(forms, x)
    return {i: None if d in axes else dims[d] for i, d in enumerate(kept)} if len(kept) == len(shape) else {}


def _leading(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    """linear / embedding: the output's dims before its last are the input's (all of an embedding's ids)."""
    x = _tensor(args[0])
    dims = _dims_of(forms, x)
    lead = dims if len(dims) == len(shape) - 1 else dims[:-1]
    return dict(enumerate(lead)) if len(lead) == len(shape) - 1 else {}


def _matmul(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    x, y = _tensor(args[0]), _tensor(args[1])
    if len(x.meta.shape) < 2 or len(y.meta.shape) < 2:
        return {}
    a, b = _dims_of(forms, x), _dims_of(forms, y)
    rows = a[-1] if _constant(bound, "transpose_x", False) else a[-2]
    cols = b[-2] if _constant(bound, "transpose_y", False) else b[-1]
    told = {len(shape) - 2: rows, len(shape) - 1: cols}
    for d in range(len(shape) - 2):  # the batch dims broadcast: told only where the inputs' agree
        found = {dims[k] for dims in (a[:-2], b[:-2]) if 0 <= (k := d - (len(shape) - 2) + len(dims))
                 and dims[k] is not None}
        if len(found) == 1:
            told[d] = found.pop()
    return told


def _split(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    x = _tensor(args[0])
    axis = _constant(bound, "axis", 0) % len(x.meta.shape)
    return {d: f for d, f in enumerate(_dims_of(forms, x)) if d != axis}


def _transpose(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    x = _tensor(args[0])
    perm = _constant(bound, "perm")
    dims = _dims_of(forms, x)
    return {i: dims[p] for i, p in enumerate(perm)}


def _unsqueeze(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    x = _tensor(args[0])
    axis = _constant(bound, "axis")
    rank = len(shape)
    axes = [axis % rank] if type(axis) is int else axis
    if axes != sorted(set(axes)) or any(type(a) is not int or a < 0 for a in axes):
        return {}  # (a list is applied in order: only ascending places are where they end up)
    new = set(axes)
    kept = iter(_dims_of(forms, x))
    return {d: next(kept) for d in range(rank) if d not in new}


def _getitem(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    """Basic indexing: a dim taken whole (`:`) keeps its form; None adds a dim; an int drops one."""
    x = _tensor(args[0])
    if type(args[1]) is not ConstantVariable:  # (an index of tensors or sizes: nothing told)
        return {}
    index = args[1].value
    items = index if type(index) is tuple else (index,)
    if any(type(i) not in (int, slice, type(None), type(Ellipsis)) for i in items):
        return {}
    rank = len(x.meta.shape)
    taking = sum(i is not None and i is not Ellipsis for i in items)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items = items[:k] + (slice(None),) * (rank - taking) + items[k + 1:]
    items = items + (slice(None),) * (rank - sum(i is not None for i in items))
    dims, told, out, d = _dims_of(forms, x), {}, 0, 0
    for item in items:
        if item is None:
            out += 1
        elif type(item) is int:
            d += 1
        else:
            if item.step in (None, 1) and item.start in (None, 0) and item.stop is None:  # the whole dim
                told[out] = dims[d]
            out, d = out + 1, d + 1
    return told


def _concat(forms: SizeForms, bound: dict, args: list, shape: tuple) -> dict[int, Form]:
    parts = args[0] if args else bound.get("x")
    axis_var = bound.get("axis", args[1] if len(args) > 1 else ConstantVariable(0))
    if not (isinstance(parts, TupleVariable) and parts.items and isinstance(axis_var, ConstantVariable)
            and type(axis_var.value) is int and all(isinstance(p, TensorVariable) and len(p.meta.shape) == len(shape)
                                                     for p in parts.items)):
        return {}
    axis = axis_var.value % len(shape)
    told = {}
    for d, n in enumerate(shape):
        if n != -1:
            continue
        dynamic = [p for p in parts.items if p.meta.shape[d] == -1]
        if d != axis:  # every part has this size: a dynamic part's form tells it
            told[d] = forms.of(dynamic[0].symbol, d) if dynamic else None
        elif len(dynamic) == 1:  # one run-time size plus static ones: the same base, offset grown
            base, offset = forms.of(dynamic[0].symbol, d)
            told[d] = (base, offset + sum(p.meta.shape[d] for p in parts.items if p is not dynamic[0]))
    return told


def _sized(forms: SizeForms, bound: dict, args: list, shape: tuple, name: str) -> dict[int, Form]:
    sizes = bound.get(_SIZED[name])
    if sizes is None and len(args) > (0 if name in ("zeros", "ones", "full", "empty") else 1):
        sizes = args[0 if name in ("zeros", "ones", "full", "empty") else 1]
    if not (isinstance(sizes, TupleVariable) and len(sizes.items) == len(shape)):
        return {}
    source = _tensor(args[0]) if name in ("expand", "broadcast_to") else None
    lead = len(shape) - len(source.meta.shape) if source is not None else 0
    told = {}
    for d, item in enumerate(sizes.items):
        if isinstance(item, DimVariable):
            told[d] = item.form
        elif source is not None and isinstance(item, ConstantVariable) and item.value == -1 and d >= lead \
                and source.meta.shape[d - lead] == -1:  # expand's -1 keeps the input's size
            told[d] = forms.of(source.symbol, d - lead)
    return told


_RULES: dict[str, Callable[..., dict[int, Form]]] = {
    "linear": _leading, "embedding": _leading, "matmul": _matmul, "__matmul__": _matmul, "split": _split,
    "chunk": _split, "transpose": _transpose, "unsqueeze": _unsqueeze, "__getitem__": _getitem, "concat": _concat,
    **{name: functools.partial(_sized, name=name) for name in _SIZED}}
