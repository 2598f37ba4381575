"""ResNet, ResNeXt and Wide ResNet (the torchvision layout, which Paddle's checkpoints follow)."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ...ops.shape import flatten
from ...tensor import Tensor
from ._utils import load_pretrained

__all__ = ["BasicBlock", "BottleneckBlock", "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
           "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d",
           "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2"]

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
MODEL_URLS: dict[str, tuple[str, str]] = {
    "resnet18": (_HAPI + "resnet18.pdparams", "cf548f46534aa3560945be4b95cd11c4"),
    "resnet34": (_HAPI + "resnet34.pdparams", "8d2275cf8706028345f78ac0e1d31969"),
    "resnet50": (_HAPI + "resnet50.pdparams", "ca6f485ee1ab0492d38f323885b0ad80"),
    "resnet101": (_HAPI + "resnet101.pdparams", "02f35f034ca3858e1e54d4036443c92d"),
    "resnet152": (_HAPI + "resnet152.pdparams", "7ad16a2f1e7333859ff986138630fd7a"),
    "resnext50_32x4d": (_HAPI + "resnext50_32x4d.pdparams", "dc47483169be7d6f018fcbb7baf8775d"),
    "resnext50_64x4d": (_HAPI + "resnext50_64x4d.pdparams", "063d4b483e12b06388529450ad7576db"),
    "resnext101_32x4d": (_HAPI + "resnext101_32x4d.pdparams", "967b090039f9de2c8d06fe994fb9095f"),
    "resnext101_64x4d": (_HAPI + "resnext101_64x4d.pdparams", "98e04e7ca616a066699230d769d03008"),
    "resnext152_32x4d": (_HAPI + "resnext152_32x4d.pdparams", "18ff0beee21f2efc99c4b31786107121"),
    "resnext152_64x4d": (_HAPI + "resnext152_64x4d.pdparams", "77c4af00ca42c405fa7f841841959379"),
    "wide_resnet50_2": (_HAPI + "wide_resnet50_2.pdparams", "0282f804d73debdab289bd9fea3fa6dc"),
    "wide_resnet101_2": (_HAPI + "wide_resnet101_2.pdparams", "d4360a2d23657f059216f5d5a1a9ac93"),
}


class BasicBlock(nn.Layer):
    """Two 3x3 convolutions with a shortcut (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Layer | None = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Callable[..., nn.Layer] | None = None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        if dilation > 1:
            raise NotImplementedError("BasicBlock: dilation > 1 is not supported")
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride, bias_attr=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class BottleneckBlock(nn.Layer):
    """1x1 reduce, 3x3 (grouped for ResNeXt), 1x1 expand by 4, with a shortcut (ResNet-50 and up)."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Layer | None = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Callable[..., nn.Layer] | None = None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(width, width, 3, padding=dilation, stride=stride, groups=groups, dilation=dilation,
                               bias_attr=False)
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


_STAGE_BLOCKS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


class ResNet(nn.Layer):
    """A 7x7 stem, four stages of `block` (64..512 planes), average pool and a linear classifier.

    `width` is the per-group width of the bottleneck (64 for ResNet, 4 with `groups` for ResNeXt,
    128 for Wide ResNet); `num_classes <= 0` drops the classifier, `with_pool=False` the pool.
    """

    def __init__(self, block: type[BasicBlock] | type[BottleneckBlock], depth: int = 50, width: int = 64,
                 num_classes: int = 1000, with_pool: bool = True, groups: int = 1):
        super().__init__()
        if depth not in _STAGE_BLOCKS:
            raise ValueError(f"ResNet: depth must be one of {sorted(_STAGE_BLOCKS)}, got {depth!r}")
        self.groups = groups
        self.base_width = width
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._norm_layer = nn.BatchNorm2D
        self.inplanes = 64
        self.dilation = 1
        self.conv1 = nn.Conv2D(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias_attr=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks = _STAGE_BLOCKS[depth]
        self.layer1 = self._make_layer(block, 64, blocks[0])
        self.layer2 = self._make_layer(block, 128, blocks[1], stride=2)
        self.layer3 = self._make_layer(block, 256, blocks[2], stride=2)
        self.layer4 = self._make_layer(block, 512, blocks[3], stride=2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block: Any, planes: int, blocks: int, stride: int = 1, dilate: bool = False) -> nn.Sequential:
        """One stage: the first block changes resolution/width (with a projection shortcut when needed)."""
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes * block.expansion, 1, stride=stride, bias_attr=False),
                self._norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        self._norm_layer)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                         norm_layer=self._norm_layer) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


# arch -> (block, depth, fixed constructor settings)
_ARCHS: dict[str, tuple[Any, int, dict[str, int]]] = {
    "resnet18": (BasicBlock, 18, {}),
    "resnet34": (BasicBlock, 34, {}),
    "resnet50": (BottleneckBlock, 50, {}),
    "resnet101": (BottleneckBlock, 101, {}),
    "resnet152": (BottleneckBlock, 152, {}),
    "resnext50_32x4d": (BottleneckBlock, 50, {"groups": 32, "width": 4}),
    "resnext50_64x4d": (BottleneckBlock, 50, {"groups": 64, "width": 4}),
    "resnext101_32x4d": (BottleneckBlock, 101, {"groups": 32, "width": 4}),
    "resnext101_64x4d": (BottleneckBlock, 101, {"groups": 64, "width": 4}),
    "resnext152_32x4d": (BottleneckBlock, 152, {"groups": 32, "width": 4}),
    "resnext152_64x4d": (BottleneckBlock, 152, {"groups": 64, "width": 4}),
    "wide_resnet50_2": (BottleneckBlock, 50, {"width": 128}),
    "wide_resnet101_2": (BottleneckBlock, 101, {"width": 128}),
}


def _constructor(arch: str) -> Callable[..., ResNet]:
    block, depth, fixed = _ARCHS[arch]

    def build(pretrained: bool = False, **kwargs: Any) -> ResNet:
        model = ResNet(block, depth, **{**kwargs, **fixed})
        if pretrained:
            load_pretrained(model, arch, MODEL_URLS)
        return model

    build.__name__ = build.__qualname__ = arch
    build.__doc__ = (f"{arch}: ResNet({block.__name__}, {depth}{''.join(f', {k}={v}' for k, v in fixed.items())}, "
                     "**kwargs); `pretrained=True` loads Paddle's published ImageNet weights.")
    return build


resnet18 = _constructor("resnet18")
resnet34 = _constructor("resnet34")
resnet50 = _constructor("resnet50")
resnet101 = _constructor("resnet101")
resnet152 = _constructor("resnet152")
resnext50_32x4d = _constructor("resnext50_32x4d")
resnext50_64x4d = _constructor("resnext50_64x4d")
resnext101_32x4d = _constructor("resnext101_32x4d")
resnext101_64x4d = _constructor("resnext101_64x4d")
resnext152_32x4d = _constructor("resnext152_32x4d")
resnext152_64x4d = _constructor("resnext152_64x4d")
wide_resnet50_2 = _constructor("wide_resnet50_2")
wide_resnet101_2 = _constructor("wide_resnet101_2")
