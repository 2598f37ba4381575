"""Tensors on a device place (fixture `any_gpu`: the CuPy stand-in, and the real GPU where there is
one): placement, moves between places, creation on the default device, conversion to host values,
indexing, and the error an op mixing places raises. Each device result is compared with the same
code run on the CPU."""
import numpy as np
import pytest

import runtime as paddle

from helpers import assert_device_equal

GPU = paddle.CUDAPlace(0)
CPU = paddle.CPUPlace()


def _a(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_to_tensor_on_a_gpu_place_holds_a_device_array_with_the_values(any_gpu):
    a = _a(3, 4)
    t = paddle.to_tensor(a, place=GPU)
    assert t.place == GPU and t.place.is_gpu_place() and t.is_cuda
    assert type(t._data) is any_gpu.ndarray
    assert_device_equal(t.numpy(), a, any_gpu)


@pytest.mark.parametrize("place", [GPU, "gpu", "gpu:0"], ids=["CUDAPlace", "name", "name-and-index"])
def test_to_tensor_accepts_a_place_or_its_name(any_gpu, place):
    assert paddle.to_tensor([1.0, 2.0], place=place).place == GPU


def test_cuda_and_cpu_copy_between_places_keeping_values_and_flags(any_gpu):
    a = _a(5, dtype=np.float64)
    x = paddle.to_tensor(a, stop_gradient=False)
    g = x.cuda()
    assert g.place == GPU and g.stop_gradient is False
    back = g.cpu()
    assert back.place == CPU and back.stop_gradient is False
    assert_device_equal(back.numpy(), a, any_gpu)
    g._data[0] = 7.0  # a copy: writing the device tensor leaves the host one alone
    assert x.numpy()[0] == a[0]


def test_cuda_of_a_device_tensor_and_cpu_of_a_host_tensor_return_the_tensor_itself(any_gpu):
    x = paddle.to_tensor([1.0])
    g = x.cuda(0)
    assert x.cpu() is x and g.cuda() is g and g.cuda(0) is g


def test_tensor_to_moves_casts_or_matches_another_tensor(any_gpu):
    x = paddle.to_tensor([1.5, -2.5])
    g = x.to("gpu")
    assert g.place == GPU and g.dtype == paddle.float32
    g64 = x.to("gpu:0", "float64")
    assert g64.place == GPU and g64.dtype == paddle.float64
    assert g64.to(x).place == CPU and g64.to(x).dtype == paddle.float32
    assert x.to(paddle.float64).place == CPU and x.to(dtype="float64").dtype == paddle.float64
    assert g.to("gpu") is g and x.to(device="cpu") is x
    assert_device_equal(g64.to(x).numpy(), x.numpy(), any_gpu)


def test_tensor_to_rejects_unknown_arguments(any_gpu):
    with pytest.raises(TypeError, match="unexpected keyword argument 'place'"):
        paddle.to_tensor([1.0]).to(place="gpu")
    with pytest.raises(TypeError, match="expected to"):
        paddle.to_tensor([1.0]).to()


def test_a_cast_by_to_stays_differentiable(any_gpu):
    x = paddle.to_tensor([1.0, 2.0], place=GPU, stop_gradient=False)
    y = (x.to("float64") * 3.0).sum()
    y.backward()
    assert x.grad.place == GPU
    assert_device_equal(x.grad.numpy(), np.array([3.0, 3.0], np.float32), any_gpu)


CREATION = {
    "zeros": lambda: paddle.zeros([2, 3]),
    "ones": lambda: paddle.ones([2, 3], dtype="float64"),
    "full": lambda: paddle.full([2, 2], 1.5),
    "arange": lambda: paddle.arange(0, 5),
    "linspace": lambda: paddle.linspace(0, 1, 5),
    "eye": lambda: paddle.eye(3),
    "rand": lambda: paddle.rand([3, 2]),
    "randn": lambda: paddle.randn([3, 2]),
    "randint": lambda: paddle.randint(0, 10, [4]),
    "uniform": lambda: paddle.uniform([3], min=-1.0, max=1.0),
    "to_tensor": lambda: paddle.to_tensor([[1, 2], [3, 4]]),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_after_set_device_gpu_lands_on_the_gpu_with_the_cpu_values(any_gpu, name):
    paddle.seed(7)
    on_cpu = CREATION[name]()
    paddle.set_device("gpu")
    assert paddle.get_device() == "gpu:0"
    paddle.seed(7)  # random numbers are drawn on the host: the same seed gives the same values on every place
    on_gpu = CREATION[name]()
    assert on_cpu.place == CPU and on_gpu.place == GPU
    assert on_gpu.dtype == on_cpu.dtype and on_gpu.shape == on_cpu.shape
    assert_device_equal(on_gpu.numpy(), on_cpu.numpy(), any_gpu)


def test_host_conversions_of_a_device_tensor_match_the_cpu_ones(any_gpu):
    a = np.array([[1.5, -2.0], [3.25, 0.0]], np.float32)
    c, g = paddle.to_tensor(a), paddle.to_tensor(a, place=GPU)
    assert type(g.numpy()) is np.ndarray
    assert g.tolist() == c.tolist()
    assert g.item(2) == c.item(2) == 3.25 and g.item(0, 1) == c.item(0, 1)
    one = paddle.to_tensor([2.5], place=GPU)
    assert one.item() == 2.5 and float(one) == 2.5 and int(one) == 2 and bool(one) is True
    assert repr(g) == repr(c).replace("Place(cpu)", "Place(gpu:0)")
    assert_device_equal(np.asarray(g), a, any_gpu)  # __array__ copies to the host, as Paddle's
    assert np.array(g, dtype=np.float64).dtype == np.float64


def test_indexing_a_device_tensor_with_host_and_device_indices_matches_the_cpu(any_gpu):
    a = _a(4, 5)
    c, g = paddle.to_tensor(a), paddle.to_tensor(a, place=GPU)
    idx = np.array([3, 0, 3])
    keys = [1, (slice(1, 3), -1), [2, 0], idx, (idx, slice(None, None, 2)), c > 0]
    for key in keys:
        dev_key = g > 0 if isinstance(key, paddle.Tensor) else key
        got = g[dev_key]
        assert got.place == GPU
        assert_device_equal(got.numpy(), c[key].numpy(), any_gpu)
    got = g[paddle.to_tensor(idx, place=GPU)]
    assert_device_equal(got.numpy(), a[idx], any_gpu)


def test_setitem_on_a_device_tensor_with_host_values_and_indices_matches_the_cpu(any_gpu):
    a = _a(4, 5)
    c, g = paddle.to_tensor(a), paddle.to_tensor(a, place=GPU)
    for t, v in ((c, paddle.to_tensor([9.0])), (g, paddle.to_tensor([9.0], place=GPU))):
        t[0] = 1.0
        t[[1, 3], 2] = np.array([5.0, 6.0], np.float32)
        t[t < -1.0] = 0.0
        t[2, :2] = v
    assert g.place == GPU
    assert_device_equal(g.numpy(), c.numpy(), any_gpu)


def test_setitem_of_a_cpu_tensor_into_a_device_tensor_raises_the_mixed_place_error(any_gpu):
    g = paddle.to_tensor(np.zeros((2, 2), np.float32), place=GPU)
    with pytest.raises(ValueError, match=r"setitem: argument 'value' is on Place\(cpu\) but 'x' is on Place\(gpu:0\)"):
        g[0] = paddle.to_tensor([1.0, 2.0])
    assert_device_equal(g.numpy(), np.zeros((2, 2), np.float32), any_gpu)


def test_set_value_writes_host_data_into_a_device_tensor(any_gpu):
    g = paddle.to_tensor(np.zeros((2, 2), np.float32), place=GPU)
    g.set_value(np.ones((2, 2)))
    assert g.place == GPU
    assert_device_equal(g.numpy(), np.ones((2, 2), np.float32), any_gpu)


def test_an_op_mixing_places_raises_naming_op_arguments_and_places(any_gpu):
    x = paddle.to_tensor(_a(4), place=GPU)
    y = paddle.to_tensor(_a(4))
    with pytest.raises(ValueError) as info:
        paddle.add(x, y)
    assert str(info.value) == ("add: argument 'y' is on Place(cpu) but 'x' is on Place(gpu:0); "
                               "move it with .cuda() or .cpu()")
    with pytest.raises(ValueError, match=r"matmul: argument 'y' is on Place\(gpu:0\) but 'x' is on Place\(cpu\)"):
        paddle.matmul(y.reshape([1, 4]), x.reshape([4, 1]))


def test_a_one_element_cpu_tensor_does_not_mix_with_a_device_tensor_either(any_gpu):
    x = paddle.to_tensor(_a(4), place=GPU)
    with pytest.raises(ValueError, match="multiply: argument 'y' is on Place"):
        x * paddle.to_tensor(2.0, place=CPU)


def test_a_failed_mixed_place_op_changes_nothing(any_gpu):
    x = paddle.to_tensor(_a(4), place=GPU)
    before = x.numpy()
    with pytest.raises(ValueError):
        x.add_(paddle.to_tensor(_a(4, seed=1)))
    assert_device_equal(x.numpy(), before, any_gpu)
    assert x._version == 0


def test_python_scalars_join_a_device_tensor_on_its_place(any_gpu):
    a = _a(3)
    g = paddle.to_tensor(a, place=GPU)
    got = 2.0 * g - 1
    assert got.place == GPU
    assert_device_equal(got.numpy(), (2.0 * paddle.to_tensor(a) - 1).numpy(), any_gpu)


def test_check_nan_inf_flags_a_device_op_as_it_flags_a_cpu_op(any_gpu):
    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        for place in (CPU, GPU):
            x = paddle.to_tensor([1.0, 0.0], place=place)
            with pytest.raises(RuntimeError, match="op 'log' produced NaN or Inf in output 0"):
                paddle.log(x * 0.0)
            assert paddle.log(x + 1.0).place == place
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})


@pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks a machine without a GPU")
def test_a_gpu_place_without_a_gpu_raises_value_error_as_paddle_cpu_builds_do():
    for make in (lambda: paddle.to_tensor([1.0]).cuda(), lambda: paddle.to_tensor([1.0], place=paddle.CUDAPlace(0)),
                 lambda: paddle.set_device("gpu")):
        with pytest.raises(ValueError, match="not available"):
            make()
