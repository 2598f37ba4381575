"""Pooling layers: each is its functional form (`F.max_pool2d`...) with fixed settings."""
from __future__ import annotations

from .layers import _REQUIRED, _functional_layer

_R = _REQUIRED
# (class name, functional name, constructor settings in Paddle's order with defaults)
_POOLS = [
    ("MaxPool1D", "max_pool1d", [("kernel_size", _R), ("stride", None), ("padding", 0), ("return_mask", False),
                                 ("ceil_mode", False)]),
    ("MaxPool2D", "max_pool2d", [("kernel_size", _R), ("stride", None), ("padding", 0), ("return_mask", False),
                                 ("ceil_mode", False), ("data_format", "NCHW")]),
    ("MaxPool3D", "max_pool3d", [("kernel_size", _R), ("stride", None), ("padding", 0), ("return_mask", False),
                                 ("ceil_mode", False), ("data_format", "NCDHW")]),
    ("AvgPool1D", "avg_pool1d", [("kernel_size", _R), ("stride", None), ("padding", 0), ("exclusive", True),
                                 ("ceil_mode", False)]),
    ("AvgPool2D", "avg_pool2d", [("kernel_size", _R), ("stride", None), ("padding", 0), ("ceil_mode", False),
                                 ("exclusive", True), ("divisor_override", None), ("data_format", "NCHW")]),
    ("AvgPool3D", "avg_pool3d", [("kernel_size", _R), ("stride", None), ("padding", 0), ("ceil_mode", False),
                                 ("exclusive", True), ("divisor_override", None), ("data_format", "NCDHW")]),
    ("AdaptiveAvgPool1D", "adaptive_avg_pool1d", [("output_size", _R)]),
    ("AdaptiveAvgPool2D", "adaptive_avg_pool2d", [("output_size", _R), ("data_format", "NCHW")]),
    ("AdaptiveAvgPool3D", "adaptive_avg_pool3d", [("output_size", _R), ("data_format", "NCDHW")]),
    ("AdaptiveMaxPool1D", "adaptive_max_pool1d", [("output_size", _R), ("return_mask", False)]),
    ("AdaptiveMaxPool2D", "adaptive_max_pool2d", [("output_size", _R), ("return_mask", False)]),
    ("AdaptiveMaxPool3D", "adaptive_max_pool3d", [("output_size", _R), ("return_mask", False)]),
]

for _cls, _fn, _settings in _POOLS:
    globals()[_cls] = _functional_layer(_cls, _fn, _settings, f"`F.{_fn}` as a layer.")

__all__ = [c for c, _, _ in _POOLS]
