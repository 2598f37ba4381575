"""paddle.amp.auto_cast: validates its arguments as Paddle does, then changes no op's dtype.

On a CPU place this is Paddle 3.3.1's own behaviour (a UserWarning, no effect). On a GPU place Paddle
would run the white-list ops in float16; runtime has no mixed-precision kernels, so it warns that the
block runs in the ops' own dtypes (a documented deviation) and refuses bfloat16, a dtype it lacks.
Either way every op in the block computes exactly what it computes outside it.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterable

from .lists import black_list, white_list
from .state import amp_place, amp_place_ok, amp_state

__all__ = ["auto_cast", "amp_guard", "is_autocast_enabled"]

_LEVELS = ("O0", "OD", "O1", "O2")


def _dtype_name(dtype: Any) -> str:
    """'float16' for 'float16', 'FLOAT16' or paddle.float16."""
    return (getattr(dtype, "name", None) or str(dtype)).lower()


def _merged_lists(custom_white_list: Iterable[str] | None, custom_black_list: Iterable[str] | None,
                  level: str, dtype: str) -> tuple[set[str], set[str]]:
    """The default lists of (dtype, level) with the custom ones merged in; an op in both custom lists is
    an error (as Paddle: the lookup itself fails for a dtype without lists, e.g. float32 when disabled)."""
    if level == "O0":
        return set(), set()
    white, black = white_list()[dtype][level], black_list()[dtype][level]
    if custom_white_list and custom_black_list:
        for op in custom_white_list:
            if op in custom_black_list:
                raise ValueError("Custom white list overlap custom black list")
    for op in custom_white_list or ():
        black.discard(op)
        white.add(op)
    for op in custom_black_list or ():
        white.discard(op)
        black.add(op)
    return white, black


class _AutoCast(contextlib.ContextDecorator):
    """The context (or decorator) auto_cast returns; like Paddle's, it checks its arguments on entry."""

    def __init__(self, enable: bool, custom_white_list: Any, custom_black_list: Any, level: str, dtype: Any):
        self._args = (enable, custom_white_list, custom_black_list, level, dtype)

    def __enter__(self) -> None:
        enable, custom_white_list, custom_black_list, level, dtype = self._args
        level = str(level).upper()
        if level not in _LEVELS:
            raise ValueError("level should be O0, OD, O1 or O2.")
        dtype = _dtype_name(dtype)
        if enable and dtype not in ("float16", "bfloat16"):
            raise ValueError("If enable amp, dtype should be 'float16' or 'bfloat16'.")
        amp_state.amp_dtype = dtype
        _merged_lists(custom_white_list, custom_black_list, level, dtype)
        if not enable:
            return
        if not amp_place_ok():
            warnings.warn(f"amp_guard can only be enabled on CUDAPlace, XPUPlace, and CustomPlace, current place "
                          f"is {amp_place()!r}, so it makes no effect.", UserWarning, stacklevel=2)
        elif dtype == "bfloat16":
            raise ValueError("auto_cast: dtype='bfloat16' is not supported: runtime has no bfloat16 dtype; "
                             "use dtype='float16'")
        else:
            warnings.warn(f"auto_cast on {amp_place()!r}: runtime has no mixed-precision kernels, so ops keep "
                          "their input dtypes (float32 stays float32) and it makes no effect.", UserWarning,
                          stacklevel=2)

    def __exit__(self, *exc: Any) -> bool:
        return False


def auto_cast(enable: bool = True, custom_white_list: Iterable[str] | None = None,
              custom_black_list: Iterable[str] | None = None, level: str = "O1", dtype: Any = "float16",
              use_promote: bool = True) -> _AutoCast:
    """A context (or decorator) for mixed-precision ops; in runtime it changes no dtype (module docstring),
    so `use_promote`, which picks how mixed dtypes are cast, has nothing to act on."""
    return _AutoCast(enable, custom_white_list, custom_black_list, level, dtype)


amp_guard = auto_cast


def is_autocast_enabled() -> bool:
    """Whether ops are being cast to a lower precision: never in runtime (auto_cast makes no effect)."""
    return False
