"""`paddle.hapi`: Paddle's high-level API. `Model` wraps a network with fit/evaluate/predict loops
and checkpoints (model.py), driving the hooks of `callbacks`; `summary` prints a network's layer table
(summary.py) and `flops` counts its floating-point operations (flops.py); `progressbar` draws the
progress lines the loops print."""
from . import callbacks, progressbar  # noqa: F401
from .flops import flops
from .model import Model
from .summary import summary

__all__ = ["Model", "callbacks", "flops", "progressbar", "summary"]
