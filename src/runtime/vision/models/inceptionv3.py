"""Inception v3 (for 299x299 inputs; any size from 75x75 runs), in the layout of Paddle's checkpoint."""
from __future__ import annotations

import math
from typing import Any

from ... import nn
from ...nn.initializer import Uniform
from ...nn.param_attr import ParamAttr
from ...ops.shape import concat, reshape
from ...tensor import Tensor
from ..ops import ConvNormActivation
from ._utils import load_pretrained

__all__ = ["InceptionV3", "inception_v3"]

MODEL_URLS: dict[str, tuple[str, str]] = {
    "inception_v3": ("https://paddle-hapi.bj.bcebos.com/models/inception_v3.pdparams",
                     "649a4547c3243e8b59c656f41fe330b8"),
}


def _conv(in_channels: int, out_channels: int, kernel_size: Any, stride: int = 1, padding: Any = 0) -> nn.Layer:
    """Conv-BN-ReLU, the unit every Inception v3 branch is made of."""
    return ConvNormActivation(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=padding,
                              activation_layer=nn.ReLU)


def _avg_pool_3x3() -> nn.Layer:
    """A 3x3 stride-1 average pool that counts the zero padding (exclusive=False)."""
    return nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)


class InceptionStem(nn.Layer):
    """Five conv layers and two max pools: 299x299x3 -> 35x35x192."""

    def __init__(self):
        super().__init__()
        self.conv_1a_3x3 = _conv(3, 32, 3, stride=2)
        self.conv_2a_3x3 = _conv(32, 32, 3)
        self.conv_2b_3x3 = _conv(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _conv(64, 80, 1)
        self.conv_4a_3x3 = _conv(80, 192, 3)

    def forward(self, x: Tensor) -> Tensor:
        x = self.max_pool(self.conv_2b_3x3(self.conv_2a_3x3(self.conv_1a_3x3(x))))
        return self.max_pool(self.conv_4a_3x3(self.conv_3b_1x1(x)))


class InceptionA(nn.Layer):
    """35x35 block: 1x1, 5x5, double 3x3 and pooled branches."""

    def __init__(self, num_channels: int, pool_features: int):
        super().__init__()
        self.branch1x1 = _conv(num_channels, 64, 1)
        self.branch5x5_1 = _conv(num_channels, 48, 1)
        self.branch5x5_2 = _conv(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _conv(num_channels, 64, 1)
        self.branch3x3dbl_2 = _conv(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _conv(96, 96, 3, padding=1)
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _conv(num_channels, pool_features, 1)

    def forward(self, x: Tensor) -> Tensor:
        branches = [self.branch1x1(x), self.branch5x5_2(self.branch5x5_1(x)),
                    self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
                    self.branch_pool_conv(self.branch_pool(x))]
        return concat(branches, axis=1)


class InceptionB(nn.Layer):
    """Grid reduction 35 -> 17: a stride-2 3x3, a double 3x3 and a max pool."""

    def __init__(self, num_channels: int):
        super().__init__()
        self.branch3x3 = _conv(num_channels, 384, 3, stride=2)
        self.branch3x3dbl_1 = _conv(num_channels, 64, 1)
        self.branch3x3dbl_2 = _conv(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _conv(96, 96, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x: Tensor) -> Tensor:
        branches = [self.branch3x3(x), self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
                    self.branch_pool(x)]
        return concat(branches, axis=1)


class InceptionC(nn.Layer):
    """17x17 block with factorised 7x7 convolutions (1x7 and 7x1)."""

    def __init__(self, num_channels: int, channels_7x7: int):
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = _conv(num_channels, 192, 1)
        self.branch7x7_1 = _conv(num_channels, c7, 1)
        self.branch7x7_2 = _conv(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _conv(c7, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _conv(num_channels, c7, 1)
        self.branch7x7dbl_2 = _conv(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _conv(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _conv(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _conv(c7, 192, (1, 7), padding=(0, 3))
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _conv(num_channels, 192, 1)

    def forward(self, x: Tensor) -> Tensor:
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        b7dbl = self.branch7x7dbl_1(x)
        for layer in (self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4, self.branch7x7dbl_5):
            b7dbl = layer(b7dbl)
        return concat([self.branch1x1(x), b7, b7dbl, self.branch_pool_conv(self.branch_pool(x))], axis=1)


class InceptionD(nn.Layer):
    """Grid reduction 17 -> 8: stride-2 3x3 after 1x1, stride-2 3x3 after 1x7/7x1, and a max pool."""

    def __init__(self, num_channels: int):
        super().__init__()
        self.branch3x3_1 = _conv(num_channels, 192, 1)
        self.branch3x3_2 = _conv(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _conv(num_channels, 192, 1)
        self.branch7x7x3_2 = _conv(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _conv(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _conv(192, 192, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x: Tensor) -> Tensor:
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        return concat([b3, b7, self.branch_pool(x)], axis=1)


class InceptionE(nn.Layer):
    """8x8 block whose 3x3 branches split into parallel 1x3 and 3x1 convolutions."""

    def __init__(self, num_channels: int):
        super().__init__()
        self.branch1x1 = _conv(num_channels, 320, 1)
        self.branch3x3_1 = _conv(num_channels, 384, 1)
        self.branch3x3_2a = _conv(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _conv(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _conv(num_channels, 448, 1)
        self.branch3x3dbl_2 = _conv(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _conv(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _conv(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _conv(num_channels, 192, 1)

    def forward(self, x: Tensor) -> Tensor:
        b3 = self.branch3x3_1(x)
        b3 = concat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], axis=1)
        b3dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        b3dbl = concat([self.branch3x3dbl_3a(b3dbl), self.branch3x3dbl_3b(b3dbl)], axis=1)
        return concat([self.branch1x1(x), b3, b3dbl, self.branch_pool_conv(self.branch_pool(x))], axis=1)


class InceptionV3(nn.Layer):
    """The stem, 3 A blocks, B, 4 C blocks, D, 2 E blocks (in `inception_block_list`), average pool, and
    a dropout + linear classifier on the 2048 pooled features."""

    def __init__(self, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.inception_stem = InceptionStem()
        self.inception_block_list = nn.LayerList(
            [InceptionA(192, 32), InceptionA(256, 64), InceptionA(288, 64), InceptionB(288),
             InceptionC(768, 128), InceptionC(768, 160), InceptionC(768, 160), InceptionC(768, 192),
             InceptionD(768), InceptionE(1280), InceptionE(2048)])
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            bound = 1.0 / math.sqrt(2048.0)
            self.fc = nn.Linear(2048, num_classes, weight_attr=ParamAttr(initializer=Uniform(-bound, bound)))

    def forward(self, x: Tensor) -> Tensor:
        x = self.inception_stem(x)
        for block in self.inception_block_list:
            x = block(x)
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(reshape(x, [-1, 2048])))
        return x


def inception_v3(pretrained: bool = False, **kwargs: Any) -> InceptionV3:
    """InceptionV3(**kwargs); `pretrained=True` loads Paddle's published ImageNet weights."""
    model = InceptionV3(**kwargs)
    if pretrained:
        load_pretrained(model, "inception_v3", MODEL_URLS)
    return model
