"""Sampling ops of spatial transformers and patch models: affine_grid, grid_sample, unfold, fold.

`affine_grid` maps a fixed grid of normalised output coordinates through each batch's
affine matrix; it is linear in theta, so its gradient is the transposed product
(`affine_grid_grad`) and the two ops are each other's adjoint. `grid_sample` reads x at the
grid's points (normalised to [-1, 1], last grid axis in (x, y[, z]) order, so x indexes W).
Coordinates follow Paddle's kernels: unnormalised as (g + 1) / 2 * (size - 1) with
align_corners, else ((g + 1) * size - 1) / 2; 'border' clamps into [0, size - 1];
'reflection' folds them back over the edges (the corner pixels' centres with align_corners,
their outer edges without, then clamps); 'zeros' reads 0 outside. 'bilinear' mixes the
2**nd neighbouring pixels, 'nearest' rounds half to even. Its gradient is the
dedicated `grid_sample_grad` (a scatter-add onto x, and the weights' slopes times the
unnormalisation and padding factors for the grid; 0 for 'nearest'); when the backward pass is
itself recorded (create_graph=True, or a static program's backward) the same gradient is composed
from differentiable ops instead (`grid_sample_taps` for the tap geometry, `gather_points` and its
adjoint `scatter_points`), so it can be differentiated again.
`unfold` (im2col) is the strided window view of `conv.windows` laid out as [N, C*kh*kw, L];
`fold` (col2im) adds the columns back with `conv.col2im`; each is the other's gradient.
"""
from __future__ import annotations

import itertools
import math as _pymath
from typing import Any

import numpy as np

from ..tensor import Tensor, as_tensor
from . import creation, reduction, shape
from . import meta_utils as mu
from .conv import col2im, out_geometry, windows
from .grad_mode import state as _grad_state
from .indexing import scatter_add
from .registry import Sample, TensorSpec, defop, uniform_sampler

__all__ = ["affine_grid", "grid_sample", "unfold", "fold"]

_rng = np.random.default_rng(59)
_f64 = uniform_sampler(_rng)


# ---------------------------------------------------------------- affine_grid
def _base_grid(sizes: tuple, align_corners: bool, dtype) -> np.ndarray:
    """(prod(sizes), nd + 1) rows (x, y[, z], 1) of normalised output coordinates, x along the last axis."""
    axes = []
    for s in sizes:
        line = np.linspace(-1.0, 1.0, s, dtype=dtype)
        if not align_corners:
            line = line * dtype.type((s - 1) / s)
        axes.append(line)
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]
    return np.stack([*cols, np.ones_like(cols[0])], axis=1)


def _check_theta(api: str, theta: TensorSpec, nd: int, n: int) -> None:
    mu.require_float(api, theta, "theta")
    if len(theta.shape) != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(f"{api}: argument 'theta' must have shape [N, {nd}, {nd + 1}] for a {nd + 2}-D "
                         f"out_shape, got {mu.shape_str(theta.shape)}")
    if n >= 0 and theta.shape[0] >= 0 and theta.shape[0] != n:
        raise ValueError(f"{api}: argument 'theta' has batch size {theta.shape[0]} but 'out_shape' asks for {n}")


def _affine_grid_meta(theta: TensorSpec, *, batch: int, sizes: tuple, align_corners: bool) -> TensorSpec:
    _check_theta("affine_grid", theta, len(sizes), batch)
    n = theta.shape[0] if theta.shape[0] >= 0 else batch  # a static theta's batch may be unknown
    return TensorSpec((n, *sizes, len(sizes)), theta.dtype)


def _affine_grid_kernel(xp, theta, *, batch, sizes, align_corners):
    base = xp.asarray(_base_grid(sizes, align_corners, theta.dtype))
    grid = xp.matmul(base, xp.swapaxes(theta, 1, 2))  # (N, P, nd)
    return grid.reshape((theta.shape[0], *sizes, len(sizes)))


def _affine_grid_grad_meta(grad: TensorSpec, *, batch: int, sizes: tuple, align_corners: bool) -> TensorSpec:
    nd = len(sizes)
    mu.require_float("affine_grid_grad", grad, "grad")
    if len(grad.shape) != nd + 2 or grad.shape[-1] != nd:
        raise ValueError(f"affine_grid_grad: argument 'grad' must have shape [N, *{list(sizes)}, {nd}], "
                         f"got {mu.shape_str(grad.shape)}")
    return TensorSpec((grad.shape[0], nd, nd + 1), grad.dtype)


def _affine_grid_grad_kernel(xp, grad, *, batch, sizes, align_corners):
    base = xp.asarray(_base_grid(sizes, align_corners, grad.dtype))
    flat = grad.reshape((grad.shape[0], -1, len(sizes)))
    return xp.matmul(xp.swapaxes(flat, 1, 2), base)


def _g_affine_grid(ctx, g):
    return (_AFFINE_GRID_GRAD(g, **ctx.attrs),)


def _g_affine_grid_grad(ctx, gg):
    return (_AFFINE_GRID(gg, **ctx.attrs),)


_AFFINE_CASES = [((2, 2, 3), {"batch": 2, "sizes": (3, 4), "align_corners": True}),
                 ((1, 2, 3), {"batch": 1, "sizes": (2, 5), "align_corners": False}),
                 ((1, 3, 4), {"batch": 1, "sizes": (2, 3, 2), "align_corners": False})]
_AFFINE_GRID = defop("affine_grid", kernel=_affine_grid_kernel, meta=_affine_grid_meta, grad=_g_affine_grid,
                     attrs={"batch": -1, "sizes": (1, 1), "align_corners": True}, inputs=("theta",),
                     samples=lambda: [Sample((_f64(*s),), dict(a)) for s, a in _AFFINE_CASES])
_AFFINE_GRID_GRAD = defop(
    "affine_grid_grad", kernel=_affine_grid_grad_kernel, meta=_affine_grid_grad_meta, grad=_g_affine_grid_grad,
    attrs={"batch": -1, "sizes": (1, 1), "align_corners": True}, inputs=("grad",),
    samples=lambda: [Sample((_f64(s[0], *a["sizes"], len(a["sizes"])),), dict(a)) for s, a in _AFFINE_CASES])


# ---------------------------------------------------------------- grid_sample
def _reflect(xp, c, offset: float, double_range: int):
    """Mirror c + offset back into [0, double_range / 2] (Paddle's formula), less offset, and d(result)/dc.

    A point exactly on a mirror is not flipped, and the slope's sign at c + offset == 0 is +1: both
    decide the grid gradient at the edges, which Paddle's kernels define this way.
    """
    if double_range == 0:  # a single pixel along this axis: every point reads it
        return xp.zeros_like(c), xp.zeros_like(c)
    shifted = c + offset
    dist = xp.abs(shifted)
    extra = dist - xp.floor(dist / double_range) * double_range
    flip = extra > double_range - extra
    sign = xp.where(shifted < 0, -1.0, 1.0) * xp.where(flip, -1.0, 1.0)
    return xp.where(flip, double_range - extra, extra) - offset, sign.astype(c.dtype)


def _clip(xp, c, size: int):
    """c clamped into [0, size - 1] and its slope (1 inside, edges included, as in Paddle; else 0)."""
    slope = ((c >= 0) & (c <= size - 1)).astype(c.dtype)
    return xp.clip(c, 0, size - 1), slope


def _source(xp, grid, sizes: tuple, padding_mode: str, align_corners: bool) -> tuple[list, list]:
    """Per spatial axis (x's order: D, H, W): source pixel coordinates and d(coordinate)/d(grid)."""
    nd = len(sizes)
    coords, slopes = [], []
    for axis, size in enumerate(sizes):
        g = grid[..., nd - 1 - axis]
        if align_corners:
            c, scale = (g + 1) * ((size - 1) / 2), (size - 1) / 2
        else:
            c, scale = ((g + 1) * size - 1) / 2, size / 2
        slope = xp.full(c.shape, scale, dtype=c.dtype)
        if padding_mode == "border":
            c, s = _clip(xp, c, size)
            slope = slope * s
        elif padding_mode == "reflection":
            c, s = _reflect(xp, c, 0.0, 2 * (size - 1)) if align_corners else _reflect(xp, c, 0.5, 2 * size)
            c, s2 = _clip(xp, c, size)
            slope = slope * s * s2
        coords.append(c)
        slopes.append(slope)
    return coords, slopes


def _flat_index(xp, idx: list, sizes: tuple):
    """Flat index into x's spatial block and whether every coordinate lies inside it (zeros padding)."""
    valid = None
    flat = None
    for i, size in zip(idx, sizes):
        inside = (i >= 0) & (i < size)
        valid = inside if valid is None else valid & inside
        i = xp.clip(i, 0, size - 1)
        flat = i if flat is None else flat * size + i
    return flat, valid


def _cells(xp, coords: list) -> tuple[list, list]:
    """Per axis: the lower neighbour (int64, (N, P)) of each bilinear point and its fraction past it."""
    n = coords[0].shape[0]
    coords = [c.reshape(n, -1) for c in coords]
    lows = [xp.floor(c) for c in coords]
    return [lo.astype(np.int64) for lo in lows], [c - lo for c, lo in zip(coords, lows)]


def _taps(xp, coords: list, sizes: tuple, mode: str):
    """Yield (flat index (N, P), 1.0 where the tap lies inside x else 0.0, per-axis weight factors, corner bits).

    'nearest' has one tap and no factors (its weight is the inside mask alone).
    """
    if mode == "nearest":
        n = coords[0].shape[0]
        idx = [xp.rint(c.reshape(n, -1)).astype(np.int64) for c in coords]  # half to even, as Paddle rounds
        flat, valid = _flat_index(xp, idx, sizes)
        yield flat, valid.astype(coords[0].dtype), None, None
        return
    lows, fracs = _cells(xp, coords)
    for bits in itertools.product((0, 1), repeat=len(sizes)):
        flat, valid = _flat_index(xp, [lo + b for lo, b in zip(lows, bits)], sizes)
        yield flat, valid.astype(coords[0].dtype), [f if b else 1 - f for f, b in zip(fracs, bits)], bits


def _weight(valid, factors):
    return valid if factors is None else valid * _pymath.prod(factors)


def _gather(xp, x, flat):
    """x (N, C, *S) read at flat spatial indices (N, P) -> (N, C, P)."""
    n, c = x.shape[:2]
    xf = x.reshape(n, c, -1)
    return xf[xp.arange(n)[:, None, None], xp.arange(c)[None, :, None], flat[:, None, :]]


def _check_grid_sample(api: str, x: TensorSpec, grid: TensorSpec) -> None:
    mu.require_float(api, x)
    if len(x.shape) not in (4, 5):
        raise ValueError(f"{api}: argument 'x' must be a 4-D [N, C, H, W] or 5-D [N, C, D, H, W] tensor, "
                         f"got shape {mu.shape_str(x.shape)}")
    nd = len(x.shape) - 2
    if grid.dtype != x.dtype:
        raise TypeError(f"{api}: argument 'grid' has dtype {grid.dtype.name} but 'x' has {x.dtype.name}; "
                        "they must match")
    if len(grid.shape) != nd + 2 or grid.shape[-1] != nd:
        raise ValueError(f"{api}: argument 'grid' must have shape [N, {', '.join('DHW'[3 - nd:])}_out, {nd}] for a "
                         f"{nd + 2}-D 'x', got {mu.shape_str(grid.shape)}")
    if x.shape[0] >= 0 and grid.shape[0] >= 0 and x.shape[0] != grid.shape[0]:
        raise ValueError(f"{api}: arguments 'x' and 'grid' must have the same batch size, got {x.shape[0]} "
                         f"and {grid.shape[0]}")


def _grid_sample_meta(x: TensorSpec, grid: TensorSpec, *, mode: str, padding_mode: str,
                      align_corners: bool) -> TensorSpec:
    _check_grid_sample("grid_sample", x, grid)
    n = x.shape[0] if x.shape[0] >= 0 else grid.shape[0]  # either may be a static program's unknown batch
    return TensorSpec((n, x.shape[1], *grid.shape[1:-1]), x.dtype)


def _grid_sample_kernel(xp, x, grid, *, mode, padding_mode, align_corners):
    sizes = tuple(x.shape[2:])
    coords, _ = _source(xp, grid, sizes, padding_mode, align_corners)
    out = None
    for flat, valid, factors, _ in _taps(xp, coords, sizes, mode):
        part = _gather(xp, x, flat) * _weight(valid, factors)[:, None, :]
        out = part if out is None else out + part
    return out.reshape((*x.shape[:2], *grid.shape[1:-1]))


def _grid_sample_grad_meta(x: TensorSpec, grid: TensorSpec, grad: TensorSpec, *, mode: str, padding_mode: str,
                           align_corners: bool) -> tuple:
    out = _grid_sample_meta(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    if len(grad.shape) != len(out.shape) or any(a != b and a >= 0 and b >= 0 for a, b in zip(grad.shape, out.shape)):
        raise ValueError(f"grid_sample_grad: argument 'grad' must have shape {mu.shape_str(out.shape)}, "
                         f"got {mu.shape_str(grad.shape)}")
    return TensorSpec(x.shape, x.dtype), TensorSpec(grid.shape, grid.dtype)


def _grid_sample_grad_kernel(xp, x, grid, grad, *, mode, padding_mode, align_corners):
    n, c = x.shape[:2]
    sizes = tuple(x.shape[2:])
    nd = len(sizes)
    coords, slopes = _source(xp, grid, sizes, padding_mode, align_corners)
    g = grad.reshape(n, c, -1)
    gx = xp.zeros((n, c, _pymath.prod(sizes)), dtype=x.dtype)
    dcoords = [xp.zeros((n, g.shape[2]), dtype=x.dtype) for _ in range(nd)]  # d(loss)/d(coordinate)
    key_n, key_c = xp.arange(n)[:, None, None], xp.arange(c)[None, :, None]
    for flat, valid, factors, bits in _taps(xp, coords, sizes, mode):
        scatter_add(xp, gx, (key_n, key_c, flat[:, None, :]), g * _weight(valid, factors)[:, None, :])
        if factors is None:
            continue
        # this corner's weight along axis a has slope +-(product of the other axes' factors)
        gv = (g * _gather(xp, x, flat)).sum(axis=1) * valid
        for a in range(nd):
            d = gv * _pymath.prod(f for b, f in enumerate(factors) if b != a)
            dcoords[a] = dcoords[a] + d if bits[a] else dcoords[a] - d
    ggrid = xp.zeros(grid.shape, dtype=grid.dtype)
    if mode == "bilinear":
        for a in range(nd):
            ggrid[..., nd - 1 - a] = (dcoords[a] * slopes[a].reshape(n, -1)).reshape(grid.shape[:-1])
    return gx.reshape(x.shape), ggrid


def _grid_taps_meta(grid: TensorSpec, *, sizes: tuple, mode: str, padding_mode: str, align_corners: bool) -> tuple:
    nd = len(sizes)
    taps = 1 if mode == "nearest" else 2 ** nd
    points = tuple(grid.shape[:-1])
    return (TensorSpec((taps, *points), np.dtype("int64")), TensorSpec((taps, *points), grid.dtype),
            TensorSpec(tuple(grid.shape), grid.dtype), TensorSpec(tuple(grid.shape), grid.dtype))


def _grid_taps_kernel(xp, grid, *, sizes, mode, padding_mode, align_corners):
    coords, slopes = _source(xp, grid, sizes, padding_mode, align_corners)
    taps = list(_taps(xp, coords, sizes, mode))
    _, fracs = _cells(xp, coords)  # unused by 'nearest'
    points = grid.shape[:-1]

    def in_grid_order(per_axis):  # spatial axis a is grid component nd - 1 - a
        return xp.stack([v.reshape(points) for v in reversed(per_axis)], axis=-1)

    return (xp.stack([t[0].reshape(points) for t in taps]), xp.stack([t[1].reshape(points) for t in taps]),
            in_grid_order(fracs), in_grid_order(slopes))


def _g_grid_taps(ctx, _gidx, _gvalid, gfrac, _gslope):
    return (None if gfrac is None else gfrac * ctx.outputs[3],)


def _grid_taps_samples():
    return [Sample((s.inputs[1],), {"sizes": s.inputs[0].shape[2:], **s.attrs}) for s in _grid_sample_samples()]


# grid_sample's tap geometry for its composed gradient: flat indices and inside masks per tap,
# and per grid component the bilinear fraction (differentiable: its slope is the last output) and
# d(coordinate)/d(grid).
_GRID_TAPS = defop("grid_sample_taps", kernel=_grid_taps_kernel, meta=_grid_taps_meta, grad=_g_grid_taps,
                   inputs=("grid",), save_outputs=True, nondiff_outputs=(0, 1, 3), samples=_grid_taps_samples,
                   attrs={"sizes": (1, 1), "mode": "bilinear", "padding_mode": "zeros", "align_corners": True})


def _gather_points_meta(x: TensorSpec, index: TensorSpec) -> TensorSpec:
    return TensorSpec((x.shape[0], x.shape[1], *index.shape[1:]), x.dtype)


def _gather_points_kernel(xp, x, index):
    n, c = x.shape[:2]
    return _gather(xp, x, index.reshape(n, -1)).reshape((n, c, *index.shape[1:]))


def _scatter_points_meta(v: TensorSpec, index: TensorSpec, *, sizes: tuple) -> TensorSpec:
    return TensorSpec((v.shape[0], v.shape[1], *sizes), v.dtype)


def _scatter_points_kernel(xp, v, index, *, sizes):
    n, c = v.shape[:2]
    out = xp.zeros((n, c, _pymath.prod(sizes)), dtype=v.dtype)
    key = (xp.arange(n)[:, None, None], xp.arange(c)[None, :, None], index.reshape(n, 1, -1))
    scatter_add(xp, out, key, v.reshape(n, c, -1))
    return out.reshape((n, c, *sizes))


def _g_gather_points(ctx, g):
    x, index = ctx.inputs
    return _SCATTER_POINTS(g, index, sizes=tuple(x.shape[2:])), None


def _g_scatter_points(ctx, g):
    return _GATHER_POINTS(g, ctx.inputs[1]), None


def _points_index(n: int, sizes: tuple, points: tuple) -> np.ndarray:
    return _rng.integers(0, _pymath.prod(sizes), size=(n, *points))


# x (N, C, *S) read at flat spatial indices (N, *P), and the adjoint that adds (N, C, *P) back.
_GATHER_POINTS = defop("gather_points", kernel=_gather_points_kernel, meta=_gather_points_meta,
                       grad=_g_gather_points, inputs=("x", "index"),
                       samples=lambda: [Sample((_f64(2, 3, 3, 4), _points_index(2, (3, 4), (2, 5))), grad_inputs=(0,))])
_SCATTER_POINTS = defop("scatter_points", kernel=_scatter_points_kernel, meta=_scatter_points_meta,
                        grad=_g_scatter_points, inputs=("v", "index"), attrs={"sizes": (1, 1)},
                        samples=lambda: [Sample((_f64(2, 3, 2, 5), _points_index(2, (3, 4), (2, 5))),
                                                {"sizes": (3, 4)}, grad_inputs=(0,))])


def _composed_grid_sample_vjp(x: Tensor, grid: Tensor, g: Tensor, mode: str, padding_mode: str,
                              align_corners: bool) -> tuple[Tensor, Tensor]:
    """grid_sample's (x, grid) gradients from differentiable ops, so they can be differentiated again.

    No reshapes: every tensor keeps the grid's point layout, so static programs with unknown sizes build.
    """
    sizes = tuple(x.shape[2:])
    nd = len(sizes)
    idx, valid, fracs, slopes = _GRID_TAPS(grid, sizes=sizes, mode=mode, padding_mode=padding_mode,
                                           align_corners=align_corners)
    frac = [fracs[..., nd - 1 - a] for a in range(nd)]  # per spatial axis
    gx, dcoords = None, [None] * nd
    corners = [()] if mode == "nearest" else list(itertools.product((0, 1), repeat=nd))
    for t, bits in enumerate(corners):
        factors = [f if b else 1 - f for f, b in zip(frac, bits)]
        w = valid[t] * _pymath.prod(factors) if factors else valid[t]
        part = _SCATTER_POINTS(g * w.unsqueeze(1), idx[t], sizes=sizes)
        gx = part if gx is None else gx + part
        if not factors:
            continue
        gv = reduction.sum(g * _GATHER_POINTS(x, idx[t]), axis=1) * valid[t]
        for a in range(nd):
            d = gv * _pymath.prod(f for b, f in enumerate(factors) if b != a)
            d = d if bits[a] else -d
            dcoords[a] = d if dcoords[a] is None else dcoords[a] + d
    if not corners[0]:
        return gx, creation.zeros_like(grid)
    return gx, shape.stack(dcoords[::-1], axis=-1) * slopes


def _g_grid_sample(ctx, g):
    x, grid = ctx.inputs
    if _grad_state.enabled:  # the backward pass is recorded (a static program, create_graph): compose ops
        return _composed_grid_sample_vjp(x, grid, g, **ctx.attrs)
    return _GRID_SAMPLE_GRAD(x, grid, g, **ctx.attrs)


_GS_MODES = ("bilinear", "nearest")
_GS_PADDINGS = ("zeros", "border", "reflection")


def _grid_points(*shape) -> np.ndarray:
    """Grid samples reaching well past [-1, 1], so clamping and several reflections are exercised."""
    return _rng.uniform(-2.7, 2.7, size=shape)


def _grid_sample_samples():
    out = []
    for mode, pad, ac in itertools.product(_GS_MODES, _GS_PADDINGS, (True, False)):
        attrs = {"mode": mode, "padding_mode": pad, "align_corners": ac}
        out.append(Sample((_f64(2, 2, 3, 4), _grid_points(2, 3, 2, 2)), attrs,
                          grad_inputs=(0, 1) if mode == "bilinear" else (0,)))
    out.append(Sample((_f64(1, 2, 2, 3, 3), _grid_points(1, 2, 2, 1, 3)),
                      {"mode": "bilinear", "padding_mode": "reflection", "align_corners": False}))
    return out


def _grid_sample_grad_samples():
    out = []
    for s in _grid_sample_samples():
        x, grid = s.inputs
        gshape = (x.shape[0], x.shape[1], *grid.shape[1:-1])
        out.append(Sample((x, grid, _f64(*gshape)), s.attrs))
    return out


_GS_ATTRS = {"mode": "bilinear", "padding_mode": "zeros", "align_corners": True}
_GRID_SAMPLE = defop("grid_sample", kernel=_grid_sample_kernel, meta=_grid_sample_meta, grad=_g_grid_sample,
                     attrs=dict(_GS_ATTRS), inputs=("x", "grid"), samples=_grid_sample_samples)
# No gradient of its own: a recorded backward pass composes differentiable ops instead.
_GRID_SAMPLE_GRAD = defop("grid_sample_grad", kernel=_grid_sample_grad_kernel, meta=_grid_sample_grad_meta,
                          attrs=dict(_GS_ATTRS), inputs=("x", "grid", "grad"), samples=_grid_sample_grad_samples)


# ---------------------------------------------------------------- unfold / fold
def _unfold_geometry(api: str, size: tuple, kernel: tuple, stride: tuple, pads: tuple, dilation: tuple) -> tuple:
    _, _, out = out_geometry(api, size, kernel, stride, pads, dilation)
    return out


def _unfold_meta(x: TensorSpec, *, kernel: tuple, stride: tuple, pads: tuple, dilation: tuple) -> TensorSpec:
    mu.require_float("unfold", x)
    if len(x.shape) != 4:
        raise AssertionError(f"unfold: argument 'x' must be a 4-D tensor [N, C, H, W], got shape "
                             f"{mu.shape_str(x.shape)}")
    out = _unfold_geometry("unfold", tuple(x.shape[2:]), kernel, stride, pads, dilation)
    c = x.shape[1] * kernel[0] * kernel[1] if x.shape[1] >= 0 else -1
    blocks = -1 if -1 in out else out[0] * out[1]
    return TensorSpec((x.shape[0], c, blocks), x.dtype)


def _unfold_kernel(xp, x, *, kernel, stride, pads, dilation):
    n, c = x.shape[:2]
    out = _unfold_geometry("unfold", tuple(x.shape[2:]), kernel, stride, pads, dilation)
    view = windows(xp, x, kernel, stride, dilation, pads, out)  # (N, C, kh, kw, oh, ow)
    return xp.ascontiguousarray(view).reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])


def _fold_meta(x: TensorSpec, *, output_size: tuple, kernel: tuple, stride: tuple, pads: tuple,
               dilation: tuple) -> TensorSpec:
    mu.require_float("fold", x)
    if len(x.shape) != 3:
        raise AssertionError(f"fold: argument 'x' must be a 3-D tensor [N, C * kh * kw, L], got shape "
                             f"{mu.shape_str(x.shape)}")
    taps = kernel[0] * kernel[1]
    if x.shape[1] >= 0 and x.shape[1] % taps:
        raise ValueError(f"fold: dimension 1 of argument 'x' ({x.shape[1]}) must be divisible by the product "
                         f"of kernel_sizes {list(kernel)} ({taps})")
    out = _unfold_geometry("fold", output_size, kernel, stride, pads, dilation)
    if x.shape[2] >= 0 and x.shape[2] != out[0] * out[1]:
        raise ValueError(f"fold: dimension 2 of argument 'x' ({x.shape[2]}) must be the number of sliding "
                         f"blocks, {out[0]} * {out[1]} = {out[0] * out[1]}, for output_sizes {list(output_size)}, "
                         f"kernel_sizes {list(kernel)}, strides {list(stride)} and dilations {list(dilation)}")
    c = x.shape[1] // taps if x.shape[1] >= 0 else -1
    return TensorSpec((x.shape[0], c, *output_size), x.dtype)


def _fold_kernel(xp, x, *, output_size, kernel, stride, pads, dilation):
    n = x.shape[0]
    out = _unfold_geometry("fold", output_size, kernel, stride, pads, dilation)
    cols = x.reshape(n, -1, *kernel, *out)
    return col2im(xp, cols, output_size, kernel, stride, dilation, pads)


def _window_attrs(attrs: dict) -> dict:
    return {k: attrs[k] for k in ("kernel", "stride", "pads", "dilation")}


def _g_unfold(ctx, g):
    (x,) = ctx.inputs
    if -1 in x.shape[2:]:  # a static program's input of sizes known only at run time: read them from x then
        return (_FOLD_LIKE(g, x, **_window_attrs(ctx.attrs)),)
    return (_FOLD(g, output_size=tuple(x.shape[2:]), **_window_attrs(ctx.attrs)),)


def _g_fold(ctx, g):
    return (_UNFOLD(g, **_window_attrs(ctx.attrs)),)


_WINDOW_CASES = [  # (H, W, attrs); pads are (top, bottom, left, right)
    (4, 5, {"kernel": (2, 2), "stride": (1, 1), "pads": (0, 0, 0, 0), "dilation": (1, 1)}),
    (5, 6, {"kernel": (2, 3), "stride": (2, 1), "pads": (1, 2, 0, 1), "dilation": (1, 2)}),
    (3, 4, {"kernel": (3, 2), "stride": (2, 3), "pads": (1, 1, 2, 2), "dilation": (1, 1)}),
]


def _fold_samples():
    out = []
    for h, w, a in _WINDOW_CASES:
        blocks = _unfold_meta(TensorSpec((2, 3, h, w), np.dtype("float64")), **a).shape
        out.append(Sample((_f64(*blocks),), {"output_size": (h, w), **a}))
    return out


_WINDOW_ATTRS = {"kernel": (1, 1), "stride": (1, 1), "pads": (0, 0, 0, 0), "dilation": (1, 1)}
_UNFOLD = defop("unfold", kernel=_unfold_kernel, meta=_unfold_meta, grad=_g_unfold, attrs=dict(_WINDOW_ATTRS),
                samples=lambda: [Sample((_f64(2, 3, h, w),), dict(a)) for h, w, a in _WINDOW_CASES])
_FOLD = defop("fold", kernel=_fold_kernel, meta=_fold_meta, grad=_g_fold,
              attrs={"output_size": (1, 1), **_WINDOW_ATTRS}, samples=_fold_samples)


# fold into the sizes of `like` (the unfolded input; its values are not read)
def _fold_like_meta(x: TensorSpec, like: TensorSpec, *, kernel: tuple, stride: tuple, pads: tuple,
                    dilation: tuple) -> TensorSpec:
    return _fold_meta(x, output_size=tuple(like.shape[2:]), kernel=kernel, stride=stride, pads=pads,
                      dilation=dilation)


def _fold_like_kernel(xp, x, like, *, kernel, stride, pads, dilation):
    return _fold_kernel(xp, x, output_size=tuple(like.shape[2:]), kernel=kernel, stride=stride, pads=pads,
                        dilation=dilation)


_FOLD_LIKE = defop("fold_like", kernel=_fold_like_kernel, meta=_fold_like_meta,
                   grad=lambda ctx, g: (*_g_fold(ctx, g), None), attrs=dict(_WINDOW_ATTRS), inputs=("x", "like"),
                   samples=lambda: [Sample((s.inputs[0], _f64(2, 3, *s.attrs["output_size"])),
                                           {k: v for k, v in s.attrs.items() if k != "output_size"}, grad_inputs=(0,))
                                    for s in _fold_samples()])


# ---------------------------------------------------------------- public API
def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _ints(api: str, arg: str, value: Any, lengths: tuple[int, ...], error: type, minimum: int) -> tuple[int, ...]:
    """An int or a list/tuple of one of `lengths` ints, repeated up to lengths[0] entries; `error` (the type
    Paddle raises for this argument) when it is neither."""
    if _is_int(value):
        value = [value]
    elif not isinstance(value, (list, tuple)) or len(value) not in lengths:
        raise error(f"{api}: argument '{arg}' must be an int or a list/tuple of "
                    f"{' or '.join(map(str, lengths))} ints, got {value!r}")
    if not all(_is_int(v) for v in value):
        raise TypeError(f"{api}: argument '{arg}' must hold ints, got {list(value)}")
    if any(v < minimum for v in value):
        raise ValueError(f"{api}: argument '{arg}' must hold ints >= {minimum}, got {list(value)}")
    return tuple(int(v) for v in value) * (lengths[0] // len(value))


def _windows(api: str, kernel_sizes: Any, strides: Any, paddings: Any, dilations: Any, error: type,
             pad_error: type) -> dict:
    """The window attributes of unfold/fold; Paddle's [top, left, bottom, right] paddings become
    (top, bottom, left, right), the order conv's window helpers use."""
    top, left, bottom, right = _ints(api, "paddings", paddings, (4, 2), pad_error, 0)
    return {"kernel": _ints(api, "kernel_sizes", kernel_sizes, (2,), error, 1),
            "stride": _ints(api, "strides", strides, (2,), error, 1),
            "pads": (top, bottom, left, right),
            "dilation": _ints(api, "dilations", dilations, (2,), error, 1)}


def unfold(x: Tensor, kernel_sizes: Any, strides: Any = 1, paddings: Any = 0, dilations: Any = 1,
           name: str | None = None) -> Tensor:
    """im2col: the sliding kh x kw blocks of x [N, C, H, W] as columns, [N, C*kh*kw, L]."""
    api = "unfold"
    x = as_tensor(x, "x", api)
    return _UNFOLD(x, **_windows(api, kernel_sizes, strides, paddings, dilations, TypeError, ValueError))


def fold(x: Tensor, output_sizes: Any, kernel_sizes: Any, strides: Any = 1, paddings: Any = 0, dilations: Any = 1,
         name: str | None = None) -> Tensor:
    """col2im: add the columns of x [N, C*kh*kw, L] back into [N, C, *output_sizes] (unfold's adjoint)."""
    api = "fold"
    x = as_tensor(x, "x", api)
    size = _ints(api, "output_sizes", output_sizes, (2,), AssertionError, 1)
    return _FOLD(x, output_size=size, **_windows(api, kernel_sizes, strides, paddings, dilations, AssertionError,
                                                 ValueError))


def _flag(api: str, arg: str, value: Any) -> bool:
    """A bool (None reads as False, as Paddle's argument parser does); an int or anything else is a TypeError."""
    if value is None:
        return False
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{api}: argument '{arg}' must be a bool, got {type(value).__name__}")
    return bool(value)


def affine_grid(theta: Tensor, out_shape: Any, align_corners: bool = True, name: str | None = None) -> Tensor:
    """The sampling grid [N, H, W, 2] (or [N, D, H, W, 3]) of the affine maps theta [N, 2, 3] (or [N, 3, 4])
    over an output of shape out_shape [N, C, H, W] (or [N, C, D, H, W]); feed it to grid_sample."""
    api = "affine_grid"
    if not isinstance(theta, Tensor):
        raise TypeError(f"{api}: argument 'theta' must be a Tensor, got {type(theta).__name__}")
    if isinstance(out_shape, Tensor):
        out_shape = out_shape.tolist()
    if not isinstance(out_shape, (list, tuple)) or len(out_shape) not in (4, 5):
        raise ValueError(f"{api}: argument 'out_shape' must be a list of 4 ints [N, C, H, W] or 5 ints "
                         f"[N, C, D, H, W], got {out_shape!r}")
    shape = _ints(api, "out_shape", list(out_shape), (len(out_shape),), ValueError, 1)
    return _AFFINE_GRID(theta, batch=shape[0], sizes=shape[2:], align_corners=_flag(api, "align_corners",
                                                                                    align_corners))


def grid_sample(x: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = True, name: str | None = None) -> Tensor:
    """Sample x [N, C, H, W] (or [N, C, D, H, W]) at grid [N, H_out, W_out, 2] (or [..., 3]) of normalised
    (x, y[, z]) coordinates in [-1, 1]; out-of-range points follow padding_mode."""
    api = "grid_sample"
    x = as_tensor(x, "x", api)
    grid = as_tensor(grid, "grid", api)
    if mode not in _GS_MODES:
        raise ValueError(f"{api}: argument 'mode' must be one of {list(_GS_MODES)}, got {mode!r}")
    if padding_mode not in _GS_PADDINGS:
        raise ValueError(f"{api}: argument 'padding_mode' must be one of {list(_GS_PADDINGS)}, got {padding_mode!r}")
    return _GRID_SAMPLE(x, grid, mode=mode, padding_mode=padding_mode,
                        align_corners=_flag(api, "align_corners", align_corners))
