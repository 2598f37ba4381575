"""Common layers in functional form: linear, dropout (and its 2-D/3-D/alpha forms),
embedding, one_hot, cosine_similarity, pairwise_distance, label_smooth.

`linear` is one op (matmul + bias) whose gradient is two matmul ops and a sum, each with
its own cheap gradient rule, so training steps cost few dispatches and double backward
still works. Random ops draw from the process-wide generator (`runtime.generator`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..generator import default_generator
from ..tensor import Tensor, as_tensor
from . import math as _m
from . import meta_utils as mu
from . import reduction as _r
from .registry import Sample, TensorSpec, defop, normal_sampler
from .shape import reshape

__all__ = ["linear", "dropout", "dropout2d", "dropout3d", "alpha_dropout", "embedding", "one_hot",
           "cosine_similarity", "pairwise_distance", "label_smooth"]

_rng = np.random.default_rng(99)
_normal = normal_sampler(_rng)
_F32 = np.dtype("float32")


# ---------------------------------------------------------------- linear
def _linear_meta(x: TensorSpec, weight: TensorSpec, bias: TensorSpec | None) -> TensorSpec:
    mu.require_float("linear", x)
    if len(weight.shape) != 2:
        raise ValueError(f"linear: argument 'weight' must be 2-D [in_features, out_features], "
                         f"got shape {mu.shape_str(weight.shape)}")
    if len(x.shape) < 1 or x.shape[-1] != weight.shape[0]:
        raise ValueError(f"linear: the last dimension of argument 'x' {mu.shape_str(x.shape)} must equal "
                         f"in_features, the first dimension of argument 'weight' {mu.shape_str(weight.shape)}")
    if weight.dtype != x.dtype:
        raise TypeError(f"linear: argument 'weight' has dtype {weight.dtype.name} but 'x' has {x.dtype.name} "
                        "(they must match)")
    if bias is not None:
        if bias.dtype != x.dtype:
            raise TypeError(f"linear: argument 'bias' has dtype {bias.dtype.name} but 'x' has {x.dtype.name}")
        if int(np.prod(bias.shape)) != weight.shape[1] or len(bias.shape) > 1:
            raise ValueError(f"linear: argument 'bias' must have shape [{weight.shape[1]}] (out_features), "
                             f"got {mu.shape_str(bias.shape)}")
    return TensorSpec(tuple(x.shape[:-1]) + (weight.shape[1],), x.dtype)


def _linear_kernel(xp, x, weight, bias):
    out = xp.matmul(x, weight)
    if bias is not None:
        out += bias
    return out


def _g_linear(ctx, g):
    x, w, b = ctx.inputs
    need = ctx.needs_input_grad
    gx = _LINEAR_GRAD_INPUT(g, w) if need[0] else None
    gw = _LINEAR_GRAD_WEIGHT(x, g) if need[1] else None
    gb = None
    if need[2]:
        gb = _r.sum(g, axis=list(range(len(g.shape) - 1))) if len(g.shape) > 1 else g
        if list(b.shape) != list(gb.shape):
            gb = reshape(gb, list(b.shape))
    return gx, gw, gb


def _lgi_meta(out_grad: TensorSpec, weight: TensorSpec) -> TensorSpec:
    return TensorSpec(tuple(out_grad.shape[:-1]) + (weight.shape[0],), out_grad.dtype)


def _lgw_meta(x: TensorSpec, out_grad: TensorSpec) -> TensorSpec:
    return TensorSpec((x.shape[-1], out_grad.shape[-1]), x.dtype)


def _lgw_kernel(xp, x, out_grad):
    """x^T @ g with every leading dimension folded into the batch."""
    return xp.matmul(x.reshape(-1, x.shape[-1]).T, out_grad.reshape(-1, out_grad.shape[-1]))


def _g_lgi(ctx, gg):
    g, w = ctx.inputs  # out = g @ w^T
    need = ctx.needs_input_grad
    return (_LINEAR(gg, w, None) if need[0] else None, _LINEAR_GRAD_WEIGHT(gg, g) if need[1] else None)


def _g_lgw(ctx, gg):
    x, g = ctx.inputs  # out = x^T @ g
    need = ctx.needs_input_grad
    return (_LINEAR_GRAD_INPUT(g, gg) if need[0] else None, _LINEAR(x, gg, None) if need[1] else None)


_LINEAR = defop("linear", kernel=_linear_kernel, meta=_linear_meta, grad=_g_linear, inputs=("x", "weight", "bias"),
                samples=lambda: [Sample((_normal(4, 3), _normal(3, 5), _normal(5))),
                                 Sample((_normal(2, 4, 3), _normal(3, 2), None)),
                                 Sample((_normal(3), _normal(3, 2), _normal(2)))])
_LINEAR_GRAD_INPUT = defop("linear_grad_input", kernel=lambda xp, out_grad, weight: xp.matmul(out_grad, weight.T),
                           meta=_lgi_meta, grad=_g_lgi, inputs=("out_grad", "weight"),
                           samples=lambda: [Sample((_normal(4, 5), _normal(3, 5))),
                                            Sample((_normal(2, 4, 2), _normal(3, 2)))])
_LINEAR_GRAD_WEIGHT = defop("linear_grad_weight", kernel=_lgw_kernel, meta=_lgw_meta, grad=_g_lgw,
                            inputs=("x", "out_grad"),
                            samples=lambda: [Sample((_normal(4, 3), _normal(4, 5))),
                                             Sample((_normal(2, 4, 3), _normal(2, 4, 2))),
                                             Sample((_normal(3), _normal(2)))])


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None, name: str | None = None) -> Tensor:
    """x @ weight + bias, with weight of shape [in_features, out_features] as in Paddle."""
    x = as_tensor(x, "x", "linear")
    weight = as_tensor(weight, "weight", "linear")
    if bias is not None:
        bias = as_tensor(bias, "bias", "linear")
    return _LINEAR(x, weight, bias)


# ---------------------------------------------------------------- dropout
def _generator():
    return default_generator().rng


def _keep_mask(xp, shape: tuple, p: float) -> Any:
    """A bool array of `shape`: True with probability 1 - p (drawn on the host)."""
    keep = _generator().random(shape, dtype=np.float32) >= p
    return keep if xp is np else xp.asarray(keep)


def _mask_shape(shape: tuple, axis: tuple | None) -> tuple:
    return tuple(shape) if axis is None else tuple(d if i in axis else 1 for i, d in enumerate(shape))


_DROPOUT_MODES = ("upscale_in_train", "downscale_in_infer")


def _dropout_meta(x: TensorSpec, *, p: float, axis: tuple | None, mode: str) -> tuple:
    mu.require_float("dropout", x)
    if axis is not None:
        for a in axis:
            if not 0 <= a < len(x.shape):
                raise ValueError(f"dropout: argument 'axis' {list(axis)} is out of range for x of shape "
                                 f"{mu.shape_str(x.shape)}")
    return x, TensorSpec(_mask_shape(x.shape, axis), x.dtype)


def _dropout_kernel(xp, x, *, p, axis, mode):
    mask = _keep_mask(xp, _mask_shape(x.shape, axis), p).astype(x.dtype)
    if mode == "upscale_in_train":
        mask *= 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return x * mask, mask


def _g_mask(ctx, g, *_unused):
    """out = x * mask (+ constant): the gradient is g * mask."""
    return (_m.multiply(g, ctx.outputs[1]),)


_DROPOUT = defop("dropout", kernel=_dropout_kernel, meta=_dropout_meta, grad=_g_mask,
                 attrs={"p": 0.5, "axis": None, "mode": "upscale_in_train"}, random=True, save_outputs=True,
                 nondiff_outputs=(1,),
                 samples=lambda: [Sample((_normal(4, 5),), {"p": 0.3, "axis": None, "mode": "upscale_in_train"}),
                                  Sample((_normal(2, 3, 4),),
                                         {"p": 0.5, "axis": (0, 1), "mode": "downscale_in_infer"})])


def _check_p(api: str, p: Any) -> float:
    p = mu.number_arg(api, "p", p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{api}: argument 'p' must be in [0, 1], got {p}")
    return p


def _axes(api: str, axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axis = [axis]
    if not isinstance(axis, (list, tuple)):
        raise TypeError(f"{api}: argument 'axis' must be an int, a list of ints or None, got {type(axis).__name__}")
    return mu.normalize_axes(api, tuple(axis), ndim)


def dropout(x: Tensor, p: float = 0.5, axis: Any = None, training: bool = True,
            mode: str = "upscale_in_train", name: str | None = None) -> Tensor:
    """Zero each element (or slice along `axis`) with probability p while training."""
    x = as_tensor(x, "x", "dropout")
    p = _check_p("dropout", p)
    if mode not in _DROPOUT_MODES:
        raise ValueError(f"dropout: argument 'mode' must be one of {_DROPOUT_MODES}, got {mode!r}")
    axes = _axes("dropout", axis, x.ndim)
    if not training:
        return x if mode == "upscale_in_train" else _m.scale(x, 1.0 - p)
    if p == 0.0:
        return x
    return _DROPOUT(x, p=p, axis=axes, mode=mode)[0]


def _dropout_nd(api: str, ndim: int, x: Tensor, p: float, training: bool, data_format: str) -> Tensor:
    x = as_tensor(x, "x", api)
    formats = {4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}[ndim]
    if data_format not in formats:
        raise ValueError(f"{api}: argument 'data_format' must be one of {formats}, got {data_format!r}")
    if x.ndim != ndim:
        raise ValueError(f"{api}: argument 'x' must be {ndim}-D ({data_format}), got shape {x.shape}")
    channel = 1 if data_format == formats[0] else ndim - 1
    return dropout(x, p, axis=[0, channel], training=training)


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, data_format: str = "NCHW",
              name: str | None = None) -> Tensor:
    """Drop whole channels of a 4-D input."""
    return _dropout_nd("dropout2d", 4, x, p, training, data_format)


def dropout3d(x: Tensor, p: float = 0.5, training: bool = True, data_format: str = "NCDHW",
              name: str | None = None) -> Tensor:
    """Drop whole channels of a 5-D input."""
    return _dropout_nd("dropout3d", 5, x, p, training, data_format)


_SELU_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of selu: where a dropped unit sits


def _alpha_dropout_kernel(xp, x, *, p):
    keep = _keep_mask(xp, x.shape, p)
    a = ((1.0 - p) * (1.0 + p * _SELU_ALPHA_PRIME ** 2)) ** -0.5
    mask = keep.astype(x.dtype)
    out = x * mask
    out += (1.0 - mask) * _SELU_ALPHA_PRIME
    out *= a
    out += -a * _SELU_ALPHA_PRIME * p
    mask *= a
    return out, mask


def _alpha_dropout_meta(x: TensorSpec, *, p: float) -> tuple:
    mu.require_float("alpha_dropout", x)
    return x, x


_ALPHA_DROPOUT = defop("alpha_dropout", kernel=_alpha_dropout_kernel, meta=_alpha_dropout_meta, grad=_g_mask,
                       attrs={"p": 0.5}, random=True, save_outputs=True, nondiff_outputs=(1,),
                       samples=lambda: [Sample((_normal(4, 5),), {"p": 0.2})])


def alpha_dropout(x: Tensor, p: float = 0.5, training: bool = True, name: str | None = None) -> Tensor:
    """Dropout that keeps selu's zero mean and unit variance (dropped units go to selu's floor)."""
    x = as_tensor(x, "x", "alpha_dropout")
    p = _check_p("alpha_dropout", p)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return _m.scale(x, 0.0)
    return _ALPHA_DROPOUT(x, p=p)[0]


# ---------------------------------------------------------------- embedding
def _check_index_range(ids, size: int, op: str, arg: str, what: str) -> None:
    """Raise ValueError naming the first index outside [0, size) (a data-dependent check)."""
    if ids.size == 0:
        return
    lo, hi = int(ids.min()), int(ids.max())
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{op}: {what} {bad} in argument '{arg}' is out of range [0, {size})")


def _embedding_meta(x: TensorSpec, weight: TensorSpec, *, padding_idx: int | None) -> TensorSpec:
    mu.require_dtype_kind("embedding", x, "iu", "an integer tensor (int32/int64)")
    mu.require_float("embedding", weight, "weight")
    if len(weight.shape) != 2:
        raise ValueError(f"embedding: argument 'weight' must be 2-D [num_embeddings, embedding_dim], "
                         f"got shape {mu.shape_str(weight.shape)}")
    return TensorSpec(tuple(x.shape) + (weight.shape[1],), weight.dtype)


def _embedding_kernel(xp, x, weight, *, padding_idx):
    _check_index_range(x, weight.shape[0], "embedding", "x", "index")
    out = weight[x]
    if padding_idx is not None:
        out[x == padding_idx] = 0
    return out


def _embedding_grad_meta(x: TensorSpec, out_grad: TensorSpec, *, num_embeddings: int,
                         padding_idx: int | None) -> TensorSpec:
    return TensorSpec((num_embeddings, out_grad.shape[-1]), out_grad.dtype)


def _embedding_grad_kernel(xp, x, out_grad, *, num_embeddings, padding_idx):
    """Scatter-add the rows of out_grad into a [num_embeddings, dim] zero matrix."""
    dim = out_grad.shape[-1]
    ids = x.reshape(-1)
    rows = out_grad.reshape(-1, dim)
    out = xp.zeros((num_embeddings, dim), dtype=out_grad.dtype)
    if ids.size:
        if xp is np:  # sort once, then sum each run of equal ids (much faster than np.add.at)
            order = np.argsort(ids, kind="stable")
            sorted_ids = ids[order]
            starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
            out[sorted_ids[starts]] = np.add.reduceat(rows[order], starts, axis=0)
        else:
            import cupyx  # noqa: PLC0415 - only reached for CuPy arrays
            cupyx.scatter_add(out, ids, rows)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def _g_embedding(ctx, g):
    x, w = ctx.inputs
    return None, _EMBEDDING_GRAD(x, g, num_embeddings=w.shape[0], padding_idx=ctx.attrs["padding_idx"])


def _g_embedding_grad(ctx, gg):
    x = ctx.inputs[0]
    return None, _EMBEDDING(x, gg, padding_idx=ctx.attrs["padding_idx"])


def _ids(*shape, high=5):
    return _rng.integers(0, high, size=shape)


_EMBEDDING = defop("embedding", kernel=_embedding_kernel, meta=_embedding_meta, grad=_g_embedding,
                   attrs={"padding_idx": None}, inputs=("x", "weight"),
                   samples=lambda: [Sample((_ids(2, 3), _normal(5, 4)), {"padding_idx": None}),
                                    Sample((np.array([[0, 1, 1], [3, 1, 0]]), _normal(5, 2)), {"padding_idx": 1})])
_EMBEDDING_GRAD = defop("embedding_grad", kernel=_embedding_grad_kernel, meta=_embedding_grad_meta,
                        grad=_g_embedding_grad, attrs={"num_embeddings": 1, "padding_idx": None},
                        inputs=("x", "out_grad"),
                        samples=lambda: [Sample((np.array([[0, 2, 2], [4, 2, 0]]), _normal(2, 3, 4)),
                                                {"num_embeddings": 5, "padding_idx": None}),
                                         Sample((np.array([1, 3, 1]), _normal(3, 2)),
                                                {"num_embeddings": 4, "padding_idx": 3})])


def embedding(x: Tensor, weight: Tensor, padding_idx: int | None = None, sparse: bool = False,
              name: str | None = None) -> Tensor:
    """Rows of `weight` picked by the integer ids in x; the padding_idx row reads (and learns) zeros."""
    x = as_tensor(x, "x", "embedding")
    weight = as_tensor(weight, "weight", "embedding")
    if padding_idx is not None:
        if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
            raise TypeError(f"embedding: argument 'padding_idx' must be an int or None, got {padding_idx!r}")
        rows = weight.shape[0] if weight.ndim else 0
        if not -rows <= padding_idx < rows:
            raise ValueError(f"embedding: argument 'padding_idx' = {padding_idx} is out of range "
                             f"[-{rows}, {rows}) for a weight with {rows} rows")
        padding_idx = int(padding_idx) % rows
    return _EMBEDDING(x, weight, padding_idx=padding_idx)


# ---------------------------------------------------------------- one_hot
def _one_hot_meta(x: TensorSpec, *, num_classes: int, axis: int, dtype: np.dtype) -> TensorSpec:
    mu.require_dtype_kind("one_hot", x, "iu", "an integer tensor (int32/int64)")
    if num_classes < 1:
        raise ValueError(f"one_hot: argument 'num_classes' must be a positive int, got {num_classes}")
    shape = list(x.shape)
    shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, num_classes)
    return TensorSpec(tuple(shape), dtype)


def _one_hot_kernel(xp, x, *, num_classes, axis, dtype):
    _check_index_range(x, num_classes, "one_hot", "x", "label value")
    flat = x.reshape(-1)
    out = xp.zeros((flat.size, num_classes), dtype=dtype)
    out[xp.arange(flat.size), flat] = 1
    out = out.reshape(tuple(x.shape) + (num_classes,))
    if axis not in (-1, x.ndim):
        out = xp.ascontiguousarray(xp.moveaxis(out, -1, axis))
    return out


_ONE_HOT = defop("one_hot", kernel=_one_hot_kernel, meta=_one_hot_meta,
                 attrs={"num_classes": 1, "axis": -1, "dtype": _F32},
                 samples=lambda: [Sample((_ids(2, 3),), {"num_classes": 5, "axis": -1, "dtype": _F32}),
                                  Sample((_ids(2, 3),), {"num_classes": 6, "axis": 1, "dtype": np.dtype("float64")})])


def one_hot(x: Tensor, num_classes: int, name: str | None = None) -> Tensor:
    """float32 one-hot vectors (a new last dimension of size num_classes) for integer labels."""
    x = as_tensor(x, "x", "one_hot")
    if isinstance(num_classes, Tensor):
        num_classes = num_classes.item()
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: argument 'num_classes' must be an int, got {type(num_classes).__name__}")
    return _ONE_HOT(x, num_classes=int(num_classes), axis=-1, dtype=_F32)


# ---------------------------------------------------------------- similarity, distance, label smoothing
def cosine_similarity(x1: Tensor, x2: Tensor, axis: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / sqrt(max(|x1|^2 |x2|^2, eps^2)) along `axis` (x1 and x2 broadcast)."""
    x1 = as_tensor(x1, "x1", "cosine_similarity")
    x2 = as_tensor(x2, "x2", "cosine_similarity")
    eps = mu.number_arg("cosine_similarity", "eps", eps)
    w12 = _r.sum(_m.multiply(x1, x2), axis=axis)
    w1 = _r.sum(_m.multiply(x1, x1), axis=axis)
    w2 = _r.sum(_m.multiply(x2, x2), axis=axis)
    return _m.divide(w12, _m.sqrt(_m.clip(_m.multiply(w1, w2), min=eps * eps)))


def pairwise_distance(x: Tensor, y: Tensor, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                      name: str | None = None) -> Tensor:
    """The p-norm of x - y + epsilon over the last axis."""
    x = as_tensor(x, "x", "pairwise_distance")
    y = as_tensor(y, "y", "pairwise_distance")
    p = mu.number_arg("pairwise_distance", "p", p)
    d = _m.add(_m.subtract(x, y), mu.number_arg("pairwise_distance", "epsilon", epsilon))
    if p == float("inf"):
        return _r.max(_m.abs(d), axis=-1, keepdim=keepdim)
    if p == float("-inf"):
        return _r.min(_m.abs(d), axis=-1, keepdim=keepdim)
    if p == 0:
        return _m.cast(_r.sum(_m.not_equal(d, 0.0), axis=-1, keepdim=keepdim), d.dtype)
    if p == 2.0:
        return _m.sqrt(_r.sum(_m.multiply(d, d), axis=-1, keepdim=keepdim))
    return _m.pow(_r.sum(_m.pow(_m.abs(d), p), axis=-1, keepdim=keepdim), 1.0 / p)


def label_smooth(label: Tensor, prior_dist: Tensor | None = None, epsilon: float = 0.1,
                 name: str | None = None) -> Tensor:
    """(1 - epsilon) * label + epsilon * prior (uniform over the last axis by default)."""
    label = as_tensor(label, "label", "label_smooth")
    epsilon = mu.number_arg("label_smooth", "epsilon", epsilon)
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"label_smooth: argument 'epsilon' must be in [0, 1], got {epsilon}")
    if label.dtype.np_dtype.kind != "f":
        raise TypeError(f"label_smooth: argument 'label' must be a floating tensor (one-hot), got {label.dtype}")
    smoothed = _m.scale(label, 1.0 - epsilon)
    if prior_dist is None:
        return _m.add(smoothed, epsilon / label.shape[-1])
    prior_dist = as_tensor(prior_dist, "prior_dist", "label_smooth")
    return _m.add(smoothed, _m.scale(prior_dist, epsilon))

