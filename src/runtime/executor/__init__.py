"""The executor: InterpreterCore (build a program's plan once, run it many times) and the
`Executor` façade that caches cores; scopes hold the persistable values between runs."""
from .executor import Executor
from .interpreter import InterpreterCore
from .plan import Instruction, Plan
from .scope import Scope, ScopeVariable, global_scope, scope_guard

__all__ = ["Executor", "Scope", "ScopeVariable", "global_scope", "scope_guard", "InterpreterCore", "Plan",
           "Instruction"]
