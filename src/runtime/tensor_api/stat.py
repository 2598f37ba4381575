"""`paddle.tensor.stat`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.creation import numel
from ..ops.math import cast
from ..ops.reduction import mean, median, std, var

__all__ = ["cast", "mean", "median", "numel", "std", "var"]
