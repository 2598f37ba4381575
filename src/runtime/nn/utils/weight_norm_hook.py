"""`weight_norm` / `remove_weight_norm`: reparameterise a layer's weight as g * v / ||v||.

As Paddle's: the parameter `name` is replaced by `name_g` (the norms over every axis but `dim`; a scalar for
dim=None) and `name_v` (the direction), and a forward pre-hook recomputes `layer.<name>` from them before
every call, so gradients reach g and v.
"""
from __future__ import annotations

from typing import Any

from ...ops.grad_mode import no_grad
from ...ops.norm import normalize
from ...ops.shape import reshape, transpose
from ...tensor import Tensor
from ..layer.layers import Layer

__all__ = ["weight_norm", "remove_weight_norm"]


def _norm_except_dim(p: Tensor, dim: int) -> Tensor:
    """The L2 norm of p over every axis but `dim` (of everything for dim=-1)."""
    if dim == -1:
        return ((p * p).sum() + 1e-12).sqrt()
    moved = _to_front(p, dim)
    return (reshape(moved, [moved.shape[0], -1]).pow(2).sum(axis=1)).sqrt()


def _to_front(p: Tensor, dim: int) -> Tensor:
    if dim == 0:
        return p
    perm = list(range(p.ndim))
    perm[0], perm[dim] = dim, 0
    return transpose(p, perm)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """g * v / ||v||, the norm over every axis but `dim`."""
    if dim == -1:
        return v / ((v * v).sum().sqrt() + 1e-12) * g
    moved = _to_front(v, dim)
    unit = reshape(normalize(reshape(moved, [moved.shape[0], -1]), axis=1), moved.shape)
    unit = _to_front(unit, dim)  # the swap is its own inverse
    shape = [1] * v.ndim
    shape[dim] = v.shape[dim]
    return unit * reshape(g, shape)


class WeightNorm:
    """The forward pre-hook: recomputes `layer.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def compute_weight(self, layer: Layer) -> Tensor:
        return _weight_norm(getattr(layer, self.name + "_v"), getattr(layer, self.name + "_g"), self.dim)

    @staticmethod
    def apply(layer: Layer, name: str, dim: int | None) -> WeightNorm:
        for hook in layer._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if name not in layer._parameters:
            raise ValueError(f"weight_norm: {type(layer).__name__} has no parameter named {name!r}")
        rank = layer._parameters[name].ndim
        dim = -1 if dim is None else dim
        if not -rank <= dim < rank:
            raise ValueError(f"weight_norm: argument 'dim' must be in [-{rank}, {rank}) for a weight of rank "
                             f"{rank}, got {dim}")
        if dim != -1:
            dim %= rank
        fn = WeightNorm(name, dim)
        w = getattr(layer, name)
        del layer._parameters[name]
        with no_grad():
            g_value = _norm_except_dim(w, dim)
        v = layer.create_parameter(w.shape, dtype=w.dtype)
        layer.add_parameter(name + "_v", v)
        g = layer.create_parameter(g_value.shape, dtype=g_value.dtype)
        layer.add_parameter(name + "_g", g)
        with no_grad():
            v.set_value(w)
            g.set_value(g_value)
        setattr(layer, name, fn.compute_weight(layer))
        layer.register_forward_pre_hook(fn)
        return fn

    def remove(self, layer: Layer) -> None:
        with no_grad():
            w_value = self.compute_weight(layer)
        delattr(layer, self.name)
        del layer._parameters[self.name + "_g"]
        del layer._parameters[self.name + "_v"]
        w = layer.create_parameter(w_value.shape, dtype=w_value.dtype)
        layer.add_parameter(self.name, w)
        with no_grad():
            w.set_value(w_value)

    def __call__(self, layer: Layer, inputs: Any) -> None:
        setattr(layer, self.name, self.compute_weight(layer))


def weight_norm(layer: Layer, name: str = "weight", dim: int | None = 0) -> Layer:
    """Split `layer.<name>` into magnitude `<name>_g` and direction `<name>_v`; returns the layer."""
    WeightNorm.apply(layer, name, dim)
    return layer


def remove_weight_norm(layer: Layer, name: str = "weight") -> Layer:
    """Fold `<name>_g` and `<name>_v` back into one parameter `<name>` and drop the hook."""
    for key, hook in layer._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(layer)
            del layer._forward_pre_hooks[key]
            return layer
    raise ValueError(f"weight_norm of '{name}' not found in {layer}")
