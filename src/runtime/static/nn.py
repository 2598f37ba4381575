"""`paddle.static.nn`: layer functions that create their parameters as they build ops."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..nn import functional as F
from ..nn.layer.layers import _create_parameter
from ..ops import shape as _shape
from .control_flow import case, cond, switch_case, while_loop
from .framework import unique_name

__all__ = ["fc", "cond", "case", "switch_case", "while_loop"]

_ACTIVATIONS = {None: None, "relu": F.relu, "sigmoid": F.sigmoid, "tanh": F.tanh, "softmax": F.softmax,
                "gelu": F.gelu}


def fc(x: Any, size: int, num_flatten_dims: int = 1, weight_attr: Any = None, bias_attr: Any = None,
       activation: str | None = None, name: str | None = None):
    """Fully connected: flatten dims from `num_flatten_dims` on, x @ W + b, then `activation`."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"fc: argument 'size' must be a positive int, got {size!r}")
    if activation not in _ACTIVATIONS:
        raise ValueError(f"fc: argument 'activation' must be one of {sorted(k for k in _ACTIVATIONS if k)} "
                         f"or None, got {activation!r}")
    in_shape = list(x.shape)
    if not 1 <= num_flatten_dims < len(in_shape):
        raise ValueError(f"fc: argument 'num_flatten_dims' must be in [1, {len(in_shape) - 1}] for input "
                         f"shape {in_shape}, got {num_flatten_dims}")
    in_features = int(np.prod(in_shape[num_flatten_dims:]))
    if in_features <= 0:
        raise ValueError(f"fc: the flattened input dims {in_shape[num_flatten_dims:]} must be known")
    scope = name or unique_name("fc")
    w = _create_parameter(scope, [in_features, size], weight_attr, x.dtype, False, None)
    b = _create_parameter(scope, [size], bias_attr, x.dtype, True, None)
    if len(in_shape) != num_flatten_dims + 1:
        x = _shape.reshape(x, [0] * num_flatten_dims + [in_features])
    out = F.linear(x, w, b)
    act = _ACTIVATIONS[activation]
    return out if act is None else act(out)
