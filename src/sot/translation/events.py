"""What the translation pipeline tells whoever watches it: a translator was made, a translation ran, a reset.

The pipeline emits here and knows nothing of its watchers: reports, the `sot` command and `SOT_LOG`
(the tools package, a layer above) subscribe. A translation's record says what it added to its translator's
own records (fallbacks, breaks, cache entries) and how long it took. Only translations (cache
misses) emit; a cache hit is served in C and never reaches Python, so watching costs nothing there.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

__all__ = ["Translation", "subscribe", "made", "translating", "forgotten"]


@dataclass(frozen=True)
class Translation:
    """One translation of `translator`'s code: the wall time it took and what it added (the fallbacks and
    breaks it recorded, the cache entries it inserted); `recompile`: the code had entries before."""

    translator: Any
    seconds: float
    fallbacks: list
    breaks: list
    entries: list
    recompile: bool


_on_made: list[Callable[[Any], None]] = []
_on_translated: list[Callable[[Translation], None]] = []
_on_forgotten: list[Callable[[Any], None]] = []


def subscribe(on_made: Callable[[Any], None] | None = None,
              on_translated: Callable[[Translation], None] | None = None,
              on_forgotten: Callable[[Any], None] | None = None) -> Callable[[], None]:
    """Call `on_made(translator)` for every translator made from now on, `on_translated(translation)`
    after every translation (even one that raised), `on_forgotten(translator)` when a reset started a
    translator's records afresh; returns the function that ends the subscription."""
    if on_made is not None:
        _on_made.append(on_made)
    if on_translated is not None:
        _on_translated.append(on_translated)
    if on_forgotten is not None:
        _on_forgotten.append(on_forgotten)

    def unsubscribe() -> None:
        for watchers, watcher in ((_on_made, on_made), (_on_translated, on_translated),
                                  (_on_forgotten, on_forgotten)):
            watchers[:] = [w for w in watchers if w is not watcher]  # (by identity: bound methods compare equal)
    return unsubscribe


def made(translator: Any) -> None:
    """A translator was made."""
    for watcher in _on_made:
        watcher(translator)


def forgotten(translator: Any) -> None:
    """`sot.reset` started the translator's records afresh: what a watcher keeps of it must go too."""
    for watcher in _on_forgotten:
        watcher(translator)


@contextlib.contextmanager
def translating(translator: Any) -> Iterator[None]:
    """Around one translation by `translator`: when it ends, tell the watchers what it added."""
    if not _on_translated:
        yield
        return
    n_fallbacks, n_breaks = len(translator.fallbacks), len(translator.breaks)
    before = frozenset(id(e) for e in translator.cache.entries)
    start = time.perf_counter()
    try:
        yield
    finally:
        translation = Translation(translator, time.perf_counter() - start, translator.fallbacks[n_fallbacks:],
                                  translator.breaks[n_breaks:],
                                  [e for e in translator.cache.entries if id(e) not in before], bool(before))
        for watcher in _on_translated:
            watcher(translation)
