"""ShuffleNetV2, as PaddleClas and paddle.vision write it: `channel_shuffle` by reshape, transpose and
reshape back with the sizes read from `x.shape[0:4]`, units of stride 1 that split the channels in two
halves with `paddle.split` and transform one, units of stride 2 that transform both, joined by concat."""
from compat_api import nn, paddle


def channel_shuffle(x, groups):
    batch_size, num_channels, height, width = x.shape[0:4]
    channels_per_group = num_channels // groups
    x = paddle.reshape(x, shape=[batch_size, groups, channels_per_group, height, width])
    x = paddle.transpose(x, perm=[0, 2, 1, 3, 4])
    return paddle.reshape(x, shape=[batch_size, num_channels, height, width])


class ConvBNLayer(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups=1, act=True):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                               groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(out_channels)
        self._act = nn.ReLU() if act else None

    def forward(self, inputs):
        y = self._batch_norm(self._conv(inputs))
        if self._act is not None:
            y = self._act(y)
        return y


class InvertedResidual(nn.Layer):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self._conv_pw = ConvBNLayer(in_channels // 2, out_channels // 2, 1, 1, 0)
        self._conv_dw = ConvBNLayer(out_channels // 2, out_channels // 2, 3, stride, 1, groups=out_channels // 2,
                                    act=False)
        self._conv_linear = ConvBNLayer(out_channels // 2, out_channels // 2, 1, 1, 0)

    def forward(self, inputs):
        x1, x2 = paddle.split(inputs, num_or_sections=[inputs.shape[1] // 2, inputs.shape[1] // 2], axis=1)
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        out = paddle.concat([x1, x2], axis=1)
        return channel_shuffle(out, 2)


class InvertedResidualDS(nn.Layer):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self._conv_dw_1 = ConvBNLayer(in_channels, in_channels, 3, stride, 1, groups=in_channels, act=False)
        self._conv_linear_1 = ConvBNLayer(in_channels, out_channels // 2, 1, 1, 0)
        self._conv_pw_2 = ConvBNLayer(in_channels, out_channels // 2, 1, 1, 0)
        self._conv_dw_2 = ConvBNLayer(out_channels // 2, out_channels // 2, 3, stride, 1, groups=out_channels // 2,
                                      act=False)
        self._conv_linear_2 = ConvBNLayer(out_channels // 2, out_channels // 2, 1, 1, 0)

    def forward(self, inputs):
        x1 = self._conv_linear_1(self._conv_dw_1(inputs))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(inputs)))
        out = paddle.concat([x1, x2], axis=1)
        return channel_shuffle(out, 2)


class ShuffleNet(nn.Layer):
    def __init__(self, stage_out_channels=(8, 8, 16), stage_repeats=(2, 1), class_num=10):
        super().__init__()
        self._conv1 = ConvBNLayer(3, stage_out_channels[0], 3, 2, 1)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks = []
        for stage_id, num_repeat in enumerate(stage_repeats):
            for i in range(num_repeat):
                if i == 0:
                    blocks.append(InvertedResidualDS(stage_out_channels[stage_id], stage_out_channels[stage_id + 1], 2))
                else:
                    blocks.append(InvertedResidual(stage_out_channels[stage_id + 1],
                                                   stage_out_channels[stage_id + 1], 1))
        self._block_list = nn.LayerList(blocks)
        self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self._fc = nn.Linear(stage_out_channels[-1], class_num)

    def forward(self, inputs):
        y = self._max_pool(self._conv1(inputs))
        for inv in self._block_list:
            y = inv(y)
        y = paddle.flatten(self._pool2d_avg(y), start_axis=1, stop_axis=-1)
        return self._fc(y)


def make():
    return ShuffleNet()


INPUTS = [([2, 3, 16, 16], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
