"""Marks users put on their functions, read by the API and the opcode executor alike.

`not_to_static` sets the attribute; the executor, which must not import the API, reads it
here to leave a marked function out of any translation. A `to_static` wrapper carries its
translator under `TRANSLATOR`; a translated frame calling another wrapper inlines the
function it wraps (`__wrapped__`) instead of the wrapper's own machinery.
"""
from __future__ import annotations

from typing import Any

__all__ = ["NOT_TO_STATIC", "TRANSLATOR", "is_not_to_static", "is_to_static_wrapper", "is_sot_own", "takes_locks"]

# standard modules whose functions take locks and do I/O (`logging.getLogger(...).info(...)`)
_LOCKING_MODULES = frozenset({"logging", "threading", "multiprocessing", "queue", "subprocess", "socket"})

NOT_TO_STATIC = "_sot_not_to_static"
TRANSLATOR = "sot_translator"


def is_not_to_static(function: Any) -> bool:
    """Whether `function` was marked with `sot.not_to_static`."""
    return bool(getattr(function, NOT_TO_STATIC, False))


def is_to_static_wrapper(obj: Any) -> bool:
    """Whether `obj` is what `sot.to_static` returned for a function."""
    return getattr(obj, TRANSLATOR, None) is not None and hasattr(obj, "__wrapped__")


def is_sot_own(function: Any) -> bool:
    """Whether `function` is the JIT's own code (`sot.to_static`, `sot.explain`, ...): a translated frame
    calling it breaks and runs it as eager code does, and it is never translated as a frame of its own,
    so a function decorated inside a compiled one is wrapped once per call, not traced through sot."""
    module = getattr(getattr(function, "__func__", function), "__module__", None)
    return isinstance(module, str) and (module == "sot" or module.startswith("sot."))


def takes_locks(function: Any) -> bool:
    """Whether `function` belongs to a standard module that takes locks and does I/O (logging, threading):
    a translated frame calling it breaks once and runs it for real, untranslated, rather than inlining it
    into a break at every lock it takes."""
    module = getattr(getattr(function, "__func__", function), "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] in _LOCKING_MODULES
