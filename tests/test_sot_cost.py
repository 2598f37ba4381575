"""The cost model: a subgraph below SOT_MIN_GRAPH_SIZE keeps its translation, guards and breaks
but runs its ops eagerly, recorded as SOT-C001 and counted apart by explain; 0 compiles everything."""
import sys

import numpy as np
import pytest

import runtime as paddle
import sot
from sot import config
from sot_helpers import assert_same_result, jit_of, rand


def two_ops(x, w):
    return paddle.tanh(x * w)


def prints_between(x):
    y = x + 1
    print("between", file=sys.stdout)  # to a file: a print that still breaks (SOT-B003)
    return y * 2 + y


@pytest.fixture
def min_size():
    yield config.set_min_graph_size
    config.set_min_graph_size(None)


def test_a_small_graph_runs_eagerly_but_stays_translated_and_differentiable(min_size):
    min_size(3)
    x, w = rand(3, grad=True), rand(3, grad=True)
    jit = jit_of(two_ops)
    report = sot.explain(jit, x, w)
    assert_same_result(report.result, two_ops(x, w))
    assert (report.graph_count, report.eager_graph_count) == (0, 1)
    (event,) = jit.sot_translator.small_graphs
    assert event.code == "SOT-C001" and "2 op(s) < SOT_MIN_GRAPH_SIZE=3" in event.detail
    jit(x, w).sum().backward()
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.clear_grad(), w.clear_grad()
    two_ops(x, w).sum().backward()
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-6)
    assert jit.sot_translator.translations == 1  # served from the cache, not simulated again


def test_breaks_around_small_graphs_keep_their_places(min_size, capsys):
    min_size(2)
    x = rand(3)
    want = prints_between(x)
    report = sot.explain(jit_of(prints_between), x)
    assert capsys.readouterr().out == "between\nbetween\n"
    assert_same_result(report.result, want)
    assert (report.graph_count, report.eager_graph_count, report.break_count) == (1, 1, 1)


@pytest.mark.parametrize("size", [0, 1])
def test_zero_and_the_default_compile_every_graph(min_size, size):
    min_size(size)
    x, w = rand(3), rand(3)
    report = sot.explain(jit_of(two_ops), x, w)
    assert_same_result(report.result, two_ops(x, w))
    assert (report.graph_count, report.eager_graph_count) == (1, 0)


def test_the_knob_is_read_from_the_environment_and_checked(monkeypatch):
    monkeypatch.setenv("SOT_MIN_GRAPH_SIZE", "5")
    assert config.min_graph_size() == 5
    monkeypatch.setenv("SOT_MIN_GRAPH_SIZE", "-1")
    with pytest.raises(ValueError, match="SOT_MIN_GRAPH_SIZE"):
        config.min_graph_size()
    with pytest.raises(ValueError, match="argument 'size'"):
        config.set_min_graph_size(-2)
