"""Special functions: `lgamma`, `digamma`, `polygamma` (Beta, Dirichlet, Gamma and Multinomial need them).

NumPy has none of them and SciPy is not a dependency, so each kernel is written over `xp` (NumPy or CuPy):
a recurrence moves the argument up to x >= 10, where the asymptotic (Stirling) series converges to double
precision in a few terms; negative arguments go through the reflection formulas. float32 inputs are computed
in float64 and rounded once.
"""
from __future__ import annotations

import math as _pymath

import numpy as np

from .. import dtypes as _dt
from .. import place as _place
from ..tensor import Tensor, as_tensor, tensor_method
from . import math as _m
from . import meta_utils as mu
from .registry import Sample, TensorSpec, defop

__all__ = ["lgamma", "digamma", "polygamma"]

_rng = np.random.default_rng(31)
_SHIFT = 10.0  # the series below are used from here up
_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)  # B_2, B_4, ..., B_14


def _as_float64(xp, x):
    return x.astype(np.float64) if x.dtype != np.float64 else x


def _shift_up(xp, x, term):
    """(x moved up by whole steps to >= _SHIFT, the sum of term(x + k) over the steps taken)."""
    total = xp.zeros_like(x)
    steps = xp.maximum(xp.ceil(_SHIFT - x), 0.0)
    for k in range(int(steps.max()) if steps.size else 0):  # one vector pass per step; 10 or fewer for x > 0
        taken = steps > k
        total = total + xp.where(taken, term(xp.where(taken, x + k, 1.0)), 0.0)
    return x + steps, total


def _lgamma_kernel(xp, x):
    out_dtype = x.dtype if x.dtype.kind == "f" else _dt.default_float()
    x = _as_float64(xp, x)
    reflect = x < 0.5
    y = xp.where(reflect, 1.0 - x, x)  # >= 0.5
    z, log_prod = _shift_up(xp, y, lambda v: xp.log(v))
    inv = 1.0 / z
    inv2 = inv * inv
    series = inv * (1 / 12 + inv2 * (-1 / 360 + inv2 * (1 / 1260 + inv2 * (-1 / 1680 + inv2 / 1188))))
    lg = (z - 0.5) * xp.log(z) - z + 0.5 * _pymath.log(2 * _pymath.pi) + series - log_prod
    with _place.errstate(xp, divide="ignore"):
        sin_pix = xp.abs(xp.sin(_pymath.pi * (x - xp.floor(x))))  # exact zero at the poles
        refl = _pymath.log(_pymath.pi) - xp.log(sin_pix) - lg
    return xp.where(reflect, refl, lg).astype(out_dtype, copy=False)


def _digamma_positive(xp, y):
    z, recip = _shift_up(xp, y, lambda v: 1.0 / v)
    inv2 = 1.0 / (z * z)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return xp.log(z) - 0.5 / z - series - recip


def _digamma_kernel(xp, x):
    out_dtype = x.dtype if x.dtype.kind == "f" else _dt.default_float()
    x = _as_float64(xp, x)
    reflect = x < 0.5
    psi = _digamma_positive(xp, xp.where(reflect, 1.0 - x, x))
    frac = x - xp.floor(x)
    with _place.errstate(xp, divide="ignore", invalid="ignore"):
        refl = psi - _pymath.pi / xp.tan(_pymath.pi * frac)
    refl = xp.where((frac == 0) & (x < 0), np.nan, refl)  # poles at the negative integers
    refl = xp.where(x == 0, -np.inf, refl)
    return xp.where(reflect, refl, psi).astype(out_dtype, copy=False)


def _polygamma_kernel(xp, x, *, n):
    out_dtype = x.dtype if x.dtype.kind == "f" else _dt.default_float()
    x = _as_float64(xp, x)
    if n == 0:
        return _digamma_kernel(xp, x).astype(out_dtype, copy=False)
    with _place.errstate(xp, divide="ignore"):
        z, head = _shift_up(xp, x, lambda v: v ** -(n + 1.0))
    # psi^(n)(z) = (-1)^(n+1) [(n-1)!/z^n + n!/(2 z^(n+1)) + sum_k B_2k (2k+n-1)!/(2k)! / z^(2k+n)]
    tail = _pymath.factorial(n - 1) / z ** n + _pymath.factorial(n) / (2 * z ** (n + 1))
    for k, b in enumerate(_BERNOULLI_2K, start=1):
        tail = tail + b * _pymath.factorial(2 * k + n - 1) / _pymath.factorial(2 * k) / z ** (2 * k + n)
    sign = 1.0 if n % 2 else -1.0
    out = sign * (_pymath.factorial(n) * head + tail)
    out = xp.where((x <= 0) & (x == xp.floor(x)), np.nan if n % 2 == 0 else np.inf, out)
    return out.astype(out_dtype, copy=False)


def _float_meta(x: TensorSpec, **_attrs) -> TensorSpec:
    return x if x.dtype.kind == "f" else TensorSpec(x.shape, _dt.default_float())


def _samples(low: float, high: float):
    def make():
        return [Sample((_rng.uniform(low, high, (3, 4)),)), Sample((_rng.uniform(-3.7, -0.3, (5,)),)),
                Sample((np.asarray(_rng.uniform(low, high)),))]
    return make


_LGAMMA = defop("lgamma", kernel=_lgamma_kernel, meta=lambda x: _float_meta(x),
                grad=lambda ctx, g: (_m.multiply(g, digamma(ctx.inputs[0])),), samples=_samples(0.1, 30.0))
_DIGAMMA = defop("digamma", kernel=_digamma_kernel, meta=lambda x: _float_meta(x),
                 grad=lambda ctx, g: (_m.multiply(g, polygamma(ctx.inputs[0], 1)),), samples=_samples(0.1, 30.0))
_POLYGAMMA = defop("polygamma", kernel=_polygamma_kernel, attrs={"n": 1},
                   meta=lambda x, *, n: _float_meta(x),
                   grad=lambda ctx, g: (_m.multiply(g, polygamma(ctx.inputs[0], ctx.attrs["n"] + 1)),),
                   samples=lambda: [Sample((_rng.uniform(0.2, 20.0, (3, 4)),), {"n": 1}),
                                    Sample((_rng.uniform(0.5, 5.0, (4,)),), {"n": 2}),
                                    Sample((_rng.uniform(-2.7, -2.3, (4,)),), {"n": 1})])


@tensor_method
def lgamma(x: Tensor, name: str | None = None) -> Tensor:
    """log|Gamma(x)| elementwise (its gradient is digamma)."""
    return _LGAMMA(as_tensor(x, "x", "lgamma"))


@tensor_method
def digamma(x: Tensor, name: str | None = None) -> Tensor:
    """d/dx log Gamma(x) elementwise: NaN at the negative integers, -inf at 0, as Paddle."""
    return _DIGAMMA(as_tensor(x, "x", "digamma"))


@tensor_method
def polygamma(x: Tensor, n: int, name: str | None = None) -> Tensor:
    """The n-th derivative of digamma elementwise (n = 0 is digamma itself)."""
    n = mu.int_arg("polygamma", "n", n)
    if n < 0:
        raise ValueError(f"polygamma: argument 'n' must be a non-negative int, got {n}")
    return _POLYGAMMA(as_tensor(x, "x", "polygamma"), n=n)
