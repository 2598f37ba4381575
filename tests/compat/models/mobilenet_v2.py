"""MobileNetV2, as paddle.vision writes it: channels rounded by `_make_divisible`, ConvBNReLU as an
nn.Sequential with ReLU6, inverted residuals (1x1 expand, depthwise 3x3 with `groups=hidden_dim`,
linear 1x1 project) that return `x + self.conv(x)` when shapes allow, pooling, a dropout-and-linear head."""
from compat_api import nn, paddle


def _make_divisible(v, divisor=8, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1, norm_layer=nn.BatchNorm2D):
        padding = (kernel_size - 1) // 2
        super().__init__(nn.Conv2D(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias_attr=False),
                         norm_layer(out_planes), nn.ReLU6())


class InvertedResidual(nn.Layer):
    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2D):
        super().__init__()
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer))
        layers.extend([
            ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim, norm_layer=norm_layer),
            nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False),
            norm_layer(oup),
        ])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Layer):
    def __init__(self, scale=0.25, num_classes=10):
        super().__init__()
        input_channel = _make_divisible(32 * scale, 4)
        last_channel = _make_divisible(64 * scale, 4)
        inverted_residual_setting = [[1, 16, 1, 1], [4, 16, 2, 2], [4, 24, 1, 2]]
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * scale, 4)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.classifier = nn.Sequential(nn.Dropout(0.0), nn.Linear(last_channel, num_classes))

    def forward(self, x):
        x = self.pool2d_avg(self.features(x))
        return self.classifier(paddle.flatten(x, 1))


def make():
    return MobileNetV2()


INPUTS = [([2, 3, 16, 16], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
