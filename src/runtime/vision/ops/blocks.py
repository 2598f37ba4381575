"""Reusable blocks of the vision models (`paddle.vision.ops.ConvNormActivation`)."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn

__all__ = ["ConvNormActivation"]


class ConvNormActivation(nn.Sequential):
    """Conv2D, then an optional norm layer, then an optional activation, as one Sequential.

    Sublayers are numbered "0", "1", "2" in that order (Paddle checkpoints name them so). The
    convolution has a bias only when there is no norm layer to absorb it, unless `bias` says
    otherwise; `padding=None` keeps the spatial size at stride 1.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any = 3, stride: Any = 1,
                 padding: Any = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Layer] | None = nn.BatchNorm2D,
                 activation_layer: Callable[..., nn.Layer] | None = nn.ReLU, dilation: int = 1,
                 bias: bool | None = None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers: list[nn.Layer] = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding,
                                            dilation=dilation, groups=groups, bias_attr=None if bias else False)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)
