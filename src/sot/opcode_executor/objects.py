"""Objects of plain Python classes constructed during simulation: `Box(x)`, a dataclass, a distribution.

`cls(*args)` of a class whose construction is only Python code sot simulates is simulated rather than
run: a blank instance (`object.__new__(cls)`, which runs no code of the user's) stands for the object's
type, the class's `__init__` is inlined with a NewObjectVariable as `self`, and the attributes it sets
stay on that Variable. Later reads see them; methods, properties and class attributes resolve on the
class, guarded through the class's own source, so a class changed between calls retranslates. The
object is new, so setting its attributes is no side effect; where it escapes the frame (returned,
stored into an outside object, live at a graph break) the generated code makes it again from the
graph's values (sot.codegen.returns `Made`), one object however many places hold it.

What stays a graph break (the object is made for real, as before): a class with a metaclass `__call__`,
its own `__new__`, only `__slots__` (no `__dict__`), `__setattr__`/`__getattribute__`/`__delattr__` (but for a
frozen dataclass's, whose `__init__` sets its fields through `object.__setattr__`), a `__del__` (the blank
instance would run it), a base written in C, abstract methods, and tensors and layers. A break inside
`__init__` makes the whole construction run for real. A namedtuple class is constructed by inlining
its generated `__new__`, whose `tuple.__new__` makes a NamedTupleVariable (see builtins); its fields
are read by name and the rest of its attributes as an object's the frame made (`made_object_attr`).
"""
from __future__ import annotations

import types
from typing import Any

from runtime import Tensor
from sot.guards.source import expression

from .attributes import RESOLVED_ON_THE_TYPE
from .dispatch import FrameRaises
from .trackers import ExpressionTracker, GetAttrTracker
from .variables import (ConstantVariable, NamedTupleVariable, NewObjectVariable, ObjectVariable, Variable,
                        is_namedtuple_class)
from .wording import shown

__all__ = ["ObjectMixin", "why_not_constructible"]

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a `class` statement (not written in C)
_OWN_HOOKS = ("__setattr__", "__getattribute__", "__delattr__")


def why_not_constructible(cls: type) -> str | None:
    """Why constructing `cls` cannot be simulated (None: it can)."""
    if type(cls).__call__ is not type.__call__:
        return "whose metaclass defines __call__"
    if issubclass(cls, Tensor):
        return "a tensor"
    if any(not klass.__flags__ & _HEAPTYPE for klass in cls.__mro__[:-1]):
        return "whose class derives from a class written in C"
    if cls.__new__ is not object.__new__:
        return "whose class defines __new__"
    if getattr(cls, "__abstractmethods__", None):
        return "whose class is abstract"
    if any(getattr(cls, hook) is not getattr(object, hook) for hook in _OWN_HOOKS) and not _is_frozen_dataclass(cls):
        return "whose class defines __setattr__, __getattribute__ or __delattr__"
    if all("__slots__" in klass.__dict__ for klass in cls.__mro__[:-1]):
        return "whose objects have only __slots__, no __dict__"
    if hasattr(cls, "__del__"):
        return "whose class defines __del__"
    if not isinstance(cls.__init__, types.FunctionType) and cls.__init__ is not object.__init__:
        return "whose __init__ is not Python code"
    return None


def _is_frozen_dataclass(cls: type) -> bool:
    """A `@dataclass(frozen=True)`: its only hooks are the generated `__setattr__`/`__delattr__`, which raise
    FrozenInstanceError (its `__init__` sets the fields through `object.__setattr__`)."""
    params = getattr(cls, "__dataclass_params__", None)
    return (params is not None and params.frozen and cls.__getattribute__ is object.__getattribute__
            and all("FrozenInstanceError" in getattr(getattr(getattr(cls, hook), "__code__", None), "co_freevars", ())
                    for hook in ("__setattr__", "__delattr__") if getattr(cls, hook) is not getattr(object, hook)))


def _class_lookup(cls: type, name: str) -> tuple[bool, Any]:
    """(found, attribute) of Python's lookup of `name` in the dicts of `cls`'s MRO."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return True, klass.__dict__[name]
    return False, None


class ObjectMixin:
    """Constructing objects, and their attributes (part of OpcodeExecutor)."""

    def construct(self, cls: ObjectVariable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        """`cls(*args, **kwargs)`: a new object whose `__init__` is inlined (see the module docstring)."""
        if is_namedtuple_class(cls.value):  # its generated __new__, inlined (see builtins' tuple.__new__)
            return self.call(self.wrap(cls.value.__new__, GetAttrTracker(cls.tracker, "__new__")), [cls, *args], kwargs)
        why = why_not_constructible(cls.value)
        if why is not None:
            self.unsupported(f"constructs a {cls.value.__qualname__} object, {why}: it is made for real", "SOT-B003")
        obj = NewObjectVariable(object.__new__(cls.value), cls)
        result = self.call(self._class_attr(obj, "__init__"), args, kwargs)  # (a break inside: the call runs for real)
        if not (isinstance(result, ConstantVariable) and result.value is None):
            self.unsupported(f"constructs a {cls.value.__qualname__} object whose __init__ returns {shown(result)}")
        return obj

    def made_object_attr(self, obj: NewObjectVariable | NamedTupleVariable, name: str) -> Variable:
        """`obj.name` on an object the simulation made, or a namedtuple: what it set (a field), else Python's
        lookup on its class."""
        found, attr = _class_lookup(type(obj.value), name)
        if isinstance(obj, NamedTupleVariable) and name in obj.kind._fields and type(attr).__name__ == "_tuplegetter":
            return obj.items[obj.kind._fields.index(name)]
        if isinstance(obj, NewObjectVariable) and name in obj.attrs and not hasattr(type(attr), "__set__"):
            return obj.attrs[name]
        if found and isinstance(attr, RESOLVED_ON_THE_TYPE):
            return self._class_attr(obj, name)  # a method, a property: found on the class, guarded there
        if found and not hasattr(type(attr), "__get__"):  # a plain class attribute, read (and guarded) on the
            where = obj.tracker if obj.tracker.source is not None else obj.tracker.type_tracker()  # object or class
            return self.wrap(attr, GetAttrTracker(where, name))
        if found:
            self.unsupported(f"reads {name!r} of {shown(obj)}, a {type(attr).__name__} sot cannot read on an object "
                             "it made")
        if hasattr(type(obj.value), "__getattr__"):
            self.unsupported(f"reads {name!r} of {shown(obj)}, which its class's __getattr__ decides")
        self._guard_class_lacks(obj, name)
        raise FrameRaises.of(self.current.opname, self.where(),
                             AttributeError(f"{type(obj.value).__name__!r} object has no attribute {name!r}"))

    def new_object_has_attr(self, obj: NewObjectVariable, name: str) -> bool:
        """hasattr(obj, name) on an object the simulation made: the class's part guarded through its source."""
        if name in obj.attrs:
            return True
        if hasattr(type(obj.value), "__getattr__"):
            self.unsupported(f"calls hasattr() on {shown(obj)}, which its class's __getattr__ decides")
        mro = type(obj.value).__mro__
        holder = next((j for j, klass in enumerate(mro) if name in klass.__dict__), None)
        where = obj.tracker.type_tracker().source
        if holder is None:
            self._guard_class_lacks(obj, name)
        elif where is not None:
            in_dict = f"{name!r} in {where.attr('__mro__').item(holder).attr('__dict__')}"
            self.wrap(True, ExpressionTracker(expression(in_dict)))
        return holder is not None

    def set_new_attr(self, obj: NewObjectVariable, name: str, value: Variable, generic: bool = False) -> None:
        """`obj.name = value` on an object the simulation made: kept on its Variable (a property's setter is
        inlined). `generic`: made by `object.__setattr__` (a frozen dataclass's `__init__`), not through the
        class's own `__setattr__` (a frozen dataclass's raises: that runs for real)."""
        if not generic and type(obj.value).__setattr__ is not object.__setattr__:
            self.unsupported(f"sets {name!r} of {shown(obj)}, whose class's own __setattr__ decides", "SOT-B003")
        found, attr = _class_lookup(type(obj.value), name)
        if isinstance(attr, property):
            if attr.fset is None:
                self.unsupported(f"sets the property {name!r} of {shown(obj)}, which has no setter")
            setter = self.wrap(attr.fset, GetAttrTracker(GetAttrTracker(obj.tracker.type_tracker(), name), "fset"))
            self.call(setter, [obj, value], {})
            return
        if found and hasattr(type(attr), "__set__"):
            self.unsupported(f"sets {name!r} of {shown(obj)}, a {type(attr).__name__} sot cannot write on an object "
                             "it made")
        self.touch(obj)
        obj.attrs[name] = value

    def _guard_class_lacks(self, obj: NewObjectVariable | NamedTupleVariable, name: str) -> None:
        """The classes of `obj` still lack `name` on the next call (its own attributes are the simulation's)."""
        where = obj.tracker.type_tracker().source
        if where is None:
            return
        for j in range(len(type(obj.value).__mro__)):
            self.guard_lacks(where.attr("__mro__").item(j).attr("__dict__"), name)
