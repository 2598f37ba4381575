"""`paddle.tensor.logic`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.creation import full
from ..ops.math import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, equal, greater_equal, greater_than,
    isclose, less_equal, less_than, logical_and, logical_not, logical_or, logical_xor, not_equal)
from ..ops.reduction import allclose, equal_all
from ..ops.shape import broadcast_shape
from ..tensor import is_tensor

__all__ = ["allclose", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast_shape", "equal",
           "equal_all", "full", "greater_equal", "greater_than", "is_tensor", "isclose", "less_equal",
           "less_than", "logical_and", "logical_not", "logical_or", "logical_xor", "not_equal"]
