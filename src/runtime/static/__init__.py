"""`paddle.static`: programs built by the public API in static mode, and their execution."""
from . import nn  # noqa: F401
from ..executor import Executor, Scope, global_scope, scope_guard
from ..executor.program import set_frontend
from ..metric import accuracy
from ..ops.indexing import setitem
from .backward import append_backward, gradients
from .builder import InputSpec, appending_to, data, disable_static, enable_static, in_dynamic_mode, stand_in_layer
from .framework import (Block, Operator, Program, Variable, default_main_program, default_startup_program,
                        program_guard)
from .frontend import STATIC_FRONTEND
from .io import load_inference_model, save_inference_model

set_frontend(STATIC_FRONTEND)   # the executor below runs this package's programs without importing it

__all__ = ["Program", "Block", "Operator", "Variable", "program_guard", "default_main_program",
           "default_startup_program", "data", "InputSpec", "enable_static", "disable_static",
           "in_dynamic_mode", "nn", "Executor", "Scope", "global_scope", "scope_guard", "append_backward",
           "gradients", "save_inference_model", "load_inference_model", "setitem", "accuracy", "appending_to",
           "stand_in_layer"]
