"""Sizes known only at run time: a dynamic dim read from `x.shape` stays symbolic while it only
flows into shape arguments of tensor ops.

`x.shape` of a tensor with dynamic (-1) dims is a list whose static dims are constants and whose
dynamic dims are `DimVariable`s: the SIR computes each with `runtime.shape(x)[i]` (valid for a
tensor computed in the frame as for an input: nothing is traced back). `+` and `*` of such sizes
with each other or with non-negative int constants give new ones, computed by the graph the same
way. Passed as an item of the sizes argument of reshape/view, expand/broadcast_to, tile, split
or zeros/ones/full/empty, the size's tensor is the argument (runtime records a `*_sizes` op whose
shape the Program reads at run time, and meta functions give -1 there).

Everything else reads `DimVariable.value`, which raises `StaticDimNeeded`: the dims it comes
from are specialised and the frame is simulated again. So are `-`, `//` and `%`: their result may
be 0 or 1, and a -1 dim is assumed to be at least 2 (broadcasting treats size 1 apart, see
`sot.dynamic.shapes`).

For the same reason a slice of a dynamic dim that may keep fewer than 2 items (`x[1:]`, `x[:-1]`
and `x[-1:]` of a size-2 dim keep 1) specialises the dims behind it (`check_slices`): its result
would be a -1 dim of size 1, which `squeeze` would drop where the translation kept it. `squeeze` of
a dynamic dim (`check_squeeze`) specialises too: whether it drops the dim depends on the size.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import runtime
from sot.dynamic.shapes import dims_behind, specialise

from .variables import ConstantVariable, DimVariable, ListVariable, NumberVariable, TensorVariable, TupleVariable, \
    Variable

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["run_time_shape", "size_arithmetic", "call_arguments", "check_slices", "check_squeeze"]

# runtime functions (by name, in runtime.ops) whose argument at this position, or of this name, takes
# a list of sizes that may be known only at run time (a Tensor method's positions count after self)
_SIZES_ARGUMENTS = {"reshape": (1, "shape"), "view": (1, "shape_or_dtype"), "expand": (1, "shape"),
                    "broadcast_to": (1, "shape"), "tile": (1, "repeat_times"), "split": (1, "num_or_sections"),
                    "zeros": (0, "shape"), "ones": (0, "shape"), "full": (0, "shape"), "empty": (0, "shape")}
_SIZES_MODULES = ("runtime.ops.shape", "runtime.ops.creation")
# BINARY_OP operators that keep a size at least 2 (what a -1 dim is assumed to be), with the smallest
# constant that may meet it, and the Tensor dunder that computes it (both commute on ints)
_SIZE_OPERATORS = {"+": (0, "__add__"), "*": (1, "__mul__")}


def run_time_shape(ex: "OpcodeExecutor", tensor: TensorVariable) -> ListVariable | None:
    """`tensor.shape` with its dynamic dims as DimVariables computed by the graph; None where no
    dynamic input dim is behind them (sizes made by a value-dependent op: nothing to specialise)."""
    shape = tensor.meta.shape
    if not dims_behind(tensor, ex.inputs, None):
        return None
    read_at = ex.where()
    with ex.recording():
        sizes = ex.builder.call_api(runtime.shape, [tensor.symbol])
        items: list[Variable] = [
            ConstantVariable(d) if d != -1 else
            DimVariable(ex.builder.call_method("__getitem__", sizes, [i]), dims_behind(tensor, ex.inputs, (i,)),
                        read_at)
            for i, d in enumerate(shape)]
    return ListVariable(items)


def _size_operand(var: Variable, smallest: int) -> bool:
    return isinstance(var, DimVariable) or (isinstance(var, ConstantVariable) and not isinstance(
        var, NumberVariable) and type(var.value) is int and var.value >= smallest)


def size_arithmetic(ex: "OpcodeExecutor", op: str, left: Variable, right: Variable) -> DimVariable | None:
    """`left op right` with a DimVariable among them, as a DimVariable the graph computes; None where
    the result needs the value (the caller folds it, which reads the value and specialises)."""
    if op not in _SIZE_OPERATORS:
        return None
    smallest, dunder = _SIZE_OPERATORS[op]
    if not (_size_operand(left, smallest) and _size_operand(right, smallest)):
        return None
    size, other = (left, right) if isinstance(left, DimVariable) else (right, left)
    with ex.recording():
        symbol = ex.builder.call_method(dunder, size.symbol, [other.symbol if isinstance(other, DimVariable)
                                                              else other.value])
    dims = tuple(dict.fromkeys(size.dims + (other.dims if isinstance(other, DimVariable) else ())))
    return DimVariable(symbol, dims, size.read_at)


def _sizes(ex: "OpcodeExecutor", var: Variable) -> Any:
    """A list/tuple of sizes as a recorded call's argument: a DimVariable item as its tensor."""
    if isinstance(var, TupleVariable) and any(isinstance(v, DimVariable) for v in var.items):
        items = [v.symbol if isinstance(v, DimVariable) else ex.as_arg(v) for v in var.items]
        return items if isinstance(var, ListVariable) else tuple(items)
    return ex.as_arg(var)


def call_arguments(ex: "OpcodeExecutor", fn: Any, args: list[Variable], kwargs: dict[str, Variable],
                   method: bool = False) -> tuple[list[Any], dict[str, Any]]:
    """The arguments of a recorded call of runtime function `fn` (a Tensor method's, after self, when
    `method`): its sizes argument may hold DimVariables, every other argument is `ex.as_arg`'s."""
    found = _SIZES_ARGUMENTS.get(getattr(fn, "__name__", None)) if getattr(fn, "__module__", None) in \
        _SIZES_MODULES else None
    position, name = found if found is not None else (None, None)
    if position is not None and method:
        position -= 1
    pos = [_sizes(ex, a) if i == position else ex.as_arg(a) for i, a in enumerate(args)]
    return pos, {k: _sizes(ex, v) if k == name else ex.as_arg(v) for k, v in kwargs.items()}


def _may_keep_fewer_than_two(item: slice) -> bool:
    """Whether slicing a dim of some size n >= 2 by `item` (ints or None) may keep fewer than 2 items.
    Beyond the largest bound the kept count is linear in n, so the sizes up to past it, and the trend
    one step on, tell every size."""
    bounds = [abs(b) for b in (item.start, item.stop) if b is not None]
    step = abs(item.step or 1)
    last = (max(bounds, default=0) + 2) * step + 2
    kept = [len(range(*item.indices(n))) for n in range(2, last + step + 1)]
    return min(kept) < 2 or kept[-1] < kept[-1 - step]


def check_slices(ex: "OpcodeExecutor", tensor: TensorVariable, index: Any) -> None:
    """Before `tensor[index]` is recorded: specialise the dims behind each dynamic dim a slice of `index`
    may leave with fewer than 2 items (see the module docstring)."""
    items = index if type(index) is tuple else (index,)
    if not any(type(i) is slice for i in items):
        return
    shape = tensor.meta.shape
    for dim, item in _dims_indexed(items, len(shape)):
        if type(item) is slice and shape[dim] == -1 and item.step != 0 and all(
                b is None or type(b) is int for b in (item.start, item.stop, item.step)) \
                and _may_keep_fewer_than_two(item):
            specialise(tensor, ex.inputs, (dim,), f"sliced by {_shown(item)}, which may keep fewer than 2 items", "")


def _dims_indexed(items: tuple, rank: int) -> list[tuple[int, Any]]:
    """(dim, item) of each index item that takes a dim, as NumPy maps them: an int or slice takes one,
    None none, an Ellipsis what the items after it leave."""
    ellipsis = next((k for k, i in enumerate(items) if i is Ellipsis), len(items))
    before, after = items[:ellipsis], items[ellipsis + 1:]
    taken = [i for i in before if i is not None]
    tail = [i for i in after if i is not None]
    placed = list(enumerate(taken)) + [(rank - len(tail) + k, i) for k, i in enumerate(tail)]
    return [(d, i) for d, i in placed if 0 <= d < rank]


def _shown(item: slice) -> str:
    parts = ["" if b is None else str(b) for b in (item.start, item.stop)]
    return "[" + ":".join(parts + ([str(item.step)] if item.step is not None else [])) + "]"


def check_squeeze(ex: "OpcodeExecutor", name: str, args: list[Variable], kwargs: dict[str, Variable]) -> None:
    """Before a recorded `squeeze(x, axis=None)` (`name`: the runtime function's or Tensor method's,
    `args[0]`: x): specialise the dynamic dims it may drop, which it drops only where their size is 1.
    An input's own dynamic dims are guarded >= 2; a computed tensor's may be 1 (a pool of a size-2 dim)."""
    if name not in ("squeeze", "squeeze_") or not args or not isinstance(args[0], TensorVariable) or any(
            v.symbol is args[0].symbol for v in ex.inputs):
        return
    shape = args[0].meta.shape
    axis_var = args[1] if len(args) > 1 else kwargs.get("axis")
    axis = None if axis_var is None else ex.python_value(axis_var)
    axes = range(len(shape)) if axis is None else [axis] if type(axis) is int else list(axis)
    dims = [a % len(shape) for a in axes if type(a) is int and -len(shape) <= a < len(shape)]
    if any(shape[d] == -1 for d in dims):
        specialise(args[0], ex.inputs, [d for d in dims if shape[d] == -1],
                   "squeezed, which drops a dim only where its size is 1", "")
