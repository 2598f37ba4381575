"""Activation layers: each is its functional form (`F.relu`, `F.softmax`...) with fixed settings."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from ..initializer import Constant
from .layers import Layer, _functional_layer

# (class name, functional name, constructor settings in Paddle's order with defaults)
_ACTIVATIONS = [
    ("CELU", "celu", [("alpha", 1.0)]),
    ("ELU", "elu", [("alpha", 1.0)]),
    ("GELU", "gelu", [("approximate", False)]),
    ("GLU", "glu", [("axis", -1)]),
    ("Hardshrink", "hardshrink", [("threshold", 0.5)]),
    ("Hardsigmoid", "hardsigmoid", []),
    ("Hardswish", "hardswish", []),
    ("Hardtanh", "hardtanh", [("min", -1.0), ("max", 1.0)]),
    ("LeakyReLU", "leaky_relu", [("negative_slope", 0.01)]),
    ("LogSigmoid", "log_sigmoid", []),
    ("LogSoftmax", "log_softmax", [("axis", -1)]),
    ("Mish", "mish", []),
    ("ReLU", "relu", []),
    ("ReLU6", "relu6", []),
    ("SELU", "selu", [("scale", 1.0507009873554804934193349852946), ("alpha", 1.6732632423543772848170429916717)]),
    ("Sigmoid", "sigmoid", []),
    ("Silu", "silu", []),
    ("Softmax", "softmax", [("axis", -1)]),
    ("Softplus", "softplus", [("beta", 1), ("threshold", 20)]),
    ("Softshrink", "softshrink", [("threshold", 0.5)]),
    ("Softsign", "softsign", []),
    ("Swish", "swish", []),
    ("Tanh", "tanh", []),
    ("Tanhshrink", "tanhshrink", []),
    ("ThresholdedReLU", "thresholded_relu", [("threshold", 1.0)]),
]

for _cls, _fn, _settings in _ACTIVATIONS:
    globals()[_cls] = _functional_layer(_cls, _fn, _settings, f"The `{_fn}` activation as a layer (see F.{_fn}).")
SiLU = globals()["Silu"]


class PReLU(Layer):
    """max(0, x) + weight * min(0, x) with a learnt slope per channel (or one shared slope)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, weight_attr: Any = None,
                 data_format: str = "NCHW", name: str | None = None):
        super().__init__()
        if not isinstance(num_parameters, int) or num_parameters < 1:
            raise ValueError(f"PReLU: argument 'num_parameters' must be a positive int, got {num_parameters!r}")
        self._num_parameters = num_parameters
        self._init = init
        self._data_format = data_format
        self._name = name
        self._weight = self.create_parameter(attr=weight_attr, shape=[num_parameters],
                                             default_initializer=Constant(init))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self._weight, data_format=self._data_format)

    def extra_repr(self) -> str:
        name_str = f", name={self._name}" if self._name else ""
        return f"num_parameters={self._num_parameters}, data_format={self._data_format}, init={self._init}{name_str}"


__all__ = [c for c, _, _ in _ACTIVATIONS] + ["SiLU", "PReLU"]
