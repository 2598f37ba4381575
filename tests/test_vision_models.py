"""paddle.vision.models: Paddle's constructors build nets with Paddle's state_dict layout and Paddle's outputs.

Oracles, recorded from real PaddlePaddle 3.3.1 by tests/fixtures/paddle/vision/record_models.py:
every constructor call there gives the same state_dict keys and shapes, in the same order (so a
Paddle checkpoint loads); one model per family, its state filled deterministically, gives
Paddle's eval-mode output. Under `sot.to_static` each family gives the eager output.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os

import numpy as np
import pytest

import runtime as paddle
import runtime.vision.models as models
import sot
from runtime.vision.ops import ConvNormActivation

_FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle", "vision")
_spec = importlib.util.spec_from_file_location("record_models", os.path.join(_FIXTURES, "record_models.py"))
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)

with gzip.open(record.SHAPES_FILE, "rt", encoding="utf-8") as _f:
    PADDLE_SHAPES = json.load(_f)
with open(record.OUTPUTS_FILE, encoding="utf-8") as _f:
    PADDLE_OUTPUTS = json.load(_f)


@pytest.fixture
def zero_init():
    """Parameters start at zero instead of random: the key tests build 150-layer nets, and drawing their
    random weights would take most of the suite's time."""
    paddle.nn.initializer.set_global_initializer(paddle.nn.initializer.Constant(0.0),
                                                 paddle.nn.initializer.Constant(0.0))
    yield
    paddle.nn.initializer.set_global_initializer(None, None)


@pytest.mark.parametrize("name,kwargs", record.CONSTRUCTORS, ids=[record.label(n, k) for n, k in record.CONSTRUCTORS])
def test_state_dict_keys_and_shapes_match_paddle(name, kwargs, zero_init):
    model = getattr(models, name)(**kwargs)
    ours = [[k, list(v.shape)] for k, v in model.state_dict().items()]
    # Paddle's SqueezeNet(num_classes=0) keeps a classifier conv with 0 output channels, which is never
    # run; runtime builds no parameter with a zero dimension and leaves that conv out
    assert ours == [[k, shape] for k, shape in PADDLE_SHAPES[record.label(name, kwargs)] if 0 not in shape]


def _filled(name: str, kwargs: dict) -> paddle.nn.Layer:
    """The model in eval mode with every state_dict entry set by record.fill_value, as recorded."""
    model = getattr(models, name)(**kwargs)
    state = {k: record.fill_value(i, k, list(v.shape)) for i, (k, v) in enumerate(model.state_dict().items())}
    model.set_state_dict(state)
    model.eval()
    return model


def _outputs(result) -> list[np.ndarray]:
    return [r.numpy() for r in (result if isinstance(result, (tuple, list)) else [result])]


@pytest.mark.parametrize("name,kwargs,in_shape", record.NUMERICS,
                         ids=[record.label(n, k) for n, k, _ in record.NUMERICS])
def test_eval_output_matches_paddle(name, kwargs, in_shape, zero_init):
    model = _filled(name, kwargs)
    got = _outputs(model(paddle.to_tensor(record.make_input(in_shape))))
    want = PADDLE_OUTPUTS[record.label(name, kwargs)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        expected = np.array(w["values"], dtype=np.float32).reshape(w["shape"])
        assert g.shape == expected.shape
        # float32 rounding differs between the two libraries and these deep nets amplify it: both
        # land about 1e-4 of the output's scale away from a float64 run, so the bound is 3e-4 of it
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=3e-4 * np.abs(expected).max())


# one small member of each family: (constructor, kwargs, part, input shape). The part is the whole
# model, or for the two deepest nets one block of the family (translating all of DenseNet-121 or
# Inception v3 takes seconds; the blocks hold the code that only those families have)
_JIT_CASES = [
    ("LeNet", {}, None, [2, 1, 28, 28]),
    ("resnet18", {"num_classes": 10}, None, [1, 3, 32, 32]),
    ("vgg11", {"batch_norm": True, "num_classes": 0, "with_pool": False}, None, [1, 3, 32, 32]),
    ("mobilenet_v1", {"scale": 0.25, "num_classes": 10}, None, [1, 3, 32, 32]),
    ("mobilenet_v2", {"scale": 0.5, "num_classes": 10}, None, [1, 3, 32, 32]),
    ("mobilenet_v3_small", {"scale": 0.5, "num_classes": 10}, None, [1, 3, 32, 32]),
    ("shufflenet_v2_x0_25", {"num_classes": 10}, None, [1, 3, 32, 32]),
    ("squeezenet1_1", {"num_classes": 10}, None, [1, 3, 64, 64]),
    ("densenet121", {"num_classes": 10}, "db_conv_2", [1, 64, 8, 8]),
    ("googlenet", {"num_classes": 10, "with_pool": False}, None, [1, 3, 64, 64]),
    ("alexnet", {"num_classes": 0}, None, [1, 3, 64, 64]),
    ("inception_v3", {"num_classes": 10}, "inception_block_list.9", [1, 1280, 2, 2]),
]


@pytest.mark.parametrize("name,kwargs,part,in_shape", _JIT_CASES,
                         ids=[n if p is None else f"{n}.{p}" for n, _, p, _ in _JIT_CASES])
def test_to_static_matches_eager(name, kwargs, part, in_shape, zero_init):
    model = _filled(name, kwargs)
    if part is not None:
        model = dict(model.named_sublayers())[part]
    x = paddle.to_tensor(record.make_input(in_shape))
    eager = _outputs(model(x))
    jit = _outputs(sot.to_static(model)(x))
    assert len(jit) == len(eager)
    for j, e in zip(jit, eager):
        np.testing.assert_allclose(j, e, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(e).max()))


def test_num_classes_and_with_pool_shape_the_output(zero_init):
    x = paddle.to_tensor(record.make_input([2, 3, 32, 32]))
    assert models.resnet18(num_classes=7)(x).shape == [2, 7]
    assert models.resnet18(num_classes=0)(x).shape == [2, 512, 1, 1]
    assert models.resnet18(num_classes=0, with_pool=False)(x).shape == [2, 512, 1, 1]
    assert models.mobilenet_v2(scale=0.5, num_classes=0, with_pool=False)(x).shape == [2, 1280, 1, 1]
    assert models.LeNet(num_classes=0)(paddle.to_tensor(record.make_input([2, 1, 28, 28]))).shape == [2, 16, 5, 5]


def test_conv_norm_activation_pads_to_same_size_and_adds_bias_only_without_norm():
    block = ConvNormActivation(3, 4, kernel_size=5)
    assert [type(layer).__name__ for layer in block] == ["Conv2D", "BatchNorm2D", "ReLU"]
    assert block[0].bias is None
    assert block(paddle.ones([1, 3, 9, 9])).shape == [1, 4, 9, 9]
    bare = ConvNormActivation(3, 4, kernel_size=3, stride=2, norm_layer=None, activation_layer=None)
    assert len(bare) == 1 and bare[0].bias is not None
    assert bare(paddle.ones([1, 3, 9, 9])).shape == [1, 4, 5, 5]


def test_pretrained_without_the_weights_file_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(paddle.utils.download, "WEIGHTS_HOME", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"resnet18\.pdparams") as info:
        models.resnet18(pretrained=True)
    assert str(tmp_path) in str(info.value)


def test_pretrained_loads_the_checkpoint_found_in_the_weights_dir(tmp_path, monkeypatch):
    source = _filled("shufflenet_v2_x0_25", {})
    path = tmp_path / "shufflenet_v2_x0_25.pdparams"
    paddle.save(source.state_dict(), str(path))
    md5 = hashlib.md5(path.read_bytes()).hexdigest()
    monkeypatch.setattr(paddle.utils.download, "WEIGHTS_HOME", str(tmp_path))
    monkeypatch.setitem(models.shufflenetv2.MODEL_URLS, "shufflenet_v2_x0_25",
                        ("https://example.invalid/models/shufflenet_v2_x0_25.pdparams", md5))
    loaded = models.shufflenet_v2_x0_25(pretrained=True)
    want = source.state_dict()
    for key, value in loaded.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), want[key].numpy())


def test_pretrained_for_a_variant_without_published_weights_says_so():
    with pytest.raises(ValueError, match="mobilenetv1_0.5 has no published pretrained weights"):
        models.mobilenet_v1(pretrained=True, scale=0.5)
