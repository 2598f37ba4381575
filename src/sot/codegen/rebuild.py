"""Rebuilding the values of the frames at a graph break, in the break's generated code.

A `Rebuilder` holds the instructions being emitted and one temporary per value it rebuilt
(`materialise`): a tensor from the compiled prefix's outputs (`__sot_out[i]`), from the frame's
inputs (read once, first: `read_inputs`) or made again as the view eager code has; a dynamic number
or a reloadable object from its tracker; constants; containers item by item; iterators as
`iter(tuple)`, zip and enumerate objects over their sources as they are; bound methods as
`MethodType(fn, receiver)`; functions the frame made, over its own
cells; the `__exit__` of a grad-mode context, entered for real. Each Variable is built once, so
aliases stay aliases. A value that cannot be rebuilt makes the break impossible: `Unsupported`.
`break_code` emits the rest of the break's code on top of it.
"""
from __future__ import annotations

import types
from collections import OrderedDict, defaultdict
from typing import Any, Callable

from runtime.autograd import enable_grad, no_grad
from sot.ir import Symbol
from sot.opcode_executor.blocklist import breaks_on, is_skipped
from sot.opcode_executor.breaks import FrameState, GraphBreak
from sot.opcode_executor.calls import is_optimizer_code, is_runtime_api
from sot.opcode_executor.contexts import GradModeExitVariable
from sot.opcode_executor.dispatch import Unsupported
from sot.opcode_executor.live import GENERATED, frame_locals
from sot.opcode_executor.markers import is_not_to_static, is_sot_own, takes_locks
from sot.opcode_executor.variables import (BoundMethodVariable, CellVariable, ConstantVariable,
                                           ContainerMethodVariable, DictVariable, EnumerateVariable, FunctionVariable,
                                           InstanceVariable, IteratorVariable, ListVariable, NamedTupleVariable,
                                           NewObjectVariable, NumberVariable, ObjectVariable, SetVariable,
                                           TensorMethodVariable, TensorVariable, TupleVariable, Variable, ZipVariable)
from sot.opcode_executor.wording import shown
from sot.pyversion import Instruction, with_null

from .returns import MadeObjects

__all__ = ["OUT", "Rebuilder"]

OUT = f"{GENERATED}out"  # the local holding the compiled prefix's outputs


class Rebuilder:
    """Emits instructions that rebuild the values of the frames at a break, with temporaries for them."""

    def __init__(self, ex: Any, brk: GraphBreak, outputs: list[Symbol], translated: Callable,
                 view_of: Callable[[Symbol], tuple | None], made: MadeObjects | None = None):
        self.ex, self.brk = ex, brk
        self.out_index = {sym: i for i, sym in enumerate(outputs)}
        self.inputs = {id(v): v for v in ex.inputs}
        self.input_temps: dict[int, str] = {}  # id of an input -> the temporary holding it (see read_inputs)
        self.translated = translated
        self.view_of = view_of  # see break_code
        self.made = made.objects if made is not None else []  # objects the runner made, last in its outputs
        self.body: list[Instruction] = []
        self.temps: dict[tuple, str] = {}
        self.building: set[tuple] = set()  # the values being rebuilt now (a container rebuilding its items)
        self.names: list[str] = []
        self.root_stores: list[tuple[str, str]] = []  # (local, temporary) set before the breaking instruction
        self.contexts: dict[str, type] = {}  # temporary holding the `__exit__` of a grad-mode context entered
        #                                      for real around the breaking instruction -> the context's type

    def fail(self, detail: str) -> None:
        raise Unsupported(self.brk.instruction.opname, self.brk.cause.where,
                          f"sot cannot break the graph there: {detail}")

    def emit(self, opname: str, **fields: Any) -> Instruction:
        ins = Instruction(opname, **fields)
        self.body.append(ins)
        return ins

    def temp(self) -> str:
        name = f"{GENERATED}t{len(self.names)}"
        self.names.append(name)
        return name

    def call(self, n: int) -> None:
        self.emit("CALL", arg=n, argval=n)

    def callable_const(self, fn: Any) -> None:
        """Push `fn` with its NULL slot, ready for CALL."""
        self.body += with_null([Instruction("LOAD_CONST", argval=fn)])

    def read_inputs(self) -> None:
        """Hold each tensor input in a temporary, read before the replayed writes (`d.pop(k)`) can
        change where it is read from."""
        for var in self.ex.inputs:
            self.body += var.tracker.load()
            self.input_temps[id(var)] = self.temp()
            self.emit("STORE_FAST", argval=self.input_temps[id(var)])

    def materialise(self, var: Variable, translate_callee: bool = False) -> str:
        """A temporary holding the value `var` stands for (each Variable built once: aliases stay aliases)."""
        key = (id(var), translate_callee)
        if key not in self.temps:
            if key in self.building:
                self.fail(f"{shown(var)} contains itself")
            self.building.add(key)
            kind = None
            if translate_callee:
                self.push_translated(var)
            elif isinstance(var, GradModeExitVariable):
                kind = self.enter(var)
            else:
                self.push(var)
            self.temps[key] = self.temp()
            self.emit("STORE_FAST", argval=self.temps[key])
            if kind is not None:
                self.contexts[self.temps[key]] = kind
            self.building.discard(key)
        return self.temps[key]

    def load(self, var: Variable) -> bool:
        """Push `var` from its tracker when it can be reloaded; False if it cannot."""
        try:
            self.body += var.tracker.load()
        except NotImplementedError:
            return False
        return True

    def push_output(self, symbol: Symbol) -> None:
        """Push the compiled prefix's output `symbol`."""
        self.emit("LOAD_FAST", argval=OUT)
        self.emit("LOAD_CONST", argval=self.out_index[symbol])
        self.emit("BINARY_SUBSCR")

    def push(self, var: Variable) -> None:
        if isinstance(var, TensorVariable):
            if var.bound:
                self.emit("LOAD_CONST", argval=var.value)
            elif id(var) in self.inputs:
                self.emit("LOAD_FAST", argval=self.input_temps[id(var)])
            elif (view := self.view_of(var.symbol)) is not None:  # made again from the real input: eager's view
                make, source = view
                self.callable_const(make)
                if isinstance(source, Variable):
                    self.push(source)
                elif isinstance(source, Symbol):  # a computed tensor the frame holds too
                    self.push_output(source)
                else:
                    self.emit("LOAD_CONST", argval=source)
                self.call(1)
            else:
                self.push_output(var.symbol)
        elif isinstance(var, NumberVariable):  # a dynamic number: this call's value, from the frame
            self.body += var.tracker.load()
        elif isinstance(var, ConstantVariable):
            self.emit("LOAD_CONST", argval=var.value)
        elif isinstance(var, (TupleVariable, DictVariable)):
            if var.tracker.source is not None and getattr(var.tracker, "reloadable", False) and self.load(var):
                return  # the very container the frame was given
            if isinstance(var, DictVariable):
                if var.kind not in (dict, OrderedDict, defaultdict):
                    self.fail(f"rebuilding a {var.kind.__name__}")
                factory = self.materialise(var.factory) if var.kind is defaultdict else None
                temps = [(k, self.materialise(v)) for k, v in var.items.items()]
                if var.kind is not dict:
                    self.callable_const(var.kind)
                if factory is not None:
                    self.emit("LOAD_FAST", argval=factory)
                for key, temp in temps:
                    self.emit("LOAD_CONST", argval=key)
                    self.emit("LOAD_FAST", argval=temp)
                self.emit("BUILD_MAP", arg=len(temps), argval=len(temps))
                if var.kind is not dict:
                    self.call(1 if factory is None else 2)
            else:
                temps = [self.materialise(v) for v in var.items]
                if isinstance(var, NamedTupleVariable):
                    self.callable_const(var.kind._make)
                for temp in temps:
                    self.emit("LOAD_FAST", argval=temp)
                kind = "BUILD_LIST" if isinstance(var, ListVariable) else "BUILD_TUPLE"
                self.emit(kind, arg=len(temps), argval=len(temps))
                if isinstance(var, NamedTupleVariable):
                    self.call(1)
        elif isinstance(var, SetVariable):
            if var.tracker.source is not None and self.load(var):
                return  # the very set the frame was given (never changed by the simulation)
            if not var.copied_in_order():
                self.fail(f"rebuilding {shown(var)} in its iteration order")
            self.callable_const(var.kind.copy)  # a copy of the simulated set: its iteration order
            self.emit("LOAD_CONST", argval=var.items)
            self.call(1)
        elif isinstance(var, IteratorVariable):
            temps = [self.materialise(v) for v in var.items[var.position:]]
            self.callable_const(iter)
            for temp in temps:
                self.emit("LOAD_FAST", argval=temp)
            self.emit("BUILD_TUPLE", arg=len(temps), argval=len(temps))
            self.call(1)
        elif isinstance(var, ZipVariable):  # zip of the sources as they are now (none once it is exhausted)
            temps = [] if var.done else [self.materialise(source) for source in var.sources]
            self.callable_const(_strict_zip if var.strict else zip)
            for temp in temps:
                self.emit("LOAD_FAST", argval=temp)
            self.call(len(temps))
        elif isinstance(var, EnumerateVariable):  # enumerate of its source as it is now, counting on
            temp = self.materialise(var.source)
            self.callable_const(enumerate)
            self.emit("LOAD_FAST", argval=temp)
            self.emit("LOAD_CONST", argval=var.count)
            self.call(2)
        elif isinstance(var, CellVariable):  # one of the translated frame's cells: the real cell
            name = next((n for n, c in self.ex.cells.items() if c is var), None)
            if name is None:
                self.fail(f"a closure cell of an inlined call ({shown(var)})")
            self.emit("LOAD_CLOSURE", argval=name)
        elif isinstance(var, FunctionVariable) and var.value is None:
            self.make_function(var)
        elif isinstance(var, ContainerMethodVariable):  # the unbound method LOAD_ATTR pushed below its container
            self.emit("LOAD_CONST", argval=getattr(var.kind, var.name))
        elif isinstance(var, BoundMethodVariable) and isinstance(var.function, TensorMethodVariable):
            self.emit("LOAD_FAST", argval=self.materialise(var.receiver))
            self.emit("LOAD_ATTR", argval=var.function.name)
        elif isinstance(var, BoundMethodVariable) and isinstance(var.function, ObjectVariable) and \
                var.function.value is not None:  # a Python function, or a C type's method descriptor
            self.bind(var.function.value, var.receiver)
        elif isinstance(var, NewObjectVariable):  # made by the runner: the last of its outputs holds them
            index = next((k for k, known in enumerate(self.made) if known is var), None)
            if index is None:
                self.fail(f"{shown(var)} was not made after the graph")
            self.emit("LOAD_FAST", argval=OUT)
            self.emit("LOAD_CONST", argval=-1)
            self.emit("BINARY_SUBSCR")
            self.emit("LOAD_CONST", argval=index)
            self.emit("BINARY_SUBSCR")
        elif isinstance(var, InstanceVariable):
            if var.tracker.source is None or not self.load(var):
                self.fail(f"{shown(var)} has no source to reload it from")
        elif isinstance(var, ObjectVariable) and (not isinstance(var, FunctionVariable) or var.value is not None):
            self.emit("LOAD_CONST", argval=var.value)  # pinned by identity (or made by the translation)
        else:
            self.fail(f"rebuilding {shown(var)}")

    def enter(self, exit_: GradModeExitVariable) -> type:
        """Push the `__exit__` of a fresh grad-mode context of `exit_`'s mode, entered for real: the
        breaking instruction runs in that mode. The stack's contexts are entered from the bottom up,
        as the frame entered them, so each one's exit restores the mode its block was entered in (the
        enclosing block's, or the caller's); the context's type."""
        kind = enable_grad if exit_.context.mode else no_grad
        self.callable_const(_entered)
        self.emit("LOAD_CONST", argval=kind)
        self.call(1)
        return kind

    def bind(self, function: Any, receiver: Variable) -> None:
        """Push `types.MethodType(function, receiver)`."""
        temp = self.materialise(receiver)
        self.callable_const(types.MethodType)
        self.emit("LOAD_CONST", argval=function)
        self.emit("LOAD_FAST", argval=temp)
        self.call(2)

    def push_translated(self, var: Variable) -> None:
        """The callee of the breaking CALL, translated as a frame of its own when it is Python code."""
        if isinstance(var, FunctionVariable) and var.value is not None and _translatable(var.value):
            self.emit("LOAD_CONST", argval=self.translated(var.value))
        elif isinstance(var, BoundMethodVariable) and isinstance(var.function, FunctionVariable) and \
                var.function.value is not None and _translatable(var.function.value):
            self.bind(self.translated(var.function.value), var.receiver)
        elif isinstance(var, InstanceVariable) and isinstance(getattr(type(var.value), "__call__", None),
                                                              types.FunctionType):
            self.bind(self.translated(type(var.value).__call__), var)
        else:
            self.push(var)

    def make_function(self, fn: FunctionVariable) -> None:
        """Push a new function of the code, defaults and closure a MAKE_FUNCTION of the simulation made;
        its closure holds the translated frame's own cells (so writes through them are shared)."""
        defaults = [self.materialise(v) for v in fn.defaults]
        kwdefaults = [(k, self.materialise(v)) for k, v in fn.kwdefaults.items()]
        self.callable_const(_function)
        self.emit("LOAD_CONST", argval=fn.code)
        self.emit("LOAD_CONST", argval=fn.f_globals)
        for temp in defaults:
            self.emit("LOAD_FAST", argval=temp)
        self.emit("BUILD_TUPLE", arg=len(defaults), argval=len(defaults))
        for key, temp in kwdefaults:
            self.emit("LOAD_CONST", argval=key)
            self.emit("LOAD_FAST", argval=temp)
        self.emit("BUILD_MAP", arg=len(kwdefaults), argval=len(kwdefaults))
        for cell in fn.closure:
            self.push(cell)
        self.emit("BUILD_TUPLE", arg=len(fn.closure), argval=len(fn.closure))
        self.call(5)

    def locals_to_pass(self, frame: FrameState) -> tuple[list[str], list[str]]:
        """What the generated code loads as a frame's locals when it calls the frame's resume
        function, and their names there. The translated frame's changed locals are stored into
        its own (`root_stores`); an inlined frame's live in temporaries."""
        changed, bound = frame_locals(frame.executor)
        temps = {name: self.materialise(var) for name, var in changed.items()}
        if frame.executor is self.ex:
            self.root_stores = list(temps.items())
            return bound, bound
        return [temps[name] for name in bound], bound

    def cell_contents(self) -> list[tuple[str, str | None]]:
        """The translated frame's own cells the simulation set or emptied, each with the temporary
        holding its content (None: emptied): stored into the real cells before the frame goes on."""
        out = []
        for name in self.ex.code.co_cellvars:
            cell = self.ex.cells.get(name)
            if cell is None:
                continue
            if cell.content is not None:
                out.append((name, self.materialise(cell.content)))
            elif name in self.ex.f_locals:  # an argument's cell, emptied by `del`
                out.append((name, None))
        return out


def _function(code: types.CodeType, f_globals: dict, defaults: tuple, kwdefaults: dict, closure: tuple) -> Callable:
    """A function as MAKE_FUNCTION makes it."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    return fn


def _strict_zip(*iterables: Any) -> zip:
    """zip(*iterables, strict=True), as a break's code calls it (positional arguments only)."""
    return zip(*iterables, strict=True)


def _entered(kind: type) -> Callable:
    """The `__exit__` of a new grad-mode context of `kind`, entered."""
    context = kind()
    context.__enter__()
    return context.__exit__


def _translatable(fn: Any) -> bool:
    """Whether a callee run for real at a break is worth translating as a frame of its own: Python
    code of the user or a Layer's __call__, not a runtime public function, an optimizer's method nor a
    blocked one."""
    return not (is_runtime_api(fn) or is_optimizer_code(fn) or is_skipped(fn) or breaks_on(fn)
                or is_not_to_static(fn) or is_sot_own(fn) or takes_locks(fn))
