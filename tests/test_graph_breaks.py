"""Graph breaks: what cannot be captured runs for real between compiled subgraphs.

Each test compares the JIT with eager code on the same inputs (values, printed output, side
effects) and asserts where the graph broke (reason code, file:line) and how many subgraphs ran.
"""
import copy
import sys

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime import nn
from sot.testing import assert_same
from sot_helpers import assert_same_result, events, jit_of, rand, translators

G_COUNTER = 0


def foo(x, y):  # a graph break at a data-dependent `if`
    z = x + y
    if z.mean() > 0:
        z = z * 2
    else:
        z = z - 1
    return paddle.tanh(z)


FOO_IF_LINE = foo.__code__.co_firstlineno + 2


def fn(x):  # a graph break at a `print` between tensor ops
    x = x + 1
    print(x)
    return x * 2


def test_the_data_dependent_if_breaks_once_and_captures_both_sides():
    x = paddle.to_tensor(np.array([1.0, -2.0, 3.0], "float32"))
    y = paddle.zeros([3])
    jit = jit_of(foo)
    for args in [(x, y), (-x, y), (x, y)]:  # both branches, then a hit
        report = sot.explain(jit, *args)
        assert_same_result(report.result, foo(*args))
        assert report.graph_count == 2 and report.break_count == 1 and report.fallbacks == []
        (brk,) = report.breaks
        assert brk.code == "SOT-B001" and brk.where == f"{__file__}:{FOO_IF_LINE}"
    assert [t.translations for t in translators(jit)] == [1, 1, 1]  # foo and one resume per branch


def test_a_print_is_deferred_after_one_graph_and_prints_what_eager_prints(capsys):
    x = rand(3)
    want = fn(x)
    eager_out = capsys.readouterr().out
    report = sot.explain(jit_of(fn), x)
    assert capsys.readouterr().out == eager_out
    assert_same_result(report.result, want)
    assert report.graph_count == 1 and report.breaks == []  # print(x) is made after the graph (no break)
    assert report.deferred_prints == [f"{__file__}:{fn.__code__.co_firstlineno + 2}"]
    assert f"print deferred to after its graph ({__file__}:" in str(report)


def test_with_print_deferral_off_a_print_breaks_between_two_graphs(monkeypatch, capsys):
    monkeypatch.setenv("SOT_DEFER_PRINT", "0")
    x = rand(3)
    want = fn(x)
    eager_out = capsys.readouterr().out
    jit = jit_of(fn)
    for _ in range(2):
        report = sot.explain(jit, x)
        assert capsys.readouterr().out == eager_out
        assert_same_result(report.result, want)
        assert report.graph_count == 2 and [b.code for b in report.breaks] == ["SOT-B003"]
        assert report.fallbacks == []


def reads_values(x):
    scale = float(x.max())
    n = int(x.sum() > 1)
    return x * scale + n


def test_values_read_as_python_numbers_break_and_continue_compiled():
    x = rand(4)
    jit = jit_of(reads_values)
    assert_same_result(jit(x), reads_values(x))
    assert {code for code, _, _ in events(jit)} == {"SOT-B002"}


def writes_outside(x, log, box):
    global G_COUNTER
    y = x * 2
    G_COUNTER += 1
    log.append(y.shape[0])
    box.count = box.count + 1
    return y + G_COUNTER


class Box:
    def __init__(self):
        self.count = 0


def test_side_effects_are_replayed_after_the_graph_without_a_break():
    assert_same(jit_of(writes_outside), rand(3), [1], Box())
    jit = jit_of(writes_outside)
    log, box = [], Box()
    before = G_COUNTER
    x = rand(3)
    result = jit(x, log, box)
    assert events(jit) == [] and jit.sot_translator.translations == 1
    assert (G_COUNTER, log, box.count) == (before + 1, [3], 1)
    np.testing.assert_allclose(result.numpy(), (x * 2 + G_COUNTER).numpy(), rtol=1e-6)


def counts_then_prints(x, box):
    box.count = box.count + 1
    print("count", box.count, file=sys.stdout)  # to a file: a print that still breaks (SOT-B003)
    return x * box.count


def test_a_write_before_a_break_is_made_before_the_break_runs(capsys):
    box, x = Box(), rand(2)
    want = counts_then_prints(x, Box())
    assert capsys.readouterr().out == "count 1\n"
    jit = jit_of(counts_then_prints)
    assert_same_result(jit(x, box), want)
    assert capsys.readouterr().out == "count 1\n" and box.count == 1
    assert [code for code, _, _ in events(jit)] == ["SOT-B003"]


class PrintingBlock(nn.Layer):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = F.relu(self.fc(x))
        if h.mean() > 10:  # data-dependent
            h = h * 0.5
        print("block", h.shape)
        return h + x


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([PrintingBlock(4), PrintingBlock(4)])
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def train(model, step_fn, x, y, steps=3):
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=model.parameters())
    losses = []
    for _ in range(steps):
        loss = step_fn(model, x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def loss_of(model, x, y):
    return F.mse_loss(model(x), y)


def test_a_model_with_breaks_in_its_layers_trains_as_eager(capsys):
    paddle.seed(0)
    eager_model = Net()
    jit_model = copy.deepcopy(eager_model)
    x, y = rand(5, 4), rand(5, 2)
    want = train(eager_model, loss_of, x, y)
    eager_out = capsys.readouterr().out
    jit = jit_of(loss_of)
    got = train(jit_model, jit, x, y)
    assert capsys.readouterr().out == eager_out
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for a, b in zip(eager_model.parameters(), jit_model.parameters()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)
    codes = {code for code, _, _ in events(jit)}
    # the if in each block (its print is deferred, no break); the loop over the blocks goes on in a
    # resume function, where its iterator is a run-time value (B002)
    assert codes == {"SOT-B001", "SOT-B002"}


def closure_with_tensor_condition(x):
    k = 2.0

    def scale(t):
        return t * k

    if x.sum() > 0:
        return scale(x)
    return x


def condition_in_try(x):
    try:
        if x.sum() > 0:
            return x + 1
    except ValueError:
        pass
    return x


def raises_in_try(x):
    y = x * 2
    try:
        if y:  # three values: bool() raises ValueError, caught below as in eager
            y = y + 1
    except ValueError as e:
        y = y - 1
        print("caught", type(e).__name__)
    finally:
        y = y * 3
    return y


@pytest.mark.parametrize("fn, sign", [(condition_in_try, 1.0), (condition_in_try, -1.0), (raises_in_try, 1.0)])
def test_a_break_inside_try_resumes_in_the_try_and_its_exceptions_reach_the_handler(fn, sign, capsys):
    x = rand(3) * sign
    want = fn(x)
    eager_out = capsys.readouterr().out
    jit = jit_of(fn)
    for _ in range(2):
        report = sot.explain(jit, x)
        assert_same_result(report.result, want)
        assert capsys.readouterr().out == eager_out
        assert [b.code for b in report.breaks] == ["SOT-B001"]
        assert report.fallbacks == []  # the handler's resume function is simulated too


def test_a_frame_with_closure_cells_breaks_and_its_resume_function_shares_them():
    x = rand(3)
    report = sot.explain(jit_of(closure_with_tensor_condition), x)
    assert_same_result(report.result, closure_with_tensor_condition(x))
    assert [b.code for b in report.breaks] == ["SOT-B001"] and report.fallbacks == []


def breaks_in_a_handler(x):
    try:
        raise ValueError("caught below")
    except ValueError:
        if x.sum() > 0:  # the exception being handled cannot be made again in a resume function
            x = x + 1
    return x


@pytest.mark.parametrize("fn, detail", [(breaks_in_a_handler, "rebuilding")])
def test_where_a_break_cannot_be_built_the_frame_runs_eagerly(fn, detail):
    x = rand(3)
    jit = jit_of(fn)
    assert_same_result(jit(x), fn(x))
    (fallback,) = jit.sot_translator.fallbacks
    assert fallback.code == "SOT-B001" and detail in fallback.reason


def test_full_graph_mode_reports_the_break_instead_of_making_it():
    with pytest.raises(sot.GraphBreakError, match="SOT-B001"):
        jit_of(foo, fallback=False)(rand(3), rand(3))


def whole_step(model, opt, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()  # runs autograd for real at a break: the forward before it is one compiled graph
    opt.step()  # so do the optimizer's methods, at breaks of their own
    opt.clear_grad()
    return loss


def test_a_whole_training_step_compiles_its_forward_and_runs_backward_for_real():
    paddle.seed(0)
    eager_model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    jit_model = copy.deepcopy(eager_model)
    eager_opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=eager_model.parameters())
    jit_opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=jit_model.parameters())
    x, y = rand(5, 4), rand(5, 2)
    jit = jit_of(whole_step)
    for _ in range(3):
        want = whole_step(eager_model, eager_opt, x, y)
        report = sot.explain(jit, jit_model, jit_opt, x, y)
        np.testing.assert_allclose(report.result.numpy(), want.numpy(), rtol=1e-6)
        assert report.graph_count == 1 and [b.code for b in report.breaks] == ["SOT-B003"] * 3
        assert "calls Tensor.backward, which runs autograd for real" in report.breaks[0].detail
        # the optimizer's methods run for real where they are called, not simulated
        assert "calls Optimizer.step, which updates" in report.breaks[1].detail
        assert "calls Optimizer.clear_grad, which updates" in report.breaks[2].detail
        assert report.fallbacks == []
    for a, b in zip(eager_model.parameters(), jit_model.parameters()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())  # cleared alike


def make_closure_step(model, scale):
    def step(x):  # a closure over `model` and `scale` (free variables): its resume functions share its cells
        h = model(x) * scale
        if h.mean() > 100:  # a break in the translated closure itself
            h = h * 0
        h.numpy()  # and another
        return h.sum()
    return step


def test_a_translated_closure_breaks_and_resumes_with_its_free_variables():
    paddle.seed(0)
    model = nn.Linear(3, 2)
    eager, jit = make_closure_step(model, 2.0), sot.to_static(make_closure_step(model, 2.0))
    for _ in range(2):
        x = rand(4, 3)
        report = sot.explain(jit, x)
        assert_same_result(report.result, eager(x))
        assert report.fallbacks == [] and [b.code for b in report.breaks] == ["SOT-B001", "SOT-B002"]


def scaled_copies(x):
    for i in range(3):
        yield x * i


def test_a_generator_function_runs_eagerly_with_its_reason_and_full_graph_mode_refuses_it():
    x = rand(2)
    jit = jit_of(scaled_copies)
    got, want = list(jit(x)), list(scaled_copies(x))
    assert_same_result(got, want)
    (fallback,) = jit.sot_translator.fallbacks
    assert fallback.code == "SOT-G001" and "generator" in fallback.reason
    assert fallback.where.endswith(f":{scaled_copies.__code__.co_firstlineno}")
    with pytest.raises(sot.GraphBreakError, match="generator"):
        jit_of(scaled_copies, fallback=False)
