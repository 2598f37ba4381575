"""Optimizer update ops (in place): sgd, momentum, adam, adamw, rmsprop, adagrad, adamax, lamb.

Each kernel updates the parameter and its state arrays IN PLACE with a handful of fused
`out=` ufunc calls into one per-thread scratch buffer, and returns those same arrays, so a
static graph records them as outputs. Inputs are ordered (param, grad, learning_rate,
states...); learning rates and beta powers are one-element floating arrays read as host
scalars. The meta functions check every argument before a kernel touches anything: eager
optimizers (`runtime.optimizer`) call `check` for every parameter first and only then run
the kernels, which is what makes a failing `step()` leave all state as it was.
"""
from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from . import meta_utils as mu
from .registry import OpDef, Sample, TensorSpec, defop

__all__: list[str] = []

_META_CACHE_LIMIT = 4096


# ---------------------------------------------------------------- validation
def _require(op: str, spec: TensorSpec | None, arg: str) -> TensorSpec:
    if spec is None:
        raise ValueError(f"{op}: argument '{arg}' is required, got None")
    return spec


def _check_like(op: str, param: TensorSpec, **others: TensorSpec | None) -> None:
    """`param` is floating; each other argument has exactly its shape and dtype."""
    mu.require_float(op, _require(op, param, "param"), "param")
    for arg, spec in others.items():
        spec = _require(op, spec, arg)
        if tuple(spec.shape) != tuple(param.shape):
            raise ValueError(f"{op}: argument '{arg}' has shape {mu.shape_str(spec.shape)} but 'param' has "
                             f"shape {mu.shape_str(param.shape)}; they must be equal")
        if spec.dtype != param.dtype:
            raise TypeError(f"{op}: argument '{arg}' has dtype {spec.dtype.name} but 'param' has dtype "
                            f"{param.dtype.name}; they must be equal")


def _check_scalars(op: str, **scalars: TensorSpec | None) -> None:
    """Learning rates and beta powers: floating tensors holding exactly one element."""
    for arg, spec in scalars.items():
        mu.require_float(op, _require(op, spec, arg), arg)
        if -1 not in spec.shape and math.prod(spec.shape) != 1:
            raise ValueError(f"{op}: argument '{arg}' must hold exactly one element, got shape "
                             f"{mu.shape_str(spec.shape)}")


_RANGES = {  # what an attribute must be: (test, words for the error)
    "unit": (lambda v: 0.0 <= v < 1.0, "in [0, 1)"),
    "closed_unit": (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"),
    "nonneg": (lambda v: v >= 0.0, "a number >= 0"),
}


def _check_range(op: str, arg: str, value: float, kind: str) -> None:
    ok, what = _RANGES[kind]
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not ok(value):
        raise ValueError(f"{op}: attribute '{arg}' must be {what}, got {value!r}")


def check(op: OpDef, arrays: tuple, attrs: dict) -> None:
    """Run `op`'s meta on arrays (memoised per shapes, dtypes and attributes, as eager dispatch does)."""
    key = [tuple(attrs.items()) if attrs else None]
    for a in arrays:
        if a is None:
            key.append(None)
        else:
            key.append(a.shape)
            key.append(a.dtype)
    key = tuple(key)
    cache = op.meta_cache
    if key in cache:
        return
    out = op.meta(*(None if a is None else TensorSpec(a.shape, a.dtype) for a in arrays), **attrs)
    if len(cache) < _META_CACHE_LIMIT:
        cache[key] = out


# ---------------------------------------------------------------- scratch
class _Scratch(threading.local):
    """Growing flat buffers per (slot, array type, device, dtype) and thread: kernels allocate nothing."""

    def __init__(self) -> None:
        self.buffers: dict = {}


_SCRATCH = _Scratch()


def _scratch(xp, like, slot: int = 0):
    """A scratch array shaped like `like` (contents undefined), reused across calls; kernels that
    need two temporaries at once ask for two slots."""
    dev = None if type(like) is np.ndarray else like.device.id
    key = (slot, dev, like.dtype)
    buf = _SCRATCH.buffers.get(key)
    n = like.size
    if buf is None or buf.size < n:
        buf = xp.empty(n, like.dtype)
        _SCRATCH.buffers[key] = buf
    return buf[:n].reshape(like.shape)


# ---------------------------------------------------------------- scalars
def _read(a: Any) -> Any:
    """A [1] input (learning rate, beta power) as a number to compute with: from host memory a Python float;
    from device memory a 0-d float64 device array, since reading it on the host would wait for the device
    and could not be captured into a CUDA graph. Both compute in double precision, so they round alike."""
    if type(a) is np.ndarray:
        return a.item()
    return a.reshape(()).astype(np.float64)


def _sqrt(xp, v: Any) -> Any:
    return math.sqrt(v) if type(v) is float else xp.sqrt(v)


def _as(v: Any, like: Any) -> Any:
    """A scalar from `_read` next to array `like`: a Python float as it is (the ufunc rounds it to like's
    dtype), a device scalar rounded to like's dtype the same way (a float64 array would not be)."""
    return v if type(v) is float else v.astype(like.dtype)


# ---------------------------------------------------------------- sgd
def _sgd_meta(param, grad, learning_rate):
    _check_like("sgd", param, grad=grad)
    _check_scalars("sgd", learning_rate=learning_rate)
    return param


def _sgd_kernel(xp, param, grad, learning_rate):
    tmp = _scratch(xp, param)
    xp.multiply(grad, _as(_read(learning_rate), grad), out=tmp)
    xp.subtract(param, tmp, out=param)
    return param


# ---------------------------------------------------------------- momentum
def _momentum_meta(param, grad, learning_rate, velocity, *, mu, use_nesterov):
    _check_like("momentum", param, grad=grad, velocity=velocity)
    _check_scalars("momentum", learning_rate=learning_rate)
    _check_range("momentum", "mu", mu, "nonneg")
    return param, velocity


def _momentum_kernel(xp, param, grad, learning_rate, velocity, *, mu, use_nesterov):
    """velocity = mu*velocity + g; param -= lr*(g + mu*velocity) (Nesterov) or lr*velocity."""
    lr = _as(_read(learning_rate), param)
    tmp = _scratch(xp, param)
    velocity *= mu
    velocity += grad
    if use_nesterov:
        xp.multiply(velocity, mu, out=tmp)
        tmp += grad
        tmp *= lr
    else:
        xp.multiply(velocity, lr, out=tmp)
    xp.subtract(param, tmp, out=param)
    return param, velocity


# ---------------------------------------------------------------- adam / adamw
def _adam_checks(op, param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                 beta1, beta2, epsilon):
    _check_like(op, param, grad=grad, moment1=moment1, moment2=moment2)
    _check_scalars(op, learning_rate=learning_rate, beta1_pow=beta1_pow, beta2_pow=beta2_pow)
    _check_range(op, "beta1", beta1, "unit")
    _check_range(op, "beta2", beta2, "unit")
    _check_range(op, "epsilon", epsilon, "nonneg")
    return param, moment1, moment2, beta1_pow, beta2_pow


def _adam_meta(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, *,
               beta1, beta2, epsilon):
    return _adam_checks("adam", param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                        beta1, beta2, epsilon)


def _update_moments(xp, grad, moment1, moment2, beta1: float, beta2: float, tmp) -> None:
    """Adam's moment updates in place: m = beta1*m + (1-beta1)*g, v = beta2*v + (1-beta2)*g*g (`tmp` a scratch
    array of the parameter's shape)."""
    moment1 *= beta1
    xp.multiply(grad, 1.0 - beta1, out=tmp)
    moment1 += tmp
    moment2 *= beta2
    xp.multiply(grad, grad, out=tmp)
    tmp *= 1.0 - beta2
    moment2 += tmp


def _adam_update(xp, param, grad, lr, moment1, moment2, beta1_pow, beta2_pow, beta1, beta2, epsilon):
    """Paddle's Adam with bias correction folded into scalars: 12 passes, no allocation.

    lr_t = lr*sqrt(1-beta2^t)/(1-beta1^t); param -= lr_t*m/(sqrt(v) + eps*sqrt(1-beta2^t)).
    """
    b1p = _read(beta1_pow)
    c2 = _sqrt(xp, 1.0 - _read(beta2_pow))
    lr_t = lr * c2 / (1.0 - b1p)
    tmp = _scratch(xp, param)
    _update_moments(xp, grad, moment1, moment2, beta1, beta2, tmp)
    xp.sqrt(moment2, out=tmp)
    tmp += _as(epsilon * c2, tmp)
    xp.divide(moment1, tmp, out=tmp)
    tmp *= _as(lr_t, tmp)
    xp.subtract(param, tmp, out=param)
    beta1_pow *= beta1
    beta2_pow *= beta2
    return param, moment1, moment2, beta1_pow, beta2_pow


def _adam_kernel(xp, param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, *,
                 beta1, beta2, epsilon):
    return _adam_update(xp, param, grad, _read(learning_rate), moment1, moment2, beta1_pow, beta2_pow,
                        beta1, beta2, epsilon)


def _adamw_meta(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, *,
                beta1, beta2, epsilon, coeff, lr_ratio, with_decay):
    _check_range("adamw", "coeff", coeff, "nonneg")
    _check_range("adamw", "lr_ratio", lr_ratio, "nonneg")
    return _adam_checks("adamw", param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                        beta1, beta2, epsilon)


def _adamw_kernel(xp, param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, *,
                  beta1, beta2, epsilon, coeff, lr_ratio, with_decay):
    """Decoupled decay param *= 1 - lr*lr_ratio*coeff, then Adam with lr*lr_ratio (as Paddle)."""
    lr = _read(learning_rate) * lr_ratio
    if with_decay and coeff:
        param *= _as(1.0 - lr * coeff, param)
    return _adam_update(xp, param, grad, lr, moment1, moment2, beta1_pow, beta2_pow, beta1, beta2, epsilon)


# ---------------------------------------------------------------- rmsprop
def _rmsprop_meta(param, grad, learning_rate, moment, mean_square, mean_grad, *,
                  epsilon, decay, momentum, centered):
    _check_like("rmsprop", param, grad=grad, moment=moment, mean_square=mean_square, mean_grad=mean_grad)
    _check_scalars("rmsprop", learning_rate=learning_rate)
    _check_range("rmsprop", "epsilon", epsilon, "nonneg")
    _check_range("rmsprop", "decay", decay, "closed_unit")
    _check_range("rmsprop", "momentum", momentum, "nonneg")
    return param, moment, mean_square, mean_grad


def _rmsprop_kernel(xp, param, grad, learning_rate, moment, mean_square, mean_grad, *,
                    epsilon, decay, momentum, centered):
    """ms = rho*ms + (1-rho)g^2; [mg = rho*mg + (1-rho)g]; mom = momentum*mom + lr*g/sqrt(ms [- mg^2] + eps)."""
    lr = _as(_read(learning_rate), param)
    tmp = _scratch(xp, param)
    mean_square *= decay
    xp.multiply(grad, grad, out=tmp)
    tmp *= 1.0 - decay
    mean_square += tmp
    if centered:
        mean_grad *= decay
        xp.multiply(grad, 1.0 - decay, out=tmp)
        mean_grad += tmp
        xp.multiply(mean_grad, mean_grad, out=tmp)
        xp.subtract(mean_square, tmp, out=tmp)
        tmp += epsilon
    else:
        xp.add(mean_square, epsilon, out=tmp)
    xp.sqrt(tmp, out=tmp)
    xp.divide(grad, tmp, out=tmp)
    tmp *= lr
    moment *= momentum
    moment += tmp
    xp.subtract(param, moment, out=param)
    return param, moment, mean_square, mean_grad


# ---------------------------------------------------------------- adagrad
def _adagrad_meta(param, grad, learning_rate, moment, *, epsilon):
    _check_like("adagrad", param, grad=grad, moment=moment)
    _check_scalars("adagrad", learning_rate=learning_rate)
    _check_range("adagrad", "epsilon", epsilon, "nonneg")
    return param, moment


def _adagrad_kernel(xp, param, grad, learning_rate, moment, *, epsilon):
    """moment += g^2; param -= lr * g / (sqrt(moment) + eps)."""
    tmp = _scratch(xp, param)
    xp.multiply(grad, grad, out=tmp)
    moment += tmp
    xp.sqrt(moment, out=tmp)
    tmp += epsilon
    xp.divide(grad, tmp, out=tmp)
    tmp *= _as(_read(learning_rate), tmp)
    xp.subtract(param, tmp, out=param)
    return param, moment


# ---------------------------------------------------------------- adamax
def _adamax_meta(param, grad, learning_rate, moment, inf_norm, beta1_pow, *, beta1, beta2, epsilon):
    _check_like("adamax", param, grad=grad, moment=moment, inf_norm=inf_norm)
    _check_scalars("adamax", learning_rate=learning_rate, beta1_pow=beta1_pow)
    _check_range("adamax", "beta1", beta1, "unit")
    _check_range("adamax", "beta2", beta2, "unit")
    _check_range("adamax", "epsilon", epsilon, "nonneg")
    return param, moment, inf_norm, beta1_pow


def _adamax_kernel(xp, param, grad, learning_rate, moment, inf_norm, beta1_pow, *, beta1, beta2, epsilon):
    """m = b1*m + (1-b1)g; u = max(b2*u + eps, |g|); param -= lr/(1-b1^t) * m/u; b1^t *= b1."""
    lr_t = _read(learning_rate) / (1.0 - _read(beta1_pow))
    tmp = _scratch(xp, param)
    moment *= beta1
    xp.multiply(grad, 1.0 - beta1, out=tmp)
    moment += tmp
    inf_norm *= beta2
    inf_norm += epsilon
    xp.abs(grad, out=tmp)
    xp.maximum(inf_norm, tmp, out=inf_norm)
    xp.divide(moment, inf_norm, out=tmp)
    tmp *= _as(lr_t, tmp)
    xp.subtract(param, tmp, out=param)
    beta1_pow *= beta1
    return param, moment, inf_norm, beta1_pow


# ---------------------------------------------------------------- lamb
def _lamb_meta(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, *,
               weight_decay, beta1, beta2, epsilon, always_adapt):
    _check_range("lamb", "weight_decay", weight_decay, "nonneg")
    return _adam_checks("lamb", param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                        beta1, beta2, epsilon)


def _norm(xp, a) -> Any:
    """||a|| in double precision: a Python float on the host, a 0-d device array on a device (no wait)."""
    flat = a.reshape(-1)
    squares = xp.vdot(flat, flat)
    return math.sqrt(float(squares)) if xp is np else xp.sqrt(squares.astype(np.float64))


def _lamb_kernel(xp, param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow, *,
                 weight_decay, beta1, beta2, epsilon, always_adapt):
    """Adam's moments, r = m_hat/(sqrt(v_hat) + eps) + wd*param, then param -= lr * ratio * r with the
    trust ratio ||param|| / ||r|| (1 when either is 0, or when wd == 0 and not always_adapt)."""
    b1c, b2c = 1.0 - _read(beta1_pow), 1.0 - _read(beta2_pow)
    tmp, r = _scratch(xp, param), _scratch(xp, param, 1)
    _update_moments(xp, grad, moment1, moment2, beta1, beta2, tmp)
    xp.divide(moment2, _as(b2c, r), out=r)
    xp.sqrt(r, out=r)
    r += epsilon
    xp.divide(moment1, r, out=r)
    r /= _as(b1c, r)
    if weight_decay:
        xp.multiply(param, weight_decay, out=tmp)
        r += tmp
    ratio = 1.0
    if weight_decay > 0 or always_adapt:
        p_norm, r_norm = _norm(xp, param), _norm(xp, r)
        if xp is not np:   # on the device, no branch on the norms' values (that would wait for it)
            ratio = xp.where((p_norm > 0) & (r_norm > 0), p_norm / xp.where(r_norm > 0, r_norm, 1.0), 1.0)
        elif p_norm > 0 and r_norm > 0:
            ratio = p_norm / r_norm
    r *= _as(_read(learning_rate) * ratio, r)
    xp.subtract(param, r, out=param)
    beta1_pow *= beta1
    beta2_pow *= beta2
    return param, moment1, moment2, beta1_pow, beta2_pow


# ---------------------------------------------------------------- registration
_rng = np.random.default_rng(21)


def _arr(*shape, low=-1.0, high=1.0):
    return _rng.uniform(low, high, size=shape)


def _one(v: float):
    return np.array([v])


def _sgd_samples():
    return [Sample((_arr(3, 4), _arr(3, 4), _one(0.1))), Sample((_arr(5), _arr(5), _one(0.01)))]


def _momentum_samples():
    return [Sample((_arr(3, 4), _arr(3, 4), _one(0.1), _arr(3, 4)), {"mu": 0.9, "use_nesterov": nes})
            for nes in (False, True)]


def _adam_inputs(*shape):
    return (_arr(*shape), _arr(*shape), _one(0.01), _arr(*shape), _arr(*shape, low=0.1, high=1.0),
            _one(0.9 ** 3), _one(0.999 ** 3))


_ADAM_ATTRS = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}


def _adam_samples():
    return [Sample(_adam_inputs(3, 4), dict(_ADAM_ATTRS)), Sample(_adam_inputs(6), dict(_ADAM_ATTRS))]


def _adamw_samples():
    return [Sample(_adam_inputs(3, 4), {**_ADAM_ATTRS, "coeff": 0.01, "lr_ratio": 1.0, "with_decay": True}),
            Sample(_adam_inputs(2, 3), {**_ADAM_ATTRS, "coeff": 0.1, "lr_ratio": 0.5, "with_decay": False})]


def _rmsprop_samples():
    def inputs():
        return (_arr(3, 4), _arr(3, 4), _one(0.01), _arr(3, 4), _arr(3, 4, low=0.5, high=1.0),
                _arr(3, 4, low=-0.1, high=0.1))
    return [Sample(inputs(), {"epsilon": 1e-6, "decay": 0.95, "momentum": m, "centered": c})
            for m, c in ((0.0, False), (0.9, True))]


def _adagrad_samples():
    return [Sample((_arr(3, 4), _arr(3, 4), _one(0.1), _arr(3, 4, low=0.0, high=1.0)), {"epsilon": e})
            for e in (1e-6, 0.1)]


def _adamax_samples():
    return [Sample((_arr(3, 4), _arr(3, 4), _one(0.01), _arr(3, 4), _arr(3, 4, low=0.1, high=1.0), _one(0.9 ** 2)),
                   dict(_ADAM_ATTRS))]


def _lamb_samples():
    return [Sample(_adam_inputs(3, 4), {**_ADAM_ATTRS, "weight_decay": wd, "always_adapt": adapt})
            for wd, adapt in ((0.01, False), (0.0, False), (0.0, True))]


_FLAGS = {"inplace": True, "side_effect": True}

SGD = defop("sgd", kernel=_sgd_kernel, meta=_sgd_meta, inputs=("param", "grad", "learning_rate"),
            samples=_sgd_samples, **_FLAGS)
MOMENTUM = defop("momentum", kernel=_momentum_kernel, meta=_momentum_meta,
                 attrs={"mu": 0.9, "use_nesterov": False},
                 inputs=("param", "grad", "learning_rate", "velocity"), samples=_momentum_samples, **_FLAGS)
_ADAM_INPUTS = ("param", "grad", "learning_rate", "moment1", "moment2", "beta1_pow", "beta2_pow")
ADAM = defop("adam", kernel=_adam_kernel, meta=_adam_meta, attrs=dict(_ADAM_ATTRS),
             inputs=_ADAM_INPUTS, samples=_adam_samples, **_FLAGS)
ADAMW = defop("adamw", kernel=_adamw_kernel, meta=_adamw_meta,
              attrs={**_ADAM_ATTRS, "coeff": 0.01, "lr_ratio": 1.0, "with_decay": True},
              inputs=_ADAM_INPUTS, samples=_adamw_samples, **_FLAGS)
RMSPROP = defop("rmsprop", kernel=_rmsprop_kernel, meta=_rmsprop_meta,
                attrs={"epsilon": 1e-6, "decay": 0.95, "momentum": 0.0, "centered": False},
                inputs=("param", "grad", "learning_rate", "moment", "mean_square", "mean_grad"),
                samples=_rmsprop_samples, **_FLAGS)
ADAGRAD = defop("adagrad", kernel=_adagrad_kernel, meta=_adagrad_meta, attrs={"epsilon": 1e-6},
                inputs=("param", "grad", "learning_rate", "moment"), samples=_adagrad_samples, **_FLAGS)
ADAMAX = defop("adamax", kernel=_adamax_kernel, meta=_adamax_meta, attrs=dict(_ADAM_ATTRS),
               inputs=("param", "grad", "learning_rate", "moment", "inf_norm", "beta1_pow"),
               samples=_adamax_samples, **_FLAGS)
LAMB = defop("lamb", kernel=_lamb_kernel, meta=_lamb_meta,
             attrs={**_ADAM_ATTRS, "epsilon": 1e-6, "weight_decay": 0.01, "always_adapt": False},
             inputs=_ADAM_INPUTS, samples=_lamb_samples, **_FLAGS)
