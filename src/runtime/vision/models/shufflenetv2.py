"""ShuffleNetV2: channel split, a cheap branch, concatenation and channel shuffle."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...ops.shape import concat, flatten, reshape, split, transpose
from ...tensor import Tensor
from ..ops import ConvNormActivation
from ._utils import load_pretrained

__all__ = ["ShuffleNetV2", "shufflenet_v2_x0_25", "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
           "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "shufflenet_v2_swish"]

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
MODEL_URLS: dict[str, tuple[str, str]] = {
    "shufflenet_v2_x0_25": (_HAPI + "shufflenet_v2_x0_25.pdparams", "1e509b4c140eeb096bb16e214796d03b"),
    "shufflenet_v2_x0_33": (_HAPI + "shufflenet_v2_x0_33.pdparams", "3d7b3ab0eaa5c0927ff1026d31b729bd"),
    "shufflenet_v2_x0_5": (_HAPI + "shufflenet_v2_x0_5.pdparams", "5e5cee182a7793c4e4c73949b1a71bd4"),
    "shufflenet_v2_x1_0": (_HAPI + "shufflenet_v2_x1_0.pdparams", "122d42478b9e81eb49f8a9ede327b1a4"),
    "shufflenet_v2_x1_5": (_HAPI + "shufflenet_v2_x1_5.pdparams", "faced5827380d73531d0ee027c67826d"),
    "shufflenet_v2_x2_0": (_HAPI + "shufflenet_v2_x2_0.pdparams", "cd3dddcd8305e7bcd8ad14d1c69a5784"),
    "shufflenet_v2_swish": (_HAPI + "shufflenet_v2_swish.pdparams", "adde0aa3b023e5b0c94a68be1c394b84"),
}

_ACTIVATIONS: dict[str | None, Callable[..., nn.Layer] | None] = {"relu": nn.ReLU, "swish": nn.Swish, None: None}

# stage output channels per scale: [stem, stage 2, stage 3, stage 4, last 1x1 conv]
_STAGE_CHANNELS = {0.25: [24, 24, 48, 96, 512], 0.33: [24, 32, 64, 128, 512], 0.5: [24, 48, 96, 192, 1024],
                   1.0: [24, 116, 232, 464, 1024], 1.5: [24, 176, 352, 704, 1024], 2.0: [24, 224, 488, 976, 2048]}
_STAGE_REPEATS = [4, 8, 4]


def create_activation_layer(act: str | None) -> Callable[..., nn.Layer] | None:
    """The activation layer class for 'relu', 'swish' or None."""
    if act not in _ACTIVATIONS:
        raise RuntimeError(f"ShuffleNetV2: unsupported activation {act!r}")
    return _ACTIVATIONS[act]


def channel_shuffle(x: Tensor, groups: int) -> Tensor:
    """Interleave the channels of `groups` equal groups (NCHW): channel g*k+i moves to i*groups+g."""
    batch_size, num_channels, height, width = x.shape[0:4]
    x = reshape(x, [batch_size, groups, num_channels // groups, height, width])
    x = transpose(x, [0, 2, 1, 3, 4])
    return reshape(x, [batch_size, num_channels, height, width])


class InvertedResidual(nn.Layer):
    """Stride-1 unit: half the channels pass through, the other half go 1x1 -> depthwise 3x3 -> 1x1."""

    def __init__(self, in_channels: int, out_channels: int, stride: int,
                 activation_layer: Callable[..., nn.Layer] | None = nn.ReLU):
        super().__init__()
        half = out_channels // 2
        self._conv_pw = ConvNormActivation(in_channels // 2, half, 1, 1, 0, activation_layer=activation_layer)
        self._conv_dw = ConvNormActivation(half, half, 3, stride, 1, groups=half, activation_layer=None)
        self._conv_linear = ConvNormActivation(half, half, 1, 1, 0, activation_layer=activation_layer)

    def forward(self, inputs: Tensor) -> Tensor:
        half = inputs.shape[1] // 2
        x1, x2 = split(inputs, [half, half], axis=1)
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        return channel_shuffle(concat([x1, x2], axis=1), 2)


class InvertedResidualDS(nn.Layer):
    """Downsampling unit: both branches see the whole input and halve the resolution."""

    def __init__(self, in_channels: int, out_channels: int, stride: int,
                 activation_layer: Callable[..., nn.Layer] | None = nn.ReLU):
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = ConvNormActivation(in_channels, in_channels, 3, stride, 1, groups=in_channels,
                                             activation_layer=None)
        self._conv_linear_1 = ConvNormActivation(in_channels, half, 1, 1, 0, activation_layer=activation_layer)
        self._conv_pw_2 = ConvNormActivation(in_channels, half, 1, 1, 0, activation_layer=activation_layer)
        self._conv_dw_2 = ConvNormActivation(half, half, 3, stride, 1, groups=half, activation_layer=None)
        self._conv_linear_2 = ConvNormActivation(half, half, 1, 1, 0, activation_layer=activation_layer)

    def forward(self, inputs: Tensor) -> Tensor:
        x1 = self._conv_linear_1(self._conv_dw_1(inputs))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(inputs)))
        return channel_shuffle(concat([x1, x2], axis=1), 2)


class ShuffleNetV2(nn.Layer):
    """A stride-2 stem and max pool, three stages of (downsampling unit + units), a 1x1 conv; `scale` is
    one of 0.25, 0.33, 0.5, 1.0, 1.5, 2.0 and `act` 'relu' or 'swish'."""

    def __init__(self, scale: float = 1.0, act: str = "relu", num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if scale not in _STAGE_CHANNELS:
            raise NotImplementedError(f"ShuffleNetV2: scale {scale} is not implemented "
                                      f"(choose from {sorted(_STAGE_CHANNELS)})")
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        activation_layer = create_activation_layer(act)
        channels = _STAGE_CHANNELS[scale]
        self._conv1 = ConvNormActivation(3, channels[0], 3, 2, 1, activation_layer=activation_layer)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._block_list = []
        for stage, repeats in enumerate(_STAGE_REPEATS):
            for i in range(repeats):
                if i == 0:
                    block = InvertedResidualDS(channels[stage], channels[stage + 1], 2, activation_layer)
                else:
                    block = InvertedResidual(channels[stage + 1], channels[stage + 1], 1, activation_layer)
                self._block_list.append(self.add_sublayer(f"{stage + 2}_{i + 1}", block))
        self._last_conv = ConvNormActivation(channels[-2], channels[-1], 1, 1, 0, activation_layer=activation_layer)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._out_c = channels[-1]
            self._fc = nn.Linear(channels[-1], num_classes)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._max_pool(self._conv1(inputs))
        for block in self._block_list:
            x = block(x)
        x = self._last_conv(x)
        if self.with_pool:
            x = self._pool2d_avg(x)
        if self.num_classes > 0:
            x = self._fc(flatten(x, 1))
        return x


def _constructor(arch: str, scale: float, act: str = "relu") -> Callable[..., ShuffleNetV2]:
    def build(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
        model = ShuffleNetV2(scale=scale, **{"act": act, **kwargs})
        if pretrained:
            load_pretrained(model, arch, MODEL_URLS)
        return model

    build.__name__ = build.__qualname__ = arch
    build.__doc__ = (f"ShuffleNetV2(scale={scale}, act={act!r}, **kwargs); `pretrained=True` loads Paddle's "
                     "published ImageNet weights.")
    return build


shufflenet_v2_x0_25 = _constructor("shufflenet_v2_x0_25", 0.25)
shufflenet_v2_x0_33 = _constructor("shufflenet_v2_x0_33", 0.33)
shufflenet_v2_x0_5 = _constructor("shufflenet_v2_x0_5", 0.5)
shufflenet_v2_x1_0 = _constructor("shufflenet_v2_x1_0", 1.0)
shufflenet_v2_x1_5 = _constructor("shufflenet_v2_x1_5", 1.5)
shufflenet_v2_x2_0 = _constructor("shufflenet_v2_x2_0", 2.0)
shufflenet_v2_swish = _constructor("shufflenet_v2_swish", 1.0, "swish")
