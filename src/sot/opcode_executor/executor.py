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
raises `Unsupported` naming the opname and file:line; an exception the frame would raise is
`FrameRaises`: a handler of the simulated frames catches it (`exceptions`), and one that escapes
the translated frame runs it eagerly (it raises the user's exception itself).

This module is the frame simulation itself: the state one translation shares, the run loop and
its graph breaks, the stack, jumps, returns, generators and inlining. The handler families are
mixins in their own modules: `wrapping` (Variables from Python values, and back), `names` (locals,
cells, globals, imports), `operators`, `iteration`, `building` (containers, subscripts, strings),
`attributes`, `calls`, `contexts`, `matching` and `exceptions`.
"""
from __future__ import annotations

import inspect
import operator
import types
from typing import Any, Callable

from sot.dynamic.shapes import StaticDimNeeded
from sot.guards import Guard
from sot.ir import SIRBuilder
from sot.opcode_executor.blocklist import is_skipped
from sot.opcode_executor.markers import is_not_to_static, is_sot_own, takes_locks
from sot.pyversion import Instruction, call_slots, decode

from .aliasing import aliasing_guards
from .attributes import AttributeMixin
from .binding import BindError, bind_arguments
from .breaks import CALLS, FrameState, GraphBreak, breakable
from .building import BuildMixin
from .calls import MAX_INLINE_DEPTH, CallMixin, ReadsFrames
from .contexts import ContextlibForReal, ContextMixin
from .dispatch import HANDLERS, FrameRaises, Unsupported, handles
from .exceptions import ExceptionMixin
from .iteration import IterationMixin
from .matching import MatchMixin
from .names import NamesMixin
from .objects import ObjectMixin
from .operators import OperatorMixin
from .side_effects import SideEffects
from .size_forms import SizeForms
from .trackers import GetAttrTracker, Tracker
from .variables import (NULL, SUSPENDED, CellVariable, ConstantVariable, FunctionVariable, GeneratorVariable,
                        IteratorVariable, ListVariable, TensorVariable, Variable, birth_now)
from .wrapping import WrappingMixin, in_runtime

__all__ = ["OpcodeExecutor", "OpcodeInlineExecutor", "Unsupported", "FrameRaises", "HANDLERS"]

# conditional jump -> whether it jumps, given the popped value's truth or None-ness
_JUMPS: dict[str, Callable[[Any], bool]] = {
    "POP_JUMP_IF_TRUE": bool, "POP_JUMP_IF_FALSE": operator.not_,
    "POP_JUMP_IF_NONE": lambda v: v is None, "POP_JUMP_IF_NOT_NONE": lambda v: v is not None,
}
_MAX_STEPS = 100_000  # simulated instructions per translation: an unrolled loop longer than this runs eagerly


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
        self.real_managers = False  # contextlib's managers are made for real, not simulated (see contexts)
        self.contexts: dict[int, Variable] = {}  # id of a grad-mode context object from outside -> its Variable
        self.containers: dict[int, tuple[Any, Variable]] = {}  # id of a list/dict read -> (it, its Variable)
        self.cells: dict[int, tuple[Any, CellVariable]] = {}  # id of a real closure cell -> (it, its Variable)
        self.unknown_cells = False  # the translated frame's cells are unknown: any real cell may be one of them
        self.lacks: list[Guard] = []  # names the translation relied on being absent from a mapping
        self.size_forms = SizeForms(self.inputs)  # which run-time size each dynamic dim of its tensors is

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


class OpcodeExecutor(WrappingMixin, NamesMixin, OperatorMixin, IterationMixin, BuildMixin, CallMixin, AttributeMixin,
                     ContextMixin, MatchMixin, ExceptionMixin, ObjectMixin):
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
        self.managed = False  # the generator of a with statement's `@contextmanager` manager (see contexts)
        self.handling: list[Variable] = []  # the exceptions its handlers entered in this simulation handle

    # ------------------------------------------------------------ driving
    def run(self) -> Variable:
        """Simulates the instructions in order; the Variable RETURN_VALUE returned. Statements recorded
        meanwhile carry this frame's file:line (an inlined callee's run sets its own, then restores)."""
        outer, self.builder.locate = self.builder.locate, self.where
        try:
            return self._run()
        finally:
            self.builder.locate = outer

    def _run(self) -> Variable:
        """The instruction loop of `run`."""
        instructions = self.normalised.instructions
        translation = self.translation
        pc = self.resume_pc
        while translation.steps < _MAX_STEPS:
            translation.steps += 1
            if pc == len(instructions):
                self.unsupported("ends the function without a return sot can see")
            ins = self.current = instructions[pc]
            if pc == translation.loop_head and self.parent is None:  # the translator asked: its loop runs for real
                raise GraphBreak(ins, Unsupported(ins.opname, self.where(), "the loop runs for real"),
                                 FrameState(self, ins, list(self.stack)), barrier=birth_now())
            handler = HANDLERS.get(ins.opname, _no_handler)  # (one without: a break there, where one can go)
            self.jump_to = None
            try:
                result = handler(self, ins) if not self.may_break else self._step_or_break(handler, ins)
            except FrameRaises as raised:
                raised.locate(self.code, ins)
                if raised.raised is None:
                    raise
                self.catch(raised)  # (or re-raised to the caller's frame)
                result = None
            except Unsupported as e:
                e.locate(self.code, ins)
                raise
            except StaticDimNeeded as needed:  # reports name the line whose instruction needed the size
                needed.needed(self.where())
                raise
            if result is not None:
                self.resume_pc = pc + 1
                return result
            pc = pc + 1 if self.jump_to is None else self.normalised.index(self.jump_to)
        self.unsupported(f"runs more than {_MAX_STEPS} steps, which sot does not unroll")

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
            e.locate(self.code, ins)
            cause, call_site = e, e.call_site
        finally:
            translation.open_steps.pop()
        if not cause.breakable or step[1] or not breakable(self.normalised, ins, isinstance(cause, ContextlibForReal)):
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
            return f"{name} is called by an operation of its caller (an operator, an index, an attribute), " \
                   "not by a call"
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

    def record_write(self) -> None:
        """A side effect was recorded: a break at an instruction being simulated would replay it twice."""
        for step in self.translation.open_steps:
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
        raise FrameRaises(self.current.opname if self.current else "?", self.where(),
                          f"raises an exception, as eager code does: {detail}")

    def guards(self) -> list[Guard]:
        """The guards of every Variable read from the frame, and that the containers written into are
        not others read, without repeats."""
        found = [g for v in self.tracked for g in v.guards()]
        effects = self.translation.effects
        return list(dict.fromkeys([*found, *effects.distinct_guards(self.tracked),
                                   *aliasing_guards(effects, self.tracked), *self.translation.lacks]))

    # ------------------------------------------------------------ the stack
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

    @handles("RESUME", "NOP")
    def _nop(self, ins: Instruction) -> None:
        pass

    @handles("PUSH_NULL")
    def _push_null(self, ins: Instruction) -> None:
        self.stack.append(NULL)

    @handles("POP_TOP")
    def _pop_top(self, ins: Instruction) -> None:
        self.stack.pop()

    @handles("SWAP", "COPY")
    def _swap_copy(self, ins: Instruction) -> None:
        if ins.opname == "COPY":
            self.stack.append(self.stack[-ins.arg])
        else:
            self.stack[-1], self.stack[-ins.arg] = self.stack[-ins.arg], self.stack[-1]

    # ------------------------------------------------------------ control flow and returns
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

    def returned(self, value: Variable) -> Variable:
        """What a call of this frame gives its caller, from the Variable RETURN_VALUE pops."""
        return value

    @handles("RETURN_VALUE")
    def _return_value(self, ins: Instruction) -> Variable:
        return self.returned(self.stack.pop())

    # ------------------------------------------------------------ generators (run as they are consumed)
    @handles("RETURN_GENERATOR")
    def _return_generator(self, ins: Instruction) -> Variable:
        if self.parent is None:
            self.unsupported("yields from the translated function itself, which runs eagerly")
        self.stack.append(ConstantVariable(None))  # what the POP_TOP after it discards
        return SUSPENDED  # the call gives the generator (see `inline`); its body runs when consumed

    @handles("YIELD_VALUE")
    def _yield_value(self, ins: Instruction) -> Variable:
        if self.parent is None:
            self.unsupported("yields outside a generator sot runs, which sot cannot translate")
        handler = self.normalised.handler(ins)
        if handler is not None and handler.target.argval != "INTRINSIC_STOPITERATION_ERROR" and not self.managed:
            # (3.12+: every body has that handler; a with statement's generator is always resumed to its end)
            self.unsupported("yields inside a try or with block: a generator left there runs its handler when "
                             "closed, which sot cannot translate")
        self.yielded = self.stack.pop()
        self.stack.append(ConstantVariable(None))  # the value sent back in on resumption: iteration sends None
        return SUSPENDED

    # ------------------------------------------------------------ inlining
    def inline(self, fn: FunctionVariable, args: list[Variable], kwargs: dict[str, Variable],
               direct: bool = False) -> Variable:
        """Simulate a Python function's code into this translation's SIR (`direct`: see `call`)."""
        if fn.value is not None and (is_not_to_static(fn.value) or is_skipped(fn.value)):
            self.unsupported(f"calls {fn.code.co_qualname}, which is marked sot.not_to_static or skipped", "SOT-B004")
        if fn.value is not None and takes_locks(fn.value):  # (logging's records name their caller's frame)
            raise ReadsFrames(self.current.opname, self.where(), f"calls {fn.value.__module__}.{fn.code.co_qualname}, "
                              "which takes locks and may read its caller's frame: it runs for real")
        if fn.value is not None and is_sot_own(fn.value):
            self.unsupported(f"calls {fn.value.__module__}.{fn.code.co_qualname}, the JIT's own code, which runs as "
                             "eager code runs it", "SOT-B004")
        if self.depth >= MAX_INLINE_DEPTH:
            self.too_deep(fn)
        if fn.code.co_flags & (0x80 | 0x100 | 0x200):  # coroutine, iterable coroutine, async generator
            self.unsupported(f"calls the coroutine function {fn.code.co_qualname}, which sot cannot translate")
        defaults, kwdefaults, closure = (fn.defaults, fn.kwdefaults, fn.closure) if fn.value is None else \
            self._parts_of(fn)
        if fn.value is not None and fn.tracker.source is not None and not in_runtime(fn.value):
            # the code inlined must be the function's code on the next call too (autoreload replaces it)
            self.guard_identity(fn.code, GetAttrTracker(fn.tracker, "__code__"))
        try:
            bound = bind_arguments(fn.code, args, kwargs, defaults, kwdefaults)
        except BindError as e:
            raise FrameRaises("CALL", self.where(), f"raises TypeError: {e}") from None
        callee = OpcodeInlineExecutor(self, fn, bound, closure, direct)
        try:
            result = callee.run()
            return GeneratorVariable(callee) if result is SUSPENDED else result
        except Unsupported as e:
            if self.may_break and not callee.may_break and e.call_site is None:
                blocker = callee.resume_blocker() or "its frame could not be rebuilt at the break"
                e.call_site = f"{fn.code.co_qualname} cannot be resumed: {blocker}"
            raise


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
            self.unsupported("uses a closure that does not match its code's free variables, which sot cannot translate")
        return list(self.closure)

    def returned(self, value: Variable) -> Variable:
        """The returned Variable; an inlined generator's return ends it (what it returns is StopIteration's
        value, which iteration drops)."""
        return SUSPENDED if self.code.co_flags & inspect.CO_GENERATOR else value
