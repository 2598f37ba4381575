"""`paddle.nn.functional` pixel_shuffle, pixel_unshuffle and channel_shuffle.

Each is a reshape, a transpose and a reshape back, composed from those ops, so gradients, static
programs and the JIT come from them. The batch dim is kept with reshape's 0 (copy that dim), so a
static program's unknown batch size passes through.
"""
from __future__ import annotations

from ..tensor import Tensor
from .shape import reshape, transpose

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]


def check_data_format(data_format: str) -> str:
    """Paddle's error for a layout other than NCHW or NHWC (the layers check theirs when built)."""
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"Attr(data_format) should be 'NCHW' or 'NHWC'. But receive Attr(data_format): {data_format}")
    return data_format


def check_factor(api: str, factor: object, what: str) -> int:
    """A positive int factor, else Paddle's TypeError (not an int) or ValueError (not positive)."""
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{what} must be int type")
    if factor <= 0:
        raise ValueError(f"{api}: {what} must be positive, got {factor}")
    return factor


def _layout(api: str, x: Tensor, data_format: str) -> bool:
    """Whether `x` is channel-last; Paddle's errors for a bad layout or rank."""
    check_data_format(data_format)
    if len(x.shape) != 4:
        raise ValueError(f"{api}: the input must be a 4-D tensor, got {len(x.shape)}-D")
    return data_format == "NHWC"


def pixel_shuffle(x: Tensor, upscale_factor: int, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r]: channel c*r*r + i*r + j goes to pixel (h*r + i, w*r + j)."""
    r = check_factor("pixel_shuffle", upscale_factor, "upscale factor")
    if _layout("pixel_shuffle", x, data_format):
        _, h, w, c = x.shape
        _check_divisible("pixel_shuffle", c, r * r, "channels", "upscale_factor ** 2")
        x = transpose(reshape(x, [0, h, w, c // (r * r), r, r]), [0, 1, 4, 2, 5, 3])
        return reshape(x, [0, h * r, w * r, c // (r * r)])
    _, c, h, w = x.shape
    _check_divisible("pixel_shuffle", c, r * r, "channels", "upscale_factor ** 2")
    x = transpose(reshape(x, [0, c // (r * r), r, r, h, w]), [0, 1, 4, 2, 5, 3])
    return reshape(x, [0, c // (r * r), h * r, w * r])


def pixel_unshuffle(x: Tensor, downscale_factor: int, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """The inverse of pixel_shuffle: [N, C, H*r, W*r] -> [N, C*r*r, H, W]."""
    r = check_factor("pixel_unshuffle", downscale_factor, "Downscale factor")
    if _layout("pixel_unshuffle", x, data_format):
        _, h, w, c = x.shape
        _check_divisible("pixel_unshuffle", h, r, "height", "downscale_factor")
        _check_divisible("pixel_unshuffle", w, r, "width", "downscale_factor")
        x = transpose(reshape(x, [0, h // r, r, w // r, r, c]), [0, 1, 3, 5, 2, 4])
        return reshape(x, [0, h // r, w // r, c * r * r])
    _, c, h, w = x.shape
    _check_divisible("pixel_unshuffle", h, r, "height", "downscale_factor")
    _check_divisible("pixel_unshuffle", w, r, "width", "downscale_factor")
    x = transpose(reshape(x, [0, c, h // r, r, w // r, r]), [0, 1, 3, 5, 2, 4])
    return reshape(x, [0, c * r * r, h // r, w // r])


def channel_shuffle(x: Tensor, groups: int, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """Interleave `groups` channel groups: channel g*(C/groups) + k goes to k*groups + g."""
    g = check_factor("channel_shuffle", groups, "groups")
    if _layout("channel_shuffle", x, data_format):
        _, h, w, c = x.shape
        _check_divisible("channel_shuffle", c, g, "channels", "groups")
        return reshape(transpose(reshape(x, [0, h, w, g, c // g]), [0, 1, 2, 4, 3]), [0, h, w, c])
    _, c, h, w = x.shape
    _check_divisible("channel_shuffle", c, g, "channels", "groups")
    return reshape(transpose(reshape(x, [0, g, c // g, h, w]), [0, 2, 1, 3, 4]), [0, c, h, w])


def _check_divisible(api: str, size: int, by: int, what: str, by_what: str) -> None:
    if size % by != 0:
        raise ValueError(f"{api}: the {what} ({size}) must be divisible by {by_what} ({by})")
