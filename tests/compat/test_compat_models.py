"""Paddle model code, run unchanged on `runtime` and under the JIT.

The corpus (`models/`) is model code written the way Paddle's vision, NLP and segmentation
libraries write it. Each model, with fixed weights and inputs (`compat_api`), must give eagerly
the outputs, loss and parameter gradients real PaddlePaddle 3.3.1 gave for the same numbers
(`fixtures/`, recorded by `record.py`), and compiled (`sot.to_static` of the model) exactly the
eager outputs, with the graphs, breaks and fallbacks its module states, and the same training
gradients.
"""
import importlib
import os

import numpy as np
import pytest

import sot
from compat_api import paddle, to_tensors
from models import MODELS
from reference import outputs_of, prepared, reference_loss
from sot_helpers import assert_same_result

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


@pytest.fixture(params=MODELS)
def model(request):
    return importlib.import_module(f"models.{request.param}")


def _recorded(module):
    return np.load(os.path.join(FIXTURES, f"{module.__name__.split('.')[-1]}.npz"))


def _train_step(layer, arrays):
    layer.train()
    loss = reference_loss(layer(*to_tensors(arrays)))
    loss.backward()
    return loss, {n: p.grad.numpy() for n, p in layer.named_parameters() if p.grad is not None}


def test_eager_gives_what_paddle_gave(model):
    recorded = _recorded(model)
    layer, arrays = prepared(model)
    layer.eval()
    with paddle.no_grad():
        outs = outputs_of(layer(*to_tensors(arrays)))
    assert len(outs) == len([k for k in recorded.files if k.startswith("out")])
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out, recorded[f"out{i}"], rtol=1e-4, atol=1e-5, err_msg=f"output {i}")
    loss, grads = _train_step(layer, arrays)
    np.testing.assert_allclose(loss.numpy(), recorded["loss"], rtol=1e-4, atol=1e-4)
    assert sorted(grads) == sorted(k[len("grad:"):] for k in recorded.files if k.startswith("grad:"))
    for name, grad in grads.items():
        np.testing.assert_allclose(grad, recorded[f"grad:{name}"], rtol=1e-3, atol=1e-4, err_msg=name)


def test_compiled_forward_is_eager_with_the_stated_graphs(model):
    layer, arrays = prepared(model)
    layer.eval()
    want = layer(*to_tensors(arrays))
    report = sot.explain(layer, *to_tensors(arrays))
    assert_same_result(report.result, want)
    counts = {"graphs": report.graph_count, "breaks": report.break_count, "fallbacks": len(report.fallbacks)}
    assert counts == model.JIT, str(report)
    again = sot.explain(layer, *to_tensors(arrays))  # a cache hit runs the same graphs
    assert again.translations == 0 and again.graph_count == report.graph_count
    assert_same_result(again.result, want)


def test_compiled_training_step_gives_eager_gradients(model):
    eager_layer, arrays = prepared(model)
    want_loss, want_grads = _train_step(eager_layer, arrays)
    compiled_layer, _ = prepared(model)
    got_loss, got_grads = _train_step(sot.to_static(compiled_layer), arrays)
    np.testing.assert_allclose(got_loss.numpy(), want_loss.numpy(), rtol=1e-6, atol=1e-6)
    assert sorted(got_grads) == sorted(want_grads)
    for name, grad in want_grads.items():
        np.testing.assert_allclose(got_grads[name], grad, rtol=1e-5, atol=1e-6, err_msg=name)
