"""The registry of live translators, and the one wrapper that watches each translation.

Every `Translator` registers itself here when made (`register`); reports (`sot.report()`, the
`sot` command) read the translators' own records (translations, fallbacks, breaks, code caches)
through `translators()`. `Translator._translate` is wrapped by `observed`: it adds the time spent to
`translate_seconds(translator)` and hands what the call added (fallbacks, breaks, a cache entry)
to the `SOT_LOG` logger. Only translations (cache misses) pass through it; a cache hit is served
in C and only bumps its entry's hit counter, so recording costs nothing on the hot path.
"""
from __future__ import annotations

import functools
import time
import weakref
from typing import Any, Callable

from . import log

__all__ = ["register", "translators", "retain", "observed", "translate_seconds"]

_live: "weakref.WeakSet[Any]" = weakref.WeakSet()
_kept: list[Any] = []  # strong references while `retain()` is on
_retaining = False
_seconds: "weakref.WeakKeyDictionary[Any, float]" = weakref.WeakKeyDictionary()


def register(translator: Any) -> None:
    """Remember `translator` (weakly: a dropped to_static function is forgotten)."""
    _live.add(translator)
    if _retaining:
        _kept.append(translator)


def retain() -> None:
    """Keep every translator made from now on, even when its function is dropped: `sot run` reports
    on functions that were local to the script, or whose module was torn down by an exception."""
    global _retaining
    _retaining = True


def translators() -> list[Any]:
    """The live translators, in no particular order."""
    return list(_live)


def translate_seconds(translator: Any) -> float:
    """Wall time `translator` spent translating frames so far (simulation, codegen, compile)."""
    return _seconds.get(translator, 0.0)


def observed(call: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Wrap `Translator.__call__`: time each translation of its own code, then log what it added."""
    @functools.wraps(call)
    def wrapper(translator: Any, frame: Any) -> Any:
        if frame.f_code is not translator.code:  # not our frame: the callback leaves it alone
            return call(translator, frame)
        before = log.Snapshot.of(translator)
        start = time.perf_counter()
        try:
            return call(translator, frame)
        finally:
            _seconds[translator] = _seconds.get(translator, 0.0) + time.perf_counter() - start
            log.emit(translator, before)
    return wrapper
