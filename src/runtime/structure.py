"""One process-wide counter that moves whenever the structure of any Layer or the metadata of any
persistable tensor changes.

A JIT's compiled entry for a Layer's forward depends on hundreds of facts about the Layer tree:
which sublayer sits under which name, each one's class, its `training` flag, its hooks, which
Parameter object each attribute holds, and each parameter's shape, dtype and stop_gradient.
Checking them one by one on every call costs more than the call saves on a large model. Instead,
everything that can change one of those facts moves this counter, *after* making the change:

- `Layer.__setattr__` / `__delattr__` (attributes, sublayers, parameters, buffers, `training`);
- every mutation of a Layer's own stores (`_sub_layers`, `_parameters`, `_buffers`, the hook
  dicts), which are `TrackedDict`s, so containers (`LayerList.append`, ...) and hook handles
  (`HookRemoveHelper.remove`) are covered too;
- a change of `stop_gradient`, shape or dtype of a persistable tensor (parameters, running
  statistics) through its public API (`stop_gradient`/`trainable`, `reshape_`-style in-place ops,
  `Layer.to` / `float16`).

A cache that checked those facts at epoch `e` may skip them while `epoch() == e`. Writes that
bypass the API (`layer.__dict__[k] = v`, `object.__setattr__`, assigning `tensor._data`) are not
seen. Bumps are `next()` of an `itertools.count`, atomic under the GIL: the counter never takes a
value twice, so a stale epoch can never match again.
"""
from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any

__all__ = ["epoch", "bump", "TrackedDict"]

_counter = itertools.count(1)


class _Epoch:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


EPOCH = _Epoch()


def epoch() -> int:
    """The current structure epoch (equal readings mean no tracked change happened in between)."""
    return EPOCH.value


def bump() -> None:
    """Record that a tracked change was just made (call it after the change)."""
    EPOCH.value = next(_counter)


class TrackedDict(OrderedDict):
    """An OrderedDict whose every mutation moves the structure epoch; reads run at OrderedDict speed."""

    __slots__ = ()

    def __setitem__(self, key: Any, value: Any) -> None:
        try:
            super().__setitem__(key, value)
        finally:
            bump()

    def __delitem__(self, key: Any) -> None:
        try:
            super().__delitem__(key)
        finally:
            bump()

    def clear(self) -> None:
        super().clear()
        bump()

    def pop(self, *args: Any) -> Any:
        try:
            return super().pop(*args)
        finally:
            bump()

    def popitem(self, last: bool = True) -> tuple:
        try:
            return super().popitem(last)
        finally:
            bump()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        try:
            return super().setdefault(key, default)
        finally:
            bump()

    def move_to_end(self, key: Any, last: bool = True) -> None:
        try:
            super().move_to_end(key, last)
        finally:
            bump()

    def update(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().update(*args, **kwargs)
        finally:
            bump()

    def __ior__(self, other: Any) -> "TrackedDict":
        self.update(other)
        return self
