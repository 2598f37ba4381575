"""DenseNet-121/161/169/201/264 in the layout of Paddle's published checkpoints (legacy BatchNorm with act)."""
from __future__ import annotations

import math
from typing import Any, Callable

from ... import nn
from ...nn.initializer import Uniform
from ...nn.param_attr import ParamAttr
from ...ops.shape import concat, flatten
from ...tensor import Tensor
from ._utils import load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201", "densenet264"]

_DYGRAPH = "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
MODEL_URLS: dict[str, tuple[str, str]] = {
    "densenet121": (_DYGRAPH + "DenseNet121_pretrained.pdparams", "db1b239ed80a905290fd8b01d3af08e4"),
    "densenet161": (_DYGRAPH + "DenseNet161_pretrained.pdparams", "62158869cb315098bd25ddbfd308a853"),
    "densenet169": (_DYGRAPH + "DenseNet169_pretrained.pdparams", "82cc7c635c3f19098c748850efb2d796"),
    "densenet201": (_DYGRAPH + "DenseNet201_pretrained.pdparams", "16ca29565a7712329cf9e36e02caaf58"),
    "densenet264": (_DYGRAPH + "DenseNet264_pretrained.pdparams", "3270ce516b85370bba88cfdd9f60bff4"),
}

# layers -> (initial features, growth rate, dense layers per block)
_SPECS: dict[int, tuple[int, int, list[int]]] = {
    121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]), 169: (64, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]), 264: (64, 32, [6, 12, 64, 48]),
}


class BNACConvLayer(nn.Layer):
    """Pre-activation: BatchNorm with its activation, then a bias-free Conv2D."""

    def __init__(self, num_channels: int, num_filters: int, filter_size: int, stride: int = 1, pad: int = 0,
                 groups: int = 1, act: str = "relu"):
        super().__init__()
        self._batch_norm = nn.BatchNorm(num_channels, act=act)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride, padding=pad, groups=groups,
                               bias_attr=False)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv(self._batch_norm(input))


class DenseLayer(nn.Layer):
    """A 1x1 bottleneck (bn_size x growth) and a 3x3 conv to `growth_rate` channels, appended to the input."""

    def __init__(self, num_channels: int, growth_rate: int, bn_size: int, dropout: float):
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1, pad=0, stride=1)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1, stride=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        conv = self.bn_ac_func2(self.bn_ac_func1(input))
        if self.dropout:
            conv = self.dropout_func(conv)
        return concat([input, conv], axis=1)


class DenseBlock(nn.Layer):
    """`num_layers` dense layers, each seeing every earlier layer's output."""

    def __init__(self, num_channels: int, num_layers: int, bn_size: int, growth_rate: int, dropout: float,
                 name: str | None = None):
        super().__init__()
        self.dropout = dropout
        self.dense_layer_func = [
            self.add_sublayer(f"{name}_{i + 1}", DenseLayer(num_channels + i * growth_rate, growth_rate, bn_size,
                                                            dropout))
            for i in range(num_layers)]

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        conv = input
        for layer in self.dense_layer_func:
            conv = layer(conv)
        return conv


class TransitionLayer(nn.Layer):
    """BN-ReLU-1x1 conv to `num_output_features`, then a 2x2 average pool."""

    def __init__(self, num_channels: int, num_output_features: int):
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1, pad=0, stride=1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self.pool2d_avg(self.conv_ac_func(input))


class ConvBNLayer(nn.Layer):
    """A bias-free Conv2D, then BatchNorm with its activation."""

    def __init__(self, num_channels: int, num_filters: int, filter_size: int, stride: int = 1, pad: int = 0,
                 groups: int = 1, act: str = "relu"):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride, padding=pad, groups=groups,
                               bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._batch_norm(self._conv(input))


class DenseNet(nn.Layer):
    """A 7x7 stem and max pool, four dense blocks joined by transition layers halving the channels,
    a final BN-ReLU, average pool and linear classifier. `layers` picks the depth."""

    def __init__(self, layers: int = 121, bn_size: int = 4, dropout: float = 0.0, num_classes: int = 1000,
                 with_pool: bool = True):
        super().__init__()
        if layers not in _SPECS:
            raise ValueError(f"DenseNet: layers must be one of {sorted(_SPECS)}, got {layers!r}")
        self.num_classes = num_classes
        self.with_pool = with_pool
        num_features, growth_rate, block_config = _SPECS[layers]
        self.conv1_func = ConvBNLayer(3, num_features, 7, stride=2, pad=3, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.block_config = block_config
        self.dense_block_func_list = []
        self.transition_func_list = []
        for i, num_layers in enumerate(block_config):
            block = DenseBlock(num_features, num_layers, bn_size, growth_rate, dropout, name=f"conv{i + 2}")
            self.dense_block_func_list.append(self.add_sublayer(f"db_conv_{i + 2}", block))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                transition = TransitionLayer(num_features, num_features // 2)
                self.transition_func_list.append(self.add_sublayer(f"tr_conv{i + 2}_blk", transition))
                num_features //= 2
        self.batch_norm = nn.BatchNorm(num_features, act="relu")
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            bound = 1.0 / math.sqrt(num_features)
            self.out = nn.Linear(num_features, num_classes, weight_attr=ParamAttr(initializer=Uniform(-bound, bound)))

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        x = self.pool2d_max(self.conv1_func(input))
        for i, block in enumerate(self.dense_block_func_list):
            x = block(x)
            if i < len(self.transition_func_list):
                x = self.transition_func_list[i](x)
        x = self.batch_norm(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.out(flatten(x, 1))
        return x


def _constructor(layers: int) -> Callable[..., DenseNet]:
    arch = f"densenet{layers}"

    def build(pretrained: bool = False, **kwargs: Any) -> DenseNet:
        model = DenseNet(layers=layers, **kwargs)
        if pretrained:
            load_pretrained(model, arch, MODEL_URLS)
        return model

    build.__name__ = build.__qualname__ = arch
    build.__doc__ = f"DenseNet(layers={layers}, **kwargs); `pretrained=True` loads Paddle's published ImageNet weights."
    return build


densenet121 = _constructor(121)
densenet161 = _constructor(161)
densenet169 = _constructor(169)
densenet201 = _constructor(201)
densenet264 = _constructor(264)
