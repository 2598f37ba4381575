"""`paddle.base.core`: the few device queries model files call through the core module."""
from ..place import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda

__all__ = ["CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "is_compiled_with_cuda"]
