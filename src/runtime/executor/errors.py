"""Error reports of a run: a failing op is re-raised as the same exception type, its message
naming the op type, its plan index, its input shapes and the line that built it."""
from __future__ import annotations

import types
from typing import Any, Callable, Sequence

import numpy as np

from .plan import NO_SLOT, Instruction

__all__ = ["locate", "op_error"]

# generated code object -> (its line -> op index, whether its vars live in a slot list `s`)
CodeTable = dict[types.CodeType, tuple[dict[int, int], bool]]


def locate(codes: CodeTable, e: BaseException) -> tuple[int, Callable[[int], Any]] | None:
    """(op index, slot -> value) of the generated frame the exception came through, if any."""
    tb = e.__traceback__
    while tb is not None:
        entry = codes.get(tb.tb_frame.f_code)
        if entry is not None:
            line_op, slotted = entry
            i = line_op.get(tb.tb_lineno)
            if i is None:
                return None
            frame_locals = tb.tb_frame.f_locals
            if slotted:
                return i, frame_locals["s"].__getitem__
            return i, lambda v: frame_locals.get(f"v{v}")
        tb = tb.tb_next
    return None


def op_error(instrs: Sequence[Instruction], e: Exception, i: int, value: Callable[[int], Any]) -> Exception:
    """`e` again (same type), its message naming the op, its index, input shapes and callsite; `e`
    itself with that text as a note when its type cannot be made from a message alone."""
    ins = instrs[i]
    shapes = ", ".join("None" if s == NO_SLOT else str(list(np.shape(value(s))))
                       if value(s) is not None else "None" for s in ins.inputs)
    msg = (f"{e} [operator '{ins.type}' (#{ins.index} of the plan) failed with input shapes ({shapes}); "
           f"it was built at {ins.callsite}]")
    try:
        new = type(e)(msg)
    except Exception:  # noqa: BLE001 - an exception type that needs more arguments
        e.add_note(msg)
        return e
    return new
