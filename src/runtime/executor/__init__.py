"""The executor: InterpreterCore (build a program's plan once, run it many times, sequentially or
in parallel on host threads and emulated device streams) and the `Executor` façade that caches
cores; scopes hold the persistable values between runs. It reads programs through the Protocols
of `program.py` and depends on no package that builds them."""
from .asyncvalue import AsyncValue
from .executor import Executor
from .interpreter import InterpreterCore
from .plan import Instruction, Plan
from .scope import Scope, ScopeVariable, global_scope, scope_guard

__all__ = ["AsyncValue", "Executor", "Scope", "ScopeVariable", "global_scope", "scope_guard", "InterpreterCore", "Plan",
           "Instruction"]
