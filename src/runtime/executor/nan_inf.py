"""The per-op nan/inf check of a static run (FLAGS_check_nan_inf).

Paddle's InterpreterCore checks each op's outputs after the op ran when FLAGS_check_nan_inf is
set, and stops the run at the first op that produced a NaN or an Inf: the op that made a bad
value is named, not the loss that shows it many ops later. The InterpreterCore generates the
check into a second variant of its code (one call per float output, on the op's own line, so an
error is reported like any other op error); the code of an unchecked run is unchanged, so the
check costs nothing when the flag is off.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_finite"]


def check_finite(a: Any, op_type: str, index: int, var: str) -> None:
    """Raise RuntimeError (Paddle raises PreconditionNotMet, a RuntimeError in Python) when the
    floating or complex array `a`, output `var` of op `op_type` (#`index` of the plan), holds a
    NaN or an Inf."""
    dtype = getattr(a, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        return
    if bool(np.isfinite(a).all()):   # NumPy's ufuncs dispatch to CuPy for a device array
        return
    num_nan, num_inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    raise RuntimeError(f"There are NAN or INF (num_nan={num_nan}, num_inf={num_inf}) in output '{var}' of operator "
                       f"'{op_type}' (#{index} of the plan) (FLAGS_check_nan_inf is set)")
