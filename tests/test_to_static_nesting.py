"""to_static applied twice, and compiled functions and Layers called from compiled code.

Decorating twice is decorating once; a compiled Layer or function called from another compiled
function or Layer is inlined into the caller's graph: results and gradients equal eager's, and no
frame runs eagerly whole.
"""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import sot
from sot_helpers import assert_same_result, events, fresh, rand


def scale(x):
    return x * 2 + 1


def test_to_static_of_a_to_static_function_is_that_function():
    once = sot.to_static(fresh(scale))
    twice = sot.to_static(once)
    assert twice is once
    x = rand(3)
    assert_same_result(twice(x), scale(x))
    assert once.sot_translator.translations == 1 and once.sot_translator.fallbacks == []


def test_to_static_with_options_of_a_to_static_function_is_that_function():
    once = sot.to_static(fresh(scale))
    assert sot.to_static(fallback=True, cache_size_limit=4)(once) is once


class Decorated(nn.Layer):
    """A Layer whose class decorates its forward: the common Paddle pattern."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    @sot.to_static
    def forward(self, x):
        return paddle.tanh(self.fc(x)) * 2


def _same_layer_results(layer, eager_layer, x):
    """layer(x) and eager_layer(x) (same parameters) agree in value and in the gradients of x and of the
    parameters."""
    got = layer(x)
    with sot.disable():  # a Layer whose class decorates its forward is eager only here
        want = eager_layer(x)
    assert_same_result(got, want)
    got.sum().backward()
    got_grads = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in layer.parameters()]
    x.clear_gradient()
    layer.clear_gradients()
    want.sum().backward()
    want_grads = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in eager_layer.parameters()]
    x.clear_gradient()
    eager_layer.clear_gradients()
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_to_static_of_a_layer_whose_forward_is_decorated_keeps_it():
    layer = Decorated()
    assert sot.to_static(layer) is layer
    assert "forward" not in vars(layer)  # the class's compiled forward, not a second wrapper over it
    x = rand(2, 3, grad=True)
    with sot.disable():
        want = layer(x)
    assert_same_result(layer(x), want)


def test_to_static_of_a_layer_twice_is_once():
    paddle.seed(1)
    layer = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    once = sot.to_static(layer)
    forward = once.forward
    assert sot.to_static(once) is layer and layer.forward == forward
    x = rand(2, 3, grad=True)
    with sot.disable():
        eager = layer(x)
    assert_same_result(layer(x), eager)
    assert forward.__func__.sot_translator.translations == 1


def _outer_body(inner, x):
    return inner(x) * 2 + 1


def test_a_compiled_function_calling_a_compiled_layer_inlines_it():
    paddle.seed(2)
    plain = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    inner = sot.to_static(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)))
    inner.set_state_dict(plain.state_dict())
    jit = sot.to_static(fresh(_outer_body))
    x = rand(2, 3, grad=True)
    _same_layer_results(_CallWith(jit, inner), _CallWith(_outer_body, plain), x)
    assert events(jit) == []  # no break and no fallback: one graph
    assert jit.sot_translator.translations == 1


class _CallWith(nn.Layer):
    """fn(layer, x) as a Layer, so its parameters are the layer's."""

    def __init__(self, fn, layer):
        super().__init__()
        self.fn = fn
        self.layer = layer

    def forward(self, x):
        return self.fn(self.layer, x)


class Net(nn.Layer):
    def __init__(self, convert_body):
        super().__init__()
        self.body = nn.Linear(3, 3)
        if convert_body:
            sot.to_static(self.body)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(paddle.tanh(self.body(x)))


class UsesDecorated(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inner = Decorated()

    def forward(self, x):
        return self.inner(x) + 1


@pytest.mark.parametrize("make", [lambda: Net(True), UsesDecorated], ids=["converted_sublayer", "decorated_sublayer"])
def test_a_compiled_layer_calling_a_compiled_sublayer_inlines_it(make):
    paddle.seed(3)
    outer, eager = make(), make()
    eager.set_state_dict(outer.state_dict())
    sot.to_static(outer)
    x = rand(2, 3, grad=True)
    with sot.disable():
        _same_layer_results(eager, eager, x)  # (eager's own gradients are repeatable)
    _same_layer_results(outer, eager, x)
    report = sot.explain(outer.forward, x)
    assert report.fallbacks == [] and report.break_count == 0 and report.graph_count == 1
