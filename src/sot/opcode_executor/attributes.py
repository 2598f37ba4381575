"""Attribute reads during simulation: Python's lookup rules on Variables whose types guards pin.

A tensor's shape, dtype, ndim, size and stop_gradient come from its meta; its methods become
bound TensorMethodVariables. On an object, a class attribute that is a function becomes a
bound method (inlined when called), a property's getter is inlined, and anything else is read
for real through a GetAttrTracker (so a guard re-checks it: `self.training`, a sublayer, a
parameter). Modules and classes are read the same way. The lookup's own guard is the object's
type (InstanceVariable), so a method found on the class is the one the next call finds.
"""
from __future__ import annotations

import types

from runtime import Tensor
from runtime.nn import Layer
from runtime.dtypes import from_np_dtype
from sot.dynamic.shapes import specialise
from sot.guards.source import expression
from sot.pyversion import Instruction

from .containers import CONTAINER_METHODS
from .dims import run_time_shape
from .dispatch import FrameRaises, handles
from .trackers import ExpressionTracker, GetAttrTracker, GetItemTracker
from .variables import (BoundMethodVariable, ConstantVariable, ContainerMethodVariable, ExceptionVariable,
                        FunctionVariable, InstanceVariable, ListVariable, NamedTupleVariable, NewObjectVariable,
                        ObjectVariable, PartialVariable, SuperVariable, TensorMethodVariable, TensorVariable,
                        TupleVariable, Variable, python_type)
from .wording import shown

__all__ = ["AttributeMixin", "C_METHODS", "RESOLVED_ON_THE_TYPE"]


# methods of C types: reading one through an instance binds a new method object each time
C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)


# class-dict attributes `_class_attr` resolves itself (the others are read, and guarded, through the object)
RESOLVED_ON_THE_TYPE = (property, types.FunctionType, staticmethod, classmethod, *C_METHODS)


class AttributeMixin:
    """LOAD_ATTR / LOAD_SUPER_ATTR / STORE_ATTR and the lookups `getattr`/`hasattr` share (part of OpcodeExecutor)."""

    def load_attr(self, base: Variable, name: str) -> Variable:
        """`base.name` as a Variable (a bound method for a method)."""
        if isinstance(base, TensorVariable):
            return self._tensor_attr(base, name)
        if name in CONTAINER_METHODS.get(type(base), ()):  # `d.pop` as a value (given to `map`): bound to d
            return BoundMethodVariable(ContainerMethodVariable(name, python_type(base)), base)
        if isinstance(base, SuperVariable):
            return self._class_attr(base.receiver, name, start_after=base.cls)
        if isinstance(base, (NewObjectVariable, NamedTupleVariable)):
            return self.made_object_attr(base, name)
        if isinstance(base, InstanceVariable):
            written = self.translation.effects.attr(base.value, name)
            return written if written is not None else self._class_attr(base, name)
        if isinstance(base, ExceptionVariable) and name == "args":
            return TupleVariable(list(base.args))
        if isinstance(base, PartialVariable) and name in ("func", "args", "keywords"):  # a partial the frame made
            return {"func": base.func, "args": TupleVariable(base.args), "keywords": base.keywords}[name]
        if isinstance(base, ConstantVariable) and isinstance(getattr(base.value, name, None),
                                                             types.BuiltinMethodType):
            return ObjectVariable(getattr(base.value, name))  # "a,b".split: folded when called
        if not isinstance(base, ObjectVariable) or isinstance(base, FunctionVariable):
            self.unsupported(f"reads the attribute {name!r} of {shown(base)}, which sot cannot translate yet")
        if not hasattr(base.value, name):
            self.unsupported(f"reads the attribute {name!r}, which {shown(base)} does not have")
        return self.wrap(getattr(base.value, name), GetAttrTracker(base.tracker, name))

    def has_attr(self, base: Variable, name: str) -> bool:
        """hasattr(base, name); on an object the answer is guarded as an expression of its own."""
        if isinstance(base, TensorVariable):
            return hasattr(Tensor, name)
        if isinstance(base, NewObjectVariable):
            return self.new_object_has_attr(base, name)
        if isinstance(base, InstanceVariable):
            if self.translation.effects.attr(base.value, name) is not None:
                return True  # written by this translation
            if base.tracker.source is None:
                self.unsupported(f"calls hasattr() on {shown(base)}, which sot cannot find again on the next call")
            present = hasattr(base.value, name)
            self.wrap(present, ExpressionTracker(expression(f"hasattr({base.tracker.source}, {name!r})")))
            return present
        if isinstance(base, ObjectVariable):
            return hasattr(base.value, name)
        return hasattr(self.python_value(base), name)

    def _tensor_attr(self, tensor: TensorVariable, name: str) -> Variable:
        """Shape, dtype, ndim, size, stop_gradient from the tensor's meta (its guard pins them)."""
        meta = tensor.meta
        if -1 in meta.shape and name in ("shape", "size"):  # sizes known at run time, or keep those dims static
            shape = run_time_shape(self, tensor) if name == "shape" else None
            if shape is not None:
                return shape
            specialise(tensor, self.inputs, None, f"`.{name}` read at {self.where()}", self.where())
            self.unsupported(f"reads the {name} of a tensor whose sizes are known only at run time")
        values = {
            "shape": lambda: ListVariable([ConstantVariable(d) for d in meta.shape]),
            "ndim": lambda: ConstantVariable(len(meta.shape)),
            "size": lambda: ConstantVariable(int(_product(meta.shape))),
            "dtype": lambda: ObjectVariable(from_np_dtype(meta.dtype)),
            "stop_gradient": lambda: ConstantVariable(self.stop_gradient_of(tensor)),
        }
        if name in values:
            return values[name]()
        if callable(getattr(Tensor, name, None)) and not isinstance(getattr(Tensor, name), property):
            return BoundMethodVariable(TensorMethodVariable(name), tensor)
        self.unsupported(f"reads the tensor attribute {name!r}, which sot cannot translate yet")

    def _class_attr(self, obj: Variable, name: str, start_after: type | None = None) -> Variable:
        """Python's attribute lookup on an object of a known type, with methods and properties inlined."""
        value = obj.value
        mro = type(value).__mro__
        first = mro.index(start_after) + 1 if start_after is not None else 0
        found = next(((k, klass.__dict__[name]) for k, klass in enumerate(mro) if k >= first and name in
                      klass.__dict__), None)
        if found is None or (start_after is None and name in getattr(value, "__dict__", {}) and not hasattr(
                found[1], "__set__")):
            if start_after is not None:
                self.unsupported(f"reads the attribute {name!r}, which a {type(value).__name__} object does not have")
            if not hasattr(value, name):
                self._no_attribute(obj, name)
            return self.wrap(getattr(value, name), GetAttrTracker(obj.tracker, name))
        k, attr = found
        if start_after is None:  # `type(x).name`: the class attribute Python's lookup finds now, wherever it is
            where = GetAttrTracker(obj.tracker.type_tracker(), name)
        else:  # super(): in the MRO from a given class on
            where = GetAttrTracker(GetItemTracker(GetAttrTracker(obj.tracker.type_tracker(), "__mro__"), k), name)
        if isinstance(attr, RESOLVED_ON_THE_TYPE):
            self._guard_not_overridden(obj, name, first, k, start_after is None and not hasattr(attr, "__set__"))
        if isinstance(attr, property):
            if attr.fget is None:
                self.unsupported(f"reads the property {name!r}, which has no getter")
            getter = self.wrap(attr.fget, GetAttrTracker(where, "fget"))
            return self.call(getter, [obj], {})
        if isinstance(attr, types.FunctionType):
            return BoundMethodVariable(self.wrap(attr, where), obj)
        if isinstance(attr, staticmethod):
            return self.wrap(attr.__func__, where)
        if isinstance(attr, classmethod):
            function = self.wrap(attr.__func__, GetAttrTracker(where, "__func__"))
            cls = ObjectVariable(type(value), obj.tracker.type_tracker())
            return BoundMethodVariable(function, cls)  # `cls.ATTR` in its body is read, and guarded, on type(obj)
        if start_after is not None:
            self.unsupported(f"reads {name!r} through super(), a {type(attr).__name__} sot cannot translate yet")
        if isinstance(attr, C_METHODS):  # `arr.mean` is a new bound method on every read: what is guarded
            return BoundMethodVariable(self.guard_identity(attr, where), obj)  # is the method found on the type
        return self.wrap(getattr(value, name), GetAttrTracker(obj.tracker, name))

    def _no_attribute(self, obj: Variable, name: str) -> None:
        """`obj.name` raises AttributeError. When Python's plain lookup decided that (no `__getattr__` or
        `__getattribute__` of the user's ran; a Layer's own `__getattr__` only looks in its parameters,
        sublayers and buffers), it is raised in the simulation, where a `try` can catch it, guarded on the
        object's `__dict__`, those three and its classes' still lacking `name`; otherwise the frame runs eagerly."""
        value, src = obj.value, obj.tracker.source
        mro = type(value).__mro__
        getattr_hooks = [klass.__dict__["__getattr__"] for klass in mro if "__getattr__" in klass.__dict__]
        if src is None or type(value).__getattribute__ is not object.__getattribute__ or \
                getattr_hooks[:1] not in ([], [Layer.__getattr__]):
            self.unsupported(f"reads the attribute {name!r}, which a {type(value).__name__} object does not have")
        try:
            getattr(value, name)  # (no code of the user's runs) for eager's exact message
        except AttributeError as e:
            error = e
        for j in range(len(mro)):
            self.guard_lacks(src.type().attr("__mro__").item(j).attr("__dict__"), name)
        if hasattr(value, "__dict__"):
            self.guard_lacks(src.attr("__dict__"), name)
        if getattr_hooks:
            for table in ("_parameters", "_sub_layers", "_buffers"):
                self.guard_lacks(src.attr(table), name)
        raise FrameRaises.of(self.current.opname, self.where(), error)

    def _guard_not_overridden(self, obj: Variable, name: str, first: int, k: int, instance: bool) -> None:
        """The attribute was found in the dict of the `k`-th class of the object's MRO. Read as `type(x).name`
        its guard already fails when a class before it gets one; a super() lookup guards that the classes
        between (from `first`) still lack it. For a non-data descriptor, the object's own `__dict__` must lack
        it too (a method patched onto an instance after the first call is what eager code calls; special
        methods are looked up on the type only)."""
        src, type_src = obj.tracker.source, obj.tracker.type_tracker().source
        if not instance and type_src is not None:
            for j in range(first, k):
                self.guard_lacks(type_src.attr("__mro__").item(j).attr("__dict__"), name)
        elif instance and src is not None and hasattr(obj.value, "__dict__") and not (
                name.startswith("__") and name.endswith("__")):
            self.guard_lacks(src.attr("__dict__"), name)

    @handles("LOAD_ATTR")
    def _load_attr(self, ins: Instruction) -> None:
        base = self.stack.pop()
        if ins.is_method and ins.argval in CONTAINER_METHODS.get(type(base), ()):
            self.stack.extend([ContainerMethodVariable(ins.argval, python_type(base)), base])
            return
        var = self.load_attr(base, ins.argval)
        if ins.is_method:
            self.push_call_slots(var)
        else:
            self.stack.append(var)

    @handles("LOAD_SUPER_ATTR")
    def _load_super_attr(self, ins: Instruction) -> None:
        super_fn, cls, receiver = self.pop(3)
        if not (isinstance(super_fn, ObjectVariable) and super_fn.value is super):
            self.unsupported("reads an attribute through a name `super` that is not the builtin super")
        found = self.load_attr(self.call(super_fn, [cls, receiver], {}), ins.argval)
        if ins.is_method:
            self.push_call_slots(found)
        else:
            self.stack.append(found)

    @handles("STORE_ATTR")
    def _store_attr(self, ins: Instruction) -> None:
        target, value = self.stack.pop(), self.stack.pop()
        self.store_attr(target, ins.argval, value)

    def store_attr(self, target: Variable, name: str, value: Variable) -> None:
        """`target.name = value` (STORE_ATTR, or `setattr` with a constant name): a tensor's stop_gradient, or
        an attribute of an object from outside the frame, replayed after the graph (see side_effects)."""
        if isinstance(target, TensorVariable) and name == "stop_gradient":
            self.set_stop_gradient(target, value)
            return
        if isinstance(target, NewObjectVariable):
            self.set_new_attr(target, name, value)
            return
        kind = type(getattr(target, "value", None))
        setter = getattr(kind, "__setattr__", object.__setattr__)
        if not isinstance(target, InstanceVariable) or not self.reloadable(target) or hasattr(
                getattr(kind, name, None), "__set__") or (setter is not object.__setattr__ and getattr(
                    setter, "__module__", "").split(".")[0] != "runtime"):
            self.unsupported(f"sets the attribute {name!r} of {shown(target)}, a change outside the function sot "
                             "cannot replay", "SOT-S001")
        self.record_write()
        self.translation.effects.set_attr(target, name, value)


def _product(shape: tuple[int, ...]) -> int:
    out = 1
    for d in shape:
        out *= d
    return out
