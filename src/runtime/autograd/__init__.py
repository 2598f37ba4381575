"""Eager reverse-mode autodiff: the tape (`node`), the backward pass (`engine`), grad modes."""
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]
