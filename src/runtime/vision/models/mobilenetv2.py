"""MobileNetV2: inverted residual blocks with linear bottlenecks."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...ops.shape import flatten
from ...tensor import Tensor
from ..ops import ConvNormActivation
from ._utils import load_pretrained, make_divisible

__all__ = ["MobileNetV2", "mobilenet_v2"]

MODEL_URLS: dict[str, tuple[str, str]] = {
    "mobilenetv2_1.0": ("https://paddle-hapi.bj.bcebos.com/models/mobilenet_v2_x1.0.pdparams",
                        "0340af0a901346c8d46f4529882fb63d"),
}


class InvertedResidual(nn.Layer):
    """Expand 1x1 (when expand_ratio != 1), depthwise 3x3, project 1x1; a shortcut when the shape allows."""

    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: float,
                 norm_layer: Callable[..., nn.Layer] = nn.BatchNorm2D):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"InvertedResidual: stride must be 1 or 2, got {stride!r}")
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers: list[nn.Layer] = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer,
                                             activation_layer=nn.ReLU6))
        layers += [ConvNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim, norm_layer=norm_layer,
                                      activation_layer=nn.ReLU6),
                   nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False),
                   norm_layer(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


# (expand ratio, output channels at scale 1, repeats, first stride) of each stage
_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class MobileNetV2(nn.Layer):
    """A stride-2 stem, 17 inverted residual blocks and a 1x1 conv to 1280 channels (more when scale > 1)."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        norm_layer = nn.BatchNorm2D
        input_channel = make_divisible(32 * scale, 8)
        self.last_channel = make_divisible(1280 * max(1.0, scale), 8)
        features: list[nn.Layer] = [ConvNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                                       activation_layer=nn.ReLU6)]
        for t, c, n, s in _STAGES:
            output_channel = make_divisible(c * scale, 8)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t,
                                                 norm_layer=norm_layer))
                input_channel = output_channel
        features.append(ConvNormActivation(input_channel, self.last_channel, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


def mobilenet_v2(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV2:
    """MobileNetV2(scale, **kwargs); `pretrained=True` loads Paddle's ImageNet weights (scale 1.0 only)."""
    model = MobileNetV2(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, f"mobilenetv2_{scale}", MODEL_URLS)
    return model
