"""The gather/scatter family: gather, gather_nd, index_select, repeat_interleave, scatter,
scatter_nd(_add), index_add, index_sample, masked_fill, take_along_axis, put_along_axis, and their
in-place variants. Their gradients are getitem/setitem ops over the index templates of `indexing`.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor, tensor_method
from . import creation, math, shape
from . import meta_utils as mu
from .grad_utils import unbroadcast
from .indexing import FULL_SLICE, GETITEM_GRAD, SETITEM, int64_array, on_device_of, scatter_add
from .inplace import inplace_api
from .registry import Sample, TensorSpec, defop, normal_sampler
from .shape import run_time_sizes

__all__ = ["gather", "gather_nd", "index_select", "scatter", "scatter_", "scatter_nd", "scatter_nd_add",
           "index_add", "index_add_", "index_sample", "masked_fill", "masked_fill_", "take_along_axis",
           "put_along_axis", "put_along_axis_", "repeat_interleave"]

_normal = normal_sampler(np.random.default_rng(6))


def _require_int(op: str, spec: TensorSpec, arg: str = "index") -> None:
    mu.require_dtype_kind(op, spec, "iu", "an integer tensor (int32/int64)", arg)


def _require_shape(op: str, arg: str, spec: TensorSpec, expected: tuple, how: str = "{}") -> None:
    """ValueError unless spec's shape is `expected`; `how` frames the expected shape in the message."""
    if tuple(spec.shape) != expected:
        raise ValueError(f"{op}: argument '{arg}' has shape {mu.shape_str(spec.shape)}, expected "
                         + how.format(mu.shape_str(expected)))


def _gather_meta(x: TensorSpec, index: TensorSpec, *, axis: int) -> TensorSpec:
    _require_int("gather", index)
    if len(index.shape) > 2 or (len(index.shape) == 2 and index.shape[1] != 1):
        raise ValueError(f"gather: argument 'index' must be 0-D, 1-D or [N, 1], got shape "
                         f"{mu.shape_str(index.shape)}")
    a = mu.normalize_axis("gather", axis, len(x.shape))
    return TensorSpec(x.shape[:a] + tuple(index.shape[:1]) + x.shape[a + 1:], x.dtype)


def _flat_index(index):
    """An [N, 1] index counts as its N entries, as in Paddle (older model code builds indices that way)."""
    return index.reshape(-1) if index.ndim == 2 else index


def _axis_template(axis: int, ndim: int) -> tuple:
    """The getitem template of x[:, ..., :, index] with the index at dimension `axis`."""
    return (FULL_SLICE,) * (axis % ndim) + (("tensor", 0),)


def _g_gather(ctx, g):
    x, index = ctx.inputs
    template = _axis_template(ctx.attrs["axis"], x.ndim)
    return GETITEM_GRAD(g, _flat_index(index), index=template, shape=tuple(x.shape)), None


_GATHER = defop("gather", kernel=lambda xp, x, index, *, axis: xp.take(x, _flat_index(index), axis=axis),
                meta=_gather_meta, grad=_g_gather, inputs=("x", "index"), attrs={"axis": 0},
                samples=lambda: [Sample((_normal(4, 3), int64_array(3, 0, 3)), {"axis": 0}),
                                 Sample((_normal(2, 4, 3), int64_array(1, 2)), {"axis": -2}),
                                 Sample((_normal(4, 3), int64_array(2, 0, 2).reshape(3, 1)), {"axis": 1})])


@tensor_method
def gather(x: Tensor, index: Tensor, axis: Any = None, name: str | None = None) -> Tensor:
    """The slices x[..., index[i], ...] along `axis` (default 0), stacked in index order."""
    return _GATHER(as_tensor(x, "x", "gather"), as_tensor(index, "index", "gather"),
                   axis=0 if axis is None else mu.int_arg("gather", "axis", axis))


@tensor_method
def index_select(x: Tensor, index: Tensor, axis: int = 0, name: str | None = None) -> Tensor:
    """The slices of x along `axis` at the positions in the 1-D tensor `index`."""
    return _GATHER(as_tensor(x, "x", "index_select"), as_tensor(index, "index", "index_select"),
                   axis=mu.int_arg("index_select", "axis", axis))


@tensor_method
def repeat_interleave(x: Tensor, repeats: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """Repeat each element (each slice along `axis`; None: of the flattened x) `repeats` times."""
    x = as_tensor(x, "x", "repeat_interleave")
    if axis is None:
        x, axis = shape.flatten(x), 0
    a = mu.normalize_axis("repeat_interleave", mu.int_arg("repeat_interleave", "axis", axis), x.ndim)
    n = x.shape[a]
    reps = repeats.numpy().reshape(-1) if isinstance(repeats, Tensor) else np.asarray(repeats).reshape(-1)
    if reps.dtype.kind not in "iu" or reps.size not in (1, n) or (reps < 0).any():
        raise ValueError(f"repeat_interleave: argument 'repeats' must be a non-negative int or {n} ints "
                         f"(the size of dimension {a}), got {reps.tolist()}")
    index = np.repeat(np.arange(n, dtype=np.int64), reps)
    return index_select(x, Tensor._wrap(on_device_of(index, x._data)), a)


# ---------------------------------------------------------------- gather_nd / scatter_nd_add
def _nd_depth(op: str, x: TensorSpec, index: TensorSpec) -> int:
    _require_int(op, index)
    if not index.shape:
        raise ValueError(f"{op}: argument 'index' must have at least 1 dimension")
    k = index.shape[-1]
    if k > len(x.shape) or k == -1:
        raise ValueError(f"{op}: the last dimension of argument 'index' {mu.shape_str(index.shape)} must be a "
                         f"known size <= the rank of x {mu.shape_str(x.shape)}")
    return k


def _gather_nd_meta(x: TensorSpec, index: TensorSpec) -> TensorSpec:
    k = _nd_depth("gather_nd", x, index)
    return TensorSpec(tuple(index.shape[:-1]) + tuple(x.shape[k:]), x.dtype)


def _nd_key(index) -> tuple:
    return tuple(index[..., i] for i in range(index.shape[-1]))


def _gather_nd_kernel(xp, x, index):
    if index.shape[-1] == 0:
        return xp.broadcast_to(x, index.shape[:-1] + x.shape).copy()
    return x[_nd_key(index)]


def _nd_columns(index: Tensor) -> tuple[tuple, list]:
    """The getitem template and index tensors that x[index[..., 0], index[..., 1], ...] stands for."""
    cols = shape.unbind(index, axis=-1)
    return tuple(("tensor", i) for i in range(len(cols))), cols


def _g_gather_nd(ctx, g):
    x, index = ctx.inputs
    if index.shape[-1] == 0:
        return unbroadcast(g, x), None
    template, cols = _nd_columns(index)
    return GETITEM_GRAD(g, *cols, index=template, shape=tuple(x.shape)), None


_GATHER_ND = defop("gather_nd", kernel=_gather_nd_kernel, meta=_gather_nd_meta, grad=_g_gather_nd,
                   inputs=("x", "index"),
                   samples=lambda: [Sample((_normal(3, 4, 2), int64_array([0, 1], [2, 3], [0, 1]))),
                                    Sample((_normal(3, 4), int64_array([[2], [0]], [[1], [1]])))])


@tensor_method
def gather_nd(x: Tensor, index: Tensor, name: str | None = None) -> Tensor:
    """x at the coordinates in the last dimension of `index` (a partial index keeps the remaining dims)."""
    return _GATHER_ND(as_tensor(x, "x", "gather_nd"), as_tensor(index, "index", "gather_nd"))


def _scatter_nd_add_meta(x: TensorSpec, index: TensorSpec, updates: TensorSpec) -> TensorSpec:
    k = _nd_depth("scatter_nd_add", x, index)
    _require_shape("scatter_nd_add", "updates", updates, tuple(index.shape[:-1]) + tuple(x.shape[k:]),
                   "index.shape[:-1] + x.shape[index.shape[-1]:] = {}")
    return x


def _scatter_nd_add_kernel(xp, x, index, updates):
    out = x.copy()
    scatter_add(xp, out, _nd_key(index), updates.astype(x.dtype, copy=False))
    return out


_SCATTER_ND_ADD = defop("scatter_nd_add", kernel=_scatter_nd_add_kernel, meta=_scatter_nd_add_meta,
                        grad=lambda ctx, g: (g, None, gather_nd(g, ctx.inputs[1])),
                        inputs=("x", "index", "updates"),
                        samples=lambda: [Sample((_normal(3, 4), int64_array([1], [0], [1]), _normal(3, 4))),
                                         Sample((_normal(3, 4), int64_array([1, 2], [1, 2]), _normal(2)))])


@tensor_method
def scatter_nd_add(x: Tensor, index: Tensor, updates: Tensor, name: str | None = None) -> Tensor:
    """x with `updates` added at the coordinates in `index` (repeats accumulate)."""
    return _SCATTER_ND_ADD(as_tensor(x, "x", "scatter_nd_add"), as_tensor(index, "index", "scatter_nd_add"),
                           as_tensor(updates, "updates", "scatter_nd_add"))


def scatter_nd(index: Tensor, updates: Tensor, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of `shape` with `updates` added at the coordinates in `index`."""
    updates = as_tensor(updates, "updates", "scatter_nd")
    if run_time_sizes(shape):  # sizes known when a static program runs
        zeros = creation.zeros(shape, dtype=updates.dtype)
    else:  # where the updates live, whatever the default device
        zeros = creation.create_on(updates, "full", shape=creation._shape_arg("scatter_nd", shape), fill_value=0)
    return scatter_nd_add(zeros, index, updates)


# ---------------------------------------------------------------- scatter / index_add
def _scatter_meta(x: TensorSpec, index: TensorSpec, updates: TensorSpec, *, overwrite: bool) -> TensorSpec:
    _require_int("scatter", index)
    if len(index.shape) > 1 or not x.shape:
        raise ValueError(f"scatter: argument 'index' must be 0-D or 1-D and x at least 1-D, got index "
                         f"{mu.shape_str(index.shape)} and x {mu.shape_str(x.shape)}")
    _require_shape("scatter", "updates", updates, tuple(index.shape) + tuple(x.shape[1:]),
                   "{} (index length + x.shape[1:])")
    return x


def _scatter_kernel(xp, x, index, updates, *, overwrite):
    out = x.copy()
    updates = updates.astype(x.dtype, copy=False)
    if overwrite:
        out[index] = updates
    else:  # rows named by index are reset, then every update is added (Paddle's overwrite=False)
        out[index] = 0
        scatter_add(xp, out, index, updates)
    return out


_ROW = (("tensor", 0),)


def _g_scatter(ctx, g):
    _, index, _ = ctx.inputs
    gx = SETITEM(g, creation.zeros([], dtype=g.dtype), index, index=_ROW) if ctx.needs_input_grad[0] else None
    return gx, None, _GATHER(g, index, axis=0) if ctx.needs_input_grad[2] else None


_SCATTER = defop("scatter", kernel=_scatter_kernel, meta=_scatter_meta, grad=_g_scatter,
                 inputs=("x", "index", "updates"), attrs={"overwrite": True},
                 samples=lambda: [Sample((_normal(4, 3), int64_array(2, 0), _normal(2, 3)), {"overwrite": True}),
                                  Sample((_normal(4, 3), int64_array(2, 0, 2), _normal(3, 3)), {"overwrite": False})])


@tensor_method
def scatter(x: Tensor, index: Tensor, updates: Tensor, overwrite: bool = True, name: str | None = None) -> Tensor:
    """x with rows index[i] replaced by updates[i] (overwrite=False: rows reset, then updates summed)."""
    return _SCATTER(as_tensor(x, "x", "scatter"), as_tensor(index, "index", "scatter"),
                    as_tensor(updates, "updates", "scatter"), overwrite=bool(overwrite))


def _index_add_meta(x: TensorSpec, index: TensorSpec, value: TensorSpec, *, axis: int) -> TensorSpec:
    _require_int("index_add", index)
    if len(index.shape) != 1:
        raise ValueError(f"index_add: argument 'index' must be 1-D, got shape {mu.shape_str(index.shape)}")
    a = mu.normalize_axis("index_add", axis, len(x.shape))
    _require_shape("index_add", "value", value, x.shape[:a] + tuple(index.shape) + x.shape[a + 1:])
    return x


def _index_add_kernel(xp, x, index, value, *, axis):
    out = x.copy()
    scatter_add(xp, out, (builtins.slice(None),) * (axis % x.ndim) + (index,), value.astype(x.dtype, copy=False))
    return out


_INDEX_ADD = defop("index_add", kernel=_index_add_kernel, meta=_index_add_meta,
                   grad=lambda ctx, g: (g, None, _GATHER(g, ctx.inputs[1], axis=ctx.attrs["axis"])),
                   inputs=("x", "index", "value"), attrs={"axis": 0},
                   samples=lambda: [Sample((_normal(3, 4), int64_array(1, 1, 3), _normal(3, 3)), {"axis": 1})])


@tensor_method
def index_add(x: Tensor, index: Tensor, axis: int, value: Tensor, name: str | None = None) -> Tensor:
    """x with the slices of `value` added at positions `index` along `axis` (repeats accumulate)."""
    return _INDEX_ADD(as_tensor(x, "x", "index_add"), as_tensor(index, "index", "index_add"),
                      as_tensor(value, "value", "index_add"), axis=mu.int_arg("index_add", "axis", axis))


# ---------------------------------------------------------------- take_along_axis / put_along_axis
def _along_meta(op: str, arr: TensorSpec, indices: TensorSpec, axis: int) -> int:
    _require_int(op, indices, "indices")
    if len(indices.shape) != len(arr.shape):
        raise ValueError(f"{op}: argument 'indices' {mu.shape_str(indices.shape)} must have as many dimensions "
                         f"as 'arr' {mu.shape_str(arr.shape)}")
    a = mu.normalize_axis(op, axis, len(arr.shape))
    for d, (i, s) in enumerate(zip(indices.shape, arr.shape)):
        if d != a and i != s and -1 not in (i, s):
            raise ValueError(f"{op}: 'indices' {mu.shape_str(indices.shape)} and 'arr' {mu.shape_str(arr.shape)} "
                             f"must agree outside dimension {a} (or pass broadcast=True)")
    return a


def _take_along_meta(arr: TensorSpec, indices: TensorSpec, *, axis: int) -> TensorSpec:
    _along_meta("take_along_axis", arr, indices, axis)
    return TensorSpec(tuple(indices.shape), arr.dtype)


def _g_take_along(ctx, g):
    arr, indices = ctx.inputs
    return _PUT_ALONG(creation.zeros_like(arr), indices, g, axis=ctx.attrs["axis"], reduce="add",
                      include_self=True), None


_TAKE_ALONG = defop("take_along_axis",
                    kernel=lambda xp, arr, indices, *, axis: xp.take_along_axis(arr, indices, axis),
                    meta=_take_along_meta, grad=_g_take_along, inputs=("arr", "indices"), attrs={"axis": 0},
                    samples=lambda: [Sample((_normal(3, 4), int64_array([0, 3, 3], [1, 1, 2], [2, 0, 0])), {"axis": 1})])


def _put_along_meta(arr: TensorSpec, indices: TensorSpec, values: TensorSpec, *, axis: int, reduce: str,
                    include_self: bool) -> TensorSpec:
    _along_meta("put_along_axis", arr, indices, axis)
    if reduce not in ("assign", "add"):
        raise ValueError(f"put_along_axis: argument 'reduce' must be 'assign' or 'add', got {reduce!r}")
    mu.broadcast_shape("put_along_axis", values.shape, indices.shape, ("values", "indices"))
    return arr


def _along_key(xp, indices, axis: int) -> tuple:
    """The fancy index addressing arr[..., indices[i, j, ...], ...] along `axis`."""
    n = indices.ndim
    axis %= n
    return tuple(indices if d == axis else xp.arange(indices.shape[d]).reshape((-1,) + (1,) * (n - d - 1))
                 for d in range(n))


def _put_along_kernel(xp, arr, indices, values, *, axis, reduce, include_self):
    out = arr.copy()
    key = _along_key(xp, indices, axis)
    values = xp.broadcast_to(values.astype(arr.dtype, copy=False), indices.shape)
    if reduce == "assign":
        out[key] = values
    else:
        if not include_self:
            out[key] = 0
        scatter_add(xp, out, key, values)
    return out


def _g_put_along(ctx, g):
    arr, indices, values = ctx.inputs
    axis, reduce, include_self = ctx.attrs["axis"], ctx.attrs["reduce"], ctx.attrs["include_self"]
    gx = None
    if ctx.needs_input_grad[0]:
        gx = g if reduce == "add" and include_self else _PUT_ALONG(
            g, indices, creation.zeros([], dtype=g.dtype), axis=axis, reduce="assign", include_self=True)
    gv = unbroadcast(_TAKE_ALONG(g, indices, axis=axis), values) if ctx.needs_input_grad[2] else None
    return gx, None, gv


_PUT_ALONG = defop(
    "put_along_axis", kernel=_put_along_kernel, meta=_put_along_meta, grad=_g_put_along,
    inputs=("arr", "indices", "values"), attrs={"axis": 0, "reduce": "assign", "include_self": True},
    samples=lambda: [Sample((_normal(3, 4), int64_array([3, 0], [1, 2], [0, 3]), _normal(3, 2)),
                            {"axis": 1, "reduce": "assign", "include_self": True}),
                     Sample((_normal(3, 4), int64_array([1, 1, 0, 2]), _normal(1, 4)),
                            {"axis": 0, "reduce": "add", "include_self": True}),
                     Sample((_normal(3, 4), int64_array([1, 1, 0, 2]), _normal(1, 4)),
                            {"axis": 0, "reduce": "add", "include_self": False})])


def _broadcast_along(arr: Tensor, indices: Tensor, axis: int) -> tuple[Tensor, Tensor]:
    """Paddle's broadcast=True: indices take arr's shape outside `axis`, then arr takes indices'."""
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: argument 'indices' {indices.shape} must have as many "
                         f"dimensions as 'arr' {arr.shape}")
    a = mu.normalize_axis("take_along_axis", axis, arr.ndim)
    target = arr.shape
    target[a] = indices.shape[a]
    if indices.shape != target:
        indices = shape.broadcast_to(indices, target)
    target = list(indices.shape)
    target[a] = arr.shape[a]
    if arr.shape != target:
        arr = shape.broadcast_to(arr, target)
    return arr, indices


@tensor_method
def take_along_axis(arr: Tensor, indices: Tensor, axis: int, broadcast: bool = True) -> Tensor:
    """arr[..., indices[..., i, ...], ...] picked along `axis` (NumPy's take_along_axis)."""
    arr = as_tensor(arr, "arr", "take_along_axis")
    indices = as_tensor(indices, "indices", "take_along_axis")
    axis = mu.int_arg("take_along_axis", "axis", axis)
    if broadcast:
        arr, indices = _broadcast_along(arr, indices, axis)
    return _TAKE_ALONG(arr, indices, axis=axis)


@tensor_method
def put_along_axis(arr: Tensor, indices: Tensor, values: Any, axis: int, reduce: str = "assign",
                   include_self: bool = True, broadcast: bool = True) -> Tensor:
    """arr with `values` written ('assign') or added ('add') at `indices` along `axis`."""
    arr = as_tensor(arr, "arr", "put_along_axis")
    indices = as_tensor(indices, "indices", "put_along_axis")
    axis = mu.int_arg("put_along_axis", "axis", axis)
    if not isinstance(values, Tensor):
        values = math._scalar_tensor("put_along_axis", values, arr, "values")
    if broadcast:
        if arr.ndim == indices.ndim:
            target = arr.shape
            target[axis] = indices.shape[axis]
            if indices.shape != target:
                indices = shape.broadcast_to(indices, target)
    return _PUT_ALONG(arr, indices, values, axis=axis, reduce=reduce, include_self=bool(include_self))


@tensor_method
def index_sample(x: Tensor, index: Tensor) -> Tensor:
    """For 2-D x and index: out[i, j] = x[i, index[i, j]]."""
    x = as_tensor(x, "x", "index_sample")
    index = as_tensor(index, "index", "index_sample")
    if x.ndim != 2 or index.ndim != 2 or x.shape[0] != index.shape[0]:
        raise ValueError(f"index_sample: arguments 'x' {x.shape} and 'index' {index.shape} must be 2-D with the "
                         "same first dimension")
    return _TAKE_ALONG(x, index, axis=1)


@tensor_method
def masked_fill(x: Tensor, mask: Tensor, value: Any, name: str | None = None) -> Tensor:
    """x with `value` where the bool `mask` (broadcast to x) is True."""
    x = as_tensor(x, "x", "masked_fill")
    mask = as_tensor(mask, "mask", "masked_fill")
    if mask._data.dtype.kind != "b":
        raise TypeError(f"masked_fill: argument 'mask' must be a bool tensor, got {mask.dtype.name}")
    if isinstance(value, Tensor) and value._data.dtype != x._data.dtype:
        value = math.cast(value, x.dtype)
    return math.where(mask, value, x)


scatter_ = inplace_api(scatter, "scatter_")
index_add_ = inplace_api(index_add, "index_add_")
masked_fill_ = inplace_api(masked_fill, "masked_fill_")
put_along_axis_ = inplace_api(put_along_axis, "put_along_axis_")
