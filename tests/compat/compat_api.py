"""What the corpus models are written against, and how their weights and inputs are made.

The models in `models/` are Paddle model code: they use `paddle`, `nn` and `F` from here, which
are `runtime` in the test suite and real PaddlePaddle only when `record.py` runs with
COMPAT_REAL_PADDLE=1 in a scratch environment to record reference outputs. Every weight is set
from its position in the state_dict by a fixed formula (`fill_state`) and every input is made by a
seeded NumPy generator (`inputs_of`), so both frameworks compute from the same numbers.
"""
from __future__ import annotations

import os

import numpy as np

if os.environ.get("COMPAT_REAL_PADDLE") == "1":  # recording only: never set in the test suite
    import paddle  # noqa: F401
else:
    import runtime as paddle

nn = paddle.nn
F = paddle.nn.functional

__all__ = ["paddle", "nn", "F", "fill_state", "inputs_of", "to_tensors"]


def fill_state(layer) -> None:
    """Set every parameter and buffer of `layer` from its index in the state_dict: a scaled sine, so
    values differ between and within tensors; variances are kept positive."""
    for i, (name, tensor) in enumerate(layer.state_dict().items()):
        shape = list(tensor.shape)
        size = int(np.prod(shape)) if shape else 1
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else max(size, 1)
        values = np.sin(np.arange(size, dtype=np.float64) * 0.37 + i * 1.1) / np.sqrt(fan_in)
        if name.endswith(("_variance", "running_var")):
            values = np.abs(values) + 0.5
        dtype = str(tensor.numpy().dtype)
        tensor.set_value(values.reshape(shape).astype(dtype))


def inputs_of(specs: list[tuple], seed: int = 0) -> list[np.ndarray]:
    """Arrays for (shape, dtype, high[, low]) specs: floats uniform in [-1, 1), ints in [low, high)
    (low 0 unless given: lengths, for one, must be at least 1)."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype, high, *low in specs:
        if dtype.startswith("int"):
            out.append(rng.integers(low[0] if low else 0, high, size=shape).astype(dtype))
        else:
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
    return out


def to_tensors(arrays: list[np.ndarray]) -> list:
    return [paddle.to_tensor(a) for a in arrays]
