"""`paddle.flops`: the FLOPs of one forward pass of a Layer on a random input, counted per leaf layer
with Paddle's formulas (multiply-adds count once). Only the leaf layer types below are counted; any
other leaf counts as zero, and says so. `custom_ops` maps a layer type to a counting function in
Paddle's form, `fn(layer, inputs, output)` adding to `layer.total_ops` (an int attribute that exists
while the hook runs), which replaces the built-in one."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import nn
from ..autograd import no_grad
from ..nn import Layer
from ..ops.random import randn

__all__ = ["flops"]


def _conv(m: Layer, x: tuple, y: Any) -> int:
    kernel_ops = np.prod(m.weight.shape[2:])
    bias_ops = 1 if m.bias is not None else 0
    return abs(int(int(y.numel()) * (x[0].shape[1] / m._groups * kernel_ops + bias_ops)))


def _batch_norm(m: Layer, x: tuple, y: Any) -> int:
    return abs(int(2 * x[0].numel())) if not m.training else 0


def _leaky_relu(m: Layer, x: tuple, y: Any) -> int:
    return int(x[0].numel())


def _linear(m: Layer, x: tuple, y: Any) -> int:
    return abs(int(m.weight.shape[0] * y.numel()))


def _avg_pool(m: Layer, x: tuple, y: Any) -> int:
    return int(y.numel())


def _adaptive_avg_pool(m: Layer, x: tuple, y: Any) -> int:
    kernel = np.array(x[0].shape[2:]) // np.array(y.shape[2:])
    return abs(int((np.prod(kernel) + 1) * y.numel()))


def _zero(m: Layer, x: tuple, y: Any) -> int:
    return 0


# by exact type, as Paddle (a subclass of Conv2D is not counted as one)
COUNTERS: dict[type, Callable[[Layer, tuple, Any], int]] = {
    nn.Conv1D: _conv, nn.Conv2D: _conv, nn.Conv3D: _conv,
    nn.Conv1DTranspose: _conv, nn.Conv2DTranspose: _conv, nn.Conv3DTranspose: _conv,
    nn.BatchNorm2D: _batch_norm, nn.BatchNorm: _batch_norm,
    nn.ReLU: _zero, nn.ReLU6: _zero, nn.LeakyReLU: _leaky_relu, nn.Linear: _linear, nn.Dropout: _zero,
    nn.AvgPool1D: _avg_pool, nn.AvgPool2D: _avg_pool, nn.AvgPool3D: _avg_pool,
    nn.AdaptiveAvgPool1D: _adaptive_avg_pool, nn.AdaptiveAvgPool2D: _adaptive_avg_pool,
    nn.AdaptiveAvgPool3D: _adaptive_avg_pool,
}


class Table:
    """A text table with columns as wide as their widest cell, printed as Paddle's flops detail."""

    def __init__(self, table_heads: list[str]):
        self.table_heads = table_heads
        self.table_len = [len(head) for head in table_heads]
        self.data: list[list] = []

    def add_row(self, row: list) -> None:
        if len(row) != len(self.table_heads):
            raise ValueError(f"The length of row data should be equal the length of table heads, but the data: "
                             f"{len(row)} is not equal table heads {len(self.table_heads)}")
        self.table_len = [max(n, len(str(cell))) for n, cell in zip(self.table_len, row)]
        self.data.append(row)

    def print_row(self, row: list) -> None:
        print("".join("|" + str(cell).center(n + 2) for cell, n in zip(row, self.table_len)) + "|")

    def print_shelf(self) -> None:
        print("".join("+" + "-" * (n + 2) for n in self.table_len) + "+")

    def print_table(self) -> None:
        self.print_shelf()
        self.print_row(self.table_heads)
        self.print_shelf()
        for row in self.data:
            self.print_row(row)
        self.print_shelf()


class _LeafCount:
    """What the hooks record for one leaf layer."""

    def __init__(self) -> None:
        self.ops = 0
        self.params = 0
        self.input_shape: list[int] | None = None
        self.output_shape: list[int] | None = None


def flops(net: Layer, input_size: list[int], custom_ops: dict[type, Callable] | None = None,
          print_detail: bool = False) -> int:
    """The FLOPs of `net` on a random float32 input of `input_size`; prints the total (and, with
    `print_detail`, a table per leaf layer)."""
    if not isinstance(net, Layer):
        raise TypeError(f"paddle.flops: argument 'net' must be an nn.Layer, got {type(net).__name__} (counting "
                        "a static Program is not supported)")
    return dynamic_flops(net, randn(input_size), custom_ops or {}, print_detail)


def dynamic_flops(model: Layer, inputs: Any, custom_ops: dict[type, Callable], print_detail: bool) -> int:
    """Count with forward hooks on every leaf layer of `model`, in eval mode and without gradients."""
    counts: dict[int, _LeafCount] = {}
    handles = []
    seen_types: set[type] = set()

    def add_hooks(m: Layer) -> None:
        if list(m.children()):
            return
        m_type = type(m)
        counter = custom_ops.get(m_type) or COUNTERS.get(m_type)
        if m_type not in seen_types:
            if m_type in custom_ops:
                print(f"Customize Function has been applied to {m_type}")
            elif counter is not None:
                print(f"{m_type}'s flops has been counted")
            else:
                print(f"Cannot find suitable count function for {m_type}. Treat it as zero FLOPs.")
        seen_types.add(m_type)

        def hook(layer: Layer, x: tuple, y: Any) -> None:
            count = counts.setdefault(id(layer), _LeafCount())
            if m_type in custom_ops:
                layer.total_ops = count.ops
                try:
                    counter(layer, x, y)
                    count.ops = int(layer.total_ops)
                finally:
                    del layer.total_ops
            elif counter is not None:
                count.ops += counter(layer, x, y)
            count.params = abs(int(sum(int(p.numel()) for p in layer.parameters())))
            count.input_shape = list(x[0].shape)
            count.output_shape = list((y[0] if isinstance(y, (list, tuple)) else y).shape)

        handles.append(m.register_forward_post_hook(hook))

    training = model.training
    model.eval()
    model.apply(add_hooks)
    try:
        with no_grad():
            model(inputs)
    finally:
        for handle in handles:
            handle.remove()
        if training:
            model.train()
    table = Table(["Layer Name", "Input Shape", "Output Shape", "Params", "Flops"])
    total_ops = total_params = 0
    for m in model.sublayers():
        count = counts.get(id(m))
        if count is None or list(m.children()):
            continue
        total_ops += count.ops
        total_params += count.params
        table.add_row([m.full_name(), count.input_shape, count.output_shape, count.params, count.ops])
    if print_detail:
        table.print_table()
    print(f"Total Flops: {total_ops}     Total Params: {total_params}")
    return total_ops
