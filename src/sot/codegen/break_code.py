"""Code for a graph break: rebuild the frame, run the breaking instruction, go on in resume functions.

`break_code(ex, brk, compile_outputs, translated, make_resume)` returns the code object that
replaces the frame of `ex.code` for this translation:

    RESUME
    __sot_out = <compiled prefix>(*tensor inputs)   # the SIR recorded before the break
    __sot_t<i> = <each value the frames hold>       # from the outputs, the inputs, constants, ...
    <locals changed by the prefix> = __sot_t<i>
    <the temporaries, saved as one tuple at the bottom of the stack, and deleted>
    <the innermost frame's stack as it was before the instruction>
    <the breaking instruction itself>               # a jump gets one tail per target
    <the temporaries, restored from the saved tuple>
    __sot_r = <resume of callee k>(*stack, *callee locals)     # one tail per successor: the
    __sot_r = <resume of caller j>(*stack under the call, __sot_r, *caller locals)  # frames of
    return <resume of the frame i>(*stack under the call, __sot_r, *locals)        # the break

With one frame (the break is in the translated frame itself) the tail is one resume call. Each
resume function is the original code of its frame with a prologue that pushes its stack arguments
and jumps to the successor (after a caller's CALL: the callee's result on top); its parameters
are the stack items and the frame's bound locals. The translator makes it a translated function
(`make_resume`), so the rest of every frame is captured again when it runs; a caller whose CALL is
followed by RETURN_VALUE needs none (the callee's result is its own). At a breaking CALL whose
callee is Python code, the callee is replaced by its translated version (`translated(fn)`).
Under a `try` or in a `with` body, what the breaking instruction raises goes to one more tail,
the resume function entered at the handler. In a `with` block over a grad-mode context, the
context is entered for real around the instruction and left before each tail; the resume function
enters it again in its prologue (`with no_grad():` from its start), so its translation simulates
the block with the caller's grad mode outside it, as a compiled subgraph needs. A break at the
head of a loop that runs for real (see `loops`) emits the loop instead of the instruction: it
calls the loop's body function per iteration and its tails continue where the loop exits.

What runs in the frame looks like the user's own frame: the generated code and every resume
function keep the original's name, qualified name and file, each generated instruction has the line
of the instruction it stands for (the breaking instruction's; a resume function's prologue: the
resumed instruction's), and no temporary is bound while the user's code runs (`locals()`,
`frame.f_locals` and debuggers see the user's locals only): the break code's are held on the value
stack across the breaking instruction, a resume function's stack arguments are deleted once pushed.
A call of a function that reads the frames it is called from (`sys._getframe`, `locals()`,
`warnings.warn`: `calls.ReadsFrames`) never breaks inside an inlined callee, whose frame does not
exist: the translated frame breaks at its call instead (the translator sees to it), so the callee
runs as a real frame.

A value that cannot be rebuilt (a function made by the frame, a closure cell, an object with no
reloadable source) makes the break impossible: `Unsupported` (the frame then runs eagerly).
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
import types
import weakref
from typing import Any, Callable

from runtime.autograd import enable_grad, no_grad
from sot.ir import Symbol
from sot.opcode_executor.blocklist import breaks_on, is_skipped
from sot.opcode_executor.breaks import FrameState, GraphBreak, successors
from sot.opcode_executor.calls import is_runtime_api
from sot.opcode_executor.contexts import GradModeExitVariable
from sot.opcode_executor.dispatch import Unsupported
from sot.opcode_executor.live import GENERATED, below_call, frame_locals
from sot.opcode_executor.loops import enclosing
from sot.opcode_executor.markers import is_not_to_static
from sot.opcode_executor.variables import (NULL, BoundMethodVariable, CellVariable, ConstantVariable,
                                           ContainerMethodVariable, DictVariable, FunctionVariable, InstanceVariable,
                                           IteratorVariable, ListVariable, NumberVariable, ObjectVariable,
                                           SetVariable, TensorMethodVariable, TensorVariable, TupleVariable, Variable)
from sot.pyversion import ExceptionEntry, Instruction, NormalisedCode, decode, encode, with_null

from .loop_body import body_code, entry_prologue

__all__ = ["CodeMap", "NeedsClosure", "break_code", "loop_body", "resume_code"]

_OUT = "__sot_out"
_resume_ids = itertools.count()


def break_code(ex: Any, brk: GraphBreak, runner: Callable | None, outputs: list[Symbol],
               translated: Callable[[types.FunctionType], Callable],
               make_resume: Callable[[types.CodeType, dict, bool], Callable],
               targets: list[Variable] = (), eager: frozenset[int] = frozenset(),
               loop: tuple | None = None, rerun: Callable | None = None,
               view_of: Callable[[Symbol], tuple | None] = lambda symbol: None) -> types.CodeType:
    """The code object of a translation that breaks at `brk.instruction` (see the module docstring);
    `runner` is called with the tensor inputs and then what the side effects load (`targets`: the objects
    they write, then the dynamic numbers they store); the resume
    functions of the frames at the indices `eager` (in `brk.frames`) run eagerly; `loop`: (a
    `loops.LoopPlan`, its body function) when the break is at that loop's FOR_ITER, run for real;
    `rerun(call)`: the handler (and its exception entry) that runs the frame again eagerly when the
    runner's call raises (see sot.codegen.rerun), None: what the runner raises goes on as it is; `view_of(symbol)`:
    `(make, source)` for a tensor the prefix made from an input (a Variable) or a bound tensor by ops that
    may return a view, which the generated code makes again as `make(source)` so that it is the view
    eager code has (None: the prefix's output is passed on)."""
    emitter = _BreakEmitter(ex, brk, runner, outputs, translated, make_resume)
    emitter.targets = list(targets)
    emitter.eager = eager
    emitter.loop = loop
    emitter.rerun = rerun
    emitter.view_of = view_of
    return emitter.run()


class NeedsClosure:
    """A resume function of code with free variables (the translated frame is a closure): a function
    carries its closure, so the generated code makes it on every call from the frame's own cells,
    with `make(cells)`."""

    def __init__(self, code: types.CodeType, make: Callable[[tuple], Callable]):
        self.freevars = code.co_freevars
        self.make = make

    def __call__(self, cells: tuple) -> Callable:
        return self.make(cells)


class _BreakEmitter:
    """Emits the instructions of one break's code, with temporaries for the rebuilt values."""

    def __init__(self, ex: Any, brk: GraphBreak, runner: Callable | None, outputs: list[Symbol],
                 translated: Callable, make_resume: Callable):
        self.ex, self.brk, self.runner = ex, brk, runner
        self.out_index = {sym: i for i, sym in enumerate(outputs)}
        self.inputs = {id(v): v for v in ex.inputs}
        self.input_temps: dict[int, str] = {}  # id of an input -> the temporary holding it (see run)
        self.translated, self.make_resume = translated, make_resume
        self.body: list[Instruction] = []
        self.targets: list[Variable] = []
        self.temps: dict[tuple, str] = {}
        self.building: set[tuple] = set()  # the values being rebuilt now (a container rebuilding its items)
        self.names: list[str] = []
        self.root_stores: list[tuple[str, str]] = []  # (local, temporary) set before the breaking instruction
        self.eager: frozenset[int] = frozenset()  # indices of the frames whose resume functions run eagerly
        self.loop: tuple | None = None  # (LoopPlan, body function): the breaking FOR_ITER's loop runs for real
        self.table: tuple[ExceptionEntry, ...] = ()  # the breaking instruction's handler, under a `try`/`with`
        self.contexts: dict[str, type] = {}  # temporary holding the `__exit__` of a grad-mode context entered
        #                                      for real around the breaking instruction -> the context's type
        self.saved: list[str] = []  # the temporaries held at the bottom of the stack across the instruction
        self.rerun: Callable | None = None  # makes the handler re-running the frame when the runner raises
        self.view_of: Callable[[Symbol], tuple | None] = lambda symbol: None  # see break_code

    def fail(self, detail: str) -> None:
        raise Unsupported(self.brk.instruction.opname, self.brk.cause.where, f"cannot break here: {detail}")

    def emit(self, opname: str, **fields: Any) -> Instruction:
        ins = Instruction(opname, **fields)
        self.body.append(ins)
        return ins

    def temp(self) -> str:
        name = f"__sot_t{len(self.names)}"
        self.names.append(name)
        return name

    def call(self, n: int) -> None:
        self.emit("CALL", arg=n, argval=n)

    def callable_const(self, fn: Any) -> None:
        """Push `fn` with its NULL slot, ready for CALL."""
        self.body += with_null([Instruction("LOAD_CONST", argval=fn)])

    # ------------------------------------------------------------ the code
    def run(self) -> types.CodeType:
        ex, ins = self.ex, self.brk.instruction
        inner, callers = self.brk.frames[0], self.brk.frames[1:]
        for frame in callers:  # the translated frame's cells go on in its resume functions (see resume_code)
            code = frame.executor.code
            if code.co_cellvars or code.co_freevars:
                self.fail(f"{code.co_qualname} has closure cells, which a resume function cannot share")
        if ex.code.co_cellvars and self.loop is not None:
            self.fail(f"{ex.code.co_qualname} has closure cells, which a loop's body function cannot share")
        if ex.code.co_freevars:
            self.emit("COPY_FREE_VARS", arg=len(ex.code.co_freevars), argval=len(ex.code.co_freevars))
        for name in ex.code.co_cellvars:  # the frame's cells, as its own code makes them (an argument's: around it)
            self.emit("MAKE_CELL", argval=name)
        self.emit("RESUME", arg=0, argval=0)
        rerun = None
        for var in ex.inputs:  # read before the replayed writes (`d.pop(k)`) can change where they are read from
            self.body += var.tracker.load()
            self.input_temps[id(var)] = self.temp()
            self.emit("STORE_FAST", argval=self.input_temps[id(var)])
        if self.runner is not None:
            start = len(self.body)
            self.callable_const(self.runner)
            for var in ex.inputs:
                self.emit("LOAD_FAST", argval=self.input_temps[id(var)])
            for var in self.targets:
                self.body += var.tracker.load()
            self.call(len(ex.inputs) + len(self.targets))
            if self.rerun is not None:  # the first thing the frame does: nothing has happened if it raises
                rerun = self.rerun(self.body[start:])
            self.emit("STORE_FAST", argval=_OUT)
        callee = _callee_slot(inner.stack, ins)
        stack_temps = [None if v is NULL else self.materialise(v, translate_callee=(i == callee))
                       for i, v in enumerate(inner.stack)]
        below = [[None if v is NULL else self.materialise(v) for v in below_call(frame)] for frame in callers]
        loads = [self.frame_locals(frame) for frame in self.brk.frames]  # every value is built before a local is set
        cells = self.cell_contents()
        for name, temp in self.root_stores:
            self.emit("LOAD_FAST", argval=temp)
            self.emit("STORE_FAST", argval=name)
        for name, temp in cells:
            if temp is None:
                self.emit("DELETE_DEREF", argval=name)
            else:
                self.emit("LOAD_FAST", argval=temp)
                self.emit("STORE_DEREF", argval=name)
        returns = [self.caller_resume(frame, items, names, i + 1 in self.eager) for i, (frame, items, (names, _))
                   in enumerate(zip(callers, below, loads[1:]))]
        if self.loop is None:
            self.save([*([_OUT] if self.runner is not None else []), *self.names])
        for temp in stack_temps:
            self.emit("PUSH_NULL") if temp is None else self.emit("LOAD_FAST", argval=temp)
        for name in self.saved:
            self.emit("DELETE_FAST", argval=name)
        if self.loop is None:  # a resume function's stack arguments: dead once rebuilt (see frame_locals)
            for name in ex.code.co_varnames[:ex.code.co_argcount]:
                if name.startswith(GENERATED):
                    self.emit("DELETE_FAST", argval=name)
        first = len(self.body)
        if self.loop is not None:
            last = self.run_loop(inner, stack_temps, loads[0])
        else:
            real = last = dataclasses.replace(ins, target=None, lineno=ins.lineno)
            self.body.append(real)
            tails = []
            for target, effect, pushed in successors(inner.executor.normalised, ins):
                depth = len(inner.stack) + effect
                tails.append(self.tail(inner, target, stack_temps[:depth - pushed], pushed, loads[0], returns))
            if ins.target is not None:
                real.target = tails[-1]
        code = inner.executor.normalised
        entry = code.handler(ins) if self.loop is None else next(iter(enclosing(code, self.loop[0].head,
                                                                                 self.loop[0].end)), None)
        if entry is not None:  # what the instruction (or loop) raises goes on in a resume function at the handler
            start = self.body[first]
            handler = self.tail(inner, entry.target, stack_temps[:entry.depth], 1, loads[0], returns,
                                lasti=entry.lasti)
            self.table = (ExceptionEntry(start, last, handler, entry.depth + bool(self.saved), False),)
        if rerun is not None:
            handler, rerun_entry = rerun
            self.body += handler
            self.table = (*self.table, rerun_entry)
        for item in self.body:  # a local that is a cell holds the cell from MAKE_CELL on: its value is the content
            if item.opname == "LOAD_FAST" and item.argval in ex.code.co_cellvars:
                item.opname = "LOAD_DEREF"
        body = tuple(self.body)
        for item in body:
            item.lineno = item.lineno or ins.lineno
        body[0].starts_line = True
        meta = ex.normalised.meta.replace(varnames=(*ex.code.co_varnames, _OUT, *self.names))
        return encode(NormalisedCode(body, self.table, meta))

    def save(self, names: list[str]) -> None:
        """Hold the temporaries `names` as one tuple at the bottom of the stack (they are deleted before the
        breaking instruction, which may run code reading the frame's locals; each tail restores them)."""
        if not names:
            return
        self.saved = names
        for name in names:
            self.emit("LOAD_FAST", argval=name)
        self.emit("BUILD_TUPLE", arg=len(names), argval=len(names))

    def restore(self, depth: int) -> None:
        """Bind the saved temporaries again, from under the `depth` stack items above their tuple."""
        if not self.saved:
            return
        self.emit("COPY", arg=depth + 1, argval=depth + 1)
        self.emit("UNPACK_SEQUENCE", arg=len(self.saved), argval=len(self.saved))
        for name in self.saved:
            self.emit("STORE_FAST", argval=name)

    def run_loop(self, frame: FrameState, stack_temps: list[str | None],
                 loads: tuple[list[str], list[str]]) -> Instruction:
        """The loop whose head the break is at, run for real: each iteration calls the body function
        (with a `for` loop's item), whose flag says go on (0), return its value (1) or leave by the
        i-th exit (2 + i); the loop's exits continue in resume functions (see `loops`). Returns the
        last instruction of the loop itself (the tails follow it)."""
        plan, body = self.loop
        code = frame.executor.normalised
        flag, value = self.temp(), self.temp()
        if plan.is_for:
            head = dataclasses.replace(code.instructions[plan.head], target=None)
            self.body.append(head)
            item = self.temp()
            self.emit("STORE_FAST", argval=item)
            self.call_resume(body, [item], list(plan.params))
        else:
            head = self.emit("NOP")
            self.call_resume(body, [], list(plan.params))
        self.emit("UNPACK_SEQUENCE", arg=2 + len(plan.changed), argval=2 + len(plan.changed))
        for name in (flag, value, *plan.changed):
            self.emit("STORE_FAST", argval=name)
        self.emit("LOAD_FAST", argval=flag)
        self.emit("POP_JUMP_IF_FALSE", target=head)
        if plan.exits:
            self.emit("LOAD_FAST", argval=flag)
            self.emit("LOAD_CONST", argval=1)
            self.emit("COMPARE_OP", arg=2, argval="==")
            leaves = self.emit("POP_JUMP_IF_FALSE")
        self.emit("LOAD_FAST", argval=value)
        self.emit("RETURN_VALUE")
        if plan.exits:
            leaves.target = self.emit("POP_TOP" if plan.is_for else "NOP")  # (a for loop's `break` pops its iterator)
        jumps = []
        for i in range(len(plan.exits)):
            if i < len(plan.exits) - 1:
                self.emit("LOAD_FAST", argval=flag)
                self.emit("LOAD_CONST", argval=2 + i)
                self.emit("COMPARE_OP", arg=2, argval="==")
                jumps.append(self.emit("POP_JUMP_IF_TRUE"))
            else:
                jumps.append(self.emit("JUMP"))
        last = self.body[-1]
        below = stack_temps[:-1] if plan.is_for else stack_temps
        for jump, index in zip(jumps, plan.exits):
            jump.target = self.tail(frame, code.instructions[index], below, 0, loads, [])
        if plan.is_for:  # the iterator runs out
            head.target = self.tail(frame, code.instructions[plan.head].target, below, 0, loads, [])
        return last

    def frame_locals(self, frame: FrameState) -> tuple[list[str], list[str]]:
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

    def caller_resume(self, frame: FrameState, below: list[str | None], locals_: list[str],
                      eager: bool) -> tuple | None:
        """How a caller of the break continues after its CALL: its resume function, the stack items
        and locals to pass (the callee's result goes on top of the stack); None: it returns the result."""
        after = frame.executor.normalised.instructions[frame.executor.normalised.index(frame.instruction) + 1]
        if after.opname == "RETURN_VALUE":
            return None
        items = [*below, "__result__"]
        made = {i: None for i, temp in enumerate(items) if temp is None}
        code = resume_code(frame.executor.code, frame.executor.normalised, after, len(items), made,
                           frame_locals(frame.executor)[1])
        return self.make_resume(code, frame.executor.f_globals, eager), [t for t in below if t is not None], locals_

    def call_resume(self, resume: Callable, stack: list[str], locals_: list[str]) -> None:
        """Call a resume function with the temporaries / locals named (one of code with free
        variables is made first, from this frame's cells)."""
        if isinstance(resume, NeedsClosure):  # the function made from the cells is the callable
            n = len(resume.freevars)
            self.body += with_null([*with_null([Instruction("LOAD_CONST", argval=resume)]),
                                    *(Instruction("LOAD_CLOSURE", argval=name) for name in resume.freevars),
                                    Instruction("BUILD_TUPLE", arg=n, argval=n), Instruction("CALL", arg=1, argval=1)])
        else:
            self.callable_const(resume)
        for name in [*stack, *locals_]:
            self.emit("LOAD_FAST", argval=name)
        self.call(len(stack) + len(locals_))

    def tail(self, inner: FrameState, target: Instruction, kept: list[str | None], pushed: int,
             loads: tuple[list[str], list[str]], returns: list[tuple | None], lasti: bool = False) -> Instruction:
        """Call the innermost frame's resume function for `target`, pass its result up through each
        caller's, and return it; the tail's first instruction. The stack below what the instruction
        pushed is unchanged: its items come from their temporaries (NULL slots, which no instruction
        may pop, stay on the real stack until the frame returns). The grad-mode contexts entered for
        the instruction are left first; the resume function enters them again in its prologue (its
        translation then simulates the `with` from its start). `lasti`: the handler of a `with` body,
        entered with an offset under the exception (one of the resume function's own: its first)."""
        first = len(self.body)
        results = [self.temp() for _ in range(pushed)]
        for name in reversed(results):
            self.emit("STORE_FAST", argval=name)
        self.restore(len(kept))
        for temp in reversed([t for t in kept if t in self.contexts]):
            self.body += with_null([Instruction("LOAD_FAST", argval=temp)])
            for _ in range(3):
                self.emit("LOAD_CONST", argval=None)
            self.call(3)
            self.emit("POP_TOP")
        if lasti:
            results.insert(0, self.temp())
            self.emit("LOAD_CONST", argval=0)
            self.emit("STORE_FAST", argval=results[0])
        items = [*kept, *results]
        made = {i: self.contexts.get(temp) for i, temp in enumerate(items) if temp is None or temp in self.contexts}
        values, names = loads
        code = resume_code(inner.executor.code, inner.executor.normalised, target, len(items), made, names)
        self.call_resume(self.make_resume(code, inner.executor.f_globals, 0 in self.eager),
                         [t for i, t in enumerate(items) if i not in made], values)
        for caller in returns:
            if caller is not None:
                resume, below, locals_ = caller
                result = self.temp()
                self.emit("STORE_FAST", argval=result)
                self.call_resume(resume, [*below, result], locals_)
        self.emit("RETURN_VALUE")
        return self.body[first]

    # ------------------------------------------------------------ rebuilding values
    def materialise(self, var: Variable, translate_callee: bool = False) -> str:
        """A temporary holding the value `var` stands for (each Variable built once: aliases stay aliases)."""
        key = (id(var), translate_callee)
        if key not in self.temps:
            if key in self.building:
                self.fail(f"{var!r} contains itself")
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
                else:
                    self.emit("LOAD_CONST", argval=source)
                self.call(1)
            else:
                self.emit("LOAD_FAST", argval=_OUT)
                self.emit("LOAD_CONST", argval=self.out_index[var.symbol])
                self.emit("BINARY_SUBSCR")
        elif isinstance(var, NumberVariable):  # a dynamic number: this call's value, from the frame
            self.body += var.tracker.load()
        elif isinstance(var, ConstantVariable):
            self.emit("LOAD_CONST", argval=var.value)
        elif isinstance(var, (TupleVariable, DictVariable)):
            if var.tracker.source is not None and getattr(var.tracker, "reloadable", False) and self.load(var):
                return  # the very container the frame was given
            if isinstance(var, DictVariable):
                if var.kind is not dict:
                    self.fail(f"rebuilding a {var.kind.__name__}")
                temps = [(k, self.materialise(v)) for k, v in var.items.items()]
                for key, temp in temps:
                    self.emit("LOAD_CONST", argval=key)
                    self.emit("LOAD_FAST", argval=temp)
                self.emit("BUILD_MAP", arg=len(temps), argval=len(temps))
            else:
                temps = [self.materialise(v) for v in var.items]
                for temp in temps:
                    self.emit("LOAD_FAST", argval=temp)
                kind = "BUILD_LIST" if isinstance(var, ListVariable) else "BUILD_TUPLE"
                self.emit(kind, arg=len(temps), argval=len(temps))
        elif isinstance(var, SetVariable):
            if var.tracker.source is not None and self.load(var):
                return  # the very set the frame was given (never changed by the simulation)
            if not var.copied_in_order():
                self.fail(f"rebuilding {var!r} in its iteration order")
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
        elif isinstance(var, CellVariable):  # one of the translated frame's cells: the real cell
            name = next((n for n, c in self.ex.cells.items() if c is var), None)
            if name is None:
                self.fail(f"a closure cell of an inlined call ({var!r})")
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
        elif isinstance(var, InstanceVariable):
            if var.tracker.source is None or not self.load(var):
                self.fail(f"{var!r} has no source to reload it from")
        elif isinstance(var, ObjectVariable) and (not isinstance(var, FunctionVariable) or var.value is not None):
            self.emit("LOAD_CONST", argval=var.value)  # pinned by identity (or made by the translation)
        else:
            self.fail(f"rebuilding {var!r}")

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
                var.function.value is not None:
            self.bind(self.translated(var.function.value), var.receiver)
        elif isinstance(var, InstanceVariable) and isinstance(getattr(type(var.value), "__call__", None),
                                                              types.FunctionType):
            self.bind(self.translated(type(var.value).__call__), var)
        else:
            self.push(var)


def _function(code: types.CodeType, f_globals: dict, defaults: tuple, kwdefaults: dict, closure: tuple) -> Callable:
    """A function as MAKE_FUNCTION makes it."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    return fn


def _entered(kind: type) -> Callable:
    """The `__exit__` of a new grad-mode context of `kind`, entered."""
    context = kind()
    context.__enter__()
    return context.__exit__


def _translatable(fn: Any) -> bool:
    """Whether a callee run for real at a break is worth translating as a frame of its own: Python
    code of the user or a Layer's __call__, not a runtime public function nor a blocked one."""
    return not (is_runtime_api(fn) or is_skipped(fn) or breaks_on(fn) or is_not_to_static(fn))


def _callee_slot(stack: list[Variable], ins: Instruction) -> int | None:
    """Index of the callable of a breaking CALL / CALL_FUNCTION_EX on the stack (None for other instructions)."""
    if ins.opname == "CALL":
        first = len(stack) - ins.arg - 2
    elif ins.opname == "CALL_FUNCTION_EX":
        first = len(stack) - (ins.arg & 1) - 3
    else:
        return None
    return first + 1 if stack[first] is NULL else first


class CodeMap:
    """A map keyed by code objects' identity, forgetting a code when it dies. (Code objects compare
    by value: a copy made by `code.replace()` must not share what the original maps to.)"""

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, code: types.CodeType) -> Any:
        item = self._items.get(id(code))
        return item[1] if item is not None and item[0]() is code else None

    def set(self, code: types.CodeType, value: Any) -> None:
        key = id(code)
        self._items[key] = (weakref.ref(code, lambda _: self._items.pop(key, None)), value)


_ORIGINS = CodeMap()  # a resume function's code -> (a weak ref to the code it continues, its decoded form, the prologue's length)
_RESUMES = CodeMap()  # an original code -> its resume codes by (target index, stack depth, NULL slots, bound
#                       locals) and its loops' body codes by ("loop body", plan, stack depth)


def resume_code(code: types.CodeType, normalised: NormalisedCode, target: Instruction, depth: int,
                made: dict[int, type | None], bound: list[str]) -> types.CodeType:
    """The code of `code` (decoded: `normalised`) entered at `target` with `depth` stack items passed in
    as arguments before the bound locals, except those its prologue makes (`made`: index -> None for
    a NULL slot, or the type of a grad-mode context it enters, leaving that context's `__exit__`). A
    resume function's own resume enters the original code, and each entry point has one code object:
    a loop that breaks in every iteration reuses one resume function (translated once), where fresh
    code per iteration would translate again in every iteration."""
    origin = _ORIGINS.get(code)
    if origin is not None and origin[0]() is not None:
        code, original, offset = origin[0](), origin[1], origin[2]
        target = original.instructions[normalised.index(target) - offset]
        normalised = original
    key = (normalised.index(target), depth, frozenset(made.items()), tuple(bound))
    known = _made_from(code)
    if key not in known:
        entered, offset = _enter_at(normalised, target, depth, made, bound)
        decoded = decode(entered)
        if [i.opname for i in decoded.instructions[offset:]] == [i.opname for i in normalised.instructions]:
            _ORIGINS.set(entered, (weakref.ref(code), normalised, offset))
        known[key] = entered
    return known[key]


def _made_from(code: types.CodeType) -> dict[tuple, types.CodeType]:
    """The resume and body codes made from `code` so far, by entry point."""
    known = _RESUMES.get(code)
    if known is None:
        known = {}
        _RESUMES.set(code, known)
    return known


def loop_body(code: types.CodeType, normalised: NormalisedCode, plan: Any, depth: int) -> types.CodeType:
    """The body function's code for `plan`'s loop of `code` (see `loop_body.body_code`), one per loop and shape."""
    key = ("loop body", plan, depth)
    known = _made_from(code)
    if key not in known:
        known[key] = body_code(normalised, plan, depth)
    return known[key]


def _enter_at(normalised: NormalisedCode, target: Instruction, depth: int, made: dict[int, type | None],
              bound: list[str]) -> tuple[types.CodeType, int]:
    """A new code object: `normalised` with a prologue that pushes its stack arguments (or makes them:
    see `resume_code`) and jumps to `target`; and the prologue's length."""
    mapping = {id(ins): dataclasses.replace(ins) for ins in normalised.instructions}
    for ins in mapping.values():
        if ins.target is not None:
            ins.target = mapping[id(ins.target)]
    copies = [mapping[id(ins)] for ins in normalised.instructions]
    table = tuple(ExceptionEntry(mapping[id(e.start)], mapping[id(e.end)], mapping[id(e.target)], e.depth, e.lasti)
                  for e in normalised.exception_table)
    meta = normalised.meta  # its name, qualified name and file: the user's, as tracebacks and loggers show
    if meta.cellvars:  # its cells are the frame's, passed in as free variables, as CPython closures share them
        for ins in copies:
            if ins.opname in ("MAKE_CELL", "COPY_FREE_VARS"):  # (the original's entry: jumped over)
                ins.opname, ins.arg, ins.argval = "NOP", None, None
        meta = meta.replace(freevars=(*meta.freevars, *meta.cellvars), cellvars=(),
                            varnames=tuple(v for v in meta.varnames if v not in meta.cellvars))
    n = next(_resume_ids)
    stack_names = {i: f"__sot_s{n}_{i}" for i in range(depth) if i not in made}  # unique: never a local's name
    params = [*stack_names.values(), *bound]
    meta = meta.replace(argcount=len(params), posonlyargcount=0, kwonlyargcount=0, docstring=None,
                        flags=meta.flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
                        varnames=(*params, *(v for v in meta.varnames if v not in params)))
    prologue = entry_prologue(meta)
    for i in range(depth):
        if i in stack_names:  # pushed, then unbound: the frame's locals are the user's only
            prologue += [Instruction("LOAD_FAST", argval=stack_names[i]),
                         Instruction("DELETE_FAST", argval=stack_names[i])]
        elif made[i] is None:
            prologue.append(Instruction("PUSH_NULL"))
        else:  # `with <context type>():` entered again, its __exit__ left on the stack
            prologue += [*with_null([Instruction("LOAD_CONST", argval=made[i])]), Instruction("CALL", arg=0, argval=0),
                         Instruction("BEFORE_WITH"), Instruction("POP_TOP")]
    prologue.append(Instruction("JUMP", target=mapping[id(target)]))
    for ins in prologue:
        ins.lineno = target.lineno
    return encode(NormalisedCode(tuple(prologue + copies), table, meta)), len(prologue)
