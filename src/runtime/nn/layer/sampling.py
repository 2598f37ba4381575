"""`nn.Unfold` and `nn.Fold`: layers over `F.unfold` (im2col) and `F.fold` (col2im), for patch-based
models. As in Paddle they keep their arguments as given and check them on the first call."""
from __future__ import annotations

from typing import Any

from ...ops.sampling import fold, unfold
from ...tensor import Tensor
from .layers import Layer

__all__ = ["Unfold", "Fold"]


class Unfold(Layer):
    """x [N, C, H, W] -> its sliding kh x kw blocks as columns [N, C*kh*kw, L]."""

    def __init__(self, kernel_sizes: Any, dilations: Any = 1, paddings: Any = 0, strides: Any = 1,
                 name: str | None = None):
        super().__init__()
        self.kernel_sizes, self.dilations, self.paddings, self.strides, self.name = (
            kernel_sizes, dilations, paddings, strides, name)

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_sizes, self.strides, self.paddings, self.dilations)

    def extra_repr(self) -> str:
        return _window_repr(self)


class Fold(Layer):
    """Columns [N, C*kh*kw, L] -> summed back into [N, C, *output_sizes] (Unfold's adjoint)."""

    def __init__(self, output_sizes: Any, kernel_sizes: Any, dilations: Any = 1, paddings: Any = 0,
                 strides: Any = 1, name: str | None = None):
        super().__init__()
        self.output_sizes, self.kernel_sizes, self.dilations, self.paddings, self.strides, self.name = (
            output_sizes, kernel_sizes, dilations, paddings, strides, name)

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_sizes, self.kernel_sizes, self.strides, self.paddings, self.dilations)

    def extra_repr(self) -> str:
        return _window_repr(self)


def _window_repr(layer: Unfold | Fold) -> str:
    """Paddle's repr of both layers (output_sizes is not shown)."""
    text = (f"kernel_size={layer.kernel_sizes}, dilation={layer.dilations}, padding={layer.paddings}, "
            f"stride={layer.strides}")
    return text + (f", name={layer.name}" if layer.name else "")
