"""SqueezeNet 1.0 and 1.1 in the layout of Paddle's published checkpoints."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...nn import functional as F
from ...ops.shape import concat, squeeze
from ...tensor import Tensor
from ._utils import load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]

_DYGRAPH = "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
MODEL_URLS: dict[str, tuple[str, str]] = {
    "squeezenet1_0": (_DYGRAPH + "SqueezeNet1_0_pretrained.pdparams", "30b95af60a2178f03cf9b66cd77e1db1"),
    "squeezenet1_1": (_DYGRAPH + "SqueezeNet1_1_pretrained.pdparams", "a11250d3a1f91d7131fd095ebbf09eee"),
}


class MakeFireConv(nn.Layer):
    """Conv2D (with bias) then ReLU."""

    def __init__(self, input_channels: int, output_channels: int, filter_size: int, padding: int = 0):
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, padding=padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self._conv(x))


class MakeFire(nn.Layer):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""

    def __init__(self, input_channels: int, squeeze_channels: int, expand1x1_channels: int,
                 expand3x3_channels: int):
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._conv(inputs)
        return concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


# (squeeze, expand1x1, expand3x3) channels of the eight fire modules, the same in both versions
_FIRES = [(16, 64, 64), (16, 64, 64), (32, 128, 128), (32, 128, 128), (48, 192, 192), (48, 192, 192),
          (64, 256, 256), (64, 256, 256)]
# index of the fire modules each version puts a max pool before
_POOL_BEFORE = {"1.0": (3, 7), "1.1": (2, 4)}


class SqueezeNet(nn.Layer):
    """SqueezeNet `version` "1.0" (7x7 stem) or "1.1" (3x3 stem, earlier pools): fire modules, then a
    1x1 conv classifier (num_classes > 0) and a global average pool (with_pool)."""

    def __init__(self, version: str, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if version not in _POOL_BEFORE:
            raise ValueError(f"SqueezeNet: version must be one of {sorted(_POOL_BEFORE)}, got {version!r}")
        self.version = version
        self.num_classes = num_classes
        self.with_pool = with_pool
        if version == "1.0":
            in_channels = 96
            self._conv = nn.Conv2D(3, in_channels, 7, stride=2)
        else:
            in_channels = 64
            self._conv = nn.Conv2D(3, in_channels, 3, stride=2, padding=1)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self._fires = []
        for i, (squeeze_c, e1, e3) in enumerate(_FIRES, start=1):
            self._fires.append(self.add_sublayer(f"_conv{i}", MakeFire(in_channels, squeeze_c, e1, e3)))
            in_channels = e1 + e3
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        if num_classes > 0:  # Paddle builds an empty [0, 512, 1, 1] conv here; runtime has no empty parameters
            self._conv9 = nn.Conv2D(512, num_classes, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._pool(F.relu(self._conv(inputs)))
        pool_before = _POOL_BEFORE[self.version]
        for i, fire in enumerate(self._fires):
            if i in pool_before:
                x = self._pool(x)
            x = fire(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            x = squeeze(self._avg_pool(F.relu(x)), axis=[2, 3])
        return x


def squeezenet1_0(pretrained: bool = False, **kwargs: Any) -> SqueezeNet:
    """SqueezeNet("1.0", **kwargs); `pretrained=True` loads Paddle's published ImageNet weights."""
    model = SqueezeNet("1.0", **kwargs)
    if pretrained:
        load_pretrained(model, "squeezenet1_0", MODEL_URLS)
    return model


def squeezenet1_1(pretrained: bool = False, **kwargs: Any) -> SqueezeNet:
    """SqueezeNet("1.1", **kwargs); `pretrained=True` loads Paddle's published ImageNet weights."""
    model = SqueezeNet("1.1", **kwargs)
    if pretrained:
        load_pretrained(model, "squeezenet1_1", MODEL_URLS)
    return model
