"""The `Distribution` base class: shapes, parameter conversion and the methods every distribution shares.

Parameter conversion follows Paddle's: Python floats, lists and NumPy arrays become float32 tensors (float64
arrays stay float64) broadcast to one shape; a mix of tensors and non-tensors raises ValueError.
"""
from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype, to_np_dtype
from ..ops.activation import softmax
from ..ops.creation import full_like
from ..ops.grad_mode import no_grad
from ..ops.math import sigmoid, where
from ..tensor import Tensor, to_tensor

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """Base of every distribution: `batch_shape` (independent parameter sets) and `event_shape` (one draw)."""

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = ()) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return self._event_shape

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """Draws of shape `shape + batch_shape`: `rsample`'s, outside autograd (a distribution without a
        reparameterised draw overrides this)."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def kl_divergence(self, other: Distribution) -> Tensor:
        raise NotImplementedError

    def prob(self, value: Tensor) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def probs(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def _extend_shape(self, sample_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(sample_shape_arg(sample_shape)) + self._batch_shape + self._event_shape

    def _validate_args(self, *args: Any) -> bool:
        """True when every argument is a Tensor; a mix of tensors and other values raises ValueError."""
        tensors = [isinstance(a, Tensor) for a in args]
        if any(tensors) and not all(tensors):
            raise ValueError("if one argument is Tensor, all arguments should be Tensor")
        return all(tensors)

    def _to_tensor(self, *args: Any) -> tuple[Tensor, ...]:
        """Numbers, lists and arrays as float32 tensors of one broadcast shape (callers cast afterwards where a
        float64 array asks for it); other dtypes are converted with Paddle's warning."""
        arrays = []
        for arg in args:
            if not isinstance(arg, (float, list, tuple, np.ndarray, Tensor)):
                raise TypeError("Type of input args must be float, list, tuple, numpy.ndarray or Tensor, but "
                                f"received type {type(arg)}")
            a = arg.numpy() if isinstance(arg, Tensor) else np.array(arg)
            if a.dtype not in (np.float32, np.float64):
                warnings.warn("data type of argument only support float32 and float64, your argument "
                              "will be convert to float32.", stacklevel=3)
            arrays.append(a.astype("float32"))
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        return tuple(to_tensor(np.broadcast_to(a, shape).copy()) for a in arrays)

    def _check_values_dtype_in_probs(self, param: Tensor, value: Tensor) -> Tensor:
        """`value` in the parameters' float dtype (Paddle converts, with a warning)."""
        if value.dtype != param.dtype and to_np_dtype(value.dtype).kind == "f":
            warnings.warn("dtype of input 'value' needs to be the same as parameters of distribution class. "
                          "dtype of 'value' will be converted.", stacklevel=3)
            return value.astype(param.dtype)
        return value

    def _probs_to_logits(self, probs: Tensor, is_binary: bool = False) -> Tensor:
        return probs.log() - (-probs).log1p() if is_binary else probs.log()

    def _logits_to_probs(self, logits: Tensor, is_binary: bool = False) -> Tensor:
        return sigmoid(logits) if is_binary else softmax(logits, axis=-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={list(self.batch_shape)}, event_shape={list(self.event_shape)})"


class ExponentialFamily(Distribution):
    """Marker base of the exponential-family distributions (Bernoulli, Exponential, Gamma, Beta, Dirichlet)."""


def sample_shape_arg(shape: Any) -> list[int]:
    """A sample shape as a list of ints; Paddle raises TypeError for anything not iterable."""
    if not isinstance(shape, Iterable):
        raise TypeError("sample shape must be Iterable object.")
    return [int(s) for s in shape]


def sum_rightmost(value: Tensor, n: int) -> Tensor:
    """`value` summed over its last n axes (the event axes)."""
    return value.sum(list(range(-n, 0))) if n > 0 else value


def as_float_tensor(value: Any, like: Tensor) -> Tensor:
    """A number or array argument (cdf, icdf, log_prob values) as a tensor of `like`'s dtype."""
    if isinstance(value, Tensor):
        return value if value.dtype == like.dtype else value.astype(like.dtype)
    return to_tensor(np.asarray(value, dtype=to_np_dtype(like.dtype)))


def number_param(value: Any) -> Tensor:
    """A Python number parameter (Laplace, Gumbel, Beta) as a 0-D tensor of the default dtype."""
    return to_tensor(np.asarray(value, dtype=get_default_dtype()))


def pair_params(dist: Distribution, a: Any, b: Any) -> tuple[Tensor, Tensor, bool]:
    """Normal's and Uniform's two parameters as tensors of one dtype, and whether both were Python numbers.

    Tensors are kept as given (their dtype wins); otherwise a float64 NumPy array makes both float64 and
    anything else gives float32, as Paddle's constructors do.
    """
    a = float(a) if isinstance(a, int) and not isinstance(a, bool) else a
    b = float(b) if isinstance(b, int) and not isinstance(b, bool) else b
    a = np.array(a, dtype="float32") if isinstance(a, (list, tuple)) else a
    b = np.array(b, dtype="float32") if isinstance(b, (list, tuple)) else b
    if dist._validate_args(a, b):
        return a, b, False
    dtype = next((x.dtype for x in (a, b) if isinstance(x, np.ndarray) and x.dtype in (np.float32, np.float64)),
                 np.dtype("float32"))
    ta, tb = dist._to_tensor(a, b)
    return ta.astype(dtype), tb.astype(dtype), isinstance(a, float) and isinstance(b, float)


def real_param(arg: str, v: Any) -> Tensor:
    """A parameter that must be a real number (made a 0-D default-dtype tensor) or a Tensor (Laplace, Gumbel,
    Cauchy), else Paddle's TypeError naming it."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return number_param(v)
    raise TypeError(f"Expected type of {arg} is Real|Variable, but got {type(v)}")


def neginf_to(x: Tensor, value: float) -> Tensor:
    """Paddle's nan_to_num(x, neginf=value): NaN -> 0, -inf -> value, +inf -> the dtype's largest."""
    big = float(np.finfo(to_np_dtype(x.dtype)).max)
    return where(x.isnan(), full_like(x, 0.0), where(x == -np.inf, full_like(x, value),
                                                     where(x == np.inf, full_like(x, big), x)))
