"""GhostNet, as PaddleClas writes it: ConvBNLayer on the legacy `nn.BatchNorm(num_channels, act=...)`,
ghost modules whose cheap depthwise op doubles the primary features, concatenated and sliced back to
`[:, :output_channels]`, ghost bottlenecks with a strided depthwise conv and squeeze-excitation
(`paddle.clip` as the hard gate), depthwise shortcuts, joined with `paddle.add`."""
import math

from compat_api import F, nn, paddle


class ConvBNLayer(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, groups=1, act="relu"):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, stride=stride,
                               padding=(kernel_size - 1) // 2, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_channels=out_channels, act=act)

    def forward(self, inputs):
        return self._batch_norm(self._conv(inputs))


class SEBlock(nn.Layer):
    def __init__(self, num_channels, reduction_ratio=4):
        super().__init__()
        self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
        self._num_channels = num_channels
        med_ch = num_channels // reduction_ratio
        self.squeeze = nn.Linear(num_channels, med_ch)
        self.excitation = nn.Linear(med_ch, num_channels)

    def forward(self, inputs):
        pool = paddle.squeeze(self.pool2d_gap(inputs), axis=[2, 3])
        squeeze = F.relu(self.squeeze(pool))
        excitation = paddle.clip(x=self.excitation(squeeze), min=0, max=1)
        excitation = paddle.unsqueeze(excitation, axis=[2, 3])
        return paddle.multiply(inputs, excitation)


class GhostModule(nn.Layer):
    def __init__(self, in_channels, output_channels, kernel_size=1, ratio=2, dw_size=3, stride=1, relu=True):
        super().__init__()
        self._output_channels = output_channels
        init_channels = int(math.ceil(output_channels / ratio))
        new_channels = int(init_channels * (ratio - 1))
        self.primary_conv = ConvBNLayer(in_channels, init_channels, kernel_size, stride, act="relu" if relu else None)
        self.cheap_operation = ConvBNLayer(init_channels, new_channels, dw_size, 1, groups=init_channels,
                                           act="relu" if relu else None)

    def forward(self, inputs):
        x = self.primary_conv(inputs)
        y = self.cheap_operation(x)
        out = paddle.concat([x, y], axis=1)
        return out[:, :self._output_channels]


class GhostBottleneck(nn.Layer):
    def __init__(self, in_channels, hidden_dim, output_channels, kernel_size, stride, use_se):
        super().__init__()
        self._stride = stride
        self._use_se = use_se
        self._num_channels = in_channels
        self._output_channels = output_channels
        self.ghost_module_1 = GhostModule(in_channels, hidden_dim, ratio=4)
        if stride == 2:
            self.depthwise_conv = ConvBNLayer(hidden_dim, hidden_dim, kernel_size, stride, groups=hidden_dim, act=None)
        if use_se:
            self.se_block = SEBlock(hidden_dim)
        self.ghost_module_2 = GhostModule(hidden_dim, output_channels, relu=False)
        if stride != 1 or in_channels != output_channels:
            self.shortcut_depthwise = ConvBNLayer(in_channels, in_channels, kernel_size, stride, groups=in_channels,
                                                  act=None)
            self.shortcut_conv = ConvBNLayer(in_channels, output_channels, 1, 1, act=None)

    def forward(self, inputs):
        x = self.ghost_module_1(inputs)
        if self._stride == 2:
            x = self.depthwise_conv(x)
        if self._use_se:
            x = self.se_block(x)
        x = self.ghost_module_2(x)
        if self._stride == 1 and self._num_channels == self._output_channels:
            shortcut = inputs
        else:
            shortcut = self.shortcut_conv(self.shortcut_depthwise(inputs))
        return paddle.add(x=x, y=shortcut)


class GhostNet(nn.Layer):
    # k, hidden, out, se, s
    cfgs = [[3, 6, 6, False, 1], [3, 12, 10, True, 2], [3, 12, 10, False, 1]]

    def __init__(self, class_num=10):
        super().__init__()
        self.conv1 = ConvBNLayer(3, 6, 3, stride=2)
        blocks = []
        in_channels = 6
        for k, exp_size, c, use_se, s in self.cfgs:
            blocks.append(GhostBottleneck(in_channels, exp_size, c, k, s, use_se))
            in_channels = c
        self.ghost_bottleneck_list = nn.Sequential(*blocks)
        self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(in_channels, class_num)

    def forward(self, inputs):
        x = self.ghost_bottleneck_list(self.conv1(inputs))
        x = paddle.reshape(self.pool2d_gap(x), shape=[-1, x.shape[1]])
        return self.fc(x)


def make():
    return GhostNet()


INPUTS = [([2, 3, 12, 12], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
