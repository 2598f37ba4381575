"""Scopes: where a program's variables hold their arrays at run time (a tree, lookup walks up)."""
from __future__ import annotations

from typing import Any

__all__ = ["Scope", "global_scope", "scope_guard"]


class _VarHolder:
    """Paddle's `scope.find_var(name)` result: `.get_tensor()` returns the value."""

    def __init__(self, scope: "Scope", name: str):
        self._scope = scope
        self._name = name

    def get_tensor(self):
        import numpy as np  # noqa: PLC0415
        return np.asarray(self._scope.vars[self._name])

    def set(self, value: Any, place: Any = None) -> None:
        import numpy as np  # noqa: PLC0415
        self._scope.vars[self._name] = np.array(value)


class Scope:
    """Name -> array, with a parent: persistables live in the root, temporaries in children."""

    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.vars: dict[str, Any] = {}
        self.kids: list[Scope] = []

    def new_scope(self) -> "Scope":
        kid = Scope(self)
        self.kids.append(kid)
        return kid

    def drop_kids(self) -> None:
        self.kids.clear()

    def find_scope_of(self, name: str) -> "Scope | None":
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s
            s = s.parent
        return None

    def find_var(self, name: str) -> _VarHolder | None:
        """The variable `name` here or in an ancestor, or None."""
        s = self.find_scope_of(name)
        return None if s is None else _VarHolder(s, name)

    def var(self, name: str) -> _VarHolder:
        """The variable `name`, created (empty) in this scope if missing."""
        s = self.find_scope_of(name)
        if s is None:
            self.vars[name] = None
            s = self
        return _VarHolder(s, name)

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
