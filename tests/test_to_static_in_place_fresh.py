"""In-place updates of tensors the function made itself (`out += identity`, `mask[:, 0:2] = v`, `h.add_(b)`,
`t.stop_gradient = True`) are captured in the graph as a new value of the same Variable, wherever nothing
else sees the tensor: the frame made it with any recorded op (an operator, a functional call, a Layer's
inlined forward, a creation op), no view shares its memory and nothing outside the frame holds it.
Otherwise the frame runs eagerly (SOT-S001) and eager code gives its result (or raises its error).

Each case runs eagerly and under `sot.explain` on equal arguments and compares results, `stop_gradient`
flags and the gradients of a backward through them."""
import copy

import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot
from runtime.ops.registry import all_ops
from sot.ir.renaming import VIEW_OPS
from sot_helpers import fresh, jit_of, tensors_of


def _tensor(*shape, seed=0, grad=False):
    return paddle.to_tensor(np.random.default_rng(seed).random(shape).astype("float32"), stop_gradient=not grad)


def _backward(result, leaves):
    """Backward of the sum of the result's tensors that require grad: each leaf's gradient (then cleared)."""
    live = [t for t in tensors_of(result) if not t.stop_gradient]
    if live:
        sum(t.sum() for t in live).backward()
    grads = [None if t.grad is None else t.grad.numpy().copy() for t in leaves]
    for t in leaves:
        t.clear_gradient()
    return grads


def _assert_like(got, want):
    """Equal tensors (dtype, shape, values, stop_gradient) or equal Python values, item by item."""
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, paddle.Tensor):
            assert (g.dtype, g.shape, g.stop_gradient) == (w.dtype, w.shape, w.stop_gradient)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)
        else:
            assert g == w


def _assert_same_grads(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _captured_like_eager(fn, make_args, layer=None):
    """fn eagerly and under sot.explain (a Layer: on a deep copy of it) on equal arguments: the same result
    and gradients, one graph and no fallback. The explanation."""
    def run(call, args, owner):
        result = call(*args)
        leaves = [a for a in args if isinstance(a, paddle.Tensor) and not a.stop_gradient]
        leaves += list(owner.parameters()) if owner is not None else []
        return result, _backward(result, leaves)

    other = copy.deepcopy(layer) if layer is not None else None
    want, want_grads = run(fn if layer is None else layer, make_args(), layer)
    holder = {}

    def explained(*args):
        holder["report"] = sot.explain(sot.to_static(other).forward if layer is not None else fresh(fn), *args)
        return holder["report"].result
    got, got_grads = run(explained, make_args(), other)
    _assert_like(got, want)
    _assert_same_grads(got_grads, want_grads)
    report = holder["report"]
    assert report.fallbacks == [] and report.graph_count == 1 and report.break_count == 0, str(report)
    return report


def _falls_back(fn, *args, reason):
    """fn under sot.explain runs eagerly (SOT-S001, `reason` in its text) and gives eager's result."""
    want = fn(*[a.clone() if isinstance(a, paddle.Tensor) else a for a in args])
    report = sot.explain(fresh(fn), *args)
    assert report.graph_count == 0 and [fb.code for fb in report.fallbacks] == ["SOT-S001"], str(report)
    assert reason in report.fallbacks[0].reason, str(report)
    _assert_like(report.result, want)
    return report


# ---------------------------------------------------------------- captured: the models' patterns
class BasicBlock(nn.Layer):
    """ResNet's basic block: the residual is added in place to the batch norm's output."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 3, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(3)
        self.conv2 = nn.Conv2D(3, 3, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(3)

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return F.relu(out)


def test_resnet_basic_block_adds_its_residual_in_the_graph():
    block = BasicBlock()
    report = _captured_like_eager(None, lambda: (_tensor(2, 3, 5, 5, grad=True),), layer=block)
    assert "__add__" in report.sir_texts[0]


def test_attention_bias_added_in_place_to_the_matmul_result():
    def attention(q, k, v, bias):
        product = paddle.matmul(q, k, transpose_y=True)
        product += bias
        product *= 0.5
        return paddle.matmul(F.softmax(product), v)
    _captured_like_eager(attention, lambda: (_tensor(2, 3, 4, grad=True), _tensor(2, 3, 4, seed=1, grad=True),
                                             _tensor(2, 3, 4, seed=2), _tensor(2, 3, 3, seed=3, grad=True)))


def test_mask_made_by_a_creation_op_then_slice_assigned():
    def masked(x, v):
        mask = paddle.zeros([2, 4, 4, 1])
        mask[:, 0:2, 1:3, :] = 1.0
        mask[0, 3] = v
        return x * mask, mask
    _captured_like_eager(masked, lambda: (_tensor(2, 4, 4, 1, grad=True), _tensor(4, 1, seed=1, grad=True)))


def test_item_assignment_into_a_computed_tensor_keeps_its_dtype_and_gradients():
    def assigned(x, v):
        h = x * 2
        h[1] = v  # float64 value into a float32 tensor: eager casts it
        h[:, 0] = 0
        return h
    _captured_like_eager(assigned, lambda: (_tensor(3, 2, grad=True),
                                            paddle.to_tensor(np.array([5.0, 6.0]), stop_gradient=False)))


def test_in_place_methods_on_a_layer_output():
    layer = nn.Linear(3, 3)

    def forward(x):
        h = layer(x)
        h.add_(x)
        h.scale_(0.5)
        h.clip_(-0.5, 0.8)
        h.exp_()
        h.multiply_(x)
        h.tanh_()
        return h
    _captured_like_eager(forward, lambda: (_tensor(2, 3, grad=True),))


def test_augmented_operators_on_a_functional_result():
    def augmented(x, y):
        h = F.relu(x)
        h += y
        h -= 0.25
        h *= y
        h /= 2.0
        h **= 2
        return h
    _captured_like_eager(augmented, lambda: (_tensor(2, 3, grad=True), _tensor(2, 3, seed=1, grad=True)))


def test_in_place_update_keeps_the_tensor_dtype():
    def widened(x):
        h = paddle.cast(x * 4, "int32")
        h += 1.7  # eager keeps int32
        f = x * 1
        f += paddle.ones([3], dtype="float64")  # eager keeps float32
        return h, f
    _captured_like_eager(widened, lambda: (_tensor(3),))


def test_every_reference_to_the_tensor_sees_the_update():
    def shared(x):
        h = paddle.exp(x)
        alias, items = h, [h]
        h += 1
        return items[0] is h, alias is h, items[0], alias
    _captured_like_eager(shared, lambda: (_tensor(3, grad=True),))


def test_in_place_update_after_other_uses_that_record_no_gradient():
    def reused(x):
        h = paddle.tanh(x)
        before = h * 3  # h's value needs no gradient here
        h += 1
        return before, h
    _captured_like_eager(reused, lambda: (_tensor(3),))


def test_matmul_assignment_rebinds_the_name_as_python_does():
    def rebinds(x, w):
        t = x + 0
        u = t
        t @= w  # Tensor has no __imatmul__: Python computes `t = t @ w`, u keeps the old tensor
        return u, t
    _captured_like_eager(rebinds, lambda: (_tensor(2, 2, grad=True), _tensor(2, 2, seed=1)))


# ---------------------------------------------------------------- stop_gradient writes
def test_stop_gradient_set_on_a_computed_tensor_cuts_the_ops_after_it():
    def cut(x, w):
        y = x * 2
        before = y * w  # recorded before the write: still differentiable through y
        y.stop_gradient = True
        after = y * w
        return before + after + x, y.stop_gradient, y
    _captured_like_eager(cut, lambda: (_tensor(3, grad=True), _tensor(3, seed=1, grad=True)))


def test_stop_gradient_set_back_to_false_restores_the_history():
    def toggled(x, w):
        y = paddle.sin(x)
        y.stop_gradient = True
        cut = y * w
        y.stop_gradient = False
        return cut + y * w, y.stop_gradient
    _captured_like_eager(toggled, lambda: (_tensor(3, grad=True), _tensor(3, seed=1, grad=True)))


def test_detach_in_place_on_a_computed_tensor():
    def detached(x):
        y = x * 3
        y.detach_()
        return y * x, y
    _captured_like_eager(detached, lambda: (_tensor(3, grad=True),))


def _makes_a_leaf(x):
    y = paddle.zeros([3])
    y.stop_gradient = False
    return y * x, y


def _writes_an_input(x):
    x.stop_gradient = True
    return x * 2, x


@pytest.mark.parametrize("fn, reason", [(_makes_a_leaf, "makes a tensor a leaf"),
                                        (_writes_an_input, "may be aliased outside the function")])
def test_other_stop_gradient_writes_run_for_real_at_a_graph_break(fn, reason):
    x, other = _tensor(3, grad=True), _tensor(3, grad=True)
    want = fn(other)
    want_grads = _backward(want, [other, want[1]])
    report = sot.explain(fresh(fn), x)
    _assert_like(report.result, want)
    _assert_same_grads(_backward(report.result, [x, report.result[1]]), want_grads)
    assert report.break_count == 1 and report.fallbacks == [] and reason in str(report.breaks[0]), str(report)


# ---------------------------------------------------------------- still run eagerly
def test_in_place_on_a_view_of_an_input_falls_back():
    def view_of_input(x):
        v = x.reshape([-1])
        v += 1
        return v
    x = _tensor(2, 2)
    want = x.clone()
    _falls_back(view_of_input, x, reason="a view")
    np.testing.assert_array_equal(x.numpy(), want.numpy() + 1)  # eager's update shows through the input


def test_in_place_on_a_tensor_a_view_was_taken_of_falls_back():
    def viewed(x):
        t = x * 2
        v = t.reshape([-1])
        t += 1
        return v
    _falls_back(viewed, _tensor(2, 2), reason="made a view of it (reshape)")


def test_in_place_on_a_tensor_split_into_views_falls_back():
    def split(x):
        t = x * 2
        a, b = paddle.split(t, 2)
        t += 1
        return a, b
    _falls_back(split, _tensor(2, 2), reason="made a view of it (split)")


def test_in_place_on_a_tensor_a_call_returned_as_it_was_falls_back():
    def same(x):
        t = x * 2
        u = F.dropout(t, training=False)  # eager returns t itself
        u += 1
        return t
    _falls_back(same, _tensor(3), reason="returned a tensor it got")


# calls on a tensor the function made: views and the tensor itself (eager shares memory), and copies
_CALLS = {
    "reshape": lambda t: t.reshape([3, 2]), "flatten": lambda t: t.flatten(), "view": lambda t: t.view([3, 2]),
    "squeeze": lambda t: t.unsqueeze(0).squeeze(), "T": lambda t: t.T, "moveaxis": lambda t: paddle.moveaxis(t, 0, 1),
    "split": lambda t: paddle.split(t, 3, axis=1)[0], "chunk": lambda t: paddle.chunk(t, 3, axis=1)[1],
    "unstack": lambda t: paddle.unstack(t)[0], "flip": lambda t: paddle.flip(t, [0]), "rot90": paddle.rot90,
    "einsum": lambda t: paddle.einsum("ij->ji", t), "unflatten": lambda t: paddle.unflatten(t, 1, [3, 1]),
    "view_as": lambda t: t.view_as(paddle.zeros([3, 2])), "detach": lambda t: t.detach(),
    "dropout": lambda t: F.dropout(t, training=False), "identity": lambda t: nn.Identity()(t), "pos": lambda t: +t,
    "clone": lambda t: t.clone(), "assign": paddle.assign, "astype": lambda t: t.astype("float32"),
    "cast": lambda t: paddle.cast(t, "float32"), "slice": lambda t: t[0:1], "expand": lambda t: t.expand([2, 2, 3]),
    "tile": lambda t: paddle.tile(t, [1, 1]), "concat": lambda t: paddle.concat([t]),
}


def _updates_the_result(x, call):
    t = x * 2
    u = call(t)
    u += 1
    return t, u


def _updates_the_tensor(x, call):
    t = x * 2
    u = call(t)
    t += 1
    return t, u


@pytest.mark.parametrize("fn", [_updates_the_result, _updates_the_tensor])
@pytest.mark.parametrize("name", sorted(_CALLS))
def test_an_update_that_a_view_or_the_same_tensor_would_see_runs_eagerly(name, fn):
    call = _CALLS[name]
    t = _tensor(2, 3) * 2
    shares = np.may_share_memory(np.asarray(call(t)._data), t._data)  # what eager code does
    want = fn(_tensor(2, 3), call)
    report = sot.explain(fresh(fn), _tensor(2, 3), call)
    _assert_like(report.result, want)
    if shares:
        assert [fb.code for fb in report.fallbacks] == ["SOT-S001"], str(report)


class Cache(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cache = None
        self.linear = nn.Linear(2, 2)

    def forward(self, x):
        h = self.linear(x)
        self.cache = h
        h += 1
        return h


def test_in_place_on_a_tensor_stored_into_an_attribute_falls_back():
    layer = Cache()
    x = _tensor(2, 2)
    want = layer(x)
    report = sot.explain(sot.to_static(layer).forward, x)
    assert [fb.code for fb in report.fallbacks] == ["SOT-S001"] and "stored into" in report.fallbacks[0].reason
    _assert_like(report.result, want)
    assert layer.cache is report.result


def test_in_place_on_a_parameter_falls_back():
    layer = nn.Linear(2, 2)

    def bumps(x):
        with paddle.no_grad():
            layer.bias += 1
        return layer(x)
    before = layer.bias.numpy().copy()
    report = sot.explain(fresh(bumps), _tensor(2, 2))
    assert [fb.code for fb in report.fallbacks] == ["SOT-S001"] and "parameter" in report.fallbacks[0].reason
    np.testing.assert_allclose(layer.bias.numpy(), before + 1)  # eager's update, made once


def test_in_place_on_a_leaf_that_requires_grad_raises_as_eager():
    def leaf(x):
        t = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        t += x
        return t
    with pytest.raises(ValueError) as eager:
        leaf(_tensor(2))
    with pytest.raises(ValueError) as jit:
        jit_of(leaf)(_tensor(2))
    assert str(jit.value) == str(eager.value)


def _updated_under_no_grad(x):
    h = x * 2
    with paddle.no_grad():
        h += 1
    return h


def test_in_place_under_no_grad_of_a_tensor_that_requires_grad_falls_back():
    report = _falls_back(_updated_under_no_grad, _tensor(3, grad=True), reason="under no_grad")
    assert report.result.stop_gradient is False  # eager: no history, yet it requires grad


def test_a_capture_under_the_callers_no_grad_is_not_reused_under_grad():
    jit = jit_of(_updated_under_no_grad)
    with paddle.no_grad():  # nothing requires grad: captured
        _assert_like(jit(_tensor(3, grad=True)), _updated_under_no_grad(_tensor(3, grad=True)))
    assert jit.sot_translator.fallbacks == []
    _assert_like(jit(_tensor(3, grad=True)), _updated_under_no_grad(_tensor(3, grad=True)))


def _saved_then_updated(x):
    y = x * 2
    z = y * y  # multiply saves y for its gradient
    y += 1
    return z


def _stop_gradient_saved_then_updated(x):
    t = paddle.zeros([2])
    z = t * x  # multiply saves t for x's gradient
    t += 1
    return z


@pytest.mark.parametrize("fn", [_saved_then_updated, _stop_gradient_saved_then_updated])
def test_update_of_a_tensor_an_op_saved_for_backward_raises_at_backward_as_eager(fn):
    with pytest.raises(RuntimeError) as eager:
        fn(_tensor(2, grad=True)).sum().backward()
    jit = jit_of(fn)
    with pytest.raises(RuntimeError) as compiled:
        jit(_tensor(2, grad=True)).sum().backward()
    assert str(compiled.value) == str(eager.value)
    assert [fb.code for fb in jit.sot_translator.fallbacks] == ["SOT-S001"]
    assert "records a gradient" in jit.sot_translator.fallbacks[0].reason


def test_the_saved_for_backward_decision_is_guarded_by_the_callers_grad_mode():
    jit = jit_of(_saved_then_updated)
    with paddle.no_grad():  # no op saves y: captured
        _assert_like(jit(_tensor(2, grad=True)), _saved_then_updated(_tensor(2, grad=True)))
    assert jit.sot_translator.fallbacks == []
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        jit(_tensor(2, grad=True)).sum().backward()


# ---------------------------------------------------------------- the view ops list
def test_every_op_whose_kernel_returns_a_view_is_a_view_op():
    sharing = set()
    for name, op in all_ops().items():
        if op.inplace or op.samples is None:
            continue  # (in-place kernels write their inputs: never recorded on a symbol)
        for sample in op.samples():
            arrays = [None if a is None else np.asarray(a) for a in sample.inputs]
            try:
                out = op.kernel(np, *arrays, **sample.attrs)
            except Exception:  # noqa: BLE001 - a sample meant to raise
                continue
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if any(isinstance(o, np.ndarray) and isinstance(a, np.ndarray) and np.may_share_memory(o, a)
                   for o in outs for a in arrays):
                sharing.add(name)
    assert sharing and sharing <= VIEW_OPS, sorted(sharing - VIEW_OPS)
