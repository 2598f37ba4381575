"""Activations: relu, relu6, leaky_relu, gelu, silu, elu, softmax, log_softmax and friends.

Each elementwise activation is one table row: a forward kernel and ONE vector-Jacobian
formula `vjp(F, x, g)` written over a namespace `F` of functions. The same formula runs
two ways: over the array module inside a fused `<name>_grad` op (one op per backward
step, the fast path), and over the public ops when the backward pass is itself recorded
(`create_graph=True`), so double backward differentiates through ordinary ops.
"""
from __future__ import annotations

import inspect
import math as _pymath
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from ..generator import default_generator
from ..tensor import Tensor, as_tensor
from . import math as _m
from . import meta_utils as mu
from .common import _ONE_HOT
from .grad_mode import state as _grad_state
from .inplace import inplace
from .random import uniform
from .reduction import argmax, max as _max, sum as _sum
from .registry import Sample, TensorSpec, defop
from .shape import reshape, split

__all__ = [
    "relu", "relu6", "leaky_relu", "gelu", "silu", "swish", "elu", "selu", "celu", "softplus",
    "softsign", "hardswish", "hardsigmoid", "hardtanh", "hardshrink", "softshrink",
    "thresholded_relu", "mish", "tanhshrink", "log_sigmoid", "softmax", "log_softmax", "prelu",
    "glu", "maxout", "rrelu", "gumbel_softmax", "relu_", "elu_", "softmax_",
]

_rng = np.random.default_rng(2024)
_SQRT1_2 = 1.0 / _pymath.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / _pymath.sqrt(2.0 * _pymath.pi)
_GELU_C = _pymath.sqrt(2.0 / _pymath.pi)
_GELU_K = 0.044715


# ---------------------------------------------------------------- formula namespaces
class _ArrayFns:
    """What the vjp formulas call, over an array module (NumPy or CuPy)."""

    def __init__(self, xp):
        self.xp = xp
        self.exp, self.tanh, self.abs = xp.exp, xp.tanh, xp.abs
        self.minimum = xp.minimum

    def where(self, condition, x, y):
        """xp.where, through the `where` kernel where both operands are arrays of one dtype (a Python float
        beside a float array takes the array's dtype, as NumPy's promotion gives it): its bit select is
        several times faster on the data-dependent masks of activation gradients."""
        if isinstance(y, float) and getattr(x, "dtype", None) is not None and x.dtype.kind == "f":
            y = self.xp.full((), y, dtype=x.dtype)   # a device fill: no host copy, which a CUDA graph capture refuses
        if getattr(x, "dtype", None) is not None and getattr(y, "dtype", None) == x.dtype:
            return _m._where_kernel(self.xp, condition, x, y)
        return self.xp.where(condition, x, y)

    def sigmoid(self, x):
        return 0.5 * (1.0 + self.xp.tanh(0.5 * x))  # no overflow for any x

    def erf(self, x):
        return _m._erf_np(self.xp, x)

    def softplus(self, x):
        return _softplus_np(self.xp, x, beta=1.0, threshold=20.0)


class _TensorFns:
    """What the vjp formulas call, over the public (differentiable) ops."""

    exp = staticmethod(_m.exp)
    tanh = staticmethod(_m.tanh)
    abs = staticmethod(_m.abs)  # noqa: A003
    minimum = staticmethod(_m.minimum)
    sigmoid = staticmethod(_m.sigmoid)
    erf = staticmethod(_m.erf)
    where = staticmethod(_m.where)

    @staticmethod
    def softplus(x):
        return softplus(x)


_ARRAY_FNS: dict = {}
_TENSOR_FNS = _TensorFns()


def _fns(xp) -> _ArrayFns:
    fns = _ARRAY_FNS.get(xp)
    if fns is None:
        fns = _ARRAY_FNS[xp] = _ArrayFns(xp)
    return fns


def _signed(fn: Callable, positional: tuple[str, ...], attrs: dict) -> Callable:
    """Give a generic `(*args, **attrs)` function the explicit signature the registry checks."""
    params = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in positional]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY) for a in attrs]
    fn.__signature__ = inspect.Signature(params)
    return fn


# ---------------------------------------------------------------- forward kernels
def relu_np(xp, x, out=None):
    """max(x, 0) against a row of zeros rather than the scalar 0: NumPy's maximum with a broadcast scalar runs at
    about half the speed of two arrays, and the result has the same bits (signed zeros and NaNs included)."""
    zero = xp.zeros(x.shape[-1:], x.dtype) if x.ndim else 0
    return xp.maximum(x, zero, out=out)


def _softplus_np(xp, x, *, beta, threshold):
    bx = x * beta
    soft = (xp.log1p(xp.exp(-xp.abs(bx))) + xp.maximum(bx, 0)) / beta
    return xp.where(bx > threshold, x, soft)


def _elu_np(xp, x, alpha):
    return xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0)))


def _gelu_np(xp, x, *, approximate):
    if approximate:
        return 0.5 * x * (1.0 + xp.tanh(_GELU_C * (x + _GELU_K * x * x * x)))
    return 0.5 * x * (1.0 + _m._erf_np(xp, x * _SQRT1_2))


def _log_sigmoid_np(xp, x):
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _mish_np(xp, x):
    return x * xp.tanh(_softplus_np(xp, x, beta=1.0, threshold=20.0))


# ---------------------------------------------------------------- vjp formulas g * dy/dx
def _vjp_gelu(F, x, g, *, approximate):
    if approximate:
        u = (x + x * x * x * _GELU_K) * _GELU_C
        t = F.tanh(u)
        d = (t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * ((x * x * (3.0 * _GELU_K) + 1.0) * _GELU_C)
        return g * d
    cdf = (F.erf(x * _SQRT1_2) + 1.0) * 0.5
    pdf = F.exp(x * x * -0.5) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _vjp_silu(F, x, g):
    s = F.sigmoid(x)
    return g * s * (x * (1.0 - s) + 1.0)


def _vjp_mish(F, x, g):
    t = F.tanh(F.softplus(x))
    return g * (t + x * (1.0 - t * t) * F.sigmoid(x))


def _vjp_hardswish(F, x, g):
    # Paddle's subgradient at the kinks: 0 at x = -3 and 1 at x = 3 (the outer pieces' slopes)
    return F.where(x <= -3.0, 0.0, F.where(x >= 3.0, g, g * (x * 2.0 + 3.0) * (1.0 / 6.0)))


def _vjp_hardsigmoid(F, x, g, *, slope, offset):
    lin = x * slope + offset
    return F.where((lin > 0.0) & (lin < 1.0), g * slope, 0.0)


def _vjp_softsign(F, x, g):
    r = 1.0 / (F.abs(x) + 1.0)
    return g * r * r


def _vjp_tanhshrink(F, x, g):
    t = F.tanh(x)
    return g * t * t


# name: (forward(xp, x, **attrs), vjp(F, x, g, **attrs), attrs with defaults, sample domain)
_ACTIVATIONS: dict[str, tuple] = {
    "relu": (lambda xp, x: relu_np(xp, x), lambda F, x, g: F.where(x > 0.0, g, 0.0), {}, (-2, 2)),
    "relu6": (lambda xp, x: xp.minimum(xp.maximum(x, 0), 6),
              lambda F, x, g: F.where((x > 0.0) & (x < 6.0), g, 0.0), {}, (-2, 8)),
    "leaky_relu": (lambda xp, x, *, negative_slope: xp.where(x > 0, x, x * negative_slope),
                   lambda F, x, g, *, negative_slope: F.where(x > 0.0, g, g * negative_slope),
                   {"negative_slope": 0.01}, (-2, 2)),
    "hardtanh": (lambda xp, x, *, min, max: xp.minimum(xp.maximum(x, min), max),  # noqa: A006
                 lambda F, x, g, *, min, max: F.where((x > min) & (x < max), g, 0.0),  # noqa: A006
                 {"min": -1.0, "max": 1.0}, (-2, 2)),
    "hardsigmoid": (lambda xp, x, *, slope, offset: xp.minimum(xp.maximum(x * slope + offset, 0), 1),
                    _vjp_hardsigmoid, {"slope": 0.1666667, "offset": 0.5}, (-5, 5)),
    "hardswish": (lambda xp, x: x * xp.minimum(xp.maximum(x + 3.0, 0), 6) * (1.0 / 6.0),
                  _vjp_hardswish, {}, (-5, 5)),
    "hardshrink": (lambda xp, x, *, threshold: xp.where(xp.abs(x) > threshold, x, 0.0),
                   lambda F, x, g, *, threshold: F.where(F.abs(x) > threshold, g, 0.0),
                   {"threshold": 0.5}, (-2, 2)),
    "softshrink": (lambda xp, x, *, threshold: xp.where(x > threshold, x - threshold,
                                                        xp.where(x < -threshold, x + threshold, 0.0)),
                   lambda F, x, g, *, threshold: F.where(F.abs(x) > threshold, g, 0.0),
                   {"threshold": 0.5}, (-2, 2)),
    "thresholded_relu": (lambda xp, x, *, threshold: xp.where(x > threshold, x, 0.0),
                         lambda F, x, g, *, threshold: F.where(x > threshold, g, 0.0),
                         {"threshold": 1.0}, (-3, 3)),
    "elu": (lambda xp, x, *, alpha: _elu_np(xp, x, alpha),
            lambda F, x, g, *, alpha: F.where(x > 0.0, g, g * alpha * F.exp(F.minimum(x, 0.0))),
            {"alpha": 1.0}, (-2, 2)),
    "selu": (lambda xp, x, *, scale, alpha: scale * _elu_np(xp, x, alpha),
             lambda F, x, g, *, scale, alpha: F.where(x > 0.0, g * scale,
                                                      g * (scale * alpha) * F.exp(F.minimum(x, 0.0))),
             {"scale": 1.0507009873554804934193349852946, "alpha": 1.6732632423543772848170429916717}, (-2, 2)),
    "celu": (lambda xp, x, *, alpha: xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0) / alpha)),
             lambda F, x, g, *, alpha: F.where(x > 0.0, g, g * F.exp(F.minimum(x, 0.0) * (1.0 / alpha))),
             {"alpha": 1.0}, (-2, 2)),
    "softplus": (_softplus_np,
                 lambda F, x, g, *, beta, threshold: F.where(x * beta > threshold, g, g * F.sigmoid(x * beta)),
                 {"beta": 1.0, "threshold": 20.0}, (-3, 3)),
    "gelu": (_gelu_np, _vjp_gelu, {"approximate": False}, (-3, 3)),
    "silu": (lambda xp, x: x * _fns(xp).sigmoid(x), _vjp_silu, {}, (-3, 3)),
    "softsign": (lambda xp, x: x / (1.0 + xp.abs(x)), _vjp_softsign, {}, (-2, 2)),
    "mish": (lambda xp, x: _mish_np(xp, x), _vjp_mish, {}, (-3, 3)),
    "tanhshrink": (lambda xp, x: x - xp.tanh(x), _vjp_tanhshrink, {}, (-2, 2)),
    "log_sigmoid": (lambda xp, x: _log_sigmoid_np(xp, x), lambda F, x, g: g * F.sigmoid(-x), {}, (-3, 3)),
}


def _float_in(name: str):
    def meta(x: TensorSpec, *_grad: TensorSpec, **_attrs: Any) -> TensorSpec:
        mu.require_float(name, x)
        return x
    return meta


def _register(name: str, fwd: Callable, vjp: Callable, attrs: dict, domain: tuple):
    """The forward op and its fused `<name>_grad` op; the rule picks fused or composed."""
    def kernel(xp, x, **a):
        return fwd(xp, x, **a).astype(x.dtype, copy=False)

    def grad_kernel(xp, x, out_grad, **a):
        return vjp(_fns(xp), x, out_grad, **a).astype(x.dtype, copy=False)

    def rule(ctx, g):
        (x,) = ctx.inputs
        if _grad_state.enabled:  # the backward pass is recorded: compose differentiable ops
            return (vjp(_TENSOR_FNS, x, g, **ctx.attrs),)
        return (grad_op(x, g, **ctx.attrs),)

    def samples():
        return [Sample((_rng.uniform(*domain, size=(3, 4)),), dict(attrs)),
                Sample((_rng.uniform(*domain, size=(5,)),), dict(attrs))]

    def grad_samples():
        return [Sample((_rng.uniform(*domain, size=(3, 4)), _rng.normal(size=(3, 4))), dict(attrs))]

    grad_op = defop(f"{name}_grad", kernel=_signed(grad_kernel, ("xp", "x", "out_grad"), attrs),
                    meta=_signed(_float_in(f"{name}_grad"), ("x", "out_grad"), attrs),
                    attrs=dict(attrs), inputs=("x", "out_grad"), samples=grad_samples)
    return defop(name, kernel=_signed(kernel, ("xp", "x"), attrs), meta=_signed(_float_in(name), ("x",), attrs),
                 grad=rule, attrs=dict(attrs), samples=samples)


_OPS = {name: _register(name, *spec) for name, spec in _ACTIVATIONS.items()}
_RELU, _RELU6, _LEAKY, _HARDTANH = _OPS["relu"], _OPS["relu6"], _OPS["leaky_relu"], _OPS["hardtanh"]
_ELU, _SELU, _CELU, _SOFTPLUS, _GELU = _OPS["elu"], _OPS["selu"], _OPS["celu"], _OPS["softplus"], _OPS["gelu"]


def relu(x: Tensor, name: str | None = None) -> Tensor:
    """max(x, 0)."""
    return _RELU(as_tensor(x, "x", "relu"))


def relu6(x: Tensor, name: str | None = None) -> Tensor:
    """min(max(x, 0), 6)."""
    return _RELU6(as_tensor(x, "x", "relu6"))


def leaky_relu(x: Tensor, negative_slope: float = 0.01, name: str | None = None) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    return _LEAKY(as_tensor(x, "x", "leaky_relu"),
                  negative_slope=mu.number_arg("leaky_relu", "negative_slope", negative_slope))


def hardtanh(x: Tensor, min: float = -1.0, max: float = 1.0, name: str | None = None) -> Tensor:  # noqa: A002
    """x clipped to [min, max]."""
    lo, hi = mu.number_arg("hardtanh", "min", min), mu.number_arg("hardtanh", "max", max)
    if lo >= hi:
        raise ValueError(f"hardtanh: argument 'min' ({lo}) must be less than argument 'max' ({hi})")
    return _HARDTANH(as_tensor(x, "x", "hardtanh"), min=lo, max=hi)


def hardsigmoid(x: Tensor, slope: float = 0.1666667, offset: float = 0.5, name: str | None = None) -> Tensor:
    """clip(slope * x + offset, 0, 1)."""
    return _OPS["hardsigmoid"](as_tensor(x, "x", "hardsigmoid"), slope=mu.number_arg("hardsigmoid", "slope", slope),
                               offset=mu.number_arg("hardsigmoid", "offset", offset))


def hardswish(x: Tensor, name: str | None = None) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _OPS["hardswish"](as_tensor(x, "x", "hardswish"))


def _threshold_api(opname: str, doc: str, default: float):
    op = _OPS[opname]

    def api(x: Tensor, threshold: float = default, name: str | None = None) -> Tensor:
        t = mu.number_arg(opname, "threshold", threshold)
        if opname != "thresholded_relu" and t < 0:
            raise ValueError(f"{opname}: argument 'threshold' must be non-negative, got {t}")
        return op(as_tensor(x, "x", opname), threshold=t)
    api.__name__ = api.__qualname__ = opname
    api.__doc__ = doc
    return api


hardshrink = _threshold_api("hardshrink", "x where |x| > threshold, else 0.", 0.5)
softshrink = _threshold_api("softshrink", "x - threshold * sign(x) where |x| > threshold, else 0.", 0.5)
thresholded_relu = _threshold_api("thresholded_relu", "x where x > threshold, else 0.", 1.0)


def elu(x: Tensor, alpha: float = 1.0, name: str | None = None) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _ELU(as_tensor(x, "x", "elu"), alpha=mu.number_arg("elu", "alpha", alpha))


def selu(x: Tensor, scale: float = 1.0507009873554804934193349852946,
         alpha: float = 1.6732632423543772848170429916717, name: str | None = None) -> Tensor:
    """scale * elu(x, alpha), the self-normalising activation."""
    scale, alpha = mu.number_arg("selu", "scale", scale), mu.number_arg("selu", "alpha", alpha)
    if scale <= 1.0:
        raise ValueError(f"selu: argument 'scale' must be greater than 1.0, got {scale}")
    if alpha < 0:
        raise ValueError(f"selu: argument 'alpha' must be non-negative, got {alpha}")
    return _SELU(as_tensor(x, "x", "selu"), scale=scale, alpha=alpha)


def celu(x: Tensor, alpha: float = 1.0, name: str | None = None) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    alpha = mu.number_arg("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("celu: argument 'alpha' must not be 0")
    return _CELU(as_tensor(x, "x", "celu"), alpha=alpha)


def softplus(x: Tensor, beta: float = 1, threshold: float = 20, name: str | None = None) -> Tensor:
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    beta = mu.number_arg("softplus", "beta", beta)
    if beta == 0:
        raise ValueError("softplus: argument 'beta' must not be 0")
    return _SOFTPLUS(as_tensor(x, "x", "softplus"), beta=beta,
                     threshold=mu.number_arg("softplus", "threshold", threshold))


def gelu(x: Tensor, approximate: bool = False, name: str | None = None) -> Tensor:
    """x * Phi(x) (exact, with erf) or its tanh approximation."""
    return _GELU(as_tensor(x, "x", "gelu"), approximate=bool(approximate))


def silu(x: Tensor, name: str | None = None) -> Tensor:
    """x * sigmoid(x)."""
    return _OPS["silu"](as_tensor(x, "x", "silu"))


def swish(x: Tensor, name: str | None = None) -> Tensor:
    """x * sigmoid(x) (Paddle's swish has beta fixed to 1)."""
    return _OPS["silu"](as_tensor(x, "x", "swish"))


def softsign(x: Tensor, name: str | None = None) -> Tensor:
    """x / (1 + |x|)."""
    return _OPS["softsign"](as_tensor(x, "x", "softsign"))


def mish(x: Tensor, name: str | None = None) -> Tensor:
    """x * tanh(softplus(x))."""
    return _OPS["mish"](as_tensor(x, "x", "mish"))


def tanhshrink(x: Tensor, name: str | None = None) -> Tensor:
    """x - tanh(x)."""
    return _OPS["tanhshrink"](as_tensor(x, "x", "tanhshrink"))


def log_sigmoid(x: Tensor, name: str | None = None) -> Tensor:
    """log(sigmoid(x)), computed without overflow."""
    return _OPS["log_sigmoid"](as_tensor(x, "x", "log_sigmoid"))


# ---------------------------------------------------------------- softmax, log_softmax
# Paddle's CPU softmax kernels clip the max-shifted logits at -64 before exp (ValueClip in
# phi/kernels/funcs/softmax_impl.h), so a probability never drops below about exp(-64) and a log-probability
# (hence a softmax cross-entropy) never below about -64. Matching it keeps losses on extreme logits equal.
SOFTMAX_SHIFT_FLOOR = -64.0


def shifted_logits(xp: Any, x: Any, *, axis: int, shift: Any = None) -> Any:
    """max(x - max(x), -64) along `axis` (or x - `shift` when the max is already known), as Paddle feeds exp."""
    z = x - (x.max(axis=axis, keepdims=True) if shift is None else shift)
    xp.maximum(z, SOFTMAX_SHIFT_FLOOR, out=z)
    return z


def _softmax_np(xp, x, *, axis):
    z = shifted_logits(xp, x, axis=axis)
    xp.exp(z, out=z)
    z /= z.sum(axis=axis, keepdims=True)
    return z


def _log_softmax_np(xp, x, *, axis):
    z = shifted_logits(xp, x, axis=axis)
    z -= xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
    return z


def _softmax_meta(name: str):
    def meta(x: TensorSpec, *_grad: TensorSpec, axis: int) -> TensorSpec:
        mu.require_float(name, x)
        mu.normalize_axis(name, axis, len(x.shape))
        return x
    return meta


def _softmax_grad_kernel(xp, out, out_grad, *, axis):
    gy = out_grad * out
    gy -= out * gy.sum(axis=axis, keepdims=True)
    return gy


def _log_softmax_grad_kernel(xp, out, out_grad, *, axis):
    return out_grad - xp.exp(out) * out_grad.sum(axis=axis, keepdims=True)


def _g_softmax(ctx, g):
    (y,) = ctx.outputs
    axis = ctx.attrs["axis"]
    if _grad_state.enabled:
        return (_m.multiply(y, _m.subtract(g, _sum(_m.multiply(g, y), axis=axis, keepdim=True))),)
    return (_SOFTMAX_GRAD(y, g, axis=axis),)


def _g_log_softmax(ctx, g):
    (y,) = ctx.outputs
    axis = ctx.attrs["axis"]
    if _grad_state.enabled:
        return (_m.subtract(g, _m.multiply(_m.exp(y), _sum(g, axis=axis, keepdim=True))),)
    return (_LOG_SOFTMAX_GRAD(y, g, axis=axis),)


def _softmax_samples():
    return [Sample((_rng.normal(size=(3, 5)),), {"axis": -1}), Sample((_rng.normal(size=(2, 3, 4)),), {"axis": 1}),
            Sample((_rng.normal(size=(4,)),), {"axis": 0})]


def _softmax_grad_samples():
    y = _softmax_np(np, _rng.normal(size=(3, 5)), axis=-1)
    return [Sample((y, _rng.normal(size=(3, 5))), {"axis": -1})]


_SOFTMAX = defop("softmax", kernel=_softmax_np, meta=_softmax_meta("softmax"), grad=_g_softmax,
                 attrs={"axis": -1}, save_outputs=True, samples=_softmax_samples)
_LOG_SOFTMAX = defop("log_softmax", kernel=_log_softmax_np, meta=_softmax_meta("log_softmax"),
                     grad=_g_log_softmax, attrs={"axis": -1}, save_outputs=True, samples=_softmax_samples)
_SOFTMAX_GRAD = defop("softmax_grad", kernel=_softmax_grad_kernel, meta=_softmax_meta("softmax_grad"),
                      attrs={"axis": -1}, inputs=("out", "out_grad"), samples=_softmax_grad_samples)
_LOG_SOFTMAX_GRAD = defop("log_softmax_grad", kernel=_log_softmax_grad_kernel,
                          meta=_softmax_meta("log_softmax_grad"), attrs={"axis": -1},
                          inputs=("out", "out_grad"), samples=_softmax_grad_samples)


def _softmax_input(x: Any, dtype: Any, api: str) -> Tensor:
    x = as_tensor(x, "x", api)
    if dtype is not None:
        x = _m.cast(x, dtype)
    return x


def softmax(x: Tensor, axis: int = -1, dtype: Any = None, name: str | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis`, max-subtracted and floored at exp(-64) relative to the max, as Paddle."""
    return _SOFTMAX(_softmax_input(x, dtype, "softmax"), axis=int(axis))


def log_softmax(x: Tensor, axis: int = -1, dtype: Any = None, name: str | None = None) -> Tensor:
    """x - logsumexp(x) along `axis`, computed stably and bounded below by about -64, as Paddle."""
    return _LOG_SOFTMAX(_softmax_input(x, dtype, "log_softmax"), axis=int(axis))


# ---------------------------------------------------------------- prelu, glu
def _prelu_shape(ndim: int, size: int, channel_axis: int) -> tuple[int, ...]:
    """Broadcast shape of the prelu weight: one value, or one per channel."""
    if size == 1:
        return (1,) * ndim
    shape = [1] * ndim
    shape[channel_axis] = size
    return tuple(shape)


def _prelu_meta(x: TensorSpec, weight: TensorSpec, *, channel_axis: int) -> TensorSpec:
    mu.require_float("prelu", x)
    size = int(np.prod(weight.shape)) if weight.shape else 1
    if len(weight.shape) > 1:
        raise ValueError(f"prelu: argument 'weight' must be 1-D, got shape {mu.shape_str(weight.shape)}")
    if size != 1:
        if len(x.shape) < 2:
            raise ValueError(f"prelu: argument 'x' must have at least 2 dimensions for per-channel weights, "
                             f"got shape {mu.shape_str(x.shape)}")
        if x.shape[channel_axis] != size:
            raise ValueError(f"prelu: argument 'weight' has {size} elements but x {mu.shape_str(x.shape)} has "
                             f"{x.shape[channel_axis]} channels on axis {channel_axis} (expected 1 or that many)")
    return x


def _prelu_kernel(xp, x, weight, *, channel_axis):
    w = weight.reshape(_prelu_shape(x.ndim, weight.size, channel_axis)).astype(x.dtype, copy=False)
    return xp.where(x > 0, x, x * w)


def _g_prelu(ctx, g):
    x, w = ctx.inputs
    wb = reshape(w, list(_prelu_shape(len(x.shape), w.size, ctx.attrs["channel_axis"])))
    pos = _m.greater_than(x, 0.0)
    gx = _m.where(pos, g, _m.multiply(g, wb)) if ctx.needs_input_grad[0] else None
    gw = None
    if ctx.needs_input_grad[1]:
        gw = _m.where(pos, 0.0, _m.multiply(g, x))
        axes = [i for i in range(len(x.shape)) if w.size == 1 or i != ctx.attrs["channel_axis"]]
        gw = reshape(_sum(gw, axis=axes), list(w.shape))
    return gx, gw


_PRELU = defop("prelu", kernel=_prelu_kernel, meta=_prelu_meta, grad=_g_prelu, attrs={"channel_axis": 1},
               inputs=("x", "weight"),
               samples=lambda: [Sample((_rng.uniform(-2, 2, (2, 3, 4)), _rng.uniform(0.1, 0.5, (3,))),
                                       {"channel_axis": 1}),
                                Sample((_rng.uniform(-2, 2, (2, 4, 3)), _rng.uniform(0.1, 0.5, (1,))),
                                       {"channel_axis": 1}),
                                Sample((_rng.uniform(-2, 2, (2, 4, 3)), _rng.uniform(0.1, 0.5, (3,))),
                                       {"channel_axis": 2})])
_CHANNEL_LAST = ("NHWC", "NLC", "NDHWC")
_CHANNEL_FIRST = ("NCHW", "NCL", "NCDHW", "NC")


def prelu(x: Tensor, weight: Tensor, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """x where x > 0, else weight * x (weight: one value or one per channel)."""
    x = as_tensor(x, "x", "prelu")
    weight = as_tensor(weight, "weight", "prelu")
    if data_format not in _CHANNEL_FIRST + _CHANNEL_LAST:
        raise ValueError(f"prelu: argument 'data_format' must be one of {_CHANNEL_FIRST + _CHANNEL_LAST}, "
                         f"got {data_format!r}")
    axis = max(x.ndim - 1, 0) if data_format in _CHANNEL_LAST else min(1, max(x.ndim - 1, 0))
    return _PRELU(x, weight, channel_axis=axis)


def glu(x: Tensor, axis: int = -1, name: str | None = None) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of x along `axis`."""
    x = as_tensor(x, "x", "glu")
    ax = mu.normalize_axis("glu", axis, x.ndim)
    if x.shape[ax] % 2:
        raise ValueError(f"glu: the size of axis {axis} of x {x.shape} must be even, got {x.shape[ax]}")
    a, b = split(x, 2, axis=ax)
    return _m.multiply(a, _m.sigmoid(b))


def maxout(x: Tensor, groups: int, axis: int = 1, name: str | None = None) -> Tensor:
    """The max over each run of `groups` consecutive channels (channels on axis 1 or the last)."""
    x = as_tensor(x, "x", "maxout")
    if axis not in (1, -1, 3):
        raise ValueError(f"maxout: argument 'axis' must be 1, -1 or 3, got {axis}")
    ax = mu.normalize_axis("maxout", axis, x.ndim)
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1 or x.shape[ax] % groups:
        raise ValueError(f"maxout: the number of channels ({x.shape[ax]}) must be divisible by argument "
                         f"'groups' ({groups!r})")
    shape = x.shape[:ax] + [x.shape[ax] // groups, int(groups)] + x.shape[ax + 1:]
    return _max(reshape(x, shape), axis=ax + 1)


def _rrelu_meta(x: TensorSpec, *, lower: float, upper: float) -> tuple:
    mu.require_float("rrelu", x)
    return x, x


def _rrelu_kernel(xp, x, *, lower, upper):
    """x * a where x < 0, a ~ U(lower, upper) per element (drawn on the host); the slopes come back too."""
    a = default_generator().rng.uniform(lower, upper, x.shape).astype(x.dtype)
    slope = xp.where(x >= 0, 1.0, a if xp is np else xp.asarray(a)).astype(x.dtype, copy=False)
    return x * slope, slope


_RRELU = defop("rrelu", kernel=_rrelu_kernel, meta=_rrelu_meta,
               grad=lambda ctx, g, _slope_grad: (_m.multiply(g, ctx.outputs[1]),),
               attrs={"lower": 0.125, "upper": 1.0 / 3.0}, random=True, save_outputs=True, nondiff_outputs=(1,),
               samples=lambda: [Sample((_rng.uniform(-2, 2, (3, 4)),), {"lower": 0.1, "upper": 0.3})])


def rrelu(x: Tensor, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, training: bool = True,
          name: str | None = None) -> Tensor:
    """Leaky relu with a random slope in [lower, upper] per element while training, their mean otherwise."""
    lower, upper = mu.number_arg("rrelu", "lower", lower), mu.number_arg("rrelu", "upper", upper)
    if not 0.0 <= lower <= upper <= 1.0:
        raise ValueError(f"rrelu: arguments must satisfy 0 <= lower <= upper <= 1, got lower={lower}, upper={upper}")
    x = as_tensor(x, "x", "rrelu")
    if not training:
        return leaky_relu(x, (lower + upper) / 2.0)
    return _RRELU(x, lower=lower, upper=upper)[0]


def gumbel_softmax(x: Tensor, temperature: float = 1.0, hard: bool = False, axis: int = -1,
                   name: str | None = None) -> Tensor:
    """softmax((x + Gumbel noise) / temperature); hard=True gives one-hot values with the soft gradient."""
    x = as_tensor(x, "x", "gumbel_softmax")
    temperature = mu.number_arg("gumbel_softmax", "temperature", temperature)
    if temperature <= 0:
        raise ValueError(f"gumbel_softmax: argument 'temperature' must be positive, got {temperature}")
    ax = mu.normalize_axis("gumbel_softmax", axis, x.ndim)
    u = uniform(x.shape, dtype=x.dtype, min=float(np.finfo(x._data.dtype).tiny), max=1.0)
    noise = _m.neg(_m.log(_m.neg(_m.log(u))))
    y = softmax(_m.divide(_m.add(x, noise), temperature), axis=ax)
    if not hard:
        return y
    y_hard = _ONE_HOT(argmax(y, axis=ax), num_classes=x.shape[ax], axis=ax, dtype=x._data.dtype)
    return _m.add(_m.subtract(y_hard, y.detach()), y)


# ---------------------------------------------------------------- in-place forms
def relu_(x: Tensor, name: str | None = None) -> Tensor:
    """relu, written into x."""
    return inplace(as_tensor(x, "x", "relu_"), relu, "relu_")


def elu_(x: Tensor, alpha: float = 1.0, name: str | None = None) -> Tensor:
    """elu, written into x."""
    return inplace(as_tensor(x, "x", "elu_"), elu, "elu_", alpha)


def softmax_(x: Tensor, axis: int = -1, dtype: Any = None, name: str | None = None) -> Tensor:
    """softmax, written into x."""
    if dtype is not None and _dt.to_np_dtype(dtype) != as_tensor(x, "x", "softmax_")._data.dtype:
        raise TypeError("softmax_: an in-place softmax cannot change the dtype; use softmax(x, dtype=...)")
    return inplace(as_tensor(x, "x", "softmax_"), softmax, "softmax_", axis)
