"""Reductions over axes: sum, mean, max, min, prod, argmax, argmin, all, any, logsumexp,
std, var, cumsum — all with Paddle's `axis` / `keepdim` arguments."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .registry import Sample, TensorSpec, defop

__all__ = ["sum", "mean"]

_rng = np.random.default_rng(7)


def _axis_attr(axis: Any) -> Any:
    """Hashable axis attribute: None, an int, or a tuple of ints."""
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _sum_meta(x: TensorSpec, *, axis: Any, keepdim: bool, dtype: np.dtype | None) -> TensorSpec:
    axes = mu.normalize_axes("sum", axis, len(x.shape))
    out_dtype = dtype if dtype is not None else (np.dtype("int64") if x.dtype.kind in "biu" else x.dtype)
    return TensorSpec(mu.reduce_shape(x.shape, axes, keepdim), out_dtype)


def _sum_kernel(xp, x, *, axis, keepdim, dtype):
    out_dtype = dtype if dtype is not None else (np.dtype("int64") if x.dtype.kind in "biu" else x.dtype)
    return xp.sum(x, axis=axis, keepdims=keepdim, dtype=out_dtype)


def _expand_back(g, x, axis, keepdim):
    """Broadcast a reduced gradient back to x's shape."""
    from .shape import expand, reshape  # noqa: PLC0415
    axes = mu.normalize_axes("sum", axis, len(x.shape))
    if not keepdim:
        g = reshape(g, list(mu.reduce_shape(x.shape, axes, True)))
    return expand(g, list(x.shape))


def _g_sum(ctx, g):
    (x,) = ctx.inputs
    from .math import cast  # noqa: PLC0415
    g = _expand_back(g, x, ctx.attrs["axis"], ctx.attrs["keepdim"])
    return (cast(g, x.dtype) if g.dtype != x.dtype else g,)


def _reduce_samples():
    return [Sample((_rng.normal(size=(3, 4)),), {"axis": None, "keepdim": False}),
            Sample((_rng.normal(size=(2, 3, 4)),), {"axis": 1, "keepdim": True}),
            Sample((_rng.normal(size=(2, 3, 4)),), {"axis": (0, 2), "keepdim": False})]


def _with_dtype(samples, **extra):
    def make():
        out = samples()
        for s in out:
            s.attrs.update(extra)
        return out
    return make


_SUM = defop("sum", kernel=_sum_kernel, meta=_sum_meta, grad=_g_sum,
             attrs={"axis": None, "keepdim": False, "dtype": None},
             samples=_with_dtype(_reduce_samples, dtype=None))


@tensor_method
def sum(x: Tensor, axis: Any = None, dtype: Any = None, keepdim: bool = False,  # noqa: A001
        name: str | None = None) -> Tensor:
    """Sum over `axis` (None: all); bool/int inputs sum to int64 as Paddle."""
    x = as_tensor(x, "x", "sum")
    return _SUM(x, axis=_axis_attr(axis), keepdim=bool(keepdim),
                dtype=None if dtype is None else _dt.to_np_dtype(dtype))


def _mean_meta(x: TensorSpec, *, axis: Any, keepdim: bool) -> TensorSpec:
    mu.require_float("mean", x)
    axes = mu.normalize_axes("mean", axis, len(x.shape))
    return TensorSpec(mu.reduce_shape(x.shape, axes, keepdim), x.dtype)


def _g_mean(ctx, g):
    (x,) = ctx.inputs
    from .math import multiply  # noqa: PLC0415
    axes = mu.normalize_axes("mean", ctx.attrs["axis"], len(x.shape))
    count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    return (multiply(_expand_back(g, x, ctx.attrs["axis"], ctx.attrs["keepdim"]), 1.0 / max(count, 1)),)


_MEAN = defop("mean", kernel=lambda xp, x, *, axis, keepdim: xp.mean(x, axis=axis, keepdims=keepdim),
              meta=_mean_meta, grad=_g_mean, attrs={"axis": None, "keepdim": False}, samples=_reduce_samples)


@tensor_method
def mean(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Arithmetic mean over `axis` (None: all)."""
    return _MEAN(as_tensor(x, "x", "mean"), axis=_axis_attr(axis), keepdim=bool(keepdim))
