"""`paddle.signal`: short-time Fourier transforms, composed of registry ops as Paddle composes them
(pad, frame, window, one FFT over the last axis; its inverse with overlap-add), so they differentiate
and run under the JIT like any other composition.

Argument errors are ValueErrors naming the function and argument (Paddle asserts these, so it raises
AssertionError with the same conditions).
"""
from __future__ import annotations

from typing import Any


from .dtypes import is_complex
from .nn import functional as F
from .ops.complex import real_dtype
from .ops.creation import ones
from .ops.fft import _C2C, _C2R, _R2C
from .ops.math import abs as _abs, divide, multiply
from .ops.reduction import min as _min
from .ops.shape import squeeze, tile, transpose, unsqueeze
from .ops.signal import frame, overlap_add
from .tensor import Tensor, as_tensor

__all__ = ["frame", "overlap_add", "stft", "istft"]

_NOLA_TOL = 1e-11


def _require(op: str, ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(f"{op}: {message}")


def _window(op: str, window: Tensor | None, win_length: int, n_fft: int, dtype: Any) -> Tensor:
    """The window (ones by default), zero-padded on both sides to n_fft as Paddle centres it."""
    if window is None:
        window = ones([win_length], dtype=dtype)
    else:
        window = as_tensor(window, "window", op)
        _require(op, window.ndim == 1 and window.shape[0] == win_length,
                 f"expected a 1D window tensor of size equal to win_length({win_length}), "
                 f"but got window with shape {window.shape}.")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = F.pad(window, [left, n_fft - win_length - left], mode="constant")
    return window


def _lengths(n_fft: int, hop_length: int | None, win_length: int | None) -> tuple[int, int]:
    """Paddle's defaults: a hop of n_fft // 4, a window as long as the frame."""
    return (int(n_fft // 4) if hop_length is None else hop_length), (n_fft if win_length is None else win_length)


def _check_win_length(op: str, win_length: int, n_fft: int) -> None:
    _require(op, 0 < win_length <= n_fft, f"win_length should be in (0, n_fft({n_fft})], but got {win_length}.")


def stft(x: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = True, name: str | None = None) -> Tensor:
    """The short-time Fourier transform of x [seq_length] or [batch, seq_length]: frames of n_fft samples,
    hop_length apart (default n_fft // 4), times the window; [batch,] freqs, num_frames (complex)."""
    op = "stft"
    x = as_tensor(x, "x", op)
    rank = x.ndim
    _require(op, rank in (1, 2), f"x should be a 1D or 2D real tensor, but got rank of x is {rank}")
    if rank == 1:
        x = unsqueeze(x, 0)
    hop_length, win_length = _lengths(n_fft, hop_length, win_length)
    _require(op, hop_length > 0, f"hop_length should be > 0, but got {hop_length}.")
    _require(op, 0 < n_fft <= x.shape[-1] or x.shape[-1] == -1,
             f"n_fft should be in (0, seq_length({x.shape[-1]})], but got {n_fft}.")
    _check_win_length(op, win_length, n_fft)
    window = _window(op, window, win_length, n_fft, x.dtype)
    if center:
        _require(op, pad_mode in ("constant", "reflect"),
                 f'pad_mode should be "reflect" or "constant", but got "{pad_mode}".')
        pad = n_fft // 2
        x = squeeze(F.pad(unsqueeze(x, -1), [pad, pad], mode=pad_mode, data_format="NLC"), -1)
    frames = multiply(transpose(frame(x, n_fft, hop_length, -1), [0, 2, 1]), window)  # [batch, frames, n_fft]
    norm = "ortho" if normalized else "backward"
    if onesided is None:
        onesided = not is_complex(frames)
    _require(op, not (is_complex(frames) and onesided),
             "onesided should be False when input or window is a complex Tensor.")
    if is_complex(frames):
        out = _C2C(frames, axes=(2,), norm=norm, forward=True)
    else:
        out = _R2C(frames, axes=(2,), norm=norm, forward=True, onesided=bool(onesided))
    out = transpose(out, [0, 2, 1])  # [batch, freqs, frames]
    return squeeze(out, 0) if rank == 1 else out


def istft(x: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool = True,
          length: int | None = None, return_complex: bool = False, name: str | None = None) -> Tensor:
    """The inverse of stft by weighted overlap-add: x [batch,] freqs, num_frames (complex) -> the signal
    [batch,] seq_length (trimmed to `length` if given). The summed squared window must not vanish anywhere
    in the output (the NOLA condition): that check reads the window's values, so under the JIT istft runs
    eagerly."""
    op = "istft"
    x = as_tensor(x, "x", op)
    _require(op, is_complex(x), f"x should be a complex tensor (complex64 or complex128), got {x.dtype.name}")
    rank = x.ndim
    _require(op, rank in (2, 3), f"x should be a 2D or 3D complex tensor, but got rank of x is {rank}")
    if rank == 2:
        x = unsqueeze(x, 0)
    hop_length, win_length = _lengths(n_fft, hop_length, win_length)
    _require(op, 0 < hop_length <= win_length,
             f"hop_length should be in (0, win_length({win_length})], but got {hop_length}.")
    _check_win_length(op, win_length, n_fft)
    n_frames, fft_size = x.shape[-1], x.shape[-2]
    _require(op, x.size != 0, "x should not be an empty tensor.")
    want = n_fft // 2 + 1 if onesided else n_fft
    _require(op, fft_size == want,
             f"fft_size should be equal to {'n_fft // 2 + 1' if onesided else 'n_fft'}({want}) when onesided is "
             f"{bool(onesided)}, but got {fft_size}.")
    window = _window(op, window, win_length, n_fft, real_dtype(x.dtype.np_dtype))
    x = transpose(x, [0, 2, 1])  # [batch, frames, freqs]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        _require(op, not onesided,
                 "onesided should be False when input(output of istft) or window is a complex Tensor.")
        out = _C2C(x, axes=(2,), norm=norm, forward=False)
    else:
        _require(op, not is_complex(window), "Data type of window should not be complex when return_complex is False.")
        if not onesided:
            x = x[:, :, :n_fft // 2 + 1]
        out = _C2R(x, axes=(2,), norm=norm, forward=False, last_dim_size=n_fft)
    out = overlap_add(transpose(multiply(out, window), [0, 2, 1]), hop_length, -1)  # [batch, seq_length]
    squared = unsqueeze(multiply(window, window), 0)
    envelope = overlap_add(transpose(tile(squared, [n_frames, 1]), [1, 0]), hop_length, -1)
    start = n_fft // 2 if center else 0
    if length is not None:
        out, envelope = out[:, start:start + length], envelope[start:start + length]
    elif center:
        out, envelope = out[:, start:-start], envelope[start:-start]
    if float(_min(_abs(envelope)).item()) < _NOLA_TOL:
        raise ValueError("istft: Abort istft because Nonzero Overlap Add (NOLA) condition failed. For more "
                         "information about NOLA constraint please see `scipy.signal.check_NOLA`.")
    out = divide(out, envelope)
    return squeeze(out, 0) if rank == 2 else out
