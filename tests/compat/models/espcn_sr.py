"""ESPCN super-resolution, as PaddleGAN-style model files write it: feature convs with tanh, a last conv
to `channels * scale ** 2` features and `nn.PixelShuffle(scale)` to the upscaled image, added to the
input upsampled by nearest interpolation (`F.interpolate(..., scale_factor=...)`)."""
from compat_api import F, nn


class ESPCN(nn.Layer):
    def __init__(self, scale=2, channels=3, width=8):
        super().__init__()
        self.scale = scale
        self.feature = nn.Sequential(nn.Conv2D(channels, width, 5, padding=2), nn.Tanh(),
                                     nn.Conv2D(width, width // 2, 3, padding=1), nn.Tanh())
        self.sub_pixel = nn.Sequential(nn.Conv2D(width // 2, channels * scale ** 2, 3, padding=1),
                                       nn.PixelShuffle(scale))

    def forward(self, x):
        base = F.interpolate(x, scale_factor=self.scale, mode="nearest")
        return base + self.sub_pixel(self.feature(x))


def make():
    return ESPCN()


INPUTS = [([2, 3, 6, 6], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
