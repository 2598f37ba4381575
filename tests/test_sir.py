"""StatementIR (sot.ir): SIRs built by hand with SIRBuilder, their text form, metas, lowering and
compiled runs. Oracles: eager runtime on the same calls (values, metas, gradients, training with
Adam, the exceptions eager code raises)."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime.ops.registry import all_ops
from sot.ir.builder import SIRBuilder
from sot.ir.compiled import CompiledSIR
from sot.ir.lower import lower
from sot.ir.symbol import Meta


def _leaf(shape, grad=False, dtype="float32"):
    return paddle.to_tensor(np.random.standard_normal(shape).astype(dtype), stop_gradient=not grad)


def _inputs(builder, tensors):
    return [builder.add_input(Meta.from_tensor(t)) for t in tensors]


def _assert_same(compiled_outs, eager_outs, rtol=0.0):
    assert len(compiled_outs) == len(eager_outs)
    for c, e in zip(compiled_outs, eager_outs):
        assert Meta.from_tensor(c) == Meta.from_tensor(e)
        if rtol:
            np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=rtol, atol=1e-7)
        else:
            np.testing.assert_array_equal(c.numpy(), e.numpy())


# ---------------------------------------------------------------- functions built by hand
def _chain_eager(x, y):
    a = paddle.exp(x * y - 1.5)
    return (a + x) / 2.0, paddle.tanh(a)


def _chain_build(b, x, y):
    t = b.call_method("__mul__", x, (y,))
    t = b.call_method("__sub__", t, (1.5,))
    a = b.call_api(paddle.exp, (t,))
    s = b.call_method("__add__", a, (x,))
    return b.call_method("__truediv__", s, (2.0,)), b.call_api(paddle.tanh, (a,))


def _mm_eager(x, w):
    return (F.relu(paddle.matmul(x, w, transpose_y=True)).sum(axis=1, keepdim=True),)


def _mm_build(b, x, w):
    h = b.call_api(F.relu, (b.call_api(paddle.matmul, (x, w), {"transpose_y": True}),))
    return (b.call_method("sum", h, (), {"axis": 1, "keepdim": True}),)


CASES = {
    "elementwise_chain": (_chain_build, _chain_eager, lambda: [_leaf([3, 4], True), _leaf([4])]),
    "matmul_relu": (_mm_build, _mm_eager, lambda: [_leaf([5, 8], True), _leaf([6, 8], True)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_function_matches_eager_values_metas_and_gradients(case):
    build, eager, make = CASES[case]
    inputs = make()
    b = SIRBuilder()
    outs = build(b, *_inputs(b, inputs))
    b.set_outputs(outs)
    compiled = CompiledSIR(b.build())
    expected = eager(*inputs)
    assert [s.meta for s in outs] == [Meta.from_tensor(e) for e in expected]
    got = compiled(*inputs)
    _assert_same(got, expected)
    weights = [_leaf(e.shape) for e in expected]
    sum(((g * w).sum() for g, w in zip(got, weights)), paddle.zeros([])).backward()
    compiled_grads = [None if t.grad is None else t.grad.numpy() for t in inputs]
    for t in inputs:
        t.clear_grad(set_to_zero=False)
    sum(((e * w).sum() for e, w in zip(expected, weights)), paddle.zeros([])).backward()
    for t, g in zip(inputs, compiled_grads):
        if t.stop_gradient:
            assert g is None and t.grad is None
        else:
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- text form
def test_text_form_is_readable_and_stable():
    scale = paddle.to_tensor(np.ones(3, "float32"))
    inner = SIRBuilder("SIR_inner")
    a, c = inner.add_input(Meta.make([2, 3], "float32")), inner.add_input(Meta.make([3], "float32"))
    inner.set_outputs([inner.call_api(paddle.multiply, (a, c))])
    inner = inner.build()
    linear = paddle.nn.Linear(3, 3)
    b = SIRBuilder("SIR_outer")
    x = b.add_input(Meta.make([2, 3], "float32", stop_gradient=False))
    y = b.call_layer(linear, (x,))
    z = b.call_method("reshape", y, ([3, -1],))
    parts = b.call_api(paddle.split, (b.call_method("reshape", z, ([2, 3],)), [1, 2]), {"axis": 1})
    (w,) = b.call_sir(inner, (y, scale_sym := b.add_input(Meta.make([3], "float32"))))
    b.call_api(paddle.multiply, (w, scale))
    b.set_outputs([w, parts])
    assert str(b.build()) == """\
StatementIR: SIR_outer
  inputs: [var_0: float32[2, 3] requires_grad, var_6: float32[3]]
  outputs: [var_7, var_4, var_5]
  statements:
    layer  || var_1 = layer_0:Linear(var_0)  # float32[2, 3] requires_grad
    method || var_2 = var_1.reshape([3, -1])  # float32[3, 2] requires_grad
    method || var_3 = var_2.reshape([2, 3])  # float32[2, 3] requires_grad
    api    || [var_4, var_5] = runtime.split(var_3, [1, 2], axis=1)  # (float32[2, 1] requires_grad, float32[2, 2] requires_grad)
    sir    || (var_7,) = SIR_inner(var_1, var_6)  # float32[2, 3] requires_grad
    api    || var_8 = runtime.multiply(var_7, tensor<float32[3]>)  # float32[2, 3] requires_grad

StatementIR: SIR_inner
  inputs: [var_0: float32[2, 3], var_1: float32[3]]
  outputs: [var_2]
  statements:
    api    || var_2 = runtime.multiply(var_0, var_1)  # float32[2, 3]"""
    assert scale_sym.name == "var_6"


# ---------------------------------------------------------------- metas
META_CALLS = [
    ("add broadcast", lambda x, y: paddle.add(x, y), [[3, 1, 4], [5, 1]]),
    ("matmul", lambda x, y: paddle.matmul(x, y), [[2, 3, 4], [4, 6]]),
    ("argmax int64", lambda x, y: paddle.argmax(x * y, axis=1), [[3, 4], [4]]),
    ("compare bool", lambda x, y: x > y, [[3, 4], [3, 4]]),
    ("reshape -1", lambda x, y: paddle.reshape(x + y, [-1, 2]), [[3, 4], [4]]),
    ("concat", lambda x, y: paddle.concat([x, y], axis=0), [[3, 4], [2, 4]]),
    ("topk pair", lambda x, y: paddle.topk(x - y, 2), [[3, 4], [3, 4]]),
    ("cast", lambda x, y: paddle.cast(x + y, "float64"), [[2], [2]]),
]


@pytest.mark.parametrize("name, fn, shapes", META_CALLS, ids=[c[0] for c in META_CALLS])
@pytest.mark.parametrize("grad_mode", [True, False])
def test_metas_equal_the_eager_results_without_running_kernels(name, fn, shapes, grad_mode, monkeypatch):
    x, y = _leaf(shapes[0], True), _leaf(shapes[1])
    with paddle.set_grad_enabled(grad_mode):
        expected = fn(x, y)
        for op in all_ops().values():  # translation must run no kernel at all
            monkeypatch.setattr(op, "kernel", _no_kernel)
        b = SIRBuilder()
        got = b.call_api(fn, _inputs(b, [x, y]))
    flat_expected = expected if isinstance(expected, (tuple, list)) else [expected]
    flat_got = got if isinstance(got, (tuple, list)) else [got]
    assert [s.meta for s in flat_got] == [Meta.from_tensor(e) for e in flat_expected]


def _no_kernel(*args, **kwargs):
    raise AssertionError("a kernel ran during translation")


def test_unknown_sizes_stay_unknown_and_lower_to_one_program_for_all_sizes():
    b = SIRBuilder()
    x = b.add_input(Meta.make([None, 8], "float64"))
    h = b.call_api(paddle.matmul, (x, b.add_input(Meta.make([8, 2], "float64", stop_gradient=False))))
    m = b.call_method("mean", h, (), {"axis": 0})
    assert h.meta.shape == (-1, 2) and m.meta.shape == (2,)
    b.set_outputs([h, m])
    compiled = CompiledSIR(b.build())
    w = _leaf([8, 2], True, "float64")
    for batch in (3, 5):
        x_ = _leaf([batch, 8], dtype="float64")
        got = compiled(x_, w)
        (got[0].sum() + (got[1] * got[1]).sum()).backward()
        grad = w.grad.numpy()
        w.clear_grad(set_to_zero=False)
        expected = [paddle.matmul(x_, w), paddle.matmul(x_, w).mean(axis=0)]
        (expected[0].sum() + (expected[1] * expected[1]).sum()).backward()
        _assert_same(got, expected)
        np.testing.assert_allclose(grad, w.grad.numpy(), rtol=1e-6)
        w.clear_grad(set_to_zero=False)


# ---------------------------------------------------------------- errors and modes
ERRORS = [
    ("matmul", lambda b, x: b.call_api(paddle.matmul, (x, x)), lambda x: paddle.matmul(x, x)),
    ("broadcast", lambda b, x: b.call_method("__add__", x, (b.add_input(Meta.make([3, 2], "float32")),)),
     lambda x: x + paddle.ones([3, 2])),
    ("reshape", lambda b, x: b.call_api(paddle.reshape, (x, [5, 5])), lambda x: paddle.reshape(x, [5, 5])),
    ("layer", lambda b, x: b.call_layer(paddle.nn.Linear(4, 2), (x,)), lambda x: paddle.nn.Linear(4, 2)(x)),
    ("dtype name", lambda b, x: b.call_api(paddle.cast, (x, "foo")), lambda x: paddle.cast(x, "foo")),
    ("concat dtypes", lambda b, x: b.call_api(paddle.concat, ([x, b.call_method("astype", x, ("int64",))],)),
     lambda x: paddle.concat([x, x.astype("int64")])),
]


@pytest.mark.parametrize("name, build, eager", ERRORS, ids=[e[0] for e in ERRORS])
def test_build_errors_are_the_eager_errors(name, build, eager):
    x = _leaf([2, 3])
    with pytest.raises(Exception) as eager_error:
        eager(x)
    b = SIRBuilder()
    with pytest.raises(type(eager_error.value)) as build_error:
        build(b, b.add_input(Meta.from_tensor(x)))
    assert str(build_error.value) == str(eager_error.value)
    assert paddle.in_dynamic_mode()
    assert len(b.build().statements) == (1 if name == "concat dtypes" else 0)


def test_previous_mode_and_programs_are_restored(static_mode):
    main = paddle.static.default_main_program()
    n_vars = len(list(main.list_vars()))
    b = SIRBuilder()
    x = b.add_input(Meta.make([2, 3], "float32"))
    b.call_api(paddle.exp, (x,))
    with pytest.raises(ValueError):
        b.call_api(paddle.matmul, (x, x))
    assert not paddle.in_dynamic_mode()
    assert paddle.static.default_main_program() is main and len(list(main.list_vars())) == n_vars


def test_calls_that_need_tensor_values_cannot_be_captured():
    class Branchy(paddle.nn.Layer):
        def forward(self, x):
            return x * 2.0 if x.sum() > 0 else x

    b = SIRBuilder()
    x = b.add_input(Meta.make([2, 3], "float32"))
    with pytest.raises(NotImplementedError, match="needs a tensor value at translation time"):
        b.call_layer(Branchy(), (x,))
    with pytest.raises(NotImplementedError, match="needs a tensor value"):
        b.call_method("numpy", x)
    assert paddle.in_dynamic_mode()


def test_python_results_record_nothing_and_in_place_writes_are_refused():
    b = SIRBuilder()
    x = b.add_input(Meta.make([2, 3], "float32"))
    assert b.call_api(paddle.is_tensor, (x,)) is True
    assert b.build().statements == []
    with pytest.raises(NotImplementedError, match="writes var_0 in place"):
        b.call_api(paddle.assign, (b.call_api(paddle.exp, (x,)),), {"output": x})


# ---------------------------------------------------------------- layers and bound tensors
def _layer_sir(layer, x):
    b = SIRBuilder()
    out = b.call_layer(layer, (b.add_input(Meta.from_tensor(x)),))
    b.set_outputs([out])
    return b.build(), out


@pytest.mark.parametrize("make", [lambda: paddle.nn.Linear(6, 3),
                                  lambda: paddle.nn.Conv2D(2, 4, 3, padding=1, stride=2),
                                  lambda: paddle.nn.BatchNorm2D(2)],
                         ids=["Linear", "Conv2D", "BatchNorm2D"])
def test_layer_forward_in_eval_mode(make):
    layer = make()
    layer.eval()
    x = _leaf([3, 6] if isinstance(layer, paddle.nn.Linear) else [2, 2, 5, 5])
    if isinstance(layer, paddle.nn.BatchNorm2D):
        layer._mean.set_value(np.random.standard_normal(2).astype("float32"))
        layer._variance.set_value(np.random.uniform(0.5, 2.0, 2).astype("float32"))
    sir, out = _layer_sir(layer, x)
    compiled = CompiledSIR(sir)
    expected = layer(x)
    assert out.meta == Meta.from_tensor(expected)
    _assert_same(compiled(x), [expected])
    assert all(compiled.lowered.bindings[p.name] is p for p in layer.parameters())
    assert all(isinstance(p, paddle.Parameter) for p in layer.parameters())  # the swap was undone


def test_parameters_are_bound_not_copied():
    layer = paddle.nn.Linear(4, 2)
    x = _leaf([3, 4])
    compiled = CompiledSIR(_layer_sir(layer, x)[0])
    program = compiled.lowered.program
    layer.weight.set_value(np.full((4, 2), 0.5, "float32"))   # changed in place between calls
    _assert_same(compiled(x), [layer(x)])
    assert compiled.lowered.program is program  # not lowered again


def test_eager_tensor_arguments_are_bound_and_get_gradients():
    scale = _leaf([4], True)  # a tensor the frame reads from outside, e.g. a global
    x = _leaf([3, 4], True)
    b = SIRBuilder()
    out = b.call_api(paddle.multiply, (b.add_input(Meta.from_tensor(x)), scale))
    b.set_outputs([out])
    compiled = CompiledSIR(b.build())
    assert list(compiled.lowered.bindings.values()) == [scale]
    compiled(x)[0].sum().backward()
    grads = x.grad.numpy(), scale.grad.numpy()
    x.clear_grad(set_to_zero=False)
    scale.clear_grad(set_to_zero=False)
    scale.set_value(scale.numpy() * 3)
    (x * scale).sum().backward()
    np.testing.assert_allclose(grads[1], x.sum(axis=0).numpy(), rtol=1e-6)
    np.testing.assert_allclose(grads[0] * 3, x.grad.numpy(), rtol=1e-6)
    _assert_same(compiled(x), [x * scale])


def test_batchnorm_training_updates_running_statistics_like_eager():
    conv, bn = paddle.nn.Conv2D(3, 4, 3), paddle.nn.BatchNorm2D(4)
    x = _leaf([2, 3, 6, 6], True)
    b = SIRBuilder()
    y = b.call_api(F.relu, (b.call_layer(bn, (b.call_layer(conv, (b.add_input(Meta.from_tensor(x)),)),)),))
    b.set_outputs([y])
    compiled = CompiledSIR(b.build())
    start = [bn._mean.numpy(), bn._variance.numpy()]
    results = []
    for run in (compiled, lambda x_: [F.relu(bn(conv(x_)))]):
        bn._mean.set_value(start[0])
        bn._variance.set_value(start[1])
        outs = [run(x)[0] for _ in range(2)]
        (outs[1] * outs[0]).sum().backward()
        results.append([outs[1].numpy(), bn._mean.numpy(), bn._variance.numpy(), x.grad.numpy(),
                        conv.weight.grad.numpy(), bn.weight.grad.numpy()])
        for t in (x, *conv.parameters(), *bn.parameters()):
            t.clear_grad(set_to_zero=False)
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_frozen_parameter_gets_no_gradient():
    layer = paddle.nn.Linear(4, 2)
    x = _leaf([3, 4])
    compiled = CompiledSIR(_layer_sir(layer, x)[0])
    layer.weight.stop_gradient = True
    (out,) = compiled(x)
    out.sum().backward()
    assert layer.weight.grad is None
    np.testing.assert_allclose(layer.bias.grad.numpy(), [3.0, 3.0])
    layer.bias.stop_gradient = True
    assert compiled(x)[0].stop_gradient


def test_parameter_changed_between_forward_and_backward_raises_as_eager():
    layer = paddle.nn.Linear(4, 2)
    x = _leaf([3, 4], True)
    compiled = CompiledSIR(_layer_sir(layer, x)[0])
    outs = [compiled(x)[0], layer(x)]
    layer.weight.set_value(layer.weight.numpy() * 2)
    for out in outs:
        with pytest.raises(RuntimeError, match="modified by an in-place operation"):
            out.sum().backward()


def test_no_node_under_no_grad_and_inputs_are_checked():
    layer = paddle.nn.Linear(4, 2)
    x = _leaf([3, 4])
    compiled = CompiledSIR(_layer_sir(layer, x)[0])
    with paddle.no_grad():
        (out,) = compiled(x)
    assert out.stop_gradient and out.is_leaf
    with pytest.raises(ValueError, match=r"input 0 \(var_0\) must be float32\[3, 4\], got float32\[2, 4\]"):
        compiled(_leaf([2, 4]))
    with pytest.raises(ValueError, match="must be float32"):
        compiled(_leaf([3, 4], dtype="float64"))
    with pytest.raises(ValueError, match=r"got float32\[3, 4\] requires_grad"):
        compiled(_leaf([3, 4], True))
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        compiled(x, x)


# ---------------------------------------------------------------- call_sir
def test_call_sir_nesting():
    inner = SIRBuilder()
    a, c = _inputs(inner, [_leaf([3]), _leaf([3])])
    inner.set_outputs([inner.call_method("__add__", inner.call_method("__mul__", a, (c,)), (a,)), c])
    inner = inner.build()
    x, y = _leaf([3], True), _leaf([3], True)
    b = SIRBuilder()
    xs, ys = _inputs(b, [x, y])
    u, _ = b.call_sir(inner, (xs, ys))
    v, _ = b.call_sir(inner, (u, xs))
    assert v.meta == Meta.make([3], "float32", stop_gradient=False)
    b.set_outputs([v])
    sir = b.build()
    assert str(sir).count("StatementIR: ") == 2
    with pytest.raises(TypeError, match="takes 2 inputs, got 1"):
        b.call_sir(inner, (xs,))
    with pytest.raises(TypeError, match=r"argument 1 of .* must be a symbol of float32\[3\]"):
        b.call_sir(inner, (xs, b.add_input(Meta.make([4], "float32"))))
    (got,) = CompiledSIR(sir)(x, y)
    u_ = x * y + x
    expected = u_ * x + u_
    _assert_same([got], [expected])
    got.sum().backward()
    grads = x.grad.numpy(), y.grad.numpy()
    x.clear_grad(set_to_zero=False)
    y.clear_grad(set_to_zero=False)
    expected.sum().backward()
    np.testing.assert_allclose(grads[0], x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(grads[1], y.grad.numpy(), rtol=1e-6)


def test_lower_returns_program_names_and_bindings():
    layer = paddle.nn.Linear(4, 2)
    sir, _ = _layer_sir(layer, _leaf([3, 4]))
    program, inputs, outputs, bindings = lower(sir)
    block = program.global_block()
    assert inputs == ["var_0"] and block.var("var_0").shape == [3, 4]
    assert block.var(outputs[0]).shape == [3, 2]
    assert bindings == {layer.weight.name: layer.weight, layer.bias.name: layer.bias}
    assert all(block.var(n).persistable for n in bindings)


# ---------------------------------------------------------------- training
def test_mlp_training_with_adam_matches_eager():
    paddle.seed(3)
    model = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 1))
    data = [(_leaf([6, 8]), _leaf([6, 1])) for _ in range(3)]
    b = SIRBuilder()
    xs, ys = _inputs(b, data[0])
    b.set_outputs([b.call_api(F.mse_loss, (b.call_layer(model, (xs,)), ys))])
    compiled = CompiledSIR(b.build())
    start = [p.numpy() for p in model.parameters()]
    runs = []
    for step in (lambda x, y: compiled(x, y)[0], lambda x, y: F.mse_loss(model(x), y)):
        for p, v in zip(model.parameters(), start):
            p.set_value(v)
        opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
        losses = []
        for x, y in data:
            loss = step(x, y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
        runs.append((losses, [p.numpy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-6)
    for got, want in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_a_statement_recorded_with_a_location_shows_it_after_its_metas():
    b = SIRBuilder("SIR_where")
    (x,) = _inputs(b, [_leaf([2])])
    b.locate = lambda: "/some/dir/model.py:12"
    b.call_api(paddle.exp, [x])
    b.locate = None
    b.call_api(paddle.tanh, [x])
    lines = str(b.build()).splitlines()[-2:]
    assert lines == ["    api    || var_1 = runtime.exp(var_0)  # float32[2]  # model.py:12",
                     "    api    || var_2 = runtime.tanh(var_0)  # float32[2]"]
