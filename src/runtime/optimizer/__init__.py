"""`paddle.optimizer`: SGD, Momentum, Adam, AdamW, RMSProp and `lr` schedulers."""
from . import lr  # noqa: F401
from .optimizer import Optimizer
from .optimizers import SGD, Adam, AdamW, Momentum, RMSProp

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "RMSProp", "lr"]
