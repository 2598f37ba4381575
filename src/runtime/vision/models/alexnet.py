"""AlexNet in the layout of Paddle's published checkpoint (`_conv1`.., `_fc6`..)."""
from __future__ import annotations

import math
from typing import Any

from ... import nn
from ...nn import functional as F
from ...nn.initializer import Uniform
from ...nn.param_attr import ParamAttr
from ...ops.shape import flatten
from ...tensor import Tensor
from ._utils import load_pretrained

__all__ = ["AlexNet", "alexnet"]

MODEL_URLS: dict[str, tuple[str, str]] = {
    "alexnet": ("https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/AlexNet_pretrained.pdparams",
                "7f0f9f737132e02732d75a1459d98a43"),
}


def _uniform_attr(fan_in: int) -> ParamAttr:
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the initialisation the checkpoint was trained from."""
    bound = 1.0 / math.sqrt(fan_in)
    return ParamAttr(initializer=Uniform(-bound, bound))


class ConvPoolLayer(nn.Layer):
    """Conv2D, an optional ReLU, then a 3x3 stride-2 max pool."""

    def __init__(self, input_channels: int, output_channels: int, filter_size: int, stride: int, padding: int,
                 stdv: float, groups: int = 1, act: str | None = None):
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        attr = ParamAttr(initializer=Uniform(-stdv, stdv))
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, stride=stride, padding=padding,
                               groups=groups, weight_attr=attr, bias_attr=attr)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._conv(inputs)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    """Five convolutions (three followed by max pools) and, when num_classes > 0, three linear layers
    with 'downscale_in_infer' dropout, for 224x224 inputs."""

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, 1.0 / math.sqrt(3 * 11 * 11), act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, 1.0 / math.sqrt(64 * 5 * 5), act="relu")
        self._conv3 = nn.Conv2D(192, 384, 3, stride=1, padding=1, weight_attr=_uniform_attr(192 * 9),
                                bias_attr=_uniform_attr(192 * 9))
        self._conv4 = nn.Conv2D(384, 256, 3, stride=1, padding=1, weight_attr=_uniform_attr(384 * 9),
                                bias_attr=_uniform_attr(384 * 9))
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, 1.0 / math.sqrt(256 * 9), act="relu")
        if num_classes > 0:
            fan_in = 256 * 6 * 6
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(fan_in, 4096, weight_attr=_uniform_attr(fan_in), bias_attr=_uniform_attr(fan_in))
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = nn.Linear(4096, 4096, weight_attr=_uniform_attr(fan_in), bias_attr=_uniform_attr(fan_in))
            self._fc8 = nn.Linear(4096, num_classes, weight_attr=_uniform_attr(fan_in),
                                  bias_attr=_uniform_attr(fan_in))

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._conv2(self._conv1(inputs))
        x = F.relu(self._conv4(F.relu(self._conv3(x))))
        x = self._conv5(x)
        if self.num_classes > 0:
            x = F.relu(self._fc6(self._drop1(flatten(x, 1))))
            x = F.relu(self._fc7(self._drop2(x)))
            x = self._fc8(x)
        return x


def alexnet(pretrained: bool = False, **kwargs: Any) -> AlexNet:
    """AlexNet(**kwargs); `pretrained=True` loads Paddle's published ImageNet weights."""
    model = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(model, "alexnet", MODEL_URLS)
    return model
