"""What the corpus test and the recorder compute the same way in both frameworks."""
from __future__ import annotations

import numpy as np

from compat_api import fill_state, inputs_of, paddle


def prepared(module) -> tuple:
    """The model of `module` with its fixed weights, and its inputs as NumPy arrays."""
    layer = module.make()
    fill_state(layer)
    return layer, inputs_of(module.INPUTS)


def outputs_of(result) -> list[np.ndarray]:
    """The tensors of a forward's result (a tensor, or nested tuples/lists of them) as arrays, in order."""
    if isinstance(result, (tuple, list)):
        return [a for r in result for a in outputs_of(r)]
    return [result.numpy()]


def _tensors(result) -> list:
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _tensors(r)]
    return [result]


def reference_loss(result):
    """A scalar that weighs every output element differently (a plain sum would hide permutations)."""
    total = None
    for t in _tensors(result):
        if t.dtype not in (paddle.float32, paddle.float64):
            continue
        weights = np.cos(np.arange(int(np.prod(t.shape)), dtype=np.float64) * 0.61).reshape(t.shape)
        term = (t * paddle.to_tensor(weights.astype(str(t.numpy().dtype)))).sum()
        total = term if total is None else total + term
    return total
