"""`paddle.jit` as Paddle users spell it (`import runtime as paddle`): to_static over the registered JIT
backend (sot), its switches, InputSpec, and save/load of inference layers.

Results are always checked against the eager result of the same code; the expected InputSpec texts
were recorded from PaddlePaddle 3.3.1.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime.jit import backend as jit_backend
from runtime.jit.api import StaticFunction
from runtime.static import InputSpec

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(paddle.__file__).resolve().parents[1]


def rand(*shape):
    return paddle.to_tensor(np.random.rand(*shape).astype("float32"))


def assert_close(actual, expected):
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype


@pytest.fixture
def switch_restored():
    yield
    paddle.jit.enable_to_static(True)


@pytest.fixture
def registry(monkeypatch):
    """The backend registry as a fresh process has it (no backend, entry points not yet searched);
    restored after the test."""
    monkeypatch.setattr(jit_backend._Registry, "backend", None)
    monkeypatch.setattr(jit_backend._Registry, "searched", False)
    monkeypatch.setattr(jit_backend._Registry, "not_to_static", jit_backend.weakref.WeakSet())
    monkeypatch.setattr(jit_backend._Registry, "ignored_modules", [])
    monkeypatch.setattr(paddle.jit.api._Switch, "warned_no_backend", False)
    return jit_backend._Registry


# ---------------------------------------------------------------- InputSpec

def test_input_spec_is_one_class_under_both_names_and_prints_like_paddle():
    assert paddle.jit.InputSpec is paddle.static.InputSpec
    assert repr(InputSpec([None, 4], "float32", "x")) == \
        "InputSpec(shape=(-1, 4), dtype=paddle.float32, name=x, stop_gradient=False)"
    assert repr(InputSpec.from_numpy(np.zeros((2, 3), np.int32), "a")) == \
        "InputSpec(shape=(2, 3), dtype=paddle.int32, name=a, stop_gradient=False)"
    assert InputSpec([-5, 2]).shape == (-1, 2)   # as Paddle: anything below -1 is "any size"


def test_input_spec_equality_reads_every_field():
    spec = InputSpec([None, 4], "float32", "x")
    assert spec == InputSpec([-1, 4], paddle.float32, "x")
    assert hash(spec) == hash(InputSpec([-1, 4], "float32", "x"))
    for other in (InputSpec([-1, 4], "float32", "x", stop_gradient=True), InputSpec([-1, 4], "float64", "x"),
                  InputSpec([-1, 4], "float32", "y"), InputSpec([2, 4], "float32", "x")):
        assert spec != other


def test_input_spec_batch_and_unbatch_change_the_spec_in_place():
    spec = InputSpec([4])
    assert spec.batch(8) is spec and spec.shape == (8, 4)
    assert InputSpec([4]).batch([3]).shape == (3, 4)
    assert spec.unbatch() is spec and spec.shape == (4,)
    with pytest.raises(TypeError, match="batch_size"):
        InputSpec([4]).batch(3.0)
    with pytest.raises(ValueError, match="batch_size"):
        InputSpec([4]).batch([1, 2])
    with pytest.raises(ValueError, match="unbatch"):
        InputSpec([]).unbatch()


def test_input_spec_from_tensor_and_bad_shapes():
    t = paddle.ones([2, 3], dtype="float64")
    spec = InputSpec.from_tensor(t, "t")
    assert (spec.shape, spec.dtype, spec.name) == ((2, 3), paddle.float64, "t")
    with pytest.raises(ValueError, match="tensor"):
        InputSpec.from_tensor(np.zeros(3))
    with pytest.raises(TypeError, match="shape"):
        InputSpec(3)
    with pytest.raises(ValueError, match=r"shape\[0\]"):
        InputSpec([2.0])


# ---------------------------------------------------------------- to_static

def test_to_static_without_and_with_arguments_compiles_with_sot():
    def f(x, w):
        return F.relu(x @ w) * 2

    x, w = rand(3, 4), rand(4, 2)
    decorated = [paddle.jit.to_static(f), paddle.jit.to_static()(f),
                 paddle.jit.to_static(input_spec=[InputSpec([None, 4])], backend="CINN")(f)]
    for jit in decorated:
        assert isinstance(jit, StaticFunction) and jit.__name__ == "f"
        assert_close(jit(x, w), f(x, w))
    assert decorated[0].sot_translator.translations == 1   # sot compiled it (the others share its code cache)


def test_to_static_of_a_layer_compiles_its_forward_in_place():
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.ReLU(), paddle.nn.Linear(3, 2))
    x = rand(5, 4)
    expected = net(x)
    assert paddle.jit.to_static(net) is net
    assert isinstance(net.forward.__func__, StaticFunction)
    assert_close(net(x), expected)
    assert net.forward.sot_translator.translations == 1
    assert paddle.jit.to_static(net) is net and isinstance(net.forward.__func__, StaticFunction)


def test_to_static_of_a_method_in_a_class_body_and_of_a_bound_method():
    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 2)

        @paddle.jit.to_static(input_spec=[InputSpec([None, 4])])   # describes x, after self
        def forward(self, x):
            return self.fc(x) * 2

        def double(self, x):
            return self.fc(x) + self.fc(x)

    net = Net()
    for n in (2, 3, 5):
        x = rand(n, 4)
        assert_close(net(x), net.fc(x) * 2)
    assert Net.forward.sot_translator.translations == 1   # dim 0 was dynamic from the first call
    double = paddle.jit.to_static(net.double)
    x = rand(3, 4)
    assert_close(double(x), net.fc(x) + net.fc(x))
    assert double.__self__ is net and double.__func__.sot_translator.translations == 1


def test_input_spec_with_a_none_dim_makes_the_first_translation_shape_generic():
    def f(x):
        return x * 2 + 1

    with_spec = paddle.jit.to_static(f, input_spec=[InputSpec([None, 3])])
    without = paddle.jit.to_static(lambda x: x * 2 + 1)
    for n in (2, 3, 5, 7):
        x, y = rand(n, 3), rand(n, 3)   # (a dim marked dynamic stays marked on its tensor)
        assert_close(with_spec(x), f(x))
        assert_close(without(y), f(y))
    assert with_spec.sot_translator.translations == 1 and with_spec.sot_translator.recompiles == []
    assert without.sot_translator.translations == 2   # sot alone learns the dim is dynamic on a miss
    by_keyword = paddle.jit.to_static(lambda x: x - 1, input_spec=[InputSpec([None, 3])])
    for n in (2, 4):
        x = rand(n, 3)
        assert_close(by_keyword(x=x), x - 1)
    assert by_keyword.sot_translator.translations == 1


@pytest.mark.parametrize("bad, what", [((3, 5), "has shape [3, 5]"), ((4,), "has rank 1"),
                                       ("float64", "has dtype float64")])
def test_an_input_contradicting_its_spec_warns_naming_the_argument_and_runs_as_it_is(bad, what):
    def f(x):
        return x * 3

    jit = paddle.jit.to_static(f, input_spec=[InputSpec([None, 4], "float32")])
    x = paddle.ones([3, 4], dtype="float64") if bad == "float64" else rand(*bad)
    with pytest.warns(UserWarning, match="argument 'x' of .*f " + re.escape(what)):
        result = jit(x)
    assert_close(result, f(x))


def test_full_graph_raises_at_a_graph_break_before_running_any_of_it():
    seen = []

    def f(x):
        seen.append(1)
        if x.sum() > 0:   # a tensor's value decides: a graph break
            return x + 1
        return x - 1

    x = rand(3)
    with pytest.raises(sot.GraphBreakError):
        paddle.jit.to_static(f, full_graph=True)(x)
    assert seen == []
    lenient = paddle.jit.to_static(f)
    assert_close(lenient(x), f(x))
    assert lenient.sot_translator.breaks   # the default runs the break eagerly and goes on


@pytest.mark.parametrize("backend", [None, "CINN", "cinn", "PCC", "interpreter"])
def test_paddles_backend_names_are_accepted(backend):
    jit = paddle.jit.to_static(lambda x: x + 1, backend=backend)
    x = rand(2)
    assert_close(jit(x), x + 1)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"backend": "TensorRT"}, ValueError, "'backend'"), ({"backend": 1}, ValueError, "'backend'"),
    ({"input_spec": InputSpec([2])}, TypeError, "'input_spec'"), ({"full_graph": 1}, TypeError, "'full_graph'"),
    ({"enable_fallback": True}, TypeError, "enable_fallback")])
def test_bad_to_static_arguments_raise_naming_them(kwargs, error, match):
    with pytest.raises(error, match=match):
        paddle.jit.to_static(lambda x: x, **kwargs)
    with pytest.raises(TypeError, match="function"):
        paddle.jit.to_static(len)


def test_the_property_option_is_accepted():
    jit = paddle.jit.to_static(lambda x: x * 2, property=False)
    assert_close(jit(paddle.ones([2])), paddle.ones([2]) * 2)


def test_enable_to_static_false_runs_decorated_code_eagerly(switch_restored):
    def f(x):
        return x * 2

    jit = paddle.jit.to_static(f)
    x = rand(3)
    paddle.jit.enable_to_static(False)
    assert_close(jit(x), f(x))
    assert jit.sot_translator.translations == 0
    paddle.jit.enable_to_static(True)
    assert_close(jit(x), f(x))
    assert jit.sot_translator.translations == 1
    with pytest.raises(TypeError, match="enable_to_static_bool"):
        paddle.jit.enable_to_static(1)


def test_not_to_static_keeps_a_function_out_of_the_compiled_graph():
    def helper(x):
        return x + 1

    def plain(x):
        return x + 1

    assert paddle.jit.not_to_static(helper) is helper
    assert paddle.jit.not_to_static()(helper) is helper

    def f(x):
        return helper(x) * 2

    def g(x):
        return plain(x) * 2

    x = rand(3)
    jf, jg = paddle.jit.to_static(f), paddle.jit.to_static(g)
    assert_close(jf(x), f(x))
    assert sot.explain(jf, x).break_count == 1 and sot.explain(jg, x).break_count == 0
    compiled = paddle.jit.to_static(lambda x: x)
    assert paddle.jit.not_to_static(compiled) is compiled.__wrapped__


def test_ignore_module_runs_the_modules_functions_eagerly():
    module = types.ModuleType("my_helpers")
    exec("def helper(x):\n    return x + 1\n", module.__dict__)
    module.helper.__module__ = "my_helpers"

    def f(x):
        return module.helper(x) * 2

    x = rand(3)
    jit = paddle.jit.to_static(f)
    assert sot.explain(jit, x).break_count == 0
    paddle.jit.ignore_module([module])
    again = paddle.jit.to_static(lambda x: module.helper(x) * 2)
    assert_close(again(x), f(x))
    assert sot.explain(again, x).break_count == 1
    with pytest.raises(TypeError, match="'modules'"):
        paddle.jit.ignore_module(["os"])


# ---------------------------------------------------------------- the backend registry

class RecordingBackend:
    """A backend that compiles nothing and records what it was asked."""

    name = "recording"

    def __init__(self):
        self.calls = []

    def compile(self, function, full_graph, input_specs):
        self.calls.append(("compile", function.__name__, full_graph, {k: s.shape for k, s in input_specs.items()}))
        return function

    def not_to_static(self, function):
        self.calls.append(("not_to_static", function.__name__))

    def ignore_module(self, module):
        self.calls.append(("ignore_module", module.__name__))


def test_sot_registers_itself_and_its_entry_point_names_the_registered_backend():
    from sot import paddle_jit
    assert paddle.jit.current_backend() is paddle_jit.BACKEND
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    value = declared[paddle.jit.ENTRY_POINT_GROUP]["sot"]
    assert importlib.metadata.EntryPoint("sot", value, paddle.jit.ENTRY_POINT_GROUP).load() is paddle_jit.BACKEND


def test_with_no_backend_to_static_warns_once_and_returns_the_function_unchanged(registry, monkeypatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])

    def f(x):
        return x + 1

    net = paddle.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="runs eagerly.*import sot") as record:
        assert paddle.jit.to_static(f) is f
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert paddle.jit.to_static(net) is net and "forward" not in net.__dict__
        assert paddle.jit.not_to_static(f) is f


def test_a_backend_is_found_through_the_entry_point_group(registry, monkeypatch, tmp_path):
    (tmp_path / "fake_jit_backend.py").write_text(textwrap.dedent("""
        from test_paddle_jit import RecordingBackend
        BACKEND = RecordingBackend()
    """))
    (tmp_path / "broken_jit_backend.py").write_text("raise ImportError('no such accelerator')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    group = paddle.jit.ENTRY_POINT_GROUP
    entries = [importlib.metadata.EntryPoint("b_fake", "fake_jit_backend:BACKEND", group),
               importlib.metadata.EntryPoint("a_broken", "broken_jit_backend:BACKEND", group)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [e for e in entries if e.group == group])

    def f(x):
        return x * 2

    with pytest.warns(RuntimeWarning, match="a_broken.*no such accelerator"):
        jit = paddle.jit.to_static(f, full_graph=True, input_spec=[InputSpec([None])])
    backend = paddle.jit.current_backend()
    assert backend.name == "recording" and backend.calls == [("compile", "f", True, {"x": (-1,)})]
    x = rand(3)
    assert_close(jit(x), f(x))


def test_marks_made_before_a_backend_registers_are_handed_to_it(registry, monkeypatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])

    def helper(x):
        return x

    module = types.ModuleType("later_module")
    paddle.jit.not_to_static(helper)
    paddle.jit.ignore_module([module])
    backend = RecordingBackend()
    paddle.jit.register_backend(backend)
    assert backend.calls == [("not_to_static", "helper"), ("ignore_module", "later_module")]
    with pytest.raises(TypeError, match="'backend'"):
        paddle.jit.register_backend(object())


def test_a_fresh_interpreter_finds_sot_through_installed_entry_point_metadata(tmp_path):
    # a distribution's metadata declaring the group, as `pip install -e .` writes it from pyproject.toml
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    dist = tmp_path / "sot_backend_probe-0.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sot-backend-probe\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{paddle.jit.ENTRY_POINT_GROUP}]\n"
        + "".join(f"{k} = {v}\n" for k, v in declared[paddle.jit.ENTRY_POINT_GROUP].items()))
    code = textwrap.dedent("""
        import sys
        import runtime as paddle
        assert "sot" not in sys.modules
        f = paddle.jit.to_static(lambda x: x * 2)
        print(type(f).__name__, paddle.jit.current_backend().name, "sot" in sys.modules, f(paddle.ones([2])).tolist())
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SRC)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["StaticFunction", "sot", "True", "[2.0,", "2.0]"]


# ---------------------------------------------------------------- save / load

class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.drop = paddle.nn.Dropout(0.5)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


class ConvNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = paddle.nn.Conv2D(2, 4, 3, padding=1)
        self.bn = paddle.nn.BatchNorm2D(4)
        self.pool = paddle.nn.MaxPool2D(2)

    def forward(self, x):
        return self.pool(F.relu(self.bn(self.conv(x)))).flatten(1)


class TwoInTwoOut(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(3, 2)
        self.b = paddle.nn.Linear(5, 2)
        self.register_buffer("shift", paddle.to_tensor([0.5, -0.5]), persistable=False)

    def forward(self, x, y):
        left, right = self.a(x), self.b(y)
        return left + right + self.shift, left * right


class Branchy(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:   # a tensor's value decides
            return h
        return -h


def saved_and_loaded(layer, tmp_path, **kwargs):
    path = str(tmp_path / "model")
    paddle.jit.save(layer, path, **kwargs)
    return paddle.jit.load(path)


def test_a_saved_mlp_loads_as_a_layer_giving_the_eager_eval_outputs(tmp_path):
    net = MLP()
    loaded = saved_and_loaded(net, tmp_path, input_spec=[InputSpec([None, 4], "float32", "x")])
    assert net.training   # the layer was exported in eval mode, and left as it was
    net.eval()
    for n in (1, 3, 6):   # a None batch dim: any batch size
        x = rand(n, 4)
        assert_close(loaded(x), net(x))
    assert isinstance(loaded, paddle.jit.TranslatedLayer) and isinstance(loaded, paddle.nn.Layer)
    assert sorted(os.listdir(tmp_path)) == ["model.pdiparams", "model.pdiparams.info", "model.pdmodel"]
    with open(tmp_path / "model.pdmodel") as f:
        assert json.load(f)["format"] == "runtime.static.inference_model"   # ours, not Paddle's protobuf


def test_a_conv_bn_pool_net_exports_its_eval_mode_with_trained_statistics(tmp_path):
    net = ConvNet()
    for _ in range(3):   # training steps move BatchNorm's running statistics away from their start
        net(rand(4, 2, 6, 6) * 3 + 1)
    loaded = saved_and_loaded(net, tmp_path, input_spec=[InputSpec([None, 2, 6, 6])])
    net.eval()
    x = rand(2, 2, 6, 6)
    assert_close(loaded(x), net(x))
    net.train()
    assert not np.allclose(net(x).numpy(), loaded(x).numpy())   # train mode differs: the export is eval


def test_two_inputs_two_outputs_and_a_non_persistable_buffer(tmp_path):
    net = TwoInTwoOut()
    loaded = saved_and_loaded(net, tmp_path, input_spec=[InputSpec([None, 3]), InputSpec([None, 5])])
    x, y = rand(4, 3), rand(4, 5)
    out, expected = loaded(x, y), net(x, y)
    assert type(out) is tuple and len(out) == 2
    for o, e in zip(out, expected):
        assert_close(o, e)
    assert sorted(loaded.state_dict()) == sorted(net.state_dict())   # the buffer is not persistable in both
    np.testing.assert_array_equal(loaded.shift.numpy(), net.shift.numpy())


def test_a_to_static_layer_is_saved_from_its_spec_or_from_its_last_call(tmp_path):
    with_spec = paddle.jit.to_static(MLP(), input_spec=[InputSpec([None, 4])])
    loaded = saved_and_loaded(with_spec.eval(), tmp_path / "a")
    x = rand(5, 4)
    assert_close(loaded(x), with_spec(x))
    called = paddle.jit.to_static(MLP()).eval()
    x = rand(2, 4)
    called(x)
    loaded = saved_and_loaded(called, tmp_path / "b")
    assert_close(loaded(x), called(x))
    assert loaded.program().global_block().var("x").shape == [2, 4]   # the shape of that call
    with pytest.raises(ValueError, match="shape"):
        loaded(rand(3, 4))
    assert isinstance(called.forward.__func__, StaticFunction)   # saving changed nothing of the layer


def test_compiled_sublayers_are_exported_from_their_plain_code(tmp_path):
    class Block(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 4)

        @paddle.jit.to_static
        def forward(self, x):
            return F.relu(self.fc(x))

    outer = paddle.nn.Sequential(Block(), paddle.jit.to_static(paddle.nn.Linear(4, 2)))
    x = rand(3, 4)
    expected = outer(x)
    loaded = saved_and_loaded(outer, tmp_path, input_spec=[InputSpec([None, 4])])
    assert_close(loaded(x), expected)
    assert [op.type for op in loaded.program().global_block().ops] == ["linear", "relu", "linear"]


def test_saving_needs_specs(tmp_path):
    with pytest.raises(ValueError, match="input_spec"):
        paddle.jit.save(MLP(), str(tmp_path / "m"))
    with pytest.raises(TypeError, match=r"input_spec\[0\]"):
        paddle.jit.save(MLP(), str(tmp_path / "m"), input_spec=[[None, 4]])


def test_a_forward_with_python_control_flow_on_tensor_values_names_the_layer_and_line(tmp_path):
    with pytest.raises(RuntimeError, match=r"Branchy\.forward cannot be built as a static program, at "
                                           r".*test_paddle_jit\.py:\d+.*paddle\.static\.nn\.cond") as error:
        paddle.jit.save(Branchy(), str(tmp_path / "m"), input_spec=[InputSpec([None, 3])])
    line = int(str(error.value).split("test_paddle_jit.py:")[1].split(":")[0])
    assert "if h.mean() > 0" in Path(__file__).read_text().splitlines()[line - 1]
    assert not os.listdir(tmp_path)


def test_the_translated_layer_exposes_its_parameters_and_program(tmp_path):
    net = MLP().eval()
    loaded = saved_and_loaded(net, tmp_path, input_spec=[InputSpec([None, 4])])
    assert not loaded.training
    assert list(loaded.state_dict()) == list(net.state_dict())
    for (k, v), (k2, v2) in zip(loaded.state_dict().items(), net.state_dict().items()):
        np.testing.assert_array_equal(v.numpy(), v2.numpy())
    assert len(loaded.parameters()) == len(net.parameters()) == 4
    assert isinstance(loaded.program(), paddle.static.Program)
    with pytest.warns(UserWarning, match="inference program"):
        assert loaded.train() is loaded
    assert loaded.training
    loaded.eval()
    new_weight = paddle.full([4, 8], 0.1)
    loaded.set_state_dict({**loaded.state_dict(), "fc1.weight": new_weight})   # seen by the next call
    net.set_state_dict({**net.state_dict(), "fc1.weight": new_weight})
    x = rand(3, 4)
    assert_close(loaded(x), net(x))


def test_load_and_save_errors(tmp_path):
    with pytest.raises(ValueError, match="nope.pdiparams.info"):
        paddle.jit.load(str(tmp_path / "nope"))
    (tmp_path / "junk.pdiparams.info").write_text("[]")
    with pytest.raises(ValueError, match="not a file written by paddle.jit.save"):
        paddle.jit.load(str(tmp_path / "junk"))
    with pytest.raises(ValueError, match="combine_params"):
        paddle.jit.save(MLP(), str(tmp_path / "m"), input_spec=[InputSpec([2, 4])], combine_params=True)
    with pytest.raises(TypeError, match="'layer'"):
        paddle.jit.save(lambda x: x, str(tmp_path / "m"))
    with pytest.raises(ValueError, match="'path'"):
        paddle.jit.save(MLP(), str(tmp_path) + "/", input_spec=[InputSpec([2, 4])])
    loaded = saved_and_loaded(MLP(), tmp_path, input_spec=[InputSpec([None, 4])])
    with pytest.raises(TypeError, match="expected 1 input"):
        loaded(rand(2, 4), rand(2, 4))
    with pytest.raises(ValueError, match="x"):
        loaded(rand(2, 5))
    with pytest.raises(RuntimeError, match="cannot be called while building a static program"):
        paddle.jit.save(loaded, str(tmp_path / "again"), input_spec=[InputSpec([None, 4])])
