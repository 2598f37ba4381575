"""Graph breaks: where the translated frame stops being simulated and runs one instruction for real.

When the root frame meets an instruction it cannot simulate (a decision on a tensor's value, a
call it cannot capture, an opcode without a handler, a side effect), it raises `GraphBreak` at that
instruction, with the simulated state as it was before it. The translator then compiles what was
recorded so far, emits code that rebuilds the frame's locals and stack, runs that instruction
itself, and continues in a resume function per successor (see sot.codegen.break_code).

A break inside an inlined call resumes inside the callee: as the GraphBreak passes up through each
caller's CALL it collects a `FrameState` per frame (innermost first), so the generated code can
rebuild every frame of the inline call stack, run the instruction in the innermost one and return
through resume functions of each (the callee's rest, then each caller's rest after its CALL). A
frame that cannot be resumed (see `OpcodeExecutor.resume_blocker`) makes its caller break at the
call instead: the call runs for real, its callee translated as a frame of its own.

`breakable(code, ins)` says whether an instruction can be run for real in generated code: its
stack effect on each successor is known (`successors`), and an exception it raises can reach the
user's `except`/`finally` exactly as in eager code (no handler, or one a resume function can enter).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from sot.pyversion import Instruction, NormalisedCode

from .dispatch import Unsupported

__all__ = ["CALLS", "FrameState", "GraphBreak", "breakable", "successors"]

CALLS = frozenset({"CALL", "CALL_FUNCTION_EX"})  # the instructions that inline a callee a break can resume in

# opname -> stack effect when execution falls through to the next instruction
_FALL_THROUGH: dict[str, Callable[[Instruction], int]] = {
    "POP_JUMP_IF_TRUE": lambda i: -1, "POP_JUMP_IF_FALSE": lambda i: -1,
    "POP_JUMP_IF_NONE": lambda i: -1, "POP_JUMP_IF_NOT_NONE": lambda i: -1,
    "CALL": lambda i: -i.arg - 1,
    "CALL_FUNCTION_EX": lambda i: -3 - (i.arg & 1) + 1,
    "UNARY_NOT": lambda i: 0, "TO_BOOL": lambda i: 0, "UNARY_NEGATIVE": lambda i: 0, "UNARY_INVERT": lambda i: 0,
    "GET_ITER": lambda i: 0, "FORMAT_SIMPLE": lambda i: 0, "CONVERT_VALUE": lambda i: 0,
    "FORMAT_WITH_SPEC": lambda i: -1, "BUILD_STRING": lambda i: 1 - i.arg,
    "BINARY_OP": lambda i: -1, "BINARY_SUBSCR": lambda i: -1, "BINARY_SLICE": lambda i: -2,
    "COMPARE_OP": lambda i: -1, "CONTAINS_OP": lambda i: -1, "IS_OP": lambda i: -1,
    "UNPACK_SEQUENCE": lambda i: i.arg - 1,
    "LOAD_ATTR": lambda i: 1 if i.is_method else 0,
    "STORE_ATTR": lambda i: -2, "STORE_SUBSCR": lambda i: -3, "STORE_SLICE": lambda i: -4,
    "STORE_GLOBAL": lambda i: -1, "DELETE_SUBSCR": lambda i: -2, "DELETE_ATTR": lambda i: -1,
    "BUILD_SET": lambda i: 1 - i.arg, "FOR_ITER": lambda i: 1,
    "LOAD_BUILD_CLASS": lambda i: 1,  # (a class made in the frame: made for real, once per call)
    "BEFORE_WITH": lambda i: 1,  # (a manager entered for real, when asked: the block resumes with its __exit__)
}
# opname -> stack items it pushes when it falls through (the rest of its effect is what it pops; 1 if absent)
_PUSHES: dict[str, Callable[[Instruction], int]] = {
    "UNPACK_SEQUENCE": lambda i: i.arg, "FOR_ITER": lambda i: 2, "BEFORE_WITH": lambda i: 2,
    **dict.fromkeys(("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
                     "STORE_ATTR", "STORE_SUBSCR", "STORE_SLICE", "STORE_GLOBAL", "DELETE_SUBSCR",
                     "DELETE_ATTR"), lambda i: 0),
}
# opname -> stack effect when it jumps to its target (it pushes nothing then)
_JUMPED: dict[str, int] = {
    "POP_JUMP_IF_TRUE": -1, "POP_JUMP_IF_FALSE": -1, "POP_JUMP_IF_NONE": -1, "POP_JUMP_IF_NOT_NONE": -1,
    "FOR_ITER": -1,  # an exhausted iterator is popped (END_FOR is folded into the jump in the model)
}


@dataclass(frozen=True)
class FrameState:
    """One frame of the inline call stack at a break: its executor, the instruction it was at (the
    breaking one, or the CALL of the next frame in) and its stack before that instruction."""

    executor: Any
    instruction: Instruction
    stack: list


class GraphBreak(Exception):
    """The translation breaks at `instruction` because of `cause` (an Unsupported with its reason
    code); `frames` holds the frames it passed through, innermost (the breaking one) first.
    `call_site` says why it broke at a CALL instead of inside the callee (None: it did not);
    `barrier`: what was recorded from that birth number on belongs to the breaking instruction."""

    def __init__(self, instruction: Instruction, cause: Unsupported, frame: FrameState,
                 call_site: str | None = None, barrier: int = 0):
        self.instruction = instruction
        self.cause = cause
        self.frames = [frame]
        self.call_site = call_site
        self.barrier = barrier
        super().__init__(f"graph break at {instruction.opname}: {cause}")


def breakable(code: NormalisedCode, ins: Instruction, enters: bool = False) -> bool:
    """Whether generated code can run `ins` for real and resume after it. Under a `try` or inside a
    `with` body it can: the generated code sends what `ins` raises to a resume function entered at
    the handler (a `with` body's handler, which wants an offset under the exception, gets its resume
    function's first); whether the `with`'s context can be rebuilt is the break code's to say.
    BEFORE_WITH only when the break asks to enter its manager for real (`enters`): entering one whose
    state the simulation must see (amp, grad mode) would leave the resumed block simulated without it."""
    if ins.opname == "BEFORE_WITH":
        return enters
    if ins.opname == "LOAD_ATTR" and ins.is_method:
        return False  # it may push a NULL slot, which the break's tail could not pass on
    return ins.opname in _FALL_THROUGH


def successors(code: NormalisedCode, ins: Instruction) -> list[tuple[Instruction, int, int]]:
    """Where execution goes after `ins`, each with the stack effect of getting there and how many of
    the items then on top `ins` pushed (those below it left as they were)."""
    index = code.index(ins)
    out = []
    if index + 1 < len(code.instructions):
        out.append((code.instructions[index + 1], _FALL_THROUGH[ins.opname](ins),
                    _PUSHES.get(ins.opname, lambda i: 1)(ins)))
    if ins.opname in _JUMPED:
        out.append((ins.target, _JUMPED[ins.opname], 0))
    return out

