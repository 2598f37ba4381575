"""Search and sort: topk, sort, argsort, kthvalue, mode, unique, unique_consecutive,
searchsorted, bucketize (nonzero and masked_select, which boolean indexing is built on, live in
indexing). Ops whose output size depends on the values (unique*) are flagged dynamic_shape and
report -1 for that size.

Sorting is stable throughout (ties keep index order), so indices are deterministic; a
descending order sorts a key whose ascending order is x's descending one.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, as_tensor, tensor_method
from . import creation, gather, indexing, shape
from . import meta_utils as mu
from .registry import Sample, TensorSpec, defop

__all__ = ["topk", "sort", "argsort", "kthvalue", "mode", "unique", "unique_consecutive",
           "searchsorted", "bucketize"]

_rng = np.random.default_rng(17)
_INT64 = np.dtype("int64")
_INT32 = np.dtype("int32")


def _distinct(*shape):
    """Float64 samples without ties (sorting and top-k gradients are defined away from ties)."""
    n = int(np.prod(shape))
    return (_rng.permutation(n) + _rng.uniform(0.1, 0.9, n)).reshape(shape) / n


def _sort_key(xp, x, descending: bool):
    """An array whose ascending order is x's (descending) order; ~ reverses ints and bools exactly."""
    if not descending:
        return x
    return -x if x.dtype.kind in "fc" else ~x


def _put_back(x: Tensor, indices: Tensor, g: Tensor, axis: int) -> Tensor:
    """Gradient of values taken from x at `indices` along `axis`: scattered back into zeros."""
    return gather.put_along_axis(creation.zeros_like(x), indices, g, axis, reduce="add", broadcast=False)


def _require_dim(op: str, x: TensorSpec) -> None:
    if not x.shape:
        raise ValueError(f"{op}: argument 'x' must have at least 1 dimension, got a 0-D tensor")


# ---------------------------------------------------------------- sort / argsort / topk / kthvalue
def _sort_meta(x: TensorSpec, *, axis: int, descending: bool, stable: bool) -> tuple:
    if x.shape:
        mu.normalize_axis("sort", axis, len(x.shape))
    return x, TensorSpec(x.shape, _INT64)


def _sort_kernel(xp, x, *, axis, descending, stable):
    if x.ndim == 0:
        return x.copy(), xp.zeros((), _INT64)
    idx = xp.argsort(_sort_key(xp, x, descending), axis=axis, kind="stable")
    return xp.take_along_axis(x, idx, axis), idx.astype(_INT64, copy=False)


def _g_sort(ctx, g, _):
    x = ctx.inputs[0]
    if x.ndim == 0:
        return (g,)
    return (_put_back(x, ctx.outputs[1], g, ctx.attrs["axis"]),)


_SORT = defop("sort", kernel=_sort_kernel, meta=_sort_meta, grad=_g_sort, save_outputs=True,
              nondiff_outputs=(1,), attrs={"axis": -1, "descending": False, "stable": False},
              samples=lambda: [Sample((_distinct(3, 4),), {"axis": -1, "descending": False, "stable": False}),
                               Sample((_distinct(3, 4),), {"axis": 0, "descending": True, "stable": True})])


def _bool(op: str, arg: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{op}: argument '{arg}' must be a bool, got {type(v).__name__}")
    return bool(v)


@tensor_method
def sort(x: Tensor, axis: int = -1, descending: bool = False, stable: bool = False,
         name: str | None = None) -> Tensor:
    """The values of x sorted along `axis` (ties keep their order)."""
    return _SORT(as_tensor(x, "x", "sort"), axis=mu.int_arg("sort", "axis", axis),
                 descending=_bool("sort", "descending", descending), stable=_bool("sort", "stable", stable))[0]


@tensor_method
def argsort(x: Tensor, axis: int = -1, descending: bool = False, stable: bool = False,
            name: str | None = None) -> Tensor:
    """The int64 indices that sort x along `axis` (ties keep their order)."""
    return _SORT(as_tensor(x, "x", "argsort"), axis=mu.int_arg("argsort", "axis", axis),
                 descending=_bool("argsort", "descending", descending),
                 stable=_bool("argsort", "stable", stable))[1]


def _k_axis(op: str, x: TensorSpec, k: int, axis: int) -> int:
    """The normalized axis of a k-th/top-k op, after checking 1 <= k <= the size of that dimension."""
    _require_dim(op, x)
    a = mu.normalize_axis(op, axis, len(x.shape))
    n = x.shape[a]
    if k < 1 or (n != -1 and k > n):
        raise ValueError(f"{op}: argument 'k' ({k}) must be in [1, {n}], the size of dimension {a} of x "
                         f"{mu.shape_str(x.shape)}")
    return a


def _topk_meta(x: TensorSpec, *, k: int, axis: int, largest: bool, sorted: bool) -> tuple:  # noqa: A002
    a = _k_axis("topk", x, k, axis)
    out = x.shape[:a] + (k,) + x.shape[a + 1:]
    return TensorSpec(out, x.dtype), TensorSpec(out, _INT64)


def _topk_kernel(xp, x, *, k, axis, largest, sorted):  # noqa: A002
    idx = xp.argsort(_sort_key(xp, x, largest), axis=axis, kind="stable")
    idx = xp.take(idx, xp.arange(k), axis=axis)
    return xp.take_along_axis(x, idx, axis), idx.astype(_INT64, copy=False)


_TOPK = defop("topk", kernel=_topk_kernel, meta=_topk_meta, save_outputs=True, nondiff_outputs=(1,),
              grad=lambda ctx, g, _: (_put_back(ctx.inputs[0], ctx.outputs[1], g, ctx.attrs["axis"]),),
              attrs={"k": 1, "axis": -1, "largest": True, "sorted": True},
              samples=lambda: [Sample((_distinct(3, 5),), {"k": 2, "axis": -1, "largest": True, "sorted": True}),
                               Sample((_distinct(4, 3),), {"k": 3, "axis": 0, "largest": False, "sorted": True})])


@tensor_method
def topk(x: Tensor, k: Any, axis: int | None = None, largest: bool = True, sorted: bool = True,  # noqa: A002
         name: str | None = None) -> tuple[Tensor, Tensor]:
    """The k largest (or smallest) values along `axis` (default: last) and their int64 indices."""
    x = as_tensor(x, "x", "topk")
    k = mu.int_arg("topk", "k", k)
    return _TOPK(x, k=k, axis=-1 if axis is None else mu.int_arg("topk", "axis", axis),
                 largest=_bool("topk", "largest", largest), sorted=_bool("topk", "sorted", sorted))


def _kthvalue_meta(x: TensorSpec, *, k: int, axis: int, keepdim: bool) -> tuple:
    out = mu.reduce_shape(x.shape, (_k_axis("kthvalue", x, k, axis),), keepdim)
    return TensorSpec(out, x.dtype), TensorSpec(out, _INT64)


def _kthvalue_kernel(xp, x, *, k, axis, keepdim):
    idx = xp.take(xp.argsort(x, axis=axis, kind="stable"), [k - 1], axis=axis)
    values = xp.take_along_axis(x, idx, axis)
    idx = idx.astype(_INT64, copy=False)
    return (values, idx) if keepdim else (values.squeeze(axis), idx.squeeze(axis))


def _g_kthvalue(ctx, g, _):
    axis = ctx.attrs["axis"]
    idx = ctx.outputs[1]
    if not ctx.attrs["keepdim"]:
        g, idx = shape.unsqueeze(g, axis), shape.unsqueeze(idx, axis)
    return (_put_back(ctx.inputs[0], idx, g, axis),)


_KTHVALUE = defop("kthvalue", kernel=_kthvalue_kernel, meta=_kthvalue_meta, grad=_g_kthvalue, save_outputs=True,
                  nondiff_outputs=(1,), attrs={"k": 1, "axis": -1, "keepdim": False},
                  samples=lambda: [Sample((_distinct(3, 5),), {"k": 2, "axis": -1, "keepdim": False}),
                                   Sample((_distinct(4, 3),), {"k": 4, "axis": 0, "keepdim": True})])


@tensor_method
def kthvalue(x: Tensor, k: int, axis: int | None = None, keepdim: bool = False,
             name: str | None = None) -> tuple[Tensor, Tensor]:
    """The k-th smallest value (k from 1) along `axis` (default: last) and its int64 index."""
    x = as_tensor(x, "x", "kthvalue")
    return _KTHVALUE(x, k=mu.int_arg("kthvalue", "k", k),
                     axis=-1 if axis is None else mu.int_arg("kthvalue", "axis", axis), keepdim=bool(keepdim))


def _mode_meta(x: TensorSpec, *, axis: int, keepdim: bool) -> tuple:
    _require_dim("mode", x)
    out = mu.reduce_shape(x.shape, (mu.normalize_axis("mode", axis, len(x.shape)),), keepdim)
    return TensorSpec(out, x.dtype), TensorSpec(out, _INT64)


def _mode_kernel(xp, x, *, axis, keepdim):
    moved = xp.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    order = xp.argsort(moved, axis=-1, kind="stable")
    s = xp.take_along_axis(moved, order, -1)
    new_run = xp.ones(s.shape, dtype=bool)
    new_run[..., 1:] = s[..., 1:] != s[..., :-1]
    pos = xp.arange(n)
    run_len = pos - xp.maximum.accumulate(xp.where(new_run, pos, 0), axis=-1) + 1  # length so far
    # the first maximum ends the longest run (the smallest value on ties); with a stable sort its
    # last element is the value's last occurrence, the index Paddle reports
    p = xp.argmax(run_len, axis=-1)[..., None]
    values = xp.moveaxis(xp.take_along_axis(s, p, -1), -1, axis)
    idx = xp.moveaxis(xp.take_along_axis(order, p, -1), -1, axis).astype(_INT64, copy=False)
    return (values, idx) if keepdim else (values.squeeze(axis), idx.squeeze(axis))


_MODE = defop("mode", kernel=_mode_kernel, meta=_mode_meta, grad=_g_kthvalue, save_outputs=True,
              nondiff_outputs=(1,), attrs={"axis": -1, "keepdim": False},
              # a mode exists only through ties, which finite differences break: no FD check
              samples=lambda: [Sample((np.array([[0.5, 0.2, 0.5, 0.1], [0.3, 0.3, 0.7, 0.7]]),),
                                      {"axis": -1, "keepdim": False}, grad_inputs=()),
                               Sample((np.array([[0.5, 0.2], [0.5, 0.1], [0.4, 0.1]]),), {"axis": 0, "keepdim": True},
                                      grad_inputs=())])


@tensor_method
def mode(x: Tensor, axis: int = -1, keepdim: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The most frequent value along `axis` (the smallest on ties) and the index of its last occurrence."""
    return _MODE(as_tensor(x, "x", "mode"), axis=mu.int_arg("mode", "axis", axis), keepdim=bool(keepdim))


# ---------------------------------------------------------------- unique / unique_consecutive
def _index_dtype(op: str, dtype: Any) -> np.dtype:
    d = _dt.to_np_dtype(dtype)
    if d not in (_INT32, _INT64):
        raise TypeError(f"{op}: argument 'dtype' must be int32 or int64, got {d.name}")
    return d


def _unique_specs(op: str, x: TensorSpec, axis: int | None, dtype: np.dtype, flags: dict) -> Any:
    """Output specs: the values, then each requested extra (index / inverse / counts)."""
    if axis is None:
        specs = [TensorSpec((-1,), x.dtype)]
        inverse = (-1 if -1 in x.shape else int(np.prod(x.shape, dtype=np.int64)),)
    else:
        a = mu.normalize_axis(op, axis, len(x.shape))
        specs = [TensorSpec(x.shape[:a] + (-1,) + x.shape[a + 1:], x.dtype)]
        inverse = (x.shape[a],)
    for name, on in flags.items():
        if on:
            specs.append(TensorSpec(inverse if name == "inverse" else (-1,), dtype))
    return specs[0] if len(specs) == 1 else tuple(specs)


def _unique_meta(x: TensorSpec, *, return_index: bool, return_inverse: bool, return_counts: bool,
                 axis: int | None, dtype: np.dtype) -> Any:
    return _unique_specs("unique", x, axis, dtype,
                         {"index": return_index, "inverse": return_inverse, "counts": return_counts})


def _unique_kernel(xp, x, *, return_index, return_inverse, return_counts, axis, dtype):
    res = xp.unique(x, return_index=return_index, return_inverse=return_inverse, return_counts=return_counts,
                    axis=axis)
    if not (return_index or return_inverse or return_counts):
        return res
    return (res[0],) + tuple(r.reshape(-1).astype(dtype, copy=False) for r in res[1:])


_UNIQUE = defop("unique", kernel=_unique_kernel, meta=_unique_meta, dynamic_shape=True,
                attrs={"return_index": False, "return_inverse": False, "return_counts": False, "axis": None,
                       "dtype": _INT64},
                samples=lambda: [Sample((np.array([[3.0, 1.0], [3.0, 2.0]]),),
                                        {"return_index": True, "return_inverse": True, "return_counts": True,
                                         "axis": None, "dtype": _INT64}),
                                 Sample((np.array([[1, 2], [0, 5], [1, 2]]),),
                                        {"return_index": False, "return_inverse": True, "return_counts": False,
                                         "axis": 0, "dtype": _INT32}),
                                 Sample((np.array([2.0, 2.0, 1.0]),),
                                        {"return_index": False, "return_inverse": False, "return_counts": False,
                                         "axis": None, "dtype": _INT64})])


def _axis_or_none(op: str, axis: Any) -> int | None:
    return None if axis is None else mu.int_arg(op, "axis", axis)


@tensor_method
def unique(x: Tensor, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, dtype: Any = "int64", name: str | None = None) -> Tensor | tuple:
    """The sorted distinct values (of the flattened x, or slices along `axis`), with optional
    first-occurrence indices, inverse map and counts."""
    x = as_tensor(x, "x", "unique")
    return _UNIQUE(x, return_index=bool(return_index), return_inverse=bool(return_inverse),
                   return_counts=bool(return_counts), axis=_axis_or_none("unique", axis),
                   dtype=_index_dtype("unique", dtype))


def _unique_consecutive_meta(x: TensorSpec, *, return_inverse: bool, return_counts: bool, axis: int | None,
                             dtype: np.dtype) -> Any:
    return _unique_specs("unique_consecutive", x, axis, dtype,
                         {"inverse": return_inverse, "counts": return_counts})


def _unique_consecutive_kernel(xp, x, *, return_inverse, return_counts, axis, dtype):
    moved = x.reshape(-1) if axis is None else xp.moveaxis(x, axis, 0)
    n = moved.shape[0]
    rows = moved.reshape(n, int(np.prod(moved.shape[1:], dtype=np.int64)))
    change = xp.ones(n, dtype=bool)
    change[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = xp.flatnonzero(change)
    out = moved[starts] if axis is None else xp.moveaxis(moved[starts], 0, axis)
    extra = []
    if return_inverse:
        extra.append((xp.cumsum(change) - 1).astype(dtype))
    if return_counts:
        extra.append(xp.diff(xp.append(starts, n)).astype(dtype))
    return (out, *extra) if extra else out


_UNIQUE_CONSECUTIVE = defop(
    "unique_consecutive", kernel=_unique_consecutive_kernel, meta=_unique_consecutive_meta, dynamic_shape=True,
    attrs={"return_inverse": False, "return_counts": False, "axis": None, "dtype": _INT64},
    samples=lambda: [Sample((np.array([1.0, 1.0, 2.0, 2.0, 3.0, 1.0]),),
                            {"return_inverse": True, "return_counts": True, "axis": None, "dtype": _INT64}),
                     Sample((np.array([[1, 1, 2], [1, 1, 2]]),),
                            {"return_inverse": False, "return_counts": True, "axis": 1, "dtype": _INT32})])


@tensor_method
def unique_consecutive(x: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       axis: int | None = None, dtype: Any = "int64", name: str | None = None) -> Tensor | tuple:
    """x with runs of equal consecutive values (or slices along `axis`) collapsed to one."""
    x = as_tensor(x, "x", "unique_consecutive")
    return _UNIQUE_CONSECUTIVE(x, return_inverse=bool(return_inverse), return_counts=bool(return_counts),
                               axis=_axis_or_none("unique_consecutive", axis),
                               dtype=_index_dtype("unique_consecutive", dtype))


# ---------------------------------------------------------------- searchsorted / bucketize
def _searchsorted_meta(sorted_sequence: TensorSpec, values: TensorSpec, *, out_int32: bool,
                       right: bool) -> TensorSpec:
    for arg, s in (("sorted_sequence", sorted_sequence), ("values", values)):
        mu.require_dtype_kind("searchsorted", s, "iuf", "an int or float tensor", arg)
    seq = sorted_sequence.shape
    if not seq or (len(seq) > 1 and tuple(seq[:-1]) != tuple(values.shape[:-1])):
        raise ValueError(f"searchsorted: argument 'sorted_sequence' {mu.shape_str(seq)} must be 1-D or share all "
                         f"but the last dimension with 'values' {mu.shape_str(values.shape)}")
    return TensorSpec(values.shape, _INT32 if out_int32 else _INT64)


def _searchsorted_kernel(xp, sorted_sequence, values, *, out_int32, right):
    if sorted_sequence.ndim == 1:
        out = xp.searchsorted(sorted_sequence, values, side="right" if right else "left")
    else:  # batched: count, per row, the sequence entries before each value
        seq, v = sorted_sequence[..., None, :], values[..., :, None]
        out = ((seq <= v) if right else (seq < v)).sum(axis=-1)
    return out.astype(_INT32 if out_int32 else _INT64)


_SEARCHSORTED = defop(
    "searchsorted", kernel=_searchsorted_kernel, meta=_searchsorted_meta, inputs=("sorted_sequence", "values"),
    attrs={"out_int32": False, "right": False},
    samples=lambda: [Sample((np.array([1.0, 3.0, 5.0, 7.0]), np.array([[0.0, 3.0], [6.0, 9.0]])),
                            {"out_int32": False, "right": False}),
                     Sample((np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3, 6], [0, 4]])),
                            {"out_int32": True, "right": True})])


def searchsorted(sorted_sequence: Tensor, values: Tensor, out_int32: bool = False, right: bool = False,
                 name: str | None = None) -> Tensor:
    """Where each value would be inserted into the last dimension of `sorted_sequence` to keep it sorted."""
    return _SEARCHSORTED(as_tensor(sorted_sequence, "sorted_sequence", "searchsorted"),
                         as_tensor(values, "values", "searchsorted"),
                         out_int32=bool(out_int32), right=bool(right))


@tensor_method
def bucketize(x: Tensor, sorted_sequence: Tensor, out_int32: bool = False, right: bool = False,
              name: str | None = None) -> Tensor:
    """The bucket of each element of x among the boundaries in the 1-D `sorted_sequence`."""
    sorted_sequence = as_tensor(sorted_sequence, "sorted_sequence", "bucketize")
    if sorted_sequence.ndim != 1:
        raise ValueError(f"bucketize: argument 'sorted_sequence' must be 1-D, got shape {sorted_sequence.shape}")
    return searchsorted(sorted_sequence, as_tensor(x, "x", "bucketize"), out_int32, right)
