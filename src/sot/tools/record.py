"""The registry of live translators: every `Translator` registers itself here when made.

Reports (`sot.report()`, the `sot` command) read the translators' own records (translations,
fallbacks, breaks, code caches) through `translators()`; nothing is copied while the JIT runs,
so recording costs nothing on the hot path.
"""
from __future__ import annotations

import weakref
from typing import Any

__all__ = ["register", "translators"]

_live: "weakref.WeakSet[Any]" = weakref.WeakSet()


def register(translator: Any) -> None:
    """Remember `translator` (weakly: a dropped to_static function is forgotten)."""
    _live.add(translator)


def translators() -> list[Any]:
    """The live translators, in no particular order."""
    return list(_live)
