"""MobileNetV3 blocks, as PaddleClas writes them: ConvBNLayer with Hardswish or ReLU by name, residual
units (expand, depthwise, an optional squeeze-excitation, linear project) that join with `paddle.add`,
the SE module as AdaptiveAvgPool2D, two 1x1 convs and a hard sigmoid of slope 0.2 multiplied in, then
a last conv, pooling and a Hardswish head."""
from compat_api import F, nn, paddle


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c, filter_size, stride, padding, num_groups=1, if_act=True, act=None):
        super().__init__()
        self.conv = nn.Conv2D(in_c, out_c, filter_size, stride=stride, padding=padding, groups=num_groups,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(out_c)
        self.if_act = if_act
        self.act = nn.Hardswish() if act == "hardswish" else nn.ReLU()

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.if_act:
            x = self.act(x)
        return x


class Hardsigmoid(nn.Layer):
    def __init__(self, slope=0.2, offset=0.5):
        super().__init__()
        self.slope = slope
        self.offset = offset

    def forward(self, x):
        return F.hardsigmoid(x, slope=self.slope, offset=self.offset)


class SEModule(nn.Layer):
    def __init__(self, channel, reduction=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(channel, channel // reduction, 1)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(channel // reduction, channel, 1)
        self.hardsigmoid = Hardsigmoid(slope=0.2, offset=0.5)

    def forward(self, x):
        identity = x
        x = self.relu(self.conv1(self.avg_pool(x)))
        x = self.hardsigmoid(self.conv2(x))
        return paddle.multiply(x=identity, y=x)


class ResidualUnit(nn.Layer):
    def __init__(self, in_c, mid_c, out_c, filter_size, stride, use_se, act=None):
        super().__init__()
        self.if_shortcut = stride == 1 and in_c == out_c
        self.if_se = use_se
        self.expand_conv = ConvBNLayer(in_c, mid_c, 1, 1, 0, act=act)
        self.bottleneck_conv = ConvBNLayer(mid_c, mid_c, filter_size, stride, (filter_size - 1) // 2,
                                           num_groups=mid_c, act=act)
        if self.if_se:
            self.mid_se = SEModule(mid_c)
        self.linear_conv = ConvBNLayer(mid_c, out_c, 1, 1, 0, if_act=False)

    def forward(self, x):
        identity = x
        x = self.bottleneck_conv(self.expand_conv(x))
        if self.if_se:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        if self.if_shortcut:
            x = paddle.add(identity, x)
        return x


class MobileNetV3(nn.Layer):
    # k, exp, c, se, act, s
    config = [[3, 8, 8, True, "relu", 2], [3, 16, 8, False, "relu", 1], [3, 16, 12, True, "hardswish", 2]]

    def __init__(self, class_num=10, class_expand=16):
        super().__init__()
        self.conv = ConvBNLayer(3, 8, 3, 2, 1, act="hardswish")
        blocks = []
        in_c = 8
        for k, exp, c, se, act, s in self.config:
            blocks.append(ResidualUnit(in_c, exp, c, k, s, se, act))
            in_c = c
        self.blocks = nn.Sequential(*blocks)
        self.last_conv = ConvBNLayer(in_c, 16, 1, 1, 0, act="hardswish")
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.last_fc = nn.Conv2D(16, class_expand, 1)
        self.hardswish = nn.Hardswish()
        self.flatten = nn.Flatten(start_axis=1, stop_axis=-1)
        self.fc = nn.Linear(class_expand, class_num)

    def forward(self, x):
        x = self.last_conv(self.blocks(self.conv(x)))
        x = self.hardswish(self.last_fc(self.avg_pool(x)))
        return self.fc(self.flatten(x))


def make():
    return MobileNetV3()


INPUTS = [([2, 3, 16, 16], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
