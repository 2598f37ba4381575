"""The code cache the C hook reads, one per code object, and what every translator of that code shares.

A code object can have many translators (`to_static` applied twice, resume code met from many
frames, two threads making one at once); its translations must land in one cache, under one lock,
so `cache_of` finds or installs it under a module lock. The cache also keeps, per entry, what
reports need about the code the entry runs (the break it makes, the prints it defers, ...).
"""
from __future__ import annotations

import threading
import types
import weakref
from typing import TYPE_CHECKING

from sot.guards import CodeCache
from sot.hook.eval_frame import CustomCode, get_code_cache, set_code_cache
from sot.translation.reasons import Event

if TYPE_CHECKING:
    from sot.translation.translator import Fallback, Translator

__all__ = ["EAGER", "HookCache", "LIVE_CACHES", "cache_of"]

EAGER = CustomCode(None, True)  # the original code, with the hook off for its callees


class HookCache(CodeCache):
    """The code's CodeCache as the C hook reads it (once it gave up, the original code runs, its callees
    unhooked), with what every Translator of that code shares: the break each entry's code makes, and the
    translators its breaks made (resume functions, callees translated as frames of their own)."""

    gave_up = EAGER

    def __init__(self, code: types.CodeType, cache_size_limit: int, on_limit: str):
        super().__init__(code, cache_size_limit, on_limit=on_limit)
        self.entry_breaks: dict[int, Event] = {}
        self.entry_eager_rest: dict[int, list[Fallback]] = {}  # SOT-C002: its break's resume runs eagerly
        self.entry_eager: set[int] = set()
        self.entry_prints: dict[int, list[str]] = {}  # file:line of the prints its code defers
        self.entry_ops: dict[int, int] = {}  # ops of each graph: counted even once its SIR is released
        self.children: list[Translator] = []
        self.translators: "weakref.WeakSet[Translator]" = weakref.WeakSet()  # every translator of this code
        self.translating = threading.RLock()  # held while a thread translates this code
        LIVE_CACHES.add(self)

    def clear(self) -> None:
        """Forget the entries and what reports say of them (`reset_caches` resets the children, then clears them)."""
        super().clear()
        self.entry_breaks.clear()
        self.entry_eager_rest.clear()
        self.entry_eager.clear()
        self.entry_prints.clear()
        self.entry_ops.clear()


LIVE_CACHES: "weakref.WeakSet[HookCache]" = weakref.WeakSet()  # every code cache installed (explain reads them)
_INSTALLING = threading.Lock()  # held while a Translator finds or installs its code's cache


def cache_of(code: types.CodeType, cache_size_limit: int, on_limit: str) -> HookCache:
    """The HookCache installed on `code`, installed now if it has none (the first one's limits hold)."""
    with _INSTALLING:  # two threads making translators of one code must share one cache
        installed = get_code_cache(code)
        if not isinstance(installed, HookCache):
            installed = HookCache(code, cache_size_limit, on_limit)
            set_code_cache(code, installed)
        return installed
