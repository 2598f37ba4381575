"""`paddle.optimizer`: SGD, Momentum, Adam, AdamW, RMSProp, Adagrad, Adamax, Lamb and `lr` schedulers."""
from . import lr  # noqa: F401
from .optimizer import Optimizer
from .optimizers import SGD, Adagrad, Adam, Adamax, AdamW, Lamb, Momentum, RMSProp

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad", "Adamax", "Lamb", "lr"]
