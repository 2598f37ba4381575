"""Losses: cross_entropy (hard/soft labels, class weights, ignore_index, label smoothing),
softmax_with_cross_entropy, nll_loss, mse/l1/smooth_l1, binary cross-entropy (with logits),
kl_div, a few margin losses, CTC (warp-ctc's forward and gradient in one op) and the Poisson and Gaussian
negative log-likelihoods, with Paddle's reduction rules.

Hard-label cross-entropy with softmax is ONE op (log-softmax, pick, weight, reduce; it also
keeps each sample's max and sum of exponentials) whose gradient is ONE fused op,
(exp(x - max) / sum - onehot) * coefficient. When the backward pass is itself recorded
(create_graph=True) the gradient is composed from differentiable ops instead, so double
backward works. `nll_loss` is the same pick without the softmax; its gradient is a scatter
that does not depend on the input's values (and is linear in the incoming gradient).
"""
from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from .. import place as _place
from ..tensor import Tensor, as_tensor
from . import math as _m
from . import meta_utils as mu
from .activation import log_sigmoid, log_softmax, relu, shifted_logits, softmax, softplus
from .common import _ONE_HOT, one_hot, pairwise_distance
from .creation import ones_like
from .grad_mode import no_grad as _no_grad
from .grad_mode import state as _grad_state
from .grad_utils import unbroadcast
from .reduction import mean, sum as _sum
from .registry import Sample, TensorSpec, defop, normal_sampler
from .gather import gather, index_sample
from .shape import reshape, squeeze

__all__ = ["cross_entropy", "softmax_with_cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "log_loss", "square_error_cost", "sigmoid_focal_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "multi_label_soft_margin_loss", "dice_loss",
           "ctc_loss", "poisson_nll_loss", "gaussian_nll_loss", "multi_margin_loss", "triplet_margin_with_distance_loss"]

_rng = np.random.default_rng(5)
_normal = normal_sampler(_rng)
_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(api: str, reduction: Any, allowed: tuple = _REDUCTIONS) -> str:
    if reduction not in allowed:
        raise ValueError(f"{api}: argument 'reduction' must be one of {', '.join(map(repr, allowed))}, "
                         f"got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return _sum(loss)
    return loss


def _same_shape(api: str, a: Tensor, b: Tensor, names: tuple[str, str]) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{api}: argument '{names[0]}' {a.shape} and argument '{names[1]}' {b.shape} "
                         "must have the same shape")


# ---------------------------------------------------------------- hard labels: shared pieces
_HARD_ATTRS = {"axis": -1, "ignore_index": -100, "reduction": "mean", "keepdim": False, "mean_over_valid": False}


def _hard_label_meta(op: str, x: TensorSpec, label: TensorSpec, weight: TensorSpec | None, axis: int,
                     reduction: str, keepdim: bool) -> TensorSpec:
    """Check logits/label/weight of a hard-label loss and give the loss's spec."""
    mu.require_float(op, x, "input")
    ax = mu.normalize_axis(op, axis, len(x.shape))
    if label.dtype.kind not in "iu":
        raise TypeError(f"{op}: argument 'label' must be an int64 or int32 tensor of class indices, got "
                        f"{label.dtype.name} (pass soft_label=True for probability labels)")
    batch = tuple(x.shape[:ax]) + tuple(x.shape[ax + 1:])
    keep = tuple(x.shape[:ax]) + (1,) + tuple(x.shape[ax + 1:])
    if tuple(label.shape) not in (batch, keep):
        raise ValueError(f"{op}: argument 'label' has shape {mu.shape_str(label.shape)}, but input "
                         f"{mu.shape_str(x.shape)} (classes on axis {ax}) needs {mu.shape_str(batch)} or "
                         f"{mu.shape_str(keep)}")
    if weight is not None:
        if tuple(weight.shape) != (x.shape[ax],):
            raise ValueError(f"{op}: argument 'weight' must have shape [{x.shape[ax]}] (one weight per class), "
                             f"got {mu.shape_str(weight.shape)}")
        if weight.dtype != x.dtype:
            raise TypeError(f"{op}: argument 'weight' has dtype {weight.dtype.name} but input has {x.dtype.name}")
    if reduction != "none":
        return TensorSpec((), x.dtype)
    return TensorSpec(keep if keepdim else batch, x.dtype)


def _classes_last(xp, x, axis: int):
    """x with its class axis moved last (a view), and the normalised axis."""
    ax = axis % x.ndim
    return (x if ax == x.ndim - 1 else xp.moveaxis(x, ax, -1)), ax


def _hard_labels(xp, op: str, label, weight, x, ignore_index: int, reduction: str, mean_over_valid: bool):
    """(labels safe to index with, per-sample weights or None, mean denominator) of a hard-label loss.

    Raises ValueError naming an out-of-range label (labels equal to ignore_index are skipped).
    """
    classes = x.shape[-1]
    lab = label.reshape(x.shape[:-1])
    valid = None
    if lab.size:
        lo, hi = int(lab.min()), int(lab.max())
        if lo < 0 or hi >= classes or 0 <= ignore_index < classes:
            valid = lab != ignore_index
            bad = valid & ((lab < 0) | (lab >= classes))
            if bool(bad.any()):
                value = int(lab[bad].reshape(-1)[0])
                raise ValueError(f"{op}: label value {value} is out of range [0, {classes}) for an input with "
                                 f"{classes} classes (ignore_index={ignore_index})")
            lab = xp.where(valid, lab, 0)
    sample_w = None
    if weight is not None:
        sample_w = weight[lab]
        if valid is not None:
            sample_w = sample_w * valid
    elif valid is not None:
        sample_w = valid.astype(x.dtype)
    denom = 1.0
    if reduction == "mean":
        if sample_w is not None and (weight is not None or mean_over_valid):
            denom = float(sample_w.sum())
        else:
            denom = float(lab.size)
        denom = denom or 1.0  # Paddle divides by (total + (total == 0))
    return lab, sample_w, denom


def _finish(xp, loss, sample_w, denom: float, reduction: str, keep_shape: tuple | None, dtype):
    """Weight, reduce and shape per-sample losses."""
    if sample_w is not None:
        loss = loss * sample_w
    if reduction == "none":
        return (loss if keep_shape is None else loss.reshape(keep_shape)).astype(dtype, copy=False)
    total = loss.sum()
    return xp.asarray(total / denom if reduction == "mean" else total, dtype=dtype)


def _keep_shape(x, ax: int, keepdim: bool) -> tuple | None:
    return tuple(x.shape[:ax]) + (1,) + tuple(x.shape[ax + 1:]) if keepdim else None


def _coefficient(xp, out_grad, sample_w, denom: float, reduction: str, batch_shape: tuple):
    """d loss / d (per-sample loss): the out grad spread over samples, weighted, over the denominator."""
    if reduction == "none":
        c = out_grad.reshape(batch_shape)
    else:
        c = out_grad.reshape(()) / denom if reduction == "mean" else out_grad.reshape(())
    return c if sample_w is None else c * sample_w


def _sub_at_labels(xp, p, lab, c):
    """p[..., lab] -= c on a classes-last array (made contiguous, so the write lands in it)."""
    p = xp.ascontiguousarray(p)
    flat = p.reshape(-1, p.shape[-1])
    flat[xp.arange(flat.shape[0]), lab.reshape(-1)] -= c if getattr(c, "ndim", 0) == 0 else c.reshape(-1)
    return p


def _restore_axis(xp, p, ax: int):
    return p if ax == p.ndim - 1 else xp.ascontiguousarray(xp.moveaxis(p, -1, ax))


def _linear_in_g(gg, unit, g, axis: int, reduction: str) -> Tensor:
    """Gradient w.r.t. g of an op linear in g: <gg, op(g = 1)>, summed back to g's shape."""
    prod = _m.multiply(gg, unit)
    return reshape(_sum(prod, axis=axis) if reduction == "none" else _sum(prod), list(g.shape))


# ---------------------------------------------------------------- fused softmax cross-entropy
def _ce_meta(logits, label, weight, *, axis, ignore_index, reduction, keepdim, mean_over_valid):
    loss = _hard_label_meta("cross_entropy", logits, label, weight, axis, reduction, keepdim)
    ax = axis % len(logits.shape)
    return loss, TensorSpec(tuple(logits.shape[:ax]) + tuple(logits.shape[ax + 1:]) + (2,), logits.dtype)


def _ce_kernel(xp, logits, label, weight, *, axis, ignore_index, reduction, keepdim, mean_over_valid):
    """(loss, per-sample [max, sum of exp(x - max)]); the backward reads those instead of recomputing.

    The shifted logits are floored at -64 like softmax's, so the loss is Paddle's -log(softmax[label]).
    """
    x, ax = _classes_last(xp, logits, axis)
    lab, sample_w, denom = _hard_labels(xp, "cross_entropy", label, weight, x, ignore_index, reduction,
                                        mean_over_valid)
    m = x.max(axis=-1, keepdims=True)
    z = shifted_logits(xp, x, axis=-1, shift=m)
    classes = z.shape[-1]
    picked = z.reshape(-1, classes)[xp.arange(lab.size), lab.reshape(-1)].reshape(lab.shape)
    xp.exp(z, out=z)
    total = z.sum(axis=-1)
    loss = _finish(xp, xp.log(total) - picked, sample_w, denom, reduction, _keep_shape(logits, ax, keepdim),
                   logits.dtype)
    stats = xp.empty(total.shape + (2,), logits.dtype)  # written in place: np.stack costs more than the math
    stats[..., 0] = m[..., 0]
    stats[..., 1] = total
    return loss, stats


def _ce_grad_kernel(xp, logits, label, weight, stats, out_grad, *, axis, ignore_index, reduction, keepdim,
                    mean_over_valid):
    """(softmax(logits) - onehot(label)) * coefficient, softmax = exp(x - max) / sum as the forward had it
    (floored shift included)."""
    x, ax = _classes_last(xp, logits, axis)
    lab, sample_w, denom = _hard_labels(xp, "cross_entropy", label, weight, x, ignore_index, reduction,
                                        mean_over_valid)
    p = shifted_logits(xp, x, axis=-1, shift=stats[..., :1])
    xp.exp(p, out=p)
    p /= stats[..., 1:]
    p = _sub_at_labels(xp, p, lab, 1.0)
    if sample_w is None and reduction != "none":  # one scalar factor, applied as a hand-written step would
        if reduction == "mean":
            p /= denom
        g = out_grad.reshape(())
        if g != 1:
            p *= g
    else:
        p *= _coefficient(xp, out_grad, sample_w, denom, reduction, x.shape[:-1])[..., None]
    return _restore_axis(xp, p, ax)


def _g_ce(ctx, g, _stats_grad):
    logits, label, weight = ctx.inputs
    a = ctx.attrs
    if _grad_state.enabled:  # recorded backward: c * softmax - c * onehot from differentiable ops
        ax = a["axis"] % len(logits.shape)
        onehot_part = _NLL_GRAD(logits, label, weight, g, **a)  # -c * onehot
        c = _m.neg(_sum(onehot_part, axis=ax, keepdim=True))
        return _m.add(_m.multiply(c, softmax(logits, axis=ax)), onehot_part), None, None
    return _CE_GRAD(logits, label, weight, ctx.outputs[1], g, **a), None, None


# ---------------------------------------------------------------- nll (pick of log-probabilities)
def _nll_meta(input, label, weight, *, axis, ignore_index, reduction, keepdim, mean_over_valid):  # noqa: A002
    return _hard_label_meta("nll_loss", input, label, weight, axis, reduction, keepdim)


def _nll_kernel(xp, input, label, weight, *, axis, ignore_index, reduction, keepdim, mean_over_valid):  # noqa: A002
    x, ax = _classes_last(xp, input, axis)
    lab, sample_w, denom = _hard_labels(xp, "nll_loss", label, weight, x, ignore_index, reduction, mean_over_valid)
    loss = -xp.take_along_axis(x, lab[..., None], axis=-1)[..., 0]
    return _finish(xp, loss, sample_w, denom, reduction, _keep_shape(input, ax, keepdim), input.dtype)


def _nll_grad_meta(input, label, weight, out_grad, **attrs):  # noqa: A002
    return input


def _nll_grad_kernel(xp, input, label, weight, out_grad, *, axis, ignore_index, reduction, keepdim,  # noqa: A002
                     mean_over_valid):
    x, ax = _classes_last(xp, input, axis)
    lab, sample_w, denom = _hard_labels(xp, "nll_loss", label, weight, x, ignore_index, reduction, mean_over_valid)
    c = _coefficient(xp, out_grad, sample_w, denom, reduction, x.shape[:-1])
    out = xp.zeros(x.shape, dtype=input.dtype)
    return _restore_axis(xp, _sub_at_labels(xp, out, lab, c), ax)


def _g_nll(ctx, g):
    x, label, weight = ctx.inputs
    return _NLL_GRAD(x, label, weight, g, **ctx.attrs), None, None


def _g_nll_grad(ctx, gg):
    x, label, weight, g = ctx.inputs
    a = ctx.attrs
    gout = None
    if ctx.needs_input_grad[3]:
        unit = _NLL_GRAD(x, label, weight, ones_like(g), **a)
        gout = _linear_in_g(gg, unit, g, a["axis"] % len(x.shape), a["reduction"])
    return None, None, None, gout


def _signed_attrs(fn, positional=("input", "label", "weight", "out_grad")):
    """Meta functions taking the shared hard-label attributes by keyword."""
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in positional]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY) for a in _HARD_ATTRS]
    fn.__signature__ = inspect.Signature(params)
    return fn


def _hard_samples(reductions=("mean", "none", "sum"), with_grad=False, positive=False):
    def make():
        out = []
        for i, red in enumerate(reductions):
            x = _rng.uniform(-3.0, -0.2, (4, 5)) if positive else _normal(4, 5)
            lab = np.array([0, 3, 4, 1])
            w = _rng.uniform(0.5, 2.0, 5) if i != 1 else None
            attrs = dict(_HARD_ATTRS, reduction=red, ignore_index=3 if i == 0 else -100, keepdim=i == 2,
                         mean_over_valid=i == 0)
            lab_in = lab.reshape(4, 1) if i == 2 else lab
            inputs = (x, lab_in, w)
            if with_grad:
                inputs += (_normal() if red != "none" else _normal(*((4, 1) if i == 2 else (4,))),)
            out.append(Sample(inputs, attrs, grad_inputs=(0, 3) if with_grad else (0,)))
        x3 = _rng.uniform(-3.0, -0.2, (2, 3, 4)) if positive else _normal(2, 3, 4)
        lab3 = np.array([[0, 2, 1, 1], [2, 0, 0, 1]])
        inputs3 = (x3, lab3, None) + ((_normal(),) if with_grad else ())
        out.append(Sample(inputs3, dict(_HARD_ATTRS, axis=1, reduction="mean"),
                          grad_inputs=(0, 3) if with_grad else (0,)))
        return out
    return make


_CE = defop("cross_entropy_with_softmax", kernel=_ce_kernel, meta=_ce_meta, grad=_g_ce, attrs=dict(_HARD_ATTRS),
            inputs=("logits", "label", "weight"), save_outputs=True, nondiff_outputs=(1,), samples=_hard_samples())


def _ce_grad_meta(logits, label, weight, stats, out_grad, **_attrs):
    return logits


def _ce_grad_samples():
    out = []
    for s in _hard_samples(with_grad=True)():
        x, lab, w, g = s.inputs
        stats = _ce_kernel(np, x, lab, w, **s.attrs)[1]
        out.append(Sample((x, lab, w, stats, g), s.attrs))
    return out


_CE_GRAD = defop("cross_entropy_with_softmax_grad", kernel=_ce_grad_kernel,
                 meta=_signed_attrs(_ce_grad_meta, ("logits", "label", "weight", "stats", "out_grad")),
                 attrs=dict(_HARD_ATTRS), inputs=("logits", "label", "weight", "stats", "out_grad"),
                 samples=_ce_grad_samples)
_NLL = defop("nll_loss", kernel=_nll_kernel, meta=_nll_meta, grad=_g_nll, attrs=dict(_HARD_ATTRS),
             inputs=("input", "label", "weight"), samples=_hard_samples(positive=True))
_NLL_GRAD = defop("nll_loss_grad", kernel=_nll_grad_kernel, meta=_signed_attrs(_nll_grad_meta),
                  grad=_g_nll_grad, attrs=dict(_HARD_ATTRS), inputs=("input", "label", "weight", "out_grad"),
                  samples=_hard_samples(with_grad=True, positive=True))


# ---------------------------------------------------------------- cross_entropy and friends
def _weight_arg(api: str, weight: Any) -> Tensor | None:
    return None if weight is None else as_tensor(weight, "weight", api)


def _int_arg(api: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{api}: argument '{arg}' must be an int, got {type(v).__name__}")
    return int(v)


def _soft_cross_entropy(api: str, input: Tensor, label: Tensor, weight: Tensor | None, ax: int,  # noqa: A002
                        reduction: str, use_softmax: bool) -> Tensor:
    """-sum(label * log p) over the class axis (kept, as Paddle does), weighted by label @ weight."""
    if label.dtype.np_dtype.kind != "f":
        raise TypeError(f"{api}: with soft labels, argument 'label' must be a floating tensor of probabilities, "
                        f"got {label.dtype}")
    _same_shape(api, input, label, ("input", "label"))
    logp = log_softmax(input, axis=ax) if use_softmax else _m.log(input)
    loss = _m.neg(_sum(_m.multiply(label, logp), axis=ax, keepdim=True))
    if weight is None:
        return _reduce(loss, reduction)
    classes = input.shape[ax]
    if weight.shape != [classes]:
        raise ValueError(f"{api}: argument 'weight' must have shape [{classes}] (one weight per class), "
                         f"got {weight.shape}")
    wshape = [1] * input.ndim
    wshape[ax] = classes
    per_sample = _sum(_m.multiply(label, reshape(weight, wshape)), axis=ax, keepdim=True)
    loss = _m.multiply(loss, per_sample)
    if reduction != "mean":
        return _reduce(loss, reduction)
    total = _sum(per_sample)
    return _m.divide(_sum(loss), _m.add(total, _m.cast(_m.equal(total, 0.0), total.dtype)))


def cross_entropy(input: Tensor, label: Tensor, weight: Tensor | None = None, ignore_index: int = -100,  # noqa: A002
                  reduction: str = "mean", soft_label: bool = False, axis: int = -1, use_softmax: bool = True,
                  label_smoothing: float = 0.0, name: str | None = None) -> Tensor:
    """Softmax cross-entropy of logits (or of probabilities with use_softmax=False) against labels."""
    api = "cross_entropy"
    input = as_tensor(input, "input", api)
    label = as_tensor(label, "label", api)
    weight = _weight_arg(api, weight)
    _check_reduction(api, reduction)
    ignore_index = _int_arg(api, "ignore_index", ignore_index)
    label_smoothing = mu.number_arg(api, "label_smoothing", label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{api}: argument 'label_smoothing' must be in [0, 1], got {label_smoothing}")
    if soft_label and ignore_index > 0:
        raise ValueError(f"{api}: ignore_index ({ignore_index}) applies to hard labels only; with soft_label=True "
                         "leave it at -100")
    if input.ndim - label.ndim not in (0, 1):
        raise ValueError(f"{api}: argument 'label' {label.shape} must have the rank of input {input.shape} "
                         "or one less")
    ax = mu.normalize_axis(api, _int_arg(api, "axis", axis), input.ndim)
    if not soft_label and label_smoothing == 0.0:
        attrs = {"axis": ax, "ignore_index": ignore_index, "reduction": reduction,
                 "keepdim": label.ndim == input.ndim, "mean_over_valid": ignore_index >= 0 or weight is not None}
        if use_softmax:
            return _CE(input, label, weight, **attrs)[0]
        return _NLL(_m.log(input), label, weight, **attrs)
    if not soft_label:  # label smoothing turns hard labels into soft ones
        if label.ndim == input.ndim:
            label = reshape(label, [d for i, d in enumerate(label.shape) if i != ax])
        label = _ONE_HOT(label, num_classes=input.shape[ax], axis=ax, dtype=input._data.dtype)
        label = _m.add(_m.scale(label, 1.0 - label_smoothing), label_smoothing / input.shape[ax])
    return _soft_cross_entropy(api, input, label, weight, ax, reduction, use_softmax)


def softmax_with_cross_entropy(logits: Tensor, label: Tensor, soft_label: bool = False, ignore_index: int = -100,
                               numeric_stable_mode: bool = True, return_softmax: bool = False,
                               axis: int = -1) -> Tensor | tuple[Tensor, Tensor]:
    """Per-sample softmax cross-entropy, the class axis kept with size 1 (the legacy API)."""
    api = "softmax_with_cross_entropy"
    logits = as_tensor(logits, "logits", api)
    label = as_tensor(label, "label", api)
    ax = mu.normalize_axis(api, _int_arg(api, "axis", axis), logits.ndim)
    if soft_label:
        loss = _soft_cross_entropy(api, logits, label, None, ax, "none", True)
    else:
        loss = _CE(logits, label, None, axis=ax, ignore_index=_int_arg(api, "ignore_index", ignore_index),
                   reduction="none", keepdim=True, mean_over_valid=False)[0]
    if return_softmax:
        return loss, softmax(logits, axis=ax)
    return loss


def nll_loss(input: Tensor, label: Tensor, weight: Tensor | None = None, ignore_index: int = -100,  # noqa: A002
             reduction: str = "mean", name: str | None = None) -> Tensor:
    """-input[label] (input holds log-probabilities, classes on axis 1), weighted and reduced."""
    api = "nll_loss"
    input = as_tensor(input, "input", api)
    label = as_tensor(label, "label", api)
    _check_reduction(api, reduction)
    if input.ndim < 2:
        raise ValueError(f"{api}: argument 'input' must be at least 2-D [N, C, ...], got shape {input.shape}")
    if label.ndim != input.ndim - 1:
        raise ValueError(f"{api}: argument 'label' {label.shape} must have shape [N, d1, ...] matching input "
                         f"{input.shape} without its class axis 1")
    ignore_index = _int_arg(api, "ignore_index", ignore_index)
    return _NLL(input, label, _weight_arg(api, weight), axis=1, ignore_index=ignore_index, reduction=reduction,
                keepdim=False, mean_over_valid=True)


# ---------------------------------------------------------------- elementwise losses
def mse_loss(input: Tensor, label: Tensor, reduction: str = "mean", name: str | None = None) -> Tensor:  # noqa: A002
    """(input - label)^2, reduced."""
    _check_reduction("mse_loss", reduction)
    d = _m.subtract(as_tensor(input, "input", "mse_loss"), as_tensor(label, "label", "mse_loss"))
    return _reduce(_m.square(d), reduction)


def square_error_cost(input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
    """(input - label)^2 elementwise."""
    return _m.square(_m.subtract(as_tensor(input, "input", "square_error_cost"),
                                 as_tensor(label, "label", "square_error_cost")))


def l1_loss(input: Tensor, label: Tensor, reduction: str = "mean", name: str | None = None) -> Tensor:  # noqa: A002
    """|input - label|, reduced."""
    _check_reduction("l1_loss", reduction)
    d = _m.subtract(as_tensor(input, "input", "l1_loss"), as_tensor(label, "label", "l1_loss"))
    return _reduce(_m.abs(d), reduction)


def _elementwise_pair_meta(op: str):
    def meta(input: TensorSpec, label: TensorSpec, **_attrs: Any) -> TensorSpec:  # noqa: A002
        mu.require_float(op, input, "input")
        mu.require_float(op, label, "label")
        if tuple(input.shape) != tuple(label.shape):
            raise ValueError(f"{op}: argument 'input' {mu.shape_str(input.shape)} and argument 'label' "
                             f"{mu.shape_str(label.shape)} must have the same shape")
        return TensorSpec(input.shape, mu.promote(input.dtype, label.dtype))
    return meta


def _huber_kernel(xp, input, label, *, delta):  # noqa: A002
    r = xp.abs(input - label)
    return xp.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta))


def _g_huber(ctx, g):
    x, y = ctx.inputs
    d = ctx.attrs["delta"]
    gr = _m.multiply(g, _m.clip(_m.subtract(x, y), -d, d))
    return gr, (_m.neg(gr) if ctx.needs_input_grad[1] else None)


_HUBER = defop("huber_loss", kernel=_huber_kernel, grad=_g_huber, attrs={"delta": 1.0}, inputs=("input", "label"),
               meta=lambda input, label, *, delta: _elementwise_pair_meta("smooth_l1_loss")(input, label),  # noqa: A002
               samples=lambda: [Sample((_normal(3, 4) * 2, _normal(3, 4)), {"delta": 1.0}),
                                Sample((_normal(5), _normal(5)), {"delta": 0.5})])


def smooth_l1_loss(input: Tensor, label: Tensor, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
                   name: str | None = None) -> Tensor:
    """Huber loss: 0.5 r^2 where |r| <= delta, else delta * (|r| - 0.5 delta); r = input - label."""
    _check_reduction("smooth_l1_loss", reduction)
    delta = mu.number_arg("smooth_l1_loss", "delta", delta)
    if delta <= 0:
        raise ValueError(f"smooth_l1_loss: argument 'delta' must be positive, got {delta}")
    out = _HUBER(as_tensor(input, "input", "smooth_l1_loss"), as_tensor(label, "label", "smooth_l1_loss"),
                 delta=delta)
    return _reduce(out, reduction)


_LOG_FLOOR = -100.0  # log terms are clamped here, so a probability of exactly 0 or 1 stays finite


def _bce_kernel(xp, input, label):  # noqa: A002
    if input.size and (float(input.min()) < 0.0 or float(input.max()) > 1.0):
        raise ValueError("binary_cross_entropy: argument 'input' must hold probabilities in [0, 1] "
                         f"(got values in [{float(input.min())}, {float(input.max())}]); "
                         "apply sigmoid first or use binary_cross_entropy_with_logits")
    with _place.errstate(xp, divide="ignore"):
        log_p = xp.maximum(xp.log(input), _LOG_FLOOR)
        log_q = xp.maximum(xp.log1p(-input), _LOG_FLOOR)
    return -(label * log_p + (1.0 - label) * log_q)


def _g_bce(ctx, g):
    x, y = ctx.inputs
    gx = gy = None
    if ctx.needs_input_grad[0]:
        gx = _m.divide(_m.multiply(g, _m.subtract(x, y)), _m.clip(_m.multiply(x, _m.subtract(1.0, x)), min=1e-12))
    if ctx.needs_input_grad[1]:
        log_p = _m.maximum(_m.log(x), _LOG_FLOOR)
        log_q = _m.maximum(_m.log1p(_m.neg(x)), _LOG_FLOOR)
        gy = _m.multiply(g, _m.subtract(log_q, log_p))
    return gx, gy


_BCE = defop("bce_loss", kernel=_bce_kernel, meta=_elementwise_pair_meta("binary_cross_entropy"), grad=_g_bce,
             inputs=("input", "label"),
             samples=lambda: [Sample((_rng.uniform(0.1, 0.9, (3, 4)), _rng.uniform(0, 1, (3, 4))))])


def binary_cross_entropy(input: Tensor, label: Tensor, weight: Tensor | None = None,  # noqa: A002
                         reduction: str = "mean", name: str | None = None) -> Tensor:
    """-(label log(input) + (1 - label) log(1 - input)) for probabilities, weighted and reduced."""
    _check_reduction("binary_cross_entropy", reduction)
    out = _BCE(as_tensor(input, "input", "binary_cross_entropy"), as_tensor(label, "label", "binary_cross_entropy"))
    if weight is not None:
        out = _m.multiply(out, as_tensor(weight, "weight", "binary_cross_entropy"))
    return _reduce(out, reduction)


def _bce_logits_meta(logit: TensorSpec, label: TensorSpec, pos_weight: TensorSpec | None) -> TensorSpec:
    spec = _elementwise_pair_meta("binary_cross_entropy_with_logits")(logit, label)
    if pos_weight is not None:
        mu.broadcast_shape("binary_cross_entropy_with_logits", logit.shape, pos_weight.shape, ("logit", "pos_weight"))
    return spec


def _bce_logits_kernel(xp, logit, label, pos_weight):
    softplus_neg = xp.log1p(xp.exp(-xp.abs(logit))) + xp.maximum(-logit, 0)  # log(1 + exp(-x)), stably
    if pos_weight is None:
        return (1.0 - label) * logit + softplus_neg
    return (1.0 - label) * logit + (1.0 + (pos_weight - 1.0) * label) * softplus_neg


def _g_bce_logits(ctx, g):
    x, y, pw = ctx.inputs
    need = ctx.needs_input_grad
    s = _m.sigmoid(x)
    if pw is None:
        gx = _m.multiply(g, _m.subtract(s, y)) if need[0] else None
        gy = _m.neg(_m.multiply(g, x)) if need[1] else None
        return gx, gy, None
    sp = softplus(_m.neg(x))
    lw = _m.add(_m.multiply(_m.subtract(pw, 1.0), y), 1.0)
    gx = _m.multiply(g, _m.subtract(_m.subtract(1.0, y), _m.multiply(lw, _m.subtract(1.0, s)))) if need[0] else None
    gy = _m.multiply(g, _m.subtract(_m.multiply(_m.subtract(pw, 1.0), sp), x)) if need[1] else None
    gpw = unbroadcast(_m.multiply(g, _m.multiply(y, sp)), pw) if need[2] else None
    return gx, gy, gpw


_BCE_LOGITS = defop("sigmoid_cross_entropy_with_logits", kernel=_bce_logits_kernel, meta=_bce_logits_meta,
                    grad=_g_bce_logits, inputs=("logit", "label", "pos_weight"),
                    samples=lambda: [Sample((_normal(3, 4) * 3, _rng.uniform(0, 1, (3, 4)), None)),
                                     Sample((_normal(3, 4), _rng.uniform(0, 1, (3, 4)), _rng.uniform(0.5, 2, 4)))])


def binary_cross_entropy_with_logits(logit: Tensor, label: Tensor, weight: Tensor | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None,
                                     name: str | None = None) -> Tensor:
    """Sigmoid + binary cross-entropy in one stable formula; pos_weight scales the positive term."""
    api = "binary_cross_entropy_with_logits"
    _check_reduction(api, reduction)
    out = _BCE_LOGITS(as_tensor(logit, "logit", api), as_tensor(label, "label", api),
                      None if pos_weight is None else as_tensor(pos_weight, "pos_weight", api))
    if weight is not None:
        out = _m.multiply(out, as_tensor(weight, "weight", api))
    return _reduce(out, reduction)


def _kldiv_kernel(xp, input, label, *, log_target):  # noqa: A002
    if log_target:
        return xp.exp(label) * (label - input)
    pos = label > 0
    return xp.where(pos, label * (xp.log(xp.where(pos, label, 1.0)) - input), 0.0)


def _g_kldiv(ctx, g):
    x, y = ctx.inputs
    need = ctx.needs_input_grad
    if ctx.attrs["log_target"]:
        ey = _m.exp(y)
        return (_m.neg(_m.multiply(g, ey)) if need[0] else None,
                _m.multiply(g, _m.multiply(ey, _m.add(_m.subtract(y, x), 1.0))) if need[1] else None)
    pos = _m.greater_than(y, 0.0)
    gx = _m.where(pos, _m.neg(_m.multiply(g, y)), 0.0) if need[0] else None
    gy = None
    if need[1]:
        logy = _m.log(_m.where(pos, y, 1.0))
        gy = _m.where(pos, _m.multiply(g, _m.subtract(_m.add(logy, 1.0), x)), 0.0)
    return gx, gy


_KLDIV = defop("kldiv_loss", kernel=_kldiv_kernel, grad=_g_kldiv, attrs={"log_target": False},
               inputs=("input", "label"),
               meta=lambda input, label, *, log_target: _elementwise_pair_meta("kl_div")(input, label),  # noqa: A002
               samples=lambda: [Sample((_normal(3, 4), _rng.uniform(0.1, 1, (3, 4))), {"log_target": False}),
                                Sample((_normal(3, 4), _normal(3, 4)), {"log_target": True})])


def kl_div(input: Tensor, label: Tensor, reduction: str = "mean", log_target: bool = False,  # noqa: A002
           name: str | None = None) -> Tensor:
    """label * (log(label) - input) (input holds log-probabilities); 'batchmean' divides the sum by N."""
    api = "kl_div"
    _check_reduction(api, reduction, _REDUCTIONS + ("batchmean",))
    input = as_tensor(input, "input", api)
    out = _KLDIV(input, as_tensor(label, "label", api), log_target=bool(log_target))
    if reduction == "batchmean":
        return _m.divide(_sum(out), float(input.shape[0]) if input.ndim else 1.0)
    return _reduce(out, reduction)


# ---------------------------------------------------------------- margin losses (compositions)
def margin_ranking_loss(input: Tensor, other: Tensor, label: Tensor, margin: float = 0.0,  # noqa: A002
                        reduction: str = "mean", name: str | None = None) -> Tensor:
    """max(0, -label * (input - other) + margin), reduced."""
    api = "margin_ranking_loss"
    _check_reduction(api, reduction)
    d = _m.subtract(as_tensor(input, "input", api), as_tensor(other, "other", api))
    out = relu(_m.add(_m.neg(_m.multiply(as_tensor(label, "label", api), d)), mu.number_arg(api, "margin", margin)))
    return _reduce(out, reduction)


def hinge_embedding_loss(input: Tensor, label: Tensor, margin: float = 1.0, reduction: str = "mean",  # noqa: A002
                         name: str | None = None) -> Tensor:
    """input where label == 1, max(0, margin - input) where label == -1, reduced."""
    api = "hinge_embedding_loss"
    _check_reduction(api, reduction)
    input = as_tensor(input, "input", api)
    label = as_tensor(label, "label", api)
    pos = _m.where(_m.equal(label, 1.0), input, 0.0)
    neg = _m.where(_m.equal(label, -1.0), relu(_m.subtract(mu.number_arg(api, "margin", margin), input)), 0.0)
    return _reduce(_m.add(pos, neg), reduction)


def soft_margin_loss(input: Tensor, label: Tensor, reduction: str = "mean", name: str | None = None) -> Tensor:  # noqa: A002
    """log(1 + exp(-label * input)), reduced."""
    api = "soft_margin_loss"
    _check_reduction(api, reduction)
    out = softplus(_m.neg(_m.multiply(as_tensor(label, "label", api), as_tensor(input, "input", api))))
    return _reduce(out, reduction)


def log_loss(input: Tensor, label: Tensor, epsilon: float = 1e-4, name: str | None = None) -> Tensor:  # noqa: A002
    """-label log(input + eps) - (1 - label) log(1 - input + eps), elementwise."""
    input = as_tensor(input, "input", "log_loss")
    label = as_tensor(label, "label", "log_loss")
    eps = mu.number_arg("log_loss", "epsilon", epsilon)
    pos = _m.multiply(label, _m.log(_m.add(input, eps)))
    neg = _m.multiply(_m.subtract(1.0, label), _m.log(_m.add(_m.subtract(1.0, input), eps)))
    return _m.neg(_m.add(pos, neg))


def sigmoid_focal_loss(logit: Tensor, label: Tensor, normalizer: Tensor | None = None, alpha: float = 0.25,
                       gamma: float = 2.0, reduction: str = "sum", name: str | None = None) -> Tensor:
    """Focal loss: alpha_t (1 - p_t)^gamma * bce_with_logits, optionally divided by normalizer."""
    api = "sigmoid_focal_loss"
    _check_reduction(api, reduction)
    logit = as_tensor(logit, "logit", api)
    label = as_tensor(label, "label", api)
    alpha, gamma = mu.number_arg(api, "alpha", alpha), mu.number_arg(api, "gamma", gamma)
    loss = _BCE_LOGITS(logit, label, None)
    p = _m.sigmoid(logit)
    p_t = _m.add(_m.multiply(p, label), _m.multiply(_m.subtract(1.0, p), _m.subtract(1.0, label)))
    alpha_t = _m.add(_m.multiply(label, alpha), _m.multiply(_m.subtract(1.0, label), 1.0 - alpha))
    loss = _m.multiply(_m.multiply(alpha_t, _m.pow(_m.subtract(1.0, p_t), gamma)), loss)
    if normalizer is not None:
        loss = _m.divide(loss, as_tensor(normalizer, "normalizer", api))
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, label: Tensor, margin: float = 0,
                          reduction: str = "mean", name: str | None = None) -> Tensor:
    """1 - cos(input1, input2) where label == 1, max(0, cos - margin) where label == -1 (last axis)."""
    api = "cosine_embedding_loss"
    _check_reduction(api, reduction)
    a, b = as_tensor(input1, "input1", api), as_tensor(input2, "input2", api)
    label = as_tensor(label, "label", api)
    sq1 = _m.add(_sum(_m.multiply(a, a), axis=-1), 1e-11)
    sq2 = _m.add(_sum(_m.multiply(b, b), axis=-1), 1e-11)
    cos = _m.divide(_sum(_m.multiply(a, b), axis=-1), _m.sqrt(_m.multiply(sq1, sq2)))
    pos = _m.where(_m.equal(label, 1), _m.subtract(1.0, cos), 0.0)
    neg = _m.where(_m.equal(label, -1), _m.clip(_m.subtract(cos, mu.number_arg(api, "margin", margin)), min=0.0), 0.0)
    return _reduce(_m.add(pos, neg), reduction)


def triplet_margin_loss(input: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,  # noqa: A002
                        p: float = 2, epsilon: float = 1e-6, swap: bool = False, reduction: str = "mean",
                        name: str | None = None) -> Tensor:
    """max(0, d(input, positive) - d(input, negative) + margin), d the p-norm distance."""
    api = "triplet_margin_loss"
    _check_reduction(api, reduction)
    a, pos, neg = (as_tensor(v, n, api) for v, n in ((input, "input"), (positive, "positive"), (negative, "negative")))
    d_pos = pairwise_distance(a, pos, p, epsilon)
    d_neg = pairwise_distance(a, neg, p, epsilon)
    if swap:
        d_neg = _m.minimum(d_neg, pairwise_distance(pos, neg, p, epsilon))
    return _reduce(_m.clip(_m.add(_m.subtract(d_pos, d_neg), mu.number_arg(api, "margin", margin)), min=0.0), reduction)


def multi_label_soft_margin_loss(input: Tensor, label: Tensor, weight: Tensor | None = None,  # noqa: A002
                                 reduction: str = "mean", name: str | None = None) -> Tensor:
    """Mean over classes of -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), weighted, reduced."""
    api = "multi_label_soft_margin_loss"
    _check_reduction(api, reduction)
    x, y = as_tensor(input, "input", api), as_tensor(label, "label", api)
    _same_shape(api, x, y, ("input", "label"))
    loss = _m.neg(_m.add(_m.multiply(y, log_sigmoid(x)), _m.multiply(_m.subtract(1.0, y), log_sigmoid(_m.neg(x)))))
    if weight is not None:
        loss = _m.multiply(loss, as_tensor(weight, "weight", api))
    return _reduce(mean(loss, axis=-1), reduction)


def dice_loss(input: Tensor, label: Tensor, epsilon: float = 0.00001, name: str | None = None) -> Tensor:  # noqa: A002
    """Mean over samples of 1 - 2 |P * Y| / (|P| + |Y|), Y the one-hot of integer labels [..., 1]."""
    api = "dice_loss"
    x, label = as_tensor(input, "input", api), as_tensor(label, "label", api)
    if label.ndim != x.ndim or label.shape[-1] != 1 or label.shape[:-1] != x.shape[:-1]:
        raise ValueError(f"{api}: argument 'label' must have shape {x.shape[:-1] + [1]} for input {x.shape}, "
                         f"got {label.shape}")
    y = _m.cast(one_hot(squeeze(label, -1), x.shape[-1]), x.dtype)
    dims = list(range(1, x.ndim))
    inter = _sum(_m.multiply(x, y), axis=dims)
    denom = _m.add(_sum(x, axis=dims), _sum(y, axis=dims))
    score = _m.subtract(1.0, _m.divide(_m.multiply(inter, 2.0), _m.add(denom, mu.number_arg(api, "epsilon", epsilon))))
    return mean(score)


# ---------------------------------------------------------------- CTC (warp-ctc's semantics)
def _ctc_meta(logits, label, logits_length, label_length, *, blank, norm_by_times):
    op = "ctc_loss"
    mu.require_float(op, logits, "log_probs")
    if len(logits.shape) != 3:
        raise ValueError(f"{op}: argument 'log_probs' must be 3-D [max_logit_length, batch, num_classes + 1], "
                         f"got {mu.shape_str(logits.shape)}")
    steps, batch, classes = logits.shape
    for arg, spec, rank in (("labels", label, 2), ("input_lengths", logits_length, 1),
                            ("label_lengths", label_length, 1)):
        if spec.dtype.kind not in "iu":
            raise TypeError(f"{op}: argument '{arg}' must be an integer tensor, got {spec.dtype.name}")
        if len(spec.shape) != rank or spec.shape[0] != batch:
            raise ValueError(f"{op}: argument '{arg}' must be {rank}-D with {batch} rows (the batch), got "
                             f"{mu.shape_str(spec.shape)}")
    if not 0 <= blank < classes:
        raise ValueError(f"{op}: argument 'blank' ({blank}) must be in [0, {classes}) for {classes} classes")
    return TensorSpec((batch,), logits.dtype), TensorSpec(tuple(logits.shape), logits.dtype)


def _ctc_lattice(xp, label, label_length, blank: int):
    """Per sample the extended label (blanks around and between the labels), where a path may skip from
    s - 2 to s (a label differing from the one two back), and which positions exist."""
    batch, max_len = label.shape
    ext = xp.full((batch, 2 * max_len + 1), blank, dtype=np.int64)
    ext[:, 1::2] = label
    skip = xp.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    exists = xp.arange(ext.shape[1])[None, :] < (2 * label_length + 1)[:, None]
    return ext, skip, exists


def _shift(xp, a, k: int):
    """a moved k places along the last axis (k > 0: towards higher s), -inf filling the gap."""
    out = xp.full(a.shape, -np.inf)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _ctc_kernel(xp, logits, label, logits_length, label_length, *, blank, norm_by_times):
    """-log p(label | softmax(logits)) per sample, and its gradient w.r.t. the logits (warp-ctc computes both
    at once; samples whose label cannot fit in their input length, L + repeats > T, get loss 0 and gradient 0,
    as warp-ctc's)."""
    steps, batch, classes = logits.shape
    t_len = logits_length.astype(np.int64)
    l_len = label_length.astype(np.int64)
    if batch and (int(t_len.min()) < 0 or int(t_len.max()) > steps):
        raise ValueError(f"ctc_loss: argument 'input_lengths' must lie in [0, {steps}], got {t_len.tolist()}")
    if batch and (int(l_len.min()) < 0 or int(l_len.max()) > label.shape[1]):
        raise ValueError(f"ctc_loss: argument 'label_lengths' must lie in [0, {label.shape[1]}], got "
                         f"{l_len.tolist()}")
    in_label = xp.arange(label.shape[1])[None, :] < l_len[:, None]
    label = xp.where(in_label, label.astype(np.int64), blank)  # the padding past each length is never read
    if bool(((label < 0) | (label >= classes)).any()):
        raise ValueError(f"ctc_loss: argument 'labels' must hold class indices in [0, {classes}) within each "
                         "label length")
    m = logits.max(axis=-1, keepdims=True)  # log-softmax in the input's dtype, as warp-ctc; the lattice in float64
    logp = logits - m
    logp -= xp.log(xp.exp(logp).sum(axis=-1, keepdims=True))
    ext, skip, exists = _ctc_lattice(xp, label, l_len, blank)
    emit = xp.take_along_axis(logp, xp.broadcast_to(ext[None], (steps,) + ext.shape), axis=2)  # [T, B, S]
    emit = xp.where(exists[None], emit.astype(np.float64), -np.inf)
    width = ext.shape[1]
    last = 2 * l_len  # the final label's blank; the final label itself is last - 1
    ends = (xp.arange(width)[None, :] == last[:, None]) | (xp.arange(width)[None, :] == (last - 1)[:, None])
    alpha = xp.full((steps, batch, width), -np.inf)
    beta = xp.full((steps, batch, width), -np.inf)
    if steps:
        alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, steps):
        a = alpha[t - 1]
        alpha[t] = xp.logaddexp(xp.logaddexp(a, _shift(xp, a, 1)), xp.where(skip, _shift(xp, a, 2), -np.inf)) + emit[t]
    for t in range(steps - 1, -1, -1):
        start = xp.where(ends, emit[t], -np.inf)
        if t + 1 < steps:
            b = beta[t + 1]
            b2 = _shift(xp, xp.where(skip, b, -np.inf), -2)
            inner = xp.logaddexp(xp.logaddexp(b, _shift(xp, b, -1)), b2) + emit[t]
        else:
            inner = start
        beta[t] = xp.where((t == t_len - 1)[:, None], start, xp.where((t < t_len - 1)[:, None], inner, -np.inf))
    final = alpha[xp.maximum(t_len - 1, 0), xp.arange(batch)]  # [B, S] at each sample's last step
    log_p = xp.where(ends, final, -np.inf)
    top = log_p.max(axis=-1, keepdims=True)
    with _place.errstate(xp, divide="ignore"):  # a sample no path reaches has log p = -inf
        log_p = (top + xp.log(xp.exp(log_p - xp.where(xp.isfinite(top), top, 0.0)).sum(axis=-1, keepdims=True)))[:, 0]
    repeats = (label[:, 1:] == label[:, :-1]) & in_label[:, 1:]
    feasible = (l_len + repeats.sum(axis=1) <= t_len) & xp.isfinite(log_p)
    with _place.errstate(xp, invalid="ignore"):
        occupancy = xp.exp(alpha + beta - emit - xp.where(feasible, log_p, 0.0)[None, :, None])
    occupancy = xp.where(xp.isfinite(occupancy), occupancy, 0.0)
    # subtract each lattice position's occupancy from its class: the blanks (even s) in one column, then one
    # label position at a time, so no (t, b, class) is written twice in one step
    grad = xp.exp(logp)
    rows = xp.arange(batch)
    grad[:, :, blank] -= occupancy[:, :, 0::2].sum(axis=-1).astype(logits.dtype)
    for pos in range(label.shape[1]):
        grad[:, rows, ext[:, 2 * pos + 1]] -= occupancy[:, :, 2 * pos + 1].astype(logits.dtype)
    live = (xp.arange(steps)[:, None] < t_len[None, :]) & feasible[None, :]
    grad = xp.where(live[:, :, None], grad, 0.0)
    if norm_by_times:
        grad /= xp.maximum(t_len, 1)[None, :, None].astype(logits.dtype)
    loss = xp.where(feasible, -log_p, 0.0)
    return loss.astype(logits.dtype), grad.astype(logits.dtype, copy=False)


def _g_ctc(ctx, g, _grad_grad):
    return _m.multiply(reshape(g, [1, -1, 1]), ctx.outputs[1]), None, None, None


def _ctc_samples():
    label = np.array([[1, 2, 2], [3, 1, 0]], dtype=np.int32)
    return [Sample((_normal(5, 2, 4), label, np.array([5, 4]), np.array([3, 2])),
                   {"blank": 0, "norm_by_times": False}, grad_inputs=(0,)),
            Sample((_normal(6, 2, 5), np.array([[0, 1], [2, 2]], dtype=np.int32), np.array([6, 6]),
                    np.array([2, 2])), {"blank": 4, "norm_by_times": False}, grad_inputs=(0,))]


_CTC = defop("warpctc", kernel=_ctc_kernel, meta=_ctc_meta, grad=_g_ctc, attrs={"blank": 0, "norm_by_times": False},
             inputs=("log_probs", "labels", "input_lengths", "label_lengths"), save_outputs=True,
             nondiff_outputs=(1,), samples=_ctc_samples)


def ctc_loss(log_probs: Tensor, labels: Tensor, input_lengths: Tensor, label_lengths: Tensor, blank: int = 0,
             reduction: str = "mean", norm_by_times: bool = False, zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss, as Paddle's warp-ctc: `log_probs` [T, batch, classes + 1]
    are unnormalised logits (softmax is applied inside), `labels` [batch, max_label_length] padded class
    indices. 'mean' averages loss / label_length over the batch; norm_by_times divides the gradient (not the
    loss) by each sample's input length."""
    api = "ctc_loss"
    _check_reduction(api, reduction)
    loss = _CTC(as_tensor(log_probs, "log_probs", api), as_tensor(labels, "labels", api),
                as_tensor(input_lengths, "input_lengths", api), as_tensor(label_lengths, "label_lengths", api),
                blank=_int_arg(api, "blank", blank), norm_by_times=bool(norm_by_times))[0]
    if zero_infinity:
        loss = _m.where(_m.isinf(loss), _m.multiply(loss, 0.0), loss)
    if reduction == "mean":
        return mean(_m.divide(loss, _m.cast(as_tensor(label_lengths, "label_lengths", api), loss.dtype)))
    return _reduce(loss, reduction)


# ---------------------------------------------------------------- Poisson and Gaussian NLL (compositions)
def poisson_nll_loss(input: Tensor, label: Tensor, log_input: bool = True, full: bool = False,  # noqa: A002
                     epsilon: float = 1e-8, reduction: str = "mean", name: str | None = None) -> Tensor:
    """exp(input) - label * input (log_input) or input - label * log(input + epsilon); `full` adds the
    Stirling term label log(label) - label + log(2 pi label) / 2 where label > 1."""
    api = "poisson_nll_loss"
    epsilon = mu.number_arg(api, "epsilon", epsilon)
    if epsilon <= 0:
        raise ValueError(f"{api}: argument 'epsilon' must be positive, got {epsilon}")
    _check_reduction(api, reduction)
    x, y = as_tensor(input, "input", api), as_tensor(label, "label", api)
    mu.require_float(api, TensorSpec(tuple(x.shape), x._data.dtype), "input")
    mu.require_float(api, TensorSpec(tuple(y.shape), y._data.dtype), "label")
    _same_shape(api, x, y, ("input", "label"))
    if log_input:
        loss = _m.subtract(_m.exp(x), _m.multiply(y, x))
    else:
        loss = _m.subtract(x, _m.multiply(y, _m.log(_m.add(x, epsilon))))
    if full:
        safe = _m.where(_m.greater_than(y, 1.0), y, _m.add(_m.multiply(y, 0.0), 1.0))  # log never sees y <= 0
        stirling = _m.add(_m.subtract(_m.multiply(safe, _m.log(safe)), safe),
                          _m.multiply(_m.log(_m.multiply(safe, 2 * math.pi)), 0.5))
        loss = _m.add(loss, _m.where(_m.greater_than(y, 1.0), stirling, _m.multiply(stirling, 0.0)))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, label: Tensor, variance: Tensor, full: bool = False,  # noqa: A002
                      epsilon: float = 1e-6, reduction: str = "mean", name: str | None = None) -> Tensor:
    """(log(max(variance, epsilon)) + (input - label)^2 / max(variance, epsilon)) / 2, + log(2 pi) / 2 with
    `full`. `variance` may drop the last axis or have it of size 1. As in Paddle, no gradient flows to
    `variance` (it is clipped under no_grad)."""
    api = "gaussian_nll_loss"
    x, y, var = (as_tensor(v, n, api) for v, n in ((input, "input"), (label, "label"), (variance, "variance")))
    if var.shape != x.shape:
        if x.shape[:-1] == var.shape:
            var = reshape(var, var.shape + [1])
        elif not (x.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError(f"{api}: argument 'variance' {var.shape} must have input's shape {x.shape}, that "
                             "shape without its last axis, or a last axis of size 1")
    _check_reduction(api, reduction)
    for t, n in ((x, "input"), (y, "label"), (var, "variance")):
        if t._data.dtype not in (np.float32, np.float64):
            raise ValueError(f"{api}: argument '{n}' must be float32 or float64, got {t.dtype}")
    if bool((var._data < 0).any()):
        raise ValueError(f"{api}: argument 'variance' has negative entries")
    with _no_grad():
        var = _m.clip(var, min=mu.number_arg(api, "epsilon", epsilon))
    diff = _m.subtract(x, y)
    loss = _m.multiply(_m.add(_m.log(var), _m.divide(_m.multiply(diff, diff), var)), 0.5)
    if full:
        loss = _m.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


# ---------------------------------------------------------------- multi-class margin, triplet with any distance
def multi_margin_loss(input: Tensor, label: Tensor, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight: Tensor | None = None, reduction: str = "mean", name: str | None = None) -> Tensor:
    """Per sample, the mean over classes j != y of w[y] * max(0, margin - x[y] + x[j])^p (the j = y term,
    margin^p, is taken out of the mean over all classes, as Paddle does)."""
    api = "multi_margin_loss"
    _check_reduction(api, reduction)
    x, label = as_tensor(input, "input", api), as_tensor(label, "label", api)
    if x.ndim != 2 or label.shape[:1] != x.shape[:1]:
        raise ValueError(f"{api}: argument 'label' {label.shape} must have input's shape[0] ({x.shape[0]}); input "
                         f"must be [batch, classes], got {x.shape}")
    label = reshape(label, [-1, 1])
    picked = index_sample(x, label)
    margin = mu.number_arg(api, "margin", margin)
    terms = _m.pow(_m.clip(_m.add(_m.subtract(x, picked), margin), min=0.0), p)
    own = margin ** p / x.shape[1]
    if weight is None:
        loss = _m.subtract(mean(terms, axis=1), own)
    else:
        weight = as_tensor(weight, "weight", api)
        if weight.shape[:1] != x.shape[1:2]:
            raise ValueError(f"{api}: argument 'weight' must have one entry per class ({x.shape[1]}), got "
                             f"{weight.shape}")
        w = reshape(gather(weight, reshape(label, [-1])), [-1, 1])
        loss = _m.subtract(mean(_m.multiply(w, terms), axis=1), squeeze(_m.multiply(w, own)))
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(input: Tensor, positive: Tensor, negative: Tensor,  # noqa: A002
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean", name: str | None = None) -> Tensor:
    """max(0, d(input, positive) - d(input, negative) + margin), d `distance_function` (default: the
    pairwise L2 distance); `swap` uses min(d(input, negative), d(positive, negative))."""
    api = "triplet_margin_with_distance_loss"
    _check_reduction(api, reduction)
    margin = mu.number_arg(api, "margin", margin)
    if margin < 0:
        raise ValueError(f"{api}: argument 'margin' must be non-negative, got {margin}")
    a, pos, neg = (as_tensor(v, n, api) for v, n in ((input, "input"), (positive, "positive"), (negative, "negative")))
    if not a.shape == pos.shape == neg.shape:
        raise ValueError(f"{api}: arguments 'input' {a.shape}, 'positive' {pos.shape} and 'negative' {neg.shape} "
                         "must have the same shape")
    dist = distance_function if distance_function is not None else (lambda u, v: pairwise_distance(u, v, 2))
    d_pos, d_neg = dist(a, pos), dist(a, neg)
    if swap:
        d_neg = _m.minimum(d_neg, dist(pos, neg))
    if bool((d_pos._data < 0).any()) or bool((d_neg._data < 0).any()):
        raise ValueError(f"{api}: the distance function gave a negative distance")
    return _reduce(_m.clip(_m.add(_m.subtract(d_pos, d_neg), margin), min=0.0), reduction)
