"""`try`/`except` around a `raise` of the frame itself, simulated: the raise jumps to the handler.

`ValueError("bad")` with constant arguments is an `ExceptionVariable`; `raise` of one under a
`try` whose handler is an `except` clause (it starts with PUSH_EXC_INFO) unwinds the simulated stack
to the handler's depth and goes on there, as CPython does, so the frame stays one graph. The
handler's PUSH_EXC_INFO / CHECK_EXC_MATCH / POP_EXCEPT are simulated; the exception CPython would
make "being handled" (what `sys.exc_info()` and a bare `raise` see) is a placeholder no break can
rebuild, so code in the handler that needs it runs the frame eagerly. Nor can a break make the
exception itself again (a new one would lack the raised one's traceback and context): a frame that
keeps it across a break runs eagerly. A raise with no such handler,
a RERAISE (no clause matched, or a `finally`) and an exception escaping the frame run it eagerly
(FrameRaises): eager code raises the user's exception itself.
"""
from __future__ import annotations

from sot.pyversion import Instruction

from .dispatch import FrameRaises, handles
from .variables import ConstantVariable, ExceptionVariable, ObjectVariable, TupleVariable, Variable, python_type

__all__ = ["ExceptionMixin"]


class _HandledBefore(Variable):
    """What PUSH_EXC_INFO saves: the exception being handled before this handler (restored by POP_EXCEPT)."""


class ExceptionMixin:
    """LOAD_ASSERTION_ERROR, RAISE_VARARGS, PUSH_EXC_INFO, CHECK_EXC_MATCH, POP_EXCEPT, RERAISE (part of
    OpcodeExecutor)."""

    def make_exception(self, kind: type, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        """`kind(*args)` for a builtin exception class (no Python `__init__` of the user's to run) with
        constant arguments: an ExceptionVariable; any other exception runs the frame eagerly."""
        if kwargs or not all(isinstance(a, ConstantVariable) for a in args) or \
                any(c.__module__ != "builtins" for c in kind.__mro__):
            raise FrameRaises("CALL", self.where(), f"the frame makes a {kind.__name__} (to raise it)")
        return ExceptionVariable(kind, list(args))

    @handles("LOAD_ASSERTION_ERROR")
    def _load_assertion_error(self, ins: Instruction) -> None:
        self.stack.append(ObjectVariable(AssertionError))

    @handles("RAISE_VARARGS")
    def _raise_varargs(self, ins: Instruction) -> None:
        exc = self.stack[-1] if ins.arg == 1 else None
        if isinstance(exc, ObjectVariable) and isinstance(exc.value, type) and issubclass(exc.value, BaseException):
            exc = self.make_exception(exc.value, [], {})  # `raise ValueError`: the class is called
        entry = self.normalised.handler(ins)
        if not isinstance(exc, ExceptionVariable) or entry is None or entry.lasti or \
                entry.target.opname != "PUSH_EXC_INFO":
            raise FrameRaises(ins.opname, self.where(), "the frame raises an exception")
        del self.stack[entry.depth:]
        self.stack.append(exc)
        self.jump_to = entry.target

    @handles("PUSH_EXC_INFO")
    def _push_exc_info(self, ins: Instruction) -> None:
        self.stack.insert(len(self.stack) - 1, _HandledBefore())

    @handles("CHECK_EXC_MATCH")
    def _check_exc_match(self, ins: Instruction) -> None:
        classes, exc = self.stack.pop(), self.stack[-1]
        kind = exc.kind if isinstance(exc, ExceptionVariable) else python_type(exc)
        wanted = classes.items if isinstance(classes, TupleVariable) else [classes]
        if kind is None or not all(isinstance(c, ObjectVariable) and isinstance(c.value, type) for c in wanted):
            self.unsupported(f"except {classes!r} for {exc!r}")
        self.stack.append(ConstantVariable(issubclass(kind, tuple(c.value for c in wanted))))

    @handles("POP_EXCEPT")
    def _pop_except(self, ins: Instruction) -> None:
        self.stack.pop()

    @handles("RERAISE")
    def _reraise(self, ins: Instruction) -> None:
        raise FrameRaises(ins.opname, self.where(), "the exception goes on (no except clause matched, or a finally)")
