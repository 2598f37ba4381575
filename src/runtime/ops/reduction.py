"""Reductions over axes: sum, mean, max, min, amax, amin, prod, argmax, argmin, all, any,
logsumexp, std, var, median, cumsum, cumprod, nansum, nanmean, count_nonzero — all with
Paddle's `axis` / `keepdim` arguments (axis None or [] reduces every axis)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import place as _place
from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .creation import numel, ones_like, zeros_like
from .math import (_operands, cast, divide, equal, exp, isclose, isnan, logical_and, logical_not, multiply,
                   subtract, where)
from .registry import Sample, TensorSpec, defop
from .shape import expand, expand_as, reshape, unsqueeze

__all__ = ["sum", "mean", "max", "min", "amax", "amin", "prod", "argmax", "argmin", "all", "any",
           "logsumexp", "std", "var", "median", "cumsum", "cumprod", "nansum", "nanmean", "count_nonzero",
           "equal_all", "allclose"]

_rng = np.random.default_rng(7)
_I64 = np.dtype("int64")


# ---------------------------------------------------------------- shared pieces
def _axis_attr(axis: Any) -> Any:
    """Hashable axis attribute: None, an int, or a tuple of ints ([] means every axis, as Paddle)."""
    if axis is None or type(axis) is int:
        return axis
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        return tuple(axis) if len(axis) else None
    return axis


def _np_axis(axis: Any, ndim: int) -> Any:
    """The axis argument for a NumPy reduction: a 0-D tensor reduces with axis=None."""
    return None if ndim == 0 else axis


def _reduced(op: str, x: TensorSpec, axis: Any, keepdim: bool, dtype: np.dtype,
             nonempty: bool = False) -> TensorSpec:
    axes = mu.normalize_axes(op, axis, len(x.shape))
    if nonempty and 0 in [x.shape[a] for a in axes if a < len(x.shape)]:
        raise ValueError(f"{op}: cannot reduce a zero-size dimension of argument 'x' (shape "
                         f"{mu.shape_str(x.shape)}, axis {axis})")
    return TensorSpec(mu.reduce_shape(x.shape, axes, keepdim), dtype)


def _require_numeric(op: str, x: TensorSpec) -> None:
    mu.require_dtype_kind(op, x, "iuf", "an int or floating tensor")


def _expand_back(g, x, axis, keepdim):
    """Broadcast a reduced gradient (or output) back to x's shape.

    In a static program where x has unknown (-1) dimensions the shape is taken from x at
    run time (unsqueeze, then expand_as)."""
    shape = x.shape
    axes = mu.normalize_axes("sum", axis, len(shape))
    if -1 in shape:
        return expand_as(g if keepdim or not axes else unsqueeze(g, sorted(axes)), x)
    if not keepdim:
        g = reshape(g, list(mu.reduce_shape(shape, axes, True)))
    return expand(g, shape)


def _count(x, axis) -> int:
    """How many elements each reduced output element summarises."""
    axes = mu.normalize_axes("sum", axis, len(x.shape))
    dims = [x.shape[a] for a in axes]
    return -1 if -1 in dims else int(np.prod(dims)) if axes else 1


def _reduce_samples():
    return [Sample((_rng.normal(size=(3, 4)),), {"axis": None, "keepdim": False}),
            Sample((_rng.normal(size=(2, 3, 4)),), {"axis": 1, "keepdim": True}),
            Sample((_rng.normal(size=(2, 3, 4)),), {"axis": (0, 2), "keepdim": False}),
            Sample((np.asarray(_rng.normal()),), {"axis": None, "keepdim": False})]


def _with_attrs(samples, **extra):
    def make():
        out = samples()
        for s in out:
            s.attrs.update(extra)
        return out
    return make


# ---------------------------------------------------------------- sum, mean
def _sum_dtype(x_dtype: np.dtype, dtype: np.dtype | None) -> np.dtype:
    if dtype is not None:
        return dtype
    return _I64 if x_dtype.kind in "biu" else x_dtype


def _sum_meta(x: TensorSpec, *, axis: Any, keepdim: bool, dtype: np.dtype | None) -> TensorSpec:
    return _reduced("sum", x, axis, keepdim, _sum_dtype(x.dtype, dtype))


def _sum_kernel(xp, x, *, axis, keepdim, dtype):
    # the array method, positionally: NumPy's np.sum wrapper alone costs ~1.5 us per call
    return x.sum(_np_axis(axis, x.ndim), _sum_dtype(x.dtype, dtype), None, keepdim)


def _cast_like(g, x):
    return cast(g, x.dtype) if g.dtype != x.dtype else g


def _g_sum(ctx, g):
    (x,) = ctx.inputs
    return (_cast_like(_expand_back(g, x, ctx.attrs["axis"], ctx.attrs["keepdim"]), x),)


_SUM = defop("sum", kernel=_sum_kernel, meta=_sum_meta, grad=_g_sum,
             attrs={"axis": None, "keepdim": False, "dtype": None},
             samples=_with_attrs(_reduce_samples, dtype=None))


def _sum_like_meta(g: TensorSpec, like: TensorSpec) -> TensorSpec:
    if len(like.shape) > len(g.shape):
        raise ValueError(f"sum_like: 'like' {mu.shape_str(like.shape)} has more dimensions than 'g' "
                         f"{mu.shape_str(g.shape)}")
    return TensorSpec(tuple(like.shape), g.dtype)


def _sum_like_kernel(xp, g, like):
    lead = g.ndim - like.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(like.shape) if d == 1 and g.shape[lead + i] != 1)
    return (g.sum(axes) if axes else g).reshape(like.shape)


# g summed over the dims broadcasting added to `like` (its values are never read), found when the
# program runs: the gradient of a broadcast in a static program whose sizes are unknown (-1) until
# run time, where a -1 dim of `like` may be a size 1 that broadcast (grad_utils.unbroadcast)
SUM_LIKE = defop("sum_like", kernel=_sum_like_kernel, meta=_sum_like_meta,
                 grad=lambda ctx, gg: (expand_as(gg, ctx.inputs[0]), None), inputs=("g", "like"),
                 samples=lambda: [Sample((_rng.normal(size=(2, 3, 4)), _rng.normal(size=(3, 1))), grad_inputs=(0,)),
                                  Sample((_rng.normal(size=(3, 4)), _rng.normal(size=(3, 4))), grad_inputs=(0,))])


@tensor_method
def sum(x: Tensor, axis: Any = None, dtype: Any = None, keepdim: bool = False,  # noqa: A001
        name: str | None = None) -> Tensor:
    """Sum over `axis` (None: all); bool/int inputs sum to int64 as Paddle."""
    x = as_tensor(x, "x", "sum")
    return _SUM(x, axis=_axis_attr(axis), keepdim=bool(keepdim),
                dtype=None if dtype is None else _dt.to_np_dtype(dtype))


def _mean_meta(x: TensorSpec, *, axis: Any, keepdim: bool) -> TensorSpec:
    mu.require_float("mean", x)
    return _reduced("mean", x, axis, keepdim, x.dtype)


def _reduced_count(x, axis, reduced):
    """`_count`, or where a reduced dimension is unknown (static program) a 0-D tensor
    numel(x) / numel(reduced) computed at run time."""
    count = _count(x, axis)
    if count >= 0:
        return count
    return divide(cast(numel(x), x.dtype), cast(numel(reduced), x.dtype))


def _g_mean(ctx, g):
    (x,) = ctx.inputs
    axis = ctx.attrs["axis"]
    spread = _expand_back(g, x, axis, ctx.attrs["keepdim"])
    count = _reduced_count(x, axis, g)
    if isinstance(count, Tensor):
        return (divide(spread, count),)
    return (multiply(spread, 1.0 / count if count else 1.0),)


_MEAN = defop("mean", kernel=lambda xp, x, *, axis, keepdim: x.mean(_np_axis(axis, x.ndim), None, None, keepdim),
              meta=_mean_meta, grad=_g_mean, attrs={"axis": None, "keepdim": False}, samples=_reduce_samples)


@tensor_method
def mean(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Arithmetic mean over `axis` (None: all)."""
    return _MEAN(as_tensor(x, "x", "mean"), axis=_axis_attr(axis), keepdim=bool(keepdim))


# ---------------------------------------------------------------- max, min, amax, amin
def _g_extreme(split: bool):
    """max/min send the whole gradient to every tied extreme; amax/amin split it evenly."""
    def rule(ctx, g):
        (x,) = ctx.inputs
        axis, keepdim = ctx.attrs["axis"], ctx.attrs["keepdim"]
        mask = cast(equal(x, _expand_back(ctx.outputs[0], x, axis, keepdim)), g.dtype)
        if split:
            axes = list(mu.normalize_axes("sum", axis, len(x.shape)))
            mask = divide(mask, sum(mask, axis=axes, keepdim=True))
        return (multiply(mask, _expand_back(g, x, axis, keepdim)),)
    return rule


def _extreme_op(name: str, np_name: str, split: bool):
    def meta(x: TensorSpec, *, axis: Any, keepdim: bool) -> TensorSpec:
        _require_numeric(name, x)
        return _reduced(name, x, axis, keepdim, x.dtype, nonempty=True)

    def kernel(xp, x, *, axis, keepdim):
        return getattr(xp, np_name)(x, axis=_np_axis(axis, x.ndim), keepdims=keepdim)
    return defop(name, kernel=kernel, meta=meta, grad=_g_extreme(split), save_outputs=True,
                 attrs={"axis": None, "keepdim": False}, samples=_reduce_samples)


_EXTREME = {name: _extreme_op(name, np_name, split) for name, np_name, split in
            (("max", "max", False), ("min", "min", False), ("amax", "max", True), ("amin", "min", True))}


def _extreme_api(opname: str):
    opdef = _EXTREME[opname]

    def api(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
        return opdef(as_tensor(x, "x", opname), axis=_axis_attr(axis), keepdim=bool(keepdim))
    api.__name__ = api.__qualname__ = opname
    kind = "maximum" if opname.endswith("max") else "minimum"
    ties = "split evenly between" if opname.startswith("a") else "sent whole to each of"
    api.__doc__ = f"The {kind} over `axis`; the gradient is {ties} tied elements (as Paddle's {opname})."
    return tensor_method(api)


max = _extreme_api("max")  # noqa: A001
min = _extreme_api("min")  # noqa: A001
amax = _extreme_api("amax")
amin = _extreme_api("amin")


# ---------------------------------------------------------------- prod
def _prod_dtype(x_dtype: np.dtype, dtype: np.dtype | None) -> np.dtype:
    if dtype is not None:
        return dtype
    return _I64 if x_dtype.kind == "b" else x_dtype


def _prod_meta(x: TensorSpec, *, axis: Any, keepdim: bool, dtype: np.dtype | None) -> TensorSpec:
    mu.require_dtype_kind("prod", x, "biuf", "a bool, int or floating tensor")
    return _reduced("prod", x, axis, keepdim, _prod_dtype(x.dtype, dtype))


def _prod_kernel(xp, x, *, axis, keepdim, dtype):
    return xp.prod(x, axis=_np_axis(axis, x.ndim), keepdims=keepdim, dtype=_prod_dtype(x.dtype, dtype))


def _g_prod(ctx, g):
    """d prod / d x_i = product of the others, exact with zeros: with no zero it is prod/x_i;
    with one zero only that element gets the product of the rest; with two or more, none."""
    (x,) = ctx.inputs
    axis, keepdim = ctx.attrs["axis"], ctx.attrs["keepdim"]
    axes = list(mu.normalize_axes("prod", axis, len(x.shape)))
    zero = equal(x, 0.0)
    safe = where(zero, ones_like(x), x)
    others = prod(safe, axis=axes, keepdim=True)                 # product of the non-zero elements
    nzero = sum(cast(zero, x.dtype), axis=axes, keepdim=True)    # zeros per reduced slice
    at_zero = where(equal(nzero, 1.0), others, zeros_like(others))
    at_rest = where(equal(nzero, 0.0), others, zeros_like(others))
    local = where(zero, at_zero, divide(at_rest, safe))
    g = _cast_like(_expand_back(g, x, axis, keepdim), x)
    return (multiply(g, local),)


def _prod_samples():
    with_zero = _rng.uniform(0.5, 1.5, size=(3, 4))
    with_zero[0, 1] = 0.0
    with_zero[1, 0] = with_zero[1, 3] = 0.0
    return [Sample((_rng.uniform(0.5, 1.5, size=(3, 4)),), {"axis": None, "keepdim": False, "dtype": None}),
            Sample((_rng.uniform(-1.5, 1.5, size=(2, 3, 4)),), {"axis": (0, 2), "keepdim": True, "dtype": None}),
            Sample((with_zero,), {"axis": 1, "keepdim": False, "dtype": None})]


_PROD = defop("prod", kernel=_prod_kernel, meta=_prod_meta, grad=_g_prod,
              attrs={"axis": None, "keepdim": False, "dtype": None}, samples=_prod_samples)


@tensor_method
def prod(x: Tensor, axis: Any = None, keepdim: bool = False, dtype: Any = None, name: str | None = None) -> Tensor:
    """Product over `axis` (None: all)."""
    return _PROD(as_tensor(x, "x", "prod"), axis=_axis_attr(axis), keepdim=bool(keepdim),
                 dtype=None if dtype is None else _dt.to_np_dtype(dtype))


# ---------------------------------------------------------------- argmax, argmin
def _arg_op(name: str, np_name: str):
    def meta(x: TensorSpec, *, axis: Any, keepdim: bool, dtype: np.dtype) -> TensorSpec:
        _require_numeric(name, x)
        if dtype not in (np.dtype("int32"), _I64):
            raise TypeError(f"{name}: argument 'dtype' must be int32 or int64, got {dtype.name}")
        if axis is None:
            if 0 in x.shape:
                raise ValueError(f"{name}: argument 'x' is empty (shape {mu.shape_str(x.shape)})")
            return TensorSpec((1,) * len(x.shape) if keepdim else (), dtype)
        return _reduced(name, x, axis, keepdim, dtype, nonempty=True)

    def kernel(xp, x, *, axis, keepdim, dtype):
        fn = getattr(xp, np_name)
        if axis is None or x.ndim == 0:
            out = fn(x.reshape(-1))
            return xp.asarray(out, dtype=dtype).reshape((1,) * x.ndim if keepdim else ())
        return fn(x, axis=axis, keepdims=keepdim).astype(dtype, copy=False)
    return defop(name, kernel=kernel, meta=meta, attrs={"axis": None, "keepdim": False, "dtype": _I64},
                 samples=lambda: [Sample((_rng.normal(size=(3, 4)),), {"axis": None, "keepdim": False, "dtype": _I64}),
                                  Sample((_rng.normal(size=(2, 3, 4)),), {"axis": -1, "keepdim": True,
                                                                          "dtype": np.dtype("int32")}),
                                  Sample((_rng.normal(size=(2, 3)),), {"axis": None, "keepdim": True, "dtype": _I64})])


_ARG = {name: _arg_op(name, name) for name in ("argmax", "argmin")}


def _arg_api(opname: str):
    opdef = _ARG[opname]

    def api(x: Tensor, axis: int | None = None, keepdim: bool = False, dtype: Any = "int64",
            name: str | None = None) -> Tensor:
        x = as_tensor(x, "x", opname)
        if isinstance(axis, Tensor):
            axis = axis.item()
        if axis is not None and (isinstance(axis, bool) or not isinstance(axis, (int, np.integer))):
            raise TypeError(f"{opname}: argument 'axis' must be an int or None, got {type(axis).__name__}")
        return opdef(x, axis=None if axis is None else int(axis), keepdim=bool(keepdim),
                     dtype=_dt.to_np_dtype(dtype))
    api.__name__ = api.__qualname__ = opname
    api.__doc__ = (f"Index of the {'largest' if opname == 'argmax' else 'smallest'} element along `axis` "
                   "(None: of the flattened tensor); the first one on ties.")
    return tensor_method(api)


argmax = _arg_api("argmax")
argmin = _arg_api("argmin")


# ---------------------------------------------------------------- all, any
def _logic_op(name: str):
    def meta(x: TensorSpec, *, axis: Any, keepdim: bool) -> TensorSpec:
        return _reduced(name, x, axis, keepdim, np.dtype(bool))

    def kernel(xp, x, *, axis, keepdim):
        return xp.asarray(getattr(xp, name)(x, axis=_np_axis(axis, x.ndim), keepdims=keepdim))
    return defop(name, kernel=kernel, meta=meta, attrs={"axis": None, "keepdim": False},
                 samples=lambda: [Sample((_rng.random((3, 4)) > 0.3,), {"axis": None, "keepdim": False}),
                                  Sample((_rng.random((2, 3, 4)) > 0.7,), {"axis": (0, 2), "keepdim": True})])


_LOGIC = {name: _logic_op(name) for name in ("all", "any")}


@tensor_method
def all(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:  # noqa: A001
    """True where every element along `axis` is non-zero."""
    return _LOGIC["all"](as_tensor(x, "x", "all"), axis=_axis_attr(axis), keepdim=bool(keepdim))


@tensor_method
def any(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:  # noqa: A001
    """True where some element along `axis` is non-zero."""
    return _LOGIC["any"](as_tensor(x, "x", "any"), axis=_axis_attr(axis), keepdim=bool(keepdim))


@tensor_method
def count_nonzero(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """The number of non-zero elements along `axis`, as int64."""
    return sum(cast(as_tensor(x, "x", "count_nonzero"), "bool"), axis=axis, keepdim=keepdim)


@tensor_method
def equal_all(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """A 0-D bool tensor: True when x and y have the same shape and values."""
    x, y = _operands("equal_all", x, y)
    if x.shape != y.shape:
        return Tensor._wrap(np.asarray(False))
    return all(equal(x, y))


@tensor_method
def allclose(x: Tensor, y: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False,
             name: str | None = None) -> Tensor:
    """True when every element of x is close to y's (`isclose`)."""
    return all(isclose(x, y, rtol, atol, equal_nan))


# ---------------------------------------------------------------- logsumexp
def _logsumexp_meta(x: TensorSpec, *, axis: Any, keepdim: bool) -> TensorSpec:
    mu.require_float("logsumexp", x)
    return _reduced("logsumexp", x, axis, keepdim, x.dtype, nonempty=True)


def _logsumexp_kernel(xp, x, *, axis, keepdim):
    ax = _np_axis(axis, x.ndim)
    m = xp.max(x, axis=ax, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    with _place.errstate(xp, divide="ignore"):  # an all -inf slice gives -inf, as it should
        out = xp.log(xp.sum(xp.exp(x - m), axis=ax, keepdims=True)) + m
    if not keepdim:
        out = out.reshape(mu.reduce_shape(x.shape, mu.normalize_axes("logsumexp", axis, x.ndim), False))
    return out


def _g_logsumexp(ctx, g):
    (x,) = ctx.inputs
    axis, keepdim = ctx.attrs["axis"], ctx.attrs["keepdim"]
    soft = exp(subtract(x, _expand_back(ctx.outputs[0], x, axis, keepdim)))
    return (multiply(_expand_back(g, x, axis, keepdim), soft),)


_LOGSUMEXP = defop("logsumexp", kernel=_logsumexp_kernel, meta=_logsumexp_meta, grad=_g_logsumexp,
                   save_outputs=True, attrs={"axis": None, "keepdim": False}, samples=_reduce_samples)


@tensor_method
def logsumexp(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably."""
    return _LOGSUMEXP(as_tensor(x, "x", "logsumexp"), axis=_axis_attr(axis), keepdim=bool(keepdim))


# ---------------------------------------------------------------- var, std
def _moment_op(name: str, take_sqrt: bool):
    def meta(x: TensorSpec, *, axis: Any, unbiased: bool, keepdim: bool) -> TensorSpec:
        mu.require_float(name, x)
        return _reduced(name, x, axis, keepdim, x.dtype)

    def kernel(xp, x, *, axis, unbiased, keepdim):
        axes = mu.normalize_axes(name, axis, x.ndim)
        dof = int(np.prod([x.shape[a] for a in axes])) - int(unbiased)
        if dof <= 0:  # NaN as Paddle gives, without NumPy's warning
            return xp.full(mu.reduce_shape(x.shape, axes, keepdim), np.nan, dtype=x.dtype)
        out = xp.var(x, axis=_np_axis(axis, x.ndim), ddof=int(unbiased), keepdims=keepdim)
        return xp.sqrt(out) if take_sqrt else out

    def rule(ctx, g):
        (x,) = ctx.inputs
        axis, unbiased, keepdim = ctx.attrs["axis"], ctx.attrs["unbiased"], ctx.attrs["keepdim"]
        axes = list(mu.normalize_axes(name, axis, len(x.shape)))
        centred = subtract(x, mean(x, axis=axes, keepdim=True))
        dof = _reduced_count(x, axis, g)
        dof = subtract(dof, float(unbiased)) if isinstance(dof, Tensor) else dof - int(unbiased)
        g = _expand_back(g, x, axis, keepdim)
        if take_sqrt:  # d std = (x - mean) / (dof * std)
            return (divide(multiply(g, centred), multiply(_expand_back(ctx.outputs[0], x, axis, keepdim), dof)),)
        return (divide(multiply(g, centred), divide(dof, 2.0)) if isinstance(dof, Tensor)
                else multiply(multiply(g, centred), 2.0 / dof),)

    return defop(name, kernel=kernel, meta=meta, grad=rule, save_outputs=take_sqrt,
                 attrs={"axis": None, "unbiased": True, "keepdim": False},
                 samples=lambda: [Sample((_rng.normal(size=(3, 4)),), {"axis": None, "unbiased": True, "keepdim": False}),
                                  Sample((_rng.normal(size=(2, 3, 4)),), {"axis": 1, "unbiased": False, "keepdim": True}),
                                  Sample((_rng.normal(size=(2, 3, 4)),), {"axis": (0, 2), "unbiased": True,
                                                                          "keepdim": False})])


_VAR = _moment_op("var", take_sqrt=False)
_STD = _moment_op("std", take_sqrt=True)


@tensor_method
def var(x: Tensor, axis: Any = None, unbiased: bool = True, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Variance over `axis` (divides by N - 1 when unbiased, as Paddle's default)."""
    return _VAR(as_tensor(x, "x", "var"), axis=_axis_attr(axis), unbiased=bool(unbiased), keepdim=bool(keepdim))


@tensor_method
def std(x: Tensor, axis: Any = None, unbiased: bool = True, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Standard deviation over `axis` (divides by N - 1 when unbiased, as Paddle's default)."""
    return _STD(as_tensor(x, "x", "std"), axis=_axis_attr(axis), unbiased=bool(unbiased), keepdim=bool(keepdim))


# ---------------------------------------------------------------- median
def _median_dtype(x_dtype: np.dtype) -> np.dtype:
    return x_dtype if x_dtype.kind == "f" else _dt.default_float()


def _median_meta(x: TensorSpec, *, axis: Any, keepdim: bool) -> TensorSpec:
    _require_numeric("median", x)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise TypeError(f"median: argument 'axis' must be an int or None, got {type(axis).__name__}")
    return _reduced("median", x, axis, keepdim, _median_dtype(x.dtype), nonempty=True)


def _median_kernel(xp, x, *, axis, keepdim):
    out = xp.median(x, axis=_np_axis(axis, x.ndim), keepdims=keepdim)
    return xp.asarray(out).astype(_median_dtype(x.dtype), copy=False)


def _median_weights_meta(x: TensorSpec, *, axis: Any) -> TensorSpec:
    return x


def _median_weights_kernel(xp, x, *, axis):
    """1 at the middle element of each slice, or 1/2 at each of the two middle ones."""
    xs = x.reshape(-1) if axis is None or x.ndim == 0 else xp.moveaxis(x, axis, -1)
    n = xs.shape[-1]
    order = xp.argsort(xs, axis=-1)
    lo, hi = order[..., (n - 1) // 2, None], order[..., n // 2, None]
    pos = xp.arange(n)
    w = ((pos == lo).astype(x.dtype) + (pos == hi).astype(x.dtype)) * 0.5
    if axis is None or x.ndim == 0:
        return w.reshape(x.shape)
    return xp.ascontiguousarray(xp.moveaxis(w, -1, axis))


_MEDIAN_WEIGHTS = defop("median_weights", kernel=_median_weights_kernel, meta=_median_weights_meta,
                        attrs={"axis": None},
                        samples=lambda: [Sample((_rng.normal(size=(3, 4)),), {"axis": 1}),
                                         Sample((_rng.normal(size=(5,)),), {"axis": None})])


def _g_median(ctx, g):
    (x,) = ctx.inputs
    axis, keepdim = ctx.attrs["axis"], ctx.attrs["keepdim"]
    return (multiply(_MEDIAN_WEIGHTS(x, axis=axis), _expand_back(g, x, axis, keepdim)),)


_MEDIAN = defop("median", kernel=_median_kernel, meta=_median_meta, grad=_g_median,
                attrs={"axis": None, "keepdim": False},
                samples=lambda: [Sample((_rng.normal(size=(3, 4)),), {"axis": None, "keepdim": False}),
                                 Sample((_rng.normal(size=(3, 5)),), {"axis": 1, "keepdim": True}),
                                 Sample((_rng.normal(size=(4, 2, 3)),), {"axis": 0, "keepdim": False})])


@tensor_method
def median(x: Tensor, axis: int | None = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """The median along `axis` (None: of all elements); the mean of the two middle values for even counts."""
    x = as_tensor(x, "x", "median")
    if isinstance(axis, Tensor):
        axis = axis.item()
    return _MEDIAN(x, axis=axis, keepdim=bool(keepdim))


# ---------------------------------------------------------------- cumsum, cumprod
def _cum_dtype(x_dtype: np.dtype, dtype: np.dtype | None) -> np.dtype:
    if dtype is not None:
        return dtype
    return _I64 if x_dtype.kind == "b" else x_dtype


def _cum_op(name: str, np_name: str, grad):
    def meta(x: TensorSpec, *, axis: Any, dtype: np.dtype | None, reverse: bool) -> TensorSpec:
        mu.require_dtype_kind(name, x, "biuf", "a bool, int or floating tensor")
        out_dtype = _cum_dtype(x.dtype, dtype)
        if axis is None:
            return TensorSpec((int(np.prod(x.shape)),), out_dtype)
        mu.normalize_axis(name, axis, len(x.shape))
        return TensorSpec(x.shape, out_dtype)

    def kernel(xp, x, *, axis, dtype, reverse):
        if axis is None or x.ndim == 0:
            x, axis = x.reshape(-1), 0
        fn = getattr(xp, np_name)
        out_dtype = _cum_dtype(x.dtype, dtype)
        if not reverse:
            return fn(x, axis=axis, dtype=out_dtype)
        return xp.ascontiguousarray(xp.flip(fn(xp.flip(x, axis), axis=axis, dtype=out_dtype), axis))
    return defop(name, kernel=kernel, meta=meta, grad=grad, save_outputs=np_name == "cumprod",
                 attrs={"axis": None, "dtype": None, "reverse": False},
                 samples=lambda: _cum_samples(np_name == "cumprod"))


def _cum_samples(with_zeros: bool):
    a = _rng.uniform(0.5, 1.5, size=(3, 4))
    if with_zeros:
        a[0, 1] = 0.0
        a[2, 0] = a[2, 2] = 0.0
    return [Sample((_rng.normal(size=(3, 4)),), {"axis": 1, "dtype": None, "reverse": False}),
            Sample((_rng.normal(size=(2, 3)),), {"axis": None, "dtype": None, "reverse": False}),
            Sample((_rng.normal(size=(4, 3)),), {"axis": 0, "dtype": None, "reverse": True}),
            Sample((a,), {"axis": -1, "dtype": None, "reverse": False})]


def _cum_grad_axis(x, axis):
    """Gradient rules work on the flattened input when the op flattened it."""
    if axis is None or len(x.shape) == 0:
        return reshape(x, [-1]), 0
    return x, axis


def _reshape_like(g, x):
    return reshape(g, list(x.shape)) if list(g.shape) != list(x.shape) else g


def _g_cumsum(ctx, g):
    (x,) = ctx.inputs
    _, axis = _cum_grad_axis(x, ctx.attrs["axis"])
    back = _CUMSUM(g, axis=axis, dtype=None, reverse=not ctx.attrs["reverse"])
    return (_cast_like(_reshape_like(back, x), x),)


def _g_cumprod(ctx, g):
    """Exact with zeros: before the first zero of a slice, sum_{j>=i} g_j out_j / x_i; at the
    first zero, sum_{j>=z} g_j prod_{k<=j, k!=z} x_k; after it, 0."""
    x0 = ctx.inputs[0]
    reverse = ctx.attrs["reverse"]
    x, axis = _cum_grad_axis(x0, ctx.attrs["axis"])
    out = _reshape_like(ctx.outputs[0], x)
    g = _reshape_like(_cast_like(g, x0), x)
    zero = equal(x, 0.0)
    zeros_so_far = _CUMSUM(cast(zero, x.dtype), axis=axis, dtype=None, reverse=reverse)
    before = equal(zeros_so_far, 0.0)
    first = logical_and(zero, equal(zeros_so_far, 1.0))
    one, none = ones_like(x), zeros_like(x)
    tail = _CUMSUM(multiply(g, out), axis=axis, dtype=None, reverse=not reverse)
    at_before = divide(tail, where(before, x, one))
    skip_zero = _CUMPROD(where(first, one, x), axis=axis, dtype=None, reverse=reverse)
    at_first = _CUMSUM(multiply(g, skip_zero), axis=axis, dtype=None, reverse=not reverse)
    grad = where(before, at_before, where(first, at_first, none))
    return (_reshape_like(grad, x0),)


_CUMSUM = _cum_op("cumsum", "cumsum", _g_cumsum)
_CUMPROD = _cum_op("cumprod", "cumprod", _g_cumprod)


def _cum_axis(op: str, axis: Any) -> int | None:
    if isinstance(axis, Tensor):
        axis = axis.item()
    if axis is not None and (isinstance(axis, bool) or not isinstance(axis, (int, np.integer))):
        raise TypeError(f"{op}: the axis argument must be an int or None, got {type(axis).__name__}")
    return None if axis is None else int(axis)


@tensor_method
def cumsum(x: Tensor, axis: int | None = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """Running sum along `axis` (None: of the flattened tensor)."""
    return _CUMSUM(as_tensor(x, "x", "cumsum"), axis=_cum_axis("cumsum", axis),
                   dtype=None if dtype is None else _dt.to_np_dtype(dtype), reverse=False)


@tensor_method
def cumprod(x: Tensor, dim: int | None = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """Running product along `dim` (None: of the flattened tensor)."""
    return _CUMPROD(as_tensor(x, "x", "cumprod"), axis=_cum_axis("cumprod", dim),
                    dtype=None if dtype is None else _dt.to_np_dtype(dtype), reverse=False)


# ---------------------------------------------------------------- nan-ignoring reductions
def _without_nan(x: Tensor) -> tuple[Tensor, Tensor]:
    """x with NaNs replaced by 0, and the mask of kept elements."""
    keep = logical_not(isnan(x))
    return where(keep, x, zeros_like(x)), keep


@tensor_method
def nansum(x: Tensor, axis: Any = None, dtype: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Sum over `axis` treating NaN as zero."""
    x = as_tensor(x, "x", "nansum")
    if x._data.dtype.kind != "f":
        return sum(x, axis, dtype, keepdim)
    return sum(_without_nan(x)[0], axis, dtype, keepdim)


@tensor_method
def nanmean(x: Tensor, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Mean over `axis` of the non-NaN elements (NaN where a slice has none)."""
    x = as_tensor(x, "x", "nanmean")
    mu.require_float("nanmean", TensorSpec(x._data.shape, x._data.dtype))
    clean, keep = _without_nan(x)
    return divide(sum(clean, axis, None, keepdim), sum(keep, axis, x.dtype, keepdim))
