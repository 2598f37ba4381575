"""Deformable convolution (v1, and v2 with a modulation mask): `deform_conv2d` and `DeformConv2D`.

Each kernel tap of each output position reads x at its regular position plus a learned offset,
by bilinear interpolation with zero padding, and a point at or beyond one pixel outside the image
reads 0 (Paddle's kernel). The reads are composed of registry ops: the sampling coordinates, their
integer corners (`floor`, not differentiated) and fractions, a `gather_points` per corner, the
mask, then the columns times the weight in one grouped matmul (im2col). So autograd gives the
gradients wrt x, offset, mask, weight and bias (the coordinate gradient is the difference of the
corners, Paddle's `DmcnGetCoordinateWeight`), and the JIT captures it as ordinary ops.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import nn
from ...nn.initializer import Normal
from ...ops import math, shape
from ...ops.linalg import matmul
from ...ops.registry import get_op
from ...tensor import Tensor, as_tensor, to_tensor

__all__ = ["deform_conv2d", "DeformConv2D"]

_GATHER_POINTS = get_op("gather_points")


def _pair(api: str, arg: str, v: Any, minimum: int) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (v, v)
    if not (isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(e, (int, np.integer)) for e in v)):
        raise TypeError(f"{api}: argument '{arg}' must be an int or a list/tuple of 2 ints, got {v!r}")
    if min(v) < minimum:
        raise ValueError(f"{api}: argument '{arg}' must hold ints >= {minimum}, got {list(v)}")
    return int(v[0]), int(v[1])


def _check(api: str, x: Tensor, offset: Tensor, weight: Tensor, mask: Tensor | None, out_hw: tuple,
           deformable_groups: int, groups: int) -> None:
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"{api}: arguments 'x' and 'weight' must be 4-D, got shapes {list(x.shape)} and "
                         f"{list(weight.shape)}")
    n, c = x.shape[:2]
    taps = weight.shape[2] * weight.shape[3]
    if c % deformable_groups or c != weight.shape[1] * groups or weight.shape[0] % groups:
        raise ValueError(f"{api}: x has {c} channels; they must be weight.shape[1] ({weight.shape[1]}) * groups "
                         f"({groups}) and divisible by deformable_groups ({deformable_groups}), and weight.shape[0] "
                         f"({weight.shape[0]}) divisible by groups")
    if min(out_hw) < 1:
        raise ValueError(f"{api}: the output would be empty ({list(out_hw)}) for x {list(x.shape)} and kernel "
                         f"{list(weight.shape[2:])}")
    want = [n, 2 * deformable_groups * taps, *out_hw]
    if list(offset.shape) != want:
        raise ValueError(f"{api}: argument 'offset' must have shape {want} (2 * deformable_groups * kh * kw "
                         f"channels), got {list(offset.shape)}")
    if mask is not None and list(mask.shape) != [n, deformable_groups * taps, *out_hw]:
        raise ValueError(f"{api}: argument 'mask' must have shape {[n, deformable_groups * taps, *out_hw]}, got "
                         f"{list(mask.shape)}")


def _sample(x: Tensor, ys: Tensor, xs: Tensor) -> Tensor:
    """x [B, C, H, W] read at the points (ys, xs) [B, *P] bilinearly -> [B, C, *P]; 0 outside (-1, H) x (-1, W)."""
    h, w = x.shape[2:]
    inside = ((ys > -1) & (ys < h) & (xs > -1) & (xs < w)).astype(x.dtype)
    y0, x0 = math.floor(ys.detach()), math.floor(xs.detach())
    fy, fx = ys - y0, xs - x0
    out = None
    for dy, wy in ((0.0, 1 - fy), (1.0, fy)):
        for dx, wx in ((0.0, 1 - fx), (1.0, fx)):
            yi, xi = y0 + dy, x0 + dx
            valid = ((yi >= 0) & (yi <= h - 1) & (xi >= 0) & (xi <= w - 1)).astype(x.dtype) * inside
            index = (math.clip(yi, 0, h - 1) * w + math.clip(xi, 0, w - 1)).astype("int64")
            part = _GATHER_POINTS(x, index) * (wy * wx * valid).unsqueeze(1)
            out = part if out is None else out + part
    return out


def deform_conv2d(x: Tensor, offset: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, deformable_groups: int = 1, groups: int = 1,
                  mask: Tensor | None = None, name: str | None = None) -> Tensor:
    """Deformable 2-D convolution of x [N, C, H, W] with weight [C_out, C / groups, kh, kw]: tap k of output
    position (i, j) reads x at (i * stride - padding + k's dilated position + offset), offset
    [N, 2 * deformable_groups * kh * kw, H_out, W_out] holding (dy, dx) per tap; mask (v2) scales each read."""
    api = "deform_conv2d"
    x = as_tensor(x, "x", api)
    offset = as_tensor(offset, "offset", api)
    weight = as_tensor(weight, "weight", api)
    mask = None if mask is None else as_tensor(mask, "mask", api)
    (sh, sw), (ph, pw), (dh, dw) = (_pair(api, a, v, m) for a, v, m in
                                    (("stride", stride, 1), ("padding", padding, 0), ("dilation", dilation, 1)))
    n, c, h, w = x.shape
    cout, _, kh, kw = weight.shape
    out_hw = ((h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1)
    _check(api, x, offset, weight, mask, out_hw, deformable_groups, groups)
    ho, wo = out_hw
    dg, taps = deformable_groups, kh * kw
    base_y = (np.arange(ho) * sh - ph)[None, :, None] + np.repeat(np.arange(kh) * dh, kw)[:, None, None]
    base_x = (np.arange(wo) * sw - pw)[None, None, :] + np.tile(np.arange(kw) * dw, kh)[:, None, None]
    off = shape.reshape(offset, [n * dg, taps, 2, ho, wo])
    ys = off[:, :, 0] + to_tensor(base_y.astype(np.float64)).astype(x.dtype)
    xs = off[:, :, 1] + to_tensor(base_x.astype(np.float64)).astype(x.dtype)
    cols = _sample(shape.reshape(x, [n * dg, c // dg, h, w]), ys, xs)  # [N*dg, C/dg, taps, Ho, Wo]
    if mask is not None:
        cols = cols * shape.reshape(mask, [n * dg, 1, taps, ho, wo])
    cols = shape.reshape(cols, [n, groups, c // groups * taps, ho * wo])
    wmat = shape.reshape(weight, [1, groups, cout // groups, c // groups * taps])
    out = shape.reshape(matmul(wmat, cols), [n, cout, ho, wo])
    return out if bias is None else out + shape.reshape(bias, [1, cout, 1, 1])


class DeformConv2D(nn.Layer):
    """`deform_conv2d` with its weight [out, in / groups, kh, kw] and bias [out] as parameters; forward takes
    (x, offset, mask=None)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, deformable_groups: int = 1, groups: int = 1, weight_attr: Any = None,
                 bias_attr: Any = None):
        super().__init__()
        api = "DeformConv2D"
        kh, kw = _pair(api, "kernel_size", kernel_size, 1)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{api}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._deformable_groups, self._groups = deformable_groups, groups
        std = (2.0 / (kh * kw * in_channels)) ** 0.5
        self.weight = self.create_parameter(shape=[out_channels, in_channels // groups, kh, kw], attr=weight_attr,
                                            default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter(attr=bias_attr, shape=[out_channels], is_bias=True)

    def forward(self, x: Tensor, offset: Tensor, mask: Tensor | None = None) -> Tensor:
        return deform_conv2d(x, offset, self.weight, self.bias, self._stride, self._padding, self._dilation,
                             self._deformable_groups, self._groups, mask)
