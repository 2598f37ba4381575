"""Helpers of the executor tests: hand-built programs, pass-free plans and live-byte counting."""
import sys
from typing import Any

import numpy as np
import pytest

import runtime as paddle
from runtime import flags as _flags
from runtime.ops.registry import get_op

PASS_FLAGS = ("FLAGS_enable_dead_op_elimination", "FLAGS_enable_fusion", "FLAGS_enable_inplace")


@pytest.fixture
def no_passes():
    """Plans of exactly the ops a test wrote (no dead-op elimination, fusion or in-place marks)."""
    known = [f for f in PASS_FLAGS if f in _flags._DEFAULTS]  # the passes may not be there yet
    before = paddle.get_flags(known)
    paddle.set_flags({f: False for f in known})
    try:
        yield
    finally:
        paddle.set_flags(before)


def var(block, name: str, shape=(4,), dtype="float64", **flags: Any):
    return block.create_var(name, shape, dtype, **flags)


def op(block, type_: str, inputs: list, outputs: list, **attrs: Any):
    """Append a registry op with its default attributes (overridden by `attrs`), built at the caller's line."""
    caller = sys._getframe(1)
    return block.append_op(type_, inputs, outputs, {**get_op(type_).attrs, **attrs},
                           f"{caller.f_code.co_filename}:{caller.f_lineno}")


def writer(plan, name: str, nth: int = -1) -> int:
    """The plan index of the (nth) op that writes `name`."""
    hits = [ins.index for ins in plan.instructions if plan.var_ids[name] in ins.outputs]
    return hits[nth]


def live_bytes(slots: list, plan, exclude: set) -> int:
    """Bytes of the distinct buffers held by the slots of vars not in `exclude`."""
    owners = {}
    for name, value in zip(plan.var_names, slots):
        if value is None or name in exclude:
            continue
        base = value
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        owners[id(base)] = base.nbytes
    return sum(owners.values())
