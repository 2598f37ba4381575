"""sot.to_static with tensors on a GPU place (the CuPy stand-in, tests/fake_cupy.py): a compiled graph runs
on the place its tensors live on, the guards check the place, and a frame reading tensors on two places
compiles no graph mixing them."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import sot

from sot_helpers import assert_same_result, events, jit_of

GPU = paddle.CUDAPlace(0)


def _on(place, *shape, seed=0):
    return paddle.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32"), place=place)


def mlp_like(x, w):
    h = paddle.tanh(paddle.matmul(x, w)) * 2.0 + 1.0
    return h.sum(axis=-1), h


def test_a_graph_on_the_gpu_runs_there_and_matches_gpu_eager(fake_gpu):
    x, w = _on(GPU, 4, 3), _on(GPU, 3, 5, seed=1)
    want = mlp_like(x, w)
    jit = jit_of(mlp_like)
    got = jit(x, w)
    assert_same_result(got, want)
    assert all(type(t._data) is fake_gpu.ndarray for t in got)
    assert any(entry[0] == "launch" and entry[2] == "matmul" for entry in fake_gpu.trace)
    assert jit.sot_translator.translations == 1 and events(jit) == []


def test_the_guards_check_the_place_so_a_cpu_call_translates_again(fake_gpu):
    jit = jit_of(mlp_like)
    on_gpu = jit(_on(GPU, 4, 3), _on(GPU, 3, 5, seed=1))
    x, w = _on(paddle.CPUPlace(), 4, 3), _on(paddle.CPUPlace(), 3, 5, seed=1)
    got = jit(x, w)
    assert jit.sot_translator.translations == 2
    assert_same_result(got, mlp_like(x, w))
    assert all(t.place == paddle.CPUPlace() for t in got) and all(t.place == GPU for t in on_gpu)
    assert_same_result(jit(_on(GPU, 4, 3), _on(GPU, 3, 5, seed=1)), on_gpu)
    assert jit.sot_translator.translations == 2


def add_them(x, y):
    return x * 2.0 + y


def test_tensors_on_two_places_are_not_compiled_together_and_raise_as_eager(fake_gpu):
    x, y = _on(GPU, 3), _on(paddle.CPUPlace(), 3)
    with pytest.raises(Exception) as eager:
        add_them(x, y)
    jit = jit_of(add_them)
    with pytest.raises(type(eager.value)) as got:
        jit(x, y)
    assert str(got.value) == str(eager.value)
    assert any("a compiled graph runs on one place" in reason for _, reason, _ in events(jit)), events(jit)


def makes_ones(x):
    return x + paddle.ones([3])


def test_a_tensor_made_inside_follows_the_default_place_which_is_guarded(fake_gpu):
    paddle.set_device("gpu")
    x = _on(GPU, 3)
    want = makes_ones(x)
    jit = jit_of(makes_ones)
    assert_same_result(jit(x), want)
    paddle.set_device("cpu")
    c = _on(paddle.CPUPlace(), 3)
    assert_same_result(jit(c), makes_ones(c))
    assert jit.sot_translator.translations == 2


def test_a_layer_on_the_gpu_compiles_and_matches_eager(fake_gpu):
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    model.to(device="gpu")
    x = _on(GPU, 4, 6)
    with paddle.no_grad():
        want = model(x)
        got = sot.to_static(model)(x)
    assert got.place == GPU
    assert_same_result(got, want)


def test_a_layer_moved_to_the_gpu_after_compiling_compiles_again_there(fake_gpu):
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    jit = sot.to_static(model)
    x = _on(paddle.CPUPlace(), 4, 6)
    with paddle.no_grad():
        on_cpu = jit(x)
        model.to(device="gpu")
        g = _on(GPU, 4, 6)
        want, got = model(g), jit(g)
    assert on_cpu.place == paddle.CPUPlace() and got.place == GPU
    assert_same_result(got, want)


def test_a_tensor_guard_names_the_place_and_tells_places_apart(fake_gpu):
    from sot.guards import Guard, TensorMeta, exclusive
    g, c = _on(GPU, 2, 3), _on(paddle.CPUPlace(), 2, 3)
    on_gpu, on_cpu = TensorMeta.of(g), TensorMeta.of(c)
    assert "on Place(gpu:0)" in str(on_gpu) and "Place" not in str(on_cpu)
    a, b = Guard("f_locals['x']", "tensor_meta", on_gpu), Guard("f_locals['x']", "tensor_meta", on_cpu)
    assert exclusive(a, b)
    assert a.check.holds(g, on_gpu) and not a.check.holds(c, on_gpu) and not b.check.holds(g, on_cpu)


def test_a_function_compiled_for_cpu_inputs_compiles_again_for_gpu_inputs(fake_gpu):
    jit = jit_of(add_them)
    c = (_on(paddle.CPUPlace(), 3), _on(paddle.CPUPlace(), 3, seed=1))
    g = (_on(GPU, 3), _on(GPU, 3, seed=1))
    assert_same_result(jit(*c), add_them(*c))
    got = jit(*g)
    assert got.place == GPU and jit.sot_translator.translations == 2
    assert_same_result(got, add_them(*g))


def _train(model, forward, x, y, steps=3):
    opt = paddle.optimizer.Adam(1e-2, parameters=model.parameters())
    losses = []
    for _ in range(steps):
        loss = paddle.nn.functional.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()]


def test_a_model_trains_under_to_static_on_the_gpu_as_it_does_eagerly(any_gpu):
    # stand-in: NumPy's bits, so exactly equal; CUDA: the compiled Program's kernels (fused, FMA off) against
    # CuPy's one kernel per op, float32 over three Adam steps: within rtol 1e-5 / atol 1e-6
    tol = {"rtol": 0, "atol": 0} if any_gpu.__name__ == "fake_cupy" else {"rtol": 1e-5, "atol": 1e-6}
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((8, 6)).astype("float32"), place=GPU)
    y = paddle.to_tensor(rng.integers(0, 3, 8), place=GPU)
    runs = []
    for jit in (False, True):
        paddle.seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        model.to(device="gpu")
        runs.append(_train(model, sot.to_static(model) if jit else model, x, y))
    (eager_losses, eager_params), (jit_losses, jit_params) = runs
    assert all(p.place == GPU for p in model.parameters())
    np.testing.assert_allclose(jit_losses, eager_losses, **tol)
    for got, want in zip(jit_params, eager_params):
        np.testing.assert_allclose(got, want, **tol)


def test_a_tensor_made_on_the_default_cpu_next_to_gpu_tensors_ends_the_graph_and_raises_as_eager(fake_gpu):
    x = _on(GPU, 3)
    with pytest.raises(ValueError) as eager:
        makes_ones(x)
    jit = jit_of(makes_ones)
    with pytest.raises(ValueError) as got:
        jit(x)
    assert str(got.value) == str(eager.value)
    reasons = [reason for _, reason, _ in events(jit)]
    assert any("makes a tensor on Place(cpu) where the graph's tensors are on Place(gpu:0)" in r for r in reasons), reasons


def test_a_gpu_entry_left_in_a_cache_never_matches_once_no_gpu_is_there(fake_gpu, monkeypatch):
    # guard code is generated again whenever a code object's cache changes, for every entry it holds:
    # a GPU entry (here from the stand-in) must then give a check that fails, not an error
    jit = jit_of(add_them)
    g = (_on(GPU, 3), _on(GPU, 3, seed=1))
    jit(*g)
    monkeypatch.undo()   # the stand-in is gone: no GPU from here on
    assert not paddle.is_compiled_with_cuda()
    c = (_on(paddle.CPUPlace(), 3), _on(paddle.CPUPlace(), 3, seed=1))
    assert_same_result(jit(*c), add_them(*c))
    assert jit.sot_translator.translations == 2
