"""The Tensor API: construction defaults, metadata, conversion, operators and their errors."""
import copy

import numpy as np
import pytest

import runtime as paddle


def test_to_tensor_default_dtypes_follow_paddle():
    assert paddle.to_tensor([1.0, 2.0]).dtype == paddle.float32
    assert paddle.to_tensor([1, 2]).dtype == paddle.int64
    assert paddle.to_tensor(True).dtype == paddle.bool
    assert paddle.to_tensor(np.zeros(2, np.float64)).dtype == paddle.float64
    assert paddle.to_tensor(np.zeros(2, np.int32)).dtype == paddle.int32
    assert paddle.to_tensor([1, 2.5]).dtype == paddle.float32
    assert paddle.to_tensor([1.0], dtype="float64").dtype == paddle.float64
    paddle.set_default_dtype("float64")
    assert paddle.to_tensor([1.0]).dtype == paddle.float64


def test_to_tensor_copies_and_defaults_to_stop_gradient():
    a = np.arange(3.0)
    t = paddle.to_tensor(a)
    a[0] = 100.0
    assert t.numpy()[0] == 0.0
    assert t.stop_gradient is True
    assert paddle.to_tensor(a, stop_gradient=False).stop_gradient is False


def test_to_tensor_rejects_ragged_and_strings():
    with pytest.raises(ValueError, match="to_tensor"):
        paddle.to_tensor([[1.0, 2.0], [3.0]])
    with pytest.raises(TypeError, match="string"):
        paddle.to_tensor(["a", "b"])


def test_dtype_objects_compare_with_strings_and_numpy():
    assert paddle.float32 == "float32"
    assert paddle.float32 == np.float32
    assert paddle.float32 != paddle.float64
    assert repr(paddle.int64) == "paddle.int64"
    assert len({paddle.float32, paddle.float32}) == 1
    with pytest.raises(TypeError, match="unsupported dtype"):
        paddle.to_tensor([1.0], dtype="float33")


def test_metadata():
    t = paddle.to_tensor(np.ones((2, 3, 4), np.float32))
    assert t.shape == [2, 3, 4] and isinstance(t.shape, list)
    assert t.ndim == 3 and t.dim() == 3
    assert t.size == 24
    assert t.numel().item() == 24
    assert repr(t.place) == "Place(cpu)"
    assert t.place == paddle.CPUPlace()
    assert len(t) == 2
    assert t.is_leaf
    assert t.name.startswith("generated_tensor_")


def test_item_tolist_bool_and_scalar_conversions():
    t = paddle.to_tensor([[1.5]])
    assert t.item() == 1.5 and float(t) == 1.5 and int(t) == 1
    assert paddle.to_tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert bool(paddle.to_tensor([0.0])) is False
    with pytest.raises(ValueError, match="one element"):
        paddle.to_tensor([1.0, 2.0]).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(paddle.to_tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="0-D"):
        len(paddle.to_tensor(1.0))
    assert [1, 2, 3][paddle.to_tensor(1)] == 2
    with pytest.raises(TypeError, match="integer"):
        [1, 2][paddle.to_tensor(1.0)]


def test_repr_matches_paddle_layout():
    t = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    assert repr(t) == ("Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), stop_gradient=True,\n"
                       "       [[1., 2.],\n        [3., 4.]])")


_BINARY = [
    (lambda a, b: a + b, np.add), (lambda a, b: a - b, np.subtract), (lambda a, b: a * b, np.multiply),
    (lambda a, b: a / b, np.true_divide), (lambda a, b: a // b, np.floor_divide),
    (lambda a, b: a % b, np.remainder), (lambda a, b: a ** b, np.power),
    (lambda a, b: a < b, np.less), (lambda a, b: a <= b, np.less_equal), (lambda a, b: a > b, np.greater),
    (lambda a, b: a >= b, np.greater_equal), (lambda a, b: a == b, np.equal), (lambda a, b: a != b, np.not_equal),
]


@pytest.mark.parametrize("op,ref", _BINARY)
def test_binary_operators_broadcast_like_numpy(op, ref):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (4,)).astype(np.float32)
    out = op(paddle.to_tensor(a), paddle.to_tensor(b))
    expected = ref(a, b)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("op,ref", _BINARY)
def test_operators_with_python_and_numpy_scalars_keep_tensor_dtype(op, ref):
    a = np.array([0.5, 1.5, 2.5], np.float32)
    t = paddle.to_tensor(a)
    for s in (2, 2.0, np.float64(2.0), np.int32(2)):
        out = op(t, s)
        np.testing.assert_allclose(out.numpy(), ref(a, np.float32(s)), rtol=1e-6)
        assert out.dtype in (paddle.float32, paddle.bool)
        rout = op(s, t)
        np.testing.assert_allclose(rout.numpy(), ref(np.float32(s), a), rtol=1e-6)


def test_int_tensor_with_float_scalar_becomes_default_float():
    t = paddle.to_tensor([1, 2, 3])
    out = t * 1.5
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [1.5, 3.0, 4.5])
    assert (t / 2).dtype == paddle.float32
    assert (t + 1).dtype == paddle.int64


def test_unary_and_bitwise_operators():
    a = np.array([-1.5, 0.5, 2.0], np.float32)
    t = paddle.to_tensor(a)
    np.testing.assert_array_equal((-t).numpy(), -a)
    np.testing.assert_array_equal(abs(t).numpy(), np.abs(a))
    i = paddle.to_tensor([1, 2, 3])
    j = paddle.to_tensor([3, 3, 1])
    np.testing.assert_array_equal((i & j).numpy(), np.array([1, 2, 1]))
    np.testing.assert_array_equal((i | j).numpy(), np.array([3, 3, 3]))
    np.testing.assert_array_equal((i ^ j).numpy(), np.array([2, 1, 2]))
    np.testing.assert_array_equal((~i).numpy(), ~np.array([1, 2, 3]))
    m = paddle.to_tensor([True, False])
    np.testing.assert_array_equal((~m).numpy(), [False, True])
    with pytest.raises(TypeError, match="bitwise_and"):
        paddle.to_tensor([1.0]) & paddle.to_tensor([2.0])


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"add: .*\[3, 4\].*\[3\]"):
        paddle.ones([3, 4]) + paddle.ones([3])


def test_inplace_operators_keep_identity_and_write_values():
    t = paddle.to_tensor([1.0, 2.0])
    alias = t.detach()
    before = id(t)
    t += 1
    t *= paddle.to_tensor([2.0, 3.0])
    assert id(t) == before
    np.testing.assert_allclose(t.numpy(), [4.0, 9.0])
    np.testing.assert_allclose(alias.numpy(), [4.0, 9.0])  # detach shares memory, as in Paddle
    with pytest.raises(ValueError, match="in-place"):
        t += paddle.ones([2, 2])


def test_inplace_on_leaf_requiring_grad_is_refused():
    w = paddle.to_tensor([1.0], stop_gradient=False)
    with pytest.raises(ValueError, match="leaf tensor"):
        w += 1
    np.testing.assert_allclose(w.numpy(), [1.0])
    with paddle.no_grad():
        w += 1
    np.testing.assert_allclose(w.numpy(), [2.0])


def test_astype_clone_detach_set_value():
    t = paddle.to_tensor([1.7, -2.2], stop_gradient=False)
    assert t.astype("int32").numpy().tolist() == [1, -2]
    c = t.clone()
    assert c.stop_gradient is False and not c.is_leaf
    d = t.detach()
    assert d.stop_gradient is True
    d.set_value(np.array([5.0, 6.0], np.float32))
    np.testing.assert_allclose(t.numpy(), [5.0, 6.0])
    with pytest.raises(ValueError, match="set_value"):
        d.set_value(np.zeros(3))


def test_deepcopy_copies_data():
    t = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    c = copy.deepcopy(t)
    c.set_value(np.zeros(2, np.float32))
    np.testing.assert_allclose(t.numpy(), [1.0, 2.0])
    assert c.stop_gradient is False


def test_numpy_interop():
    t = paddle.to_tensor([1.0, 2.0])
    assert np.asarray(t).tolist() == [1.0, 2.0]
    out = np.float32(2.0) * t
    assert isinstance(out, paddle.Tensor)
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])


def test_non_tensor_operand_is_rejected_clearly():
    with pytest.raises(TypeError):
        paddle.to_tensor([1.0]) + "a"
    with pytest.raises(TypeError, match="add: argument 'x' must be a Tensor or a number"):
        paddle.add(object(), paddle.to_tensor([1.0]))


def test_creation_ops_against_numpy():
    np.testing.assert_array_equal(paddle.zeros([2, 3]).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(paddle.ones([2], dtype="int32").numpy(), np.ones(2, np.int32))
    f = paddle.full([2, 2], 7)
    assert f.dtype == paddle.int64 and f.numpy().tolist() == [[7, 7], [7, 7]]
    assert paddle.full([1], 0.5).dtype == paddle.float32
    np.testing.assert_array_equal(paddle.arange(5).numpy(), np.arange(5))
    np.testing.assert_allclose(paddle.arange(0, 1, 0.25).numpy(), np.arange(0, 1, 0.25, dtype=np.float32))
    np.testing.assert_allclose(paddle.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5).astype(np.float32))
    np.testing.assert_array_equal(paddle.eye(2, 3).numpy(), np.eye(2, 3, dtype=np.float32))
    x = paddle.to_tensor(np.ones((2, 2), np.float64))
    assert paddle.zeros_like(x).dtype == paddle.float64
    assert paddle.full_like(x, 3, dtype="int64").numpy().tolist() == [[3, 3], [3, 3]]
    with pytest.raises(ValueError, match="zeros: argument 'shape'"):
        paddle.zeros([2, -3])
    with pytest.raises(ValueError, match="arange: argument 'step'"):
        paddle.arange(0, 3, 0)


def test_check_nan_inf_flag():
    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        with pytest.raises(RuntimeError, match="log"):
            paddle.log(paddle.to_tensor([-1.0]))
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})
    assert paddle.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": False}
    with pytest.raises(ValueError, match="unknown flag"):
        paddle.set_flags({"FLAGS_no_such_flag": 1})


def test_places_and_devices():
    assert paddle.get_device() == "cpu"
    assert paddle.CUDAPlace(1) == paddle.CUDAPlace(1) and paddle.CUDAPlace(0) != paddle.CUDAPlace(1)
    assert repr(paddle.CUDAPlace(0)) == "Place(gpu:0)"
    with pytest.raises(ValueError, match="set_device"):
        paddle.set_device("tpu")
    if not paddle.is_compiled_with_cuda():
        with pytest.raises(ValueError, match="not available"):
            paddle.set_device("gpu:0")


def test_erf_matches_the_standard_library_in_float64_and_float32():
    import math
    xs = np.concatenate([np.linspace(-7, 7, 2001), [0.0, -0.0, 1.0, 2.0, 3.5, 6.0, np.inf, -np.inf]])
    ref = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(paddle.erf(paddle.to_tensor(xs)).numpy(), ref, rtol=0, atol=1e-14)
    out32 = paddle.erf(paddle.to_tensor(xs.astype(np.float32)))
    assert out32.dtype == paddle.float32
    np.testing.assert_allclose(out32.numpy(), ref, rtol=0, atol=1e-6)
    assert np.isnan(paddle.erf(paddle.to_tensor([np.nan])).numpy()[0])


def test_sigmoid_is_stable_for_large_inputs_without_warnings():
    import warnings
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = paddle.sigmoid(paddle.to_tensor(x)).numpy()
    ref = np.array([0.0, 1 / (1 + np.exp(30.0)), 0.5, 1 / (1 + np.exp(-30.0)), 1.0])
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=0)
    assert out.dtype == np.float32
