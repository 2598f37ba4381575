"""Dynamic shapes under to_static: a dim that changes between calls becomes -1 after one miss,
`sot.mark_dynamic` / `sot.mark_static` force the decision, a dim read as a Python int stays static.

Every JIT result is compared with the eager result of the same code on the same inputs (and
eager with NumPy where the math is simple); translation counts come from the translator.
"""
import copy
import sys

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime import nn
from sot_helpers import assert_same_result, jit_of, rand


def affine(x, w):
    return F.relu(x @ w).sum(axis=1) * 2.0


def guard_texts(jit):
    """The guards of the most recent entry of `jit`'s cache, as text."""
    return [str(g) for g in jit.sot_translator.cache.entries[0].guards]


def test_varying_batch_translates_twice_and_matches_eager():
    jit = jit_of(affine)
    w = rand(4, 3)
    for n in (2, 3, 5, 7):
        x = rand(n, 4)
        out = jit(x, w)
        assert_same_result(out, affine(x, w))
        ref = np.maximum(x.numpy() @ w.numpy(), 0).sum(axis=1) * 2.0
        np.testing.assert_allclose(affine(x, w).numpy(), ref, rtol=1e-6)
    translator = jit.sot_translator
    assert translator.translations == 2 and translator.fallbacks == []
    assert "f_locals['x'] is a tensor of shape [-1, 4], dtype float32, stop_gradient=True" in guard_texts(jit)
    assert "f_locals['w'] is a tensor of shape [4, 3], dtype float32, stop_gradient=True" in guard_texts(jit)
    assert "f_locals['x']._data.shape[0] >= 2 == True" in guard_texts(jit)  # (the expression) == True


def test_recompile_cause_is_recorded():
    jit = jit_of(affine)
    w = rand(4, 3)
    jit(rand(2, 4), w)
    assert jit.sot_translator.recompiles == []
    jit(rand(3, 4), w)
    (cause,) = jit.sot_translator.recompiles
    assert cause.guard == "f_locals['x'] is a tensor of shape [2, 4], dtype float32, stop_gradient=True"
    assert cause.expected == "shape [2, 4], dtype float32, stop_gradient=True"
    assert cause.actual == "tensor of shape [3, 4], dtype float32, stop_gradient=True"
    assert cause.dynamic == ("f_locals['x'] dim 0",)
    assert jit.sot_translator.shapes.dynamic == {("f_locals['x']", 2): {0}}


def test_a_change_beyond_the_dims_still_retranslates():
    jit = jit_of(affine)
    w = rand(4, 3)
    for n in (2, 3, 5):
        jit(rand(n, 4), w)
    assert jit.sot_translator.translations == 2
    x64 = paddle.to_tensor(np.random.rand(4, 4))  # dtype float64: not a dims-only miss
    assert_same_result(jit(x64, paddle.cast(w, "float64")), affine(x64, paddle.cast(w, "float64")))
    assert jit.sot_translator.translations == 3
    assert jit.sot_translator.recompiles[-1].dynamic == ()
    x3 = rand(2, 3, 4)  # rank 3
    assert_same_result(jit(x3, w), affine(x3, w))
    assert jit.sot_translator.translations == 4
    xg = rand(6, 4, grad=True)  # stop_gradient changed
    assert_same_result(jit(xg, w), affine(xg, w))
    assert jit.sot_translator.translations == 5


def test_size_one_is_never_dynamic():
    """Broadcasting treats size 1 apart: a size-1 call gets its own translation, gradients included."""
    def mul_sum(x, y):
        return (x * y).sum()

    jit = jit_of(mul_sum)
    for n in (2, 3):
        jit(rand(n, 4, grad=True), rand(n, 4, grad=True))
    assert "f_locals['x'] is a tensor of shape [-1, 4], dtype float32, stop_gradient=False" in guard_texts(jit)
    x_np, y_np = np.random.rand(1, 4).astype("float32"), np.random.rand(3, 4).astype("float32")
    grads = []
    for run in (jit, mul_sum):
        x = paddle.to_tensor(x_np, stop_gradient=False)
        y = paddle.to_tensor(y_np, stop_gradient=False)
        out = run(x, y)
        out.backward()
        grads.append((out.numpy(), x.grad.numpy(), y.grad.numpy()))
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(grads[1][1], y_np.sum(axis=0, keepdims=True), rtol=1e-6)
    assert jit.sot_translator.translations == 3


def scale_by_first_dim(x):
    return x * x.shape[0]  # a tensor operator with the size: its value (a shape argument would not need it)


def scale_by_len(x):
    return x * len(x)


def scale_by_size(x):
    return x / x.size


def scale_computed(x, w):
    h = x @ w
    return h * h.shape[0]


@pytest.mark.parametrize("fn, read", [(scale_by_first_dim, "`.shape` read"), (scale_by_len, "len() at"),
                                      (scale_by_size, "`.size` read")])
def test_a_dim_read_as_an_int_stays_static(fn, read):
    jit = jit_of(fn)
    for n in (2, 3, 5):
        x = rand(n, 4)
        assert_same_result(jit(x), fn(x))
    translator = jit.sot_translator
    assert translator.translations == 3 and translator.fallbacks == []
    (why,) = translator.shapes.static[("f_locals['x']", 2)].values()
    assert read in why and __file__ in why
    assert translator.shapes.dynamic == {("f_locals['x']", 2): set()}
    assert "f_locals['x'] is a tensor of shape [5, 4], dtype float32, stop_gradient=True" in guard_texts(jit)


def test_a_dim_of_a_computed_tensor_read_as_an_int_specialises_the_inputs():
    jit = jit_of(scale_computed)
    w = rand(4, 6)
    for n in (2, 3, 5):
        x = rand(n, 4)
        assert_same_result(jit(x, w), scale_computed(x, w))
    assert jit.sot_translator.translations == 3
    assert jit.sot_translator.shapes.static[("f_locals['x']", 2)].keys() == {0}


def test_mark_dynamic_from_the_first_call():
    jit = jit_of(affine)
    w = rand(4, 3)
    for n in (2, 3, 5):
        x = rand(n, 4)
        sot.mark_dynamic(x, 0)
        assert_same_result(jit(x, w), affine(x, w))
    assert jit.sot_translator.translations == 1 and jit.sot_translator.recompiles == []
    assert "f_locals['x'] is a tensor of shape [-1, 4], dtype float32, stop_gradient=True" in guard_texts(jit)
    unmarked = rand(9, 4)  # the entry holds for any size >= 2
    assert_same_result(jit(unmarked, w), affine(unmarked, w))
    assert jit.sot_translator.translations == 1


def test_mark_dynamic_negative_dim():
    jit = jit_of(affine)
    w = rand(4, 3)
    x = rand(3, 4)
    sot.mark_dynamic(x, -2)
    assert_same_result(jit(x, w), affine(x, w))
    assert "f_locals['x'] is a tensor of shape [-1, 4], dtype float32, stop_gradient=True" in guard_texts(jit)


def test_mark_static_keeps_specialising():
    jit = jit_of(affine)
    w = rand(4, 3)
    for n in (2, 3, 5):
        x = rand(n, 4)
        sot.mark_static(x, 0)
        assert_same_result(jit(x, w), affine(x, w))
    assert jit.sot_translator.translations == 3
    assert jit.sot_translator.shapes.dynamic == {}
    assert all("-1" not in text for text in guard_texts(jit))


def test_mark_errors_name_the_argument():
    x = rand(2, 3)
    with pytest.raises(IndexError, match=r"mark_dynamic: argument 'dim' \(2\) is out of range for a tensor of rank 2"):
        sot.mark_dynamic(x, 2)
    with pytest.raises(IndexError, match=r"mark_static: argument 'dim' \(-3\)"):
        sot.mark_static(x, -3)
    with pytest.raises(TypeError, match="mark_dynamic: argument 'dim' must be an int, got float"):
        sot.mark_dynamic(x, 0.0)
    with pytest.raises(TypeError, match="mark_dynamic: argument 't' must be a Tensor, got ndarray"):
        sot.mark_dynamic(np.zeros(3), 0)
    sot.mark_dynamic(x, 0)
    with pytest.raises(ValueError, match=r"mark_static: argument 'dim' \(0\) is already marked dynamic"):
        sot.mark_static(x, 0)
    sot.mark_static(x, 1)
    with pytest.raises(ValueError, match=r"mark_dynamic: argument 'dim' \(1\) is already marked static"):
        sot.mark_dynamic(x, -1)


def test_gradients_through_a_dynamic_graph_equal_eager():
    def loss_of(x, w, b):
        return ((x @ w + b).tanh() ** 2).mean()

    jit = jit_of(loss_of)
    for n in (2, 3, 5, 7):
        x_np = np.random.rand(n, 4).astype("float32")
        results = []
        for run in (jit, loss_of):
            x = paddle.to_tensor(x_np, stop_gradient=False)
            w = paddle.to_tensor(np.linspace(-1, 1, 12, dtype="float32").reshape(4, 3), stop_gradient=False)
            b = paddle.to_tensor(np.full(3, 0.1, "float32"), stop_gradient=False)
            loss = run(x, w, b)
            loss.backward()
            results.append([loss.numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
        for got, want in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert jit.sot_translator.translations == 2


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train_step(model, opt, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def test_mlp_layer_with_varying_batch():
    paddle.seed(0)
    eager_model = MLP()
    jit_model = sot.to_static(copy.deepcopy(eager_model))
    translator = jit_model.forward.sot_translator
    eager_opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=eager_model.parameters())
    jit_opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=jit_model.parameters())
    for n in (2, 3, 5, 7, 4):
        x, y = rand(n, 4), rand(n, 2)
        want = train_step(eager_model, eager_opt, x, y)
        got = train_step(jit_model, jit_opt, x, y)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    for a, b in zip(jit_model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    assert translator.translations == 2 and translator.fallbacks == []
    assert [r.dynamic for r in translator.recompiles] == [("f_locals['x'] dim 0",)]


def flatten_head(x, w):
    return x.flatten(1) @ w


def test_shapes_written_without_the_batch_dim_stay_dynamic():
    jit = jit_of(flatten_head)
    w = rand(12, 2)
    for n in (2, 3, 5):
        x = rand(n, 3, 4)
        assert_same_result(jit(x, w), flatten_head(x, w))
    assert jit.sot_translator.translations == 2 and jit.sot_translator.shapes.static == {}
    assert "f_locals['x'] is a tensor of shape [-1, 3, 4], dtype float32, stop_gradient=True" in guard_texts(jit)


def test_a_marked_dynamic_dim_read_as_an_int_is_specialised_with_the_reason():
    jit = jit_of(scale_by_first_dim)
    for n in (2, 3):
        x = rand(n, 4)
        sot.mark_dynamic(x, 0)
        assert_same_result(jit(x), scale_by_first_dim(x))
    assert jit.sot_translator.translations == 2 and jit.sot_translator.fallbacks == []
    assert "`.shape` read" in jit.sot_translator.shapes.static[("f_locals['x']", 2)][0]
    assert "dim 0 (rank 2): static, `.shape` read" in jit.sot_translator.shapes.describe()


def first_row_loss(x, w):
    return (x[0] * w).sum()


def stacked_loss(x, w):
    return paddle.concat([x, x * w]).sum()


def test_a_gradient_rule_that_needs_sizes_keeps_the_dims_static():
    """concat's gradient splits by the inputs' sizes along the axis: with that dim dynamic it cannot be
    built, so a differentiable translation specialises it (checked at translation time, not in the backward)."""
    jit = jit_of(stacked_loss)
    for n in (2, 3, 5):
        results = []
        x_np, w_np = rand(n, 4).numpy(), rand(4).numpy()
        for run in (jit, stacked_loss):
            x, w = paddle.to_tensor(x_np, stop_gradient=False), paddle.to_tensor(w_np, stop_gradient=False)
            run(x, w).backward()
            results.append((x.grad.numpy(), w.grad.numpy()))
        for got, want in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(results[1][1], x_np.sum(axis=0), rtol=1e-6)  # d/dw sum(x * w) = sum of x's rows
    translator = jit.sot_translator
    assert translator.translations == 3 and translator.fallbacks == []
    assert "the gradient cannot be built for dynamic dims" in translator.shapes.static[("f_locals['x']", 2)][0]


def test_the_gradient_of_basic_indexing_stays_dynamic():
    """getitem's gradient writes into zeros of the input's run-time shape: x[0] keeps the batch dynamic."""
    jit = jit_of(first_row_loss)
    for n in (2, 3, 5):
        results = []
        x_np, w_np = rand(n, 4).numpy(), rand(4).numpy()
        for run in (jit, first_row_loss):
            x, w = paddle.to_tensor(x_np, stop_gradient=False), paddle.to_tensor(w_np, stop_gradient=False)
            run(x, w).backward()
            results.append((x.grad.numpy(), w.grad.numpy()))
        for got, want in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(results[1][1], x_np[0], rtol=1e-6)  # d/dw sum(x[0] * w) = x[0]
    assert jit.sot_translator.translations == 2 and jit.sot_translator.shapes.static == {}


def test_without_gradients_the_same_function_stays_dynamic():
    jit = jit_of(first_row_loss)
    for n in (2, 3, 5):
        x, w = rand(n, 4), rand(4)
        assert_same_result(jit(x, w), first_row_loss(x, w))
    assert jit.sot_translator.translations == 2 and jit.sot_translator.shapes.static == {}


def expand_first_row(x, y):
    return paddle.expand(x[0], [int(y.shape[0]), int(y.shape[1])]) * y  # int(): y's dims are specialised


def test_a_meta_error_with_dynamic_dims_specialises_before_it_counts_as_the_users():
    """expand of x[0]'s -1 dim to y's size is rejected by the meta function; with the sizes known it is
    fine: the translation specialises and is captured, even in full-graph mode."""
    jit = jit_of(expand_first_row, fallback=False)
    for n, m in ((2, 3), (4, 5), (6, 7)):
        x, y = rand(n, m), rand(n, m)
        assert_same_result(jit(x, y), expand_first_row(x, y))
    translator = jit.sot_translator
    assert translator.fallbacks == [] and translator.translations == 3
    assert "ValueError with the dims dynamic" in translator.shapes.describe()


def test_a_users_error_with_dynamic_dims_is_still_the_users_error():
    jit = jit_of(expand_first_row)
    for n in (2, 3):
        jit(rand(n, 4), rand(n, 4))
    x, y = rand(3, 4), rand(3, 5)  # expand [4] to [3, 5]: eager rejects it
    with pytest.raises(ValueError) as eager:
        expand_first_row(x, y)
    with pytest.raises(ValueError) as jitted:
        jit(x, y)
    assert str(jitted.value) == str(eager.value)
    assert [f.code for f in jit.sot_translator.fallbacks] == ["SOT-E001"]


def ticks(x, w):
    y = (x @ w).tanh()
    print("tick", file=sys.stdout)  # to a file: a print that cannot be deferred
    return (y + 1).sum(axis=1)


def test_dynamic_dims_across_a_graph_break(capsys):
    jit = jit_of(ticks)
    w = rand(4, 3)
    for n in (2, 3, 5, 7):
        x = rand(n, 4)
        assert_same_result(jit(x, w), ticks(x, w))
    assert capsys.readouterr().out == "tick\n" * 8
    found = [jit.sot_translator, *jit.sot_translator.children]  # the function and its resume functions
    assert len(found) > 1 and all(t.translations <= 2 and t.fallbacks == [] for t in found)
    assert jit.sot_translator.recompiles[0].dynamic == ("f_locals['x'] dim 0",)


def matmul_sum(x, y):
    return (x @ y).sum(axis=0)


@pytest.mark.parametrize("grad", [False, True])
def test_sizes_eager_rejects_raise_eagers_error_on_a_dynamic_entry(grad):
    """The meta functions could not check -1 dims while translating: a mismatch reaches a kernel on the
    hit path, and the error raised is still the meta function's, as in eager code."""
    jit = jit_of(matmul_sum)
    jit(rand(2, 4, grad=grad), rand(4, 2, grad=grad))
    jit(rand(3, 5, grad=grad), rand(5, 3, grad=grad))
    assert "f_locals['y'] is a tensor of shape [-1, -1]" in " ".join(guard_texts(jit))
    x, y = rand(3, 5, grad=grad), rand(4, 3, grad=grad)
    with pytest.raises(ValueError) as eager:
        matmul_sum(x, y)
    with pytest.raises(ValueError) as jitted:
        jit(x, y)
    assert str(jitted.value) == str(eager.value) and "matmul: the last dimension of argument 'x'" in str(eager.value)
    assert jit.sot_translator.translations == 2  # the dynamic entry ran: no new translation for the bad call


class ConvNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2D(4)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        return self.fc(F.max_pool2d(F.relu(self.bn(self.conv(x))), 2).flatten(1))


def classify_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def test_cnn_with_batchnorm_trains_as_eager_with_a_varying_batch():
    """The dynamic entry runs several times in training mode: BatchNorm's running statistics (written
    back by the compiled program) and the parameters follow eager's."""
    paddle.seed(0)
    eager_model = ConvNet()
    jit_model = sot.to_static(copy.deepcopy(eager_model))
    eager_opt = paddle.optimizer.Adam(parameters=eager_model.parameters())
    jit_opt = paddle.optimizer.Adam(parameters=jit_model.parameters())
    for n in (2, 3, 5, 5):
        x, y = rand(n, 3, 8, 8), paddle.to_tensor(np.random.randint(0, 5, (n,)))
        np.testing.assert_allclose(classify_step(jit_model, jit_opt, x, y).numpy(),
                                   classify_step(eager_model, eager_opt, x, y).numpy(), rtol=1e-5)
    for (name, a), b in zip(eager_model.named_parameters(), jit_model.parameters()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    translator = jit_model.forward.sot_translator
    assert translator.translations == 2 and translator.fallbacks == []
