"""The opcode handler table and the two ways a simulation gives up.

`HANDLERS` maps a normalised opname to the OpcodeExecutor method that simulates it; modules
holding handler families (attributes, calls, the executor itself) register with `@handles`.
`Unsupported` says the frame uses something not simulated (run it eagerly, the reason
recorded); `FrameRaises` says the frame raises an exception of its own, which eager code
raises with its own type and message.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["HANDLERS", "handles", "Unsupported", "FrameRaises"]


class Unsupported(Exception):
    """The frame uses something this executor cannot simulate yet: a reason to run it eagerly."""

    def __init__(self, opname: str, where: str, detail: str = ""):
        self.opname = opname
        self.where = where
        self.detail = detail
        self.reason = f"{opname}: {detail}" if detail else f"unsupported opcode {opname}"
        super().__init__(f"{self.reason} at {where}")


class FrameRaises(Unsupported):
    """The frame raises an exception of its own (`raise` reached): eager code raises it, with its message."""


HANDLERS: dict[str, Callable[[Any, Any], Any]] = {}


def handles(*opnames: str) -> Callable:
    """Registers the decorated method as the handler of `opnames`."""
    def register(fn: Callable) -> Callable:
        for name in opnames:
            HANDLERS[name] = fn
        return fn
    return register
