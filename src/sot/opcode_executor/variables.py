"""Variables: what the OpcodeExecutor keeps on its simulated stack instead of real values.

Each Variable has a Tracker (where it came from) and `guards()`, the assumptions a translation
made about it: a tensor input's type and meta, a Python constant's value, a module's or
function's identity. Values made during simulation (Dummy tracker) need no guard.
"""
from __future__ import annotations

import types
from typing import Any

from sot.guards import Guard, tensor_guards
from sot.ir import Symbol

from .trackers import DummyTracker, Tracker

__all__ = ["Variable", "ConstantVariable", "TensorVariable", "TupleVariable", "ListVariable", "DictVariable",
           "IteratorVariable", "ObjectVariable", "TensorMethodVariable", "ContainerMethodVariable", "NULL",
           "CONSTANT_TYPES", "OBJECT_TYPES"]

CONSTANT_TYPES = (type(None), bool, int, float, str)


class Variable:
    """A simulated value with its tracker."""

    def __init__(self, tracker: Tracker | None = None):
        self.tracker = tracker or DummyTracker()

    def guards(self) -> list[Guard]:
        """The guards that keep this Variable's assumptions valid (none without a source)."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return ""


class ConstantVariable(Variable):
    """A Python constant (None/bool/int/float/str, or a folded range/slice/constant tuple): operations on it fold."""

    def __init__(self, value: Any, tracker: Tracker | None = None):
        super().__init__(tracker)
        self.value = value

    def guards(self) -> list[Guard]:
        """value_eq on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "value_eq", self.value)]

    def _describe(self) -> str:
        return repr(self.value)


class TensorVariable(Variable):
    """A tensor: a SIR symbol; an input also keeps the eager tensor it stands for."""

    def __init__(self, symbol: Symbol, tracker: Tracker | None = None, value: Any = None):
        super().__init__(tracker)
        self.symbol = symbol
        self.value = value

    def guards(self) -> list[Guard]:
        """type_is + tensor_meta on its source."""
        src = self.tracker.source
        return [] if src is None or self.value is None else tensor_guards(src, self.value)

    def _describe(self) -> str:
        return repr(self.symbol)


class TupleVariable(Variable):
    """A tuple: built during simulation, returned by an op, or read from the frame item by item."""

    def __init__(self, items: list[Variable], tracker: Tracker | None = None):
        super().__init__(tracker)
        self.items = list(items)

    def guards(self) -> list[Guard]:
        """type_is + len_eq on its source (each item guards itself through its own tracker)."""
        src = self.tracker.source
        kind = list if isinstance(self, ListVariable) else tuple
        return [] if src is None else [Guard(src, "type_is", kind), Guard(src, "len_eq", len(self.items))]

    def _describe(self) -> str:
        return ", ".join(map(repr, self.items))


class ListVariable(TupleVariable):
    """A list built during simulation (BUILD_LIST), e.g. a shape argument."""


class DictVariable(Variable):
    """A dict built during simulation (BUILD_MAP, BUILD_CONST_KEY_MAP): constant keys, Variable values."""

    def __init__(self, items: dict[Any, Variable], tracker: Tracker | None = None):
        super().__init__(tracker)
        self.items = dict(items)

    def _describe(self) -> str:
        return ", ".join(f"{k!r}: {v!r}" for k, v in self.items.items())


class IteratorVariable(Variable):
    """An iterator over Variables known at translation time: FOR_ITER unrolls the loop over it."""

    def __init__(self, items: list[Variable]):
        super().__init__()
        self.items = list(items)
        self.position = 0

    def next(self) -> Variable | None:
        """The next item, None when exhausted."""
        if self.position == len(self.items):
            return None
        self.position += 1
        return self.items[self.position - 1]


class ObjectVariable(Variable):
    """A module, function, class or builtin: used by identity, guarded with id_is."""

    def __init__(self, value: Any, tracker: Tracker | None = None):
        super().__init__(tracker)
        self.value = value

    def guards(self) -> list[Guard]:
        """id_is on its source."""
        src = self.tracker.source
        return [] if src is None else [Guard(src, "id_is", self.value)]

    def _describe(self) -> str:
        return getattr(self.value, "__name__", type(self.value).__name__)


class TensorMethodVariable(Variable):
    """A Tensor method loaded by LOAD_ATTR(is_method): the tensor itself is the call's self slot."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def _describe(self) -> str:
        return self.name


class ContainerMethodVariable(TensorMethodVariable):
    """A list or dict method (append, extend, keys, values, items) loaded with its container as self."""


class _Null(Variable):
    """The NULL call slot CPython pushes beside a callable."""


NULL = _Null()

OBJECT_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
