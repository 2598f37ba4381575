"""Pooling: max / avg / adaptive pools in 1-D, 2-D and 3-D over strided windows.

Max pooling scans the few kernel taps of a strided window view (`conv.windows`), keeping
the running max and the first tap that reached it (arithmetic only, no per-pixel loop and
no branchy `where`); it also returns Paddle's mask (flat index into each input plane,
int32), through which the gradient is routed (`max_pool_scatter`, whose adjoint is
`max_pool_gather`). Average pooling sums the taps and scales by Paddle's divisor
(exclusive=True counts only real cells); its adjoint `avg_pool_grad` spreads the gradient
back with a col2im. Adaptive average pooling is interpolate's 'area' mode; adaptive max
pooling gathers each axis' variable windows by index tables.
Paddle's geometry: out = (in + pads - k) // s + 1, plus s - 1 in the numerator in ceil
mode; 'SAME' gives ceil(in / s); 'VALID' is no padding (and forbids ceil mode).
"""
from __future__ import annotations

import functools
import math as _pymath
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, as_tensor
from . import meta_utils as mu
from .conv import (FORMATS, channel_last, check_rank, channels, col2im, from_channel_first, layout, ntuple,
                   out_geometry, parse_padding, spatial, to_channel_first, windows)
from .interpolate import resample, tap_table
from .registry import Sample, TensorSpec, defop, uniform_sampler

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d"]

_rng = np.random.default_rng(41)
_f64 = uniform_sampler(_rng)
_MASK = np.dtype("int32")


def _api(kind: str, nd: int) -> str:
    return f"{kind}_pool{nd}d"


def _check_input(api: str, x: TensorSpec, nd: int, cl: bool, kinds: str = "f") -> None:
    mu.require_dtype_kind(api, x, kinds, "a floating tensor" if kinds == "f" else "a floating or integer tensor")
    check_rank(api, x, "x", nd, FORMATS[nd][cl])


def _lowest(dtype: np.dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _argmax_scan(xp, taps, count: int):
    """Running max over `count` same-shaped arrays and the index of the first maximum.

    The index has the narrowest unsigned type that holds it (uint8 for up to 256 taps: a quarter
    of int32's memory traffic in the scan's passes, measured twice as fast as int16) and every
    pass writes into buffers allocated once, not per tap. A strided tap (a window view's) is
    copied once into a contiguous buffer, which the comparison and the maximum then both read:
    a strided pass costs about four contiguous ones, as NumPy loops over its short rows.
    """
    taps = iter(taps)
    best = next(taps).copy()
    dtype = np.min_scalar_type(count - 1)
    idx = xp.zeros(best.shape, dtype=dtype)
    upd = xp.empty(best.shape, dtype=bool)
    step = xp.empty(best.shape, dtype=dtype)
    tap = xp.empty_like(best)
    for t, vt in enumerate(taps, 1):
        if not vt.flags.c_contiguous:
            xp.copyto(tap, vt)
            vt = tap
        xp.greater(vt, best, out=upd)
        xp.maximum(best, vt, out=best)
        xp.multiply(upd, dtype.type(t), out=step)
        xp.maximum(idx, step, out=idx)  # t exceeds every earlier index
    return best, idx


def _ranges(xp, out: tuple, i: int):
    """arange(out[i]) shaped to broadcast along axis i of an (N, C, *out) array."""
    shape = [1] * (len(out) + 2)
    shape[2 + i] = out[i]
    return xp.arange(out[i], dtype=_MASK).reshape(shape)


# ---------------------------------------------------------------- max pool
def _max_pool_meta(x: TensorSpec, *, kernel_size: tuple, stride: tuple, padding: Any, ceil_mode: bool,
                   channel_last: bool) -> tuple:
    nd = len(kernel_size)
    api = _api("max", nd)
    _check_input(api, x, nd, channel_last, "fiu")
    _, _, out = out_geometry(api, spatial(x.shape, channel_last), kernel_size, stride, padding, (1,) * nd, ceil_mode)
    shape = layout(x.shape[0], channels(x.shape, channel_last), out, channel_last)
    return TensorSpec(shape, x.dtype), TensorSpec(shape, _MASK)


def _plane_mask(xp, idx, kernel: tuple, size: tuple, stride: tuple, pads: tuple, out: tuple, ceil_mode: bool):
    """Paddle's mask from window-local tap indices: the flat index into each input plane, -1 for padding.

    A tap's offset from its window's origin is looked up in a table of the few taps, and the
    origins are one (1, 1, *out) array: two passes over the output, no integer division.
    """
    taps = list(np.ndindex(*kernel))
    plane_strides = [_pymath.prod(size[i + 1:]) for i in range(len(size))]
    offsets = np.array([sum(t * p for t, p in zip(tap, plane_strides)) for tap in taps], dtype=_MASK)
    starts = [_ranges(xp, out, i) * stride[i] - pads[2 * i] for i in range(len(size))]
    mask = xp.take(xp.asarray(offsets), idx)
    mask += sum(start * p for start, p in zip(starts, plane_strides))
    if not (any(pads) or ceil_mode):
        return mask
    valid = None  # a window reaching into padding may have picked a padded cell
    for i, start in enumerate(starts):
        coord = xp.take(xp.asarray(np.array([tap[i] for tap in taps], dtype=_MASK)), idx) + start
        ok = (coord >= 0) & (coord < size[i])
        valid = ok if valid is None else valid & ok
    return mask if bool(valid.all()) else xp.where(valid, mask, -1).astype(_MASK)


def _max_pool_kernel(xp, x, *, kernel_size, stride, padding, ceil_mode, channel_last):
    x = to_channel_first(xp, x, channel_last)
    nd, size = len(kernel_size), x.shape[2:]
    pads, _, out = out_geometry("max_pool", size, kernel_size, stride, padding, (1,) * nd, ceil_mode)
    view = windows(xp, x, kernel_size, stride, (1,) * nd, pads, out, _lowest(x.dtype), work=True)
    lead = (slice(None), slice(None))
    best, idx = _argmax_scan(xp, (view[lead + tap] for tap in np.ndindex(*kernel_size)),
                             _pymath.prod(kernel_size))
    mask = _plane_mask(xp, idx, kernel_size, size, stride, pads, out, ceil_mode)
    return from_channel_first(xp, best, channel_last), from_channel_first(xp, mask, channel_last)


def _g_max_pool(ctx, g, _gmask):
    (x,) = ctx.inputs
    a = ctx.attrs
    return (_scatter(g, ctx.outputs[1].detach(), x, a["channel_last"], _disjoint(a["kernel_size"], a["stride"])),)


_MAX_CASES = [
    ((2, 3, 5, 5), {"kernel_size": (2, 2), "stride": (2, 2), "padding": (0, 0, 0, 0), "ceil_mode": False,
                    "channel_last": False}),
    ((2, 2, 5, 6), {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1, 0, 1), "ceil_mode": True,
                    "channel_last": False}),
    ((1, 4, 4, 3), {"kernel_size": (2, 2), "stride": (1, 1), "padding": "SAME", "ceil_mode": False,
                    "channel_last": True}),
    ((2, 3, 7), {"kernel_size": (3,), "stride": (2,), "padding": (1, 1), "ceil_mode": True, "channel_last": False}),
    ((1, 2, 4, 4, 4), {"kernel_size": (2, 2, 2), "stride": (2, 2, 2), "padding": (0, 0, 0, 0, 0, 0),
                       "ceil_mode": False, "channel_last": False}),
]

_MAX_POOL = defop("max_pool", kernel=_max_pool_kernel, meta=_max_pool_meta, grad=_g_max_pool,
                  attrs={"kernel_size": (1, 1), "stride": (1, 1), "padding": (0, 0, 0, 0), "ceil_mode": False,
                         "channel_last": False},
                  save_outputs=True, nondiff_outputs=(1,),
                  samples=lambda: [Sample((_f64(*s),), dict(a)) for s, a in _MAX_CASES])


# ---------------------------------------------------------------- routing through the mask
def _check_mask(api: str, ref: TensorSpec, mask: TensorSpec, ref_arg: str) -> None:
    mu.require_dtype_kind(api, mask, "iu", "an integer tensor", "mask")
    if len(mask.shape) != len(ref.shape) or len(ref.shape) < 3:
        raise ValueError(f"{api}: arguments '{ref_arg}' {mu.shape_str(ref.shape)} and 'mask' "
                         f"{mu.shape_str(mask.shape)} must have the same rank (at least 3)")


def _scatter_meta(grad: TensorSpec, mask: TensorSpec, *, size: tuple, channel_last: bool,
                  disjoint: bool) -> TensorSpec:
    api = "max_pool_scatter"
    mu.require_float(api, grad, "grad")
    _check_mask(api, grad, mask, "grad")
    if tuple(grad.shape) != tuple(mask.shape):
        raise ValueError(f"{api}: argument 'grad' {mu.shape_str(grad.shape)} and 'mask' "
                         f"{mu.shape_str(mask.shape)} must have the same shape")
    return TensorSpec(layout(grad.shape[0], channels(grad.shape, channel_last), tuple(size), channel_last),
                      grad.dtype)


def _scatter_kernel(xp, grad, mask, *, size, channel_last, disjoint):
    """Add each gradient into the plane cell its mask names (-1: nowhere).

    disjoint=True promises that no two entries of a plane name the same cell (windows that do
    not overlap), so a plain indexed store replaces the accumulating bincount.
    """
    g = to_channel_first(xp, grad, channel_last)
    m = to_channel_first(xp, mask, channel_last)
    n, c, plane = g.shape[0], g.shape[1], _pymath.prod(size)
    base = (xp.arange(n * c, dtype=np.int64) * plane).reshape((n, c) + (1,) * len(size))
    index, values = (m + base).ravel(), g.ravel()
    valid = m.ravel() >= 0
    if not bool(valid.all()):
        index, values = index[valid], values[valid]
    if disjoint:
        flat = xp.zeros(n * c * plane, dtype=grad.dtype)
        flat[index] = values
    else:
        flat = xp.bincount(index, weights=values, minlength=n * c * plane).astype(grad.dtype, copy=False)
    return from_channel_first(xp, flat.reshape((n, c, *size)), channel_last)


def _gather_meta(x: TensorSpec, mask: TensorSpec, *, channel_last: bool) -> TensorSpec:
    api = "max_pool_gather"
    mu.require_float(api, x)
    _check_mask(api, x, mask, "x")
    if (x.shape[0], channels(x.shape, channel_last)) != (mask.shape[0], channels(mask.shape, channel_last)):
        raise ValueError(f"{api}: arguments 'x' {mu.shape_str(x.shape)} and 'mask' {mu.shape_str(mask.shape)} "
                         "must have the same batch and channel sizes")
    return TensorSpec(tuple(mask.shape), x.dtype)


def _gather_kernel(xp, x, mask, *, channel_last):
    xc = to_channel_first(xp, x, channel_last)
    m = to_channel_first(xp, mask, channel_last)
    n, c = xc.shape[:2]
    flat_m = m.reshape(n, c, _pymath.prod(m.shape[2:]))
    plane = xc.reshape(n, c, _pymath.prod(xc.shape[2:]))
    out = xp.take_along_axis(plane, xp.maximum(flat_m, 0).astype(np.int64), axis=2)
    out *= flat_m >= 0
    return from_channel_first(xp, out.reshape(m.shape), channel_last)


def _g_scatter(ctx, gg):
    return _MAX_GATHER(gg, ctx.inputs[1], channel_last=ctx.attrs["channel_last"]), None


def _g_gather(ctx, g):
    x, mask = ctx.inputs
    return _scatter(g, mask, x, ctx.attrs["channel_last"], False), None


def _disjoint(kernel_size: tuple, stride: tuple) -> bool:
    """True when no two windows share a cell, so no two mask entries of a plane are equal."""
    return all(s >= k for s, k in zip(stride, kernel_size))


def _routing_samples(for_gather: bool):
    def make():
        out = []
        for shape, attrs in _MAX_CASES[:3]:
            x = _f64(*shape)
            _, mask = _max_pool_kernel(np, x, **attrs)
            cl = attrs["channel_last"]
            if for_gather:
                out.append(Sample((x, mask), {"channel_last": cl}, grad_inputs=(0,)))
            else:
                routing = {"size": spatial(shape, cl), "channel_last": cl,
                           "disjoint": _disjoint(attrs["kernel_size"], attrs["stride"])}
                out.append(Sample((_f64(*mask.shape), mask), routing, grad_inputs=(0,)))
        return out
    return make


_MAX_SCATTER = defop("max_pool_scatter", kernel=_scatter_kernel, meta=_scatter_meta, grad=_g_scatter,
                     attrs={"size": (1, 1), "channel_last": False, "disjoint": False}, inputs=("grad", "mask"),
                     samples=_routing_samples(False))


# max_pool_scatter into the sizes of `like` (the pooled input; its values are not read): the gradient of
# a static program's input whose sizes are known only when it runs
def _scatter_like_meta(grad: TensorSpec, mask: TensorSpec, like: TensorSpec, *, channel_last: bool,
                       disjoint: bool) -> TensorSpec:
    return _scatter_meta(grad, mask, size=spatial(like.shape, channel_last), channel_last=channel_last,
                         disjoint=disjoint)


def _scatter_like_kernel(xp, grad, mask, like, *, channel_last, disjoint):
    return _scatter_kernel(xp, grad, mask, size=spatial(like.shape, channel_last), channel_last=channel_last,
                           disjoint=disjoint)


def _like_samples():
    return [Sample((*s.inputs, _f64(*layout(2, channels(s.inputs[0].shape, s.attrs["channel_last"]), s.attrs["size"],
                                            s.attrs["channel_last"]))),
                   {"channel_last": s.attrs["channel_last"], "disjoint": s.attrs["disjoint"]}, grad_inputs=(0,))
            for s in _routing_samples(False)()]


_MAX_SCATTER_LIKE = defop("max_pool_scatter_like", kernel=_scatter_like_kernel, meta=_scatter_like_meta,
                          grad=lambda ctx, gg: (*_g_scatter(ctx, gg), None),
                          attrs={"channel_last": False, "disjoint": False}, inputs=("grad", "mask", "like"),
                          samples=_like_samples)


def _scatter(g: Tensor, mask: Tensor, x: Tensor, cl: bool, disjoint: bool) -> Tensor:
    """The gradient `g` of a max pool of `x` routed back through `mask` into x's sizes."""
    size = spatial(x.shape, cl)
    if -1 in size:
        return _MAX_SCATTER_LIKE(g, mask, x, channel_last=cl, disjoint=disjoint)
    return _MAX_SCATTER(g, mask, size=size, channel_last=cl, disjoint=disjoint)
_MAX_GATHER = defop("max_pool_gather", kernel=_gather_kernel, meta=_gather_meta, grad=_g_gather,
                    attrs={"channel_last": False}, inputs=("x", "mask"), samples=_routing_samples(True))


# ---------------------------------------------------------------- average pool and its adjoint
@functools.lru_cache(maxsize=1024)
def _avg_scale(size: tuple, kernel: tuple, stride: tuple, pads: tuple, out: tuple, exclusive: bool,
               divisor_override: float | None):
    """1 / Paddle's divisor per output position (a scalar when uniform), times K / divisor_override.

    The divisor counts window cells inside the input (exclusive) or inside the padded input;
    a window wholly in padding (possible in ceil mode) gets 0 instead of a NaN.
    """
    counts = []
    for i, (s, k, st, o) in enumerate(zip(size, kernel, stride, out)):
        start = np.arange(o) * st - pads[2 * i]
        end = np.minimum(start + k, s + pads[2 * i + 1])
        counts.append(np.minimum(end, s) - np.maximum(start, 0) if exclusive else end - start)
    div = functools.reduce(np.multiply.outer, counts).astype(np.float64)
    extra = 1.0 if divisor_override is None else _pymath.prod(kernel) / divisor_override
    if (div == div.flat[0]).all() and div.flat[0] > 0:
        return extra / float(div.flat[0])
    with np.errstate(divide="ignore"):
        return np.where(div > 0, extra / div, 0.0)


def _scale_array(xp, scale, dtype):
    return scale if isinstance(scale, float) else xp.asarray(scale, dtype=dtype)


def _avg_meta(x: TensorSpec, *, kernel_size: tuple, stride: tuple, padding: Any, ceil_mode: bool,
              exclusive: bool, divisor_override: float | None, channel_last: bool) -> TensorSpec:
    nd = len(kernel_size)
    api = _api("avg", nd)
    _check_input(api, x, nd, channel_last)
    _, _, out = out_geometry(api, spatial(x.shape, channel_last), kernel_size, stride, padding, (1,) * nd, ceil_mode)
    return TensorSpec(layout(x.shape[0], channels(x.shape, channel_last), out, channel_last), x.dtype)


def _avg_geometry(size, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override):
    nd = len(kernel_size)
    pads, _, out = out_geometry("avg_pool", size, kernel_size, stride, padding, (1,) * nd, ceil_mode)
    return pads, out, _avg_scale(tuple(size), kernel_size, stride, pads, out, exclusive, divisor_override)


def _avg_kernel(xp, x, *, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, channel_last):
    x = to_channel_first(xp, x, channel_last)
    nd = len(kernel_size)
    pads, out, scale = _avg_geometry(x.shape[2:], kernel_size, stride, padding, ceil_mode, exclusive,
                                     divisor_override)
    view = windows(xp, x, kernel_size, stride, (1,) * nd, pads, out, work=True)
    lead = (slice(None), slice(None))
    taps = np.ndindex(*kernel_size)
    acc = view[lead + next(taps)].copy()
    for tap in taps:
        acc += view[lead + tap]
    acc *= _scale_array(xp, scale, x.dtype)
    return from_channel_first(xp, acc, channel_last)


def _avg_grad_meta(grad: TensorSpec, *, kernel_size: tuple, stride: tuple, padding: Any, ceil_mode: bool,
                   exclusive: bool, divisor_override: float | None, channel_last: bool, size: tuple) -> TensorSpec:
    nd = len(kernel_size)
    api = _api("avg", nd) + "_grad"
    _check_input(api, grad, nd, channel_last)
    _, _, out = out_geometry(api, tuple(size), kernel_size, stride, padding, (1,) * nd, ceil_mode)
    got = spatial(grad.shape, channel_last)
    if any(a != b and a >= 0 and b >= 0 for a, b in zip(out, got)):
        raise ValueError(f"{api}: argument 'grad' has spatial size {list(got)}, expected {list(out)}")
    return TensorSpec(layout(grad.shape[0], channels(grad.shape, channel_last), tuple(size), channel_last),
                      grad.dtype)


def _avg_grad_kernel(xp, grad, *, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                     channel_last, size):
    g = to_channel_first(xp, grad, channel_last)
    pads, _, scale = _avg_geometry(size, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override)
    g = g * _scale_array(xp, scale, g.dtype)
    gx = col2im(xp, g, tuple(size), kernel_size, stride, (1,) * len(kernel_size), pads, per_tap=False)
    return from_channel_first(xp, gx, channel_last)


_AVG_KEYS = ("kernel_size", "stride", "padding", "ceil_mode", "exclusive", "divisor_override", "channel_last")


def _g_avg(ctx, g):
    (x,) = ctx.inputs
    a = ctx.attrs
    size = spatial(x.shape, a["channel_last"])
    if -1 in size:  # a static program's input of sizes known only at run time: read them from x then
        return (_AVG_GRAD_LIKE(g, x, **{k: a[k] for k in _AVG_KEYS}),)
    return (_AVG_GRAD(g, size=size, **{k: a[k] for k in _AVG_KEYS}),)


def _g_avg_grad(ctx, gg):
    return (_AVG_POOL(gg, **{k: ctx.attrs[k] for k in _AVG_KEYS}),)


_AVG_CASES = [
    ((2, 3, 5, 5), {"kernel_size": (2, 2), "stride": (2, 2), "padding": (0, 0, 0, 0), "ceil_mode": False,
                    "exclusive": True, "divisor_override": None, "channel_last": False}),
    ((2, 2, 5, 6), {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1, 0, 1), "ceil_mode": True,
                    "exclusive": True, "divisor_override": None, "channel_last": False}),
    ((2, 2, 5, 6), {"kernel_size": (3, 3), "stride": (2, 2), "padding": (1, 0, 1, 1), "ceil_mode": True,
                    "exclusive": False, "divisor_override": None, "channel_last": False}),
    ((1, 4, 4, 3), {"kernel_size": (2, 2), "stride": (1, 1), "padding": "SAME", "ceil_mode": False,
                    "exclusive": False, "divisor_override": 3.0, "channel_last": True}),
    ((2, 3, 7), {"kernel_size": (3,), "stride": (2,), "padding": (1, 1), "ceil_mode": False, "exclusive": True,
                 "divisor_override": None, "channel_last": False}),
]


def _avg_grad_samples():
    out = []
    for shape, attrs in _AVG_CASES:
        spec = _avg_meta(TensorSpec(shape, np.dtype("float64")), **attrs)
        out.append(Sample((_f64(*spec.shape),), {**attrs, "size": spatial(shape, attrs["channel_last"])}))
    return out


_AVG_ATTRS = {"kernel_size": (1, 1), "stride": (1, 1), "padding": (0, 0, 0, 0), "ceil_mode": False,
              "exclusive": True, "divisor_override": None, "channel_last": False}
_AVG_POOL = defop("avg_pool", kernel=_avg_kernel, meta=_avg_meta, grad=_g_avg, attrs=_AVG_ATTRS,
                  samples=lambda: [Sample((_f64(*s),), dict(a)) for s, a in _AVG_CASES])
_AVG_GRAD = defop("avg_pool_grad", kernel=_avg_grad_kernel, meta=_avg_grad_meta, grad=_g_avg_grad,
                  attrs={**_AVG_ATTRS, "size": (1, 1)}, inputs=("grad",), samples=_avg_grad_samples)


# avg_pool_grad into the sizes of `like` (the pooled input; its values are not read)
def _avg_grad_like_meta(grad: TensorSpec, like: TensorSpec, *, kernel_size: tuple, stride: tuple, padding: Any,
                        ceil_mode: bool, exclusive: bool, divisor_override: float | None,
                        channel_last: bool) -> TensorSpec:
    return _avg_grad_meta(grad, kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                          exclusive=exclusive, divisor_override=divisor_override, channel_last=channel_last,
                          size=spatial(like.shape, channel_last))


def _avg_grad_like_kernel(xp, grad, like, *, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                          channel_last):
    return _avg_grad_kernel(xp, grad, kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                            exclusive=exclusive, divisor_override=divisor_override, channel_last=channel_last,
                            size=spatial(like.shape, channel_last))


_AVG_GRAD_LIKE = defop(
    "avg_pool_grad_like", kernel=_avg_grad_like_kernel, meta=_avg_grad_like_meta,
    grad=lambda ctx, gg: (*_g_avg_grad(ctx, gg), None), attrs=_AVG_ATTRS, inputs=("grad", "like"),
    samples=lambda: [Sample((s.inputs[0], _f64(*shape)), {k: v for k, v in s.attrs.items() if k != "size"},
                            grad_inputs=(0,)) for s, (shape, _) in zip(_avg_grad_samples(), _AVG_CASES)])


# ---------------------------------------------------------------- adaptive max pool
def _adaptive_max_meta(x: TensorSpec, *, output_size: tuple) -> tuple:
    nd = len(output_size)
    api = _api("adaptive_max", nd)
    _check_input(api, x, nd, False, "fiu")
    shape = (x.shape[0], x.shape[1], *output_size)
    return TensorSpec(shape, x.dtype), TensorSpec(shape, _MASK)


def _adaptive_max_kernel(xp, x, *, output_size):
    size = x.shape[2:]
    tables = [tap_table("area", s, o, False, 0, None)[0] for s, o in zip(size, output_size)]

    def taps():
        for tap in np.ndindex(*(t.shape[1] for t in tables)):
            v = x
            for i, (t, table) in enumerate(zip(tap, tables)):
                v = xp.take(v, xp.asarray(table[:, t]), axis=2 + i)
            yield v

    best, idx = _argmax_scan(xp, taps(), _pymath.prod(t.shape[1] for t in tables))
    mask = None
    for i, table in reversed(list(enumerate(tables))):
        k = table.shape[1]
        coord = xp.asarray(table.astype(np.int32))[_ranges(xp, output_size, i), idx % k]
        idx //= k
        mask = coord if mask is None else coord * _pymath.prod(size[i + 1:]) + mask
    return best, mask.astype(_MASK, copy=False)


def _g_adaptive_max(ctx, g, _gmask):
    (x,) = ctx.inputs
    return (_scatter(g, ctx.outputs[1].detach(), x, False, False),)


_ADAPTIVE_MAX = defop("adaptive_max_pool", kernel=_adaptive_max_kernel, meta=_adaptive_max_meta,
                      grad=_g_adaptive_max, attrs={"output_size": (1, 1)}, save_outputs=True,
                      nondiff_outputs=(1,),
                      samples=lambda: [Sample((_f64(2, 3, 7, 5),), {"output_size": (3, 2)}),
                                       Sample((_f64(2, 2, 4, 6),), {"output_size": (5, 4)}),
                                       Sample((_f64(2, 3, 9),), {"output_size": (4,)})])


# ---------------------------------------------------------------- public API
def _window_args(api: str, nd: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                 cl: bool) -> dict:
    kernel = ntuple(api, "kernel_size", kernel_size, nd)
    if isinstance(padding, str) and padding.upper() == "VALID" and ceil_mode:
        raise ValueError(f"{api}: when 'padding' is 'VALID', 'ceil_mode' must be False")
    return {"kernel_size": kernel, "stride": kernel if stride is None else ntuple(api, "stride", stride, nd),
            "padding": parse_padding(api, padding, nd, cl), "ceil_mode": bool(ceil_mode), "channel_last": cl}


def _max_pool(nd: int, x: Any, kernel_size: Any, stride: Any, padding: Any, return_mask: bool, ceil_mode: bool,
              data_format: str):
    api = _api("max", nd)
    x = as_tensor(x, "x", api)
    cl = channel_last(api, data_format, nd)
    if return_mask and cl:
        raise ValueError(f"{api}: return_mask=True needs data_format '{FORMATS[nd][0]}', got {data_format!r}")
    out, mask = _MAX_POOL(x, **_window_args(api, nd, kernel_size, stride, padding, ceil_mode, cl))
    return (out, mask) if return_mask else out


def _avg_pool(nd: int, x: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, exclusive: bool,
              divisor_override: Any, data_format: str) -> Tensor:
    api = _api("avg", nd)
    x = as_tensor(x, "x", api)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, (int, float, np.number)) \
                or divisor_override == 0:
            raise ValueError(f"{api}: argument 'divisor_override' must be a non-zero number, "
                             f"got {divisor_override!r}")
        divisor_override = float(divisor_override)
    cl = channel_last(api, data_format, nd)
    return _AVG_POOL(x, exclusive=bool(exclusive), divisor_override=divisor_override,
                     **_window_args(api, nd, kernel_size, stride, padding, ceil_mode, cl))


def _output_size(api: str, x: Tensor, output_size: Any, nd: int, cl: bool) -> tuple:
    """Adaptive output sizes: an int or `nd` entries, None meaning the input's size."""
    _check_input(api, TensorSpec(tuple(x.shape), _dt.to_np_dtype(x.dtype)), nd, cl, "fiu")  # static Vars too
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    if not isinstance(output_size, (list, tuple)):
        output_size = [output_size] * nd
    if len(output_size) != nd:
        raise ValueError(f"{api}: argument 'output_size' must be an int or {nd} entries, got {list(output_size)}")
    sizes = spatial(x.shape, cl)
    resolved = [sizes[i] if v is None else v for i, v in enumerate(output_size)]
    return ntuple(api, "output_size", resolved, nd)


def _adaptive_avg(nd: int, x: Any, output_size: Any, data_format: str) -> Tensor:
    api = _api("adaptive_avg", nd)
    x = as_tensor(x, "x", api)
    cl = channel_last(api, data_format, nd)
    return resample(x, "area", _output_size(api, x, output_size, nd, cl), None, False, 0, cl)


def _adaptive_max(nd: int, x: Any, output_size: Any, return_mask: bool):
    api = _api("adaptive_max", nd)
    x = as_tensor(x, "x", api)
    out, mask = _ADAPTIVE_MAX(x, output_size=_output_size(api, x, output_size, nd, False))
    return (out, mask) if return_mask else out


def max_pool1d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, return_mask: bool = False,
               ceil_mode: bool = False, name: str | None = None):
    """1-D max pooling over [N, C, L] (with return_mask, also the argmax mask)."""
    return _max_pool(1, x, kernel_size, stride, padding, return_mask, ceil_mode, "NCL")


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, return_mask: bool = False,
               ceil_mode: bool = False, data_format: str = "NCHW", name: str | None = None):
    """2-D max pooling (with return_mask, also the argmax mask: h * W + w per plane)."""
    return _max_pool(2, x, kernel_size, stride, padding, return_mask, ceil_mode, data_format)


def max_pool3d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, return_mask: bool = False,
               ceil_mode: bool = False, data_format: str = "NCDHW", name: str | None = None):
    """3-D max pooling (with return_mask, also the argmax mask)."""
    return _max_pool(3, x, kernel_size, stride, padding, return_mask, ceil_mode, data_format)


def avg_pool1d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, exclusive: bool = True,
               ceil_mode: bool = False, name: str | None = None) -> Tensor:
    """1-D average pooling over [N, C, L]; exclusive=True ignores padded cells."""
    return _avg_pool(1, x, kernel_size, stride, padding, ceil_mode, exclusive, None, "NCL")


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override: float | None = None, data_format: str = "NCHW",
               name: str | None = None) -> Tensor:
    """2-D average pooling; exclusive=True ignores padded cells."""
    return _avg_pool(2, x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format)


def avg_pool3d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override: float | None = None, data_format: str = "NCDHW",
               name: str | None = None) -> Tensor:
    """3-D average pooling; exclusive=True ignores padded cells."""
    return _avg_pool(3, x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format)


def adaptive_avg_pool1d(x: Tensor, output_size: Any, name: str | None = None) -> Tensor:
    """Average over floor/ceil-bounded windows so that the output length is `output_size`."""
    return _adaptive_avg(1, x, output_size, "NCL")


def adaptive_avg_pool2d(x: Tensor, output_size: Any, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """Adaptive average pooling to `output_size` (an int or [H, W]; None keeps a size)."""
    return _adaptive_avg(2, x, output_size, data_format)


def adaptive_avg_pool3d(x: Tensor, output_size: Any, data_format: str = "NCDHW",
                        name: str | None = None) -> Tensor:
    """Adaptive average pooling to `output_size` (an int or [D, H, W]; None keeps a size)."""
    return _adaptive_avg(3, x, output_size, data_format)


def adaptive_max_pool1d(x: Tensor, output_size: Any, return_mask: bool = False, name: str | None = None):
    """Adaptive max pooling over [N, C, L] to length `output_size`."""
    return _adaptive_max(1, x, output_size, return_mask)


def adaptive_max_pool2d(x: Tensor, output_size: Any, return_mask: bool = False, name: str | None = None):
    """Adaptive max pooling over [N, C, H, W] to `output_size` (None keeps a size)."""
    return _adaptive_max(2, x, output_size, return_mask)


def adaptive_max_pool3d(x: Tensor, output_size: Any, return_mask: bool = False, name: str | None = None):
    """Adaptive max pooling over [N, C, D, H, W] to `output_size` (None keeps a size)."""
    return _adaptive_max(3, x, output_size, return_mask)
