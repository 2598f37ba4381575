"""`paddle.nn.functional.pad`: constant, reflect, replicate and circular padding.

Paddle's convention for the `pad` list: in 'constant' mode a list of 2 * x.ndim entries pads
every dim from the first ([before_0, after_0, before_1, after_1, ...]); a list of
2 * (x.ndim - 2) entries (3-D to 5-D inputs, every mode) pads the spatial dims named by
`data_format`, starting from the LAST one: [left, right, top, bottom, front, back]; any other
even length in 'constant' mode pads that many dims from the last one (newer Paddle).
The `pad_nd` op takes explicit per-dim pairs; its adjoint `pad_nd_grad` crops the gradient
and folds what landed in reflected / replicated / wrapped cells back onto their sources.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor
from . import meta_utils as mu
from .registry import Sample, TensorSpec, defop, uniform_sampler

__all__ = ["pad"]

_rng = np.random.default_rng(51)
_f64 = uniform_sampler(_rng)
_NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
_CHANNEL_FIRST = ("NCL", "NCHW", "NCDHW")
_CHANNEL_LAST = ("NLC", "NHWC", "NDHWC")


def _pairs(pads: tuple) -> list[tuple[int, int]]:
    return [(pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)]


def _check_pads(api: str, shape: tuple, pads: tuple, mode: str) -> None:
    if len(pads) != 2 * len(shape):
        raise ValueError(f"{api}: needs 2 pad entries per dimension of x {mu.shape_str(shape)}, got {list(pads)}")
    for d, (s, (b, a)) in enumerate(zip(shape, _pairs(pads))):
        if b < 0 or a < 0:
            raise ValueError(f"{api}: pads must be non-negative, got ({b}, {a}) for dimension {d}")
        if s < 0 or not (b or a):
            continue
        if mode == "reflect" and max(b, a) >= s:
            raise ValueError(f"{api}: 'reflect' padding ({b}, {a}) of dimension {d} must be smaller than its "
                             f"size {s}")
        if mode == "circular" and max(b, a) > s:
            raise ValueError(f"{api}: 'circular' padding ({b}, {a}) of dimension {d} must not exceed its size {s}")
        if mode == "replicate" and s == 0:
            raise ValueError(f"{api}: 'replicate' cannot pad the empty dimension {d}")


def _pad_meta(x: TensorSpec, *, pads: tuple, mode: str, value: float) -> TensorSpec:
    _check_pads("pad", x.shape, pads, mode)
    return TensorSpec(tuple(s if s < 0 else s + b + a for s, (b, a) in zip(x.shape, _pairs(pads))), x.dtype)


def _pad_kernel(xp, x, *, pads, mode, value):
    if mode == "constant":
        return xp.pad(x, _pairs(pads), mode="constant", constant_values=value)
    return xp.pad(x, _pairs(pads), mode=_NP_MODES[mode])


def _take(a, axis: int, start: int, stop: int):
    index = [slice(None)] * a.ndim
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def _fold_axis(xp, g, axis: int, before: int, after: int, mode: str):
    """Adjoint of padding one axis: the centre plus, for non-constant modes, the folded borders."""
    size = g.shape[axis] - before - after
    out = _take(g, axis, before, before + size).copy()
    if mode == "constant" or not (before or after):
        return out
    head, tail = _take(g, axis, 0, before), _take(g, axis, before + size, before + size + after)
    if mode == "replicate":
        _take(out, axis, 0, 1)[...] += head.sum(axis=axis, keepdims=True)
        _take(out, axis, size - 1, size)[...] += tail.sum(axis=axis, keepdims=True)
    elif mode == "reflect":  # padded cell p < before mirrors input cell before - p (edge excluded)
        _take(out, axis, 1, before + 1)[...] += xp.flip(head, axis=axis)
        _take(out, axis, size - 1 - after, size - 1)[...] += xp.flip(tail, axis=axis)
    else:  # circular: the head wraps from the end, the tail from the start
        _take(out, axis, size - before, size)[...] += head
        _take(out, axis, 0, after)[...] += tail
    return out


def _pad_grad_meta(grad: TensorSpec, *, pads: tuple, mode: str) -> TensorSpec:
    if len(pads) != 2 * len(grad.shape):
        raise ValueError(f"pad_grad: needs 2 pad entries per dimension of grad {mu.shape_str(grad.shape)}, "
                         f"got {list(pads)}")
    shape = tuple(s if s < 0 else s - b - a for s, (b, a) in zip(grad.shape, _pairs(pads)))
    if any(s < -1 for s in shape):
        raise ValueError(f"pad_grad: argument 'grad' {mu.shape_str(grad.shape)} is smaller than the pads "
                         f"{list(pads)}")
    _check_pads("pad_grad", shape, pads, mode)
    return TensorSpec(shape, grad.dtype)


def _pad_grad_kernel(xp, grad, *, pads, mode):
    for axis, (b, a) in enumerate(_pairs(pads)):
        if b or a:
            grad = _fold_axis(xp, grad, axis, b, a, mode)
    return grad.copy() if not any(pads) else grad


def _g_pad(ctx, g):
    return (_PAD_GRAD(g, pads=ctx.attrs["pads"], mode=ctx.attrs["mode"]),)


def _g_pad_grad(ctx, gg):
    return (_PAD(gg, pads=ctx.attrs["pads"], mode=ctx.attrs["mode"], value=0.0),)


_PAD_CASES = [
    ((2, 3, 4, 5), (0, 0, 0, 0, 1, 2, 2, 1), "constant"),
    ((2, 3, 4, 5), (0, 0, 0, 0, 3, 2, 1, 4), "reflect"),
    ((2, 3, 4, 5), (0, 0, 0, 0, 2, 3, 4, 1), "replicate"),
    ((2, 3, 4, 5), (0, 0, 0, 0, 4, 1, 2, 5), "circular"),
    ((2, 4, 3), (0, 0, 2, 1, 0, 0), "reflect"),
    ((1, 2, 3, 3, 2), (0, 0, 0, 0, 1, 2, 2, 1, 1, 0), "circular"),
    ((3, 4), (1, 0, 2, 3), "constant"),
]


def _pad_samples():
    return [Sample((_f64(*s),), {"pads": p, "mode": m, "value": 0.5 if m == "constant" else 0.0})
            for s, p, m in _PAD_CASES]


def _pad_grad_samples():
    out = []
    for s, p, m in _PAD_CASES:
        padded = tuple(d + b + a for d, (b, a) in zip(s, _pairs(p)))
        out.append(Sample((_f64(*padded),), {"pads": p, "mode": m}))
    return out


_PAD = defop("pad_nd", kernel=_pad_kernel, meta=_pad_meta, grad=_g_pad,
             attrs={"pads": (), "mode": "constant", "value": 0.0}, samples=_pad_samples)
_PAD_GRAD = defop("pad_nd_grad", kernel=_pad_grad_kernel, meta=_pad_grad_meta, grad=_g_pad_grad,
                  attrs={"pads": (), "mode": "constant"}, inputs=("grad",), samples=_pad_grad_samples)


# ---------------------------------------------------------------- public API
def _ints(api: str, pad: Any) -> list[int]:
    if isinstance(pad, Tensor):
        pad = pad.tolist()
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"{api}: argument 'pad' must be a list, tuple or Tensor of ints, got {type(pad).__name__}")
    out = []
    for v in pad:
        v = v.item() if isinstance(v, Tensor) else v
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{api}: argument 'pad' must hold ints, got {v!r}")
        out.append(int(v))
    return out


def _resolve(api: str, ndim: int, pad: list[int], mode: str, data_format: str) -> tuple[int, ...]:
    """Paddle's `pad` list -> explicit (before, after) pairs for every dim of x."""
    n = len(pad)
    if n % 2:
        raise ValueError(f"{api}: argument 'pad' must have an even number of entries, got {pad}")
    pairs = [[0, 0] for _ in range(ndim)]
    if mode == "constant" and n == 2 * ndim:
        return tuple(pad)
    if 3 <= ndim <= 5 and n == 2 * (ndim - 2):
        dims = range(1, ndim - 1) if data_format in _CHANNEL_LAST else range(2, ndim)
    elif mode == "constant" and n < 2 * ndim:
        dims = range(ndim - n // 2, ndim)
    elif mode == "constant":
        raise ValueError(f"{api}: argument 'pad' has {n} entries; a {ndim}-D input takes at most {2 * ndim}")
    else:
        raise ValueError(f"{api}: mode '{mode}' pads the spatial dims of a 3-D, 4-D or 5-D input and takes "
                         f"2 * (x.ndim - 2) pad entries; got {n} entries for a {ndim}-D input")
    for j, d in enumerate(reversed(dims)):  # pairs are listed from the last padded dim
        pairs[d] = [pad[2 * j], pad[2 * j + 1]]
    return tuple(v for p in pairs for v in p)


def pad(x: Tensor, pad: Any, mode: str = "constant", value: float = 0.0, data_format: str = "NCHW",
        name: str | None = None) -> Tensor:
    """Pad x by `pad` (Paddle's convention, see the module doc) in mode constant/reflect/replicate/circular."""
    api = "pad"
    x = as_tensor(x, "x", api)
    if mode not in _NP_MODES:
        raise ValueError(f"{api}: argument 'mode' must be one of {list(_NP_MODES)}, got {mode!r}")
    if data_format not in _CHANNEL_FIRST + _CHANNEL_LAST:
        raise ValueError(f"{api}: argument 'data_format' must be one of {list(_CHANNEL_FIRST + _CHANNEL_LAST)}, "
                         f"got {data_format!r}")
    if isinstance(value, Tensor):
        value = value.item()
    pads = _resolve(api, x.ndim, _ints(api, pad), mode, data_format)
    return _PAD(x, pads=pads, mode=mode, value=float(value))
