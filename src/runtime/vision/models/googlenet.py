"""GoogLeNet (Inception v1) with its two auxiliary classifiers, in the layout of Paddle's checkpoint."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...nn import functional as F
from ...nn.initializer import Uniform
from ...nn.param_attr import ParamAttr
from ...ops.shape import concat, flatten, squeeze
from ...tensor import Tensor
from ._utils import load_pretrained

__all__ = ["GoogLeNet", "googlenet"]

MODEL_URLS: dict[str, tuple[str, str]] = {
    "googlenet": ("https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/GoogLeNet_pretrained.pdparams",
                  "80c06f038e905c53ab32c40eca6e26ae"),
}


def xavier(channels: int, filter_size: int) -> ParamAttr:
    """Xavier-uniform initialisation for a fan-in of channels x filter_size^2."""
    bound = (3.0 / (filter_size ** 2 * channels)) ** 0.5
    return ParamAttr(initializer=Uniform(-bound, bound))


class ConvLayer(nn.Layer):
    """A bias-free 'same' Conv2D (odd filter sizes), no norm, no activation."""

    def __init__(self, num_channels: int, num_filters: int, filter_size: int, stride: int = 1, groups: int = 1):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride, padding=(filter_size - 1) // 2,
                               groups=groups, bias_attr=False)

    def forward(self, inputs: Tensor) -> Tensor:
        return self._conv(inputs)


class Inception(nn.Layer):
    """Four parallel branches (1x1; 1x1->3x3; 1x1->5x5; 3x3 max pool->1x1) concatenated, then ReLU."""

    def __init__(self, input_channels: int, output_channels: int, filter1: int, filter3R: int, filter3: int,
                 filter5R: int, filter5: int, proj: int):
        super().__init__()
        self._conv1 = ConvLayer(input_channels, filter1, 1)
        self._conv3r = ConvLayer(input_channels, filter3R, 1)
        self._conv3 = ConvLayer(filter3R, filter3, 3)
        self._conv5r = ConvLayer(input_channels, filter5R, 1)
        self._conv5 = ConvLayer(filter5R, filter5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvLayer(input_channels, proj, 1)

    def forward(self, inputs: Tensor) -> Tensor:
        branches = [self._conv1(inputs), self._conv3(self._conv3r(inputs)), self._conv5(self._conv5r(inputs)),
                    self._convprj(self._pool(inputs))]
        return F.relu(concat(branches, axis=1))


class GoogLeNet(nn.Layer):
    """GoogLeNet for 224x224 inputs. forward returns (main output, aux output 1, aux output 2), the aux
    heads reading the 4a and 4d inception outputs; with num_classes <= 0 these are the pooled (or raw)
    features 5b, 4a and 4d."""

    def __init__(self, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._conv = ConvLayer(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2)
        self._conv_1 = ConvLayer(64, 64, 1)
        self._conv_2 = ConvLayer(64, 192, 3)
        self._ince3a = Inception(192, 192, 64, 96, 128, 16, 32, 32)
        self._ince3b = Inception(256, 256, 128, 128, 192, 32, 96, 64)
        self._ince4a = Inception(480, 480, 192, 96, 208, 16, 48, 64)
        self._ince4b = Inception(512, 512, 160, 112, 224, 24, 64, 64)
        self._ince4c = Inception(512, 512, 128, 128, 256, 24, 64, 64)
        self._ince4d = Inception(512, 512, 112, 144, 288, 32, 64, 64)
        self._ince4e = Inception(528, 528, 256, 160, 320, 32, 128, 128)
        self._ince5a = Inception(832, 832, 256, 160, 320, 32, 128, 128)
        self._ince5b = Inception(832, 832, 384, 192, 384, 48, 128, 128)
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))
            self._conv_o1 = ConvLayer(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024, weight_attr=xavier(2048, 1))
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))
            self._conv_o2 = ConvLayer(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024, weight_attr=xavier(2048, 1))
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))

    def forward(self, inputs: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        x = self._pool(self._conv(inputs))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        ince4a = self._ince4a(x)
        ince4d = self._ince4d(self._ince4c(self._ince4b(ince4a)))
        x = self._pool(self._ince4e(ince4d))
        out, out1, out2 = self._ince5b(self._ince5a(x)), ince4a, ince4d
        if self.with_pool:
            out, out1, out2 = self._pool_5(out), self._pool_o1(out1), self._pool_o2(out2)
        if self.num_classes > 0:
            out = self._fc_out(squeeze(self._drop(out), axis=[2, 3]))
            out1 = self._fc_o1(flatten(self._conv_o1(out1), 1))
            out1 = self._out1(self._drop_o1(F.relu(out1)))
            # the second aux head has no ReLU between its linear layers (the checkpoint was trained so)
            out2 = self._fc_o2(flatten(self._conv_o2(out2), 1))
            out2 = self._out2(self._drop_o2(out2))
        return out, out1, out2


def googlenet(pretrained: bool = False, **kwargs: Any) -> GoogLeNet:
    """GoogLeNet(**kwargs); `pretrained=True` loads Paddle's published ImageNet weights."""
    model = GoogLeNet(**kwargs)
    if pretrained:
        load_pretrained(model, "googlenet", MODEL_URLS)
    return model
