"""Sizes known only at run time: a dynamic dim read from `x.shape` stays symbolic while it only
flows into shape arguments of tensor ops.

`x.shape` of a tensor with dynamic (-1) dims is a list whose static dims are constants and whose
dynamic dims are `DimVariable`s: the SIR computes each with `runtime.shape(x)[i]` (valid for a
tensor computed in the frame as for an input: nothing is traced back). `+` and `*` of such sizes
with each other or with non-negative int constants give new ones, computed by the graph the same
way. Passed as an item of the sizes argument of reshape/view, expand/broadcast_to, tile, split
or zeros/ones/full/empty, the size's tensor is the argument (runtime records a `*_sizes` op whose
shape the Program reads at run time, and meta functions give -1 there).

Each size carries its form (`size_forms`): which run-time size it is, plus an int. `- n` of a
size gives one too, and `-` of two sizes of one form's base is the int their offsets differ by.
Such forms give static lengths where sizes known only at run time cancel: `paddle.arange(past,
past + n)` records `arange(n) + past` (`arange_over_sizes`), and `x[k - n:]` of a dim of size `k`
keeps its last `n` items, `x[:k - n]` all but them (`slice_by_sizes`): a KV cache's positions
and causal mask stay static while the cache's length is dynamic.

Everything else reads `DimVariable.value`, which raises `StaticDimNeeded`: the dims it comes
from are specialised and the frame is simulated again. So are `//` and `%`. A size that may be
below 2 (after `-`) passed as a shape argument must be made at least 2 (`at_least`: the input dim
it comes from stays dynamic for sizes large enough), or is read: a -1 dim is assumed to be at
least 2 (broadcasting treats size 1 apart, see `sot.dynamic.shapes`).

For the same reason a slice of a dynamic dim that may keep fewer than 2 items (`x[1:]`, `x[:-1]`
and `x[-1:]` of a size-2 dim keep 1; `check_slices`) needs the dim large enough not to: the input
dim it is stays dynamic for sizes of at least 3 for `x[:-1]` (`require_size`), and one no size will
do for (`x[-1:]`), or a size made in the frame, is specialised. Else its result would be a -1 dim of
size 1, which `squeeze` would drop where the translation kept it: a `squeeze` (`sized_arguments`)
needs its dynamic dims at least 2 the same way, so one of a size made in the frame (a pool of a
size-2 dim gives 1) is specialised.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import runtime
from sot.dynamic.shapes import StaticDimNeeded, dims_behind, specialise

from .variables import ConstantVariable, DimVariable, ListVariable, NumberVariable, TensorVariable, TupleVariable, \
    Variable, is_none

if TYPE_CHECKING:
    from .executor import OpcodeExecutor

__all__ = ["run_time_shape", "size_arithmetic", "call_arguments", "sized_arguments", "check_slices", "require_size",
           "at_least", "DimSliceVariable", "slice_by_sizes", "arange_over_sizes"]

# runtime functions (by name, in runtime.ops) whose argument at this position, or of this name, takes
# a list of sizes that may be known only at run time (a Tensor method's positions count after self)
_SIZES_ARGUMENTS = {"reshape": (1, "shape"), "view": (1, "shape_or_dtype"), "expand": (1, "shape"),
                    "broadcast_to": (1, "shape"), "tile": (1, "repeat_times"), "split": (1, "num_or_sections"),
                    "zeros": (0, "shape"), "ones": (0, "shape"), "full": (0, "shape"), "empty": (0, "shape")}
_SIZES_MODULES = ("runtime.ops.shape", "runtime.ops.creation")


def run_time_shape(ex: "OpcodeExecutor", tensor: TensorVariable) -> ListVariable | None:
    """`tensor.shape` with its dynamic dims as DimVariables computed by the graph, each with its form
    (`size_forms`); None where no dynamic input dim is behind them (sizes made by a value-dependent
    op: nothing to specialise)."""
    shape = tensor.meta.shape
    if not dims_behind(tensor, ex.inputs, None):
        return None
    read_at = ex.where()
    forms = ex.translation.size_forms
    with ex.recording():
        sizes = ex.builder.call_api(runtime.shape, [tensor.symbol])
        items: list[Variable] = [
            ConstantVariable(d) if d != -1 else
            DimVariable(ex.builder.call_method("__getitem__", sizes, [i]), dims_behind(tensor, ex.inputs, (i,)),
                        read_at, forms.of(tensor.symbol, i))
            for i, d in enumerate(shape)]
    return ListVariable(items)


def _int_constant(var: Variable) -> bool:
    return isinstance(var, ConstantVariable) and not isinstance(var, (NumberVariable, DimVariable)) \
        and type(var.value) is int


def size_arithmetic(ex: "OpcodeExecutor", op: str, left: Variable, right: Variable) -> Variable | None:
    """`left op right` with a DimVariable among them: `+` and `*` of sizes and non-negative ints, and
    `-` of an int, as a DimVariable the graph computes (its form: the same base, offset moved, where
    an int is added or taken away; a fresh base otherwise); `-` of two sizes of one base, the int
    their offsets differ by. None where the result needs the value (the caller folds it, which reads
    the value and specialises). A size below 2 (after `-`) is not a shape argument (`_sizes`)."""
    if op not in ("+", "*", "-"):
        return None
    if op == "-" and isinstance(left, DimVariable) and isinstance(right, DimVariable):
        return ConstantVariable(left.form[1] - right.form[1]) if left.form[0] is right.form[0] else None
    if op == "-" and not (isinstance(left, DimVariable) and _int_constant(right)):
        return None
    sizes = [v for v in (left, right) if isinstance(v, DimVariable)]
    ints = [v.value for v in (left, right) if _int_constant(v)]
    smallest = {"+": 0, "*": 1, "-": None}[op]  # (an int that keeps a size at least 2: see `_sizes` for `-`)
    if len(sizes) + len(ints) != 2 or (smallest is not None and any(i < smallest for i in ints)):
        return None
    size = sizes[0]
    other = sizes[1].symbol if len(sizes) == 2 else ints[0]
    with ex.recording():
        symbol = ex.builder.call_method({"+": "__add__", "*": "__mul__", "-": "__sub__"}[op], size.symbol, [other])
    base, offset = size.form
    form = (base, offset + ints[0]) if op == "+" and ints else (base, offset - ints[0]) if op == "-" else None
    dims = tuple(dict.fromkeys(size.dims + (sizes[1].dims if len(sizes) == 2 else ())))
    return DimVariable(symbol, dims, size.read_at, form)


def _sizes(ex: "OpcodeExecutor", var: Variable) -> Any:
    """A list/tuple of sizes as a recorded call's argument: a DimVariable item as its tensor."""
    if isinstance(var, TupleVariable) and any(isinstance(v, DimVariable) for v in var.items):
        # (a size that may be below 2, after `-`, must be made at least 2, or is read: specialised)
        items = [v.symbol if isinstance(v, DimVariable) and (v.lower >= 2 or at_least(
            ex, v.form, 2, f"a size less {2 - v.lower} is a shape argument")) else ex.as_arg(v)
            for v in var.items]
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


def _least_size_keeping_two(item: slice) -> int | None:
    """The least size n0 >= 2 such that slicing a dim of any size from n0 on by `item` (ints or None)
    keeps at least 2 items; None where no such size is (`x[-1:]` keeps 1 of any). Beyond the largest
    bound the kept count is linear in n, so the sizes up to past it, and the trend one step on, tell
    every size."""
    bounds = [abs(b) for b in (item.start, item.stop) if b is not None]
    step = abs(item.step or 1)
    last = (max(bounds, default=0) + 2) * step + 2
    sizes = range(2, last + step + 1)
    kept = [len(range(*item.indices(n))) for n in sizes]
    if kept[-1] < 2 or kept[-1] < kept[-1 - step]:
        return None
    short = [n for n, k in zip(sizes, kept) if k < 2]
    return short[-1] + 1 if short else 2


def check_slices(ex: "OpcodeExecutor", tensor: TensorVariable, index: Any) -> None:
    """Before `tensor[index]` is recorded: each dynamic dim a slice of `index` may leave with fewer than
    2 items (see the module docstring) must be large enough not to (`require_size`)."""
    items = index if type(index) is tuple else (index,)
    if not any(type(i) is slice for i in items):
        return
    shape = tensor.meta.shape
    for dim, item in _dims_indexed(items, len(shape)):
        if type(item) is slice and shape[dim] == -1 and item.step != 0 and all(
                b is None or type(b) is int for b in (item.start, item.stop, item.step)):
            least = _least_size_keeping_two(item)
            if least != 2:
                require_size(ex, tensor, dim, least, f"sliced by {_shown(item)}, which keeps fewer than 2 items of "
                                                     "a smaller size")


def require_size(ex: "OpcodeExecutor", tensor: TensorVariable, dim: int, least: int | None, why: str) -> None:
    """Dynamic `dim` of `tensor` must be at least `least` (None: no size will do) for what the translation
    makes of it (`at_least`); a size made in the frame, or no size at all, is specialised."""
    if least is None or not at_least(ex, ex.translation.size_forms.of(tensor.symbol, dim), least, why):
        specialise(tensor, ex.inputs, (dim,), why, "")


def at_least(ex: "OpcodeExecutor", form: tuple[object, int], least: int, why: str) -> bool:
    """Make the size of `form` at least `least`: the input dim its base is (`size_forms`) stays dynamic
    for sizes of at least that, less the form's offset (StaticDimNeeded with `minimum`: simulated
    again); True where its guard already says so, False where the base is no input dim's size."""
    forms = ex.translation.size_forms
    base, offset = form
    origin = forms.origin(base)
    if origin is None:
        return False
    source, rank, d = origin
    held = next((v.least.get(d, 2) for v in ex.inputs if v.tracker.source.text == source
                 and len(v.meta.shape) == rank), 2)
    if least - offset > held:
        raise StaticDimNeeded((origin,), why, minimum=least - offset)
    return True


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


def sized_arguments(ex: "OpcodeExecutor", name: str, args: list[Variable], kwargs: dict[str, Variable]) -> list:
    """The arguments (a Tensor method's with self first) of a call of runtime op `name` about to be
    recorded, after what run-time sizes ask of it: a reshape's `-1` that sizes cancel from made static
    (`_reshape_sizes`), the dims a squeeze may drop specialised (`_check_squeeze`)."""
    if name in ("reshape", "view") and len(args) > 1:
        args = [args[0], _reshape_sizes(ex, args[0], args[1]), *args[2:]]
    _check_squeeze(ex, name, args, kwargs)
    return args


def _check_squeeze(ex: "OpcodeExecutor", name: str, args: list[Variable], kwargs: dict[str, Variable]) -> None:
    """Before a recorded `squeeze(x, axis=None)` (`name`: the runtime function's or Tensor method's,
    `args[0]`: x): the dynamic dims it may drop, which it drops only where their size is 1, must be at
    least 2 (`require_size`): so they are where an input dim's size is theirs, guarded; a size made in
    the frame may be 1 (a pool of a size-2 dim), and is specialised."""
    if name not in ("squeeze", "squeeze_") or not args or not isinstance(args[0], TensorVariable):
        return
    shape = args[0].meta.shape
    axis_var = args[1] if len(args) > 1 else kwargs.get("axis")
    axis = None if axis_var is None else ex.python_value(axis_var)
    axes = range(len(shape)) if axis is None else [axis] if type(axis) is int else list(axis)
    for d in sorted({a % len(shape) for a in axes if type(a) is int and -len(shape) <= a < len(shape)}):
        if shape[d] == -1:
            require_size(ex, args[0], d, 2, "squeezed, which drops a dim only where its size is 1")


class DimSliceVariable(ConstantVariable):
    """A slice with a DimVariable among its bounds (BUILD_SLICE): `slice_by_sizes` resolves it against
    the sliced dim's form; anything else reads `value`, whose sizes' values specialise their dims."""

    def __init__(self, start: Variable, stop: Variable, step: Variable):
        Variable.__init__(self)
        self.parts = (start, stop, step)

    @property
    def value(self) -> slice:
        return slice(*(p.value for p in self.parts))

    def _describe(self) -> str:
        return ":".join("" if isinstance(p, ConstantVariable) and p.value is None else repr(p) for p in self.parts)


def _bound_offset(part: Variable, base: object) -> int | None | bool:
    """A slice bound against a dim whose form has `base`: its offset (a size of that base), None (no
    bound), or False (anything else)."""
    if isinstance(part, DimVariable):
        return part.form[1] if part.form[0] is base else False
    return None if is_none(part) else False


def _resolve(item: DimSliceVariable, form: tuple[object, int] | None) -> tuple[slice, Any] | None:
    """`item` on a dim of size `form` as a static slice, and what it keeps: a static length, or the
    form of a size (`x[:k - n]`); None where the bounds do not cancel against the dim's size."""
    start, stop, step = item.parts
    if form is None or not (isinstance(step, ConstantVariable) and step.value in (None, 1)):
        return None
    base, size = form
    low, high = _bound_offset(start, base), _bound_offset(stop, base)
    if low is False or high is False or (low is None and high is None) or (low is not None and low < 0) \
            or (high is not None and high < 0):  # (a bound below its base's size could be negative)
        return None
    high = size if high is None else min(high, size)
    if low is None:  # x[:k - n]: all but the last size - high items, at least the base's size (>= 2)
        return slice(None, high - size or None), (base, high)
    kept = max(high - low, 0)  # x[k - n:] and x[k - a:k - b]: a length the base cancels from
    return (slice(low - size, high - size or None) if kept else slice(0, 0)), kept


def slice_by_sizes(ex: "OpcodeExecutor", tensor: TensorVariable, index: Variable) -> Variable | None:
    """`tensor[index]` where slices of `index` have sizes of the sliced dims' forms as bounds: recorded
    with static slices counted from the end, a length the sizes cancel to made static by a reshape
    (`0` keeps a dim), and the forms of the dims it keeps told; None where a bound does not cancel
    (the caller reads it: specialised)."""
    items = tuple(index.items) if type(index) is TupleVariable else (index,)
    if not all(isinstance(i, (DimSliceVariable, ConstantVariable)) and not isinstance(i, DimVariable)
               for i in items):
        return None
    plain = [i if isinstance(i, DimSliceVariable) else i.value for i in items]
    shape = tensor.meta.shape
    if any(type(i) not in (int, slice, type(None), type(Ellipsis), DimSliceVariable) for i in plain):
        return None
    forms = ex.translation.size_forms
    position = {id(i): k for k, i in enumerate(plain)}
    resolved, kept = list(plain), {}
    for dim, item in _dims_indexed(tuple(plain), len(shape)):
        if isinstance(item, DimSliceVariable):
            done = _resolve(item, forms.of(tensor.symbol, dim) if shape[dim] == -1 else None)
            if done is None:
                return None
            resolved[position[id(item)]], kept[dim] = done
    for dim, item in _dims_indexed(tuple(resolved), len(shape)):  # a dim taken whole keeps its size
        if dim not in kept and shape[dim] == -1 and item == slice(None):
            kept[dim] = forms.of(tensor.symbol, dim)
    sources = _output_sources(tuple(resolved), len(shape))
    static = [kept.get(d) if type(kept.get(d)) is int else None for d in sources]
    with ex.recording():
        out = ex.builder.call_method("__getitem__", ex.as_arg(tensor), [tuple(resolved) if type(index) is TupleVariable
                                                                         else resolved[0]])
        if any(n is not None for n in static):
            out = ex.builder.call_api(runtime.reshape, [out, [0 if n is None else n for n in static]])
    result = ex.from_result(out)
    for i, d in enumerate(sources):
        if type(kept.get(d)) is tuple and result.meta.shape[i] == -1:
            forms.tell(result.symbol, i, kept[d])
    return result


def _output_sources(index: tuple, rank: int) -> list[int | None]:
    """Per dim of `x[index]` (ints, slices, None, Ellipsis), the dim of x it comes from (None: a new one)."""
    ellipsis = next((k for k, i in enumerate(index) if i is Ellipsis), None)
    if ellipsis is not None:
        taking = sum(i is not Ellipsis and i is not None for i in index)
        index = index[:ellipsis] + (slice(None),) * (rank - taking) + index[ellipsis + 1:]
    out, dim = [], 0
    for item in index:
        if item is None:
            out.append(None)
        elif type(item) is int:
            dim += 1
        else:
            out.append(dim)
            dim += 1
    return out + list(range(dim, rank))


def arange_over_sizes(ex: "OpcodeExecutor", args: list[Variable], kwargs: dict[str, Variable]) -> Variable | None:
    """`paddle.arange` bounded by sizes known only at run time: `arange(past, past + n)` (both of one
    base: a KV cache's positions) is `arange(n) + past`, of a static length; `arange(seq_len)` or
    `arange(s, seq_len)` (an int start: the size made at least s + 2, `at_least`) records runtime's
    `arange_sizes`, of the size's length, whose form it tells. None otherwise (the bounds are read,
    which specialises their dims)."""
    names = ("start", "end", "step", "dtype")
    bound = dict(zip(names, args)) | kwargs
    if set(bound) - set(names):
        return None
    start, end, step, dtype = (bound.get(k) for k in names)
    if isinstance(start, DimVariable) and (end is None or is_none(end)):
        start, end = None, start
    if not isinstance(end, DimVariable) or (step is not None and not (_int_constant(step) and step.value == 1)):
        return None
    dt = "int64" if dtype is None or is_none(dtype) else ex.as_arg(dtype)
    if isinstance(start, DimVariable):
        if start.form[0] is not end.form[0]:
            return None
        with ex.recording():
            count = ex.builder.call_api(runtime.arange, [], {"start": 0, "end": max(end.form[1] - start.form[1], 0),
                                                              "dtype": dt})
            first = ex.builder.call_api(runtime.cast, [start.symbol, dt])
            return ex.from_result(ex.builder.call_method("__add__", count, [first]))
    first = 0 if start is None else start.value if _int_constant(start) else None
    base, offset = end.form
    if first is None or (offset - first < 0 and not at_least(ex, (base, offset - first), 2,
                                                             f"arange from {first} to a size")):
        return None
    with ex.recording():
        ranged = ex.from_result(ex.builder.call_api(runtime.arange, [first, end.symbol], {"dtype": dt}))
    ex.translation.size_forms.tell(ranged.symbol, 0, (base, offset - first))
    return ranged


def _reshape_sizes(ex: "OpcodeExecutor", x: Variable, sizes: Variable) -> Variable:
    """The sizes of `x.reshape(sizes)` with a `-1` to infer made static where the sizes known only at run
    time cancel: `x` [B, T, 2, 8] with T dynamic reshaped to [B, T, -1] has 16 there whatever T is.
    Cancelling: the dynamic dims of x and the DimVariables among `sizes` are the same forms, once each
    (their run-time sizes divide out of both element counts). `sizes` itself otherwise."""
    if not (isinstance(x, TensorVariable) and isinstance(sizes, TupleVariable) and -1 in x.meta.shape):
        return sizes
    items = sizes.items
    plain = [i for i in items if not isinstance(i, DimVariable)]
    if not all(_int_constant(i) for i in plain) or [i.value for i in plain].count(-1) != 1 or \
            any(i.value == 0 for i in plain):
        return sizes
    forms = ex.translation.size_forms
    have = sorted((id(f[0]), f[1]) for f in (forms.of(x.symbol, d) for d, n in enumerate(x.meta.shape) if n == -1))
    given = sorted((id(i.form[0]), i.form[1]) for i in items if isinstance(i, DimVariable))
    if have != given:
        return sizes
    static_in = math.prod(n for n in x.meta.shape if n != -1)
    static_out = math.prod(i.value for i in plain if i.value != -1)
    if static_out == 0 or static_in % static_out:
        return sizes
    made = [ConstantVariable(static_in // static_out) if _int_constant(i) and i.value == -1 else i for i in items]
    return ListVariable(made) if isinstance(sizes, ListVariable) else TupleVariable(made)
