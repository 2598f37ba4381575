"""Detection ops of `paddle.vision.ops`: nms, matrix_nms, roi_align, roi_pool, psroi_pool (and their layers),
box_coder, yolo_box, prior_box, distribute_fpn_proposals and generate_proposals, with Paddle 3.3.1's
signatures, defaults and argument errors.

nms, the roi poolings and the proposal ops are registry ops (runtime/ops/detection.py); box_coder and yolo_box are
elementwise formulas over public ops (so autograd and the JIT see ordinary ops); prior_box is a
registry op whose output depends only on its inputs' shapes.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ... import nn
from ...ops import creation, math, shape
from ...ops.detection import (DISTRIBUTE_FPN_PROPOSALS, GENERATE_PROPOSALS, MATRIX_NMS, NMS, PRIOR_BOX, PSROI_POOL,
                              ROI_ALIGN, ROI_POOL)
from ...tensor import Tensor, as_tensor, to_tensor

__all__ = ["nms", "roi_align", "RoIAlign", "roi_pool", "RoIPool", "psroi_pool", "PSRoIPool", "box_coder",
           "yolo_box", "prior_box", "distribute_fpn_proposals", "generate_proposals", "matrix_nms"]


def _f32(v: Any) -> float:
    """A float attribute as Paddle's kernels see it: rounded to float32 (spatial_scale 0.8 is 0.800000011...),
    which decides where a bin's window starts and which IoU exceeds the threshold."""
    return float(np.float32(v))


def nms(boxes: Tensor, iou_threshold: float = 0.3, scores: Tensor | None = None, category_idxs: Tensor | None = None,
        categories: Sequence[int] | None = None, top_k: int | None = None) -> Tensor:
    """Indices (int64) of the boxes [N, 4] (x1, y1, x2, y2) that non-maximum suppression keeps.

    Without scores the boxes are taken in their order and the kept indices come ascending; with scores
    in descending score order; with category_idxs each of `categories` is suppressed on its own and the
    kept boxes of all come by descending score, at most top_k of them (top_k counts only then, as in Paddle).
    """
    api = "nms"
    boxes = as_tensor(boxes, "boxes", api)
    if scores is None:
        category_idxs = None
    else:
        scores = as_tensor(scores, "scores", api)
    if category_idxs is None:
        categories, top_k = None, None
    else:
        category_idxs = as_tensor(category_idxs, "category_idxs", api)
        if top_k is not None and top_k > scores.shape[0]:
            raise AssertionError(f"{api}: top_k ({top_k}) should be smaller equal than the number of boxes "
                                 f"({scores.shape[0]})")
        if categories is None:
            raise AssertionError(f"{api}: if category_idxs is given, categories which is a list of unique id of "
                                 "all categories is necessary")
        categories = tuple(int(c) for c in categories)
    return NMS(boxes, scores, category_idxs, iou_threshold=_f32(iou_threshold), categories=categories,
               top_k=None if top_k is None else int(top_k))


def _output_size(api: str, output_size: Any) -> tuple[int, int]:
    """An int or a pair of ints, as (pooled height, pooled width)."""
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        return int(output_size), int(output_size)
    if isinstance(output_size, (list, tuple)) and len(output_size) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in output_size):
        return int(output_size[0]), int(output_size[1])
    raise TypeError(f"{api}: argument 'output_size' must be an int or a tuple of 2 ints, got {output_size!r}")


def _rois(api: str, x: Any, boxes: Any, boxes_num: Any) -> tuple[Tensor, Tensor, Tensor]:
    if boxes_num is None:
        raise AssertionError(f"{api}: boxes_num should not be None in dygraph mode.")
    return as_tensor(x, "x", api), as_tensor(boxes, "boxes", api), as_tensor(boxes_num, "boxes_num", api)


def roi_align(x: Tensor, boxes: Tensor, boxes_num: Tensor, output_size: Any, spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = True, name: str | None = None) -> Tensor:
    """RoIAlign: each box of boxes [R, 4] (image i owns boxes_num[i] of them, in order) pooled from
    x [N, C, H, W] to [R, C, *output_size] by averaging bilinear samples per bin (sampling_ratio per axis,
    or -1: ceil(roi size / bins)); aligned shifts the boxes by -0.5 pixel."""
    api = "roi_align"
    x, boxes, boxes_num = _rois(api, x, boxes, boxes_num)
    return ROI_ALIGN(x, boxes, boxes_num, output_size=_output_size(api, output_size),
                     spatial_scale=_f32(spatial_scale), sampling_ratio=int(sampling_ratio), aligned=bool(aligned))


def roi_pool(x: Tensor, boxes: Tensor, boxes_num: Tensor, output_size: Any, spatial_scale: float = 1.0,
             name: str | None = None) -> Tensor:
    """RoIPool: the maximum of x [N, C, H, W] over each bin of each box (boxes rounded to whole pixels)."""
    api = "roi_pool"
    x, boxes, boxes_num = _rois(api, x, boxes, boxes_num)
    out, _ = ROI_POOL(x, boxes, boxes_num, output_size=_output_size(api, output_size),
                      spatial_scale=_f32(spatial_scale))
    return out


def psroi_pool(x: Tensor, boxes: Tensor, boxes_num: Tensor, output_size: Any, spatial_scale: float = 1.0,
               name: str | None = None) -> Tensor:
    """Position-sensitive RoI pooling: bin (i, j) of output channel c averages input channel
    (c * ph + i) * pw + j over the bin, so x has C = C_out * ph * pw channels."""
    api = "psroi_pool"
    x, boxes, boxes_num = _rois(api, x, boxes, boxes_num)
    return PSROI_POOL(x, boxes, boxes_num, output_size=_output_size(api, output_size),
                      spatial_scale=_f32(spatial_scale))


class RoIAlign(nn.Layer):
    """`roi_align` with a fixed output_size and spatial_scale."""

    def __init__(self, output_size: Any, spatial_scale: float = 1.0):
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x: Tensor, boxes: Tensor, boxes_num: Tensor, aligned: bool = True) -> Tensor:
        return roi_align(x, boxes, boxes_num, self._output_size, self._spatial_scale, aligned=aligned)


class RoIPool(nn.Layer):
    """`roi_pool` with a fixed output_size and spatial_scale."""

    def __init__(self, output_size: Any, spatial_scale: float = 1.0):
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x: Tensor, boxes: Tensor, boxes_num: Tensor) -> Tensor:
        return roi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)


class PSRoIPool(nn.Layer):
    """`psroi_pool` with a fixed output_size and spatial_scale."""

    def __init__(self, output_size: Any, spatial_scale: float = 1.0):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, x: Tensor, boxes: Tensor, boxes_num: Tensor) -> Tensor:
        return psroi_pool(x, boxes, boxes_num, self.output_size, self.spatial_scale)


# ---------------------------------------------------------------- box_coder
def _box_columns(api: str, boxes: Tensor, arg: str) -> list[Tensor]:
    if boxes.shape[-1] != 4:
        raise ValueError(f"{api}: the last dimension of argument '{arg}' must be 4 (x1, y1, x2, y2), got shape "
                         f"{list(boxes.shape)}")
    return [b.squeeze(-1) for b in shape.split(boxes, 4, axis=-1)]


def _variances(api: str, prior_box_var: Any) -> list[Any]:
    """The 4 variance columns: of a [M, 4] tensor, or 4 numbers (1.0 each when None)."""
    if prior_box_var is None:
        return [1.0] * 4
    if isinstance(prior_box_var, Tensor):
        return _box_columns(api, prior_box_var, "prior_box_var")
    if isinstance(prior_box_var, (list, tuple)) and len(prior_box_var) == 4:
        return [float(v) for v in prior_box_var]
    raise TypeError(f"{api}: argument 'prior_box_var' must be a Tensor [M, 4] or a list of 4 floats, got "
                    f"{prior_box_var!r}")


def box_coder(prior_box: Tensor, prior_box_var: Any, target_box: Tensor, code_type: str = "encode_center_size",
              box_normalized: bool = True, axis: int = 0, name: str | None = None) -> Tensor:
    """Encode target boxes [N, 4] as center-size offsets from each prior box [M, 4] (-> [N, M, 4]), or decode
    offsets [N, M, 4] back into boxes (`axis` 0: prior j serves column j; 1: prior i serves row i). Unnormalized
    boxes count their last pixel (width = x2 - x1 + 1). Variances divide the encoded offsets and scale the
    decoded ones."""
    api = "box_coder"
    prior_box = as_tensor(prior_box, "prior_box", api)
    target_box = as_tensor(target_box, "target_box", api)
    if code_type not in ("encode_center_size", "decode_center_size"):
        raise ValueError(f"{api}: argument 'code_type' must be 'encode_center_size' or 'decode_center_size', got "
                         f"{code_type!r}")
    if axis not in (0, 1):
        raise ValueError(f"{api}: argument 'axis' must be 0 or 1, got {axis!r}")
    one = 0.0 if box_normalized else 1.0
    px0, py0, px1, py1 = _box_columns(api, prior_box, "prior_box")
    pw, ph = px1 - px0 + one, py1 - py0 + one
    pcx, pcy = px0 + pw / 2, py0 + ph / 2
    var = _variances(api, prior_box_var)
    if code_type == "encode_center_size":
        if target_box.ndim != 2:
            raise ValueError(f"{api}: argument 'target_box' must be [N, 4] to encode, got shape "
                             f"{list(target_box.shape)}")
        tx0, ty0, tx1, ty1 = (t.unsqueeze(1) for t in _box_columns(api, target_box, "target_box"))
        tw, th = tx1 - tx0 + one, ty1 - ty0 + one
        cols = [((tx1 + tx0) / 2 - pcx) / pw, ((ty1 + ty0) / 2 - pcy) / ph, math.log(math.abs(tw / pw)),
                math.log(math.abs(th / ph))]
        return shape.stack([c / v for c, v in zip(cols, var)], axis=-1)
    if target_box.ndim != 3:
        raise ValueError(f"{api}: argument 'target_box' must be [N, M, 4] to decode, got shape "
                         f"{list(target_box.shape)}")
    t0, t1, t2, t3 = _box_columns(api, target_box, "target_box")

    def along(p: Any) -> Any:  # a per-prior column against target's rows (axis 1) or columns (axis 0)
        return p.unsqueeze(axis) if isinstance(p, Tensor) else p

    pw, ph, pcx, pcy = along(pw), along(ph), along(pcx), along(pcy)
    v0, v1, v2, v3 = (along(v) for v in var)
    cx, cy = v0 * t0 * pw + pcx, v1 * t1 * ph + pcy
    w, h = math.exp(v2 * t2) * pw, math.exp(v3 * t3) * ph
    return shape.stack([cx - w / 2, cy - h / 2, cx + w / 2 - one, cy + h / 2 - one], axis=-1)


# ---------------------------------------------------------------- yolo_box
def yolo_box(x: Tensor, img_size: Tensor, anchors: Sequence[int], class_num: int, conf_thresh: float,
             downsample_ratio: int, clip_bbox: bool = True, name: str | None = None, scale_x_y: float = 1.0,
             iou_aware: bool = False, iou_aware_factor: float = 0.5) -> tuple[Tensor, Tensor]:
    """Decode a YOLOv3 head x [N, A * (5 + class_num), H, W] (A anchors; iou_aware adds A leading channels)
    into boxes [N, A*H*W, 4] in the pixels of img_size [N, 2] (height, width) and scores
    [N, A*H*W, class_num]; both are 0 where the objectness is below conf_thresh."""
    api = "yolo_box"
    x = as_tensor(x, "x", api)
    img_size = as_tensor(img_size, "img_size", api)
    an = len(anchors) // 2
    per = 5 + class_num
    want = an * (per + (1 if iou_aware else 0))
    if x.ndim != 4 or x.shape[1] != want:
        raise ValueError(f"{api}: argument 'x' must be [N, {want}, H, W] for {an} anchors and {class_num} classes"
                         f"{' (iou_aware)' if iou_aware else ''}, got shape {list(x.shape)}")
    n, _, h, w = x.shape
    if iou_aware:
        iou, x = x[:, :an], x[:, an:]
    p = shape.reshape(x, [n, an, per, h, w])
    sig = nn.functional.sigmoid
    size = math.cast(img_size, x.dtype)
    img_h, img_w = (shape.reshape(size[:, k], [n, 1, 1, 1]) for k in (0, 1))
    grid_x = creation.arange(w, dtype=x.dtype).reshape([1, 1, 1, w])
    grid_y = creation.arange(h, dtype=x.dtype).reshape([1, 1, h, 1])
    scale_x_y, conf_thresh, iou_aware_factor = _f32(scale_x_y), _f32(conf_thresh), _f32(iou_aware_factor)
    bias = -0.5 * (scale_x_y - 1.0)
    aw = to_tensor(np.asarray(anchors[0::2][:an], dtype=np.float64).reshape(1, an, 1, 1)).astype(x.dtype)
    ah = to_tensor(np.asarray(anchors[1::2][:an], dtype=np.float64).reshape(1, an, 1, 1)).astype(x.dtype)
    cx = (grid_x + sig(p[:, :, 0]) * scale_x_y + bias) * img_w / w
    cy = (grid_y + sig(p[:, :, 1]) * scale_x_y + bias) * img_h / h
    bw = math.exp(p[:, :, 2]) * aw * img_w / (downsample_ratio * w)
    bh = math.exp(p[:, :, 3]) * ah * img_h / (downsample_ratio * h)
    conf = sig(p[:, :, 4])
    if iou_aware:
        conf = math.pow(conf, 1.0 - iou_aware_factor) * math.pow(sig(iou), iou_aware_factor)
    x0, y0, x1, y1 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
    if clip_bbox:
        x0, y0 = math.maximum(x0, creation.zeros_like(x0)), math.maximum(y0, creation.zeros_like(y0))
        x1, y1 = math.minimum(x1, img_w - 1), math.minimum(y1, img_h - 1)
    keep = conf >= conf_thresh
    boxes = shape.stack([x0, y0, x1, y1], axis=-1)  # [N, A, H, W, 4]
    boxes = math.where(keep.unsqueeze(-1), boxes, creation.zeros_like(boxes))
    scores = conf.unsqueeze(2) * sig(p[:, :, 5:])  # [N, A, classes, H, W]
    scores = math.where(keep.unsqueeze(2), scores, creation.zeros_like(scores))
    scores = shape.transpose(scores, [0, 1, 3, 4, 2])
    return shape.reshape(boxes, [n, an * h * w, 4]), shape.reshape(scores, [n, an * h * w, class_num])


# ---------------------------------------------------------------- prior_box
def _floats(api: str, arg: str, v: Any) -> tuple[float, ...]:
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    if isinstance(v, (list, tuple)):
        return tuple(float(e) for e in v)
    raise TypeError(f"{api}: argument '{arg}' must be a float or a list of floats, got {v!r}")


def prior_box(input: Tensor, image: Tensor, min_sizes: Any, max_sizes: Any = None, aspect_ratios: Any = (1.0,),
              variance: Any = (0.1, 0.1, 0.2, 0.2), flip: bool = False, clip: bool = False, steps: Any = (0.0, 0.0),
              offset: float = 0.5, min_max_aspect_ratios_order: bool = False,
              name: str | None = None) -> tuple[Tensor, Tensor]:
    """SSD prior boxes: for each position of the feature map `input` [N, C, H, W], boxes of every min size
    (and max size) and aspect ratio centred on it, normalised by the `image` [N, C, IH, IW] size:
    boxes and their variances, both [H, W, num_priors, 4]. Only the shapes of input and image count."""
    api = "prior_box"
    input, image = as_tensor(input, "input", api), as_tensor(image, "image", api)
    mins = _floats(api, "min_sizes", min_sizes)
    maxs = () if max_sizes is None else _floats(api, "max_sizes", max_sizes)
    if maxs and len(maxs) != len(mins):
        raise ValueError(f"{api}: argument 'max_sizes' must have as many entries as 'min_sizes' ({len(mins)}), "
                         f"got {len(maxs)}")
    var = _floats(api, "variance", variance)
    if len(var) != 4:
        raise ValueError(f"{api}: argument 'variance' must hold 4 floats, got {list(var)}")
    steps = _floats(api, "steps", steps)
    if len(steps) != 2:
        raise ValueError(f"{api}: argument 'steps' must hold 2 floats (width, height), got {list(steps)}")
    return PRIOR_BOX(input, image, min_sizes=mins, max_sizes=maxs,
                     aspect_ratios=_floats(api, "aspect_ratios", aspect_ratios), variance=var, flip=bool(flip),
                     clip=bool(clip), steps=steps, offset=float(offset),
                     min_max_aspect_ratios_order=bool(min_max_aspect_ratios_order))


# ---------------------------------------------------------------- proposals
def distribute_fpn_proposals(fpn_rois: Tensor, min_level: int, max_level: int, refer_level: int, refer_scale: float,
                             pixel_offset: bool = False, rois_num: Tensor | None = None,
                             name: str | None = None) -> tuple[list[Tensor], Tensor, list[Tensor]]:
    """Spread rois [N, 4] over FPN levels min_level..max_level by scale: level =
    floor(log2(sqrt(area) / refer_scale + 1e-8) + refer_level), clamped. Returns the rois of each level,
    restore_ind [N, 1] (int32: where each roi went in the levels' concatenation) and the rois per image of
    each level."""
    api = "distribute_fpn_proposals"
    fpn_rois = as_tensor(fpn_rois, "fpn_rois", api)
    if not (max_level > 0 and min_level > 0):
        raise AssertionError(f"{api}: min_level and max_level should be greater than 0")
    levels = max_level - min_level + 1
    if not 1 < levels < 100:
        raise AssertionError(f"{api}: max_level should be greater than min_level, with fewer than 100 levels")
    if rois_num is None:
        raise AssertionError(f"{api}: rois_num should not be None in dygraph mode.")
    out = DISTRIBUTE_FPN_PROPOSALS(fpn_rois, as_tensor(rois_num, "rois_num", api), min_level=int(min_level),
                                   max_level=int(max_level), refer_level=int(refer_level),
                                   refer_scale=float(refer_scale), pixel_offset=bool(pixel_offset))
    return list(out[:levels]), out[levels], list(out[levels + 1:])


def generate_proposals(scores: Tensor, bbox_deltas: Tensor, img_size: Tensor, anchors: Tensor, variances: Tensor,
                       pre_nms_top_n: int = 6000, post_nms_top_n: int = 1000, nms_thresh: float = 0.5,
                       min_size: float = 0.1, eta: float = 1.0, pixel_offset: bool = False,
                       return_rois_num: bool = False, name: str | None = None) -> tuple:
    """RPN proposals per image: the pre_nms_top_n best-scored anchors [H, W, A, 4] moved by bbox_deltas
    [N, 4A, H, W] (with variances), clipped to img_size [N, 2] (height, width), boxes under min_size dropped,
    then NMS (threshold shrinking by eta) keeping post_nms_top_n. Returns (rois [M, 4], probs [M, 1],
    rois per image [N] int32 or None)."""
    api = "generate_proposals"
    args = [as_tensor(t, arg, api) for t, arg in ((scores, "scores"), (bbox_deltas, "bbox_deltas"),
                                                 (img_size, "img_size"), (anchors, "anchors"),
                                                 (variances, "variances"))]
    rois, probs, num = GENERATE_PROPOSALS(*args, pre_nms_top_n=int(pre_nms_top_n), post_nms_top_n=int(post_nms_top_n),
                                          nms_thresh=_f32(nms_thresh), min_size=_f32(min_size), eta=_f32(eta),
                                          pixel_offset=bool(pixel_offset))
    return rois, probs, num if return_rois_num else None


def matrix_nms(bboxes: Tensor, scores: Tensor, score_threshold: float, post_threshold: float, nms_top_k: int,
               keep_top_k: int, use_gaussian: bool = False, gaussian_sigma: float = 2.0, background_label: int = 0,
               normalized: bool = True, return_index: bool = False, return_rois_num: bool = True,
               name: str | None = None) -> tuple:
    """Matrix NMS over bboxes [N, M, 4] and per-class scores [N, C, M]: per class, the nms_top_k candidates above
    score_threshold have their scores decayed by their overlaps (linear, or gaussian with gaussian_sigma);
    those above post_threshold are kept, the keep_top_k best per image. Returns (out [K, 6] rows of
    [label, score, x1, y1, x2, y2], rois per image [N] int32 or None, index [K, 1] int32 into N * M or None)."""
    api = "matrix_nms"
    out, index, num = MATRIX_NMS(as_tensor(bboxes, "bboxes", api), as_tensor(scores, "scores", api),
                                 score_threshold=_f32(score_threshold), post_threshold=_f32(post_threshold),
                                 nms_top_k=int(nms_top_k), keep_top_k=int(keep_top_k), use_gaussian=bool(use_gaussian),
                                 gaussian_sigma=_f32(gaussian_sigma), background_label=int(background_label),
                                 normalized=bool(normalized))
    return out, num if return_rois_num else None, index if return_index else None
