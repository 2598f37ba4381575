"""VGG-11/13/16/19, with or without batch normalisation."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...ops.shape import flatten
from ...tensor import Tensor
from ._utils import load_pretrained

__all__ = ["VGG", "make_layers", "vgg11", "vgg13", "vgg16", "vgg19"]

MODEL_URLS: dict[str, tuple[str, str]] = {
    "vgg16": ("https://paddle-hapi.bj.bcebos.com/models/vgg16.pdparams", "89bbffc0f87d260be9b8cdc169c991c4"),
    "vgg19": ("https://paddle-hapi.bj.bcebos.com/models/vgg19.pdparams", "23b18bb13d8894f60f54e642be79a0dd"),
}

# output channels of each 3x3 conv; "M" is a 2x2 max pool
_CONFIGS: dict[int, list[Any]] = {
    11: [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    13: [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    16: [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    19: [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class VGG(nn.Layer):
    """`features` (see make_layers), a 7x7 adaptive average pool, and a 3-layer classifier with dropout."""

    def __init__(self, features: nn.Layer, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.features = features
        self.num_classes = num_classes
        self.with_pool = with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


def make_layers(cfg: list[Any], batch_norm: bool = False) -> nn.Sequential:
    """The convolutional trunk for a config list: each int a 3x3 conv (+BN) + ReLU, each "M" a max pool."""
    layers: list[nn.Layer] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2D(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2D(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2D(v))
        layers.append(nn.ReLU())
        in_channels = v
    return nn.Sequential(*layers)


def _constructor(depth: int) -> Callable[..., VGG]:
    def build(pretrained: bool = False, batch_norm: bool = False, **kwargs: Any) -> VGG:
        model = VGG(make_layers(_CONFIGS[depth], batch_norm=batch_norm), **kwargs)
        if pretrained:
            load_pretrained(model, f"vgg{depth}" + ("_bn" if batch_norm else ""), MODEL_URLS)
        return model

    build.__name__ = build.__qualname__ = f"vgg{depth}"
    build.__doc__ = (f"VGG-{depth} (`batch_norm=True` adds BatchNorm2D after each conv); `pretrained=True` "
                     "loads Paddle's published ImageNet weights where they exist.")
    return build


vgg11 = _constructor(11)
vgg13 = _constructor(13)
vgg16 = _constructor(16)
vgg19 = _constructor(19)
