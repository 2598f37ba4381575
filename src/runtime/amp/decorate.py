"""paddle.amp.decorate: validates its arguments as Paddle does and returns the models and optimizers.

Level O1 never changes them, in Paddle either. Level O2 on a CPU place changes nothing in Paddle's CPU
build. On a GPU place Paddle would cast the parameters to float16 and keep float32 master weights;
runtime has no mixed-precision kernels, so it leaves them in their dtypes and warns (a documented
deviation), and refuses bfloat16, a dtype it lacks.
"""
from __future__ import annotations

import warnings
from typing import Any

from .state import amp_place, amp_place_ok

__all__ = ["decorate", "amp_decorate"]


def decorate(models: Any, optimizers: Any = None, level: str = "O1", dtype: str = "float16",
             master_weight: bool | None = None, save_dtype: str | None = None, master_grad: bool = False,
             excluded_layers: Any = None) -> Any:
    """`models` alone, or `(models, optimizers)` when optimizers are given, unchanged (module docstring)."""
    if level not in ("O1", "O2"):
        raise ValueError("level should be O1 or O2, O1 represent AMP train mode, O2 represent Pure fp16 train mode.")
    if dtype not in ("float16", "bfloat16"):
        raise ValueError("dtype only support float16 or bfloat16.")
    if level == "O2" and amp_place_ok():
        if dtype == "bfloat16":
            raise ValueError("decorate: dtype='bfloat16' is not supported: runtime has no bfloat16 dtype; "
                             "use dtype='float16'")
        warnings.warn(f"decorate(level='O2') on {amp_place()!r}: runtime has no mixed-precision kernels, so the "
                      "parameters keep their dtypes (no float16 copy, no master weights).", UserWarning, stacklevel=2)
    return models if optimizers is None else (models, optimizers)


amp_decorate = decorate
