"""Property tests: elementwise ops broadcast, promote and differentiate like NumPy says they should."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import runtime as paddle

_PAIRS = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
_FLOATS = st.floats(-3, 3, width=32)

_OPS = {
    "add": (paddle.add, np.add), "subtract": (paddle.subtract, np.subtract),
    "multiply": (paddle.multiply, np.multiply), "maximum": (paddle.maximum, np.maximum),
    "minimum": (paddle.minimum, np.minimum), "less_than": (paddle.less_than, np.less),
    "equal": (paddle.equal, np.equal),
}


@settings(max_examples=60, deadline=None)
@given(shapes=_PAIRS, name=st.sampled_from(sorted(_OPS)), data=st.data())
def test_binary_ops_broadcast_like_numpy(shapes, name, data):
    xs, ys = shapes.input_shapes
    x = data.draw(hnp.arrays(np.float32, xs, elements=_FLOATS))
    y = data.draw(hnp.arrays(np.float32, ys, elements=_FLOATS))
    ours, ref = _OPS[name]
    out = ours(paddle.to_tensor(x), paddle.to_tensor(y))
    expected = ref(x, y)
    assert out.shape == list(expected.shape)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out.numpy(), expected)


@settings(max_examples=40, deadline=None)
@given(shapes=_PAIRS, data=st.data())
def test_broadcast_gradients_sum_back_to_each_input(shapes, data):
    xs, ys = shapes.input_shapes
    x = data.draw(hnp.arrays(np.float64, xs, elements=st.floats(-2, 2)))
    y = data.draw(hnp.arrays(np.float64, ys, elements=st.floats(-2, 2)))
    tx, ty = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(y, stop_gradient=False)
    (tx * ty).sum().backward()
    out_shape = np.broadcast_shapes(xs, ys)
    # d/dx sum(x*y) = y broadcast to the output, summed over the broadcast axes back to x's shape
    gx = np.broadcast_to(y, out_shape)
    gy = np.broadcast_to(x, out_shape)
    np.testing.assert_allclose(tx.grad.numpy(), _sum_to(gx, xs), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ty.grad.numpy(), _sum_to(gy, ys), rtol=1e-12, atol=1e-12)


def _sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


_DTYPES = ["bool", "int32", "int64", "float32", "float64"]


@settings(max_examples=40, deadline=None)
@given(a=st.sampled_from(_DTYPES), b=st.sampled_from(_DTYPES))
def test_mixed_dtype_promotion_rule(a, b):
    x = paddle.ones([2], dtype=a)
    y = paddle.ones([2], dtype=b)
    out = x + y
    kinds = {"bool": 0, "int32": 1, "int64": 1, "float32": 2, "float64": 2}
    width = {"bool": 0, "int32": 32, "int64": 64, "float32": 32, "float64": 64}
    # float beats int beats bool; within a kind, the wider wins
    winner = max((a, b), key=lambda d: (kinds[d], width[d]))
    assert out.dtype == winner
