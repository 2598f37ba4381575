"""Convolution layers: Conv1D/2D/3D and their transposes over `F.conv*`."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...tensor import Tensor
from .. import functional as F
from ..initializer import Normal
from ._validation import positive_int
from .layers import Layer

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")
_FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _frozen(value: Any) -> Any:
    """Lists (nested too) as tuples: a layer's settings do not change after it is built."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _shown(value: Any) -> Any:
    """A setting as Paddle prints it (lists)."""
    return [_shown(v) for v in value] if isinstance(value, tuple) else value


def _ntuple(layer: str, arg: str, value: Any, n: int) -> tuple[int, ...]:
    """An int or n ints, as a tuple of n ints (immutable: a compiled forward relies on it; see
    runtime.structure)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (list, tuple)) and len(value) == n and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    raise ValueError(f"{layer}: argument '{arg}' must be an int or a list/tuple of {n} ints, got {value!r}")


class _ConvNd(Layer):
    """Shared construction: weight [out, in/groups, *k] (or [in, out/groups, *k] when transposed), bias [out]."""

    _fn: str
    _dims: int
    _transposed: bool = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 padding_mode: str = "zeros", output_padding: Any = 0, dilation: Any = 1, groups: int = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW"):
        super().__init__()
        layer, dims = type(self).__name__, self._dims
        for arg, v in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
            positive_int(layer, arg, v)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{layer}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if weight_attr is False:
            raise ValueError(f"{layer}: weight_attr must not be False (a convolution needs its weight)")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{layer}: argument 'padding_mode' must be one of {', '.join(_PADDING_MODES)}, "
                             f"got {padding_mode!r}")
        if padding_mode != "zeros" and not isinstance(padding, int):
            raise TypeError(f"{layer}: when padding_mode is {padding_mode!r}, padding must be an int, got {padding!r}")
        if data_format not in _FORMATS[dims]:
            raise ValueError(f"{layer}: argument 'data_format' must be one of {', '.join(_FORMATS[dims])}, "
                             f"got {data_format!r}")
        self._in_channels = in_channels
        self._out_channels = out_channels
        self._groups = groups
        self._data_format = data_format
        self._kernel_size = _ntuple(layer, "kernel_size", kernel_size, dims)
        self._stride = _ntuple(layer, "stride", stride, dims)
        self._dilation = _ntuple(layer, "dilation", dilation, dims)
        self._padding = _frozen(padding)
        self._padding_mode = padding_mode
        self.output_padding = _frozen(output_padding)
        if padding_mode != "zeros":
            self._reversed_padding_repeated_twice = (padding,) * (2 * dims)
        if self._transposed:
            filter_shape = [in_channels, out_channels // groups, *self._kernel_size]
            default_init = None  # Paddle's default (Xavier) for transposed filters
        else:
            filter_shape = [out_channels, in_channels // groups, *self._kernel_size]
            default_init = Normal(0.0, (2.0 / (int(np.prod(self._kernel_size)) * in_channels)) ** 0.5)
        self.weight = self.create_parameter(shape=filter_shape, attr=weight_attr, default_initializer=default_init)
        self.bias = self.create_parameter(attr=bias_attr, shape=[out_channels], is_bias=True)

    def forward(self, x: Tensor) -> Tensor:
        padding = self._padding
        if self._padding_mode != "zeros":
            x = F.pad(x, self._reversed_padding_repeated_twice, mode=self._padding_mode,
                      data_format=self._data_format)
            padding = 0
        return getattr(F, self._fn)(x, self.weight, bias=self.bias, stride=self._stride, padding=padding,
                                    dilation=self._dilation, groups=self._groups, data_format=self._data_format)

    def extra_repr(self) -> str:
        text = f"{self._in_channels}, {self._out_channels}, kernel_size={_shown(self._kernel_size)}"
        if self._stride != (1,) * self._dims:
            text += f", stride={_shown(self._stride)}"
        if self._padding != 0:
            text += f", padding={_shown(self._padding)}"
        if self._padding_mode != "zeros":
            text += f", padding_mode={self._padding_mode}"
        if self.output_padding != 0:
            text += f", output_padding={_shown(self.output_padding)}"
        if self._dilation != (1,) * self._dims:
            text += f", dilation={_shown(self._dilation)}"
        if self._groups != 1:
            text += f", groups={self._groups}"
        return text + f", data_format={self._data_format}"


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self.output_padding if output_size is None else 0
        return getattr(F, self._fn)(x, self.weight, bias=self.bias, stride=self._stride, padding=self._padding,
                                    output_padding=output_padding, dilation=self._dilation, groups=self._groups,
                                    output_size=output_size, data_format=self._data_format)


def _conv_init(layout: str) -> Callable[..., None]:
    """Conv1D/2D/3D's __init__ in Paddle's argument order, `layout` the default data_format."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, padding_mode: str = "zeros", weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = layout):
        _ConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding, padding_mode, 0, dilation,
                         groups, weight_attr, bias_attr, data_format)
    return __init__


def _conv_transpose_init(layout: str) -> Callable[..., None]:
    """Conv2DTranspose/Conv3DTranspose's __init__ in Paddle's argument order, `layout` the default data_format."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, dilation: Any = 1, groups: int = 1, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = layout):
        _ConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding, "zeros", output_padding,
                         dilation, groups, weight_attr, bias_attr, data_format)
    return __init__


class Conv1D(_ConvNd):
    """1-D convolution over [N, C, L] (or [N, L, C]) inputs."""

    _fn, _dims = "conv1d", 1
    __init__ = _conv_init("NCL")


class Conv2D(_ConvNd):
    """2-D convolution over [N, C, H, W] (or NHWC) inputs."""

    _fn, _dims = "conv2d", 2
    __init__ = _conv_init("NCHW")


class Conv3D(_ConvNd):
    """3-D convolution over [N, C, D, H, W] (or NDHWC) inputs."""

    _fn, _dims = "conv3d", 3
    __init__ = _conv_init("NCDHW")


class Conv1DTranspose(_ConvTransposeNd):
    """1-D transposed convolution; weight [in, out/groups, k]."""

    _fn, _dims = "conv1d_transpose", 1

    # Paddle orders groups before dilation here, unlike Conv2DTranspose / Conv3DTranspose
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, dilation: Any = 1, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, "zeros", output_padding, dilation,
                         groups, weight_attr, bias_attr, data_format)


class Conv2DTranspose(_ConvTransposeNd):
    """2-D transposed convolution; weight [in, out/groups, kh, kw]."""

    _fn, _dims = "conv2d_transpose", 2
    __init__ = _conv_transpose_init("NCHW")


class Conv3DTranspose(_ConvTransposeNd):
    """3-D transposed convolution; weight [in, out/groups, kd, kh, kw]."""

    _fn, _dims = "conv3d_transpose", 3
    __init__ = _conv_transpose_init("NCDHW")
