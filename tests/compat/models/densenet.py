"""DenseNet, as PaddleClas's legacy model files write it: BN-activation-conv units built on
`nn.BatchNorm(num_channels, act="relu")`, dense layers (1x1 bottleneck, 3x3 growth) whose output is
concatenated to their input, transitions that halve the channels and pool with AvgPool2D, and a
pooled, flattened head."""
from compat_api import nn, paddle


class BNACConvLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, act="relu"):
        super().__init__()
        self._batch_norm = nn.BatchNorm(num_channels, act=act)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride, padding=pad, bias_attr=False)

    def forward(self, input):
        return self._conv(self._batch_norm(input))


class DenseLayer(nn.Layer):
    def __init__(self, num_channels, growth_rate, bn_size, dropout):
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, input):
        conv = self.bn_ac_func2(self.bn_ac_func1(input))
        if self.dropout:
            conv = self.dropout_func(conv)
        return paddle.concat([input, conv], axis=1)


class DenseBlock(nn.Layer):
    def __init__(self, num_channels, num_layers, bn_size, growth_rate, dropout):
        super().__init__()
        self.dense_layer_func = nn.LayerList(
            [DenseLayer(num_channels + i * growth_rate, growth_rate, bn_size, dropout) for i in range(num_layers)])

    def forward(self, input):
        conv = input
        for func in self.dense_layer_func:
            conv = func(conv)
        return conv


class TransitionLayer(nn.Layer):
    def __init__(self, num_channels, num_output_features):
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, input):
        return self.pool2d_avg(self.conv_ac_func(input))


class DenseNet(nn.Layer):
    def __init__(self, block_config=(2, 2), growth_rate=4, num_init_features=8, bn_size=2, class_num=10):
        super().__init__()
        self.conv1_func = nn.Conv2D(3, num_init_features, 3, stride=1, padding=1, bias_attr=False)
        self.batch_norm = nn.BatchNorm(num_init_features, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks = []
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            blocks.append(DenseBlock(num_features, num_layers, bn_size, growth_rate, dropout=0))
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                blocks.append(TransitionLayer(num_features, num_features // 2))
                num_features = num_features // 2
        self.blocks = nn.Sequential(*blocks)
        self.batch_norm_out = nn.BatchNorm(num_features, act="relu")
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.out = nn.Linear(num_features, class_num)

    def forward(self, input):
        conv = self.pool2d_max(self.batch_norm(self.conv1_func(input)))
        conv = self.batch_norm_out(self.blocks(conv))
        y = paddle.flatten(self.pool2d_avg(conv), start_axis=1, stop_axis=-1)
        return self.out(y)


def make():
    return DenseNet()


INPUTS = [([2, 3, 12, 12], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
