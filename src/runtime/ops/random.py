"""Random ops (flagged random): rand, randn, randint, uniform, normal, randperm, bernoulli,
multinomial, poisson, standard_gamma, binomial, and the in-place fills `Tensor.uniform_` / `normal_` / `exponential_`.

Every kernel draws on the host from the process-wide generator (runtime.generator) and
copies to the device when `xp` is CuPy, so one seed gives the same values everywhere.
A non-zero `seed` attribute (Paddle's per-op seed) uses a private stream from that seed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..generator import default_generator
from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .creation import _shape_arg
from .math import add, cast, log1p, multiply, neg
from .registry import Sample, TensorSpec, defop

__all__ = ["rand", "randn", "rand_like", "randn_like", "standard_normal", "normal", "uniform", "randint",
           "randint_like", "randperm", "bernoulli", "multinomial", "poisson", "standard_gamma", "binomial"]

_F32 = np.dtype("float32")
_I64 = np.dtype("int64")


# ---------------------------------------------------------------- kernel helpers
def _stream(seed: int) -> np.random.Generator:
    """The generator a kernel draws from: the global one, or a private one for a fixed seed."""
    if seed:
        return np.random.default_rng(seed)
    return default_generator().rng


def _to_device(xp, a):
    return a if xp is np else xp.asarray(a)


def _host(a) -> np.ndarray:
    return a if type(a) is np.ndarray else a.get()


def _float_draw(draw, dtype: np.dtype, shape) -> np.ndarray:
    """Draw in float32/float64 (NumPy's native random dtypes) and cast to float16 if asked."""
    native = dtype if dtype in (np.dtype("float32"), np.dtype("float64")) else _F32
    return draw(shape, native).astype(dtype, copy=False)


# ---------------------------------------------------------------- uniform / gaussian / randint
def _require_float_dtype(op: str, dtype: np.dtype) -> None:
    if dtype.kind != "f":
        raise TypeError(f"{op}: argument 'dtype' must be a floating dtype (float16/float32/float64), "
                        f"got {dtype.name}")


def _uniform_meta(*, shape: tuple, dtype: np.dtype, min: float, max: float, seed: int) -> TensorSpec:  # noqa: A002
    _require_float_dtype("uniform", dtype)
    if min > max:
        raise ValueError(f"uniform: argument 'min' ({min}) must not exceed argument 'max' ({max})")
    return TensorSpec(shape, dtype)


def _uniform_kernel(xp, *, shape, dtype, min, max, seed):  # noqa: A002
    u = _float_draw(_stream(seed).random, dtype, shape)
    if min != 0.0 or max != 1.0:
        u = (u * (max - min) + min).astype(dtype, copy=False)
    return _to_device(xp, u)


_UNIFORM = defop("uniform", kernel=_uniform_kernel, meta=_uniform_meta, inputs=(), random=True,
                 attrs={"shape": (), "dtype": _F32, "min": -1.0, "max": 1.0, "seed": 0},
                 samples=lambda: [Sample((), {"shape": (2, 3), "dtype": _F32, "min": -1.0, "max": 1.0, "seed": 0}),
                                  Sample((), {"shape": (4,), "dtype": np.dtype("float64"), "min": 0.0,
                                              "max": 1.0, "seed": 5})])


def _gaussian_meta(*, shape: tuple, mean: float, std: float, seed: int, dtype: np.dtype) -> TensorSpec:
    _require_float_dtype("normal", dtype)
    if std < 0:
        raise ValueError(f"normal: argument 'std' must be non-negative, got {std}")
    return TensorSpec(shape, dtype)


def _gaussian_kernel(xp, *, shape, mean, std, seed, dtype):
    z = _float_draw(_stream(seed).standard_normal, dtype, shape)
    if mean != 0.0 or std != 1.0:
        z = (z * std + mean).astype(dtype, copy=False)
    return _to_device(xp, z)


_GAUSSIAN = defop("gaussian", kernel=_gaussian_kernel, meta=_gaussian_meta, inputs=(), random=True,
                  attrs={"shape": (), "mean": 0.0, "std": 1.0, "seed": 0, "dtype": _F32},
                  samples=lambda: [Sample((), {"shape": (2, 3), "mean": 0.0, "std": 1.0, "seed": 0, "dtype": _F32}),
                                   Sample((), {"shape": (5,), "mean": 2.0, "std": 0.5, "seed": 0,
                                               "dtype": np.dtype("float16")})])


def _randint_meta(*, low: int, high: int, shape: tuple, dtype: np.dtype) -> TensorSpec:
    if dtype not in (np.dtype("int32"), _I64):
        raise TypeError(f"randint: argument 'dtype' must be int32 or int64, got {dtype.name}")
    if low >= high:
        raise ValueError(f"randint: argument 'low' ({low}) must be less than argument 'high' ({high})")
    return TensorSpec(shape, dtype)


_RANDINT = defop("randint", kernel=lambda xp, *, low, high, shape, dtype: _to_device(
                     xp, _stream(0).integers(low, high, size=shape, dtype=dtype)),
                 meta=_randint_meta, inputs=(), random=True,
                 attrs={"low": 0, "high": 1, "shape": (1,), "dtype": _I64},
                 samples=lambda: [Sample((), {"low": -3, "high": 7, "shape": (2, 5), "dtype": _I64})])


def _float_dtype_arg(dtype: Any) -> np.dtype:
    return _dt.default_float() if dtype is None else _dt.to_np_dtype(dtype)


def uniform(shape: Any, dtype: Any = None, min: float = -1.0, max: float = 1.0, seed: int = 0,  # noqa: A002
            name: str | None = None) -> Tensor:
    """Uniform samples in [min, max); seed=0 draws from the global generator."""
    return _UNIFORM(shape=_shape_arg("uniform", shape), dtype=_float_dtype_arg(dtype),
                    min=mu.number_arg("uniform", "min", min), max=mu.number_arg("uniform", "max", max),
                    seed=mu.int_arg("uniform", "seed", seed))


def rand(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Uniform samples in [0, 1)."""
    return _UNIFORM(shape=_shape_arg("rand", shape), dtype=_float_dtype_arg(dtype), min=0.0, max=1.0, seed=0)


def _like(op: str, x: Any, dtype: Any) -> tuple[list[int], np.dtype]:
    """x's shape and (unless `dtype` is given) its dtype, for a random op shaped like x."""
    x = as_tensor(x, "x", op)
    return x.shape, _dt.to_np_dtype(x.dtype if dtype is None else dtype)


def rand_like(input: Tensor, name: str | None = None, *, dtype: Any = None) -> Tensor:  # noqa: A002 - Paddle's name
    """rand with input's shape, in input's dtype unless `dtype` is given."""
    shape, np_dtype = _like("rand_like", input, dtype)
    return rand(shape, np_dtype)


def randn_like(x: Tensor, dtype: Any = None, name: str | None = None) -> Tensor:
    """randn with x's shape, in x's dtype unless `dtype` is given (VAE's `mu + eps * std`)."""
    shape, np_dtype = _like("randn_like", x, dtype)
    return randn(shape, np_dtype)


def standard_normal(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Samples of the standard normal distribution N(0, 1)."""
    return _GAUSSIAN(shape=_shape_arg("standard_normal", shape), mean=0.0, std=1.0, seed=0,
                     dtype=_float_dtype_arg(dtype))


def randn(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Samples of N(0, 1) (same as standard_normal)."""
    return _GAUSSIAN(shape=_shape_arg("randn", shape), mean=0.0, std=1.0, seed=0, dtype=_float_dtype_arg(dtype))


def normal(mean: Any = 0.0, std: Any = 1.0, shape: Any = None, name: str | None = None) -> Tensor:
    """Samples of N(mean, std^2); tensor mean/std give elementwise parameters (shape ignored)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        out_shape = mu.broadcast_shape("normal", tuple(mean.shape) if isinstance(mean, Tensor) else (),
                                       tuple(std.shape) if isinstance(std, Tensor) else (), ("mean", "std"))
        dtype = like._data.dtype if like._data.dtype.kind == "f" else _dt.default_float()
        z = _GAUSSIAN(shape=out_shape, mean=0.0, std=1.0, seed=0, dtype=dtype)
        return add(multiply(z, std), mean)
    return _GAUSSIAN(shape=_shape_arg("normal", [1] if shape is None else shape),
                     mean=mu.number_arg("normal", "mean", mean), std=mu.number_arg("normal", "std", std), seed=0,
                     dtype=_dt.default_float())


def randint(low: int = 0, high: int | None = None, shape: Any = (1,), dtype: Any = None,
            name: str | None = None) -> Tensor:
    """Integers uniform in [low, high) (or [0, low) when high is None); int64 by default."""
    low = mu.int_arg("randint", "low", low)
    if high is None:
        low, high = 0, low
    high = mu.int_arg("randint", "high", high)
    return _RANDINT(low=low, high=high, shape=_shape_arg("randint", shape),
                    dtype=_I64 if dtype is None else _dt.to_np_dtype(dtype))


def randint_like(x: Tensor, low: int = 0, high: int | None = None, dtype: Any = None,
                 name: str | None = None) -> Tensor:
    """randint with x's shape, in x's dtype unless `dtype` is given."""
    x = as_tensor(x, "x", "randint_like")
    out_dtype = x._data.dtype if dtype is None else _dt.to_np_dtype(dtype)
    out = randint(low, high, x.shape, _I64)
    return out if out_dtype == _I64 else cast(out, out_dtype)


# ---------------------------------------------------------------- randperm
def _randperm_meta(*, n: int, dtype: np.dtype) -> TensorSpec:
    if n < 0:
        raise ValueError(f"randperm: argument 'n' must be non-negative, got {n}")
    if dtype.kind not in "iuf":
        raise TypeError(f"randperm: argument 'dtype' must be int32, int64, float32 or float64, got {dtype.name}")
    return TensorSpec((n,), dtype)


_RANDPERM = defop("randperm", kernel=lambda xp, *, n, dtype: _to_device(xp, _stream(0).permutation(n).astype(dtype)),
                  meta=_randperm_meta, inputs=(), random=True, attrs={"n": 1, "dtype": _I64},
                  samples=lambda: [Sample((), {"n": 6, "dtype": _I64})])


def randperm(n: int, dtype: Any = "int64", name: str | None = None) -> Tensor:
    """A random permutation of 0..n-1."""
    return _RANDPERM(n=mu.int_arg("randperm", "n", n), dtype=_dt.to_np_dtype(dtype))


# ---------------------------------------------------------------- bernoulli / poisson / multinomial
def _float_input_meta(op: str):
    def meta(x: TensorSpec) -> TensorSpec:
        mu.require_float(op, x)
        return x
    return meta


def _bernoulli_kernel(xp, x):
    p = _host(x)
    return _to_device(xp, (_stream(0).random(p.shape) < p).astype(p.dtype))


def _poisson_kernel(xp, x):
    lam = _host(x)
    if lam.size and lam.min() < 0:
        raise ValueError("poisson: argument 'x' (the rates) must be non-negative")
    return _to_device(xp, _stream(0).poisson(lam).astype(lam.dtype))


_BERNOULLI = defop("bernoulli", kernel=_bernoulli_kernel, meta=_float_input_meta("bernoulli"), random=True,
                   samples=lambda: [Sample((np.linspace(0.0, 1.0, 12).reshape(3, 4),))])
_POISSON = defop("poisson", kernel=_poisson_kernel, meta=_float_input_meta("poisson"), random=True,
                 samples=lambda: [Sample((np.linspace(0.5, 4.0, 6),))])


def _standard_gamma_kernel(xp, x):
    shape = _host(x)
    if shape.size and not shape.min() > 0:
        raise ValueError("standard_gamma: argument 'x' (the concentrations) must be positive")
    return _to_device(xp, _stream(0).standard_gamma(shape).astype(shape.dtype))


_STANDARD_GAMMA = defop("standard_gamma", kernel=_standard_gamma_kernel, meta=_float_input_meta("standard_gamma"),
                        random=True, samples=lambda: [Sample((np.linspace(0.2, 4.0, 6),))])


def _binomial_meta(count: TensorSpec, prob: TensorSpec) -> TensorSpec:
    if count.dtype.kind not in "iu":
        raise TypeError(f"binomial: argument 'count' must be an integer tensor, got {count.dtype.name}")
    mu.require_float("binomial", prob, "prob")
    return TensorSpec(mu.broadcast_shape("binomial", count.shape, prob.shape, ("count", "prob")), _I64)


def _binomial_kernel(xp, count, prob):
    n, p = _host(count), _host(prob)
    if n.size and n.min() < 0 or p.size and not (p.min() >= 0 and p.max() <= 1):
        raise ValueError("binomial: argument 'count' must be non-negative and 'prob' in [0, 1]")
    return _to_device(xp, _stream(0).binomial(n, p).astype(np.int64))


_BINOMIAL = defop("binomial", kernel=_binomial_kernel, meta=_binomial_meta, inputs=("count", "prob"), random=True,
                  samples=lambda: [Sample((np.array([3, 10, 0]), np.linspace(0.1, 0.9, 3)))])


def _multinomial_meta(x: TensorSpec, *, num_samples: int, replacement: bool) -> TensorSpec:
    mu.require_float("multinomial", x)
    if len(x.shape) not in (1, 2):
        raise ValueError(f"multinomial: argument 'x' must be 1-D or 2-D, got shape {mu.shape_str(x.shape)}")
    if num_samples < 1:
        raise ValueError(f"multinomial: argument 'num_samples' must be positive, got {num_samples}")
    if not replacement and x.shape[-1] != -1 and num_samples > x.shape[-1]:
        raise ValueError(f"multinomial: num_samples ({num_samples}) exceeds the number of categories "
                         f"({x.shape[-1]}) when replacement=False")
    return TensorSpec(tuple(x.shape[:-1]) + (num_samples,), _I64)


def _multinomial_kernel(xp, x, *, num_samples, replacement):
    p = _host(x).astype(np.float64)
    rows = p.reshape(-1, p.shape[-1])
    if rows.size and rows.min() < 0:
        raise ValueError("multinomial: argument 'x' must hold non-negative probabilities")
    nonzero = (rows > 0).sum(axis=1)
    if rows.shape[0] and nonzero.min() < (1 if replacement else num_samples):
        raise ValueError(f"multinomial: each row of 'x' needs at least {1 if replacement else num_samples} "
                         "positive probabilities")
    rng = _stream(0)
    n, c = rows.shape
    if replacement:
        # inverse CDF for every row at once: offset row r's CDF and draws by r, one searchsorted
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        offset = np.arange(n, dtype=np.float64)[:, None]
        u = rng.random((n, num_samples))
        idx = np.searchsorted((cdf + offset).ravel(), (u + offset).ravel(), side="right").reshape(n, num_samples)
        out = np.minimum(idx - offset.astype(np.int64) * c, c - 1)
    else:
        # exponential race: the k smallest E_i / p_i are a sample without replacement
        with np.errstate(divide="ignore"):
            keys = rng.standard_exponential((n, c)) / rows
        out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    return _to_device(xp, out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


_MULTINOMIAL = defop("multinomial", kernel=_multinomial_kernel, meta=_multinomial_meta, random=True,
                     attrs={"num_samples": 1, "replacement": False},
                     samples=lambda: [Sample((np.array([0.1, 0.2, 0.3, 0.4]),), {"num_samples": 3, "replacement": False}),
                                      Sample((np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]),),
                                             {"num_samples": 5, "replacement": True})])


def bernoulli(x: Tensor, name: str | None = None) -> Tensor:
    """0/1 samples with P(1) = x elementwise, in x's dtype."""
    return _BERNOULLI(as_tensor(x, "x", "bernoulli"))


def poisson(x: Tensor, name: str | None = None) -> Tensor:
    """Poisson samples with rate x elementwise, in x's dtype."""
    return _POISSON(as_tensor(x, "x", "poisson"))


def standard_gamma(x: Tensor, name: str | None = None) -> Tensor:
    """Gamma(x, 1) samples elementwise, in x's dtype (not differentiable, as Paddle's)."""
    return _STANDARD_GAMMA(as_tensor(x, "x", "standard_gamma"))


def binomial(count: Tensor, prob: Tensor, name: str | None = None) -> Tensor:
    """Binomial(count, prob) draws elementwise (int64, as Paddle's)."""
    return _BINOMIAL(as_tensor(count, "count", "binomial"), as_tensor(prob, "prob", "binomial"))


def multinomial(x: Tensor, num_samples: int = 1, replacement: bool = False, name: str | None = None) -> Tensor:
    """Category indices drawn from the (unnormalised) probabilities in the last axis of x."""
    return _MULTINOMIAL(as_tensor(x, "x", "multinomial"), num_samples=mu.int_arg("multinomial", "num_samples",
                                                                                num_samples),
                        replacement=bool(replacement))


# ---------------------------------------------------------------- in-place fills
def _refill(x: Tensor, values: Tensor) -> Tensor:
    """Overwrite x's values with fresh random ones; no gradient flows to what x was computed from."""
    x._data[...] = values._data
    x._version += 1
    x._node = None
    x._oidx = 0
    return x


@tensor_method
def uniform_(x: Tensor, min: float = -1.0, max: float = 1.0, seed: int = 0,  # noqa: A002
             name: str | None = None) -> Tensor:
    """Fill x in place with uniform samples in [min, max)."""
    x = as_tensor(x, "x", "uniform_")
    mu.require_float("uniform_", TensorSpec(x._data.shape, x._data.dtype))
    return _refill(x, uniform(x.shape, x._data.dtype, min, max, seed))


@tensor_method
def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, name: str | None = None) -> Tensor:
    """Fill x in place with samples of N(mean, std^2)."""
    x = as_tensor(x, "x", "normal_")
    mu.require_float("normal_", TensorSpec(x._data.shape, x._data.dtype))
    return _refill(x, _GAUSSIAN(shape=x._data.shape, mean=mu.number_arg("normal_", "mean", mean),
                                std=mu.number_arg("normal_", "std", std), seed=0, dtype=x._data.dtype))


@tensor_method
def exponential_(x: Tensor, lam: float = 1.0, name: str | None = None) -> Tensor:
    """Fill x in place with samples of Exponential(lam)."""
    x = as_tensor(x, "x", "exponential_")
    mu.require_float("exponential_", TensorSpec(x._data.shape, x._data.dtype))
    lam = mu.number_arg("exponential_", "lam", lam)
    if lam <= 0:
        raise ValueError(f"exponential_: argument 'lam' must be positive, got {lam}")
    u = uniform(x.shape, x._data.dtype, 0.0, 1.0)
    return _refill(x, multiply(neg(log1p(neg(u))), 1.0 / lam))
