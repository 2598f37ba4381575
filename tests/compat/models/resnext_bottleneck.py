"""A ResNeXt of bottleneck blocks, as PaddleClas writes one: ConvBNLayer (conv without bias, BN, an
optional activation), a 1x1 reduce, a grouped 3x3 (`groups=cardinality`), a 1x1 expand, a projection
shortcut where shapes change, the residual joined with `paddle.add` and a ReLU, global pooling, a head."""
from compat_api import F, nn, paddle


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1, act=None):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(num_filters)
        self.act = act

    def forward(self, inputs):
        y = self._batch_norm(self._conv(inputs))
        if self.act == "relu":
            y = F.relu(y)
        return y


class BottleneckBlock(nn.Layer):
    def __init__(self, num_channels, num_filters, stride, cardinality, shortcut=True):
        super().__init__()
        self.conv0 = ConvBNLayer(num_channels, num_filters, 1, act="relu")
        self.conv1 = ConvBNLayer(num_filters, num_filters, 3, stride=stride, groups=cardinality, act="relu")
        self.conv2 = ConvBNLayer(num_filters, num_filters * 2, 1)
        self.shortcut = shortcut
        if not shortcut:
            self.short = ConvBNLayer(num_channels, num_filters * 2, 1, stride=stride)

    def forward(self, inputs):
        conv2 = self.conv2(self.conv1(self.conv0(inputs)))
        short = inputs if self.shortcut else self.short(inputs)
        return F.relu(paddle.add(x=short, y=conv2))


class ResNeXt(nn.Layer):
    def __init__(self, depth=(2, 1), cardinality=4, width=8, class_num=10):
        super().__init__()
        self.conv = ConvBNLayer(3, width, 3, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks = []
        channels = width
        for stage, count in enumerate(depth):
            for i in range(count):
                blocks.append(BottleneckBlock(channels, width, stride=2 if i == 0 and stage > 0 else 1,
                                              cardinality=cardinality, shortcut=channels == width * 2 and i > 0))
                channels = width * 2
        self.block_list = nn.Sequential(*blocks)
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.out = nn.Linear(channels, class_num)

    def forward(self, inputs):
        y = self.pool2d_max(self.conv(inputs))
        y = self.pool2d_avg(self.block_list(y))
        return self.out(paddle.reshape(y, shape=[-1, y.shape[1]]))


def make():
    return ResNeXt()


INPUTS = [([2, 3, 12, 12], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
