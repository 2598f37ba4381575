"""MobileNetV1: depthwise-separable convolutions, width scaled by `scale`."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...ops.shape import flatten
from ...tensor import Tensor
from ..ops import ConvNormActivation
from ._utils import load_pretrained

__all__ = ["MobileNetV1", "mobilenet_v1"]

MODEL_URLS: dict[str, tuple[str, str]] = {
    "mobilenetv1_1.0": ("https://paddle-hapi.bj.bcebos.com/models/mobilenetv1_1.0.pdparams",
                        "3033ab1975b1670bef51545feb65fc45"),
}


class DepthwiseSeparable(nn.Layer):
    """A 3x3 depthwise conv-BN-ReLU then a 1x1 pointwise conv-BN-ReLU."""

    def __init__(self, in_channels: int, out_channels1: int, out_channels2: int, num_groups: int, stride: int,
                 scale: float):
        super().__init__()
        self._depthwise_conv = ConvNormActivation(in_channels, int(out_channels1 * scale), kernel_size=3,
                                                  stride=stride, padding=1, groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(int(out_channels1 * scale), int(out_channels2 * scale),
                                                  kernel_size=1, stride=1, padding=0)

    def forward(self, x: Tensor) -> Tensor:
        return self._pointwise_conv(self._depthwise_conv(x))


# (sublayer name, channels at scale 1 in, out, stride) of the separable blocks
_BLOCKS = ([("conv2_1", 32, 64, 1), ("conv2_2", 64, 128, 2), ("conv3_1", 128, 128, 1), ("conv3_2", 128, 256, 2),
            ("conv4_1", 256, 256, 1), ("conv4_2", 256, 512, 2)]
           + [(f"conv5_{i}", 512, 512, 1) for i in range(1, 6)]
           + [("conv5_6", 512, 1024, 2), ("conv6", 1024, 1024, 1)])


class MobileNetV1(nn.Layer):
    """A stride-2 stem and 13 depthwise-separable blocks; `scale` multiplies every width."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        self.dwsl = [self.add_sublayer(name, DepthwiseSeparable(int(cin * scale), cin, cout, cin, stride, scale))
                     for name, cin, cout, stride in _BLOCKS]
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


def mobilenet_v1(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV1:
    """MobileNetV1(scale, **kwargs); `pretrained=True` loads Paddle's ImageNet weights (scale 1.0 only)."""
    model = MobileNetV1(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, f"mobilenetv1_{scale}", MODEL_URLS)
    return model
