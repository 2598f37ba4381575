"""Normalisation: batch_norm, layer_norm, group_norm, instance_norm, normalize.

The four norms share one shape: x is viewed in a "stats layout", mean and (biased)
variance are taken over some of its axes, and a per-channel (or per-feature) scale and
shift is applied in x's own layout. A layout function per norm gives those axes; one
kernel pair (forward, fused backward) serves all four, and batch norm in float32/64 takes
a faster per-channel path through BLAS reductions. Each forward op also outputs its
mean and variance (non-differentiable): batch_norm's public function uses them to update
the running statistics in place, and the fused backward reads them instead of
recomputing. When the backward pass is itself recorded (create_graph=True) the gradient is
composed from public ops instead, so double backward works.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tensor import Tensor, as_tensor
from . import math as _m
from . import meta_utils as mu
from .activation import _signed
from .creation import assign, create_on
from .grad_mode import no_grad, state as _grad_state
from .linalg import norm as _p_norm
from .reduction import mean, sum as _sum
from .registry import Sample, TensorSpec, defop, normal_sampler
from .scratch import scratch
from .indexing import slice as _slice
from .shape import concat, reshape

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "normalize", "local_response_norm"]

_rng = np.random.default_rng(17)
_normal = normal_sampler(_rng)
_CHANNEL_FIRST = ("NC", "NCL", "NCHW", "NCDHW")
_CHANNEL_LAST = ("NLC", "NHWC", "NDHWC")


class _Layout:
    """How a norm sees x: stats over `reduce` axes of x reshaped to `stat_shape`; the affine
    parameters broadcast as `param_shape` over x; their gradients sum x's `param_axes`."""

    __slots__ = ("stat_shape", "reduce", "param_shape", "param_axes", "stats", "count", "per_channel")

    def __init__(self, stat_shape, reduce, param_shape, param_axes):
        self.stat_shape = tuple(stat_shape)
        self.reduce = tuple(reduce)
        self.param_shape = tuple(param_shape)
        self.param_axes = tuple(param_axes)
        self.stats = tuple(d for i, d in enumerate(self.stat_shape) if i not in self.reduce)
        self.count = int(np.prod([self.stat_shape[i] for i in self.reduce]))
        # batch norm: stats per parameter, so inv-std and parameters broadcast alike
        self.per_channel = self.reduce == self.param_axes and len(self.stat_shape) == len(self.param_shape)

    @property
    def keep(self) -> tuple:
        """The stats' shape with the reduced axes kept as size 1 (broadcasts over stat_shape)."""
        return tuple(1 if i in self.reduce else d for i, d in enumerate(self.stat_shape))

    @property
    def params(self) -> tuple:
        """The compact shape of the parameters' gradient when no parameter tensor is given."""
        return tuple(d for d in self.param_shape if d != 1) or (1,)


def _channel_params(shape, c):
    pshape = [1] * len(shape)
    pshape[c] = shape[c]
    return pshape


def _bn_layout(shape, *, channel_axis, **_):
    axes = [i for i in range(len(shape)) if i != channel_axis]
    return _Layout(shape, axes, _channel_params(shape, channel_axis), axes)


def _in_layout(shape, *, channel_axis, **_):
    spatial = [i for i in range(1, len(shape)) if i != channel_axis]
    return _Layout(shape, spatial, _channel_params(shape, channel_axis), [0] + spatial)


def _ln_layout(shape, *, begin_norm_axis, **_):
    nd = len(shape)
    return _Layout(shape, range(begin_norm_axis, nd), shape[begin_norm_axis:], range(begin_norm_axis))


def _gn_layout(shape, *, groups, channel_last, **_):
    nd, n = len(shape), shape[0]
    c = nd - 1 if channel_last else 1
    split = (groups, shape[c] // groups)
    if channel_last:
        stat = (n,) + tuple(shape[1:-1]) + split
        reduce = list(range(1, nd - 1)) + [nd]
    else:
        stat = (n,) + split + tuple(shape[2:])
        reduce = range(2, nd + 1)
    return _Layout(stat, reduce, _channel_params(shape, c), [i for i in range(nd) if i != c])


# ---------------------------------------------------------------- batch norm: per-channel statistics through BLAS
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _channel_view(x, lay: _Layout):
    """x as (A, C, B) with the channels in the middle: batch norm's statistics reduce A and B."""
    axis = next(i for i in range(len(lay.stat_shape)) if i not in lay.reduce)
    a = int(np.prod(x.shape[:axis]))
    return x.reshape(a, x.shape[axis], -1)


def _channel_dot(xp, u3, v3):
    """Per-channel sum of u * v over (A, C, B) arrays: batched dot products, no product array."""
    a, c, b = u3.shape
    return xp.matmul(u3.reshape(a * c, 1, b), v3.reshape(a * c, b, 1)).reshape(a, c).sum(axis=0)


def _channel_sum(xp, x3):
    """Per-channel sum of an (A, C, B) array: a matrix-vector product reads it once."""
    return xp.matmul(x3, xp.ones(x3.shape[2], dtype=x3.dtype)).sum(axis=0)


def _bn_stats(xp, x3, count: int):
    """Per-channel mean and biased variance of an (A, C, B) array, and the centred copy x - mean
    when one was made (else None), for the caller to reuse.

    The variance is E[x^2] - mean^2: two BLAS reductions reading x once each, no centred copy.
    That difference loses precision to cancellation when mean^2 is large against the variance,
    so where some channel has mean^2 > variance (or a NaN) it is taken again over a centred copy.
    """
    mean = _channel_sum(xp, x3) / count
    var = _channel_dot(xp, x3, x3) / count - mean * mean
    if bool((mean * mean <= var).all()):
        return mean, var, None
    xc = x3 - mean[:, None]
    return mean, _channel_dot(xp, xc, xc) / count, xc


def _bn_forward(xp, x, weight, bias, lay: _Layout, eps: float):
    """Batch norm's forward: per-channel statistics (see `_bn_stats`), then one scale and one
    shift pass writing the output (on a centred copy when the statistics needed one)."""
    x3 = _channel_view(x, lay)
    mean, var, xc = _bn_stats(xp, x3, lay.count)
    scale = 1.0 / xp.sqrt(var + eps)
    if weight is not None:
        scale = scale * weight.reshape(-1)
    if xc is None:  # y = x * scale + (bias - mean * scale)
        y = xp.multiply(x3, scale.astype(x.dtype, copy=False)[:, None])
        shift = -mean * scale if bias is None else bias.reshape(-1) - mean * scale
    else:
        y = xp.multiply(xc, scale.astype(x.dtype, copy=False)[:, None], out=xc)
        shift = bias.reshape(-1) if bias is not None else None
    if shift is not None:
        y += shift.astype(x.dtype, copy=False)[:, None]
    return y.reshape(x.shape), mean.reshape(lay.stats), var.reshape(lay.stats)


def _bn_backward(xp, x, weight, mean, var, g, lay: _Layout, eps: float):
    """Batch norm's input and parameter gradients from two per-channel reductions (sum of g and
    of g * (x - mean)), then the input gradient as g * a + x * b + c per channel. Where the
    forward's statistics show no cancellation risk (mean^2 <= variance in every channel), the
    second reduction is g . x - mean * sum(g) and x is read as is; otherwise over a centred
    temporary (a work array)."""
    x3, g3 = _channel_view(x, lay), _channel_view(g, lay)
    mean, var = mean.reshape(-1), var.reshape(-1)
    inv = 1.0 / xp.sqrt(var + eps)
    gb = _channel_sum(xp, g3)
    if bool((mean * mean <= var).all()):
        xs, offset = x3, mean
        gw = (_channel_dot(xp, g3, x3) - mean * gb) * inv
    else:
        xs = xp.subtract(x3, mean[:, None], out=scratch(xp, x3.shape, xp.result_type(x3, mean)))
        offset = xp.zeros_like(mean)
        gw = _channel_dot(xp, g3, xs) * inv
    w_inv = inv if weight is None else inv * weight.reshape(-1)
    # gx = w_inv * (g - gb / count - (xs - offset) * inv * gw / count)
    slope = -w_inv * inv * gw / lay.count
    gx = g3 * w_inv.astype(x.dtype, copy=False)[:, None]
    t = xp.multiply(xs, slope.astype(x.dtype, copy=False)[:, None],
                    out=xs if xs is not x3 else scratch(xp, x3.shape, x.dtype))
    gx += t
    gx += (-w_inv * gb / lay.count - slope * offset).astype(x.dtype, copy=False)[:, None]
    return gx.reshape(x.shape), gw, gb


# ---------------------------------------------------------------- kernels shared by the family
def _forward(xp, x, weight, bias, lay: _Layout, eps: float):
    if lay.per_channel and x.dtype in _BLAS_DTYPES and x.size:
        return _bn_forward(xp, x, weight, bias, lay, eps)
    xs = x.reshape(lay.stat_shape)
    mean = xs.mean(axis=lay.reduce, keepdims=True)
    xc = xs - mean
    var = xp.square(xc).mean(axis=lay.reduce, keepdims=True)
    inv = 1.0 / xp.sqrt(var + eps)
    if lay.per_channel and weight is not None:  # one pass: scale by inv * weight together
        xc *= inv * weight.reshape(lay.keep)
        weight = None
    else:
        xc *= inv
    y = xc.reshape(x.shape)
    if weight is not None:
        y *= weight.reshape(lay.param_shape)
    if bias is not None:
        y += bias.reshape(lay.param_shape)
    return y.astype(x.dtype, copy=False), mean.reshape(lay.stats), var.reshape(lay.stats)


def _backward(xp, x, weight, bias, mean, var, g, lay: _Layout, eps: float):
    if lay.per_channel and x.dtype in _BLAS_DTYPES and g.dtype == x.dtype and x.size:
        gx, gw, gb = _bn_backward(xp, x, weight, mean, var, g, lay, eps)
        return (gx, gw.reshape(lay.params if weight is None else weight.shape).astype(g.dtype, copy=False),
                gb.reshape(lay.params if bias is None else bias.shape).astype(g.dtype, copy=False))
    keep = lay.keep
    inv = 1.0 / xp.sqrt(var.reshape(keep) + eps)
    xhat_s = x.reshape(lay.stat_shape) - mean.reshape(keep)
    xhat_s *= inv
    xhat = xhat_s.reshape(x.shape)
    gb = g.sum(axis=lay.param_axes)
    g_xhat = g * xhat
    gw = g_xhat.sum(axis=lay.param_axes)
    w = None if weight is None else weight.reshape(lay.param_shape)
    if lay.per_channel:
        # the parameters are constant over the reduced axes, so the two means of the input
        # gradient are the parameter gradients already computed, scaled
        scale = inv * (1.0 / lay.count) if w is None else inv * w * (1.0 / lay.count)
        gx = g * (inv if w is None else inv * w)
        gx -= gb.reshape(keep) * scale
        xhat *= gw.reshape(keep) * scale
        gx -= xhat
    else:
        gh = g if w is None else g * w
        gh_s = gh.reshape(lay.stat_shape)
        gx = gh_s - gh_s.mean(axis=lay.reduce, keepdims=True)
        m2 = (g_xhat if w is None else gh * xhat).reshape(lay.stat_shape).mean(axis=lay.reduce, keepdims=True)
        xhat_s *= m2
        gx -= xhat_s
        gx *= inv
        gx = gx.reshape(x.shape)
    gw = gw.reshape(lay.params if weight is None else weight.shape)
    gb = gb.reshape(lay.params if bias is None else bias.shape)
    return gx.astype(x.dtype, copy=False), gw.astype(g.dtype, copy=False), gb.astype(g.dtype, copy=False)


def _composed_grad(x, w, b, g, lay: _Layout, eps: float, need) -> tuple:
    """The same gradient from public ops, so the backward pass can itself be differentiated."""
    red, stat = list(lay.reduce), list(lay.stat_shape)
    xc = _m.subtract(reshape(x, stat), mean(reshape(x, stat), axis=red, keepdim=True))
    inv = _m.rsqrt(_m.add(mean(_m.multiply(xc, xc), axis=red, keepdim=True), eps))
    xhat_s = _m.multiply(xc, inv)
    gx = gw = gb = None
    if need[0]:
        gh = reshape(g if w is None else _m.multiply(g, reshape(w, list(lay.param_shape))), stat)
        inner = _m.subtract(_m.subtract(gh, mean(gh, axis=red, keepdim=True)),
                            _m.multiply(xhat_s, mean(_m.multiply(gh, xhat_s), axis=red, keepdim=True)))
        gx = reshape(_m.multiply(inner, inv), list(x.shape))
    if need[1]:
        gw = reshape(_sum(_m.multiply(g, reshape(xhat_s, list(x.shape))), axis=list(lay.param_axes)), list(w.shape))
    if need[2]:
        gb = reshape(_sum(g, axis=list(lay.param_axes)), list(b.shape))
    return gx, gw, gb


# ---------------------------------------------------------------- op family builder
def _param_meta(op: str, arg: str, spec: TensorSpec | None, size: int) -> None:
    """An optional per-channel (or per-feature) tensor must be floating with `size` elements."""
    if spec is None:
        return
    mu.require_float(op, spec, arg)
    if int(np.prod(spec.shape)) != size:
        raise ValueError(f"{op}: argument '{arg}' must have {size} elements, got shape {mu.shape_str(spec.shape)}")


def _make_norm(name: str, layout: Callable, check: Callable, attrs: dict, samples: Callable):
    """Register `<name>` (outputs y, mean, variance) and its fused `<name>_grad`."""
    def meta(x, weight, bias, **a):
        mu.require_float(name, x, "x")
        size = check(x, **a)
        for arg, spec in (("weight", weight), ("bias", bias)):
            _param_meta(name, arg, spec, size)
        stats = TensorSpec(layout(x.shape, **a).stats, x.dtype)
        return x, stats, stats

    def kernel(xp, x, weight, bias, **a):
        return _forward(xp, x, weight, bias, layout(x.shape, **a), a["epsilon"])

    def grad_meta(x, weight, bias, mean, variance, out_grad, **a):
        lay = layout(x.shape, **a)
        return (x, weight or TensorSpec(lay.params, x.dtype), bias or TensorSpec(lay.params, x.dtype))

    def grad_kernel(xp, x, weight, bias, mean, variance, out_grad, **a):
        return _backward(xp, x, weight, bias, mean, variance, out_grad, layout(x.shape, **a), a["epsilon"])

    def rule(ctx, g, *_stat_grads):
        x, w, b = ctx.inputs
        need = ctx.needs_input_grad
        if _grad_state.enabled:
            return _composed_grad(x, w, b, g, layout(tuple(x.shape), **ctx.attrs), ctx.attrs["epsilon"], need)
        _, mean, var = ctx.outputs
        grads = grad_op(x, w, b, mean, var, g, **ctx.attrs)
        return tuple(gr if n else None for gr, n in zip(grads, need))

    def grad_samples():
        out = []
        for s in samples():
            x, w, b = s.inputs
            _, mean, var = kernel(np, x, w, b, **s.attrs)
            out.append(Sample((x, w, b, mean, var, _rng.normal(size=x.shape)), s.attrs))
        return out

    grad_op = defop(f"{name}_grad", kernel=_signed(grad_kernel, ("xp", "x", "weight", "bias", "mean", "variance",
                                                                "out_grad"), attrs),
                    meta=_signed(grad_meta, ("x", "weight", "bias", "mean", "variance", "out_grad"), attrs),
                    attrs=dict(attrs), inputs=("x", "weight", "bias", "mean", "variance", "out_grad"),
                    samples=grad_samples)
    return defop(name, kernel=_signed(kernel, ("xp", "x", "weight", "bias"), attrs),
                 meta=_signed(meta, ("x", "weight", "bias"), attrs), grad=rule, attrs=dict(attrs),
                 inputs=("x", "weight", "bias"), save_outputs=True, nondiff_outputs=(1, 2), samples=samples)


def _channel_check(op: str):
    def check(x, *, channel_axis, **_):
        if len(x.shape) < 2 or not 0 <= channel_axis < len(x.shape):
            raise ValueError(f"{op}: argument 'x' must have at least 2 dimensions with channels on axis "
                             f"{channel_axis}, got shape {mu.shape_str(x.shape)}")
        return x.shape[channel_axis]
    return check


def _ln_check(x, *, begin_norm_axis, **_):
    if not 0 <= begin_norm_axis < len(x.shape):
        raise ValueError(f"layer_norm: normalized_shape covers axes from {begin_norm_axis} but x has shape "
                         f"{mu.shape_str(x.shape)}")
    return int(np.prod(x.shape[begin_norm_axis:]))


def _gn_check(x, *, groups, channel_last, **_):
    if len(x.shape) < 2:
        raise ValueError(f"group_norm: argument 'x' must have at least 2 dimensions, got {mu.shape_str(x.shape)}")
    c = x.shape[-1 if channel_last else 1]
    if groups < 1 or c % groups:
        raise ValueError(f"group_norm: the number of channels ({c}) must be divisible by num_groups ({groups})")
    return c


def _pos(*shape):
    return _rng.uniform(0.5, 1.5, size=shape)


_BN = _make_norm("batch_norm", _bn_layout, _channel_check("batch_norm"), {"epsilon": 1e-5, "channel_axis": 1},
                 lambda: [Sample((_normal(4, 3), _pos(3), _normal(3)), {"epsilon": 1e-5, "channel_axis": 1}),
                          Sample((_normal(2, 3, 2, 2), _pos(3), None), {"epsilon": 1e-5, "channel_axis": 1}),
                          Sample((_normal(2, 2, 3), None, _normal(3)), {"epsilon": 1e-3, "channel_axis": 2})])
_LN = _make_norm("layer_norm", _ln_layout, _ln_check, {"epsilon": 1e-5, "begin_norm_axis": 1},
                 lambda: [Sample((_normal(3, 5), _pos(5), _normal(5)), {"epsilon": 1e-5, "begin_norm_axis": 1}),
                          Sample((_normal(2, 3, 4), _pos(12), _normal(3, 4)), {"epsilon": 1e-5, "begin_norm_axis": 1}),
                          Sample((_normal(2, 3, 4), None, None), {"epsilon": 1e-5, "begin_norm_axis": 2})])
_GN = _make_norm("group_norm", _gn_layout, _gn_check, {"epsilon": 1e-5, "groups": 1, "channel_last": False},
                 lambda: [Sample((_normal(2, 4, 3), _pos(4), _normal(4)),
                                 {"epsilon": 1e-5, "groups": 2, "channel_last": False}),
                          Sample((_normal(2, 3, 2, 4), _pos(4), _normal(4)),
                                 {"epsilon": 1e-5, "groups": 2, "channel_last": True})])
_IN = _make_norm("instance_norm", _in_layout, _channel_check("instance_norm"), {"epsilon": 1e-5, "channel_axis": 1},
                 lambda: [Sample((_normal(2, 3, 5), _pos(3), _normal(3)), {"epsilon": 1e-5, "channel_axis": 1}),
                          Sample((_normal(2, 2, 2, 3), None, None), {"epsilon": 1e-5, "channel_axis": 3})])


# ---------------------------------------------------------------- batch norm with given statistics
def _bn_infer_meta(x, mean, variance, weight, bias, *, epsilon, channel_axis):
    size = _channel_check("batch_norm")(x, channel_axis=channel_axis)
    mu.require_float("batch_norm", x, "x")
    for arg, spec in (("running_mean", mean), ("running_var", variance), ("weight", weight), ("bias", bias)):
        _param_meta("batch_norm", arg, spec, size)
    return x


def bn_infer_scale_shift(xp, mean, variance, weight, bias, epsilon: float) -> tuple:
    """Per-channel (scale, shift) of eval batch norm, y = x * scale + shift: one definition, so that a fused
    kernel applying them in place (ops.fused_conv) computes eager's bits."""
    scale = 1.0 / xp.sqrt(variance + epsilon)
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    return scale, shift


def _bn_infer_kernel(xp, x, mean, variance, weight, bias, *, epsilon, channel_axis):
    shape = _channel_params(x.shape, channel_axis)
    scale, shift = bn_infer_scale_shift(xp, mean, variance, weight, bias, epsilon)
    y = x * scale.reshape(shape).astype(x.dtype, copy=False)
    y += shift.reshape(shape)  # in place: one output array, no second temporary
    return y


def _g_bn_infer(ctx, g):
    x, mean, var, w, b = ctx.inputs
    need = ctx.needs_input_grad
    c = ctx.attrs["channel_axis"]
    shape = _channel_params(x.shape, c)
    axes = [i for i in range(len(x.shape)) if i != c]
    inv = _m.rsqrt(_m.add(var, ctx.attrs["epsilon"]))
    gx = gw = gb = None
    if need[0]:
        gx = _m.multiply(g, reshape(inv if w is None else _m.multiply(inv, w), shape))
    if need[3]:
        xhat = _m.multiply(_m.subtract(x, reshape(mean, shape)), reshape(inv, shape))
        gw = reshape(_sum(_m.multiply(g, xhat), axis=axes), list(w.shape))
    if need[4]:
        gb = reshape(_sum(g, axis=axes), list(b.shape))
    return gx, None, None, gw, gb


_BN_INFER = defop("batch_norm_infer", kernel=_bn_infer_kernel, meta=_bn_infer_meta, grad=_g_bn_infer,
                  attrs={"epsilon": 1e-5, "channel_axis": 1}, inputs=("x", "mean", "variance", "weight", "bias"),
                  samples=lambda: [Sample((_normal(4, 3), _normal(3), _pos(3), _pos(3), _normal(3)),
                                          {"epsilon": 1e-5, "channel_axis": 1}, grad_inputs=(0, 3, 4)),
                                   Sample((_normal(2, 2, 3), _normal(3), _pos(3), None, None),
                                          {"epsilon": 1e-5, "channel_axis": 2}, grad_inputs=(0,))])


# ---------------------------------------------------------------- public functions
def _channel_axis(api: str, data_format: str, ndim: int) -> int:
    if data_format in _CHANNEL_FIRST:
        return 1
    if data_format in _CHANNEL_LAST:
        return max(ndim - 1, 1)
    raise ValueError(f"{api}: argument 'data_format' must be one of {_CHANNEL_FIRST + _CHANNEL_LAST}, "
                     f"got {data_format!r}")


def _opt(api: str, arg: str, t: Any) -> Tensor | None:
    return None if t is None else as_tensor(t, arg, api)


def _update_running(running: Tensor, batch: Tensor, momentum: float) -> None:
    """running = momentum * running + (1 - momentum) * batch, written in place (no autograd)."""
    with no_grad():
        assign(_m.lerp(running, batch, 1.0 - momentum), running)


def batch_norm(x: Tensor, running_mean: Tensor, running_var: Tensor, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.9, epsilon: float = 1e-05,
               data_format: str = "NCHW", use_global_stats: bool | None = None, name: str | None = None) -> Tensor:
    """Normalise each channel by batch statistics (training) or the running ones; whenever the batch
    statistics are used the running ones are updated in place:
    running = momentum * running + (1 - momentum) * batch (biased batch variance, as Paddle)."""
    api = "batch_norm"
    x = as_tensor(x, "x", api)
    running_mean = _opt(api, "running_mean", running_mean)
    running_var = _opt(api, "running_var", running_var)
    weight, bias = _opt(api, "weight", weight), _opt(api, "bias", bias)
    momentum, epsilon = mu.number_arg(api, "momentum", momentum), mu.number_arg(api, "epsilon", epsilon)
    axis = _channel_axis(api, data_format, x.ndim)
    use_global = (not training) if use_global_stats is None else bool(use_global_stats)
    if use_global:
        if running_mean is None or running_var is None:
            raise ValueError(f"{api}: running_mean and running_var are required when the global statistics "
                             "are used (training=False or use_global_stats=True)")
        return _BN_INFER(x, running_mean, running_var, weight, bias, epsilon=epsilon, channel_axis=axis)
    for arg, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.size != x.shape[axis]:
            raise ValueError(f"{api}: argument '{arg}' must have {x.shape[axis]} elements (one per channel), "
                             f"got shape {t.shape}")
    y, mean, var = _BN(x, weight, bias, epsilon=epsilon, channel_axis=axis)
    # Paddle's kernel updates the running statistics whenever it normalises by the batch ones,
    # also with training=False and use_global_stats=False
    for running, batch in ((running_mean, mean), (running_var, var)):
        if running is not None:
            _update_running(running, batch, momentum)
    return y


def layer_norm(x: Tensor, normalized_shape: Any, weight: Tensor | None = None, bias: Tensor | None = None,
               epsilon: float = 1e-05, name: str | None = None) -> Tensor:
    """Normalise over the trailing `normalized_shape` dimensions, then scale and shift."""
    api = "layer_norm"
    x = as_tensor(x, "x", api)
    if isinstance(normalized_shape, (int, np.integer)):
        normalized_shape = [normalized_shape]
    normalized_shape = [int(d) for d in normalized_shape]
    k = len(normalized_shape)
    if k == 0 or k > x.ndim or x.shape[x.ndim - k:] != normalized_shape:
        raise ValueError(f"{api}: argument 'normalized_shape' {normalized_shape} must equal the trailing "
                         f"dimensions of x {x.shape}")
    return _LN(x, _opt(api, "weight", weight), _opt(api, "bias", bias), epsilon=mu.number_arg(api, "epsilon", epsilon),
               begin_norm_axis=x.ndim - k)[0]


def group_norm(x: Tensor, num_groups: int, epsilon: float = 1e-05, weight: Tensor | None = None,
               bias: Tensor | None = None, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """Normalise each group of channels of each sample, then scale and shift per channel."""
    api = "group_norm"
    x = as_tensor(x, "x", api)
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
        raise TypeError(f"{api}: argument 'num_groups' must be an int, got {type(num_groups).__name__}")
    channel_last = _channel_axis(api, data_format, x.ndim) != 1
    return _GN(x, _opt(api, "weight", weight), _opt(api, "bias", bias), epsilon=mu.number_arg(api, "epsilon", epsilon),
               groups=int(num_groups), channel_last=channel_last)[0]


def instance_norm(x: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.9, eps: float = 1e-05, data_format: str = "NCHW",
                  name: str | None = None) -> Tensor:
    """Normalise each channel of each sample over its spatial dimensions, then scale and shift."""
    api = "instance_norm"
    x = as_tensor(x, "x", api)
    axis = _channel_axis(api, data_format, x.ndim)
    weight, bias = _opt(api, "weight", weight), _opt(api, "bias", bias)
    eps = mu.number_arg(api, "eps", eps)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError(f"{api}: running_mean and running_var are required when use_input_stats=False")
        return _BN_INFER(x, as_tensor(running_mean, "running_mean", api), as_tensor(running_var, "running_var", api),
                         weight, bias, epsilon=eps, channel_axis=axis)
    if x.ndim < 3:
        raise ValueError(f"{api}: argument 'x' must have spatial dimensions (at least 3-D), got shape {x.shape}")
    return _IN(x, weight, bias, epsilon=eps, channel_axis=axis)[0]


def normalize(x: Tensor, p: float = 2, axis: int = 1, epsilon: float = 1e-12, name: str | None = None) -> Tensor:
    """x / max(||x||_p, epsilon) along `axis`."""
    api = "normalize"
    x = as_tensor(x, "x", api)
    p = mu.number_arg(api, "p", p)
    ax = mu.normalize_axis(api, axis, x.ndim)
    if not (p > 0):
        raise ValueError(f"{api}: argument 'p' must be positive (or inf), got {p}")
    # the p_norm op (as Paddle): its gradient at an all-zero slice is 0, not sqrt'(0) * 0 = NaN
    norm = _p_norm(x, p=p, axis=ax, keepdim=True)
    return _m.divide(x, _m.maximum(norm, mu.number_arg(api, "epsilon", epsilon)))


def local_response_norm(x: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                        data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta."""
    api = "local_response_norm"
    x = as_tensor(x, "x", api)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"{api}: argument 'size' must be a positive int, got {size!r}")
    if x.ndim < 3:
        raise ValueError(f"{api}: argument 'x' must be at least 3-D, got shape {x.shape}")
    c = _channel_axis(api, data_format, x.ndim)
    channels = x.shape[c]
    sq = _m.multiply(x, x)
    parts = []
    for n in (size // 2, None, (size - 1) // 2):  # zero channels before and after the squares
        if n is None:
            parts.append(sq)
        elif n:
            shape = list(x.shape)
            shape[c] = n
            parts.append(create_on(x, "full", shape=tuple(shape), fill_value=0))
    padded = concat(parts, axis=c) if len(parts) > 1 else sq
    window = _slice(padded, [c], [0], [channels])
    for j in range(1, size):  # a small fixed number of taps
        window = _m.add(window, _slice(padded, [c], [j], [j + channels]))
    scale = mu.number_arg(api, "alpha", alpha) / size
    div = _m.pow(_m.add(_m.multiply(window, scale), mu.number_arg(api, "k", k)), mu.number_arg(api, "beta", beta))
    return _m.divide(x, div)
