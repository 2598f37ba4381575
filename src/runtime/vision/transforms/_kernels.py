"""NumPy image kernels with Pillow's numerics, for HWC (or HW) arrays.

Paddle transforms NumPy images with OpenCV and PIL images with Pillow. Neither is a dependency
here, so NumPy images are computed the way Pillow computes the same uint8 image: separable
resampling with Pillow's filters and 22-bit fixed-point weights, Pillow's RGB->L weights,
its blend (truncating) and its HSV conversion. The PIL branch of `functional` converts a PIL
image to an array, calls these kernels and converts back, so both input kinds agree.
Non-uint8 arrays take the same formulas in float64 without the fixed-point rounding.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

_PRECISION_BITS = 32 - 8 - 2  # Pillow's fixed-point weight precision for 8-bit images


def _bilinear(x: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(x), 0.0)


def _bicubic(x: np.ndarray) -> np.ndarray:
    a = -0.5
    x = np.abs(x)
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = (((x - 5.0) * x + 8.0) * x - 4.0) * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _box(x: np.ndarray) -> np.ndarray:
    return ((x > -0.5) & (x <= 0.5)).astype(np.float64)


def _hamming(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    px = x * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.sin(px) / px * (float(np.float32(0.54)) + float(np.float32(0.46)) * np.cos(px))
    return np.where(x == 0.0, 1.0, np.where(x >= 1.0, 0.0, v))


def _sinc(x: np.ndarray) -> np.ndarray:
    return np.sinc(x)  # sin(pi x) / (pi x), 1 at 0


def _lanczos(x: np.ndarray) -> np.ndarray:
    return np.where((x > -3.0) & (x < 3.0), _sinc(x) * _sinc(x / 3.0), 0.0)


# name -> (filter, support), Pillow's filters
FILTERS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float]] = {
    "bilinear": (_bilinear, 1.0),
    "bicubic": (_bicubic, 2.0),
    "box": (_box, 0.5),
    "hamming": (_hamming, 1.0),
    "lanczos": (_lanczos, 3.0),
}
INTERPOLATIONS = ("nearest", *FILTERS)


def _weights(in_size: int, out_size: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Per output pixel: the first input index and a row of normalised weights (zero-padded)."""
    fn, support = FILTERS[name]
    scale = in_size / out_size
    filterscale = max(scale, 1.0)  # widen the filter when reducing (antialiasing)
    support = support * filterscale
    ksize = int(math.ceil(support)) * 2 + 1
    centers = (np.arange(out_size) + 0.5) * scale
    xmin = np.maximum((centers - support + 0.5).astype(np.int64), 0)
    xmax = np.minimum((centers + support + 0.5).astype(np.int64), in_size)
    taps = np.arange(ksize)
    # multiply by the reciprocal, as Pillow does: dividing changes the weights' last bits
    w = fn((taps[None, :] + xmin[:, None] - centers[:, None] + 0.5) * (1.0 / filterscale))
    w = np.where(taps[None, :] < (xmax - xmin)[:, None], w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    w = np.divide(w, total, out=np.zeros_like(w), where=total != 0.0)
    return xmin, w


def _resample_axis(img: np.ndarray, out_size: int, axis: int, name: str, fixed_point: bool) -> np.ndarray:
    """Resample `img` along `axis` (0 rows, 1 columns) to `out_size`."""
    in_size = img.shape[axis]
    xmin, w = _weights(in_size, out_size, name)
    idx = np.minimum(xmin[:, None] + np.arange(w.shape[1])[None, :], in_size - 1)
    moved = np.moveaxis(img, axis, 0)
    taps = moved[idx]  # (out, ksize, ...)
    extra = (1,) * (moved.ndim - 1)
    if fixed_point:
        k = np.where(w < 0, -0.5, 0.5) + w * (1 << _PRECISION_BITS)
        k = np.trunc(k).astype(np.int64).reshape(w.shape + extra)
        acc = (taps.astype(np.int64) * k).sum(axis=1) + (1 << (_PRECISION_BITS - 1))
        out = np.clip(acc >> _PRECISION_BITS, 0, 255).astype(np.uint8)
    else:
        out = (taps.astype(np.float64) * w.reshape(w.shape + extra)).sum(axis=1)
    return np.moveaxis(out, 0, axis)


def _nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """Pillow's nearest scaling: source of pixel x is floor((x + 0.5) * in / out), accumulated
    step by step as Pillow does so that ties land on the same side."""
    step = in_size / out_size
    coords = np.cumsum(np.concatenate([[step * 0.5], np.full(out_size - 1, step)]))
    return np.clip(np.floor(coords).astype(np.int64), 0, in_size - 1)


def resize(img: np.ndarray, oh: int, ow: int, interpolation: str) -> np.ndarray:
    """Resize an HW or HWC array to (oh, ow); uint8 follows Pillow's fixed-point arithmetic."""
    h, w = img.shape[:2]
    if (h, w) == (oh, ow):
        return img.copy()
    if interpolation == "nearest":
        return img[_nearest_indices(h, oh)][:, _nearest_indices(w, ow)]
    fixed_point = img.dtype == np.uint8
    out = img
    if ow != w:
        out = _resample_axis(out, ow, 1, interpolation, fixed_point)
    if oh != h:
        out = _resample_axis(out, oh, 0, interpolation, fixed_point)
    return _cast_like(out, img.dtype)


def _cast_like(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if arr.dtype == dtype:
        return arr
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(arr), info.min, info.max).astype(dtype)
    return arr.astype(dtype)


def sample_nearest(img: np.ndarray, xin: np.ndarray, yin: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """Gather the pixels of an HWC array at integer coordinates (xin, yin); those outside take `fill`."""
    h, w = img.shape[:2]
    inside = (xin >= 0) & (xin < w) & (yin >= 0) & (yin < h)
    out = img[np.where(inside, yin, 0).astype(np.int64), np.where(inside, xin, 0).astype(np.int64)]
    out[~inside] = fill
    return out


def affine_nearest(img: np.ndarray, matrix: list[float], oh: int, ow: int, fill: np.ndarray) -> np.ndarray:
    """Pillow's nearest affine transform of an HWC array: `matrix` maps an output pixel centre
    to an input coordinate. Pillow steps through the output in 16.16 fixed point, rounding the
    coefficients once, so the same integer arithmetic picks the same pixels at exact ties."""
    a, b, c, d, e, f = matrix

    def fix(v: float) -> int:
        return math.floor(v * 65536.0 + 0.5)

    ys = np.arange(oh, dtype=np.int64)[:, None]
    xs = np.arange(ow, dtype=np.int64)[None, :]
    xin = (fix(c + a * 0.5 + b * 0.5) + ys * fix(b) + xs * fix(a)) >> 16
    yin = (fix(f + d * 0.5 + e * 0.5) + ys * fix(e) + xs * fix(d)) >> 16
    return sample_nearest(img, xin, yin, fill)


def rgb_to_gray(img: np.ndarray) -> np.ndarray:
    """Luma of an HWC RGB array as HW: Pillow's 'L' conversion (16-bit fixed point, rounded)
    for uint8, else 0.299 R + 0.587 G + 0.114 B."""
    if img.dtype == np.uint8:
        rgb = img[..., :3].astype(np.int64)
        return ((rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16).astype(np.uint8)
    return _cast_like(img[..., 0] * 0.299 + img[..., 1] * 0.587 + img[..., 2] * 0.114, img.dtype)


def blend(degenerate: np.ndarray, img: np.ndarray, factor: float) -> np.ndarray:
    """degenerate + factor * (img - degenerate): Pillow's blend (float32, truncated, clipped)
    for uint8; unclipped for floats."""
    if img.dtype == np.uint8:
        mixed = degenerate.astype(np.float32) + np.float32(factor) * (
            img.astype(np.int32) - degenerate.astype(np.int32)).astype(np.float32)
        return np.clip(np.trunc(mixed), 0, 255).astype(np.uint8)
    mixed = degenerate + factor * (img - degenerate)
    return _cast_like(mixed, img.dtype)


def rgb_to_hsv_u8(img: np.ndarray) -> np.ndarray:
    """Pillow's RGB -> HSV for uint8 (each channel scaled to 0..255, truncated)."""
    rgb = img[..., :3].astype(np.float64)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    maxc, minc = rgb.max(axis=-1), rgb.min(axis=-1)
    cr = maxc - minc
    flat = cr == 0
    safe_cr = np.where(flat, 1.0, cr)
    rc, gc, bc = (maxc - r) / safe_cr, (maxc - g) / safe_cr, (maxc - b) / safe_cr
    hue = np.where(r == maxc, bc - gc, np.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    hue = np.fmod(hue / 6.0 + 1.0, 1.0)
    sat = cr / np.where(maxc == 0, 1.0, maxc)
    hh = np.where(flat, 0, np.clip((hue * 255.0).astype(np.int64), 0, 255))
    ss = np.where(flat, 0, np.clip((sat * 255.0).astype(np.int64), 0, 255))
    return np.stack([hh, ss, maxc.astype(np.int64)], axis=-1).astype(np.uint8)


def hsv_to_rgb_u8(hsv: np.ndarray) -> np.ndarray:
    """Pillow's HSV -> RGB for uint8."""
    h, s, v = (hsv[..., k].astype(np.float64) for k in range(3))
    i = np.floor(h * 6.0 / 255.0)
    f = h * 6.0 / 255.0 - i
    fs = s / 255.0
    p = np.clip(np.floor(v * (1.0 - fs) + 0.5), 0, 255)  # C round(): halves away from zero
    q = np.clip(np.floor(v * (1.0 - fs * f) + 0.5), 0, 255)
    t = np.clip(np.floor(v * (1.0 - fs * (1.0 - f)) + 0.5), 0, 255)
    sector = i.astype(np.int64) % 6
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = np.zeros(hsv.shape[:-1] + (3,), np.float64)
    for k, rgb in enumerate(choices):
        out = np.where((sector == k)[..., None], np.stack(rgb, axis=-1), out)
    out = np.where((s == 0)[..., None], v[..., None], out)
    return out.astype(np.uint8)
