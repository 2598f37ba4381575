"""paddle.save / paddle.load and state dicts with device tensors (fixture `any_gpu`: the CuPy
stand-in, and the real GPU where there is one): a file saved from the GPU holds host arrays (it loads
where no GPU exists), load puts tensors on the default place as Paddle's does, and loading state into
device parameters keeps them on the device."""
import sys

import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F

from helpers import assert_device_equal

GPU = paddle.CUDAPlace(0)


def _model():
    paddle.seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1D(4), nn.Linear(4, 2))


def test_a_state_dict_saved_from_the_gpu_loads_with_no_gpu_at_all(any_gpu, tmp_path, monkeypatch):
    model = _model().to(device="gpu")
    want = {k: v.numpy() for k, v in model.state_dict().items()}
    path = tmp_path / "model.pdparams"
    paddle.save(model.state_dict(), str(path))
    from runtime import place
    monkeypatch.setattr(place, "_cupy", lambda: None)  # a CPU-only machine: no CuPy module either
    monkeypatch.delitem(sys.modules, "cupy")
    paddle.set_device("cpu")
    loaded = paddle.load(str(path))
    assert loaded.keys() == want.keys()
    for k, v in loaded.items():
        assert type(v._data) is np.ndarray and v.place.is_cpu_place()
        assert_device_equal(v.numpy(), want[k], any_gpu)


def test_load_puts_tensors_on_the_default_place(any_gpu, tmp_path):
    path = tmp_path / "t.pdtensor"
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    paddle.save({"t": paddle.to_tensor(a, place=GPU), "n": 3}, str(path))
    on_cpu = paddle.load(str(path))
    assert on_cpu["t"].place.is_cpu_place() and on_cpu["n"] == 3
    paddle.set_device("gpu")
    on_gpu = paddle.load(str(path))
    assert on_gpu["t"].place == GPU
    assert_device_equal(on_gpu["t"].numpy(), a, any_gpu)
    assert paddle.load(str(path), return_numpy=True)["t"].__class__ is np.ndarray


def test_set_state_dict_into_device_parameters_keeps_them_on_the_device(any_gpu, tmp_path):
    source = _model()
    paddle.save(source.state_dict(), str(tmp_path / "m.pdparams"))
    target = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1D(4), nn.Linear(4, 2)).to(device="gpu")
    params = target.parameters()
    target.set_state_dict(paddle.load(str(tmp_path / "m.pdparams")))
    assert [id(p) for p in target.parameters()] == [id(p) for p in params]
    for k, v in target.state_dict().items():
        assert v.place == GPU, k
        assert_device_equal(v.numpy(), source.state_dict()[k].numpy(), any_gpu)


def test_optimizer_state_saved_on_the_gpu_resumes_on_the_cpu_like_an_uninterrupted_run(any_gpu, tmp_path):
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    y = np.array([0, 1, 1, 0, 1], np.int64)

    def step(model, opt, place):
        loss = F.cross_entropy(model(paddle.to_tensor(x, place=place)), paddle.to_tensor(y, place=place))
        loss.backward()
        opt.step()
        opt.clear_grad()

    straight = _model()
    opt = paddle.optimizer.Adam(0.01, parameters=straight.parameters())
    for _ in range(3):
        step(straight, opt, paddle.CPUPlace())

    first = _model().to(device="gpu")
    opt = paddle.optimizer.Adam(0.01, parameters=first.parameters())
    step(first, opt, GPU)
    paddle.save(first.state_dict(), str(tmp_path / "m.pdparams"))
    paddle.save(opt.state_dict(), str(tmp_path / "m.pdopt"))
    resumed = first.to(device="cpu")  # the same parameter names, which optimizer state is keyed by
    resumed.set_state_dict(paddle.load(str(tmp_path / "m.pdparams")))
    opt = paddle.optimizer.Adam(0.01, parameters=resumed.parameters())
    opt.set_state_dict(paddle.load(str(tmp_path / "m.pdopt")))
    for _ in range(2):
        step(resumed, opt, paddle.CPUPlace())
    for k, v in straight.state_dict().items():
        assert_device_equal(resumed.state_dict()[k].numpy(), v.numpy(), any_gpu, err_msg=k)
