"""The registry of live translators, and the time each spent translating, from the pipeline's events.

Reports (`sot.report()`, the `sot` command) read the translators' own records (translations,
fallbacks, breaks, code caches) through `translators()`. This module subscribes to
sot.translation.events when imported (`sot.tools` imports it, and the package root imports
`sot.tools`, so every translator is seen from the first): a translator made is registered, a
translation's wall time is added to `translate_seconds(translator)` and what it added goes to the
`SOT_LOG` logger. Only translations (cache misses) emit events; a cache hit is served in C and only
bumps its entry's hit counter, so recording costs nothing on the hot path.
"""
from __future__ import annotations

import weakref
from typing import Any

from sot.translation import events

from . import log

__all__ = ["register", "translators", "retain", "translate_seconds"]

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


def _translated(translation: events.Translation) -> None:
    """Count the translation's time, then log what it added."""
    translator = translation.translator
    _seconds[translator] = _seconds.get(translator, 0.0) + translation.seconds
    log.emit(translation)


def _forgotten(translator: Any) -> None:
    """A reset translator starts again from no translating time."""
    _seconds.pop(translator, None)


events.subscribe(on_made=register, on_translated=_translated, on_forgotten=_forgotten)
