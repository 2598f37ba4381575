"""Layers over `F.pixel_shuffle`, `F.pixel_unshuffle` and `F.channel_shuffle` (super-resolution heads,
space-to-depth stems, ShuffleNet units). Like Paddle, they check their factor and layout when built."""
from __future__ import annotations

from typing import Callable

from ...ops.shuffle import channel_shuffle, check_data_format, check_factor, pixel_shuffle, pixel_unshuffle
from ...tensor import Tensor
from .layers import Layer

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class _Rearrange(Layer):
    """One factor and a layout, handed to a functional rearrangement on every call."""

    _api: str  # the layer's name in its errors
    _what: str  # the factor's name in Paddle's errors
    _key: str  # the factor's name in repr
    _fn: Callable[[Tensor, int, str], Tensor]

    def __init__(self, factor: int, data_format: str = "NCHW", name: str | None = None):
        super().__init__()
        self._factor = check_factor(self._api, factor, self._what)
        self._data_format = check_data_format(data_format)
        self._name = name

    def forward(self, x: Tensor) -> Tensor:
        return self._fn(x, self._factor, self._data_format)

    def extra_repr(self) -> str:
        text = f"{self._key}={self._factor}"
        if self._data_format != "NCHW":
            text += f", data_format={self._data_format}"
        if self._name is not None:
            text += f", name={self._name}"
        return text


class PixelShuffle(_Rearrange):
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r]."""

    _api, _what, _key = "PixelShuffle", "upscale factor", "upscale_factor"
    _fn = staticmethod(pixel_shuffle)


class PixelUnshuffle(_Rearrange):
    """[N, C, H*r, W*r] -> [N, C*r*r, H, W]."""

    _api, _what, _key = "PixelUnshuffle", "Downscale factor", "downscale_factor"
    _fn = staticmethod(pixel_unshuffle)


class ChannelShuffle(_Rearrange):
    """Interleave channel groups, as a ShuffleNet unit does after concatenating its branches."""

    _api, _what, _key = "ChannelShuffle", "groups", "groups"
    _fn = staticmethod(channel_shuffle)
