"""A CRNN text recognizer, as PaddleOCR writes one: a conv backbone taking the height down to 1 faster than
the width (MaxPool2D and a conv with (2, 1) strides), `Im2Seq` squeezing the height and transposing to
(batch, width, channels), a bidirectional two-layer nn.LSTM encoder, and a CTC head of per-step
logits that softmaxes in eval mode."""
from compat_api import F, nn


class ConvBNLayer(nn.Layer):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(in_channels, out_channels, 3, stride=stride, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm(out_channels, act="relu")

    def forward(self, x):
        return self.bn(self.conv(x))


class Backbone(nn.Layer):
    def __init__(self, in_channels=1, out_channels=8):
        super().__init__()
        self.conv1 = ConvBNLayer(in_channels, 4)
        self.pool1 = nn.MaxPool2D(kernel_size=2, stride=2)
        self.conv2 = ConvBNLayer(4, out_channels)
        self.pool2 = nn.MaxPool2D(kernel_size=(2, 1), stride=(2, 1))
        self.conv3 = ConvBNLayer(out_channels, out_channels, stride=(2, 1))
        self.out_channels = out_channels

    def forward(self, x):
        x = self.pool1(self.conv1(x))
        x = self.pool2(self.conv2(x))
        return self.conv3(x)


class Im2Seq(nn.Layer):
    def forward(self, x):
        B, C, H, W = x.shape
        assert H == 1
        x = x.squeeze(axis=2)
        return x.transpose([0, 2, 1])


class EncoderWithRNN(nn.Layer):
    def __init__(self, in_channels, hidden_size):
        super().__init__()
        self.out_channels = hidden_size * 2
        self.lstm = nn.LSTM(in_channels, hidden_size, direction="bidirectional", num_layers=2)

    def forward(self, x):
        x, _ = self.lstm(x)
        return x


class CTCHead(nn.Layer):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.fc = nn.Linear(in_channels, out_channels)

    def forward(self, x):
        predicts = self.fc(x)
        if not self.training:
            predicts = F.softmax(predicts, axis=2)
        return predicts


class CRNN(nn.Layer):
    def __init__(self, num_classes=7, hidden_size=6):
        super().__init__()
        self.backbone = Backbone()
        self.neck = nn.Sequential(Im2Seq(), EncoderWithRNN(self.backbone.out_channels, hidden_size))
        self.head = CTCHead(hidden_size * 2, num_classes)

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)))


def make():
    return CRNN()


INPUTS = [([2, 1, 8, 12], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
