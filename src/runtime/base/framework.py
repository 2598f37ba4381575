"""`paddle.base.framework`: the mode queries and program objects model files import from it."""
from __future__ import annotations

from ..mode import in_dynamic_mode
from ..parameter import Parameter
from ..static.framework import (Program, Variable, default_main_program, default_startup_program,
                                 program_guard)

__all__ = ["in_dygraph_mode", "in_dynamic_mode", "in_dynamic_or_pir_mode", "in_pir_mode", "Program", "Variable",
           "Parameter", "EagerParamBase", "default_main_program", "default_startup_program", "program_guard"]

# Paddle's dygraph parameter class; model code checks isinstance(p, EagerParamBase)
EagerParamBase = Parameter


def in_dygraph_mode() -> bool:
    """True unless `paddle.enable_static()` is in effect (Paddle's older name of in_dynamic_mode)."""
    return in_dynamic_mode()


def in_pir_mode() -> bool:
    """False: static programs here are never PIR programs (model code branches on it)."""
    return False


def in_dynamic_or_pir_mode() -> bool:
    """Dynamic mode, or building a PIR program (which never happens here)."""
    return in_dynamic_mode()
