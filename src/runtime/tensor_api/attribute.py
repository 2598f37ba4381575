"""`paddle.tensor.attribute`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..dtypes import is_complex, is_floating_point, is_integer
from ..ops.creation import assign, shape

__all__ = ["assign", "is_complex", "is_floating_point", "is_integer", "shape"]
