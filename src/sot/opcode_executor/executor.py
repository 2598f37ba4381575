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

from .trackers import BuiltinTracker, ConstTracker, GetAttrTracker, GlobalTracker, LocalTracker, Tracker
from .variables import (CONSTANT_TYPES, NULL, OBJECT_TYPES, ConstantVariable, ListVariable, ObjectVariable,
                        TensorMethodVariable, TensorVariable, TupleVariable, Variable)

__all__ = ["OpcodeExecutor", "Unsupported", "HANDLERS"]

# BINARY_OP operator -> (Python function for folding, Tensor dunder, reflected dunder)
_BINARY: dict[str, tuple[Callable, str, str]] = {
    "+": (operator.add, "__add__", "__radd__"),
    "-": (operator.sub, "__sub__", "__rsub__"),
    "*": (operator.mul, "__mul__", "__rmul__"),
    "/": (operator.truediv, "__truediv__", "__rtruediv__"),
}


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

    # ------------------------------------------------------------ driving
    def run(self) -> Variable:
        """Simulates the instructions in order; the Variable RETURN_VALUE returned."""
        for ins in self.normalised.instructions:
            self.current = ins
            handler = HANDLERS.get(ins.opname)
            if handler is None:
                self.unsupported()
            result = handler(self, ins)
            if result is not None:
                return result
        self.unsupported("the frame ends without RETURN_VALUE")

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
        if type(ins.argval) not in CONSTANT_TYPES:
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
        self.locals[ins.argval] = self.stack.pop()

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
        if ins.argval not in _BINARY:
            self.unsupported(f"operator {ins.argval!r}")
        fold, dunder, reflected = _BINARY[ins.argval]
        right = self.stack.pop()
        left = self.stack.pop()
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
