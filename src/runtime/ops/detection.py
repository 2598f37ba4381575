"""Detection ops of `paddle.vision.ops`: nms, matrix_nms, roi_align, psroi_pool, roi_pool (and their gradients),
prior_box, distribute_fpn_proposals, generate_proposals.

Every op here follows Paddle's CPU kernels number for number. Their geometry depends on box
values, which these kernels read on the host (as Paddle's GPU kernels copy `boxes_num` back):
- `nms` is value-shaped (`dynamic_shape`): the IoU matrix is one vectorised product, then a
  greedy pass over the boxes in score order keeps a box unless a kept box overlaps it more than
  `iou_threshold` (IoU > threshold, areas without the +1 pixel). Scores are ordered highest first,
  equal scores in index order (`_by_score`; Paddle's unstable sorts may order ties otherwise).
- `roi_align` and `psroi_pool` are linear in x: each output bin is a weighted sum of input
  pixels. Their kernels compute the taps (roi, bin, pixel, weight) of all rois on the host, then
  gather them from x and add them per bin in one pass; the gradient (`*_grad`) adds the same taps
  back onto x, and each of the pair is the other's gradient.
- `roi_pool` takes per bin the maximum of an integer window (the first in row-major order on ties)
  and returns its flat pixel index (-1 for an empty bin), through which its gradient flows.
- `prior_box` reads only its inputs' shapes: its boxes are a function of the attributes.
- `matrix_nms` decays scores instead of dropping boxes (SOLO's Matrix NMS), per image and class.
- `distribute_fpn_proposals`, `generate_proposals` and `matrix_nms` are value-shaped host ops (`dynamic_shape`), in
  the input dtype as Paddle computes them: anchors decoded (scale exponent clipped at log(1000/16)),
  clipped to the image, small boxes dropped, then NMS with an adaptive threshold (eta).
"""
from __future__ import annotations

import math as _pymath

import numpy as np

from . import meta_utils as mu
from .indexing import scatter_add
from .random import _host
from .registry import Sample, TensorSpec, defop

__all__: list[str] = []

_I64 = np.dtype("int64")
_rng = np.random.default_rng(83)


# ---------------------------------------------------------------- shared checks
def _check_boxes(op: str, boxes: TensorSpec, arg: str = "boxes") -> None:
    mu.require_float(op, boxes, arg)
    if len(boxes.shape) != 2 or boxes.shape[1] not in (4, -1):
        raise ValueError(f"{op}: argument '{arg}' must have shape [num_boxes, 4] (x1, y1, x2, y2), got "
                         f"{mu.shape_str(boxes.shape)}")


def _check_rois(op: str, x: TensorSpec, boxes: TensorSpec, boxes_num: TensorSpec) -> None:
    """x [N, C, H, W], boxes [R, 4] of x's dtype, boxes_num [N] ints."""
    mu.require_float(op, x)
    if len(x.shape) != 4:
        raise ValueError(f"{op}: argument 'x' must be a 4-D tensor [N, C, H, W], got shape {mu.shape_str(x.shape)}")
    _check_boxes(op, boxes)
    if boxes.dtype != x.dtype:
        raise TypeError(f"{op}: argument 'boxes' has dtype {boxes.dtype.name} but 'x' has {x.dtype.name}; "
                        "they must match")
    if boxes_num.dtype.kind not in "iu" or len(boxes_num.shape) != 1:
        raise ValueError(f"{op}: argument 'boxes_num' must be a 1-D int tensor (boxes per image), got "
                         f"{boxes_num.dtype.name}{mu.shape_str(boxes_num.shape)}")
    if x.shape[0] >= 0 and boxes_num.shape[0] >= 0 and boxes_num.shape[0] != x.shape[0]:
        raise ValueError(f"{op}: argument 'boxes_num' has {boxes_num.shape[0]} entries but 'x' holds "
                         f"{x.shape[0]} images; they must be equal")


def _roi_batch(op: str, boxes_num, rois: int) -> np.ndarray:
    """The image of each roi (host int64 [R]), from boxes_num; ValueError unless they add up to R."""
    counts = _host(boxes_num).astype(_I64)
    if (counts < 0).any() or int(counts.sum()) != rois:
        raise ValueError(f"{op}: argument 'boxes_num' {counts.tolist()} must add up to the number of boxes "
                         f"({rois})")
    return np.repeat(np.arange(counts.size, dtype=_I64), counts)


# ---------------------------------------------------------------- nms
def _greedy_nms(boxes: np.ndarray, threshold: float) -> np.ndarray:
    """Indices of the boxes (in the given order) that no earlier kept box overlaps by IoU > threshold."""
    n = boxes.shape[0]
    x0, y0, x1, y1 = (boxes[:, k] for k in range(4))
    area = (y1 - y0) * (x1 - x0)
    iw = np.clip(np.minimum(x1[:, None], x1[None]) - np.maximum(x0[:, None], x0[None]), 0, None)
    ih = np.clip(np.minimum(y1[:, None], y1[None]) - np.maximum(y0[:, None], y0[None]), 0, None)
    inter = iw * ih
    with np.errstate(divide="ignore", invalid="ignore"):  # degenerate boxes: 0 / 0 never suppresses
        over = inter / (area[:, None] + area[None] - inter) > threshold
    suppressed = np.zeros(n, dtype=bool)
    for i in range(n):
        if not suppressed[i]:
            suppressed[i + 1:] |= over[i, i + 1:]
    return np.flatnonzero(~suppressed)


def _by_score(scores: np.ndarray, k: int | None = None) -> np.ndarray:
    """The indices of the `k` (all) highest scores, highest first, NaN before any number, ties in index order.

    Paddle's CPU kernels order ties as their C++ library's unstable sorts happen to leave them; a stable
    order is ours (documented as a deviation): it decides which of two equal-scored boxes suppresses
    the other, so results on tied scores can differ from Paddle's, never on distinct ones."""
    finite = np.where(np.isnan(scores), 0, scores)
    order = np.lexsort((-finite, ~np.isnan(scores))).astype(_I64)  # stable: last key first
    return order if k is None else order[:k]


def _nms_meta(boxes: TensorSpec, scores: TensorSpec | None, category_idxs: TensorSpec | None, *,
              iou_threshold: float, categories: tuple | None, top_k: int | None) -> TensorSpec:
    _check_boxes("nms", boxes)
    for arg, spec in (("scores", scores), ("category_idxs", category_idxs)):
        if spec is not None and (len(spec.shape) != 1 or -1 not in (spec.shape[0], boxes.shape[0])
                                 and spec.shape[0] != boxes.shape[0]):
            raise ValueError(f"nms: argument '{arg}' must have shape [{boxes.shape[0]}] (one per box), got "
                             f"{mu.shape_str(spec.shape)}")
    return TensorSpec((-1,), _I64)


def _nms_kernel(xp, boxes, scores, category_idxs, *, iou_threshold, categories, top_k):
    b = _host(boxes)
    if scores is None:
        keep = _greedy_nms(b, iou_threshold)
    elif category_idxs is None:
        order = _by_score(_host(scores))
        keep = order[_greedy_nms(b[order], iou_threshold)]
    else:
        s, cat = _host(scores), _host(category_idxs)
        kept = np.zeros(b.shape[0], dtype=bool)
        for c in categories:
            members = np.flatnonzero(cat == c)
            order = members[_by_score(s[members])]
            kept[order[_greedy_nms(b[order], iou_threshold)]] = True
        keep = np.flatnonzero(kept)
        if top_k is None:
            keep = keep[_by_score(s[keep])]
        else:
            keep = keep[_by_score(s[keep], min(top_k, keep.size))]
    return xp.asarray(keep.astype(_I64))


def _nms_samples() -> list[Sample]:
    xy = _rng.uniform(0, 6, size=(9, 2))
    boxes = np.concatenate([xy, xy + _rng.uniform(1, 4, size=(9, 2))], axis=1)
    scores = _rng.uniform(size=9)
    cats = np.array([0, 1, 0, 2, 1, 0, 2, 2, 1])
    return [Sample((boxes, None, None), {"iou_threshold": 0.3, "categories": None, "top_k": None}),
            Sample((boxes, scores, None), {"iou_threshold": 0.2, "categories": None, "top_k": None}),
            Sample((boxes, scores, cats), {"iou_threshold": 0.1, "categories": (0, 2), "top_k": 3})]


NMS = defop("nms", kernel=_nms_kernel, meta=_nms_meta, inputs=("boxes", "scores", "category_idxs"),
            dynamic_shape=True, attrs={"iou_threshold": 0.3, "categories": None, "top_k": None},
            samples=_nms_samples)


# ---------------------------------------------------------------- roi_align / psroi_pool: linear taps
def _align_axis(lo: float, bin_size: float, bins: int, grid: int, size: int) -> tuple[np.ndarray, ...]:
    """One axis of roi_align's bilinear samples: per (bin, sample, corner) the pixel, its weight, and
    whether the sample lies inside [-1, size] (outside, it reads 0)."""
    c = lo + np.arange(bins)[:, None] * bin_size + (np.arange(grid)[None, :] + 0.5) * bin_size / grid
    inside = (c >= -1.0) & (c <= size)
    c = np.maximum(c, 0.0)
    low = c.astype(_I64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    frac = np.where(edge, 0.0, c - low)
    return np.stack([low, high], -1), np.stack([1 - frac, frac], -1) * inside[..., None]


def _align_taps(boxes: np.ndarray, size: tuple, pooled: tuple, scale: float, ratio: int,
                aligned: bool) -> tuple[list, int]:
    """Per roi: (bin, pixel, weight) arrays of roi_align's samples on an H x W image."""
    h, w = size
    ph, pw = pooled
    off = 0.5 if aligned else 0.0
    taps = []
    for x0, y0, x1, y1 in boxes.astype(np.float64) * scale - off:
        rh, rw = y1 - y0, x1 - x0
        if not aligned:
            rh, rw = max(rh, 1.0), max(rw, 1.0)
        gh = ratio if ratio > 0 else int(_pymath.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(_pymath.ceil(rw / pw))
        count = max(gh * gw, 1)
        yi, yw = _align_axis(y0, rh / ph, ph, gh, h)  # (ph, gh, 2)
        xi, xw = _align_axis(x0, rw / pw, pw, gw, w)  # (pw, gw, 2)
        shape = (ph, gh, 2, pw, gw, 2)
        bins = np.broadcast_to((np.arange(ph)[:, None, None, None, None, None] * pw
                                + np.arange(pw)[None, None, None, :, None, None]), shape)
        pix = yi[:, :, :, None, None, None] * w + xi[None, None, None]
        wt = yw[:, :, :, None, None, None] * xw[None, None, None] / count
        taps.append((bins.reshape(-1), pix.reshape(-1), wt.reshape(-1)))
    return taps, 1


def _cround(v: np.ndarray) -> np.ndarray:
    """C's round(): halves away from zero."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _ps_windows(lo: float, length: float, bins: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """psroi_pool's integer window [start, end) of each bin along one axis, clamped into the image."""
    b = length / bins
    edges = np.arange(bins)
    start = np.clip(np.floor(b * edges + lo), 0, size).astype(_I64)
    end = np.clip(np.ceil(b * (edges + 1) + lo), 0, size).astype(_I64)
    return start, end


def _ps_taps(boxes: np.ndarray, size: tuple, pooled: tuple, scale: float) -> tuple[list, int]:
    """Per roi: (bin, pixel, weight) of psroi_pool's average over each bin's window."""
    h, w = size
    ph, pw = pooled
    taps = []
    for x0, y0, x1, y1 in boxes.astype(np.float64):
        sx, sy = _cround(x0) * scale, _cround(y0) * scale
        ex, ey = (_cround(x1) + 1.0) * scale, (_cround(y1) + 1.0) * scale
        hs, he = _ps_windows(sy, max(ey - sy, 0.1), ph, h)
        ws, we = _ps_windows(sx, max(ex - sx, 0.1), pw, w)
        rows, cols = np.arange(h), np.arange(w)
        inh = (rows[None] >= hs[:, None]) & (rows[None] < he[:, None])  # (ph, H)
        inw = (cols[None] >= ws[:, None]) & (cols[None] < we[:, None])  # (pw, W)
        area = np.maximum((he - hs)[:, None] * (we - ws)[None], 1)  # an empty bin has no taps
        sel = inh[:, None, :, None] & inw[None, :, None, :]  # (ph, pw, H, W)
        b, y, x = np.nonzero(sel.reshape(ph * pw, h, w))
        taps.append((b, y * w + x, 1.0 / area.reshape(-1)[b]))
    return taps, ph * pw


def _tap_arrays(xp, taps: list, batch: np.ndarray, bins: int, channel_bins: int, dtype) -> tuple:
    """All rois' taps as device arrays: the output row (roi * bins + bin), the image, the channel bin
    (psroi_pool reads channel c * bins + bin; roi_align's channel bin is 0), the pixel, the weight."""
    counts = [len(t[0]) for t in taps]
    roi = np.repeat(np.arange(len(taps), dtype=_I64), counts)
    b = np.concatenate([t[0] for t in taps]).astype(_I64) if taps else np.zeros(0, _I64)
    pix = np.concatenate([t[1] for t in taps]).astype(_I64) if taps else np.zeros(0, _I64)
    wt = np.concatenate([t[2] for t in taps]).astype(dtype) if taps else np.zeros(0, dtype)
    chan = b if channel_bins > 1 else np.zeros_like(b)
    return tuple(xp.asarray(a) for a in (roi * bins + b, batch[roi], chan, pix, wt))


def _pooled_view(x, channel_bins: int):
    """x [N, C, H, W] as [N, C / channel_bins, channel_bins, H * W]."""
    n, c, h, w = x.shape
    return x.reshape(n, c // channel_bins, channel_bins, h * w)


def _linear_taps(op: str, x_shape: tuple, boxes, boxes_num, pooled: tuple, attrs: dict) -> tuple:
    """The taps of roi_align (attrs: spatial_scale, sampling_ratio, aligned) or psroi_pool."""
    b = _host(boxes)
    batch = _roi_batch(op, boxes_num, b.shape[0])
    size = tuple(x_shape[2:])
    if op.startswith("roi_align"):
        taps, channel_bins = _align_taps(b, size, pooled, attrs["spatial_scale"], attrs["sampling_ratio"],
                                         attrs["aligned"])
    else:
        taps, channel_bins = _ps_taps(b, size, pooled, attrs["spatial_scale"])
    return taps, batch, channel_bins


def _linear_pool(op: str, xp, x, boxes, boxes_num, output_size: tuple, attrs: dict):
    """roi_align / psroi_pool forward: gather every tap from x, weigh it, add it into its output bin."""
    taps, batch, channel_bins = _linear_taps(op, x.shape, boxes, boxes_num, output_size, attrs)
    bins = output_size[0] * output_size[1]
    row, img, chan, pix, wt = _tap_arrays(xp, taps, batch, bins, channel_bins, x.dtype)
    xv = _pooled_view(x, channel_bins)
    channels = xv.shape[1]
    out = xp.zeros((len(taps) * bins, channels), dtype=x.dtype)
    scatter_add(xp, out, row, xv[img, :, chan, pix] * wt[:, None])
    return xp.ascontiguousarray(out.reshape(len(taps), *output_size, channels).transpose(0, 3, 1, 2))


def _linear_pool_grad(op: str, xp, x, boxes, boxes_num, grad, output_size: tuple, attrs: dict):
    """The adjoint: every tap adds its weight times its bin's gradient back onto its pixel."""
    taps, batch, channel_bins = _linear_taps(op, x.shape, boxes, boxes_num, output_size, attrs)
    bins = output_size[0] * output_size[1]
    row, img, chan, pix, wt = _tap_arrays(xp, taps, batch, bins, channel_bins, x.dtype)
    n, c, h, w = x.shape
    # channels last, so each tap adds one contiguous row (3x faster than scattering across channels)
    gxt = xp.zeros((n, channel_bins, h * w, c // channel_bins), dtype=x.dtype)
    g = grad.transpose(0, 2, 3, 1).reshape(len(taps) * bins, -1)
    scatter_add(xp, gxt, (img, chan, pix), g[row] * wt[:, None])
    return xp.ascontiguousarray(gxt.transpose(0, 3, 1, 2)).reshape(x.shape)


def _check_output_size(op: str, output_size: tuple) -> None:
    if len(output_size) != 2 or any(s < 1 for s in output_size):
        raise ValueError(f"{op}: argument 'output_size' must be positive (pooled height, width), got "
                         f"{list(output_size)}")


def _pool_meta(op: str, x: TensorSpec, boxes: TensorSpec, boxes_num: TensorSpec, output_size: tuple,
               channel_bins: int) -> TensorSpec:
    _check_rois(op, x, boxes, boxes_num)
    _check_output_size(op, output_size)
    c = x.shape[1]
    if channel_bins > 1 and c >= 0:
        if c % channel_bins:
            raise ValueError(f"{op}: the channels of argument 'x' ({c}) must be divisible by "
                             f"output_size[0] * output_size[1] ({channel_bins})")
        c //= channel_bins
        if c <= 1:
            raise ValueError(f"{op}: the pooled output channels must be greater than 1 (Paddle's requirement), got "
                             f"{c} from {x.shape[1]} channels and output_size {list(output_size)}")
    return TensorSpec((boxes.shape[0], c, *output_size), x.dtype)


def _grad_meta(op: str, forward: TensorSpec, x: TensorSpec, grad: TensorSpec) -> TensorSpec:
    if len(grad.shape) != 4 or any(a != b and a >= 0 and b >= 0 for a, b in zip(grad.shape, forward.shape)):
        raise ValueError(f"{op}: argument 'grad' must have shape {mu.shape_str(forward.shape)}, got "
                         f"{mu.shape_str(grad.shape)}")
    return TensorSpec(x.shape, x.dtype)


def _roi_align_meta(x, boxes, boxes_num, *, output_size, spatial_scale, sampling_ratio, aligned):
    return _pool_meta("roi_align", x, boxes, boxes_num, output_size, 1)


def _roi_align_kernel(xp, x, boxes, boxes_num, *, output_size, spatial_scale, sampling_ratio, aligned):
    return _linear_pool("roi_align", xp, x, boxes, boxes_num, output_size,
                        {"spatial_scale": spatial_scale, "sampling_ratio": sampling_ratio, "aligned": aligned})


def _roi_align_grad_meta(x, boxes, boxes_num, grad, *, output_size, spatial_scale, sampling_ratio, aligned):
    out = _roi_align_meta(x, boxes, boxes_num, output_size=output_size, spatial_scale=spatial_scale,
                          sampling_ratio=sampling_ratio, aligned=aligned)
    return _grad_meta("roi_align_grad", out, x, grad)


def _roi_align_grad_kernel(xp, x, boxes, boxes_num, grad, *, output_size, spatial_scale, sampling_ratio, aligned):
    return _linear_pool_grad("roi_align_grad", xp, x, boxes, boxes_num, grad, output_size,
                             {"spatial_scale": spatial_scale, "sampling_ratio": sampling_ratio, "aligned": aligned})


def _psroi_pool_meta(x, boxes, boxes_num, *, output_size, spatial_scale):
    return _pool_meta("psroi_pool", x, boxes, boxes_num, output_size, output_size[0] * output_size[1])


def _psroi_pool_kernel(xp, x, boxes, boxes_num, *, output_size, spatial_scale):
    return _linear_pool("psroi_pool", xp, x, boxes, boxes_num, output_size, {"spatial_scale": spatial_scale})


def _psroi_pool_grad_meta(x, boxes, boxes_num, grad, *, output_size, spatial_scale):
    out = _psroi_pool_meta(x, boxes, boxes_num, output_size=output_size, spatial_scale=spatial_scale)
    return _grad_meta("psroi_pool_grad", out, x, grad)


def _psroi_pool_grad_kernel(xp, x, boxes, boxes_num, grad, *, output_size, spatial_scale):
    return _linear_pool_grad("psroi_pool_grad", xp, x, boxes, boxes_num, grad, output_size,
                             {"spatial_scale": spatial_scale})


def _adjoint_pair(forward_name: str, grad_name: str, kernels: tuple, attrs: dict, samples) -> tuple:
    """Register a linear pooling op and its gradient, each the other's gradient (wrt x / grad)."""
    ops: dict = {}

    def g_forward(ctx, g):
        x, boxes, boxes_num = ctx.inputs
        return ops["grad"](x, boxes, boxes_num, g, **ctx.attrs), None, None

    def g_grad(ctx, gg):
        _, boxes, boxes_num, _ = ctx.inputs
        return None, None, None, ops["forward"](gg, boxes, boxes_num, **ctx.attrs)

    fk, fm, gk, gm = kernels
    ops["forward"] = defop(forward_name, kernel=fk, meta=fm, grad=g_forward, attrs=dict(attrs),
                           inputs=("x", "boxes", "boxes_num"), samples=samples)

    def grad_samples():
        out = []
        for s in samples():
            y = fk(np, *s.inputs, **s.attrs)
            out.append(Sample((*s.inputs, _rng.normal(size=y.shape)), s.attrs, grad_inputs=(3,)))
        return out

    ops["grad"] = defop(grad_name, kernel=gk, meta=gm, grad=g_grad, attrs=dict(attrs),
                        inputs=("x", "boxes", "boxes_num", "grad"), samples=grad_samples)
    return ops["forward"], ops["grad"]


def _sample_rois() -> tuple[np.ndarray, np.ndarray]:
    """Five boxes over two 5 x 6 images, one reaching past the edges, one smaller than a pixel."""
    boxes = np.array([[0.3, 0.6, 3.7, 2.9], [-1.5, -2.2, 2.6, 6.3], [1.2, 2.1, 1.5, 2.4],
                      [2.4, 1.3, 5.8, 4.6], [3.3, 2.8, 8.9, 7.7]])
    return boxes, np.array([3, 2], dtype=_I64)


def _roi_align_samples() -> list[Sample]:
    boxes, num = _sample_rois()
    out = []
    for ratio, aligned, scale in ((-1, True, 1.0), (2, False, 0.7), (-1, False, 1.3)):
        out.append(Sample((_rng.normal(size=(2, 3, 5, 6)), boxes, num),
                          {"output_size": (2, 3), "spatial_scale": scale, "sampling_ratio": ratio,
                           "aligned": aligned}, grad_inputs=(0,)))
    return out


def _psroi_pool_samples() -> list[Sample]:
    boxes, num = _sample_rois()
    return [Sample((_rng.normal(size=(2, 12, 5, 6)), boxes, num), {"output_size": (2, 3), "spatial_scale": 0.8},
                   grad_inputs=(0,)),
            Sample((_rng.normal(size=(2, 8, 5, 6)), boxes, num), {"output_size": (2, 2), "spatial_scale": 1.0},
                   grad_inputs=(0,))]


ROI_ALIGN, ROI_ALIGN_GRAD = _adjoint_pair(
    "roi_align", "roi_align_grad", (_roi_align_kernel, _roi_align_meta, _roi_align_grad_kernel, _roi_align_grad_meta),
    {"output_size": (1, 1), "spatial_scale": 1.0, "sampling_ratio": -1, "aligned": True}, _roi_align_samples)
PSROI_POOL, PSROI_POOL_GRAD = _adjoint_pair(
    "psroi_pool", "psroi_pool_grad",
    (_psroi_pool_kernel, _psroi_pool_meta, _psroi_pool_grad_kernel, _psroi_pool_grad_meta),
    {"output_size": (1, 1), "spatial_scale": 1.0}, _psroi_pool_samples)


# ---------------------------------------------------------------- roi_pool
def _pool_windows(lo: float, length: float, bins: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """roi_pool's integer window [start, end) of each bin along one axis, shifted to the roi and clamped."""
    b = length / bins
    edges = np.arange(bins)
    start = np.clip(np.floor(edges * b) + lo, 0, size).astype(_I64)
    end = np.clip(np.ceil((edges + 1) * b) + lo, 0, size).astype(_I64)
    return start, end


def _masked_first_max(xp, v, mask):
    """Max over v's last axis where mask (broadcast) holds, and the first position reaching it; -inf / 0 where
    the mask is empty."""
    masked = xp.where(mask, v, -xp.inf)
    return masked.max(axis=-1), masked.argmax(axis=-1)


def _roi_pool_one(xp, img, hs, he, ws, we):
    """One roi's bins over img [C, H, W]: the maxima [C, ph, pw] and their flat pixel indices (-1 if empty)."""
    w = img.shape[2]
    h0, h1, w0, w1 = int(hs.min()), int(max(he.max(), hs.min())), int(ws.min()), int(max(we.max(), ws.min()))
    crop = img[:, h0:h1, w0:w1]  # (C, rh, rw)
    rows, cols = np.arange(h0, h1), np.arange(w0, w1)
    inw = xp.asarray((cols[None] >= ws[:, None]) & (cols[None] < we[:, None]))  # (pw, rw)
    inh = xp.asarray((rows[None] >= hs[:, None]) & (rows[None] < he[:, None]))  # (ph, rh)
    c = img.shape[0]
    if crop.size == 0:
        return (xp.zeros((c, hs.size, ws.size), dtype=img.dtype), xp.full((c, hs.size, ws.size), -1, dtype=_I64))
    row_max, row_arg = _masked_first_max(xp, crop[:, :, None, :], inw)  # (C, rh, pw)
    best, best_row = _masked_first_max(xp, xp.swapaxes(row_max, 1, 2)[:, None], inh[None, :, None, :])  # (C, ph, pw)
    col = xp.take_along_axis(xp.swapaxes(row_arg, 1, 2)[:, None], best_row[..., None], axis=-1)[..., 0]
    empty = xp.asarray((he <= hs)[:, None] | (we <= ws)[None, :])
    index = (best_row + h0) * w + col + w0
    return xp.where(empty, 0, best).astype(img.dtype), xp.where(empty, -1, index).astype(_I64)


def _roi_pool_meta(x: TensorSpec, boxes: TensorSpec, boxes_num: TensorSpec, *, output_size: tuple,
                   spatial_scale: float) -> tuple:
    out = _pool_meta("roi_pool", x, boxes, boxes_num, output_size, 1)
    return out, TensorSpec(out.shape, _I64)


def _roi_pool_kernel(xp, x, boxes, boxes_num, *, output_size, spatial_scale):
    b = _host(boxes).astype(np.float64)
    batch = _roi_batch("roi_pool", boxes_num, b.shape[0])
    n, c, h, w = x.shape
    ph, pw = output_size
    outs, args = [], []
    for (x0, y0, x1, y1), img in zip(_cround(b * spatial_scale), batch):
        hs, he = _pool_windows(y0, max(y1 - y0 + 1, 1), ph, h)
        ws, we = _pool_windows(x0, max(x1 - x0 + 1, 1), pw, w)
        o, a = _roi_pool_one(xp, x[img], hs, he, ws, we)
        outs.append(o)
        args.append(a)
    if not outs:
        return xp.zeros((0, c, ph, pw), dtype=x.dtype), xp.zeros((0, c, ph, pw), dtype=_I64)
    return xp.stack(outs), xp.stack(args)


def _roi_pool_grad_meta(x: TensorSpec, boxes_num: TensorSpec, argmax: TensorSpec, grad: TensorSpec) -> TensorSpec:
    if tuple(argmax.shape) != tuple(grad.shape):
        raise ValueError(f"roi_pool_grad: argument 'grad' must have the shape of 'argmax' "
                         f"{mu.shape_str(argmax.shape)}, got {mu.shape_str(grad.shape)}")
    return TensorSpec(x.shape, x.dtype)


def _roi_pool_grad_kernel(xp, x, boxes_num, argmax, grad):
    n, c, h, w = x.shape
    batch = xp.asarray(_roi_batch("roi_pool_grad", boxes_num, argmax.shape[0]))
    gx = xp.zeros((n, c, h * w), dtype=x.dtype)
    hit = argmax >= 0
    img = xp.broadcast_to(batch[:, None, None, None], argmax.shape)[hit]
    chan = xp.broadcast_to(xp.arange(c)[None, :, None, None], argmax.shape)[hit]
    scatter_add(xp, gx, (img, chan, argmax[hit]), grad[hit])
    return gx.reshape(x.shape)


def _g_roi_pool(ctx, g, _gargmax):
    x, _, boxes_num = ctx.inputs
    return ROI_POOL_GRAD(x, boxes_num, ctx.outputs[1], g), None, None


def _roi_pool_samples() -> list[Sample]:
    boxes, num = _sample_rois()
    return [Sample((_rng.normal(size=(2, 3, 5, 6)), boxes, num), {"output_size": (2, 3), "spatial_scale": 1.0},
                   grad_inputs=(0,)),
            Sample((_rng.normal(size=(2, 2, 5, 6)), boxes, num), {"output_size": (3, 2), "spatial_scale": 0.6},
                   grad_inputs=(0,))]


def _roi_pool_grad_samples() -> list[Sample]:
    out = []
    for s in _roi_pool_samples():
        x, boxes, num = s.inputs
        _, argmax = _roi_pool_kernel(np, x, boxes, num, **s.attrs)
        out.append(Sample((x, num, argmax, _rng.normal(size=argmax.shape)), grad_inputs=()))
    return out


ROI_POOL = defop("roi_pool", kernel=_roi_pool_kernel, meta=_roi_pool_meta, grad=_g_roi_pool,
                 attrs={"output_size": (1, 1), "spatial_scale": 1.0}, inputs=("x", "boxes", "boxes_num"),
                 save_outputs=True, nondiff_outputs=(1,), samples=_roi_pool_samples)
# No gradient of its own: roi_pool is differentiated once (as Paddle's).
ROI_POOL_GRAD = defop("roi_pool_grad", kernel=_roi_pool_grad_kernel, meta=_roi_pool_grad_meta,
                      inputs=("x", "boxes_num", "argmax", "grad"), samples=_roi_pool_grad_samples)


# ---------------------------------------------------------------- prior_box
def _aspect_ratios(ratios: tuple, flip: bool) -> list[float]:
    """1.0 first, then each new ratio (and its inverse with flip), duplicates within 1e-6 dropped."""
    out = [1.0]
    for r in ratios:
        if any(abs(r - o) < 1e-6 for o in out):
            continue
        out.append(r)
        if flip:
            out.append(1.0 / r)
    return out


def _prior_halves(min_sizes: tuple, max_sizes: tuple, ratios: list, mm_order: bool) -> np.ndarray:
    """[P, 2]: the half width and half height of each prior at one position, in Paddle's order."""
    sizes = []
    for s, mn in enumerate(min_sizes):
        ars = [(mn * _pymath.sqrt(a) / 2, mn / _pymath.sqrt(a) / 2) for a in ratios
               if not (mm_order and abs(a - 1.0) < 1e-6)]
        big = [(_pymath.sqrt(mn * max_sizes[s]) / 2,) * 2] if max_sizes else []
        sizes += [(mn / 2, mn / 2), *big, *ars] if mm_order else [*ars, *big]
    return np.asarray(sizes, dtype=np.float64)


def _prior_box_meta(input: TensorSpec, image: TensorSpec, *, min_sizes: tuple, max_sizes: tuple,
                    aspect_ratios: tuple, variance: tuple, flip: bool, clip: bool, steps: tuple, offset: float,
                    min_max_aspect_ratios_order: bool) -> tuple:
    for arg, spec in (("input", input), ("image", image)):
        if len(spec.shape) != 4:
            raise ValueError(f"prior_box: argument '{arg}' must be a 4-D tensor [N, C, H, W], got shape "
                             f"{mu.shape_str(spec.shape)}")
        mu.require_float("prior_box", spec, arg)
    if -1 in input.shape[2:] or -1 in image.shape[2:]:
        raise ValueError("prior_box: the spatial sizes of 'input' and 'image' must be known")
    priors = len(_prior_halves(min_sizes, max_sizes, _aspect_ratios(aspect_ratios, flip),
                               min_max_aspect_ratios_order))
    out = TensorSpec((*input.shape[2:], priors, 4), input.dtype)
    return out, out


def _prior_box_kernel(xp, input, image, *, min_sizes, max_sizes, aspect_ratios, variance, flip, clip, steps,
                      offset, min_max_aspect_ratios_order):
    fh, fw = input.shape[2:]
    ih, iw = image.shape[2:]
    sw, sh = (iw / fw, ih / fh) if steps[0] == 0 or steps[1] == 0 else steps
    half = _prior_halves(min_sizes, max_sizes, _aspect_ratios(aspect_ratios, flip), min_max_aspect_ratios_order)
    cx = ((np.arange(fw) + offset) * sw)[None, :, None]
    cy = ((np.arange(fh) + offset) * sh)[:, None, None]
    boxes = np.stack(np.broadcast_arrays((cx - half[:, 0]) / iw, (cy - half[:, 1]) / ih,
                                         (cx + half[:, 0]) / iw, (cy + half[:, 1]) / ih), axis=-1)
    if clip:
        boxes = np.clip(boxes, 0.0, 1.0)
    variances = np.broadcast_to(np.asarray(variance), boxes.shape)
    return (xp.asarray(boxes.astype(input.dtype)), xp.asarray(np.ascontiguousarray(variances, dtype=input.dtype)))


_PRIOR_ATTRS = {"min_sizes": (1.0,), "max_sizes": (), "aspect_ratios": (1.0,), "variance": (0.1, 0.1, 0.2, 0.2),
                "flip": False, "clip": False, "steps": (0.0, 0.0), "offset": 0.5, "min_max_aspect_ratios_order": False}
# SSD's prior boxes and their variances: [H, W, priors, 4] from the shapes of input and image alone.
PRIOR_BOX = defop("prior_box", kernel=_prior_box_kernel, meta=_prior_box_meta, inputs=("input", "image"),
                  attrs=dict(_PRIOR_ATTRS),
                  samples=lambda: [Sample((np.zeros((1, 2, 2, 3)), np.zeros((1, 3, 8, 9))),
                                          {**_PRIOR_ATTRS, "min_sizes": (2.0, 3.0), "max_sizes": (4.0, 5.0),
                                           "aspect_ratios": (2.0,), "flip": True, "clip": True}),
                                   Sample((np.zeros((1, 2, 3, 2)), np.zeros((1, 3, 9, 7))),
                                          {**_PRIOR_ATTRS, "min_sizes": (3.0,), "steps": (2.0, 3.0),
                                           "min_max_aspect_ratios_order": True, "max_sizes": (6.0,)})])


# ---------------------------------------------------------------- distribute_fpn_proposals
def _fpn_meta(fpn_rois: TensorSpec, rois_num: TensorSpec, *, min_level: int, max_level: int, refer_level: int,
              refer_scale: float, pixel_offset: bool) -> tuple:
    _check_boxes("distribute_fpn_proposals", fpn_rois, "fpn_rois")
    levels = max_level - min_level + 1
    i32 = np.dtype("int32")
    return (*[TensorSpec((-1, 4), fpn_rois.dtype)] * levels, TensorSpec((fpn_rois.shape[0], 1), i32),
            *[TensorSpec(rois_num.shape, i32)] * levels)


def _fpn_kernel(xp, fpn_rois, rois_num, *, min_level, max_level, refer_level, refer_scale, pixel_offset):
    rois = _host(fpn_rois)
    image = _roi_batch("distribute_fpn_proposals", rois_num, rois.shape[0])
    w, h = rois[:, 2] - rois[:, 0], rois[:, 3] - rois[:, 1]
    if pixel_offset:
        w, h = w + 1, h + 1
    area = np.where((rois[:, 2] < rois[:, 0]) | (rois[:, 3] < rois[:, 1]), 0, w * h)
    with np.errstate(divide="ignore"):  # an empty box goes to the lowest level
        level = np.floor(np.log2(np.sqrt(area) / rois.dtype.type(refer_scale) + rois.dtype.type(1e-8)) + refer_level)
    level = np.clip(level, min_level, max_level).astype(_I64) - min_level
    order = np.lexsort((np.arange(rois.shape[0]), image, level))  # by level, then image, then index
    restore = np.empty(rois.shape[0], dtype=np.int32)
    restore[order] = np.arange(rois.shape[0], dtype=np.int32)
    levels = range(max_level - min_level + 1)
    counts = [np.bincount(image[level == lv], minlength=len(_host(rois_num))).astype(np.int32) for lv in levels]
    return (*[xp.asarray(rois[order[level[order] == lv]]) for lv in levels], xp.asarray(restore[:, None]),
            *[xp.asarray(c) for c in counts])


# Proposals spread over FPN levels by their scale: per level the rois and the rois per image, and where each
# roi went in the levels' concatenation.
DISTRIBUTE_FPN_PROPOSALS = defop(
    "distribute_fpn_proposals", kernel=_fpn_kernel, meta=_fpn_meta, inputs=("fpn_rois", "rois_num"),
    dynamic_shape=True,
    attrs={"min_level": 2, "max_level": 5, "refer_level": 4, "refer_scale": 224.0, "pixel_offset": False},
    samples=lambda: [Sample((np.array([[0, 0, 30, 40], [5, 5, 300, 260], [2, 2, 90, 120], [7, 7, 3, 3.0]]),
                             np.array([3, 1], dtype=np.int32)),
                            {"min_level": 2, "max_level": 5, "refer_level": 4, "refer_scale": 224.0,
                             "pixel_offset": True})])


# ---------------------------------------------------------------- generate_proposals
_BBOX_CLIP = _pymath.log(1000.0 / 16.0)  # the largest scale exponent a delta may ask for


def _decode_anchors(anchors: np.ndarray, deltas: np.ndarray, var: np.ndarray, offset: float) -> np.ndarray:
    aw, ah = anchors[:, 2] - anchors[:, 0] + offset, anchors[:, 3] - anchors[:, 1] + offset
    cx = var[:, 0] * deltas[:, 0] * aw + (anchors[:, 0] + aw * 0.5)
    cy = var[:, 1] * deltas[:, 1] * ah + (anchors[:, 1] + ah * 0.5)
    clip = anchors.dtype.type(_BBOX_CLIP)
    w = np.exp(np.minimum(var[:, 2] * deltas[:, 2], clip)) * aw
    h = np.exp(np.minimum(var[:, 3] * deltas[:, 3], clip)) * ah
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - offset, cy + h / 2 - offset], axis=1)


def _box_area(boxes: np.ndarray, offset: float) -> np.ndarray:
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return np.where((w < 0) | (h < 0), 0, (w + offset) * (h + offset))


def _adaptive_nms(boxes: np.ndarray, scores: np.ndarray, threshold: float, eta: float, offset: float) -> list:
    """Paddle's detection NMS: highest score first (ties: the later box first), IoU <= threshold survives,
    the threshold shrinks by eta after each kept box while above 0.5."""
    order = np.argsort(scores, kind="stable")[::-1]
    area = _box_area(boxes, offset)
    kept: list[int] = []
    thr = boxes.dtype.type(threshold)
    for i in order:
        b = boxes[i]
        if kept:
            k = boxes[kept]
            disjoint = (k[:, 0] > b[2]) | (k[:, 2] < b[0]) | (k[:, 1] > b[3]) | (k[:, 3] < b[1])
            iw = np.minimum(k[:, 2], b[2]) - np.maximum(k[:, 0], b[0]) + offset
            ih = np.minimum(k[:, 3], b[3]) - np.maximum(k[:, 1], b[1]) + offset
            inter = iw * ih
            with np.errstate(divide="ignore", invalid="ignore"):
                iou = np.where(disjoint, 0, inter / (area[i] + area[kept] - inter))
            if (iou > thr).any():
                continue
        kept.append(int(i))
        if eta < 1 and thr > 0.5:
            thr = thr * boxes.dtype.type(eta)
    return kept


def _proposals_of_image(scores, deltas, anchors, var, im_h, im_w, *, pre_nms_top_n, post_nms_top_n, nms_thresh,
                        min_size, eta, pixel_offset):
    """One image's proposals [M, 4] and scores [M] (Paddle's ProposalForOneImage)."""
    offset = scores.dtype.type(1 if pixel_offset else 0)
    index = _by_score(scores, pre_nms_top_n if 0 < pre_nms_top_n < scores.size else None)
    scores, boxes = scores[index], _decode_anchors(anchors[index], deltas[index], var[index], offset)
    boxes[:, 0::2] = np.maximum(np.minimum(boxes[:, 0::2], im_w - offset), 0)
    boxes[:, 1::2] = np.maximum(np.minimum(boxes[:, 1::2], im_h - offset), 0)
    ws, hs = boxes[:, 2] - boxes[:, 0] + offset, boxes[:, 3] - boxes[:, 1] + offset
    least = max(min_size, 1.0)
    keep = (ws >= least) & (hs >= least)
    if pixel_offset:
        keep &= (boxes[:, 0] + ws / 2 <= im_w) & (boxes[:, 1] + hs / 2 <= im_h)
    if not keep.any():  # Paddle gives one zero box for an image whose boxes are all too small
        return np.zeros((1, 4), boxes.dtype), np.zeros(1, scores.dtype)
    boxes, scores = boxes[keep], scores[keep]
    if nms_thresh <= 0:
        return boxes, scores
    kept = _adaptive_nms(boxes, scores, nms_thresh, eta, float(offset))
    if 0 < post_nms_top_n < len(kept):
        kept = kept[:post_nms_top_n]
    return boxes[kept], scores[kept]


def _proposals_meta(scores: TensorSpec, bbox_deltas: TensorSpec, img_size: TensorSpec, anchors: TensorSpec,
                    variances: TensorSpec, *, pre_nms_top_n: int, post_nms_top_n: int, nms_thresh: float,
                    min_size: float, eta: float, pixel_offset: bool) -> tuple:
    api = "generate_proposals"
    n, a, h, w = scores.shape if len(scores.shape) == 4 else (None,) * 4
    if n is None or len(bbox_deltas.shape) != 4 or bbox_deltas.shape[1] not in (4 * a, -1):
        raise ValueError(f"{api}: arguments 'scores' [N, A, H, W] and 'bbox_deltas' [N, 4 * A, H, W] do not fit: "
                         f"{mu.shape_str(scores.shape)} and {mu.shape_str(bbox_deltas.shape)}")
    for arg, spec in (("anchors", anchors), ("variances", variances)):
        if spec.shape[-1] != 4 or (a >= 0 and -1 not in spec.shape and
                                   int(np.prod(spec.shape)) != 4 * a * h * w):
            raise ValueError(f"{api}: argument '{arg}' must be [H, W, A, 4] = [{h}, {w}, {a}, 4], got "
                             f"{mu.shape_str(spec.shape)}")
    if len(img_size.shape) != 2 or img_size.shape[1] not in (2, -1):
        raise ValueError(f"{api}: argument 'img_size' must be [N, 2] (height, width), got "
                         f"{mu.shape_str(img_size.shape)}")
    return TensorSpec((-1, 4), scores.dtype), TensorSpec((-1, 1), scores.dtype), TensorSpec((n,), np.dtype("int32"))


def _proposals_kernel(xp, scores, bbox_deltas, img_size, anchors, variances, *, pre_nms_top_n, post_nms_top_n,
                      nms_thresh, min_size, eta, pixel_offset):
    s, d, size = _host(scores), _host(bbox_deltas), _host(img_size)
    anc, var = _host(anchors).reshape(-1, 4), _host(variances).reshape(-1, 4)
    n = s.shape[0]
    s = s.transpose(0, 2, 3, 1).reshape(n, -1)
    d = d.transpose(0, 2, 3, 1).reshape(n, -1, 4)
    rois, probs = [], []
    for i in range(n):
        r, p = _proposals_of_image(s[i], d[i], anc, var, size[i, 0], size[i, 1], pre_nms_top_n=pre_nms_top_n,
                                   post_nms_top_n=post_nms_top_n, nms_thresh=nms_thresh, min_size=min_size, eta=eta,
                                   pixel_offset=pixel_offset)
        rois.append(r)
        probs.append(p)
    counts = np.array([len(r) for r in rois], dtype=np.int32)
    out = np.concatenate(rois) if rois else np.zeros((0, 4), s.dtype)
    prob = np.concatenate(probs)[:, None] if probs else np.zeros((0, 1), s.dtype)
    return xp.asarray(out), xp.asarray(prob), xp.asarray(counts)


def _proposals_samples() -> list[Sample]:
    a, h, w = 2, 2, 3
    ctr = np.stack(np.meshgrid(np.arange(w) * 6.0 + 3, np.arange(h) * 6.0 + 3), -1)
    half = np.array([[4.0, 4.0], [6.0, 3.0]])
    anchors = np.concatenate([ctr[:, :, None] - half, ctr[:, :, None] + half], -1)
    var = np.broadcast_to(np.array([0.1, 0.1, 0.2, 0.2]), anchors.shape).copy()
    size = np.array([[14.0, 18.0], [12.0, 16.0]])
    attrs = {"pre_nms_top_n": 8, "post_nms_top_n": 5, "nms_thresh": 0.5, "min_size": 1.0, "eta": 1.0,
             "pixel_offset": False}
    return [Sample((_rng.uniform(size=(2, a, h, w)), _rng.normal(scale=0.3, size=(2, 4 * a, h, w)), size, anchors,
                    var), attrs)]


# Region proposals of an RPN head: anchors moved by the deltas, clipped, filtered, suppressed, per image.
GENERATE_PROPOSALS = defop(
    "generate_proposals", kernel=_proposals_kernel, meta=_proposals_meta, dynamic_shape=True,
    inputs=("scores", "bbox_deltas", "img_size", "anchors", "variances"),
    attrs={"pre_nms_top_n": 6000, "post_nms_top_n": 1000, "nms_thresh": 0.5, "min_size": 0.1, "eta": 1.0,
           "pixel_offset": False},
    samples=_proposals_samples)


# ---------------------------------------------------------------- matrix_nms
def _iou_matrix(b: np.ndarray, offset: float) -> np.ndarray:
    """Pairwise IoU of boxes [n, 4] (Paddle's JaccardOverlap: 0 for disjoint boxes, +offset on each side)."""
    area = _box_area(b, offset)
    disjoint = ((b[None, :, 0] > b[:, None, 2]) | (b[None, :, 2] < b[:, None, 0]) | (b[None, :, 1] > b[:, None, 3])
                | (b[None, :, 3] < b[:, None, 1]))
    iw = np.minimum(b[:, None, 2], b[None, :, 2]) - np.maximum(b[:, None, 0], b[None, :, 0]) + offset
    ih = np.minimum(b[:, None, 3], b[None, :, 3]) - np.maximum(b[:, None, 1], b[None, :, 1]) + offset
    inter = iw * ih
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(disjoint, 0, inter / (area[:, None] + area[None] - inter))


def _decay_class(boxes: np.ndarray, scores: np.ndarray, *, score_threshold, post_threshold, nms_top_k, normalized,
                 use_gaussian, gaussian_sigma) -> tuple[np.ndarray, np.ndarray]:
    """One class of one image: the boxes kept and their decayed scores. Every candidate's score decays by its
    worst overlap with a higher-scored one, relative to how much that one was itself overlapped."""
    cand = np.flatnonzero(scores > score_threshold)
    n = cand.size if nms_top_k <= -1 else min(cand.size, nms_top_k)
    cand = cand[_by_score(scores[cand], n)]
    s = scores[cand]
    iou = np.triu(_iou_matrix(boxes[cand], boxes.dtype.type(0 if normalized else 1)), 1)  # iou[j, i] for j < i
    iou_max = iou.max(axis=0, initial=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if use_gaussian:
            decay = np.exp((iou_max[:, None] ** 2 - iou ** 2) * boxes.dtype.type(gaussian_sigma))
        else:
            decay = (1 - iou) / (1 - iou_max[:, None])
    earlier = np.triu(np.ones((n, n), dtype=bool), 1)
    decayed = np.minimum(np.where(earlier, decay, np.inf).min(axis=0, initial=np.inf), 1).astype(s.dtype) * s
    keep = decayed > post_threshold
    return cand[keep], decayed[keep]


def _matrix_nms_meta(bboxes: TensorSpec, scores: TensorSpec, *, score_threshold: float, post_threshold: float,
                     nms_top_k: int, keep_top_k: int, use_gaussian: bool, gaussian_sigma: float, background_label: int,
                     normalized: bool) -> tuple:
    if len(bboxes.shape) != 3 or bboxes.shape[2] not in (4, -1):
        raise ValueError(f"matrix_nms: argument 'bboxes' must be [N, M, 4], got {mu.shape_str(bboxes.shape)}")
    if len(scores.shape) != 3 or -1 not in (scores.shape[2], bboxes.shape[1]) and scores.shape[2] != bboxes.shape[1]:
        raise ValueError(f"matrix_nms: argument 'scores' must be [N, C, M] with M = {bboxes.shape[1]} boxes, got "
                         f"{mu.shape_str(scores.shape)}")
    i32 = np.dtype("int32")
    return (TensorSpec((-1, 6), bboxes.dtype), TensorSpec((-1, 1), i32), TensorSpec((bboxes.shape[0],), i32))


def _matrix_nms_kernel(xp, bboxes, scores, *, score_threshold, post_threshold, nms_top_k, keep_top_k, use_gaussian,
                       gaussian_sigma, background_label, normalized):
    b, s = _host(bboxes), _host(scores)
    rows, index, counts = [], [], []
    for n in range(b.shape[0]):
        kept, decayed, labels = [], [], []
        for c in range(s.shape[1]):
            if c == background_label:
                continue
            k, d = _decay_class(b[n], s[n, c], score_threshold=score_threshold, post_threshold=post_threshold,
                                nms_top_k=nms_top_k, normalized=normalized, use_gaussian=use_gaussian,
                                gaussian_sigma=gaussian_sigma)
            kept.append(k)
            decayed.append(d)
            labels.append(np.full(k.size, c, dtype=b.dtype))
        kept, decayed, labels = (np.concatenate(v) if v else np.zeros(0, t) for v, t in
                                 ((kept, _I64), (decayed, b.dtype), (labels, b.dtype)))
        top = kept.size if keep_top_k <= -1 else min(kept.size, keep_top_k)
        perm = _by_score(decayed, top)
        rows.append(np.concatenate([labels[perm, None], decayed[perm, None], b[n, kept[perm]]], axis=1))
        index.append(n * b.shape[1] + kept[perm])
        counts.append(top)
    out = np.concatenate(rows) if rows else np.zeros((0, 6), b.dtype)
    idx = np.concatenate(index).astype(np.int32)[:, None] if index else np.zeros((0, 1), np.int32)
    return xp.asarray(out.astype(b.dtype)), xp.asarray(idx), xp.asarray(np.asarray(counts, dtype=np.int32))


def _matrix_nms_samples() -> list[Sample]:
    xy = _rng.uniform(0, 0.7, size=(2, 6, 2))
    boxes = np.concatenate([xy, xy + _rng.uniform(0.1, 0.4, size=(2, 6, 2))], axis=2)
    attrs = {"score_threshold": 0.1, "post_threshold": 0.05, "nms_top_k": 4, "keep_top_k": 5, "use_gaussian": False,
             "gaussian_sigma": 2.0, "background_label": 0, "normalized": True}
    return [Sample((boxes, _rng.uniform(size=(2, 3, 6))), attrs),
            Sample((boxes * 20, _rng.uniform(size=(2, 2, 6))),
                   {**attrs, "use_gaussian": True, "normalized": False, "background_label": -1, "keep_top_k": -1})]


# Matrix NMS (SOLO): scores decayed by overlaps instead of boxes dropped; rows [label, score, x1, y1, x2, y2].
MATRIX_NMS = defop(
    "matrix_nms", kernel=_matrix_nms_kernel, meta=_matrix_nms_meta, inputs=("bboxes", "scores"), dynamic_shape=True,
    attrs={"score_threshold": 0.0, "post_threshold": 0.0, "nms_top_k": -1, "keep_top_k": -1, "use_gaussian": False,
           "gaussian_sigma": 2.0, "background_label": 0, "normalized": True},
    samples=_matrix_nms_samples)
