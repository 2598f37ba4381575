"""A ResNet of basic blocks, as vision backbones write it: conv-BN-ReLU stem, max pooling, blocks whose
residual is added in place (`out += identity`), a 1x1 strided downsample, global pooling, a classifier."""
from compat_api import F, nn, paddle


class BasicBlock(nn.Layer):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2D(inplanes, planes, 3, stride=stride, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Layer):
    def __init__(self, layers=(1, 1, 1), width=8, num_classes=10):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2D(3, width, 3, stride=1, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(width)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        stages = []
        for i, n in enumerate(layers):
            stages.append(self._make_layer(width * 2 ** i, n, stride=1 if i == 0 else 2))
        self.stages = nn.Sequential(*stages)
        self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        self.fc = nn.Linear(self.inplanes, num_classes)

    def _make_layer(self, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2D(self.inplanes, planes, 1, stride=stride, bias_attr=False),
                                       nn.BatchNorm2D(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.stages(x)
        x = paddle.flatten(self.avgpool(x), 1)
        return self.fc(x)


def make():
    return ResNet(layers=(2, 1, 1))


INPUTS = [([2, 3, 16, 16], "float32", 0)]
# `out += identity` on the batch norm's output is captured in the graph: the whole forward is one graph
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
