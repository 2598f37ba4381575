"""Code for a graph break: rebuild the frame, run the breaking instruction, go on in resume functions.

`break_code(ex, brk, runner, outputs, translated, make_resume, ...)` returns the code object that
replaces the frame of `ex.code` for this translation:

    RESUME
    __sot_t<i> = <each tensor input, from where it is read>
    __sot_out = <compiled prefix>(*tensor inputs, ...)  # the SIR recorded before the break
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
are the stack items and the frame's bound locals (see `resume_code`). The translator makes it a translated function
(`make_resume`), so the rest of every frame is captured again when it runs; a caller whose CALL is
followed by RETURN_VALUE needs none (the callee's result is its own). At a breaking CALL whose
callee is Python code, the callee is replaced by its translated version (`translated(fn)`).
Under a `try` or in a `with` body, what the breaking instruction raises goes to one more tail,
the resume function entered at the handler. In a `with` block over a grad-mode context, the
context is entered for real around the instruction and left before each tail; the resume function
enters it again in its prologue (`with no_grad():` from its start), so its translation simulates
the block with the caller's grad mode outside it, as a compiled subgraph needs. A break at the
head of a loop that runs for real (see sot.opcode_executor.loops) emits the loop instead of the
instruction: it calls the loop's body function (see `loop_body`) per iteration and its tails
continue where the loop exits.

What runs in the frame looks like the user's own frame: the generated code and every resume
function keep the original's name, qualified name and file, each generated instruction has the line
of the instruction it stands for (the breaking instruction's; a resume function's prologue: the
resumed instruction's), and no temporary is bound while the user's code runs (`locals()`,
`frame.f_locals` and debuggers see the user's locals only): the break code's are held on the value
stack across the breaking instruction, a resume function's stack arguments are deleted once pushed.
A call of a function that reads the frames it is called from (`sys._getframe`, `locals()`,
`warnings.warn`: `sot.opcode_executor.calls.ReadsFrames`) never breaks inside an inlined callee, whose frame does not
exist: the translated frame breaks at its call instead (the translator sees to it), so the callee
runs as a real frame.

How each value is rebuilt is `rebuild`'s; a value that cannot be rebuilt (a closure cell of an
inlined call, an object with no reloadable source) makes the break impossible: `Unsupported`
(the frame then runs eagerly).
"""
from __future__ import annotations

import dataclasses
import types
from typing import Any, Callable

from sot.ir import Symbol
from sot.opcode_executor.breaks import FrameState, GraphBreak, successors
from sot.opcode_executor.live import GENERATED, below_call, frame_locals
from sot.opcode_executor.loops import enclosing
from sot.opcode_executor.variables import NULL, Variable
from sot.pyversion import ExceptionEntry, Instruction, NormalisedCode, encode, with_null

from .pysource import Plan, note_plan
from .rebuild import OUT, Rebuilder
from .returns import MadeObjects
from .resume_code import resume_code

__all__ = ["NeedsClosure", "break_code"]


def break_code(ex: Any, brk: GraphBreak, runner: Callable | None, outputs: list[Symbol],
               translated: Callable[[types.FunctionType], Callable],
               make_resume: Callable[[types.CodeType, dict, bool], Callable],
               targets: list[Variable] = (), eager: frozenset[int] = frozenset(),
               loop: tuple | None = None, rerun: Callable | None = None,
               view_of: Callable[[Symbol], tuple | None] = lambda symbol: None,
               made: MadeObjects | None = None) -> types.CodeType:
    """The code object of a translation that breaks at `brk.instruction` (see the module docstring);
    `runner` is called with the tensor inputs and then what the side effects load (`targets`: the
    objects they write, then the dynamic numbers they store); the resume functions of the frames at
    the indices `eager` (in `brk.frames`) run eagerly; `loop`: (a `sot.opcode_executor.loops.LoopPlan`,
    its body function) when the break is at that loop's FOR_ITER, run for real; `rerun(call)`: the
    handler (and its exception entry) that runs the frame again eagerly when the runner's call raises
    (see `rerun`), None: what the runner raises goes on as it is; `view_of(symbol)`: `(make, source)`
    for a tensor the prefix made from an input (a Variable) or a bound tensor by ops that may return
    a view, which the generated code makes again as `make(source)` so that it is the view eager code
    has (None: the prefix's output is passed on); `made`: the objects the frame constructed that the
    frames hold, which the runner makes (see sot.codegen.returns `MadeObjects`)."""
    return _BreakEmitter(ex, brk, runner, outputs, translated, make_resume, list(targets), eager, loop, rerun,
                         view_of, made).run()


class NeedsClosure:
    """A resume function of code with free variables (the translated frame is a closure): a function
    carries its closure, so the generated code makes it on every call from the frame's own cells,
    with `make(cells)`."""

    def __init__(self, code: types.CodeType, make: Callable[[tuple], Callable]):
        self.code = code
        self.freevars = code.co_freevars
        self.make = make

    def __call__(self, cells: tuple) -> Callable:
        return self.make(cells)


class _BreakEmitter(Rebuilder):
    """Emits the instructions of one break's code: the values rebuilt (see `Rebuilder`), the
    breaking instruction (or the loop) run for real, and the tails calling the resume functions."""

    def __init__(self, ex: Any, brk: GraphBreak, runner: Callable | None, outputs: list[Symbol],
                 translated: Callable, make_resume: Callable, targets: list[Variable], eager: frozenset[int],
                 loop: tuple | None, rerun: Callable | None, view_of: Callable[[Symbol], tuple | None],
                 made: MadeObjects | None):
        super().__init__(ex, brk, outputs, translated, view_of, made)
        self.runner, self.make_resume, self.targets = runner, make_resume, targets
        self.eager = eager  # indices of the frames whose resume functions run eagerly
        self.loop = loop  # (LoopPlan, body function): the breaking FOR_ITER's loop runs for real
        self.rerun = rerun  # makes the handler re-running the frame when the runner raises
        self.table: tuple[ExceptionEntry, ...] = ()  # the breaking instruction's handler, under a `try`/`with`
        self.saved: list[str] = []  # the temporaries held at the bottom of the stack across the instruction
        self.resumes: list[Callable] = []  # the resume functions its tails call (for `pysource`)
        self.break_at: int | None = None  # where the breaking instruction (or the loop) starts in `body`

    def run(self) -> types.CodeType:
        """The break's code (see the module docstring)."""
        ex, ins = self.ex, self.brk.instruction
        inner, callers = self.brk.frames[0], self.brk.frames[1:]
        for frame in callers:  # the translated frame's cells go on in its resume functions (see resume_code)
            code = frame.executor.code
            if code.co_cellvars or code.co_freevars:
                self.fail(f"{code.co_qualname} has closure cells, which a resume function cannot share")
        if ex.code.co_cellvars and self.loop is not None:
            self.fail(f"{ex.code.co_qualname} has closure cells, which a loop's body function cannot share")
        rerun = self.call_prefix()
        callee = _callee_slot(inner.stack, ins)
        stack_temps = [None if v is NULL else self.materialise(v, translate_callee=(i == callee))
                       for i, v in enumerate(inner.stack)]
        below = [[None if v is NULL else self.materialise(v) for v in below_call(frame)] for frame in callers]
        loads = [self.locals_to_pass(frame) for frame in self.brk.frames]  # every value is built before a local is set
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
            self.save([*([OUT] if self.runner is not None else []), *self.names])
        for temp in stack_temps:
            self.emit("PUSH_NULL") if temp is None else self.emit("LOAD_FAST", argval=temp)
        for name in self.saved:
            self.emit("DELETE_FAST", argval=name)
        if self.loop is None:  # a resume function's stack arguments: dead once rebuilt (see live.frame_locals)
            for name in ex.code.co_varnames[:ex.code.co_argcount]:
                if name.startswith(GENERATED):
                    self.emit("DELETE_FAST", argval=name)
        first = self.break_at = len(self.body)
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
        return self.assemble(rerun)

    def call_prefix(self) -> tuple | None:
        """The frame's entry (its cells made as its own code makes them), the tensor inputs read, and
        the compiled prefix called into `__sot_out`; the handler re-running the frame when that call
        raises, with its exception entry (None: no handler)."""
        ex = self.ex
        rerun = None
        if ex.code.co_freevars:
            self.emit("COPY_FREE_VARS", arg=len(ex.code.co_freevars), argval=len(ex.code.co_freevars))
        for name in ex.code.co_cellvars:  # the frame's cells, as its own code makes them (an argument's: around it)
            self.emit("MAKE_CELL", argval=name)
        self.emit("RESUME", arg=0, argval=0)
        self.read_inputs()
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
            self.emit("STORE_FAST", argval=OUT)
        return rerun

    def assemble(self, rerun: tuple | None) -> types.CodeType:
        """The code object of the instructions emitted, with the re-run handler `rerun` (see
        `call_prefix`) at its end."""
        ex, ins = self.ex, self.brk.instruction
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
        meta = ex.normalised.meta.replace(varnames=(*ex.code.co_varnames, OUT, *self.names))
        code = encode(NormalisedCode(body, self.table, meta))
        note_plan(code, Plan(self.runner, tuple(r for r in self.resumes if self.loop is None or r is not self.loop[1]),
                             None if self.loop is None else self.loop[1], self.break_at, body[self.break_at].opname))
        return code

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
        i-th exit (2 + i); the loop's exits continue in resume functions (see `loop_body`). Returns the
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
        if all(r is not resume for r in self.resumes):
            self.resumes.append(resume)
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


def _callee_slot(stack: list[Variable], ins: Instruction) -> int | None:
    """Index of the callable of a breaking CALL / CALL_FUNCTION_EX on the stack (None for other instructions)."""
    if ins.opname == "CALL":
        first = len(stack) - ins.arg - 2
    elif ins.opname == "CALL_FUNCTION_EX":
        first = len(stack) - (ins.arg & 1) - 3
    else:
        return None
    return first + 1 if stack[first] is NULL else first
