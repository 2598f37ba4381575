"""Exceptions raised and caught inside the simulation, across inlined calls too.

`ValueError("bad")` with constant arguments is an `ExceptionVariable`. A `raise` of one, a RERAISE,
or an exception a simulated builtin knows eager code raises (`FrameRaises` carrying `raised`: a
KeyError of a known dict, StopIteration of `next()`, ...) unwinds as CPython does: the exception
table entry protecting the current instruction cuts the simulated stack to its depth, pushes the
instruction's offset where the entry asks (`finally` and `with` handlers) and the exception, and
the simulation goes on at the handler. With no entry, the exception leaves the frame: an inlined
callee's raise reaches its caller at the instruction that called it (the callee's side effects
done so far stay recorded), and the same lookup runs there. The handlers' PUSH_EXC_INFO /
CHECK_EXC_MATCH / POP_EXCEPT / WITH_EXCEPT_START are simulated.

A bare `raise` in a handler the simulation entered raises the exception that handler handles (each
frame keeps those it entered, innermost last). Otherwise the exception CPython would make "being
handled" (what `sys.exc_info()` sees, and a bare `raise` in a callee or in a handler entered before
a break) is a placeholder no break can rebuild, so code that needs it runs the frame eagerly; a
break cannot make the exception itself again either (a new one would lack the raised one's traceback
and context), so a frame that keeps it across a break runs eagerly. An exception that escapes the
translated frame, or leaves an inlined generator (but a with statement's `@contextmanager`
generator: its exit sees it, see `contexts`), runs the frame eagerly (eager code raises the user's
exception itself), as does one only eager code can make (a tensor op's error, a class with its own
`__init__`).
"""
from __future__ import annotations

from sot.pyversion import Instruction

from .dispatch import FrameRaises, handles
from .variables import ConstantVariable, ExceptionVariable, ObjectVariable, TupleVariable, Variable, python_type
from .wording import shown

__all__ = ["ExceptionMixin"]

_CO_GENERATOR = 0x20


class _HandledBefore(Variable):
    """What PUSH_EXC_INFO saves: the exception being handled before this handler (restored by POP_EXCEPT)."""


class _Traceback(Variable):
    """The traceback a `with` block's `__exit__` gets with the exception: not modelled, so any use of it
    other than passing it on cannot be simulated."""


class ExceptionMixin:
    """LOAD_ASSERTION_ERROR, RAISE_VARARGS, PUSH_EXC_INFO, CHECK_EXC_MATCH, POP_EXCEPT, RERAISE,
    WITH_EXCEPT_START and the unwinding to a handler (part of OpcodeExecutor)."""

    def make_exception(self, kind: type, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        """`kind(*args)` for a builtin exception class (no Python `__init__` of the user's to run) with
        constant arguments: an ExceptionVariable; any other exception runs the frame eagerly."""
        if kwargs or not all(isinstance(a, ConstantVariable) for a in args) or \
                any(c.__module__ != "builtins" for c in kind.__mro__):
            raise FrameRaises("CALL", self.where(),
                              f"makes a {kind.__name__} exception, which runs eagerly to raise it")
        return ExceptionVariable(kind, list(args))

    def catch(self, raised: FrameRaises) -> None:
        """Unwind to the handler protecting the current instruction from `raised` (the simulation goes on
        there); re-raise it when this frame has none, so the frame that called this one handles it."""
        exc = raised.raised
        if isinstance(exc, tuple):  # (class, args) of what a simulated builtin raises
            exc = raised.raised = ExceptionVariable(exc[0], [ConstantVariable(a) for a in exc[1]])
        entry = self.normalised.handler(self.current)
        if entry is None or entry.target.argval == "INTRINSIC_STOPITERATION_ERROR":  # (3.12+ generator bodies)
            if self.code.co_flags & _CO_GENERATOR and not self.managed:  # a generator left this way is finished:
                # not modelled, but for a with statement's, whose exit sees the exception (see contexts)
                raised.raised = None
            raise raised
        if len(self.stack) < entry.depth:
            self.unsupported(f"raises {shown(exc)} to a handler sot cannot reach")
        del self.stack[entry.depth:]
        if entry.lasti:  # the raising instruction's offset, which only RERAISE reads (for the traceback)
            self.stack.append(ConstantVariable(self.current.offset))
        self.stack.append(exc)
        self.jump_to = entry.target

    def _throw(self, ins: Instruction, exc: Variable, detail: str) -> None:
        """Raise `exc` at `ins`: catchable in the simulation when it is an ExceptionVariable."""
        raise FrameRaises(ins.opname, self.where(), detail,
                          raised=exc if isinstance(exc, ExceptionVariable) else None)

    @handles("LOAD_ASSERTION_ERROR")
    def _load_assertion_error(self, ins: Instruction) -> None:
        self.stack.append(ObjectVariable(AssertionError))

    @handles("RAISE_VARARGS")
    def _raise_varargs(self, ins: Instruction) -> None:
        if ins.arg == 0:  # a bare `raise`: the exception being handled, modelled in a handler this simulation entered
            handled = self.handling[-1] if self.handling else None
            self._throw(ins, handled, "raises the exception being handled")
        if ins.arg == 2:  # `raise exc from cause`: the cause is not part of what is simulated (class, args)
            self.stack.pop()
        exc = self.stack.pop()
        if isinstance(exc, ObjectVariable) and isinstance(exc.value, type) and issubclass(exc.value, BaseException):
            exc = self.make_exception(exc.value, [], {})  # `raise ValueError`: the class is called
        self._throw(ins, exc, f"raises {shown(exc)}")

    @handles("PUSH_EXC_INFO")
    def _push_exc_info(self, ins: Instruction) -> None:
        self.stack.insert(len(self.stack) - 1, _HandledBefore())
        self.handling.append(self.stack[-1])

    @handles("CHECK_EXC_MATCH")
    def _check_exc_match(self, ins: Instruction) -> None:
        classes, exc = self.stack.pop(), self.stack[-1]
        kind = exc.kind if isinstance(exc, ExceptionVariable) else python_type(exc)
        wanted = classes.items if isinstance(classes, TupleVariable) else [classes]
        if kind is None or not all(isinstance(c, ObjectVariable) and isinstance(c.value, type) for c in wanted):
            self.unsupported(f"catches {shown(exc)} with except {shown(classes)}, which sot cannot decide")
        self.stack.append(ConstantVariable(issubclass(kind, tuple(c.value for c in wanted))))

    @handles("POP_EXCEPT")
    def _pop_except(self, ins: Instruction) -> None:
        self.stack.pop()
        if self.handling:  # (empty: a resume function leaving a handler its frame entered before the break)
            self.handling.pop()

    @handles("RERAISE")
    def _reraise(self, ins: Instruction) -> None:
        self._throw(ins, self.stack.pop(),
                    "raises the exception on (no except clause matched it, or a finally re-raises it)")

    @handles("WITH_EXCEPT_START")
    def _with_except_start(self, ins: Instruction) -> None:
        # the stack is [__exit__, lasti, exception handled before, exception] on 3.11-3.13 alike
        exc = self.stack[-1]
        if not isinstance(exc, ExceptionVariable):  # a real exception (a resume function's handler): not modelled
            self.unsupported()
        self.stack.append(self.call(self.stack[-4], [ObjectVariable(exc.kind), exc, _Traceback()], {}))
