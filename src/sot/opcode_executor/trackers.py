"""Trackers: where a Variable's value came from, so guards can re-check it and codegen can reload it.

A tracker has a `source` (a `Source`: the chain of reads from `f_locals`/`f_globals`/`f_builtins`,
built on its base tracker's source; None when the value was made during simulation) and `load()`,
the normalised instructions that push the value again in generated code. A value computed from
reloadable ones (a dynamic number's tensor input, arithmetic of dynamic numbers) has no source but
can be loaded: the generated code computes it again.
"""
from __future__ import annotations

from typing import Any

from sot.guards.source import F_BUILTINS, F_GLOBALS, F_LOCALS, Source, expression
from sot.pyversion import Instruction, with_null

__all__ = ["Tracker", "LocalTracker", "CellTracker", "ClosureTracker", "GlobalTracker", "BuiltinTracker",
           "ConstTracker", "GetAttrTracker", "GetItemTracker", "TypeTracker", "ExpressionTracker", "ConvertedTracker",
           "ComputedTracker", "DummyTracker", "NewObjectTracker"]


class Tracker:
    """Base: no source, cannot be reloaded (a value computed during simulation).

    `reloadable`: the generated code can load the value again on every call (the frame's
    arguments, globals and their items); a tensor with such a source is a SIR input, any other
    (a parameter read through attributes) is bound into the SIR by identity.
    """

    source: Source | None = None
    reloadable = False

    def load(self) -> list[Instruction]:
        """Instructions that push the tracked value in generated code."""
        raise NotImplementedError(f"{type(self).__name__} values cannot be reloaded")

    def type_tracker(self) -> "Tracker":
        """Where the tracked value's type is found (its methods and class attributes are read there)."""
        return TypeTracker(self)


class LocalTracker(Tracker):
    """A local of the frame (an argument, for the frames this slice captures)."""

    def __init__(self, name: str):
        self.name = name
        self.source = F_LOCALS.item(name)
        self.reloadable = True

    def load(self) -> list[Instruction]:
        """LOAD_FAST of the local."""
        return [Instruction("LOAD_FAST", argval=self.name)]


class CellTracker(LocalTracker):
    """A free variable of the frame (the content of one of its closure cells): f_locals shows it."""

    def load(self) -> list[Instruction]:
        """LOAD_DEREF of the free variable."""
        return [Instruction("LOAD_DEREF", argval=self.name)]


class ClosureTracker(Tracker):
    """The cell object itself of one of the translated frame's free variables (not its content): generated
    code reaches it with LOAD_CLOSURE, to write the variable after the graph. It guards nothing: the
    frame's own cell is the one written, whichever it is."""

    def __init__(self, name: str):
        self.name = name
        self.source = expression(f"<the cell of {name}>")  # (names it for the side-effect records; no guard reads it)

    def load(self) -> list[Instruction]:
        """LOAD_CLOSURE of the free variable."""
        return [Instruction("LOAD_CLOSURE", argval=self.name)]


class GlobalTracker(Tracker):
    """A name found in the frame's globals."""

    def __init__(self, name: str):
        self.name = name
        self.source = F_GLOBALS.item(name)
        self.reloadable = True

    def load(self) -> list[Instruction]:
        """LOAD_GLOBAL of the name (no NULL slot)."""
        return [Instruction("LOAD_GLOBAL", argval=self.name)]


class BuiltinTracker(GlobalTracker):
    """A name LOAD_GLOBAL found in the builtins (not shadowed by a global)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.source = F_BUILTINS.item(name)


class ConstTracker(Tracker):
    """A constant of the code object (LOAD_CONST): needs no guard."""

    def __init__(self, value: Any):
        self.value = value

    def load(self) -> list[Instruction]:
        """LOAD_CONST of the value."""
        return [Instruction("LOAD_CONST", argval=self.value)]


class GetAttrTracker(Tracker):
    """`base.name`, where base has its own tracker."""

    def __init__(self, base: Tracker, name: str):
        self.base = base
        self.name = name
        self.source = None if base.source is None else base.source.attr(name)

    def load(self) -> list[Instruction]:
        """The base's load, then LOAD_ATTR."""
        return [*self.base.load(), Instruction("LOAD_ATTR", argval=self.name)]


class GetItemTracker(Tracker):
    """`base[index]` for a constant index or key, where base (a list, tuple or dict) has its own tracker."""

    def __init__(self, base: Tracker, index: Any):
        self.base = base
        self.index = index
        self.source = None if base.source is None else base.source.item(index)
        self.reloadable = base.reloadable

    def load(self) -> list[Instruction]:
        """The base's load, then the constant subscript."""
        return [*self.base.load(), Instruction("LOAD_CONST", argval=self.index), Instruction("BINARY_SUBSCR")]


class TypeTracker(Tracker):
    """`type(base)`: where a method or class attribute of an object is looked up (guards only)."""

    def __init__(self, base: Tracker):
        self.base = base
        self.source = None if base.source is None else base.source.type()


class ExpressionTracker(Tracker):
    """A Python expression over the frame that is not a chain of reads, e.g. `hasattr(<obj>, 'k')` or
    `__import__('math')`: evaluated whole by the guard function (guards only, never reloaded)."""

    def __init__(self, source: Source):
        self.source = source


class ConvertedTracker(Tracker):
    """`fn(base)`, computed by the generated code on every call from a reloadable value (a dynamic
    number made the 0-D tensor a SIR input stands for). No source: the base value guards itself."""

    def __init__(self, fn: Any, base: Tracker):
        self.fn = fn
        self.base = base
        self.reloadable = True

    def load(self) -> list[Instruction]:
        """Push `fn` with its NULL slot, the base's load, CALL 1."""
        return [*with_null([Instruction("LOAD_CONST", argval=self.fn)]), *self.base.load(),
                Instruction("CALL", arg=1, argval=1)]


class ComputedTracker(Tracker):
    """An operator instruction (`opname`, `arg`, `argval`) applied to the values `operands` (Trackers)
    load, recomputed by the generated code on every call: arithmetic of dynamic numbers, done by
    Python's own operator as in eager code. No source: each operand guards itself."""

    def __init__(self, operands: list[Tracker], opname: str, arg: int | None = None, argval: Any = None):
        self.operands = list(operands)
        self.op = (opname, arg, argval)
        self.reloadable = True

    def load(self) -> list[Instruction]:
        """Each operand's load, then the operator."""
        opname, arg, argval = self.op
        return [*(ins for t in self.operands for ins in t.load()), Instruction(opname, arg=arg, argval=argval)]


class DummyTracker(Tracker):
    """A value created during simulation (a folded constant, an op's result)."""


class NewObjectTracker(Tracker):
    """An object the simulation constructed (`Box(x)`): no source of its own, but its class came from
    one, so what is looked up on its type (its methods, class attributes) is guarded, and reloaded (a
    class attribute that became a dynamic number), through the class."""

    def __init__(self, cls: Tracker):
        self.cls = cls

    def type_tracker(self) -> Tracker:
        """The tracker of the class the object was made from."""
        return self.cls
