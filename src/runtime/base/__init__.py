"""`paddle.base`: the module paths older Paddle 2.x model files import from (`paddle.base.param_attr`,
`paddle.base.dygraph`, `paddle.base.framework`, `paddle.base.core`). Every name is an alias of the
runtime object that does the work, never a copy, so `paddle.base.ParamAttr is paddle.ParamAttr`."""
from . import core, dygraph, framework, param_attr  # noqa: F401
from ..executor import Executor, global_scope, scope_guard
from ..flags import get_flags, set_flags
from ..place import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda
from .dygraph import disable_dygraph, enable_dygraph
from .framework import (Program, Variable, default_main_program, default_startup_program, in_dygraph_mode,
                        program_guard)
from .param_attr import ParamAttr

__all__ = ["core", "dygraph", "framework", "param_attr", "ParamAttr", "Program", "Variable",
           "default_main_program", "default_startup_program", "program_guard", "in_dygraph_mode",
           "enable_dygraph", "disable_dygraph", "Executor", "global_scope", "scope_guard", "CPUPlace",
           "CUDAPlace", "CUDAPinnedPlace", "is_compiled_with_cuda", "get_flags", "set_flags"]
