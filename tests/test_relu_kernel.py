"""ReLU runs as `np.maximum` against a row of zeros (faster than against the scalar 0): eager, fused chains
and conv epilogues must still give `np.maximum(x, 0)`'s bits, signed zeros and NaN payloads included."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot


def _awkward(dtype, shape=(6, 33)) -> np.ndarray:
    x = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    x.reshape(-1)[:6] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf]
    return x


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 33), (7,), (3, 1, 5)])
def test_eager_relu_has_the_bits_of_maximum_with_zero(dtype, shape):
    x = _awkward(dtype, shape)
    assert F.relu(paddle.to_tensor(x)).numpy().tobytes() == np.maximum(x, 0).tobytes()


def test_a_zero_dim_relu_is_maximum_with_zero():
    x = np.array(-0.0, np.float32)
    assert F.relu(paddle.to_tensor(x)).numpy().tobytes() == np.maximum(x, 0).tobytes()


def test_relu_in_a_compiled_chain_has_the_bits_of_maximum_with_zero():
    def f(x):
        return F.relu(x * 1.0) + 0.0

    x = _awkward(np.float32)
    want = np.maximum(x * np.float32(1.0), 0) + np.float32(0.0)
    assert sot.to_static(f)(paddle.to_tensor(x)).numpy().tobytes() == want.tobytes()
