"""MobileNetV3 Small and Large: inverted residuals with squeeze-excitation and hard-swish."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from ... import nn
from ...ops.math import add
from ...ops.shape import flatten
from ...tensor import Tensor
from ..ops import ConvNormActivation
from ._utils import load_pretrained, make_divisible

__all__ = ["MobileNetV3Small", "MobileNetV3Large", "mobilenet_v3_small", "mobilenet_v3_large"]

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
MODEL_URLS: dict[str, tuple[str, str]] = {
    "mobilenet_v3_small_x1.0": (_HAPI + "mobilenet_v3_small_x1.0.pdparams", "34fe0e7c1f8b00b2b056ad6788d0590c"),
    "mobilenet_v3_large_x1.0": (_HAPI + "mobilenet_v3_large_x1.0.pdparams", "118db5792b4e183b925d8e8e334db3df"),
}

_ACTIVATIONS: dict[str, Callable[..., nn.Layer]] = {"relu": nn.ReLU, "hardswish": nn.Hardswish}


class SqueezeExcitation(nn.Layer):
    """Scale each channel by a gate computed from the globally pooled input (two 1x1 convs)."""

    def __init__(self, input_channels: int, squeeze_channels: int, activation: Callable[..., nn.Layer] = nn.ReLU,
                 scale_activation: Callable[..., nn.Layer] = nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        gate = self.fc2(self.activation(self.fc1(self.avgpool(input))))
        return self.scale_activation(gate) * input


class InvertedResidualConfig:
    """One block's settings, with channel counts scaled by `scale` and rounded to multiples of 8."""

    def __init__(self, in_channels: int, kernel: int, expanded_channels: int, out_channels: int, use_se: bool,
                 activation: str | None, stride: int, scale: float = 1.0):
        if activation is not None and activation not in _ACTIVATIONS:
            raise RuntimeError(f"MobileNetV3: unsupported activation {activation!r}")
        self.in_channels = self.adjust_channels(in_channels, scale)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, scale)
        self.out_channels = self.adjust_channels(out_channels, scale)
        self.use_se = use_se
        self.activation_layer = None if activation is None else _ACTIVATIONS[activation]
        self.stride = stride

    @staticmethod
    def adjust_channels(channels: int, scale: float = 1.0) -> int:
        return make_divisible(channels * scale, 8)


class InvertedResidual(nn.Layer):
    """Optional 1x1 expand, depthwise conv, optional squeeze-excitation, linear 1x1 project, shortcut."""

    def __init__(self, in_channels: int, expanded_channels: int, out_channels: int, filter_size: int, stride: int,
                 use_se: bool, activation_layer: Callable[..., nn.Layer] | None,
                 norm_layer: Callable[..., nn.Layer]):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.use_se = use_se
        self.expand = in_channels != expanded_channels
        if self.expand:
            self.expand_conv = ConvNormActivation(in_channels, expanded_channels, kernel_size=1, stride=1, padding=0,
                                                  norm_layer=norm_layer, activation_layer=activation_layer)
        self.bottleneck_conv = ConvNormActivation(expanded_channels, expanded_channels, kernel_size=filter_size,
                                                  stride=stride, padding=(filter_size - 1) // 2,
                                                  groups=expanded_channels, norm_layer=norm_layer,
                                                  activation_layer=activation_layer)
        if use_se:
            self.mid_se = SqueezeExcitation(expanded_channels, make_divisible(expanded_channels // 4),
                                            scale_activation=nn.Hardsigmoid)
        self.linear_conv = ConvNormActivation(expanded_channels, out_channels, kernel_size=1, stride=1, padding=0,
                                              norm_layer=norm_layer, activation_layer=None)

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        if self.expand:
            x = self.expand_conv(x)
        x = self.bottleneck_conv(x)
        if self.use_se:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        return add(identity, x) if self.use_res_connect else x


class MobileNetV3(nn.Layer):
    """The shared body: a hard-swish stem, the configured blocks, a 1x1 conv to 6x the last block's
    input channels, and a two-layer classifier of width `last_channel`."""

    def __init__(self, config: list[InvertedResidualConfig], last_channel: int, scale: float = 1.0,
                 num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.config = config
        self.scale = scale
        self.last_channel = last_channel
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.firstconv_in_channels = config[0].in_channels
        self.lastconv_in_channels = config[-1].in_channels
        self.lastconv_out_channels = self.lastconv_in_channels * 6
        norm_layer = partial(nn.BatchNorm2D, epsilon=0.001, momentum=0.99)
        self.conv = ConvNormActivation(3, self.firstconv_in_channels, kernel_size=3, stride=2, padding=1, groups=1,
                                       activation_layer=nn.Hardswish, norm_layer=norm_layer)
        self.blocks = nn.Sequential(*[
            InvertedResidual(cfg.in_channels, cfg.expanded_channels, cfg.out_channels, cfg.kernel, cfg.stride,
                             cfg.use_se, cfg.activation_layer, norm_layer) for cfg in config])
        self.lastconv = ConvNormActivation(self.lastconv_in_channels, self.lastconv_out_channels, kernel_size=1,
                                           stride=1, padding=0, groups=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Linear(self.lastconv_out_channels, last_channel), nn.Hardswish(),
                                            nn.Dropout(p=0.2), nn.Linear(last_channel, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        x = self.lastconv(self.blocks(self.conv(x)))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


# (in, kernel, expanded, out, squeeze-excitation, activation, stride) at scale 1
_SMALL = [(16, 3, 16, 16, True, "relu", 2), (16, 3, 72, 24, False, "relu", 2), (24, 3, 88, 24, False, "relu", 1),
          (24, 5, 96, 40, True, "hardswish", 2), (40, 5, 240, 40, True, "hardswish", 1),
          (40, 5, 240, 40, True, "hardswish", 1), (40, 5, 120, 48, True, "hardswish", 1),
          (48, 5, 144, 48, True, "hardswish", 1), (48, 5, 288, 96, True, "hardswish", 2),
          (96, 5, 576, 96, True, "hardswish", 1), (96, 5, 576, 96, True, "hardswish", 1)]
_LARGE = [(16, 3, 16, 16, False, "relu", 1), (16, 3, 64, 24, False, "relu", 2), (24, 3, 72, 24, False, "relu", 1),
          (24, 5, 72, 40, True, "relu", 2), (40, 5, 120, 40, True, "relu", 1), (40, 5, 120, 40, True, "relu", 1),
          (40, 3, 240, 80, False, "hardswish", 2), (80, 3, 200, 80, False, "hardswish", 1),
          (80, 3, 184, 80, False, "hardswish", 1), (80, 3, 184, 80, False, "hardswish", 1),
          (80, 3, 480, 112, True, "hardswish", 1), (112, 3, 672, 112, True, "hardswish", 1),
          (112, 5, 672, 160, True, "hardswish", 2), (160, 5, 960, 160, True, "hardswish", 1),
          (160, 5, 960, 160, True, "hardswish", 1)]


class MobileNetV3Small(MobileNetV3):
    """MobileNetV3-Small: 11 blocks, classifier width 1024 x scale."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__([InvertedResidualConfig(*row, scale) for row in _SMALL], make_divisible(1024 * scale, 8),
                         scale=scale, num_classes=num_classes, with_pool=with_pool)


class MobileNetV3Large(MobileNetV3):
    """MobileNetV3-Large: 15 blocks, classifier width 1280 x scale."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__([InvertedResidualConfig(*row, scale) for row in _LARGE], make_divisible(1280 * scale, 8),
                         scale=scale, num_classes=num_classes, with_pool=with_pool)


def mobilenet_v3_small(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV3Small:
    """MobileNetV3Small(scale, **kwargs); `pretrained=True` loads Paddle's ImageNet weights (scale 1.0 only)."""
    model = MobileNetV3Small(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, f"mobilenet_v3_small_x{scale}", MODEL_URLS)
    return model


def mobilenet_v3_large(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV3Large:
    """MobileNetV3Large(scale, **kwargs); `pretrained=True` loads Paddle's ImageNet weights (scale 1.0 only)."""
    model = MobileNetV3Large(scale=scale, **kwargs)
    if pretrained:
        load_pretrained(model, f"mobilenet_v3_large_x{scale}", MODEL_URLS)
    return model
