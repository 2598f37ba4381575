"""Eager reverse-mode autodiff: the tape (`node`), the backward pass (`engine`), grad modes, and
`PyLayer` (an op with Python forward/backward recorded as one node)."""
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .py_layer import PyLayer, PyLayerContext

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "PyLayer",
           "PyLayerContext"]
