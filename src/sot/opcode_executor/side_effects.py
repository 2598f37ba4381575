"""Side effects: writes a translated frame makes to objects that outlive it, replayed after its graph.

The simulation records each write and lets later reads in the same translation see it:
`obj.attr = v` on an object from the frame (`SetAttr`), `global g; g = v` in the frame's own
globals (`SetGlobal`), and mutations of a list or dict that came from outside (`append`,
`extend`, `x[k] = v`, `update`: `Refill`, which writes the container's final items back, or, for a
list whose items the translation never read, appends what was appended: see `ListVariable`). A
`print` whose text the graph's values decide (see builtins' `_print`) is recorded too (`Print`),
with its arguments as they were at the call, so nothing is printed during simulation and nothing
breaks the graph. Codegen replays the records in order, after the compiled graph ran (see translate's runner),
so the caller sees what eager execution leaves behind and the printed text comes in eager's order.
Writes to other targets stay Unsupported (SOT-S001).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sot.guards import Guard
from sot.guards.source import expression

from .variables import DictVariable, ListVariable, Variable, birth_now

__all__ = ["SetAttr", "SetGlobal", "Refill", "Print", "WriteBack", "SideEffects"]


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
    """A list or dict from outside the frame, whose items at the end are written back into it (a list
    whose items were never read: whose appended items are appended to it)."""

    target: Variable


@dataclass
class Print:
    """`print(*args, **options)`: `args` are snapshots of the values at the call (a tensor updated in
    place later still prints the value it had), `options` the constant sep/end/flush, `position` the
    number of SIR statements recorded before it (a run that fails replays those to print it).

    `stamp` orders it against the barrier of the instruction a graph breaks at (`GraphBreak.barrier`):
    a print made while simulating that instruction belongs to it, and it runs for real (it prints
    itself), so the replay before it leaves the print out (`SideEffects.settled`). The other records
    cannot need this: a write makes its instruction unbreakable (`OpcodeExecutor.record_write`)."""

    args: list[Variable]
    options: dict[str, Any]
    position: int
    stamp: int
    where: str  # file:line of the call


@dataclass
class WriteBack:
    """An input tensor updated in place by the frame (`x.add_(1)`, `x[0] = 1`): `value` is written into
    its buffer after the graph ran (`set_value`), as eager's in-place updates write it; `count` is how
    many updates eager makes, each a step of the tensor's in-place version counter (autograd checks it)."""

    target: Variable
    value: Variable
    count: int = 1


class SideEffects:
    """The writes of one translation, in order, and the values later reads must see."""

    def __init__(self) -> None:
        self.records: list[SetAttr | SetGlobal | Refill | Print] = []
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

    def write_back(self, tensor: Variable, value: Variable) -> None:
        """The input `tensor` holds `value` after the frame (one record per tensor: the last value)."""
        for record in self.records:
            if isinstance(record, WriteBack) and record.target is tensor:
                record.value = value
                record.count += 1
                return
        self.records.append(WriteBack(tensor, value))

    def print(self, args: list[Variable], options: dict[str, Any], position: int, where: str) -> None:
        self.records.append(Print(args, options, position, birth_now(), where))

    def deferred_prints(self, barrier: int | None) -> list[str]:
        """file:line of each print the replay makes (before the instruction whose simulation began at
        `barrier`, when the frame breaks there)."""
        records = self.records if barrier is None else self.settled(barrier)
        return [r.where for r in records if isinstance(r, Print)]

    def settled(self, barrier: int) -> list[SetAttr | SetGlobal | Refill | Print]:
        """The records to replay before the instruction whose simulation began at `barrier` runs for
        real: all but the prints its own simulation recorded."""
        return [r for r in self.records if not (isinstance(r, Print) and r.stamp >= barrier)]

    def attr(self, obj: Any, name: str) -> Variable | None:
        """The value this translation wrote to `obj.name`, if any."""
        return self._attrs.get((id(obj), name))

    def global_value(self, f_globals: dict, name: str) -> Variable | None:
        """The value this translation wrote to the global `name`, if any."""
        return self._globals.get((id(f_globals), name))

    def distinct_guards(self, tracked: list[Variable]) -> list[Guard]:
        """The containers this translation writes into are not the other containers of their kind it read
        (were they one object, a write through one would change what the other reads, and the replay
        would write it twice): `a is not b` for each such pair of sources. One object read through two
        sources is one Variable (`OpcodeExecutor.wrap`), guarded to stay one."""
        written = [t for t in self.targets() if isinstance(t, (ListVariable, DictVariable))]
        guards = []
        for target in written:
            for other in tracked:
                if type(other) is type(target) and other is not target and other.tracker.source is not None:
                    first, second = sorted((target.tracker.source, other.tracker.source))
                    guards.append(Guard(expression(f"{first} is not {second}"), "value_eq", True))
        return guards

    def targets(self) -> list[Variable]:
        """The objects the replay writes into, each once, in first-write order."""
        seen: dict[int, Variable] = {}
        for record in self.records:
            if isinstance(record, (SetAttr, Refill, WriteBack)):
                seen.setdefault(id(record.target), record.target)
        return list(seen.values())
