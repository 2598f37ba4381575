"""OpcodeExecutor: simulates one frame's normalised bytecode on a stack of Variables.

`OpcodeExecutor(code, f_locals, f_globals, f_builtins).run()` decodes `code`, runs one handler
per normalised opname (the `HANDLERS` table) and returns the Variable the frame returns. Tensor
work is recorded through `self.builder` (a `SIRBuilder`): runtime public functions as call_api,
Tensor methods and operators as call_method. Python-number arithmetic is folded into Constants.
`self.inputs` lists the tensor inputs in SIR input order; `guards()` collects every guard the
simulation relied on. An opname without a handler, or a value the slice cannot model, raises
`Unsupported` naming the opname and file:line.
"""
from __future__ import annotations

import operator
import types
from typing import Any, Callable

from runtime import Tensor
from sot.guards import Guard
from sot.ir import Meta, SIRBuilder, Symbol
from sot.pyversion import Instruction, decode, versions

from .trackers import (BuiltinTracker, ConstTracker, GetAttrTracker, GetItemTracker, GlobalTracker, LocalTracker,
                       Tracker)
from .variables import (CONSTANT_TYPES, NULL, OBJECT_TYPES, ConstantVariable, ContainerMethodVariable, DictVariable,
                        IteratorVariable,
                        ListVariable, ObjectVariable, TensorMethodVariable, TensorVariable, TupleVariable, Variable)

__all__ = ["OpcodeExecutor", "Unsupported", "HANDLERS"]

# BINARY_OP operator -> (Python function for folding, Tensor dunder, reflected dunder)
_BINARY: dict[str, tuple[Callable, str, str]] = {
    "+": (operator.add, "__add__", "__radd__"),
    "-": (operator.sub, "__sub__", "__rsub__"),
    "*": (operator.mul, "__mul__", "__rmul__"),
    "/": (operator.truediv, "__truediv__", "__rtruediv__"),
    "//": (operator.floordiv, "__floordiv__", "__rfloordiv__"),
    "%": (operator.mod, "__mod__", "__rmod__"),
    "**": (operator.pow, "__pow__", "__rpow__"),
    "@": (operator.matmul, "__matmul__", "__rmatmul__"),
}


# COMPARE_OP operator -> (Python function for folding, Tensor dunder)
_COMPARE: dict[str, tuple[Callable, str]] = {
    "<": (operator.lt, "__lt__"), "<=": (operator.le, "__le__"), "==": (operator.eq, "__eq__"),
    "!=": (operator.ne, "__ne__"), ">": (operator.gt, "__gt__"), ">=": (operator.ge, "__ge__"),
}
# conditional jump -> whether it jumps, given the popped value's truth or None-ness
_JUMPS: dict[str, Callable[[Any], bool]] = {
    "POP_JUMP_IF_TRUE": bool, "POP_JUMP_IF_FALSE": operator.not_,
    "POP_JUMP_IF_NONE": lambda v: v is None, "POP_JUMP_IF_NOT_NONE": lambda v: v is not None,
}
# the container methods simulated, by Variable type
_CONTAINER_METHODS: dict[type, tuple[str, ...]] = {
    ListVariable: ("append", "extend"), DictVariable: ("keys", "values", "items"),
}
_MAX_STEPS = 100_000  # simulated instructions per frame: an unrolled loop longer than this runs eagerly


class Unsupported(Exception):
    """The frame uses something this executor cannot simulate yet: a reason to run it eagerly."""

    def __init__(self, opname: str, where: str, detail: str = ""):
        self.opname = opname
        self.where = where
        self.detail = detail
        self.reason = f"{opname}: {detail}" if detail else f"unsupported opcode {opname}"
        super().__init__(f"{self.reason} at {where}")


HANDLERS: dict[str, Callable[["OpcodeExecutor", Instruction], Any]] = {}


def _handles(*opnames: str) -> Callable:
    """Registers the decorated method as the handler of `opnames`."""
    def register(fn: Callable) -> Callable:
        for name in opnames:
            HANDLERS[name] = fn
        return fn
    return register


def _is_runtime_api(fn: Any) -> bool:
    """A public function of the runtime package (recorded as call_api)."""
    module = getattr(fn, "__module__", None) or ""
    return (callable(fn) and not isinstance(fn, type) and (module == "runtime" or module.startswith("runtime."))
            and not getattr(fn, "__name__", "_").startswith("_"))


def _is_constant(value: Any) -> bool:
    """A code constant the executor folds: a scalar, or a tuple/frozenset of them (not a code object)."""
    if isinstance(value, (tuple, frozenset)):
        return all(_is_constant(v) for v in value)
    return type(value) in CONSTANT_TYPES


class OpcodeExecutor:
    """Simulates one frame of `code` whose arguments are `f_locals`."""

    def __init__(self, code: types.CodeType, f_locals: dict, f_globals: dict, f_builtins: dict):
        self.code = code
        self.normalised = decode(code)
        self.f_locals, self.f_globals, self.f_builtins = f_locals, f_globals, f_builtins
        self.builder = SIRBuilder(f"SIR_{code.co_name}")
        self.stack: list[Variable] = []
        self.locals: dict[str, Variable] = {}
        self.inputs: list[TensorVariable] = []
        self.tracked: list[Variable] = []  # every Variable read from the frame: the guard sources
        self.current: Instruction | None = None
        self.jump_to: Instruction | None = None  # set by a handler that transfers control

    # ------------------------------------------------------------ driving
    def run(self) -> Variable:
        """Simulates the instructions in order; the Variable RETURN_VALUE returned."""
        instructions = self.normalised.instructions
        pc = 0
        for _ in range(_MAX_STEPS):
            if pc == len(instructions):
                self.unsupported("the frame ends without RETURN_VALUE")
            ins = self.current = instructions[pc]
            handler = HANDLERS.get(ins.opname)
            if handler is None:
                self.unsupported()
            self.jump_to = None
            result = handler(self, ins)
            if result is not None:
                return result
            pc = pc + 1 if self.jump_to is None else self.normalised.index(self.jump_to)
        self.unsupported(f"more than {_MAX_STEPS} instructions simulated")

    def where(self) -> str:
        """file:line of the instruction being simulated."""
        line = self.current.lineno if self.current is not None else self.code.co_firstlineno
        return f"{self.code.co_filename}:{line}"

    def unsupported(self, detail: str = "") -> None:
        """Raises Unsupported for the current instruction."""
        raise Unsupported(self.current.opname if self.current else "?", self.where(), detail)

    def guards(self) -> list[Guard]:
        """The guards of every Variable read from the frame, without repeats."""
        return list(dict.fromkeys(g for v in self.tracked for g in v.guards()))

    # ------------------------------------------------------------ values from the frame
    def wrap(self, value: Any, tracker: Tracker) -> Variable:
        """The Variable for a value read from the frame; tensors become SIR inputs."""
        if isinstance(value, Tensor):
            if tracker.source is None:
                self.unsupported("a tensor with no reloadable source")
            var: Variable = TensorVariable(self.builder.add_input(Meta.from_tensor(value)), tracker, value)
            self.inputs.append(var)
        elif type(value) in CONSTANT_TYPES:
            var = ConstantVariable(value, tracker)
        elif type(value) in (list, tuple):
            items = [self.wrap(v, GetItemTracker(tracker, i)) for i, v in enumerate(value)]
            var = (ListVariable if type(value) is list else TupleVariable)(items, tracker)
        elif isinstance(value, OBJECT_TYPES) or _is_runtime_api(value):
            var = ObjectVariable(value, tracker)
        else:
            self.unsupported(f"a value of type {type(value).__name__}")
        self.tracked.append(var)
        return var

    def from_result(self, result: Any) -> Variable:
        """The Variable of a recorded call's result (Symbols, tuples of them, Python constants)."""
        if isinstance(result, Symbol):
            return TensorVariable(result)
        if isinstance(result, (tuple, list)):
            kind = ListVariable if isinstance(result, list) else TupleVariable
            return kind([self.from_result(r) for r in result])
        if type(result) in CONSTANT_TYPES:
            return ConstantVariable(result)
        self.unsupported(f"a call returning {type(result).__name__}")

    def as_arg(self, var: Variable) -> Any:
        """A Variable as an argument of a recorded call: a Symbol or a Python value."""
        if isinstance(var, TensorVariable):
            return var.symbol
        if isinstance(var, ConstantVariable):
            return var.value
        if isinstance(var, TupleVariable):
            items = [self.as_arg(v) for v in var.items]
            return items if isinstance(var, ListVariable) else tuple(items)
        if isinstance(var, DictVariable):
            return {k: self.as_arg(v) for k, v in var.items.items()}
        self.unsupported(f"passing {var!r} to a tensor operation")

    def push_call_slots(self, callable_: Variable) -> None:
        """Pushes a callable with its NULL slot where this CPython puts it."""
        self.stack.extend([callable_, NULL] if versions.NULL_AFTER_CALLABLE else [NULL, callable_])

    # ------------------------------------------------------------ handlers
    @_handles("RESUME", "NOP")
    def _nop(self, ins: Instruction) -> None:
        pass

    @_handles("PUSH_NULL")
    def _push_null(self, ins: Instruction) -> None:
        self.stack.append(NULL)

    @_handles("POP_TOP")
    def _pop_top(self, ins: Instruction) -> None:
        self.stack.pop()

    @_handles("LOAD_CONST")
    def _load_const(self, ins: Instruction) -> None:
        if not _is_constant(ins.argval):
            self.unsupported(f"a constant of type {type(ins.argval).__name__}")
        self.stack.append(ConstantVariable(ins.argval, ConstTracker(ins.argval)))

    @_handles("LOAD_FAST")
    def _load_fast(self, ins: Instruction) -> None:
        name = ins.argval
        if name not in self.locals:
            if name not in self.f_locals:
                self.unsupported(f"local {name!r} is unbound")
            self.locals[name] = self.wrap(self.f_locals[name], LocalTracker(name))
        self.stack.append(self.locals[name])

    @_handles("STORE_FAST")
    def _store_fast(self, ins: Instruction) -> None:
        value = self.stack.pop()
        if value is NULL:  # restoring a local LOAD_FAST_AND_CLEAR found unbound
            self.locals.pop(ins.argval, None)
        else:
            self.locals[ins.argval] = value

    @_handles("LOAD_GLOBAL")
    def _load_global(self, ins: Instruction) -> None:
        name = ins.argval
        if name in self.f_globals:
            var = self.wrap(self.f_globals[name], GlobalTracker(name))
        elif name in self.f_builtins:
            var = self.wrap(self.f_builtins[name], BuiltinTracker(name))
        else:
            self.unsupported(f"global {name!r} is not defined")
        if ins.push_null:
            self.push_call_slots(var)
        else:
            self.stack.append(var)

    @_handles("LOAD_ATTR")
    def _load_attr(self, ins: Instruction) -> None:
        base = self.stack.pop()
        name = ins.argval
        if isinstance(base, TensorVariable):
            if not ins.is_method or not callable(getattr(Tensor, name, None)):
                self.unsupported(f"tensor attribute {name!r}")
            self.stack.extend([TensorMethodVariable(name), base])
            return
        if ins.is_method and name in _CONTAINER_METHODS.get(type(base), ()):
            self.stack.extend([ContainerMethodVariable(name), base])
            return
        if not isinstance(base, ObjectVariable) or not isinstance(base.value, types.ModuleType):
            self.unsupported(f"attribute {name!r} of {base!r}")
        if not hasattr(base.value, name):
            self.unsupported(f"module {base.value.__name__} has no attribute {name!r}")
        var = self.wrap(getattr(base.value, name), GetAttrTracker(base.tracker, name))
        if ins.is_method:
            self.push_call_slots(var)
        else:
            self.stack.append(var)

    @_handles("CALL")
    def _call(self, ins: Instruction) -> None:
        nargs = ins.arg
        args = self.stack[len(self.stack) - nargs:] if nargs else []
        del self.stack[len(self.stack) - nargs:]
        first, second = self.stack[-2:]
        del self.stack[-2:]
        if first is NULL:
            fn = second
        elif second is NULL:
            fn = first
        else:
            fn, args = first, [second, *args]
        n_kw = len(ins.kwnames)
        if isinstance(fn, ContainerMethodVariable) and not n_kw:
            self.stack.append(self.container_method(fn.name, *args))
            return
        if isinstance(fn, ObjectVariable) and fn.value in _BUILTINS and not n_kw:
            self.stack.append(_BUILTINS[fn.value](self, args))
            return
        pos = [self.as_arg(a) for a in args[:len(args) - n_kw]]
        kwargs = {k: self.as_arg(a) for k, a in zip(ins.kwnames, args[len(args) - n_kw:])}
        if isinstance(fn, TensorMethodVariable):
            self_sym, *rest = pos
            result = self.builder.call_method(fn.name, self_sym, rest, kwargs)
        elif isinstance(fn, ObjectVariable) and _is_runtime_api(fn.value):
            result = self.builder.call_api(fn.value, pos, kwargs)
        else:
            self.unsupported(f"calling {fn!r}")
        self.stack.append(self.from_result(result))

    @_handles("BINARY_OP")
    def _binary_op(self, ins: Instruction) -> None:
        op = ins.argval[:-1] if ins.argval.endswith("=") and ins.argval not in _COMPARE else ins.argval
        if op not in _BINARY:
            self.unsupported(f"operator {ins.argval!r}")
        fold, dunder, reflected = _BINARY[op]
        right = self.stack.pop()
        left = self.stack.pop()
        if op != ins.argval and not isinstance(left, ConstantVariable):
            self.unsupported(f"in-place {ins.argval!r} on {left!r}")  # mutates the object: a side effect
        if isinstance(left, ConstantVariable) and isinstance(right, ConstantVariable):
            self.stack.append(ConstantVariable(fold(left.value, right.value)))
        elif isinstance(left, TensorVariable):
            self.stack.append(self.from_result(
                self.builder.call_method(dunder, left.symbol, [self.as_arg(right)])))
        elif isinstance(right, TensorVariable) and isinstance(left, ConstantVariable):
            self.stack.append(self.from_result(
                self.builder.call_method(reflected, right.symbol, [left.value])))
        else:
            self.unsupported(f"{left!r} {ins.argval} {right!r}")

    @_handles("UNARY_NEGATIVE")
    def _unary_negative(self, ins: Instruction) -> None:
        value = self.stack.pop()
        if isinstance(value, ConstantVariable):
            self.stack.append(ConstantVariable(-value.value))
        elif isinstance(value, TensorVariable):
            self.stack.append(self.from_result(self.builder.call_method("__neg__", value.symbol)))
        else:
            self.unsupported(f"-{value!r}")

    @_handles("BUILD_TUPLE", "BUILD_LIST")
    def _build_sequence(self, ins: Instruction) -> None:
        items = self.stack[len(self.stack) - ins.arg:] if ins.arg else []
        del self.stack[len(self.stack) - ins.arg:]
        self.stack.append((ListVariable if ins.opname == "BUILD_LIST" else TupleVariable)(items))

    @_handles("RETURN_VALUE")
    def _return_value(self, ins: Instruction) -> Variable:
        return self.stack.pop()

    # ------------------------------------------------------------ control flow on Python values
    def truth(self, var: Variable) -> bool:
        """The truth of a value known at translation time; a tensor's truth needs a graph break."""
        if isinstance(var, ConstantVariable):
            return bool(var.value)
        if isinstance(var, (TupleVariable, DictVariable)):
            return bool(var.items)
        if isinstance(var, ObjectVariable):
            return bool(var.value)
        self.unsupported(f"a condition on {var!r}")

    @_handles(*_JUMPS)
    def _pop_jump_if(self, ins: Instruction) -> None:
        var = self.stack.pop()
        if ins.opname.endswith("NONE"):
            value = var.value if isinstance(var, ConstantVariable) else var  # only a constant can be None
        else:
            value = self.truth(var)
        if _JUMPS[ins.opname](value):
            self.jump_to = ins.target

    @_handles("JUMP")
    def _jump(self, ins: Instruction) -> None:
        self.jump_to = ins.target

    @_handles("UNARY_NOT")
    def _unary_not(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(not self.truth(self.stack.pop())))

    @_handles("COMPARE_OP")
    def _compare_op(self, ins: Instruction) -> None:
        fold, dunder = _COMPARE[ins.argval]
        right = self.stack.pop()
        left = self.stack.pop()
        if isinstance(left, ConstantVariable) and isinstance(right, ConstantVariable):
            self.stack.append(ConstantVariable(fold(left.value, right.value)))
        elif isinstance(left, TensorVariable):
            self.stack.append(self.from_result(self.builder.call_method(dunder, left.symbol, [self.as_arg(right)])))
        else:
            self.unsupported(f"{left!r} {ins.argval} {right!r}")

    @_handles("IS_OP", "CONTAINS_OP")
    def _identity_or_membership(self, ins: Instruction) -> None:
        right = self.stack.pop()
        left = self.stack.pop()
        if ins.opname == "IS_OP":
            if isinstance(left, ConstantVariable) and isinstance(right, ConstantVariable):
                result = left.value is right.value
            elif isinstance(left, ConstantVariable) or isinstance(right, ConstantVariable):
                result = False  # a constant is never the same object as a tensor, container or module
            else:
                result = left is right or (isinstance(left, ObjectVariable) and isinstance(right, ObjectVariable)
                                           and left.value is right.value)
        else:
            if not isinstance(left, ConstantVariable):
                self.unsupported(f"{left!r} in {right!r}")
            result = left.value in self.python_value(right)
        self.stack.append(ConstantVariable(result != bool(ins.arg)))

    @_handles("GET_ITER")
    def _get_iter(self, ins: Instruction) -> None:
        self.stack.append(IteratorVariable(self.elements(self.stack.pop())))

    @_handles("FOR_ITER")
    def _for_iter(self, ins: Instruction) -> None:
        item = self.stack[-1].next()
        if item is None:
            self.stack.pop()
            self.jump_to = ins.target
        else:
            self.stack.append(item)

    # ------------------------------------------------------------ containers
    def elements(self, var: Variable) -> list[Variable]:
        """The items iterating `var` yields, known at translation time."""
        if isinstance(var, (TupleVariable, IteratorVariable)):
            items = var.items[var.position:] if isinstance(var, IteratorVariable) else var.items
            if isinstance(var, IteratorVariable):
                var.position = len(var.items)
            return list(items)
        if isinstance(var, DictVariable):
            return [ConstantVariable(k) for k in var.items]
        if isinstance(var, ConstantVariable) and isinstance(var.value, (tuple, range, str, frozenset)):
            return [ConstantVariable(v) for v in var.value]
        self.unsupported(f"iterating {var!r}")

    def python_value(self, var: Variable) -> Any:
        """A value made only of constants, as a Python object (to fold an operation on it)."""
        if isinstance(var, ConstantVariable):
            return var.value
        if isinstance(var, TupleVariable):
            items = [self.python_value(v) for v in var.items]
            return items if isinstance(var, ListVariable) else tuple(items)
        if isinstance(var, DictVariable):
            return {k: self.python_value(v) for k, v in var.items.items()}
        self.unsupported(f"a Python value of {var!r}")

    @_handles("BUILD_MAP", "BUILD_CONST_KEY_MAP")
    def _build_map(self, ins: Instruction) -> None:
        if ins.opname == "BUILD_CONST_KEY_MAP":
            keys = self.python_value(self.stack.pop())
            values = self.stack[len(self.stack) - ins.arg:] if ins.arg else []
        else:
            flat = self.stack[len(self.stack) - 2 * ins.arg:] if ins.arg else []
            keys = [self.python_value(k) for k in flat[::2]]
            values = flat[1::2]
        del self.stack[len(self.stack) - len(values) * (1 if ins.opname == "BUILD_CONST_KEY_MAP" else 2):]
        self.stack.append(DictVariable(dict(zip(keys, values))))

    @_handles("BUILD_SLICE")
    def _build_slice(self, ins: Instruction) -> None:
        parts = [self.python_value(v) for v in self.stack[len(self.stack) - ins.arg:]]
        del self.stack[len(self.stack) - ins.arg:]
        self.stack.append(ConstantVariable(slice(*parts)))

    @_handles("BINARY_SUBSCR", "BINARY_SLICE")
    def _subscript(self, ins: Instruction) -> None:
        if ins.opname == "BINARY_SLICE":
            end, start = self.python_value(self.stack.pop()), self.python_value(self.stack.pop())
            index = slice(start, end)
        else:
            index = self.stack.pop()
            index = index if isinstance(index, TensorVariable) else self.python_value(index)
        base = self.stack.pop()
        if isinstance(base, TensorVariable):
            result = self.builder.call_method("__getitem__", base.symbol, [self.as_arg(index) if isinstance(
                index, TensorVariable) else index])
            self.stack.append(self.from_result(result))
        elif isinstance(base, TupleVariable) and isinstance(index, slice):
            self.stack.append(type(base)(base.items[index]))
        elif isinstance(base, (TupleVariable, DictVariable)) and not isinstance(index, Variable):
            self.stack.append(base.items[index])
        elif isinstance(base, ConstantVariable) and not isinstance(index, Variable):
            self.stack.append(ConstantVariable(base.value[index]))
        else:
            self.unsupported(f"{base!r}[{index!r}]")

    @_handles("UNPACK_SEQUENCE")
    def _unpack_sequence(self, ins: Instruction) -> None:
        items = self.elements(self.stack.pop())
        if len(items) != ins.arg:
            self.unsupported(f"unpacking {len(items)} values into {ins.arg}")
        self.stack.extend(reversed(items))

    def container_method(self, name: str, container: Variable, *args: Variable) -> Variable:
        """list.append/extend (on a list made in this frame) and dict.keys/values/items."""
        if name in ("append", "extend"):
            if container.tracker.source is not None:
                self.unsupported(f"mutating {container!r}")  # a list from the frame: a side effect to replay
            (value,) = args
            container.items.extend(self.elements(value) if name == "extend" else [value])
            return ConstantVariable(None)
        if args:
            self.unsupported(f"dict.{name} with arguments")
        views = {"keys": lambda k, v: ConstantVariable(k), "values": lambda k, v: v,
                 "items": lambda k, v: TupleVariable([ConstantVariable(k), v])}
        return IteratorVariable([views[name](k, v) for k, v in container.items.items()])

    @_handles("LIST_APPEND", "LIST_EXTEND")
    def _list_append_extend(self, ins: Instruction) -> None:
        value = self.stack.pop()
        self.container_method("append" if ins.opname == "LIST_APPEND" else "extend", self.stack[-ins.arg], value)

    @_handles("CALL_INTRINSIC_1")
    def _call_intrinsic_1(self, ins: Instruction) -> None:
        if ins.argval != "INTRINSIC_LIST_TO_TUPLE":
            self.unsupported(f"intrinsic {ins.argval}")
        self.stack.append(TupleVariable(self.elements(self.stack.pop())))

    @_handles("SWAP", "COPY")
    def _swap_copy(self, ins: Instruction) -> None:
        if ins.opname == "COPY":
            self.stack.append(self.stack[-ins.arg])
        else:
            self.stack[-1], self.stack[-ins.arg] = self.stack[-ins.arg], self.stack[-1]

    @_handles("LOAD_FAST_AND_CLEAR")
    def _load_fast_and_clear(self, ins: Instruction) -> None:
        self.stack.append(self.locals.pop(ins.argval, NULL))


def _fold_builtin(fn: Callable) -> Callable[[OpcodeExecutor, list], Variable]:
    """A builtin applied to Python values known at translation time, folded into a constant."""
    def call(ex: OpcodeExecutor, args: list[Variable]) -> Variable:
        result = fn(*(ex.python_value(a) for a in args))
        if type(result) not in CONSTANT_TYPES and not isinstance(result, range):
            ex.unsupported(f"{fn.__name__} returning {type(result).__name__}")
        return ConstantVariable(result)
    return call


def _len(ex: OpcodeExecutor, args: list[Variable]) -> Variable:
    """len of a container: known even when its items are tensors."""
    (var,) = args
    if isinstance(var, (TupleVariable, DictVariable)):
        return ConstantVariable(len(var.items))
    return _fold_builtin(len)(ex, args)


def _zip_enumerate(fn: Callable) -> Callable[[OpcodeExecutor, list], Variable]:
    """enumerate/zip over Variables: an iterator of tuples of items."""
    def call(ex: OpcodeExecutor, args: list[Variable]) -> Variable:
        if fn is enumerate:
            if len(args) > 1:
                ex.unsupported("enumerate with a start")
            lists = [[ConstantVariable(i) for i in range(len(ex.elements(args[0])))], ex.elements(args[0])]
        else:
            lists = [ex.elements(a) for a in args]
        return IteratorVariable([TupleVariable(list(t)) for t in zip(*lists)])
    return call


def _to_sequence(kind: type) -> Callable[[OpcodeExecutor, list], Variable]:
    """list(...) / tuple(...) of an iterable of Variables."""
    def call(ex: OpcodeExecutor, args: list[Variable]) -> Variable:
        return (ListVariable if kind is list else TupleVariable)(ex.elements(args[0]) if args else [])
    return call


def _isinstance(ex: OpcodeExecutor, args: list[Variable]) -> Variable:
    """isinstance of a Variable whose Python type is known, against classes given as objects."""
    var, classes = args
    kinds = {TensorVariable: Tensor, ListVariable: list, TupleVariable: tuple, DictVariable: dict}
    known = type(var.value) if isinstance(var, (ConstantVariable, ObjectVariable)) else kinds.get(type(var))
    targets = classes.value if isinstance(classes, ObjectVariable) else tuple(
        c.value for c in classes.items if isinstance(c, ObjectVariable)) if isinstance(classes, TupleVariable) else None
    if known is None or targets is None:
        ex.unsupported(f"isinstance({var!r}, {classes!r})")
    return ConstantVariable(issubclass(known, targets))


# builtins simulated at translation time: each takes the executor and the argument Variables
_BUILTINS: dict[Any, Callable[[OpcodeExecutor, list], Variable]] = {
    **{fn: _fold_builtin(fn) for fn in (range, min, max, abs, sum, int, float, bool)},
    len: _len, enumerate: _zip_enumerate(enumerate), zip: _zip_enumerate(zip),
    list: _to_sequence(list), tuple: _to_sequence(tuple), isinstance: _isinstance,
}
