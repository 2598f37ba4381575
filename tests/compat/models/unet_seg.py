"""A UNet for segmentation, as PaddleSeg writes it: ConvBNReLU with `padding="same"`, an encoder that
keeps its skip features while max pooling down, a decoder that resizes with bilinear
`F.interpolate(x, paddle.shape(short_cut)[2:], align_corners=False)`, concatenates the skip and convolves,
and a model that returns its logits in a list. The 10x10 input pools to 5 and 2, so the decoder
resizes by non-integer factors."""
from compat_api import F, nn, paddle


class ConvBNReLU(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, padding="same"):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, padding=padding)
        self._batch_norm = nn.BatchNorm2D(out_channels)

    def forward(self, x):
        return F.relu(self._batch_norm(self._conv(x)))


def double_conv(in_channels, out_channels):
    return nn.Sequential(ConvBNReLU(in_channels, out_channels, 3), ConvBNReLU(out_channels, out_channels, 3))


class Encoder(nn.Layer):
    def __init__(self, in_channels, down_channels):
        super().__init__()
        self.double_conv = double_conv(in_channels, down_channels[0][0])
        self.down_sample_list = nn.LayerList([
            nn.Sequential(nn.MaxPool2D(kernel_size=2, stride=2), double_conv(c[0], c[1])) for c in down_channels])

    def forward(self, x):
        short_cuts = []
        x = self.double_conv(x)
        for down_sample in self.down_sample_list:
            short_cuts.append(x)
            x = down_sample(x)
        return x, short_cuts


class UpSampling(nn.Layer):
    def __init__(self, in_channels, out_channels, align_corners):
        super().__init__()
        self.align_corners = align_corners
        self.double_conv = double_conv(in_channels + out_channels, out_channels)

    def forward(self, x, short_cut):
        x = F.interpolate(x, paddle.shape(short_cut)[2:], mode="bilinear", align_corners=self.align_corners)
        x = paddle.concat([x, short_cut], axis=1)
        return self.double_conv(x)


class Decoder(nn.Layer):
    def __init__(self, align_corners, up_channels):
        super().__init__()
        self.up_sample_list = nn.LayerList([UpSampling(c[0], c[1], align_corners) for c in up_channels])

    def forward(self, x, short_cuts):
        for i in range(len(short_cuts)):
            x = self.up_sample_list[i](x, short_cuts[-(i + 1)])
        return x


class UNet(nn.Layer):
    def __init__(self, num_classes=3, in_channels=3, align_corners=False):
        super().__init__()
        self.encode = Encoder(in_channels, [[4, 8], [8, 16]])
        self.decode = Decoder(align_corners, [[16, 8], [8, 4]])
        self.cls = nn.Conv2D(4, num_classes, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        x, short_cuts = self.encode(x)
        x = self.decode(x, short_cuts)
        return [self.cls(x)]


def make():
    return UNet()


INPUTS = [([1, 3, 10, 10], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
