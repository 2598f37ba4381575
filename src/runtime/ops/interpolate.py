"""Resizing: interpolate / upsample (nearest, linear, bilinear, trilinear, bicubic, area).

Every mode is separable: along each spatial axis an output sample is a weighted sum of a few
input samples (a tap table: indices and weights per output position). The `resample` op
gathers the taps axis by axis (vectorised `take`, no loop over pixels); its adjoint
`resample_grad` multiplies by the transposed (out x in) matrix of the same table, axis by
axis. Each op's gradient is the other one, so double backward is free. Adaptive average
pooling is the 'area' mode. Source coordinates follow Paddle's kernels, including their
float32 arithmetic: nearest floor(dst * ratio); linear with align_mode=0 and
align_corners=False uses half-pixel centres (dst + 0.5) * ratio - 0.5 clamped at 0;
align_corners=True uses ratio = (in - 1) / (out - 1); ratio is 1 / scale_factor when a scale
is given, else in / out; and a resize that keeps every size is a copy.
"""
from __future__ import annotations

import functools
import math as _pymath
from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor
from . import meta_utils as mu
from .conv import FORMATS
from .math import cast
from .registry import Sample, TensorSpec, defop, uniform_sampler
from .shape import fill_sizes, run_time_sizes, sizes_input

__all__ = ["interpolate", "upsample"]

_rng = np.random.default_rng(31)
_f64 = uniform_sampler(_rng)
_CUBIC_A = -0.75


# ---------------------------------------------------------------- tap tables (one axis)
def _ratio(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> np.float32:
    """Paddle's source step per output sample, computed in float32 as its kernels do."""
    if n_out <= 1:
        return np.float32(0.0)
    if align_corners:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    if scale is not None and scale > 0:
        return np.float32(1.0 / float(np.float32(scale)))
    return np.float32(n_in) / np.float32(n_out)


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    a = _CUBIC_A

    def near(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)


def _frozen(*arrays):
    for a in arrays:
        if a is not None:
            a.flags.writeable = False
    return arrays if len(arrays) > 1 else arrays[0]


@functools.lru_cache(maxsize=1024)
def tap_table(mode: str, n_in: int, n_out: int, align_corners: bool, align_mode: int,
           scale: float | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(indices (n_out, taps), weights (n_out, taps) or None for plain selection) of one axis."""
    k = np.arange(n_out)
    if mode == "area":
        start = (k * n_in) // n_out
        end = -((-(k + 1) * n_in) // n_out)
        width = end - start
        taps = np.arange(int(width.max()))
        idx = np.minimum(start[:, None] + taps, end[:, None] - 1)
        return _frozen(idx, np.where(taps < width[:, None], 1.0 / width[:, None], 0.0))
    ratio = _ratio(n_in, n_out, align_corners, scale)
    k32 = k.astype(np.float32)
    if mode == "nearest":
        return _frozen(np.minimum((ratio * k32).astype(np.int64), n_in - 1)[:, None], None)
    if mode == "cubic":
        src = (ratio * k32).astype(np.float64) if align_corners else float(ratio) * (k + 0.5) - 0.5
        base = np.floor(src)
        idx = np.clip(base.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_in - 1)
        return _frozen(idx, _cubic_weights(src - base))
    if align_mode == 0 and not align_corners:  # half-pixel centres
        src = float(ratio) * (k + 0.5) - 0.5
        lo = np.maximum(np.trunc(src).astype(np.int64), 0)
        frac = np.maximum(src.astype(np.float32), np.float32(0)) - lo.astype(np.float32)
    else:
        src32 = ratio * k32
        lo = src32.astype(np.int64)
        frac = src32 - lo.astype(np.float32)
    lo = np.minimum(lo, n_in - 1)
    idx = np.stack([lo, np.minimum(lo + 1, n_in - 1)], axis=1)
    return _frozen(idx, np.stack([np.float32(1) - frac, frac], axis=1).astype(np.float64))


@functools.lru_cache(maxsize=1024)
def _matrix(mode: str, n_in: int, n_out: int, align_corners: bool, align_mode: int,
            scale: float | None) -> np.ndarray:
    """The dense (n_out, n_in) matrix of one axis' tap table (for the adjoint)."""
    idx, w = tap_table(mode, n_in, n_out, align_corners, align_mode, scale)
    m = np.zeros((n_out, n_in))
    rows = np.broadcast_to(np.arange(n_out)[:, None], idx.shape)
    np.add.at(m, (rows, idx), 1.0 if w is None else w)
    return _frozen(m)


# ---------------------------------------------------------------- geometry
def _axes(ndim: int, channel_last: bool) -> range:
    return range(1, ndim - 1) if channel_last else range(2, ndim)


def _out_sizes(in_sizes: tuple, size: tuple | None, scale: tuple | None) -> tuple:
    if size is not None:
        return tuple(size)
    # Paddle: static_cast<int>(in * scale) in float32
    return tuple(-1 if s < 0 else int(np.float32(s) * np.float32(f)) for s, f in zip(in_sizes, scale))


def _with_sizes(shape, axes, sizes) -> tuple:
    """`shape` with its spatial `axes` replaced by `sizes`."""
    out = list(shape)
    for a, s in zip(axes, sizes):
        out[a] = s
    return tuple(out)


def _per_axis(attrs_scale: tuple | None, i: int) -> float | None:
    return None if attrs_scale is None else attrs_scale[i]


def _check_resample(api: str, x: TensorSpec, nd: int, channel_last: bool) -> None:
    mu.require_float(api, x)
    if len(x.shape) != nd + 2:
        raise ValueError(f"{api}: argument 'x' must be a {nd + 2}-D tensor ({FORMATS[nd][channel_last]}), "
                         f"got shape {mu.shape_str(x.shape)}")


# ---------------------------------------------------------------- resample and its adjoint
def _resample_meta(x: TensorSpec, *, mode: str, size: tuple | None, scale: tuple | None, align_corners: bool,
                   align_mode: int, channel_last: bool) -> TensorSpec:
    nd = len(size if size is not None else scale)
    _check_resample("interpolate", x, nd, channel_last)
    axes = _axes(len(x.shape), channel_last)
    out = _out_sizes(tuple(x.shape[a] for a in axes), size, scale)
    if any(o == 0 or o < -1 for o in out):
        raise ValueError(f"interpolate: the output size {list(out)} must be positive in every spatial dimension "
                         f"(input shape {mu.shape_str(x.shape)}, size {size}, scale_factor {scale})")
    return TensorSpec(_with_sizes(x.shape, axes, out), x.dtype)


def _gather_axis(xp, x, axis: int, idx: np.ndarray, w: np.ndarray | None):
    """Along `axis`: out[..., o, ...] = sum_t w[o, t] * x[..., idx[o, t], ...]."""
    bshape = [1] * x.ndim
    bshape[axis] = -1
    y = None
    for t in range(idx.shape[1]):
        part = xp.take(x, xp.asarray(idx[:, t]), axis=axis)
        if w is not None:
            part *= xp.asarray(w[:, t], dtype=x.dtype).reshape(bshape)
        if y is None:
            y = part
        else:
            y += part
    return y


def _resample_kernel(xp, x, *, mode, size, scale, align_corners, align_mode, channel_last):
    axes = _axes(x.ndim, channel_last)
    sizes = tuple(x.shape[a] for a in axes)
    out = _out_sizes(sizes, size, scale)
    if sizes == out and mode != "area":
        return x.copy()
    if mode == "area" and all(o == 1 for o in out):  # global average pooling: one reduction
        return x.mean(axis=tuple(axes), keepdims=True)
    for i, a in enumerate(axes):
        if mode == "area" and sizes[i] % out[i] == 0:  # equal blocks: a plain mean
            k = sizes[i] // out[i]
            x = x.reshape((*x.shape[:a], out[i], k, *x.shape[a + 1:])).mean(axis=a + 1)
        else:
            idx, w = tap_table(mode, sizes[i], out[i], align_corners, align_mode, _per_axis(scale, i))
            x = _gather_axis(xp, x, a, idx, w)
    return x


def _matmul_axis(xp, g, axis: int, m):
    """Along `axis`: out[..., i, ...] = sum_o g[..., o, ...] * m[o, i] (one 2-D GEMM)."""
    moved = xp.moveaxis(g, axis, -1)
    lead = moved.shape[:-1]
    res = xp.matmul(moved.reshape(-1, m.shape[0]), m).reshape((*lead, m.shape[1]))
    return xp.moveaxis(res, -1, axis)


def _resample_grad_meta(grad: TensorSpec, *, mode: str, size: tuple | None, scale: tuple | None,
                        align_corners: bool, align_mode: int, channel_last: bool, in_size: tuple) -> TensorSpec:
    nd = len(in_size)
    _check_resample("interpolate_grad", grad, nd, channel_last)
    axes = _axes(len(grad.shape), channel_last)
    out = _out_sizes(in_size, size, scale)
    got = tuple(grad.shape[a] for a in axes)
    if any(a != b and a >= 0 and b >= 0 for a, b in zip(out, got)):
        raise ValueError(f"interpolate_grad: argument 'grad' has spatial size {list(got)}, expected {list(out)}")
    return TensorSpec(_with_sizes(grad.shape, axes, in_size), grad.dtype)


def _resample_grad_kernel(xp, grad, *, mode, size, scale, align_corners, align_mode, channel_last, in_size):
    axes = _axes(grad.ndim, channel_last)
    out = tuple(grad.shape[a] for a in axes)
    if tuple(in_size) == out and mode != "area":
        return grad.copy()
    if mode == "area" and all(o == 1 for o in out):  # global average pooling: spread evenly
        return xp.broadcast_to(grad, _with_sizes(grad.shape, axes, in_size)) * (1.0 / _pymath.prod(in_size))
    for i, a in enumerate(axes):
        if mode == "area" and in_size[i] % out[i] == 0:  # equal blocks: spread evenly
            k = in_size[i] // out[i]
            spread = xp.broadcast_to(xp.expand_dims(grad, a + 1), (*grad.shape[:a + 1], k, *grad.shape[a + 1:]))
            grad = spread.reshape((*grad.shape[:a], in_size[i], *grad.shape[a + 1:])) * (1.0 / k)
        else:
            m = _matrix(mode, in_size[i], out[i], align_corners, align_mode, _per_axis(scale, i))
            grad = _matmul_axis(xp, grad, a, xp.asarray(m, dtype=grad.dtype))
    return grad


def _resample_attrs(attrs: dict) -> dict:
    return {k: attrs[k] for k in ("mode", "size", "scale", "align_corners", "align_mode", "channel_last")}


def _spatial(shape, channel_last: bool) -> tuple:
    return tuple(shape[i] for i in _axes(len(shape), channel_last))


def _g_resample(ctx, g):
    (x,) = ctx.inputs
    a = ctx.attrs
    in_size = _spatial(x.shape, a["channel_last"])
    if -1 in in_size:  # a static program's input of sizes known only at run time: read them from x then
        return (_RESAMPLE_GRAD_LIKE(g, x, **_resample_attrs(a)),)
    return (_RESAMPLE_GRAD(g, in_size=in_size, **_resample_attrs(a)),)


def _g_resample_grad(ctx, gg):
    size = ctx.attrs["size"]
    if size is not None and -1 in size:
        raise NotImplementedError("interpolate: the second derivative of a resize to sizes known only at run time "
                                  "is not supported")
    return (_RESAMPLE(gg, **_resample_attrs(ctx.attrs)),) + (None,) * (len(ctx.inputs) - 1)


_RESAMPLE_CASES = [
    # (input shape, attrs)
    ((2, 3, 4, 5), {"mode": "nearest", "size": (7, 3), "scale": None, "align_corners": False,
                    "align_mode": 0, "channel_last": False}),
    ((2, 3, 4, 5), {"mode": "linear", "size": None, "scale": (1.5, 2.0), "align_corners": False,
                    "align_mode": 0, "channel_last": False}),
    ((1, 4, 3, 2), {"mode": "linear", "size": (6, 4), "scale": None, "align_corners": True,
                    "align_mode": 0, "channel_last": True}),
    ((2, 2, 5), {"mode": "linear", "size": (8,), "scale": None, "align_corners": False,
                 "align_mode": 1, "channel_last": False}),
    ((1, 2, 4, 4), {"mode": "cubic", "size": (6, 3), "scale": None, "align_corners": False,
                    "align_mode": 0, "channel_last": False}),
    ((2, 3, 7, 5), {"mode": "area", "size": (3, 2), "scale": None, "align_corners": False,
                    "align_mode": 0, "channel_last": False}),
    ((2, 6, 4, 3), {"mode": "area", "size": (3, 4), "scale": None, "align_corners": False,
                    "align_mode": 0, "channel_last": True}),
    ((2, 3, 4, 5), {"mode": "area", "size": (1, 1), "scale": None, "align_corners": False,
                    "align_mode": 0, "channel_last": False}),
]


def _resample_samples():
    return [Sample((_f64(*shape),), dict(attrs)) for shape, attrs in _RESAMPLE_CASES]


def _resample_grad_samples():
    out = []
    for shape, attrs in _RESAMPLE_CASES:
        spec = _resample_meta(TensorSpec(shape, np.dtype("float64")), **attrs)
        in_size = tuple(shape[a] for a in _axes(len(shape), attrs["channel_last"]))
        out.append(Sample((_f64(*spec.shape),), {**attrs, "in_size": in_size}))
    return out


_RESAMPLE_DEFAULTS = {"mode": "nearest", "size": None, "scale": None, "align_corners": False, "align_mode": 0,
                      "channel_last": False}
_RESAMPLE = defop("resample", kernel=_resample_kernel, meta=_resample_meta, grad=_g_resample,
                  attrs=_RESAMPLE_DEFAULTS, samples=_resample_samples)
_RESAMPLE_GRAD = defop("resample_grad", kernel=_resample_grad_kernel, meta=_resample_grad_meta,
                       grad=_g_resample_grad, attrs={**_RESAMPLE_DEFAULTS, "in_size": (1, 1)},
                       inputs=("grad",), samples=_resample_grad_samples)


def _resample_grad_like_meta(grad: TensorSpec, like: TensorSpec, *, mode: str, size: tuple | None,
                             scale: tuple | None, align_corners: bool, align_mode: int,
                             channel_last: bool) -> TensorSpec:
    return _resample_grad_meta(grad, mode=mode, size=size, scale=scale, align_corners=align_corners,
                               align_mode=align_mode, channel_last=channel_last,
                               in_size=_spatial(like.shape, channel_last))


def _resample_grad_like_kernel(xp, grad, like, *, mode, size, scale, align_corners, align_mode, channel_last):
    return _resample_grad_kernel(xp, grad, mode=mode, size=size, scale=scale, align_corners=align_corners,
                                 align_mode=align_mode, channel_last=channel_last,
                                 in_size=_spatial(like.shape, channel_last))


# resample_grad whose input sizes are those of `like` (the resampled input; its values are not read)
_RESAMPLE_GRAD_LIKE = defop(
    "resample_grad_like", kernel=_resample_grad_like_kernel, meta=_resample_grad_like_meta, grad=_g_resample_grad,
    attrs=_RESAMPLE_DEFAULTS, inputs=("grad", "like"),
    samples=lambda: [Sample((g.inputs[0], _f64(*shape)), {k: v for k, v in g.attrs.items() if k != "in_size"},
                            grad_inputs=(0,))
                     for g, (shape, _) in zip(_resample_grad_samples(), _RESAMPLE_CASES)])


# resample to sizes given as a tensor input `sizes`, in the None entries of the attribute `size` (a size
# known only when a static program runs, such as `paddle.shape(y)[2:]` of a y with unknown dims)
def _resample_sizes_meta(x: TensorSpec, sizes: TensorSpec, *, mode: str, size: tuple, scale: None,
                         align_corners: bool, align_mode: int, channel_last: bool) -> TensorSpec:
    return _resample_meta(x, mode=mode, size=tuple(-1 if s is None else s for s in size), scale=scale,
                          align_corners=align_corners, align_mode=align_mode, channel_last=channel_last)


def _resample_sizes_kernel(xp, x, sizes, *, mode, size, scale, align_corners, align_mode, channel_last):
    return _resample_kernel(xp, x, mode=mode, size=fill_sizes(size, sizes), scale=scale, align_corners=align_corners,
                            align_mode=align_mode, channel_last=channel_last)


def _g_resample_sizes(ctx, g):
    x, _ = ctx.inputs
    attrs = {**_resample_attrs(ctx.attrs), "size": tuple(-1 if s is None else s for s in ctx.attrs["size"])}
    return _RESAMPLE_GRAD_LIKE(g, x, **attrs), None


_RESAMPLE_SIZES = defop(
    "resample_sizes", kernel=_resample_sizes_kernel, meta=_resample_sizes_meta, grad=_g_resample_sizes,
    attrs=_RESAMPLE_DEFAULTS, inputs=("x", "sizes"),
    samples=lambda: [Sample((_f64(2, 3, 4, 5), np.zeros(0, np.int64)),
                            {**_RESAMPLE_DEFAULTS, "mode": "linear", "size": (7, 3)}, grad_inputs=(0,)),
                     Sample((_f64(1, 2, 5, 4), np.zeros(0, np.int64)),
                            {**_RESAMPLE_DEFAULTS, "mode": "cubic", "size": (3, 6)}, grad_inputs=(0,))])


def resample(x: Tensor, mode: str, size: tuple | None, scale: tuple | None, align_corners: bool,
             align_mode: int, channel_last: bool) -> Tensor:
    """Run the `resample` op with already-validated attributes (used by adaptive pooling too)."""
    return _RESAMPLE(x, mode=mode, size=size, scale=scale, align_corners=align_corners, align_mode=align_mode,
                     channel_last=channel_last)


# ---------------------------------------------------------------- public API
# Paddle mode -> (table kind, ranks of x it accepts)
_MODES = {"nearest": ("nearest", (4, 5)), "linear": ("linear", (3,)), "bilinear": ("linear", (4,)),
          "trilinear": ("linear", (5,)), "bicubic": ("cubic", (4,)), "area": ("area", (3, 4, 5))}
_INTERP_FORMATS = {1: ("NCW", "NWC"), 2: FORMATS[2], 3: FORMATS[3]}
_ALL_FORMATS = {f for table in (FORMATS, _INTERP_FORMATS) for pair in table.values() for f in pair}


def _sizes(api: str, arg: str, value: Any, nd: int, cast, positive_msg: str) -> tuple:
    if isinstance(value, Tensor):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        value = [value] * nd
    if len(value) != nd:
        raise ValueError(f"{api}: argument '{arg}' must have {nd} entries for a {nd + 2}-D input, got {list(value)}")
    out = []
    for v in value:
        v = v.item() if isinstance(v, Tensor) else v
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{api}: argument '{arg}' must hold numbers, got {v!r}")
        if v <= 0:
            raise ValueError(f"{api}: argument '{arg}' must hold {positive_msg}, got {list(value)}")
        out.append(cast(v))
    return tuple(out)


def interpolate(x: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool = False, align_mode: int = 0, data_format: str = "NCHW",
                name: str | None = None) -> Tensor:
    """Resize the spatial dims of a 3-D, 4-D or 5-D tensor by `size` or `scale_factor`."""
    api = "interpolate"
    x = as_tensor(x, "x", api)
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise ValueError(f"{api}: argument 'mode' must be one of {sorted(_MODES)}, got {mode!r}")
    kind, ranks = _MODES[mode.lower()]
    if x.ndim not in ranks:
        raise ValueError(f"{api}: mode '{mode.lower()}' needs a {' or '.join(f'{r}-D' for r in ranks)} input, "
                         f"got shape {x.shape}")
    nd = x.ndim - 2
    if not isinstance(data_format, str) or data_format.upper() not in _ALL_FORMATS:
        raise ValueError(f"{api}: argument 'data_format' must be one of {list(_INTERP_FORMATS[nd])}, "
                         f"got {data_format!r}")
    channel_last = not data_format.upper().startswith("NC")  # 'NCHW' on a 3-D input means 'NCW', as newer Paddle
    if not isinstance(align_corners, (bool, np.bool_)):
        raise TypeError(f"{api}: argument 'align_corners' must be a bool, got {type(align_corners).__name__}")
    if align_mode not in (0, 1):
        raise ValueError(f"{api}: argument 'align_mode' must be 0 or 1, got {align_mode!r}")
    if align_corners and kind in ("nearest", "area"):
        raise ValueError(f"{api}: align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if size is None and scale_factor is None:
        raise ValueError(f"{api}: one of 'size' and 'scale_factor' must be given")
    if size is not None and scale_factor is not None:
        raise ValueError(f"{api}: only one of 'size' and 'scale_factor' may be given")
    if kind == "area" and size is None:
        raise ValueError(f"{api}: mode 'area' needs 'size' (it is adaptive average pooling)")
    if size is not None and run_time_sizes(size if isinstance(size, (list, tuple)) else [size]):
        sizes, template = _run_time_sizes(api, size, nd)
        return _RESAMPLE_SIZES(x, sizes, mode=kind, size=template, scale=None, align_corners=bool(align_corners),
                               align_mode=int(align_mode), channel_last=channel_last)
    sizes = None if size is None else _sizes(api, "size", size, nd, int, "positive ints")
    scale = None if scale_factor is None else _sizes(api, "scale_factor", scale_factor, nd, float,
                                                     "positive numbers")
    return resample(x, kind, sizes, scale, bool(align_corners), int(align_mode), channel_last)


def _run_time_sizes(api: str, size: Any, nd: int) -> tuple[Tensor, tuple]:
    """Output sizes a static program knows only when it runs (a 1-D int tensor of `nd` sizes, or a list
    holding 0-D ones) as one int64 tensor and the template of the `size` attribute (None: from the tensor)."""
    if isinstance(size, (list, tuple)):
        if len(size) != nd:
            raise ValueError(f"{api}: argument 'size' must have {nd} entries for a {nd + 2}-D input, got {len(size)}")
        return sizes_input(api, "size", size)
    spec = size.spec()
    if spec.dtype.kind not in "iu" or spec.shape != (nd,):
        raise ValueError(f"{api}: argument 'size' must be a 1-D int tensor of {nd} sizes for a {nd + 2}-D input, "
                         f"got a {spec.dtype} tensor of shape {mu.shape_str(spec.shape)}")
    return cast(size, "int64"), (None,) * nd


def upsample(x: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool = False, align_mode: int = 0, data_format: str = "NCHW",
             name: str | None = None) -> Tensor:
    """Alias of `interpolate` (Paddle's upsample)."""
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format, name)
