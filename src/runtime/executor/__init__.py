"""The executor: runs static Programs (the InterpreterCore lands here)."""
from .naive import Executor
from .scope import Scope, global_scope, scope_guard

__all__ = ["Executor", "Scope", "global_scope", "scope_guard"]
