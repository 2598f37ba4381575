"""`spectral_norm`: divide a layer's weight by its largest singular value, estimated by power iteration.

As Paddle's: the parameter `name` becomes `name_orig`; buffers `name_u` and `name_v` (random unit vectors
at first) carry the power iteration from call to call; in training mode each forward runs
`n_power_iterations` steps (no gradient flows through them) before `layer.<name>` = weight / sigma.
"""
from __future__ import annotations

from typing import Any

from ...ops.grad_mode import no_grad
from ...ops.linalg import dot, matmul, mv
from ...ops.norm import normalize
from ...ops.random import standard_normal
from ...ops.shape import reshape, transpose
from ...tensor import Tensor
from ..layer.conv import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
from ..layer.common import Linear
from ..layer.layers import Layer

__all__ = ["spectral_norm"]


def weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """The weight as a matrix whose rows run along axis `dim`."""
    if dim != 0:
        weight = transpose(weight, [dim] + [d for d in range(weight.ndim) if d != dim])
    return reshape(weight, [weight.shape[0], -1])


class SpectralNorm:
    """The forward pre-hook: power-iterates u and v (training only) and sets `layer.<name>`."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def compute_weight(self, layer: Layer, do_power_iteration: bool) -> Tensor:
        weight = getattr(layer, self.name + "_orig")
        u, v = getattr(layer, self.name + "_u"), getattr(layer, self.name + "_v")
        mat = weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.set_value(normalize(matmul(mat, u, transpose_x=True), axis=0, epsilon=self.eps))
                    u.set_value(normalize(matmul(mat, v), axis=0, epsilon=self.eps))
                u, v = u.clone(), v.clone()
        return weight / dot(u, mv(mat, v))

    def __call__(self, layer: Layer, inputs: Any) -> None:
        setattr(layer, self.name, self.compute_weight(layer, do_power_iteration=layer.training))

    @staticmethod
    def apply(layer: Layer, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in layer._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        if name not in layer._parameters:
            raise ValueError(f"spectral_norm: {type(layer).__name__} has no parameter named {name!r}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = layer._parameters[name]
        with no_grad():
            h, w = weight_matrix(weight, dim).shape
            u = normalize(standard_normal([h], dtype=weight.dtype), axis=0, epsilon=eps)
            v = normalize(standard_normal([w], dtype=weight.dtype), axis=0, epsilon=eps)
        del layer._parameters[name]
        layer.add_parameter(name + "_orig", weight)
        setattr(layer, name, weight * 1.0)
        layer.register_buffer(name + "_u", u)
        layer.register_buffer(name + "_v", v)
        layer.register_forward_pre_hook(fn)
        return fn


def spectral_norm(layer: Layer, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Layer:
    """Spectrally normalise `layer.<name>`; dim defaults to 1 for Linear and transposed convolutions (their
    output axis), else 0. Returns the layer."""
    if dim is None:
        dim = 1 if isinstance(layer, (Conv1DTranspose, Conv2DTranspose, Conv3DTranspose, Linear)) else 0
    SpectralNorm.apply(layer, name, n_power_iterations, dim, eps)
    return layer
