"""Scopes: where a program's variables hold their arrays at run time (a tree, lookup walks up).

A scope maps names to `ScopeVariable` cells. An InterpreterCore resolves the cells of the
persistable vars it reads or writes ONCE (Paddle caches `Variable*` the same way), so a run
reads and commits `cell.value` without a single name lookup; `Scope.lookups` counts the name
lookups so tests can check that.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

__all__ = ["Scope", "ScopeVariable", "global_scope", "scope_guard"]

_uids = itertools.count()


class ScopeVariable:
    """One named variable of a scope (Paddle's `Variable`): `.get_tensor()` gives its array."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any = None):
        self.name = name
        self.value = value

    def get_tensor(self) -> np.ndarray:
        """The variable's array (the live one: an optimizer update shows in it)."""
        if self.value is None:
            raise ValueError(f"scope variable '{self.name}' holds no value yet (run the startup program "
                             "or set it first)")
        return self.value

    def set(self, value: Any, place: Any = None) -> None:
        """Replace the value by a copy of `value`."""
        self.value = np.array(value)

    def is_initialized(self) -> bool:
        return self.value is not None

    def __repr__(self) -> str:
        what = "empty" if self.value is None else f"shape={list(np.shape(self.value))} dtype={self.value.dtype}"
        return f"ScopeVariable({self.name!r}, {what})"


class Scope:
    """Name -> ScopeVariable, with a parent: persistables live in the outer scope, temporaries in kids."""

    lookups = 0  # name lookups made by find_var/var/find_scope_of, over all scopes

    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.vars: dict[str, ScopeVariable] = {}
        self.kids: list[Scope] = []
        self.uid = next(_uids)  # a cache key that, unlike id(), is never reused

    def new_scope(self) -> "Scope":
        kid = Scope(self)
        self.kids.append(kid)
        return kid

    def drop_kids(self) -> None:
        self.kids.clear()

    def find_scope_of(self, name: str) -> "Scope | None":
        """The scope (this one or an ancestor) that holds `name`, or None."""
        Scope.lookups += 1
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s
            s = s.parent
        return None

    def find_var(self, name: str) -> ScopeVariable | None:
        """The variable `name` here or in an ancestor, or None."""
        s = self.find_scope_of(name)
        return None if s is None else s.vars[name]

    def var(self, name: str) -> ScopeVariable:
        """The variable `name`, created (empty) in this scope if no ancestor has it."""
        found = self.find_var(name)
        if found is None:
            found = self.vars[name] = ScopeVariable(name)
        return found

    def erase(self, names: list[str]) -> None:
        """Remove the named variables of this scope (not of its ancestors)."""
        for n in names:
            self.vars.pop(n, None)

    def local_var_names(self) -> list[str]:
        return list(self.vars)


_global = Scope()


def global_scope() -> Scope:
    """The scope `Executor.run` uses when none is given."""
    return _global


class scope_guard:  # noqa: N801 - Paddle's name
    """Use `scope` as the global scope inside the block."""

    def __init__(self, scope: Scope):
        self._scope = scope

    def __enter__(self) -> None:
        global _global
        self._prev, _global = _global, self._scope

    def __exit__(self, *exc: Any) -> None:
        global _global
        _global = self._prev
