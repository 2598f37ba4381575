"""paddle.summary and paddle.flops against real Paddle 3.3.1 (tests/fixtures/paddle/hapi/hapi.json): the
same table text, totals and FLOPs for a small CNN. The tables show each layer's number, which counts the
layers of its kind the process built before: the recording built its networks under
paddle.utils.unique_name.guard(), and these tests build theirs with fresh counters too."""
import contextlib
import io
import re

import numpy as np
import pytest

import runtime as paddle
from fixtures.paddle.hapi.cases import cnn, load
from runtime.nn.layer import layers

REF = load()


@pytest.fixture(autouse=True)
def _fresh_layer_numbers(monkeypatch):
    monkeypatch.setattr(layers, "_name_counters", {})


def printed(fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn()
    return result, buf.getvalue()


def test_summary_prints_paddles_table_and_returns_the_totals():
    result, text = printed(lambda: paddle.summary(cnn(paddle), (1, 1, 8, 8)))
    assert text == REF["summary"]["printed"]
    assert {k: int(v) for k, v in result.items()} == REF["summary"]["result"]
    assert all(isinstance(v, (int, np.integer)) for v in result.values())


def test_summary_sets_an_unknown_batch_dimension_to_one():
    assert printed(lambda: paddle.summary(cnn(paddle), (None, 1, 8, 8)))[1] == REF["summary_none_batch"]
    with pytest.raises(ValueError, match="only the dim of batch_size can be None"):
        paddle.summary(cnn(paddle), (None, None, 8, 8))


def test_model_summary_uses_the_input_specs():
    m = paddle.Model(cnn(paddle), paddle.static.InputSpec([None, 1, 8, 8], "float32", "image"))
    assert printed(m.summary)[1] == REF["model_summary"]


def test_summary_of_a_list_of_shapes_and_of_example_inputs():
    def mlp():
        return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))

    assert printed(lambda: paddle.summary(mlp(), [(2, 4)]))[1] == REF["summary_list_of_shapes"]
    layers._name_counters.clear()  # the test's own counters (see the fixture): the next MLP is numbered from 1 again
    assert printed(lambda: paddle.summary(mlp(), input=paddle.rand([2, 4])))[1] == REF["summary_list_of_shapes"]
    with pytest.raises(ValueError, match="input_size and input cannot be None"):
        paddle.summary(mlp())


def test_summary_runs_in_eval_mode_and_restores_training_mode():
    net = cnn(paddle)
    modes = []
    net[1].register_forward_post_hook(lambda layer, x, y: modes.append(layer.training))
    printed(lambda: paddle.summary(net, (1, 1, 8, 8)))
    assert modes == [False] and net.training and net[1].training
    assert len(net[1]._forward_post_hooks) == 1  # summary's hooks are gone, the user's stays
    net(paddle.rand([1, 1, 8, 8]))
    assert modes == [False, True]


def _class_names(text):
    # the layer classes print with their module paths, which are Paddle's or ours
    return re.sub(r"<class '[\w.]*\.(\w+)'>", r"<class '\1'>", text)


def test_flops_counts_and_prints_as_paddle():
    net = cnn(paddle)
    value, text = printed(lambda: paddle.flops(net, [1, 1, 8, 8], print_detail=True))
    assert value == REF["flops"]["value"]
    ours, theirs = _class_names(text).splitlines(), _class_names(REF["flops"]["printed"]).splitlines()
    assert ours[:7] == theirs[:7]  # which layer types are counted
    assert ours[7:] == theirs[7:]  # the table
    value, text = printed(lambda: paddle.flops(net, [2, 1, 8, 8]))
    assert [value, _class_names(text)] == [REF["flops_no_detail"][0], _class_names(REF["flops_no_detail"][1])]
    assert net.training  # restored


def test_flops_uses_custom_counters_in_paddles_form():
    def count_relu(m, x, y):
        m.total_ops += int(x[0].numel())

    net = cnn(paddle)
    value, text = printed(lambda: paddle.flops(net, [1, 1, 8, 8], custom_ops={paddle.nn.ReLU: count_relu}))
    assert value == REF["flops"]["value"] + 4 * 8 * 8
    assert "Customize Function has been applied to <class 'ReLU'>" in _class_names(text)
    assert not hasattr(net[2], "total_ops")


def test_flops_refuses_what_is_not_a_layer():
    with pytest.raises(TypeError, match="must be an nn.Layer"):
        paddle.flops(lambda x: x, [1, 4])
