"""Eager reverse-mode autodiff: the backward pass (`engine`), grad modes, and `PyLayer` (an op with
Python forward/backward recorded as one node).

The tape it walks (`runtime.ops.tape`) and the grad mode (`runtime.ops.grad_mode`) belong to the
op layer, which writes them on every eager call; this package builds on the ops and is re-exported
as `paddle.autograd`."""
from .engine import backward, grad
from ..ops.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .py_layer import PyLayer, PyLayerContext

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "PyLayer",
           "PyLayerContext"]
