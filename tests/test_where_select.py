"""`where` on large same-dtype operands selects by bit operations instead of np.where's branch per
element: the result must be np.where's, bit for bit (NaN payloads, -0.0, broadcasting, views)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime as paddle
from runtime.ops.registry import get_op

WHERE = get_op("where").kernel
DTYPES = [np.float16, np.float32, np.float64, np.int16, np.int32, np.int64]


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16), x_row=st.booleans(), y_kind=st.sampled_from(
    ["full", "row", "zero", "scalar"]), strided=st.booleans())
def test_large_where_is_np_where_bit_for_bit(dtype, seed, x_row, y_kind, strided):
    rng = np.random.default_rng(seed)
    shape = (72, 80)                                  # 5760 elements: above the bit-select threshold
    raw = rng.integers(-2**15, 2**15, size=(shape[0] * 2, shape[1]))
    x = (raw[::2] if strided else raw[: shape[0]]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[0, :3] = [np.nan, -0.0, np.inf]
        x = x * dtype(0.5)
    if x_row:
        x = x[0]
    y = {"full": rng.standard_normal(shape).astype(dtype) * 7, "row": np.full(shape[1], -3, dtype),
         "zero": np.zeros((), dtype), "scalar": np.array(5, dtype)}[y_kind]
    condition = rng.random(shape) > 0.5
    got, want = WHERE(np, condition, x, y), np.where(condition, x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert _bits(got) == _bits(want)


def test_relu_gradient_is_the_upstream_gradient_where_the_input_is_positive_bit_for_bit():
    rng = np.random.default_rng(3)
    xs, gs = (rng.standard_normal((64, 128)).astype(np.float32) for _ in range(2))
    x = paddle.to_tensor(xs, stop_gradient=False)
    paddle.nn.functional.relu(x).backward(paddle.to_tensor(gs))
    assert _bits(x.grad.numpy()) == _bits(np.where(xs > 0, gs, np.float32(0)))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_small_and_mixed_dtype_where_still_match_np_where(dtype):
    rng = np.random.default_rng(1)
    c = rng.random((3, 4)) > 0.5
    x = rng.standard_normal((3, 4)).astype(dtype)
    assert _bits(WHERE(np, c, x, np.zeros(4, dtype))) == _bits(np.where(c, x, np.zeros(4, dtype)))
    big_c = rng.random((80, 80)) > 0.5
    mixed = WHERE(np, big_c, rng.standard_normal((80, 80)).astype(np.float32), np.zeros((80, 80), np.float64))
    assert mixed.dtype == np.float64
