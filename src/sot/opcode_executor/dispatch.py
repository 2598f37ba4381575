"""The opcode handler table and the two ways a simulation gives up.

`HANDLERS` maps a normalised opname to the OpcodeExecutor method that simulates it; modules
holding handler families (attributes, calls, the executor itself) register with `@handles`.
`Unsupported` says the frame uses something not simulated (run it eagerly, the reason
recorded); `FrameRaises` says the frame raises an exception of its own, which eager code
raises with its own type and message.
"""
from __future__ import annotations

import types
from typing import Any, Callable

__all__ = ["HANDLERS", "handles", "Unsupported", "FrameRaises", "InPlaceUpdate"]


class Unsupported(Exception):
    """The frame uses something this executor cannot simulate: a reason to break the graph or run it
    eagerly. `code` is its entry in `sot.translation.reasons.REASONS` (no detail: an opcode without a handler).
    `detail` says what the instruction's expression does, in the user's terms, as a verb phrase ("reads a
    tensor's value into Python"; values named with `wording.shown`, never by their Variable): reports
    print it after the expression it quotes (sot.translation.source_text)."""

    default_code = "SOT-G001"
    # an in-place update of a tensor: not broken on, because the compiled graph's outputs do not
    # share memory as eager views do, so running the update for real after it could miss a view
    breakable = True

    def __init__(self, opname: str, where: str, detail: str = "", code: str | None = None):
        self.opname = opname
        self.where = where
        self.detail = detail
        self.code = code or (self.default_code if detail else "SOT-U001")
        self.reason = f"{detail} ({opname})" if detail else f"unsupported opcode {opname}"  # for logs and tracebacks
        self.call_site: str | None = None  # why an inlined frame it came from could not be resumed at it
        self.at: tuple[types.CodeType, Any] | None = None  # (code, Instruction) it happened at: see `locate`
        super().__init__(f"[{self.code}] {self.reason} at {where}")

    def locate(self, code: types.CodeType, instruction: Any) -> None:
        """Remember the instruction it happened at, whose source positions let reasons quote the user's
        expression; the innermost frame locates it first, and that is where it happened."""
        if self.at is None:
            self.at = (code, instruction)


class FrameRaises(Unsupported):
    """The frame raises an exception of its own (`raise` reached): eager code raises it, with its message.
    `raised`: the exception as the simulation knows it (an ExceptionVariable, or a (class, constant args)
    pair of one a simulated builtin raises), which a `try` of the simulated frames can catch; None when
    only eager code can make it."""

    default_code = "SOT-R001"
    breakable = False

    def __init__(self, opname: str, where: str, detail: str = "", code: str | None = None, raised: Any = None):
        super().__init__(opname, where, detail, code)
        self.raised = raised

    @classmethod
    def of(cls, opname: str, where: str, error: BaseException) -> "FrameRaises":
        """Eager code raises `error` here (a builtin's on values known at translation time): catchable in the
        simulation when it is a builtin exception whose arguments are plain constants."""
        simple = type(error).__module__ == "builtins" and all(_is_plain(a) for a in error.args)
        return cls(opname, where, f"raises {type(error).__name__}: {error}",
                   raised=(type(error), error.args) if simple else None)


def _is_plain(value: Any) -> bool:
    """A constant an exception's arguments may hold and a ConstantVariable models."""
    if isinstance(value, tuple):
        return all(_is_plain(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


class InPlaceUpdate(Unsupported):
    """An in-place update of a tensor that may be aliased: the frame runs eagerly (see `breakable`)."""

    default_code = "SOT-S001"
    breakable = False


HANDLERS: dict[str, Callable[[Any, Any], Any]] = {}


def handles(*opnames: str) -> Callable:
    """Registers the decorated method as the handler of `opnames`."""
    def register(fn: Callable) -> Callable:
        for name in opnames:
            HANDLERS[name] = fn
        return fn
    return register
