"""`parameters_to_vector` / `vector_to_parameters`: all parameters as one flat vector and back."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...ops.grad_mode import no_grad
from ...ops.shape import concat, reshape, split
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor], name: str | None = None) -> Tensor:
    """The parameters flattened and concatenated, in order (differentiable)."""
    return concat([reshape(p, [-1]) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor], name: str | None = None) -> None:
    """Write consecutive slices of `vec` into the parameters, in order (in place, no gradient)."""
    parameters = list(parameters)
    sizes = [int(np.prod(p.shape)) for p in parameters]
    if not isinstance(vec, Tensor) or vec.ndim != 1 or vec.shape[0] != sum(sizes):
        raise ValueError(f"vector_to_parameters: argument 'vec' must be a 1-D tensor of {sum(sizes)} elements "
                         f"(the parameters' total), got {getattr(vec, 'shape', type(vec).__name__)}")
    with no_grad():
        for p, part in zip(parameters, split(vec, sizes) if parameters else []):
            p.set_value(reshape(part, p.shape))
