"""OpcodeExecutor: simulates one frame's normalised bytecode on a stack of Variables.

`OpcodeExecutor(code, f_locals, f_globals, f_builtins).run()` decodes `code`, runs one handler
per normalised opname (the `HANDLERS` table) and returns the Variable the frame returns. Tensor
work is recorded through `self.builder` (a `SIRBuilder`): runtime public functions as call_api,
Tensor methods and operators as call_method. Python-number arithmetic is folded into Constants; a
number of the frame left dynamic (`sot.dynamic.numbers`) meeting a tensor in an operator is a SIR input.
Calls of user Python functions, methods, properties, lambdas, closures, comprehensions and
`Layer.__call__`/`forward` are inlined: an `OpcodeInlineExecutor` simulates the callee's code
into the same SIR, sharing the inputs and the guarded reads with its caller.

Tensors read from the frame's arguments and globals become SIR inputs (reloaded by the
generated code on every call); tensors reached through attributes (Layer parameters and
buffers) are bound into the SIR by identity (docs/sot-internals.md, "Parameters are bound, not
copied").
`self.inputs` lists the tensor inputs in SIR order; `guards()` collects every guard the
simulation relied on. An opname without a handler, or a value the executor cannot model,
raises `Unsupported` naming the opname and file:line; a `raise` the frame would execute raises
`FrameRaises` (run the frame eagerly: it raises the user's exception itself).
"""
from __future__ import annotations

import inspect
import operator
import sys
import types
from typing import Any, Callable

import numpy as np

from runtime import Tensor, static
from sot import config
from sot.opcode_executor.blocklist import is_skipped
from sot.dynamic.shapes import input_meta, policy_of
from sot.dynamic.numbers import as_tensor_of, is_number, scalar_dtype
from sot.guards import Guard
from sot.guards.source import F_GLOBALS, Raised, Scope, Source, expression
from sot.ir import Meta, SIRBuilder, Symbol
from sot.opcode_executor.markers import is_not_to_static, is_to_static_wrapper
from sot.pyversion import Instruction, call_slots, decode
from sot.pyversion.instruction import BINARY_OPERATORS as _BINARY_OPERATORS

from .aliasing import aliasing_guards, shares_memory
from .attributes import C_METHODS, AttributeMixin
from .binding import BindError, bind_arguments
from .breaks import CALLS, FrameState, GraphBreak, breakable
from .calls import MAX_INLINE_DEPTH, CallMixin, is_runtime_api
from .containers import call_container_method, set_of
from .contexts import ContextMixin
from .dispatch import HANDLERS, FrameRaises, InPlaceUpdate, Unsupported, handles
from .exceptions import ExceptionMixin
from .loops import past_unroll_limit
from .matching import MatchMixin
from .side_effects import SideEffects, WriteBack
from .trackers import (BuiltinTracker, CellTracker, ClosureTracker, ComputedTracker, ConstTracker, ConvertedTracker,
                       DummyTracker, ExpressionTracker, GetAttrTracker, GetItemTracker, GlobalTracker, LocalTracker,
                       Tracker)
from .variables import (CONSTANT_TYPES, ITERATOR_TYPES, NULL, OBJECT_TYPES, SUSPENDED, BoundMethodVariable,
                        CellVariable, ConstantVariable, DictVariable, DictViewVariable, FunctionVariable,
                        GeneratorVariable, InstanceVariable, IteratorVariable, LazyIteratorVariable, ListVariable,
                        NumberVariable, NumpyScalarVariable, ObjectVariable, SetVariable, TensorVariable, TupleVariable,
                        Variable, birth_now)

__all__ = ["OpcodeExecutor", "OpcodeInlineExecutor", "Unsupported", "FrameRaises", "HANDLERS"]

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
    "&": (operator.and_, "__and__", "__rand__"),
    "|": (operator.or_, "__or__", "__ror__"),
    "^": (operator.xor, "__xor__", "__rxor__"),
    "<<": (operator.lshift, "__lshift__", "__rlshift__"),
    ">>": (operator.rshift, "__rshift__", "__rrshift__"),
}
# an operator's in-place form, for the set operators (`s |= t` changes s)
_IN_PLACE: dict[Callable, Callable] = {operator.or_: operator.ior, operator.and_: operator.iand,
                                       operator.sub: operator.isub, operator.xor: operator.ixor}
# unary opname -> (Python function for folding, Tensor dunder)
_UNARY: dict[str, tuple[Callable, str]] = {
    "UNARY_NEGATIVE": (operator.neg, "__neg__"), "UNARY_INVERT": (operator.invert, "__invert__"),
    "INTRINSIC_UNARY_POSITIVE": (operator.pos, "__pos__"),
}
# COMPARE_OP operator -> (Python function for folding, Tensor dunder)
_COMPARE: dict[str, tuple[Callable, str]] = {
    "<": (operator.lt, "__lt__"), "<=": (operator.le, "__le__"), "==": (operator.eq, "__eq__"),
    "!=": (operator.ne, "__ne__"), ">": (operator.gt, "__gt__"), ">=": (operator.ge, "__ge__"),
}
# operators on Python numbers a dynamic number goes through (those that cannot raise on ints and floats)
_NUMBER_ARITHMETIC = frozenset({"+", "-", "*"})
# ... and those that raise only for a zero divisor: by a divisor known at translation time (`i % 3`)
_NUMBER_DIVISION = frozenset({"%", "//"})
# COMPARE_OP operator -> the one Python tries on the right operand when the left's gives NotImplemented
_SWAPPED = {"<": ">", "<=": ">=", "==": "==", "!=": "!=", ">": "<", ">=": "<="}
# conditional jump -> whether it jumps, given the popped value's truth or None-ness
_JUMPS: dict[str, Callable[[Any], bool]] = {
    "POP_JUMP_IF_TRUE": bool, "POP_JUMP_IF_FALSE": operator.not_,
    "POP_JUMP_IF_NONE": lambda v: v is None, "POP_JUMP_IF_NOT_NONE": lambda v: v is not None,
}
# FORMAT conversions (CONVERT_VALUE's argval)
_CONVERSIONS: dict[Any, Callable[[Any], str]] = {"str": str, "repr": repr, "ascii": ascii}
_MAX_STEPS = 100_000  # simulated instructions per translation: an unrolled loop longer than this runs eagerly


def _in_runtime(fn: types.FunctionType) -> bool:
    """A function of the runtime library itself (its module's globals are fixed)."""
    module = fn.__module__ or ""
    return module == "runtime" or module.startswith("runtime.")


def _is_constant(value: Any) -> bool:
    """A code constant the executor folds: a scalar, a code object, or a tuple/frozenset of them."""
    if isinstance(value, (tuple, frozenset)):
        return all(_is_constant(v) for v in value)
    return type(value) in CONSTANT_TYPES or isinstance(value, types.CodeType)


def _is_number(var: Variable) -> bool:
    """A Python bool, int or float (a dynamic number included), whose comparison with a tensor is the tensor's."""
    return isinstance(var, NumberVariable) or (isinstance(var, ConstantVariable) and not isinstance(
        var, NumpyScalarVariable) and type(var.value) in (bool, int, float))


def _may_overflow(left: Variable, right: Variable) -> bool:
    """Whether Python's `+`, `-` or `*` on these numbers (one dynamic) could raise: an int meeting a float
    is converted to float, which raises OverflowError beyond the float range (a dynamic int may be any size)."""
    numbers = [v.number if isinstance(v, NumberVariable) else v.value for v in (left, right)]
    if any(isinstance(n, np.generic) for n in numbers):  # NumPy's own overflow rules (and np.seterr): kept static
        return True
    if not any(type(n) is float for n in numbers):
        return False
    for var, n in zip((left, right), numbers):
        if type(n) is int:
            if isinstance(var, NumberVariable):
                return True
            try:
                float(n)
            except OverflowError:
                return True
    return False


def _is_c_method_of_an_instance(value: Any) -> bool:
    """A method of a C type bound to an object of a C extension's type (`arr.mean` of a NumPy array, not a
    builtin container's method, which the executor treats apart)."""
    if not isinstance(value, types.BuiltinMethodType):
        return False
    owner = value.__self__
    return (not isinstance(owner, (types.ModuleType, type, np.generic)) and owner is not None
            and type(owner).__module__ != "builtins"
            and isinstance(inspect.getattr_static(type(owner), value.__name__, None), C_METHODS))


def _item_trackers(tracker: Tracker, attribute: str, count: int) -> list[Tracker]:
    """Trackers of `tracked.attribute[i]` for i < count (a function's defaults or closure)."""
    base = GetAttrTracker(tracker, attribute)
    return [GetItemTracker(base, i) for i in range(count)]


def _no_handler(ex: "OpcodeExecutor", ins: Instruction) -> None:
    """An opcode the executor does not simulate (SOT-U001)."""
    ex.unsupported()


class _Translation:
    """What every frame of one translation shares: the SIR being built, its inputs, its guarded reads."""

    def __init__(self, name: str, f_globals: dict):
        self.builder = SIRBuilder(name)
        self.inputs: list[TensorVariable] = []
        self.tracked: list[Variable] = []  # every Variable read from the frame: the guard sources
        self.f_globals = f_globals  # the translated frame's own globals
        self.steps = 0
        self.effects = SideEffects()
        # per instruction being simulated (outermost frame's first): [barrier, dirty, rewinds]. Variables
        # born before the barrier belong to the state before that instruction; dirty: one was mutated
        # since (a break at that instruction would replay the mutation); rewinds: id -> (iterator, its
        # position before the instruction) of simulated iterators it advanced, which a break there undoes
        self.open_steps: list[list] = []
        self.virtual_frames = True  # a break inside an inlined call resumes inside it (False: at the call)
        self.loop_head: int | None = None  # the translated frame's loop head to break at: its loop runs for real
        self.contexts: dict[int, Variable] = {}  # id of a grad-mode context object from outside -> its Variable
        self.containers: dict[int, tuple[Any, Variable]] = {}  # id of a list/dict read -> (it, its Variable)
        self.cells: dict[int, tuple[Any, CellVariable]] = {}  # id of a real closure cell -> (it, its Variable)
        self.unknown_cells = False  # the translated frame's cells are unknown: any real cell may be one of them
        self.lacks: list[Guard] = []  # names the translation relied on being absent from a mapping

    def cell(self, cell: Any, make: Callable[[], CellVariable]) -> CellVariable:
        """The one Variable of a real closure cell (`make()` the first time it is met): closures sharing a
        cell (the translated frame and a function it calls) see each other's writes, as in CPython."""
        if id(cell) not in self.cells:
            self.cells[id(cell)] = (cell, make())
        return self.cells[id(cell)][1]

    def forget_reads(self, barrier: int) -> None:
        """The simulation since `barrier` is rolled back (its instruction runs for real): the lists whose
        items it read are unread again, so the rolled-back inputs of their items are not used."""
        for _, var in self.containers.values():
            if isinstance(var, ListVariable):
                var.forget_read(barrier)

class OpcodeExecutor(CallMixin, AttributeMixin, ContextMixin, MatchMixin, ExceptionMixin):
    """Simulates one frame of `code` whose arguments are `f_locals` (the translated frame)."""

    def __init__(self, code: types.CodeType, f_locals: dict, f_globals: dict, f_builtins: dict,
                 f_closure: tuple | None = ()):
        self._start(code, _Translation(f"SIR_{code.co_name}", f_globals), f_globals, f_builtins)
        self.f_locals = f_locals
        self.f_closure = f_closure  # the cells of its free variables (None: unknown, see _free_cell)
        self.depth = 0
        self.parent: OpcodeExecutor | None = None
        self.direct = False  # (an inlined frame: made by its caller's CALL itself)
        self.may_break = False  # set by the translator: what cannot be simulated raises GraphBreak

    def _start(self, code: types.CodeType, translation: _Translation, f_globals: dict, f_builtins: dict) -> None:
        self.code = code
        self.normalised = decode(code)
        self.translation = translation
        self.builder = translation.builder
        self.inputs = translation.inputs
        self.tracked = translation.tracked
        self.f_locals: dict = {}
        self.f_globals, self.f_builtins = f_globals, f_builtins
        self.stack: list[Variable] = []
        self.locals: dict[str, Variable] = {}
        self.cells: dict[str, CellVariable] = {}
        self.current: Instruction | None = None
        self.jump_to: Instruction | None = None  # set by a handler that transfers control
        self.yielded: Variable | None = None  # what an inlined generator's last `yield` gave
        self.resume_pc = 0  # where `run` starts: an inlined generator goes on after its last `yield`

    # ------------------------------------------------------------ driving
    def run(self) -> Variable:
        """Simulates the instructions in order; the Variable RETURN_VALUE returned."""
        instructions = self.normalised.instructions
        translation = self.translation
        pc = self.resume_pc
        while translation.steps < _MAX_STEPS:
            translation.steps += 1
            if pc == len(instructions):
                self.unsupported("the frame ends without RETURN_VALUE")
            ins = self.current = instructions[pc]
            if pc == translation.loop_head and self.parent is None:  # the translator asked: its loop runs for real
                raise GraphBreak(ins, Unsupported(ins.opname, self.where(), "the loop runs for real"),
                                 FrameState(self, ins, list(self.stack)), barrier=birth_now())
            handler = HANDLERS.get(ins.opname, _no_handler)  # (one without: a break there, where one can go)
            self.jump_to = None
            result = handler(self, ins) if not self.may_break else self._step_or_break(handler, ins)
            if result is not None:
                self.resume_pc = pc + 1
                return result
            pc = pc + 1 if self.jump_to is None else self.normalised.index(self.jump_to)
        self.unsupported(f"more than {_MAX_STEPS} instructions simulated")

    def _step_or_break(self, handler: Callable, ins: Instruction) -> Any:
        """Simulate one instruction of a frame that may break; what it cannot simulate becomes a
        GraphBreak at it, with the stack and SIR as they were before it, when that can be resumed.
        A GraphBreak from the callee this CALL inlined passes on with this frame added (the break
        resumes inside the callee); one that cannot resume there breaks here, at the call."""
        translation = self.translation
        stack = list(self.stack)
        mark, n_inputs = self.builder.mark(), len(self.inputs)
        step = [birth_now(), False, {}]
        translation.open_steps.append(step)
        call_site = None
        try:
            return handler(self, ins)
        except GraphBreak as brk:
            call_site = self._why_not_inside(brk, ins)
            if call_site is None:
                self.stack = stack
                brk.frames.append(FrameState(self, ins, stack))
                raise
            cause = brk.cause
        except Unsupported as e:
            cause, call_site = e, e.call_site
        finally:
            translation.open_steps.pop()
        if not cause.breakable or step[1] or not breakable(self.normalised, ins):
            raise cause
        for iterator, position in step[2].values():
            iterator.position = position
        self.builder.rollback(mark)
        del self.inputs[n_inputs:]
        translation.forget_reads(step[0])
        self.stack = stack
        raise GraphBreak(ins, cause, FrameState(self, ins, stack), call_site, step[0]) from cause

    def _why_not_inside(self, brk: GraphBreak, ins: Instruction) -> str | None:
        """Why a break inside a call made by `ins` cannot resume inside the callee (None: it can)."""
        callee = brk.frames[-1].executor
        while callee.parent is not self:  # a frame between could not be resumed: it let the break through
            callee = callee.parent
        name = callee.code.co_qualname
        if callee is not brk.frames[-1].executor:
            return f"{name} cannot be resumed: {callee.resume_blocker()}"
        if ins.opname not in CALLS or not callee.direct:
            return f"{name} runs inside {ins.opname}, not as its own call"
        if self.normalised.handler(ins) is not None:
            return "the call is inside a try or with block"
        return None

    def resume_blocker(self) -> str | None:
        """Why a resume function could not continue this frame (None: it can)."""
        return None

    def touch(self, var: Variable) -> None:
        """Note a mutation of `var`: one made before an instruction being simulated makes a break
        there impossible (running the instruction for real would repeat it)."""
        for step in reversed(self.translation.open_steps):
            if var.birth >= step[0]:
                break
            if type(var) is IteratorVariable:  # (a comprehension's iterator on 3.11: its function consumes it)
                step[2].setdefault(id(var), (var, var.position))
            else:
                step[1] = True

    def where(self) -> str:
        """file:line of the instruction being simulated."""
        line = self.current.lineno if self.current is not None else self.code.co_firstlineno
        return f"{self.code.co_filename}:{line}"

    def unsupported(self, detail: str = "", code: str | None = None) -> None:
        """Raises Unsupported for the current instruction (`code`: its sot.translation.reasons entry)."""
        raise Unsupported(self.current.opname if self.current else "?", self.where(), detail, code)

    def raises(self, detail: str) -> None:
        """Raises FrameRaises for the current instruction: eager code raises an exception there."""
        raise FrameRaises(self.current.opname if self.current else "?", self.where(), detail)

    def guards(self) -> list[Guard]:
        """The guards of every Variable read from the frame, and that the containers written into are
        not others read, without repeats."""
        found = [g for v in self.tracked for g in v.guards()]
        effects = self.translation.effects
        return list(dict.fromkeys([*found, *effects.distinct_guards(self.tracked),
                                   *aliasing_guards(effects, self.tracked), *self.translation.lacks]))

    def global_tracker(self, name: str) -> Tracker:
        """Where the global `name` of this frame's code comes from."""
        return GlobalTracker(name)

    # ------------------------------------------------------------ values from the frame
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
        elif type(value) is list:  # its items are wrapped when read (see ListVariable)
            var = ListVariable([], tracker, (list(value), self.wrap))
        elif type(value) in (set, frozenset) and all(_is_constant(v) for v in value):
            var = SetVariable(value, tracker)  # (never changed in place: see write_into)
        # (not with a NaN key: a guard's `d[float('nan')]` would find no item, and miss on every call)
        elif isinstance(value, dict) and all(type(k) in CONSTANT_TYPES and k == k for k in value):
            items = {k: self.wrap(v, GetItemTracker(tracker, k)) for k, v in value.items()}
            var = DictVariable(items, tracker, type(value))
        elif isinstance(value, types.FunctionType):
            var = FunctionVariable(value, tracker, global_tracker=self._globals_of(value, tracker))
        elif isinstance(value, types.MethodType) and (isinstance(value.__func__, types.FunctionType)
                                                      or is_to_static_wrapper(value.__func__)):  # (to_static(layer))
            function = self.wrap(value.__func__, GetAttrTracker(tracker, "__func__"))
            return BoundMethodVariable(function, self.wrap(value.__self__, GetAttrTracker(tracker, "__self__")))
        elif tracker.source is not None and _is_c_method_of_an_instance(value):  # `arr.mean` passed in: made anew
            owner = self.wrap(value.__self__, GetAttrTracker(tracker, "__self__"))  # on every read, so it is
            return self.load_attr(owner, value.__name__)  # guarded as its object's type's method, not by identity
        elif isinstance(value, OBJECT_TYPES) or is_runtime_api(value) or type(value).__module__ == "runtime.dtypes":
            var = ObjectVariable(value, tracker)
        elif type(type(value).__getattribute__) is types.FunctionType:
            self.unsupported(f"an object of {type(value).__name__} with its own __getattribute__")
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
            self.unsupported("a tensor with no reloadable source")
        for record in self.translation.effects.records:
            if isinstance(record, WriteBack) and shares_memory(value, record.target.value):
                self.unsupported(f"{tracker.source} shares memory with {record.target!r}, which the frame updated "
                                 "in place", "SOT-S001")
        if tracker.reloadable:
            meta = input_meta(self.root_code(), tracker.source, value)  # -1 where the code's inputs vary (sot.dynamic.shapes)
            var = TensorVariable(self.builder.add_input(meta), tracker, value)
            self.inputs.append(var)
            return var
        var = TensorVariable(value, tracker, value, bound=True)
        var.owner = self._owner_of(tracker)
        return var

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
            return (lambda name: DummyTracker()) if _in_runtime(fn) else None
        base = GetAttrTracker(tracker, "__globals__")
        if _in_runtime(fn):  # its module's globals are fixed, but what it reads from modules (`F.relu`) may be replaced
            return lambda name: GetItemTracker(base, name) if isinstance(fn.__globals__.get(name), types.ModuleType) \
                else DummyTracker()
        return lambda name: GetItemTracker(base, name)

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
        self.unsupported(f"a call returning {type(result).__name__}")

    def as_arg(self, var: Variable) -> Any:
        """A Variable as an argument of a recorded call: a Symbol (or bound tensor) or a Python value."""
        if isinstance(var, TensorVariable):
            var.fresh = False  # the callee may return a view of it: no in-place update from now on
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
        self.unsupported(f"passing {var!r} to a tensor operation")

    def push_call_slots(self, callable_: Variable) -> None:
        """Pushes a callable with its NULL slot where this CPython puts it."""
        self.stack.extend(call_slots(callable_, NULL))

    def pop(self, n: int) -> list[Variable]:
        """The top `n` stack items, deepest first, removed."""
        if not n:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    # ------------------------------------------------------------ inlining
    def inline(self, fn: FunctionVariable, args: list[Variable], kwargs: dict[str, Variable],
               direct: bool = False) -> Variable:
        """Simulate a Python function's code into this translation's SIR (`direct`: see `call`)."""
        if fn.value is not None and (is_not_to_static(fn.value) or is_skipped(fn.value)):
            self.unsupported(f"{fn.code.co_qualname} is marked not_to_static or skipped", "SOT-B004")
        if self.depth >= MAX_INLINE_DEPTH:
            self.too_deep(fn)
        if fn.code.co_flags & (0x80 | 0x100 | 0x200):  # coroutine, iterable coroutine, async generator
            self.unsupported(f"calling the coroutine function {fn.code.co_qualname}")
        defaults, kwdefaults, closure = (fn.defaults, fn.kwdefaults, fn.closure) if fn.value is None else \
            self._parts_of(fn)
        if fn.value is not None and fn.tracker.source is not None and not _in_runtime(fn.value):
            # the code inlined must be the function's code on the next call too (autoreload replaces it)
            self.guard_identity(fn.code, GetAttrTracker(fn.tracker, "__code__"))
        try:
            bound = bind_arguments(fn.code, args, kwargs, defaults, kwdefaults)
        except BindError as e:
            raise FrameRaises("CALL", self.where(), str(e)) from None
        callee = OpcodeInlineExecutor(self, fn, bound, closure, direct)
        try:
            result = callee.run()
            return GeneratorVariable(callee) if result is SUSPENDED else result
        except Unsupported as e:
            if self.may_break and not callee.may_break and e.call_site is None:
                blocker = callee.resume_blocker() or "its frame could not be rebuilt at the break"
                e.call_site = f"{fn.code.co_qualname} cannot be resumed: {blocker}"
            raise

    def _parts_of(self, fn: FunctionVariable) -> tuple[tuple, dict, tuple]:
        """A real function's defaults, keyword defaults and closure cells as Variables."""
        value, tracker = fn.value, fn.tracker
        defaults = tuple(self.wrap(v, t) for v, t in zip(value.__defaults__ or (), _item_trackers(
            tracker, "__defaults__", len(value.__defaults__ or ()))))
        kw_base = GetAttrTracker(tracker, "__kwdefaults__")
        kwdefaults = {k: self.wrap(v, GetItemTracker(kw_base, k)) for k, v in (value.__kwdefaults__ or {}).items()}
        cells = [self.translation.cell(cell, lambda cell=cell, t=t: self._cell_of(cell, t, tracker.source is not None))
                 for cell, t in zip(value.__closure__ or (), _item_trackers(tracker, "__closure__", len(
                     value.__closure__ or ())))]
        return defaults, kwdefaults, tuple(cells)

    def _cell_of(self, cell: Any, tracker: Tracker, reachable: bool) -> CellVariable:
        """The Variable of a closure cell of a function read from the frame, reached through `tracker`."""
        where = (cell, tracker) if reachable else None
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            return CellVariable(None, real=True, where=where)
        return CellVariable(self.wrap(contents, GetAttrTracker(tracker, "cell_contents")), real=True, where=where)

    def zero_arg_super(self) -> tuple[Variable, Variable]:
        """`super()`'s two implicit arguments: the `__class__` cell and the first argument."""
        cell = self.cells.get("__class__")
        if cell is None or cell.content is None or not self.code.co_argcount:
            self.unsupported("super() without a __class__ cell or a first argument")
        first = self.code.co_varnames[0]
        receiver = self.cells[first].content if first in self.cells else self.local(first)
        return cell.content, receiver

    # ------------------------------------------------------------ handlers
    @handles("RESUME", "NOP")
    def _nop(self, ins: Instruction) -> None:
        pass

    @handles("PUSH_NULL")
    def _push_null(self, ins: Instruction) -> None:
        self.stack.append(NULL)

    @handles("POP_TOP")
    def _pop_top(self, ins: Instruction) -> None:
        self.stack.pop()

    @handles("LOAD_CONST")
    def _load_const(self, ins: Instruction) -> None:
        if _is_constant(ins.argval):
            self.stack.append(ConstantVariable(ins.argval, ConstTracker(ins.argval)))
        else:  # an object generated code pins by identity (a resume prologue's context type): no guard
            self.stack.append(self.wrap(ins.argval, ConstTracker(ins.argval)))

    def local(self, name: str) -> Variable:
        """The Variable of a local; an argument of the translated frame is read on first use."""
        var = self.locals.get(name)
        if var is None:
            if name not in self.f_locals or name in self.code.co_freevars:
                self.unsupported(f"local {name!r} is unbound")
            var = self.locals[name] = self.wrap(self.f_locals[name], LocalTracker(name))
        if var is NULL:
            raise FrameRaises("LOAD_FAST", self.where(), f"local {name!r} referenced before assignment")
        return var

    @handles("LOAD_FAST")
    def _load_fast(self, ins: Instruction) -> None:
        self.stack.append(self.local(ins.argval))

    @handles("STORE_FAST")
    def _store_fast(self, ins: Instruction) -> None:
        self.locals[ins.argval] = self.stack.pop()  # NULL: LOAD_FAST_AND_CLEAR found it unbound

    @handles("DELETE_FAST")
    def _delete_fast(self, ins: Instruction) -> None:
        self.local(ins.argval)
        self.locals[ins.argval] = NULL  # unbound from now on, even an argument

    @handles("LOAD_FAST_AND_CLEAR")
    def _load_fast_and_clear(self, ins: Instruction) -> None:
        name = ins.argval
        bound = self.locals.get(name) is not NULL and (name in self.locals or name in self.f_locals)
        self.stack.append(self.local(name) if bound else NULL)
        self.locals[name] = NULL

    # ------------------------------------------------------------ cells and closures
    @handles("MAKE_CELL")
    def _make_cell(self, ins: Instruction) -> None:
        name = ins.argval
        bound = self.locals.get(name) is not NULL and (name in self.locals or name in self.f_locals)
        self.cells[name] = CellVariable(self.local(name) if bound else None)
        self.locals[name] = NULL

    def free_cells(self) -> list[CellVariable]:
        """The cells of the frame's free variables: the translated frame's show in f_locals. A write into
        one is made after the graph, into the frame's own cell (a resume function's cells are the cells
        of the frame it continues, which its other closures share)."""
        names = self.code.co_freevars
        if self.f_closure is not None and len(self.f_closure) != len(names):
            self.unsupported("a closure that does not match the code's free variables")
        return [self._free_cell(name, cell) for name, cell in zip(names, self.f_closure or [None] * len(names))]

    def _free_cell(self, name: str, cell: Any) -> CellVariable:
        """The Variable of the translated frame's free variable `name`, whose cell is `cell` (None: unknown,
        with a C extension built before frames showed their closure: then writing it is not captured)."""
        def make() -> CellVariable:
            content = self.wrap(self.f_locals[name], CellTracker(name)) if name in self.f_locals else None
            where = None if cell is None else (ObjectVariable(cell, ClosureTracker(name)),)
            return CellVariable(content, real=True, where=where)
        if cell is None:
            self.translation.unknown_cells = True
            return make()
        return self.translation.cell(cell, make)

    @handles("COPY_FREE_VARS")
    def _copy_free_vars(self, ins: Instruction) -> None:
        self.cells.update(zip(self.code.co_freevars, self.free_cells()))

    @handles("LOAD_DEREF")
    def _load_deref(self, ins: Instruction) -> None:
        cell = self.cells.get(ins.argval)
        if cell is None or cell.content is None:
            self.unsupported(f"free variable {ins.argval!r} referenced before assignment")
        self.stack.append(cell.content)

    @handles("STORE_DEREF")
    def _store_deref(self, ins: Instruction) -> None:
        cell = self.cells[ins.argval]
        if cell.real:  # a cell of a real function: the write is replayed into it after the graph
            holder = None if cell.where is None else cell.where[0] if len(cell.where) == 1 else self.wrap(*cell.where)
            if holder is None or not self.reloadable(holder) or self.translation.unknown_cells:
                self.unsupported(f"assigning {ins.argval!r}, a variable of an enclosing function with no source "
                                 "to reach its cell from (or maybe the translated frame's own)", "SOT-S001")
            self.record_write()
            self.translation.effects.set_attr(holder, "cell_contents", self.stack[-1])
        self.touch(cell)
        cell.content = self.stack.pop()

    @handles("DELETE_DEREF")
    def _delete_deref(self, ins: Instruction) -> None:
        cell = self.cells[ins.argval]
        if cell.content is None:
            raise FrameRaises(ins.opname, self.where(), f"free variable {ins.argval!r} referenced before assignment")
        if cell.real:
            self.unsupported(f"del {ins.argval!r}, a variable of an enclosing function", "SOT-S001")
        self.touch(cell)
        cell.content = None

    @handles("LOAD_CLOSURE")
    def _load_closure(self, ins: Instruction) -> None:
        self.stack.append(self.cells[ins.argval])

    @handles("MAKE_FUNCTION")
    def _make_function(self, ins: Instruction) -> None:
        code = self.stack.pop()
        closure = self.stack.pop().items if ins.arg & 0x08 else ()
        if ins.arg & 0x04:
            self.stack.pop()  # annotations: not needed to run the function
        kwdefaults = self.stack.pop().items if ins.arg & 0x02 else {}
        defaults = tuple(self.elements(self.stack.pop())) if ins.arg & 0x01 else ()  # (a constant tuple: folded)
        self.stack.append(FunctionVariable(None, code=code.value, defaults=defaults, kwdefaults=kwdefaults,
                                           closure=tuple(closure), f_globals=self.f_globals,
                                           global_tracker=self.global_tracker))

    # ------------------------------------------------------------ globals and attributes
    @handles("LOAD_GLOBAL")
    def _load_global(self, ins: Instruction) -> None:
        name = ins.argval
        written = self.translation.effects.global_value(self.f_globals, name)
        if written is not None:
            var = written
        elif name in self.f_globals:
            tracker = self.global_tracker(name)
            if tracker is None:
                self.unsupported(f"global {name!r} of a function with no reloadable source")
            var = self.wrap(self.f_globals[name], tracker)
        elif name in self.f_builtins:
            var = self.wrap(self.f_builtins[name], BuiltinTracker(name))
            self._guard_unshadowed(name)
        else:
            self.unsupported(f"global {name!r} is not defined")
        if ins.push_null:
            self.push_call_slots(var)
        else:
            self.stack.append(var)

    def _guard_unshadowed(self, name: str) -> None:
        """A builtin was read because this frame's globals lack `name`: a global of that name defined
        later would shadow it, so its absence is guarded too."""
        where = self.global_tracker(name)
        if isinstance(where, GetItemTracker):  # a callee's `fn.__globals__[name]`
            globals_source = where.base.source
        elif type(where) is GlobalTracker:
            globals_source = F_GLOBALS
        else:  # a runtime function's globals (fixed) or none reloadable
            return
        if globals_source is not None:
            self.guard_lacks(globals_source, name)

    @handles("IMPORT_NAME")
    def _import_name(self, ins: Instruction) -> None:
        level, fromlist = (self.python_value(v) for v in self.pop(2))
        name = ins.argval
        if level != 0 or name not in sys.modules:
            self.unsupported(f"importing {name!r}, which is not imported yet (a side effect)", "SOT-B003")
        module = sys.modules[name] if fromlist else sys.modules[name.partition(".")[0]]
        source = f"__import__({name!r}, fromlist={fromlist!r})" if fromlist else f"__import__({name!r})"
        self.stack.append(self.wrap(module, ExpressionTracker(expression(source))))

    @handles("IMPORT_FROM")
    def _import_from(self, ins: Instruction) -> None:
        self.stack.append(self.load_attr(self.stack[-1], ins.argval))

    def reloadable(self, var: Variable) -> bool:
        """Whether generated code can load the very object `var` stands for (to write into it)."""
        if var.tracker.source is None:
            return False
        try:
            var.tracker.load()
        except NotImplementedError:
            return False
        return True

    def record_write(self) -> None:
        """A side effect was recorded: a break at an instruction being simulated would replay it twice."""
        for step in self.translation.open_steps:
            step[1] = True

    @handles("STORE_ATTR")
    def _store_attr(self, ins: Instruction) -> None:
        target, value = self.stack.pop(), self.stack.pop()
        name = ins.argval
        kind = type(getattr(target, "value", None))
        setter = getattr(kind, "__setattr__", object.__setattr__)
        if not isinstance(target, InstanceVariable) or not self.reloadable(target) or hasattr(
                getattr(kind, name, None), "__set__") or (setter is not object.__setattr__ and getattr(
                    setter, "__module__", "").split(".")[0] != "runtime"):
            self.unsupported(f"{target!r}.{name} = ...: a write the replay cannot make", "SOT-S001")
        self.record_write()
        self.translation.effects.set_attr(target, name, value)

    @handles("STORE_GLOBAL")
    def _store_global(self, ins: Instruction) -> None:
        if self.f_globals is not self.translation.f_globals:
            self.unsupported(f"assigning the global {ins.argval!r} of another module", "SOT-S001")
        self.record_write()
        self.translation.effects.set_global(self.f_globals, ins.argval, self.stack.pop())

    def write_into(self, container: Variable) -> None:
        """A mutation of `container`: one from outside the frame is written back after the graph."""
        if container.tracker.source is not None:
            if not self.reloadable(container) or isinstance(container, SetVariable) or (
                    isinstance(container, DictVariable) and container.kind is not dict):
                self.unsupported(f"mutating {container!r}", "SOT-S001")
            self.record_write()
            self.translation.effects.refill(container)
        self.touch(container)

    @handles("DELETE_SUBSCR")
    def _delete_subscr(self, ins: Instruction) -> None:
        index, base = self.stack.pop(), self.stack.pop()
        if not isinstance(base, (ListVariable, DictVariable)):
            self.unsupported(f"del {base!r}[...]: a write into an object from outside the frame", "SOT-S001")
        key = self.python_value(index)
        try:
            base.items[key]
        except (IndexError, KeyError, TypeError) as e:
            raise FrameRaises(ins.opname, self.where(), f"{type(e).__name__}: {e}") from None
        self.write_into(base)
        del base.items[key]

    @handles("STORE_SLICE")
    def _store_slice(self, ins: Instruction) -> None:
        start, end = (self.python_value(v) for v in self.pop(2))
        base, value = self.stack.pop(), self.stack.pop()
        if not isinstance(base, ListVariable):
            self.unsupported(f"{base!r}[{start}:{end}] = ...: a write into an object from outside the frame",
                             "SOT-S001")
        items = self.elements(value)  # (before the write: `xs[1:] = xs` assigns the items it had)
        self.write_into(base)
        base.items[start:end] = items

    @handles("DELETE_ATTR", "DELETE_GLOBAL")
    def _side_effect(self, ins: Instruction) -> None:
        self.unsupported(f"{ins.opname} {ins.argval or ''}: a write visible outside the frame", "SOT-S001")

    @handles("LOAD_ASSERTION_ERROR")
    def _load_assertion_error(self, ins: Instruction) -> None:
        self.stack.append(ObjectVariable(AssertionError))

    # ------------------------------------------------------------ operators
    @handles("BINARY_OP")
    def _binary_op(self, ins: Instruction) -> None:
        in_place = ins.argval.endswith("=") and ins.argval not in _COMPARE
        op = ins.argval[:-1] if in_place else ins.argval
        right = self.stack.pop()
        self.stack.append(self.binary(op, self.stack.pop(), right, in_place))

    def binary(self, op: str, left: Variable, right: Variable, in_place: bool = False) -> Variable:
        """`left op right` (`op=` when in_place): a recorded tensor operator, a folded constant, or a
        container built from Variables."""
        if op not in _BINARY:
            self.unsupported(f"operator {op!r}")
        fold, dunder, reflected = _BINARY[op]
        if isinstance(left, TupleVariable) and type(left) is type(right) and op == "+":
            if isinstance(left, ListVariable) and in_place:
                self.container_method("extend", left, right)  # list += list extends it in place
                return left
            return type(left)([*left.items, *right.items])
        if isinstance(left, SetVariable) and isinstance(right, SetVariable):
            return self._set_operator(fold, left, right, in_place)
        if in_place and not isinstance(left, (ConstantVariable, TensorVariable)) and not (
                isinstance(left, TupleVariable) and not isinstance(left, ListVariable)):
            self.unsupported(f"in-place {op}= on {left!r}", "SOT-S001")  # mutates the object
        if isinstance(left, TensorVariable):
            return self._tensor_in_place(left, dunder, right) if in_place else self._operator(dunder, left, right)
        if isinstance(right, TensorVariable) and isinstance(left, ConstantVariable):
            return self._operator(reflected, right, left)
        if isinstance(right, TensorVariable):
            self.unsupported(f"{left!r} {op} {right!r}")
        dynamic = isinstance(left, NumberVariable) or isinstance(right, NumberVariable)
        if dynamic and _is_number(left) and _is_number(right) and not _may_overflow(left, right) and (
                op in _NUMBER_ARITHMETIC or (op in _NUMBER_DIVISION and not isinstance(right, NumberVariable)
                                             and right.value != 0)):
            return self._computed_number([left, right], fold, "BINARY_OP", _BINARY_OPERATORS.index(op), op)
        result = fold(self.python_value(left), self.python_value(right))
        return self.from_result(result) if isinstance(result, (tuple, list)) else ConstantVariable(result)

    def _set_operator(self, fold: Callable, left: SetVariable, right: SetVariable, in_place: bool) -> Variable:
        """`a | b`, `a - b`, ... on sets (`a |= b` changes a, as eager's does), on their real values."""
        try:
            if not in_place:
                return SetVariable(fold(left.items, right.items))
            self.write_into(left)
            result = _IN_PLACE[fold](left.items, right.items)
        except TypeError as e:
            raise FrameRaises("BINARY_OP", self.where(), f"TypeError: {e}") from None
        return left if result is left.items else SetVariable(result)  # (a frozenset's |= makes a new one)

    def _operator(self, dunder: str, tensor: TensorVariable, other: Variable | None = None) -> Variable:
        """A Tensor operator: recorded as call_method; its result is a new tensor nothing aliases."""
        if other is None:
            args = []
        elif isinstance(other, TensorVariable):
            args = [other.symbol]
        elif isinstance(other, NumberVariable):  # its value is fed at run time, as the 0-D tensor eager makes
            args = [self.number_input(other, tensor.meta.dtype)]
        else:
            args = [self.as_arg(other)]
        with self.recording():
            result = self.from_result(self.builder.call_method(dunder, tensor.symbol, args))
        if isinstance(result, TensorVariable):
            result.fresh = True
        return result

    def _computed_number(self, operands: list[Variable], fold: Callable, opname: str, arg: int | None = None,
                         argval: Any = None) -> NumberVariable:
        """An operator on Python numbers, one of them dynamic: a dynamic number the generated code computes
        again on every call with the same Python operator (`ComputedTracker`), eager's value by construction."""
        number = fold(*(v.number if isinstance(v, NumberVariable) else v.value for v in operands))
        trackers = [v.tracker if isinstance(v, NumberVariable) else ConstTracker(v.value) for v in operands]
        sources = tuple(dict.fromkeys(s for v in operands if isinstance(v, NumberVariable) for s in v.sources))
        return NumberVariable(number, ComputedTracker(trackers, opname, arg, argval), sources)

    def _tensor_in_place(self, tensor: TensorVariable, dunder: str, other: Variable) -> TensorVariable:
        """`t op= x` on a tensor: see `update_in_place`."""
        return self.update_in_place(tensor, lambda: self._operator(dunder, tensor, other))

    def update_in_place(self, tensor: TensorVariable, compute: Callable[[], Variable]) -> TensorVariable:
        """An in-place update (`t += x`, `t.add_(x)`) of a tensor made in this frame that nothing else
        can alias: the out-of-place result `compute()`, cast to the tensor's dtype, becomes the value
        every reference to the Variable sees, as eager's in-place update does. An input no op of the
        frame has read yet (so no view of it in the graph can miss the update) that takes no part in
        autograd is updated the same way, and the final value is written into the caller's tensor
        after the graph ran (a replayed side effect, into its own buffer: views outside see it)."""
        writes_back = self.writes_back(tensor)
        if not writes_back and (tensor.tracker.source is not None or not tensor.fresh):
            raise InPlaceUpdate(self.current.opname, self.where(),
                                f"in-place update of {tensor!r}, which may be aliased outside the frame or by a view")
        result = compute()
        tensor.passed = not writes_back  # the update itself reads the input: not a view of it
        if writes_back and not result.meta.stop_gradient:
            raise InPlaceUpdate(self.current.opname, self.where(),
                                f"in-place update of the input {tensor!r} with a value that requires grad")
        meta = tensor.meta
        if not isinstance(result, TensorVariable) or result.meta.shape != meta.shape:
            self.unsupported(f"in-place update of {tensor!r} changes its shape")  # eager raises: let it
        if result.meta.dtype != meta.dtype:
            result = self.from_result(self.builder.call_method("astype", result.symbol, [str(meta.dtype)]))
        self.touch(tensor)
        if writes_back:
            self.translation.effects.write_back(tensor, TensorVariable(result.symbol))
            self.record_write()
        tensor.symbol = result.symbol
        tensor.fresh = not writes_back  # a computed tensor is still referenced only through this Variable
        return tensor

    def writes_back(self, tensor: TensorVariable) -> bool:
        """Whether an in-place update of `tensor` can be captured and written back into the caller's
        tensor: an input (reloaded by the generated code) no op has read yet, that requires no grad."""
        return (not tensor.bound and tensor.tracker.reloadable and not tensor.passed and tensor.meta.stop_gradient
                and any(tensor is v for v in self.inputs) and not any(
                    isinstance(v, TensorVariable) and v is not tensor and isinstance(v.value, Tensor) and
                    shares_memory(v.value, tensor.value) for v in self.tracked))  # another view would miss it

    @handles("UNARY_NEGATIVE", "UNARY_INVERT")
    def _unary(self, ins: Instruction) -> None:
        self.stack.append(self._unary_of(ins.opname, self.stack.pop()))

    def _unary_of(self, kind: str, value: Variable) -> Variable:
        fold, dunder = _UNARY[kind]
        if isinstance(value, NumberVariable) and kind == "UNARY_NEGATIVE":
            return self._computed_number([value], fold, kind)
        if isinstance(value, ConstantVariable):
            return ConstantVariable(fold(value.value))
        if isinstance(value, TensorVariable):
            return self._operator(dunder, value)
        self.unsupported(f"{kind} of {value!r}")

    @handles("BUILD_TUPLE", "BUILD_LIST")
    def _build_sequence(self, ins: Instruction) -> None:
        self.stack.append((ListVariable if ins.opname == "BUILD_LIST" else TupleVariable)(self.pop(ins.arg)))

    @handles("BUILD_SET")
    def _build_set(self, ins: Instruction) -> None:
        self.stack.append(SetVariable(set_of(self, self.pop(ins.arg))))

    @handles("SET_ADD", "SET_UPDATE")
    def _set_add_update(self, ins: Instruction) -> None:
        value = self.stack.pop()
        self.container_method("add" if ins.opname == "SET_ADD" else "update", self.stack[-ins.arg], value)

    def returned(self, value: Variable) -> Variable:
        """What a call of this frame gives its caller, from the Variable RETURN_VALUE pops."""
        return value

    @handles("RETURN_VALUE")
    def _return_value(self, ins: Instruction) -> Variable:
        return self.returned(self.stack.pop())

    # ------------------------------------------------------------ strings
    @handles("CONVERT_VALUE")
    def _convert_value(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(_CONVERSIONS[ins.argval](self.python_value(self.stack.pop()))))

    @handles("FORMAT_SIMPLE")
    def _format_simple(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(format(self.python_value(self.stack.pop()))))

    @handles("FORMAT_WITH_SPEC")
    def _format_with_spec(self, ins: Instruction) -> None:
        spec = self.python_value(self.stack.pop())
        value = self.python_value(self.stack.pop())
        if ins.argval:
            value = _CONVERSIONS[ins.argval](value)
        self.stack.append(ConstantVariable(format(value, spec)))

    @handles("BUILD_STRING")
    def _build_string(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable("".join(self.python_value(v) for v in self.pop(ins.arg))))

    # ------------------------------------------------------------ control flow on Python values
    def truth(self, var: Variable) -> bool:
        """The truth of a value known at translation time; a tensor's truth needs a graph break."""
        if isinstance(var, ConstantVariable):
            return bool(var.value)
        if isinstance(var, (TupleVariable, DictVariable, SetVariable)):
            return bool(var.items)
        if isinstance(var, InstanceVariable):
            kind = type(var.value)
            if getattr(kind, "__bool__", None) is None and getattr(kind, "__len__", None) is None:
                return True  # an object without __bool__/__len__ is true; its type guard pins that
            self.unsupported(f"the truth of {var!r}", "SOT-B003")
        if isinstance(var, (ObjectVariable, FunctionVariable, BoundMethodVariable)):
            return True if not isinstance(var, ObjectVariable) else bool(var.value)
        self.unsupported(f"a condition on {var!r}", "SOT-B001" if isinstance(var, TensorVariable) else None)

    @handles(*_JUMPS)
    def _pop_jump_if(self, ins: Instruction) -> None:
        var = self.stack.pop()
        if ins.opname.endswith("NONE"):
            value = var.value if isinstance(var, ConstantVariable) else var  # only a constant can be None
        else:
            value = self.truth(var)
        if _JUMPS[ins.opname](value):
            self.jump_to = ins.target

    @handles("JUMP")
    def _jump(self, ins: Instruction) -> None:
        self.jump_to = ins.target

    @handles("UNARY_NOT")
    def _unary_not(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(not self.truth(self.stack.pop())))

    @handles("TO_BOOL")
    def _to_bool(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(self.truth(self.stack.pop())))

    @handles("COMPARE_OP")
    def _compare_op(self, ins: Instruction) -> None:
        fold, dunder = _COMPARE[ins.argval]
        right = self.stack.pop()
        left = self.stack.pop()
        if isinstance(left, TensorVariable):
            self.stack.append(self._operator(dunder, left, right))
        elif isinstance(right, TensorVariable) and _is_number(left):  # a number's comparison gives way to the tensor's
            self.stack.append(self._operator(_COMPARE[_SWAPPED[ins.argval]][1], right, left))
        elif isinstance(right, TensorVariable):
            self.unsupported(f"{left!r} {ins.argval} {right!r}")
        else:
            self.stack.append(ConstantVariable(fold(self.python_value(left), self.python_value(right))))

    @handles("IS_OP", "CONTAINS_OP")
    def _identity_or_membership(self, ins: Instruction) -> None:
        right = self.stack.pop()
        left = self.stack.pop()
        if ins.opname == "IS_OP":
            if isinstance(left, ConstantVariable) and isinstance(right, ConstantVariable):
                result = left.value is right.value
            elif isinstance(left, ConstantVariable) or isinstance(right, ConstantVariable):
                result = False  # a constant is never the same object as a tensor, container or module
            elif left is right:
                result = True
            elif (isinstance(left, ObjectVariable) and isinstance(right, ObjectVariable)
                  and not isinstance(left, InstanceVariable) and not isinstance(right, InstanceVariable)):
                result = left.value is right.value  # both pinned by identity guards
            else:
                self.unsupported(f"{left!r} is {right!r}: identity not pinned by a guard")
        else:
            if isinstance(right, InstanceVariable):
                result = self.truth(self.protocol(right, "__contains__", left))
            elif isinstance(right, DictVariable) and not isinstance(left, TensorVariable):
                result = self.python_value(left) in right.items
            elif isinstance(left, ConstantVariable):
                result = left.value in self.python_value(right)
            else:
                self.unsupported(f"{left!r} in {right!r}")
        self.stack.append(ConstantVariable(result != bool(ins.arg)))

    @handles("GET_ITER")
    def _get_iter(self, ins: Instruction) -> None:
        self.stack.append(self.iterator_of(self.stack.pop()))

    def iterator_of(self, var: Variable) -> Variable:
        """iter(var): an iterator is its own (consuming one consumes the other), anything else an
        iterator over its items."""
        return var if isinstance(var, ITERATOR_TYPES) else IteratorVariable(self.elements(var))

    def next_of(self, iterator: Variable) -> Variable | None:
        """The next item of an iterator Variable, None when exhausted: one step of the real iterator."""
        self.touch(iterator)
        return iterator.next(self)

    @handles("FOR_ITER")
    def _for_iter(self, ins: Instruction) -> None:
        if not isinstance(self.stack[-1], ITERATOR_TYPES):
            self.unsupported(f"iterating {self.stack[-1]!r}, known only at run time", "SOT-B002")
        iterator = self.stack[-1]
        if self.parent is None and past_unroll_limit(iterator):
            self.unsupported(f"a loop of {len(iterator.items)} iterations is unrolled only {config.max_unroll()} times "
                             "(SOT_MAX_UNROLL): it runs as a loop", "SOT-C003")
        item = self.next_of(iterator)
        if item is None:
            self.stack.pop()
            self.jump_to = ins.target
        else:
            self.stack.append(item)

    # ------------------------------------------------------------ containers
    def elements(self, var: Variable) -> list[Variable]:
        """The items iterating `var` yields, known at translation time."""
        if isinstance(var, IteratorVariable):
            self.touch(var)
            items = var.items[var.position:]
            var.position = len(var.items)
            return list(items)
        if isinstance(var, LazyIteratorVariable):
            return list(iter(lambda: self.next_of(var), None))
        if isinstance(var, DictViewVariable):
            return var.current()
        if isinstance(var, TupleVariable):
            return list(var.items)
        if isinstance(var, (DictVariable, SetVariable)):
            return [ConstantVariable(k) for k in var.items]
        if isinstance(var, ConstantVariable) and isinstance(var.value, (tuple, range, str, frozenset)):
            return [ConstantVariable(v) for v in var.value]
        if isinstance(var, InstanceVariable):  # a LayerList, a user container: its __iter__, inlined
            return self.elements(self.protocol(var, "__iter__"))
        self.unsupported(f"iterating {var!r}", "SOT-B002" if isinstance(var, TensorVariable) else None)

    def protocol(self, obj: InstanceVariable, dunder: str, *args: Variable) -> Variable:
        """`obj.<dunder>(*args)` resolved on obj's type and inlined (iteration, len, indexing, `in`)."""
        method = self.load_attr(obj, dunder)
        if not isinstance(method, (BoundMethodVariable, FunctionVariable)):
            self.unsupported(f"{type(obj.value).__name__}.{dunder} is not Python code")
        return self.call(method, list(args), {})

    def python_value(self, var: Variable) -> Any:
        """A value made only of constants, as a Python object (to fold an operation on it)."""
        if isinstance(var, ConstantVariable):
            return var.value
        if isinstance(var, TupleVariable):
            items = [self.python_value(v) for v in var.items]
            return items if isinstance(var, ListVariable) else tuple(items)
        if isinstance(var, DictVariable):
            return {k: self.python_value(v) for k, v in var.items.items()}
        if isinstance(var, SetVariable):  # the very set: a copy could iterate in another order
            return var.items
        if isinstance(var, ITERATOR_TYPES):
            return iter([self.python_value(v) for v in self.elements(var)])
        if isinstance(var, DictViewVariable):  # (for `in` and folding: its items now, as a list)
            return [self.python_value(v) for v in var.current()]
        if isinstance(var, FunctionVariable) and var.value is None:
            self.unsupported(f"the value of {var!r}, a function made by the frame (it exists only at run time)")
        if isinstance(var, ObjectVariable) and not isinstance(var, InstanceVariable):
            return var.value
        self.unsupported(f"a Python value of {var!r}", "SOT-B002" if isinstance(var, TensorVariable) else None)

    @handles("BUILD_MAP", "BUILD_CONST_KEY_MAP")
    def _build_map(self, ins: Instruction) -> None:
        if ins.opname == "BUILD_CONST_KEY_MAP":
            keys = self.python_value(self.stack.pop())
            values = self.pop(ins.arg)
        else:
            flat = self.pop(2 * ins.arg)
            keys = [self.python_value(k) for k in flat[::2]]
            values = flat[1::2]
        self.stack.append(DictVariable(dict(zip(keys, values))))

    @handles("MAP_ADD")
    def _map_add(self, ins: Instruction) -> None:
        key, value = self.pop(2)
        target = self.stack[-ins.arg]
        self.write_into(target)  # a dict passed to a resume function is the caller's: written back
        target.items[self.python_value(key)] = value

    @handles("DICT_UPDATE", "DICT_MERGE")
    def _dict_update(self, ins: Instruction) -> None:
        other = self.stack.pop()
        target = self.stack[-ins.arg]
        if not isinstance(other, DictVariable):
            self.unsupported(f"**{other!r}")
        if ins.opname == "DICT_MERGE" and set(other.items) & set(target.items):
            raise FrameRaises(ins.opname, self.where(), "a keyword argument given twice")
        self.write_into(target)
        target.items.update(other.items)

    @handles("BUILD_SLICE")
    def _build_slice(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(slice(*(self.python_value(v) for v in self.pop(ins.arg)))))

    @handles("BINARY_SUBSCR", "BINARY_SLICE")
    def _subscript(self, ins: Instruction) -> None:
        if ins.opname == "BINARY_SLICE":
            start, end = self.pop(2)
            index: Any = slice(self.python_value(start), self.python_value(end))
        else:
            index = self.stack.pop()
            index = index if isinstance(index, TensorVariable) else self.python_value(index)
        base = self.stack.pop()
        if isinstance(base, TensorVariable):
            self._check_tensor_index(index)
        if isinstance(base, InstanceVariable):
            self.stack.append(self.protocol(base, "__getitem__", index if isinstance(index, Variable) else
                                            ConstantVariable(index)))
        elif isinstance(base, TensorVariable):
            self.stack.append(self._record_method("__getitem__", base, [
                index if isinstance(index, TensorVariable) else ConstantVariable(index)], {}))
        elif isinstance(base, TupleVariable) and isinstance(index, slice):
            self.stack.append(type(base)(base.items[index]))
        elif isinstance(base, (TupleVariable, DictVariable)) and not isinstance(index, Variable):
            try:
                self.stack.append(base.items[index])
            except (IndexError, KeyError) as e:
                raise FrameRaises(ins.opname, self.where(), f"{type(e).__name__}: {e}") from None
        elif isinstance(base, ConstantVariable) and not isinstance(index, Variable):
            self.stack.append(ConstantVariable(base.value[index]))
        else:
            self.unsupported(f"{base!r}[{index!r}]")

    def _check_tensor_index(self, index: Any) -> None:
        """Indexing a tensor by a tensor, a list or an array (advanced indexing) is not recorded: a bool
        mask gives a shape known only at run time, and the static replay has no gather by an index tensor."""
        items = index if type(index) is tuple else (index,)
        for item in items:
            if isinstance(item, TensorVariable) and item.meta.dtype == "bool":
                self.unsupported(f"indexing by the bool mask {item!r}", "SOT-B005")
            if isinstance(item, (TensorVariable, list, np.ndarray)):
                self.unsupported(f"advanced indexing by {type(item).__name__}")

    @handles("STORE_SUBSCR")
    def _store_subscr(self, ins: Instruction) -> None:
        index, base, value = self.stack.pop(), self.stack.pop(), self.stack.pop()
        key = self.python_value(index)
        if isinstance(base, TensorVariable):  # `t[k] = v` in place: recorded as `t = static.setitem(t, k, v)`
            setitem = ObjectVariable(static.setitem)
            self.update_in_place(base, lambda: self.call(setitem, [base, ConstantVariable(key), value], {}))
            return
        if not isinstance(base, (ListVariable, DictVariable)):
            self.unsupported(f"{base!r}[{key!r}] = ...: a write into an object from outside the frame", "SOT-S001")
        if isinstance(base, ListVariable):
            if not isinstance(key, int) or not -len(base.items) <= key < len(base.items):
                self.unsupported(f"list assignment at {key!r}")
        self.write_into(base)
        base.items[key] = value

    @handles("UNPACK_SEQUENCE")
    def _unpack_sequence(self, ins: Instruction) -> None:
        items = self.elements(self.stack.pop())
        if len(items) != ins.arg:
            raise FrameRaises(ins.opname, self.where(), f"unpacking {len(items)} values into {ins.arg}")
        self.stack.extend(reversed(items))

    @handles("UNPACK_EX")
    def _unpack_ex(self, ins: Instruction) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        items = self.elements(self.stack.pop())
        if len(items) < before + after:
            raise FrameRaises(ins.opname, self.where(), f"not enough values to unpack ({len(items)})")
        middle = ListVariable(items[before:len(items) - after])
        self.stack.extend(reversed([*items[:before], middle, *items[len(items) - after:]]))

    def container_method(self, name: str, container: Variable, *args: Variable, **kwargs: Variable) -> Variable:
        """`container.name(*args, **kwargs)` on a list, tuple, dict or set Variable (see `containers`)."""
        return call_container_method(self, name, container, list(args), kwargs)

    @handles("LIST_APPEND", "LIST_EXTEND")
    def _list_append_extend(self, ins: Instruction) -> None:
        value = self.stack.pop()
        self.container_method("append" if ins.opname == "LIST_APPEND" else "extend", self.stack[-ins.arg], value)

    @handles("CALL_INTRINSIC_1")
    def _call_intrinsic_1(self, ins: Instruction) -> None:
        if ins.argval == "INTRINSIC_LIST_TO_TUPLE":
            self.stack.append(TupleVariable(self.elements(self.stack.pop())))
        elif ins.argval in _UNARY:
            self.stack.append(self._unary_of(ins.argval, self.stack.pop()))
        else:
            self.unsupported(f"intrinsic {ins.argval}")

    @handles("SWAP", "COPY")
    def _swap_copy(self, ins: Instruction) -> None:
        if ins.opname == "COPY":
            self.stack.append(self.stack[-ins.arg])
        else:
            self.stack[-1], self.stack[-ins.arg] = self.stack[-ins.arg], self.stack[-1]

    # ------------------------------------------------------------ generators (run as they are consumed)
    @handles("RETURN_GENERATOR")
    def _return_generator(self, ins: Instruction) -> Variable:
        if self.parent is None:
            self.unsupported("a generator frame")
        self.stack.append(ConstantVariable(None))  # what the POP_TOP after it discards
        return SUSPENDED  # the call gives the generator (see `inline`); its body runs when consumed

    @handles("YIELD_VALUE")
    def _yield_value(self, ins: Instruction) -> Variable:
        if self.parent is None:
            self.unsupported("yield outside an inlined generator")
        handler = self.normalised.handler(ins)
        if handler is not None and handler.target.argval != "INTRINSIC_STOPITERATION_ERROR":  # (3.12+: every body)
            self.unsupported("a yield inside a try or with block: a generator left there runs its handler when "
                             "closed, which the simulation cannot")
        self.yielded = self.stack.pop()
        self.stack.append(ConstantVariable(None))  # the value sent back in on resumption: iteration sends None
        return SUSPENDED


class OpcodeInlineExecutor(OpcodeExecutor):
    """A call of a Python function simulated into its caller's SIR: its locals are the bound
    argument Variables, its globals those of the function, its free variables `closure`'s cells.
    A generator function's call stops at its start and gives a GeneratorVariable, which runs it on
    to each `yield` as the generator is consumed."""

    def __init__(self, parent: OpcodeExecutor, fn: FunctionVariable, bound: dict[str, Variable],
                 closure: tuple, direct: bool = False):
        self._start(fn.code, parent.translation, fn.f_globals, parent.f_builtins)
        self.parent = parent
        self.depth = parent.depth + 1
        self.function = fn
        self.locals = dict(bound)
        self.closure = closure
        self.direct = direct
        # a break inside it resumes inside it; where it cannot, its caller breaks at the call
        self.may_break = parent.may_break and self.translation.virtual_frames and self.resume_blocker() is None

    def resume_blocker(self) -> str | None:
        """Why a resume function could not continue this inlined frame (None: it can)."""
        if self.code.co_flags & 0x20:  # CO_GENERATOR
            return "it is a generator"
        if self.code.co_cellvars or self.code.co_freevars:
            return "it has closure cells, which a resume function cannot share"
        return None

    def global_tracker(self, name: str) -> Tracker | None:
        """Where the function's global `name` comes from (None: not reloadable)."""
        factory = self.function.global_tracker
        return None if factory is None else factory(name)

    def free_cells(self) -> list[CellVariable]:
        """The function's closure cells."""
        if len(self.closure) != len(self.code.co_freevars):
            self.unsupported("a closure that does not match the code's free variables")
        return list(self.closure)

    def returned(self, value: Variable) -> Variable:
        """The returned Variable; an inlined generator's return ends it (what it returns is StopIteration's
        value, which iteration drops)."""
        return SUSPENDED if self.code.co_flags & inspect.CO_GENERATOR else value
