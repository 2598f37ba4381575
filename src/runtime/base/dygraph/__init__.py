"""`paddle.base.dygraph`: dygraph mode switches and helpers of Paddle 2.x model files."""
from . import base  # noqa: F401
from .base import disable_dygraph, enable_dygraph, enabled, grad, guard, no_grad, to_variable

__all__ = ["base", "disable_dygraph", "enable_dygraph", "enabled", "grad", "guard", "no_grad", "to_variable"]
