"""Variables from Python values and Python values from Variables, with the guards a read relies on.

A value read from the frame (an argument, a global, an attribute, a code constant) becomes a Variable
that keeps where it came from (its Tracker): that source is what the guards re-read on the next call.
A tensor argument or global is a SIR input, reloaded by the generated code; a tensor reached through
attributes (a parameter, a buffer) is bound by identity; a number is a constant unless the dynamic
numbers policy (`sot.dynamic.numbers`) says it varies; a list or dict read through two sources is one
Variable, so a write through one is seen through the other. The other way round, `as_arg` and
`python_value` give the value a recorded call or a folded operation takes, and `from_result` the
Variable of a recorded call's result.
"""
from __future__ import annotations

import collections

import inspect
import types
from typing import Any, Callable

import numpy as np

from runtime import Tensor
from sot.dynamic.numbers import as_tensor_of, is_number, scalar_dtype
from sot.dynamic.shapes import input_meta, policy_of
from sot.guards import Guard
from sot.guards.source import Raised, Scope, Source
from sot.ir import Meta, Symbol
from sot.opcode_executor.markers import is_to_static_wrapper
from sot.pyversion import Instruction

from .aliasing import shares_memory
from .attributes import C_METHODS
from .calls import is_runtime_api
from .dispatch import handles
from .folding import is_numpy_foldable
from .side_effects import WriteBack
from .trackers import (ConstTracker, ConvertedTracker, DummyTracker, GetAttrTracker, GetItemTracker, GlobalTracker,
                       Tracker)
from .variables import (CONSTANT_TYPES, ITERATOR_TYPES, OBJECT_TYPES, BoundMethodVariable, ClassMethodOfCVariable,
                        ConstantVariable, DictVariable, DictViewVariable, ExceptionVariable, FunctionVariable,
                        InstanceVariable, ListVariable, NamedTupleVariable, NumberVariable, NumpyScalarVariable,
                        ObjectVariable, SetVariable, TensorVariable, TupleVariable, Variable, is_bound_to_a_c_class,
                        is_namedtuple_class)
from .wording import shown

__all__ = ["WrappingMixin", "in_runtime"]

def in_runtime(fn: types.FunctionType) -> bool:
    """A function of the runtime library itself (its module's globals are fixed)."""
    module = fn.__module__ or ""
    return module == "runtime" or module.startswith("runtime.")


def _is_constant(value: Any) -> bool:
    """A code constant the executor folds: a scalar, a code object, or a tuple/frozenset of them."""
    if isinstance(value, (tuple, frozenset)):
        return all(_is_constant(v) for v in value)
    return type(value) in CONSTANT_TYPES or isinstance(value, types.CodeType)


def _is_c_method_of_an_instance(value: Any) -> bool:
    """A method of a C type bound to an object of a C extension's type (`arr.mean` of a NumPy array, not a
    builtin container's method, which the executor treats apart)."""
    if not isinstance(value, types.BuiltinMethodType):
        return False
    owner = value.__self__
    return (not isinstance(owner, (types.ModuleType, type, np.generic)) and owner is not None
            and type(owner).__module__ != "builtins"
            and isinstance(inspect.getattr_static(type(owner), value.__name__, None), C_METHODS))


# dict subclasses made again, equal in every way, from a plain dict of their items (not a defaultdict: its
# factory is not an item)
_REMADE_FROM_ITEMS = (collections.OrderedDict, collections.Counter)


class WrappingMixin:
    """LOAD_CONST, `wrap` and the conversions between Variables and Python values (part of OpcodeExecutor)."""

    @handles("LOAD_CONST")
    def _load_const(self, ins: Instruction) -> None:
        if _is_constant(ins.argval):
            self.stack.append(ConstantVariable(ins.argval, ConstTracker(ins.argval)))
        else:  # an object generated code pins by identity (a resume prologue's context type): no guard
            self.stack.append(self.wrap(ins.argval, ConstTracker(ins.argval)))

    def wrap(self, value: Any, tracker: Tracker) -> Variable:
        """The Variable for a value read from the frame, guarded through `tracker`."""
        known = self._known_container(value, tracker)
        if known is not None:
            return known
        if isinstance(value, Tensor):
            var: Variable = self._wrap_tensor(value, tracker)
        elif type(value) in CONSTANT_TYPES:
            var = self._wrap_constant(value, tracker)
        elif isinstance(value, np.generic) and type(value.item()) in CONSTANT_TYPES:
            var = self._wrap_constant(value, tracker)
        elif type(value) is tuple:
            var = TupleVariable([self.wrap(v, GetItemTracker(tracker, i)) for i, v in enumerate(value)], tracker)
        elif is_namedtuple_class(type(value)):
            var = NamedTupleVariable([self.wrap(v, GetItemTracker(tracker, i)) for i, v in enumerate(value)],
                                     type(value), value, tracker)
        elif type(value) is list:  # its items are wrapped when read (see ListVariable)
            var = ListVariable([], tracker, (list(value), self.wrap))
        elif type(value) in (set, frozenset) and all(_is_constant(v) for v in value):
            var = SetVariable(value, tracker)  # (never changed in place: see write_into)
        # (not with a NaN key: a guard's `d[float('nan')]` would find no item, and miss on every call)
        elif isinstance(value, dict) and all(type(k) in CONSTANT_TYPES and k == k for k in value):
            items = {k: self.wrap(v, GetItemTracker(tracker, k)) for k, v in value.items()}
            factory = self.wrap(value.default_factory, GetAttrTracker(tracker, "default_factory")) \
                if isinstance(value, collections.defaultdict) else None
            var = DictVariable(items, tracker, type(value), factory)
        elif isinstance(value, types.FunctionType):
            var = FunctionVariable(value, tracker, global_tracker=self._globals_of(value, tracker))
        elif isinstance(value, types.MethodType) and (isinstance(value.__func__, types.FunctionType)
                                                      or is_to_static_wrapper(value.__func__)):  # (to_static(layer))
            function = self.wrap(value.__func__, GetAttrTracker(tracker, "__func__"))
            return BoundMethodVariable(function, self.wrap(value.__self__, GetAttrTracker(tracker, "__self__")))
        elif tracker.source is not None and is_bound_to_a_c_class(value):  # `dict.fromkeys`: made anew on every
            self.wrap(value.__self__, GetAttrTracker(tracker, "__self__"))  # read, so pinned by its class and name
            self.wrap(value.__name__, GetAttrTracker(tracker, "__name__"))
            var = ClassMethodOfCVariable(value, tracker)
        elif tracker.source is not None and _is_c_method_of_an_instance(value):  # `arr.mean` passed in: made anew
            owner = self.wrap(value.__self__, GetAttrTracker(tracker, "__self__"))  # on every read, so it is
            return self.load_attr(owner, value.__name__)  # guarded as its object's type's method, not by identity
        elif isinstance(value, OBJECT_TYPES) or is_runtime_api(value) or type(value).__module__ == "runtime.dtypes" \
                or is_numpy_foldable(value) or isinstance(value, types.WrapperDescriptorType):  # (object.__setattr__)
            var = ObjectVariable(value, tracker)
        elif type(type(value).__getattribute__) is types.FunctionType:
            self.unsupported(f"uses a {type(value).__name__} object with its own __getattribute__, which sot cannot "
                             "trace")
        else:
            var = InstanceVariable(value, tracker)
        self.tracked.append(var)
        if isinstance(var, (ListVariable, DictVariable)) and tracker.source is not None:
            self.translation.containers[id(value)] = (value, var)
        return var

    def guard_identity(self, value: Any, tracker: Tracker) -> ObjectVariable:
        """An object the translation relies on as it is (a function's code, the method descriptor a bound C
        method came from), guarded by identity whatever its type."""
        var = ObjectVariable(value, tracker)
        self.tracked.append(var)
        return var

    def guard_lacks(self, mapping_source: Source, key: str) -> None:
        """Guard that the mapping read from `mapping_source` (globals, an object's `__dict__`) lacks `key`: the
        translation found the name elsewhere (a builtin, a method on the type)."""
        self.translation.lacks.append(Guard(mapping_source, "lacks", key))

    def _known_container(self, value: Any, tracker: Tracker) -> Variable | None:
        """The Variable of a list or dict this translation already read, maybe through another source: one
        object, one Variable, so a write through one source is seen through the other (the other sources
        are guarded to be the same object)."""
        if tracker.source is None or not isinstance(value, (list, dict)):
            return None
        _, var = self.translation.containers.get(id(value), (None, None))
        if var is not None and tracker.source != var.tracker.source and tracker.source not in var.aliases:
            var.aliases.append(tracker.source)
        return var

    def _wrap_tensor(self, value: Tensor, tracker: Tracker) -> TensorVariable:
        """A frame's argument or global becomes a SIR input; a tensor found through an attribute is bound."""
        if tracker.source is None:
            self.unsupported("reads a tensor sot cannot find again on the next call (it has no source to reload it "
                             "from)")
        for record in self.translation.effects.records:
            if isinstance(record, WriteBack) and shares_memory(value, record.target.value):
                self.unsupported(f"reads a tensor that shares memory with {shown(record.target)} the function "
                                 "updated in place", "SOT-S001")
        self.on_place(value.place)
        if tracker.reloadable:
            meta = input_meta(self.root_code(), tracker.source, value)  # -1 where the code's inputs vary (sot.dynamic.shapes)
            var = TensorVariable(self.builder.add_input(meta), tracker, value)
            var.least = policy_of(self.root_code()).least_of(tracker.source.text, len(meta.shape))
            self.inputs.append(var)
            return var
        var = TensorVariable(value, tracker, value, bound=True)
        var.owner = self._owner_of(tracker)
        return var

    def on_place(self, place: Any, made: bool = False) -> None:
        """Every tensor of one graph lives on one place, where its Program runs: a tensor read (or `made`) on
        another place ends the graph there (eager code rejects an op mixing places; reading both is merely
        not compiled)."""
        held = self.builder.place
        if held is None:
            self.builder.place = place
        elif held != place:
            what = f"makes a tensor on {place}" if made else f"reads a tensor on {place}"
            self.unsupported(f"{what} where the graph's tensors are on {held}: a compiled graph runs on one place",
                             "SOT-G001")

    def _owner_of(self, tracker: Tracker) -> Any:
        """The object a tensor reached through `tracker` (`<layer source>.weight`) was read from: a Layer, or
        any other object but a module or class (which live as long as the program anyway); None if none."""
        if not isinstance(tracker, GetAttrTracker) or tracker.base.source is None:
            return None
        root = self
        while root.parent is not None:
            root = root.parent
        owner = Scope(root.f_locals, root.f_globals, root.f_builtins).value(tracker.base.source)
        return None if isinstance(owner, (types.ModuleType, type, Raised)) else owner

    def _wrap_constant(self, value: Any, tracker: Tracker) -> ConstantVariable:
        """A Python constant or NumPy scalar; a number whose value varies between calls (a dynamic number of
        the translated code, see sot.dynamic.numbers) is guarded by type and fed to tensor ops at run time."""
        if is_number(value) and tracker.source is not None and \
                policy_of(self.root_code()).numbers.is_dynamic(tracker.source):  # (only loadable ones are)
            return NumberVariable(value, tracker)
        kind = NumpyScalarVariable if isinstance(value, np.generic) else ConstantVariable
        return kind(value, tracker)

    def root_code(self) -> types.CodeType:
        """The code object of the translated frame (this one's, or that of the frame it is inlined into)."""
        root = self
        while root.parent is not None:
            root = root.parent
        return root.code

    def number_input(self, number: NumberVariable, dtype: Any) -> Symbol:
        """The SIR input standing for a dynamic number next to a tensor of `dtype`: a 0-D tensor of the
        dtype eager code gives the number there, made by the generated code on every call (one per dtype)."""
        target = scalar_dtype(number.number, dtype)
        convert = as_tensor_of(target)
        source = number.tracker.source
        for var in self.inputs:  # (rolled back with the inputs when an instruction breaks)
            made = var.tracker
            if isinstance(made, ConvertedTracker) and made.fn is convert and (
                    made.base is number.tracker or (source is not None and made.base.source == source)):
                return var.symbol
        var = TensorVariable(self.builder.add_input(Meta((), target)), ConvertedTracker(convert, number.tracker))
        self.inputs.append(var)
        return var.symbol

    def _globals_of(self, fn: types.FunctionType, tracker: Tracker) -> Callable[[str], Tracker] | None:
        """Where the globals a real function reads come from (see FunctionVariable.global_tracker)."""
        if fn.__globals__ is self.translation.f_globals:
            return GlobalTracker
        if tracker.source is None:
            return (lambda name: DummyTracker()) if in_runtime(fn) else None
        base = GetAttrTracker(tracker, "__globals__")
        if in_runtime(fn):  # its module's globals are fixed, but what it reads from modules (`F.relu`) may be replaced
            return lambda name: GetItemTracker(base, name) if isinstance(fn.__globals__.get(name), types.ModuleType) \
                else DummyTracker()
        return lambda name: GetItemTracker(base, name)

    def reloadable(self, var: Variable) -> bool:
        """Whether generated code can load the very object `var` stands for (to write into it)."""
        if var.tracker.source is None:
            return False
        try:
            var.tracker.load()
        except NotImplementedError:
            return False
        return True

    def from_result(self, result: Any) -> Variable:
        """The Variable of a recorded call's result (Symbols, tuples of them, Python constants)."""
        if isinstance(result, Symbol):
            return TensorVariable(result)
        if isinstance(result, (tuple, list)):
            kind = ListVariable if isinstance(result, list) else TupleVariable
            return kind([self.from_result(r) for r in result])
        if type(result) in CONSTANT_TYPES:
            return ConstantVariable(result)
        if type(result).__module__ == "runtime.dtypes":
            return ObjectVariable(result)
        self.unsupported(f"returns a {type(result).__name__}, which sot cannot translate yet")

    def as_arg(self, var: Variable) -> Any:
        """A Variable as an argument of a recorded call: a Symbol (or bound tensor) or a Python value."""
        if isinstance(var, TensorVariable):
            var.passed = True
            return var.symbol
        if isinstance(var, ConstantVariable):
            return var.value
        if isinstance(var, TupleVariable):
            items = [self.as_arg(v) for v in var.items]
            return items if isinstance(var, ListVariable) else tuple(items)
        if isinstance(var, DictVariable):
            return {k: self.as_arg(v) for k, v in var.items.items()}
        if isinstance(var, ObjectVariable) and not isinstance(var, (InstanceVariable, FunctionVariable)):
            return var.value  # a dtype, a module-level constant object
        self.unsupported(f"passes {shown(var)} to a tensor operation, which sot cannot translate yet")

    def python_value(self, var: Variable) -> Any:
        """A value made only of constants, as a Python object (to fold an operation on it)."""
        if isinstance(var, ConstantVariable):
            return var.value
        if isinstance(var, NamedTupleVariable):  # (its generated __new__ makes it from the fields alone)
            return var.kind(*(self.python_value(v) for v in var.items))
        if isinstance(var, TupleVariable):
            items = [self.python_value(v) for v in var.items]
            return items if isinstance(var, ListVariable) else tuple(items)
        if isinstance(var, DictVariable):
            items = {k: self.python_value(v) for k, v in var.items.items()}
            if var.kind is dict:
                return items
            if var.kind in _REMADE_FROM_ITEMS:  # (an OrderedDict compares, and shows, unlike a dict)
                return var.kind(items)
            if var.kind is collections.defaultdict:
                return collections.defaultdict(self.python_value(var.factory), items)
            self.unsupported(f"needs the Python value of a {var.kind.__name__}, which sot cannot make from its items")
        if isinstance(var, SetVariable):  # the very set: a copy could iterate in another order
            return var.items
        if isinstance(var, ITERATOR_TYPES):
            return iter([self.python_value(v) for v in self.elements(var)])
        if isinstance(var, DictViewVariable):  # (for `in` and folding: its items now, as a list)
            return [self.python_value(v) for v in var.current()]
        if isinstance(var, FunctionVariable) and var.value is None:
            self.unsupported(f"needs the value of {shown(var)}, a function made in the function (it exists only at "
                             "run time)")
        if isinstance(var, ObjectVariable) and not isinstance(var, InstanceVariable):
            return var.value
        if isinstance(var, ExceptionVariable):  # a builtin exception class: making one runs no code of the user's
            if var.made is None:
                var.made = var.kind(*(self.python_value(a) for a in var.args))
            return var.made
        if isinstance(var, TensorVariable):
            self.unsupported("reads a tensor's value into Python", "SOT-B002")
        self.unsupported(f"needs the Python value of {shown(var)}, known only at run time")
