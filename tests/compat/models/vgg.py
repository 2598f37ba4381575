"""VGG, as paddle.vision writes it: `make_layers` turns a config of widths and "M" into Conv2D,
optional BatchNorm2D, ReLU and MaxPool2D layers, an adaptive average pool to a fixed size,
`paddle.flatten(x, 1)` and a classifier of Linear, ReLU and Dropout layers."""
from compat_api import nn, paddle


class VGG(nn.Layer):
    def __init__(self, features, num_classes=10, with_pool=True):
        super().__init__()
        self.features = features
        self.num_classes = num_classes
        self.with_pool = with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((2, 2))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(16 * 2 * 2, 16), nn.ReLU(), nn.Dropout(0.0),
                nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.0),
                nn.Linear(16, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = paddle.flatten(x, 1)
            x = self.classifier(x)
        return x


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2D(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2D(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2D(v), nn.ReLU()]
            else:
                layers += [conv2d, nn.ReLU()]
            in_channels = v
    return nn.Sequential(*layers)


def make():
    return VGG(make_layers([4, "M", 8, 8, "M", 16, "M"], batch_norm=True))


INPUTS = [([2, 3, 16, 16], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
