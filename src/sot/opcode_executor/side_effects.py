"""Side effects: writes a translated frame makes to objects that outlive it, replayed after its graph.

The simulation records each write and lets later reads in the same translation see it:
`obj.attr = v` on an object from the frame (`SetAttr`), `global g; g = v` in the frame's own
globals (`SetGlobal`), and mutations of a list or dict that came from outside (`append`,
`extend`, `x[k] = v`: `Refill`, which writes the container's final items back). Codegen replays
them in order, after the compiled graph ran (see translate's runner), so the caller sees what
eager execution leaves behind. Writes to other targets stay Unsupported (SOT-S001).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .variables import Variable

__all__ = ["SetAttr", "SetGlobal", "Refill", "SideEffects"]


@dataclass
class SetAttr:
    """`target.name = value`."""

    target: Variable
    name: str
    value: Variable


@dataclass
class SetGlobal:
    """`f_globals[name] = value`."""

    f_globals: dict
    name: str
    value: Variable


@dataclass
class Refill:
    """A list or dict from outside the frame, whose items at the end are written back into it."""

    target: Variable


class SideEffects:
    """The writes of one translation, in order, and the values later reads must see."""

    def __init__(self) -> None:
        self.records: list[SetAttr | SetGlobal | Refill] = []
        self._attrs: dict[tuple[int, str], Variable] = {}
        self._globals: dict[tuple[int, str], Variable] = {}
        self._refilled: set[int] = set()

    def set_attr(self, target: Variable, name: str, value: Variable) -> None:
        self.records.append(SetAttr(target, name, value))
        self._attrs[id(target.value), name] = value

    def set_global(self, f_globals: dict, name: str, value: Variable) -> None:
        self.records.append(SetGlobal(f_globals, name, value))
        self._globals[id(f_globals), name] = value

    def refill(self, container: Variable) -> None:
        if id(container) not in self._refilled:
            self._refilled.add(id(container))
            self.records.append(Refill(container))

    def attr(self, obj: Any, name: str) -> Variable | None:
        """The value this translation wrote to `obj.name`, if any."""
        return self._attrs.get((id(obj), name))

    def global_value(self, f_globals: dict, name: str) -> Variable | None:
        """The value this translation wrote to the global `name`, if any."""
        return self._globals.get((id(f_globals), name))

    def targets(self) -> list[Variable]:
        """The objects the replay writes into, each once, in first-write order."""
        seen: dict[int, Variable] = {}
        for record in self.records:
            if not isinstance(record, SetGlobal):
                seen.setdefault(id(record.target), record.target)
        return list(seen.values())
