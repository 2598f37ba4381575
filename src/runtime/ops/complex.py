"""Complex tensors: building them from real parts and taking them apart.

Gradients follow Paddle's convention for a real loss L of a complex z = a + ib: the gradient is
dL/da + i*dL/db, so the rule of an op that splits z into real tensors puts each real gradient back
in its own part, and a real input of a complex-valued op receives the real part (see `unbroadcast`).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .creation import zeros_like
from .grad_utils import unbroadcast
from .math import add, divide, equal, multiply, neg, where
from .registry import Sample, TensorSpec, defop

__all__ = ["complex", "real", "imag", "angle", "as_complex", "as_real"]

_rng = np.random.default_rng(4321)


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype holding two of `dtype` (float64 -> complex128, otherwise complex64)."""
    return np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the parts of a complex dtype (complex64 -> float32, complex128 -> float64)."""
    return np.dtype(dtype.char.lower())


def _f64(*shape):
    return _rng.uniform(-2.0, 2.0, size=shape)


def _c128(*shape):
    return _f64(*shape) + 1j * _f64(*shape)


def _require_complex(op: str, x: TensorSpec, arg: str = "x") -> None:
    mu.require_dtype_kind(op, x, "c", "a complex tensor (complex64/complex128)", arg)


tensor_method(_dt.is_complex)  # x.is_complex(), as Paddle's Tensor has it


# ---------------------------------------------------------------- complex(real, imag)
def _complex_meta(real: TensorSpec, imag: TensorSpec) -> TensorSpec:
    mu.require_float("complex", real, "real")
    mu.require_float("complex", imag, "imag")
    if real.dtype != imag.dtype:
        raise TypeError(f"complex: arguments 'real' ({real.dtype.name}) and 'imag' ({imag.dtype.name}) "
                        "must have the same dtype")
    return TensorSpec(mu.broadcast_shape("complex", real.shape, imag.shape, ("real", "imag")),
                      complex_dtype(real.dtype))


def _complex_kernel(xp, real, imag):
    return (real + imag * 1j).astype(complex_dtype(real.dtype), copy=False)


def _g_complex(ctx, g):
    re, im = ctx.inputs
    return unbroadcast(real(g), re), unbroadcast(imag(g), im)


_COMPLEX = defop("complex", kernel=_complex_kernel, meta=_complex_meta, grad=_g_complex, inputs=("real", "imag"),
                 samples=lambda: [Sample((_f64(3, 4), _f64(3, 4))), Sample((_f64(2, 3), _f64(3)))])


def complex(real: Tensor, imag: Tensor, name: str | None = None) -> Tensor:  # noqa: A001 - Paddle's name
    """real + i*imag (float32 parts -> complex64, float64 -> complex128), broadcasting."""
    return _COMPLEX(as_tensor(real, "real", "complex"), as_tensor(imag, "imag", "complex"))


# ---------------------------------------------------------------- real, imag, as_real, as_complex
def _part_meta(op: str):
    def meta(x: TensorSpec) -> TensorSpec:
        _require_complex(op, x)
        return TensorSpec(x.shape, real_dtype(x.dtype))
    return meta


_REAL = defop("real", kernel=lambda xp, x: xp.real(x).copy(), meta=_part_meta("real"),
              grad=lambda ctx, g: (complex(g, zeros_like(g)),), samples=lambda: [Sample((_c128(3, 4),))])
_IMAG = defop("imag", kernel=lambda xp, x: xp.imag(x).copy(), meta=_part_meta("imag"),
              grad=lambda ctx, g: (complex(zeros_like(g), g),), samples=lambda: [Sample((_c128(3, 4),))])


@tensor_method
def real(x: Tensor, name: str | None = None) -> Tensor:
    """The real part of a complex tensor, as a new real tensor."""
    return _REAL(as_tensor(x, "x", "real"))


@tensor_method
def imag(x: Tensor, name: str | None = None) -> Tensor:
    """The imaginary part of a complex tensor, as a new real tensor."""
    return _IMAG(as_tensor(x, "x", "imag"))


def _as_real_meta(x: TensorSpec) -> TensorSpec:
    _require_complex("as_real", x)
    return TensorSpec((*x.shape, 2), real_dtype(x.dtype))


def _as_complex_meta(x: TensorSpec) -> TensorSpec:
    mu.require_float("as_complex", x)
    if not x.shape or x.shape[-1] not in (2, -1):
        raise ValueError(f"as_complex: the last dimension of argument 'x' must be 2 (real, imag), "
                         f"got shape {mu.shape_str(x.shape)}")
    return TensorSpec(x.shape[:-1], complex_dtype(x.dtype))


_AS_REAL = defop("as_real", kernel=lambda xp, x: xp.stack([xp.real(x), xp.imag(x)], axis=-1),
                 meta=_as_real_meta, grad=lambda ctx, g: (as_complex(g),),
                 samples=lambda: [Sample((_c128(3, 4),))])
_AS_COMPLEX = defop("as_complex", kernel=lambda xp, x: _complex_kernel(xp, x[..., 0], x[..., 1]),
                    meta=_as_complex_meta, grad=lambda ctx, g: (as_real(g),),
                    samples=lambda: [Sample((_f64(3, 2),)), Sample((_f64(2, 3, 2),))])


@tensor_method
def as_real(x: Tensor, name: str | None = None) -> Tensor:
    """A complex tensor [..] as a real one [.., 2] holding (real, imag) pairs."""
    return _AS_REAL(as_tensor(x, "x", "as_real"))


@tensor_method
def as_complex(x: Tensor, name: str | None = None) -> Tensor:
    """A real tensor [.., 2] of (real, imag) pairs as a complex tensor [..]."""
    return _AS_COMPLEX(as_tensor(x, "x", "as_complex"))


# ---------------------------------------------------------------- angle
def _angle_meta(x: TensorSpec) -> TensorSpec:
    mu.require_dtype_kind("angle", x, "fc", "a floating or complex tensor")
    return TensorSpec(x.shape, real_dtype(x.dtype) if x.dtype.kind == "c" else x.dtype)


def _angle_kernel(xp, x):
    return xp.angle(x).astype(real_dtype(x.dtype) if x.dtype.kind == "c" else x.dtype, copy=False)


def _g_angle(ctx, g):
    """d angle = (a db - b da) / |z|^2: gradient (-b + ia) g / |z|^2, 0 at z = 0; a real input's angle
    is piecewise constant."""
    (x,) = ctx.inputs
    if x.dtype.np_dtype.kind != "c":
        return (zeros_like(g),)
    a, b = real(x), imag(x)
    sq = add(multiply(a, a), multiply(b, b))
    scale = divide(g, where(equal(sq, 0.0), 1.0, sq))
    return (complex(neg(multiply(scale, b)), multiply(scale, a)),)


_ANGLE = defop("angle", kernel=_angle_kernel, meta=_angle_meta, grad=_g_angle,
               samples=lambda: [Sample((_c128(3, 4),)), Sample((_f64(5),))])


@tensor_method
def angle(x: Tensor, name: str | None = None) -> Tensor:
    """The argument (phase) of each element in radians: atan2(imag, real); pi or 0 for real x."""
    return _ANGLE(as_tensor(x, "x", "angle"))
