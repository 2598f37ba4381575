"""Discrete Fourier transforms: three registry ops, as Paddle's (`fft_c2c`, `fft_r2c`, `fft_c2r`), and
`fft_resize` (crop or zero-pad along axes, what the `n`/`s` arguments do), under the `paddle.fft` API.

Each transform runs over a set of axes at the sizes its input already has; the public functions
validate their arguments (raising Paddle's ValueError wording, prefixed with the function's name)
and resize the input first. Kernels call `xp.fft` (NumPy or CuPy) and cast to Paddle's dtypes:
float32 -> complex64, float64 -> complex128, integers compute as the default float.

Gradients follow Paddle's convention for complex tensors (dL/dRe + i*dL/dIm). A transform with
normalisation `norm` is linear, so its gradient is its adjoint: the transform of the opposite
direction with the dual normalisation (backward <-> forward, ortho <-> ortho). The one-sided
(real) transforms add a projection: r2c's adjoint zero-pads the half spectrum and keeps the real
part; c2r's doubles the bins that stand for a conjugate pair.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, as_tensor, to_tensor
from . import meta_utils as mu
from .complex import complex_dtype, real, real_dtype
from .creation import clone
from .indexing import slice as _slice
from .math import cast, multiply
from .registry import Sample, TensorSpec, defop
from .shape import concat, roll

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_rng = np.random.default_rng(2718)


def _f64(*shape):
    return _rng.normal(size=shape)


def _c128(*shape):
    return _f64(*shape) + 1j * _f64(*shape)


# ---------------------------------------------------------------- shared checks of the ops' attributes
def _check_axes(op: str, x: TensorSpec, axes: tuple) -> None:
    nd = len(x.shape)
    if not axes or any(not 0 <= a < nd for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{op}: attribute 'axes' {list(axes)} must be distinct axes in [0, {nd})")


def _check_norm(op: str, norm: str) -> None:
    if norm not in _NORMS:
        raise ValueError(f"{op}: Unexpected norm: {norm}. Norm should be forward, backward or ortho")


def _transform(xp, name: str, x, axes: tuple, norm: str, **sizes):
    """xp.fft.<name>n over `axes`; over one axis the 1-D function, which NumPy runs with less overhead."""
    if len(axes) == 1:
        n = sizes["s"][-1] if sizes else None
        return getattr(xp.fft, name)(x, n=n, axis=axes[0], norm=norm)
    return getattr(xp.fft, name + "n")(x, axes=axes, norm=norm, **sizes)


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype a real transform computes in: integers take the default float."""
    return _dt.default_float() if dtype.kind in "iu" else dtype


# ---------------------------------------------------------------- fft_c2c
def _c2c_meta(x: TensorSpec, *, axes: tuple, norm: str, forward: bool) -> TensorSpec:
    mu.require_dtype_kind("fft_c2c", x, "c", "a complex tensor")
    _check_axes("fft_c2c", x, axes)
    _check_norm("fft_c2c", norm)
    return x


def _c2c_kernel(xp, x, *, axes, norm, forward):
    return _transform(xp, "fft" if forward else "ifft", x, axes, norm).astype(x.dtype, copy=False)


def _g_c2c(ctx, g):
    a = ctx.attrs
    return (_C2C(g, axes=a["axes"], norm=_DUAL[a["norm"]], forward=not a["forward"]),)


_C2C = defop("fft_c2c", kernel=_c2c_kernel, meta=_c2c_meta, grad=_g_c2c,
             attrs={"axes": (-1,), "norm": "backward", "forward": True},
             samples=lambda: [Sample((_c128(3, 5),), {"axes": (1,), "norm": "backward", "forward": True}),
                              Sample((_c128(2, 3, 4),), {"axes": (0, 2), "norm": "ortho", "forward": False}),
                              Sample((_c128(4, 3),), {"axes": (0, 1), "norm": "forward", "forward": True})])


# ---------------------------------------------------------------- fft_r2c
def _r2c_meta(x: TensorSpec, *, axes: tuple, norm: str, forward: bool, onesided: bool) -> TensorSpec:
    mu.require_dtype_kind("fft_r2c", x, "fiu", "a real (float or integer) tensor")
    _check_axes("fft_r2c", x, axes)
    _check_norm("fft_r2c", norm)
    shape = list(x.shape)
    if onesided and shape[axes[-1]] != -1:
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return TensorSpec(tuple(shape), complex_dtype(_work_dtype(x.dtype)))


def _r2c_kernel(xp, x, *, axes, norm, forward, onesided):
    work = _work_dtype(x.dtype)
    x = x.astype(work, copy=False)
    if not onesided:
        out = _transform(xp, "fft" if forward else "ifft", x, axes, norm)
    elif forward:
        out = _transform(xp, "rfft", x, axes, norm)
    else:  # the inverse transform of a real signal is the conjugate of the forward one, dually normalised
        out = xp.conj(_transform(xp, "rfft", x, axes, _DUAL[norm]))
    return out.astype(complex_dtype(work), copy=False)


def _g_r2c(ctx, g):
    (x,) = ctx.inputs
    a = ctx.attrs
    if a["onesided"]:
        last = a["axes"][-1]
        g = _RESIZE(g, axes=(last,), sizes=(x.shape[last],))
    full = _C2C(g, axes=a["axes"], norm=_DUAL[a["norm"]], forward=not a["forward"])
    return (cast(real(full), x.dtype),)


_R2C = defop("fft_r2c", kernel=_r2c_kernel, meta=_r2c_meta, grad=_g_r2c,
             attrs={"axes": (-1,), "norm": "backward", "forward": True, "onesided": True},
             samples=lambda: [
                 Sample((_f64(3, 6),), {"axes": (1,), "norm": "backward", "forward": True, "onesided": True}),
                 Sample((_f64(3, 5),), {"axes": (0, 1), "norm": "ortho", "forward": False, "onesided": True}),
                 Sample((_f64(2, 3, 4),), {"axes": (2, 0), "norm": "forward", "forward": True, "onesided": False}),
                 Sample((_rng.integers(-4, 4, (5,)),), {"axes": (0,), "norm": "backward", "forward": True,
                                                        "onesided": True})])


# ---------------------------------------------------------------- fft_c2r
def _c2r_meta(x: TensorSpec, *, axes: tuple, norm: str, forward: bool, last_dim_size: int) -> TensorSpec:
    mu.require_dtype_kind("fft_c2r", x, "c", "a complex tensor")
    _check_axes("fft_c2r", x, axes)
    _check_norm("fft_c2r", norm)
    half = x.shape[axes[-1]]
    if last_dim_size < 1 or half not in (-1, last_dim_size // 2 + 1):
        raise ValueError(f"fft_c2r: axis {axes[-1]} of argument 'x' has {half} bins; an output of "
                         f"{last_dim_size} points needs {last_dim_size // 2 + 1}")
    shape = list(x.shape)
    shape[axes[-1]] = last_dim_size
    return TensorSpec(tuple(shape), real_dtype(x.dtype))


def _c2r_kernel(xp, x, *, axes, norm, forward, last_dim_size):
    sizes = [x.shape[a] for a in axes[:-1]] + [last_dim_size]
    if forward:  # Hermitian input, forward direction: the inverse of the conjugate, dually normalised
        out = _transform(xp, "irfft", xp.conj(x), axes, _DUAL[norm], s=sizes)
    else:
        out = _transform(xp, "irfft", x, axes, norm, s=sizes)
    return out.astype(real_dtype(x.dtype), copy=False)


def _g_c2r(ctx, g):
    """The adjoint of the half-spectrum map: the half spectrum of g, each bin that also stands for its
    mirror image (all but bin 0 and, for an even size, the Nyquist bin) counted twice."""
    a = ctx.attrs
    last, n = a["axes"][-1], a["last_dim_size"]
    h = _R2C(g, axes=a["axes"], norm=_DUAL[a["norm"]], forward=not a["forward"], onesided=True)
    bins, paired_end = n // 2 + 1, (n + 1) // 2
    if paired_end <= 1:
        return (h,)
    parts = [_slice(h, [last], [0], [1]), multiply(_slice(h, [last], [1], [paired_end]), 2.0)]
    if paired_end < bins:
        parts.append(_slice(h, [last], [paired_end], [bins]))
    return (concat(parts, axis=last),)


_C2R = defop("fft_c2r", kernel=_c2r_kernel, meta=_c2r_meta, grad=_g_c2r,
             attrs={"axes": (-1,), "norm": "backward", "forward": False, "last_dim_size": 1},
             samples=lambda: [
                 Sample((_c128(3, 4),), {"axes": (1,), "norm": "backward", "forward": False, "last_dim_size": 6}),
                 Sample((_c128(3, 4),), {"axes": (1,), "norm": "ortho", "forward": True, "last_dim_size": 7}),
                 Sample((_c128(2, 3, 3),), {"axes": (0, 2), "norm": "forward", "forward": False,
                                            "last_dim_size": 4})])


# ---------------------------------------------------------------- fft_resize (the n / s arguments)
def _resize_meta(x: TensorSpec, *, axes: tuple, sizes: tuple) -> TensorSpec:
    shape = list(x.shape)
    for a, n in zip(axes, sizes):
        shape[a] = n
    return TensorSpec(tuple(shape), x.dtype)


def _resize_kernel(xp, x, *, axes, sizes):
    crop = [slice(None)] * x.ndim
    pad = [(0, 0)] * x.ndim
    for a, n in zip(axes, sizes):
        crop[a] = slice(0, n)
        pad[a] = (0, max(n - x.shape[a], 0))
    return xp.pad(x[tuple(crop)], pad)


_RESIZE = defop("fft_resize", kernel=_resize_kernel, meta=_resize_meta,
                grad=lambda ctx, g: (_RESIZE(g, axes=ctx.attrs["axes"],
                                             sizes=tuple(ctx.inputs[0].shape[a] for a in ctx.attrs["axes"])),),
                attrs={"axes": (), "sizes": ()},
                samples=lambda: [Sample((_f64(3, 4),), {"axes": (0, 1), "sizes": (5, 2)}),
                                 Sample((_c128(2, 3),), {"axes": (1,), "sizes": (4,)})])


# ---------------------------------------------------------------- argument checks of the public API
def _norm_arg(op: str, norm: Any) -> str:
    if norm not in _NORMS:
        raise ValueError(f"{op}: Unexpected norm: {norm}. Norm should be forward, backward or ortho")
    return norm


def _axis_arg(op: str, axis: Any, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: argument 'axis' must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: Invalid FFT axis ({axis}), it should be in range [{-ndim}, {ndim})")
    return int(axis) % ndim


def _n_arg(op: str, n: Any) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{op}: argument 'n' must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"{op}: Invalid FFT argument n({n}), it should be positive.")
    return int(n)


def _axes_arg(op: str, s: Any, axes: Any, ndim: int, two_d: bool) -> tuple[tuple | None, tuple]:
    """(sizes, axes) checked and normalised; axes default to the last len(s) axes (all without s)."""
    if s is not None:
        if isinstance(s, (int, np.integer)) or not isinstance(s, Sequence):
            raise TypeError(f"{op}: argument 's' must be a sequence of ints, got {type(s).__name__}")
        s = tuple(s)
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in s):
            raise TypeError(f"{op}: argument 's' must hold ints, got {list(s)}")
        if two_d and len(s) != 2:
            raise ValueError(f"{op}: Invalid FFT argument s ({list(s)}), it should be a sequence of 2 integers.")
        bad = [v for v in s if v < 1]
        if bad:
            raise ValueError(f"{op}: FFT sizes {list(s)} contains invalid value ({bad[0]})")
    if two_d and ndim < 2:
        raise ValueError(f"{op}: The rank of the input ({ndim}) should >= 2")
    if axes is None:
        axes = tuple(range(ndim - (len(s) if s is not None else ndim), ndim))
    else:
        if isinstance(axes, (int, np.integer)) or not isinstance(axes, Sequence):
            raise TypeError(f"{op}: argument 'axes' must be a sequence of ints, got {type(axes).__name__}")
        axes = tuple(axes)
        if two_d and len(axes) != 2:
            raise ValueError(f"{op}: Invalid FFT argument axes ({list(axes)}), it should be a sequence of 2 "
                             "integers.")
        for a in axes:
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
                raise TypeError(f"{op}: argument 'axes' must hold ints, got {list(axes)}")
            if not -ndim <= a < ndim:
                raise ValueError(f"{op}: FFT axes {tuple(axes)} contains invalid value ({a}), it should be in "
                                 f"range [{-ndim}, {ndim})")
        axes = tuple(int(a) % ndim for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: FFT axes {tuple(axes)} contains duplicate axes")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{op}: Length of s ({len(s)}) and length of axes ({len(axes)}) does not match.")
    if not axes:
        raise ValueError(f"{op}: there is no axis to transform (the input has {ndim} dimensions)")
    return (tuple(int(v) for v in s) if s is not None else None), axes


def _resized(x: Tensor, axes: tuple, sizes: Sequence[int | None]) -> Tensor:
    """x cropped or zero-padded to `sizes` along `axes` (None: that axis as it is)."""
    pairs = [(a, n) for a, n in zip(axes, sizes) if n is not None and n != x.shape[a]]
    if not pairs:
        return x
    return _RESIZE(x, axes=tuple(a for a, _ in pairs), sizes=tuple(n for _, n in pairs))


def _input(op: str, x: Any, kinds: str, what: str) -> Tensor:
    x = as_tensor(x, "x", op)
    if x.dtype.np_dtype.kind not in kinds:
        raise TypeError(f"{op}: argument 'x' must be {what}, got {x.dtype.name}")
    return x


_ANY = ("fiuc", "a float, integer or complex tensor")
_REAL = ("fiu", "a real (float or integer) tensor")
_FLOAT_OR_COMPLEX = ("fc", "a float or complex tensor")


def _as_complex_input(x: Tensor) -> Tensor:
    """A real input of a Hermitian (c2r) transform, as the complex tensor it stands for."""
    if x.dtype.np_dtype.kind == "c":
        return x
    return cast(x, complex_dtype(x.dtype.np_dtype))


# ---------------------------------------------------------------- the transforms, by kind
def _c2c(x: Tensor, s: tuple | None, axes: tuple, norm: str, forward: bool) -> Tensor:
    """A full complex transform; a real input takes the real-input op (its gradient stays real)."""
    x = _resized(x, axes, s or [None] * len(axes))
    if x.dtype.np_dtype.kind == "c":
        return _C2C(x, axes=axes, norm=norm, forward=forward)
    return _R2C(x, axes=axes, norm=norm, forward=forward, onesided=False)


def _r2c(x: Tensor, s: tuple | None, axes: tuple, norm: str, forward: bool) -> Tensor:
    x = _resized(x, axes, s or [None] * len(axes))
    return _R2C(x, axes=axes, norm=norm, forward=forward, onesided=True)


def _c2r(op: str, x: Tensor, s: tuple | None, axes: tuple, norm: str, forward: bool) -> Tensor:
    """Output size along the last axis: s[-1], else 2 * (bins - 1); the input keeps bins // 2 + 1."""
    last = axes[-1]
    n = s[-1] if s is not None else 2 * (x.shape[last] - 1)
    if n < 1:
        raise ValueError(f"{op}: Invalid FFT argument n({n}), it should be positive.")
    sizes = list(s[:-1]) if s is not None else [None] * (len(axes) - 1)
    x = _resized(_as_complex_input(x), axes, [*sizes, n // 2 + 1])
    return _C2R(x, axes=axes, norm=norm, forward=forward, last_dim_size=n)


def _one_d(op: str, x: Any, n: Any, axis: Any, norm: Any, kinds: tuple) -> tuple[Tensor, tuple | None, tuple, str]:
    x = _input(op, x, *kinds)
    norm = _norm_arg(op, norm)
    axis = _axis_arg(op, axis, x.ndim)
    n = _n_arg(op, n)
    return x, (None if n is None else (n,)), (axis,), norm


def _n_d(op: str, x: Any, s: Any, axes: Any, norm: Any, kinds: tuple,
         two_d: bool) -> tuple[Tensor, tuple | None, tuple, str]:
    x = _input(op, x, *kinds)
    norm = _norm_arg(op, norm)
    s, axes = _axes_arg(op, s, axes, x.ndim, two_d)
    return x, s, axes, norm


# ---------------------------------------------------------------- 1-D
def fft(x: Tensor, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Tensor:
    """The discrete Fourier transform along `axis` (cropped or zero-padded to `n` points)."""
    x, s, axes, norm = _one_d("fft", x, n, axis, norm, _ANY)
    return _c2c(x, s, axes, norm, True)


def ifft(x: Tensor, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Tensor:
    """The inverse discrete Fourier transform along `axis`."""
    x, s, axes, norm = _one_d("ifft", x, n, axis, norm, _ANY)
    return _c2c(x, s, axes, norm, False)


def rfft(x: Tensor, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Tensor:
    """The transform of a real signal: the n // 2 + 1 non-negative frequencies."""
    x, s, axes, norm = _one_d("rfft", x, n, axis, norm, _REAL)
    return _r2c(x, s, axes, norm, True)


def irfft(x: Tensor, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Tensor:
    """The real signal of n points (default 2 * (bins - 1)) whose half spectrum is x."""
    x, s, axes, norm = _one_d("irfft", x, n, axis, norm, _FLOAT_OR_COMPLEX)
    return _c2r("irfft", x, s, axes, norm, False)


def hfft(x: Tensor, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Tensor:
    """The (real) transform of a Hermitian-symmetric signal given by its first half."""
    x, s, axes, norm = _one_d("hfft", x, n, axis, norm, _FLOAT_OR_COMPLEX)
    return _c2r("hfft", x, s, axes, norm, True)


def ihfft(x: Tensor, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Tensor:
    """The inverse transform of a real signal: its n // 2 + 1 non-negative frequencies."""
    x, s, axes, norm = _one_d("ihfft", x, n, axis, norm, _REAL)
    return _r2c(x, s, axes, norm, False)


# ---------------------------------------------------------------- 2-D and N-D
def fft2(x: Tensor, s: Any = None, axes: Any = (-2, -1), norm: str = "backward", name: str | None = None) -> Tensor:
    """The 2-D transform over `axes` (sizes `s`)."""
    x, s, axes, norm = _n_d("fft2", x, s, axes, norm, _ANY, True)
    return _c2c(x, s, axes, norm, True)


def ifft2(x: Tensor, s: Any = None, axes: Any = (-2, -1), norm: str = "backward", name: str | None = None) -> Tensor:
    """The 2-D inverse transform over `axes`."""
    x, s, axes, norm = _n_d("ifft2", x, s, axes, norm, _ANY, True)
    return _c2c(x, s, axes, norm, False)


def rfft2(x: Tensor, s: Any = None, axes: Any = (-2, -1), norm: str = "backward", name: str | None = None) -> Tensor:
    """The 2-D transform of a real signal (half spectrum along the last of `axes`)."""
    x, s, axes, norm = _n_d("rfft2", x, s, axes, norm, _REAL, True)
    return _r2c(x, s, axes, norm, True)


def irfft2(x: Tensor, s: Any = None, axes: Any = (-2, -1), norm: str = "backward", name: str | None = None) -> Tensor:
    """The inverse of rfft2."""
    x, s, axes, norm = _n_d("irfft2", x, s, axes, norm, _FLOAT_OR_COMPLEX, True)
    return _c2r("irfft2", x, s, axes, norm, False)


def hfft2(x: Tensor, s: Any = None, axes: Any = (-2, -1), norm: str = "backward", name: str | None = None) -> Tensor:
    """The 2-D transform of a Hermitian-symmetric signal."""
    x, s, axes, norm = _n_d("hfft2", x, s, axes, norm, _FLOAT_OR_COMPLEX, True)
    return _c2r("hfft2", x, s, axes, norm, True)


def ihfft2(x: Tensor, s: Any = None, axes: Any = (-2, -1), norm: str = "backward", name: str | None = None) -> Tensor:
    """The 2-D inverse transform of a real signal (half spectrum)."""
    x, s, axes, norm = _n_d("ihfft2", x, s, axes, norm, _REAL, True)
    return _r2c(x, s, axes, norm, False)


def fftn(x: Tensor, s: Any = None, axes: Any = None, norm: str = "backward", name: str | None = None) -> Tensor:
    """The N-D transform over `axes` (default: the last len(s) axes, or all)."""
    x, s, axes, norm = _n_d("fftn", x, s, axes, norm, _ANY, False)
    return _c2c(x, s, axes, norm, True)


def ifftn(x: Tensor, s: Any = None, axes: Any = None, norm: str = "backward", name: str | None = None) -> Tensor:
    """The N-D inverse transform."""
    x, s, axes, norm = _n_d("ifftn", x, s, axes, norm, _ANY, False)
    return _c2c(x, s, axes, norm, False)


def rfftn(x: Tensor, s: Any = None, axes: Any = None, norm: str = "backward", name: str | None = None) -> Tensor:
    """The N-D transform of a real signal (half spectrum along the last of `axes`)."""
    x, s, axes, norm = _n_d("rfftn", x, s, axes, norm, _REAL, False)
    return _r2c(x, s, axes, norm, True)


def irfftn(x: Tensor, s: Any = None, axes: Any = None, norm: str = "backward", name: str | None = None) -> Tensor:
    """The inverse of rfftn."""
    x, s, axes, norm = _n_d("irfftn", x, s, axes, norm, _FLOAT_OR_COMPLEX, False)
    return _c2r("irfftn", x, s, axes, norm, False)


def hfftn(x: Tensor, s: Any = None, axes: Any = None, norm: str = "backward", name: str | None = None) -> Tensor:
    """The N-D transform of a Hermitian-symmetric signal."""
    x, s, axes, norm = _n_d("hfftn", x, s, axes, norm, _FLOAT_OR_COMPLEX, False)
    return _c2r("hfftn", x, s, axes, norm, True)


def ihfftn(x: Tensor, s: Any = None, axes: Any = None, norm: str = "backward", name: str | None = None) -> Tensor:
    """The N-D inverse transform of a real signal (half spectrum)."""
    x, s, axes, norm = _n_d("ihfftn", x, s, axes, norm, _REAL, False)
    return _r2c(x, s, axes, norm, False)


# ---------------------------------------------------------------- frequencies and shifts
def _freq_args(op: str, n: Any, d: Any, dtype: Any) -> tuple[int, float, np.dtype]:
    n = mu.int_arg(op, "n", n)
    d = mu.number_arg(op, "d", d)
    if n == 0 or d == 0:
        raise ValueError(f"{op}: d or n should not be 0.")
    return n, d, (_dt.default_float() if dtype is None else _dt.to_np_dtype(dtype))


def fftfreq(n: int, d: float = 1.0, dtype: Any = None, name: str | None = None) -> Tensor:
    """The sample frequencies of an n-point transform with spacing d: [0, 1, .., -1] / (n * d)."""
    n, d, dt = _freq_args("fftfreq", n, d, dtype)
    k = np.roll(np.arange(-(n // 2), (n + 1) // 2), -(n // 2)).astype(dt)
    return to_tensor(k * dt.type(1.0 / (n * d)))


def rfftfreq(n: int, d: float = 1.0, dtype: Any = None, name: str | None = None) -> Tensor:
    """The non-negative sample frequencies of an n-point real transform: [0, 1, .., n // 2] / (n * d)."""
    n, d, dt = _freq_args("rfftfreq", n, d, dtype)
    return to_tensor(np.arange(n // 2 + 1).astype(dt) * dt.type(1.0 / (n * d)))


def _shift(op: str, x: Any, axes: Any, sign: int) -> Tensor:
    x = as_tensor(x, "x", op)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(mu.normalize_axis(op, a, x.ndim, "axes") for a in axes)
    if not axes:  # a 0-D tensor: nothing to shift, but a new tensor as roll would give
        return clone(x)
    return roll(x, [sign * (x.shape[a] // 2) for a in axes], list(axes))


def fftshift(x: Tensor, axes: Any = None, name: str | None = None) -> Tensor:
    """Move the zero frequency to the centre along `axes` (default: all)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Tensor, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes, -1)
