"""Marks users put on their functions, read by the API and the opcode executor alike.

`not_to_static` sets the attribute; the executor, which must not import the API, reads it
here to leave a marked function out of any translation. A `to_static` wrapper carries its
translator under `TRANSLATOR`; a translated frame calling another wrapper inlines the
function it wraps (`__wrapped__`) instead of the wrapper's own machinery.
"""
from __future__ import annotations

from typing import Any

__all__ = ["NOT_TO_STATIC", "TRANSLATOR", "is_not_to_static", "is_to_static_wrapper"]

NOT_TO_STATIC = "_sot_not_to_static"
TRANSLATOR = "sot_translator"


def is_not_to_static(function: Any) -> bool:
    """Whether `function` was marked with `sot.not_to_static`."""
    return bool(getattr(function, NOT_TO_STATIC, False))


def is_to_static_wrapper(obj: Any) -> bool:
    """Whether `obj` is what `sot.to_static` returned for a function."""
    return getattr(obj, TRANSLATOR, None) is not None and hasattr(obj, "__wrapped__")
