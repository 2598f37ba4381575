"""`paddle.base.core`: the device queries and the Scope class model files and tests reach through it."""
from ..executor import Scope
from ..place import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda

__all__ = ["CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "Scope", "is_compiled_with_cuda"]
