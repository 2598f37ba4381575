"""A guard is data: (source, check kind, expected value).

The opcode executor's Trackers say where each value a translation relied on came from (the
source, a `Source` whose text is e.g. `f_locals['self'].fc1.weight`) and what it assumed of it (a
check kind from `checks.CHECKS` and its expectation). Guards compare and hash by that triple (the
source by its text), so the code cache can share a guard between entries and check it once;
`str(guard)` is its readable form.
"""
from __future__ import annotations

import builtins
from typing import Any, Hashable, Mapping

from .checks import CHECKS, Check, TensorMeta
from .source import Raised, Scope, Source, parse_source

__all__ = ["Guard", "exclusive", "tensor_guards"]

_NoneType = type(None)


class Guard:
    """Assumption `kind(eval(source), expected)` of one translation about a new frame."""

    __slots__ = ("source", "kind", "expected", "src", "check", "_id", "_hash")

    def __init__(self, source: Source | str, kind: str, expected: Any = None):
        check = CHECKS.get(kind)
        if check is None:
            raise ValueError(f"unknown guard kind {kind!r}; known: {', '.join(CHECKS)}")
        # text is parsed for guards written by hand; translations pass the Sources their Trackers built
        self.src: Source = source if isinstance(source, Source) else parse_source(source)
        self.source: str = self.src.text
        self.kind = kind
        self.check: Check = check
        self.expected = check.validate(expected)
        self._id: tuple[str, str, Hashable] = (self.source, kind, check.key(self.expected))
        self._hash = hash(self._id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Guard) and self._id == other._id

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return self.check.text(self.source, self.expected)

    def __repr__(self) -> str:
        return f"Guard({self.source!r}, {self.kind!r}, {self.expected!r})"

    @property
    def cost(self) -> int:
        """The check's cost rank plus the depth of its source: cheap, shallow guards go first."""
        return self.check.cost * 8 + len(self.src.chain())

    @property
    def implied_type(self) -> type | None:
        """The exact type the guarded value must have for this guard to pass, if one."""
        return self.check.implied_type(self.expected)

    def holds_in(self, scope: Scope) -> bool:
        """Whether this guard passes in `scope`'s frame; a source or check that raises fails."""
        value = scope.value(self.src)
        if isinstance(value, Raised):
            return False
        try:
            return bool(self.check.holds(value, self.expected))
        except Exception:  # noqa: BLE001 - a check that cannot run on the value fails
            return False

    def holds(self, f_locals: Mapping, f_globals: Mapping | None = None,
              f_builtins: Mapping | None = None) -> bool:
        """Whether this guard passes in a frame given by its three namespaces (naive, slow)."""
        return self.holds_in(Scope(f_locals, f_globals or {}, f_builtins or vars(builtins)))

    def actual(self, scope: Scope) -> str:
        """The guarded value in `scope`'s frame, described as a miss report shows it."""
        value = scope.value(self.src)
        if isinstance(value, Raised):
            return repr(value)
        try:
            return self.check.show(value)
        except Exception as e:  # noqa: BLE001
            return repr(Raised(e))


def exclusive(a: Guard, b: Guard) -> bool:
    """True when no frame can pass both guards (so entries holding them never both match)."""
    if a.source != b.source:
        return False
    ta, tb = a.implied_type, b.implied_type
    if ta is not None and tb is not None and ta is not tb:
        return True
    if a.kind == b.kind:
        return a.check.exclusive(a.expected, b.expected)
    return ((a.kind == "not_none" and tb is _NoneType)
            or (b.kind == "not_none" and ta is _NoneType))


def tensor_guards(source: Source | str, tensor: Any, dynamic_dims: tuple[int, ...] = ()) -> list[Guard]:
    """The guards of a tensor input: its exact type, then shape/dtype/stop_gradient."""
    if not isinstance(source, Source):
        source = parse_source(source)
    return [Guard(source, "type_is", type(tensor)),
            Guard(source, "tensor_meta", TensorMeta.of(tensor, dynamic_dims))]
