"""`paddle.inference`: deploying a model exported by `paddle.jit.save` through Config / create_predictor /
Predictor and its Tensor handles.

Every result is compared with the eager result of the same layer (in eval mode) on the same input;
names, enum values, a handle's state before data and the error types of misuse are what PaddlePaddle
3.3.1 gave (tests/fixtures/paddle/inference/record_inference.py).
"""
from __future__ import annotations

import builtins
import json
import pathlib
import threading
import warnings

import numpy as np
import pytest

import runtime as paddle
import runtime.inference as inference
import runtime.nn.functional as F
from runtime.static import InputSpec

REF = json.loads((pathlib.Path(__file__).parent / "fixtures" / "paddle" / "inference" / "reference.json").read_text())


class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = paddle.nn.Conv2D(1, 4, 3, padding=1)
        self.bn = paddle.nn.BatchNorm2D(4)
        self.fc = paddle.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        y = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return F.softmax(self.fc(paddle.flatten(y, 1)), axis=-1)


class Two(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.fc(x) + y, x.sum()


def export(layer, tmp_path, specs, name="model"):
    """`layer` saved with paddle.jit.save; (prefix, the layer in eval mode for eager references)."""
    prefix = str(tmp_path / name)
    paddle.jit.save(layer, prefix, input_spec=specs)
    layer.eval()
    return prefix


def predictor_of(prefix):
    return inference.create_predictor(inference.Config(prefix + ".pdmodel", prefix + ".pdiparams"))


def rand(*shape):
    return np.random.rand(*shape).astype("float32")


@pytest.fixture
def mlp(tmp_path):
    layer = MLP()
    return layer, export(layer, tmp_path, [InputSpec([None, 4], "float32", "x")])


@pytest.fixture
def cnn(tmp_path):
    layer = CNN()
    with paddle.no_grad():   # running statistics that differ from the initial ones: eval mode must use them
        layer(paddle.to_tensor(rand(6, 1, 8, 8)))
    return layer, export(layer, tmp_path, [InputSpec([None, 1, 8, 8], "float32", "image")])


def run_handles(predictor, *arrays):
    for name, a in zip(predictor.get_input_names(), arrays):
        predictor.get_input_handle(name).copy_from_cpu(a)
    predictor.run()
    return [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_predictor_outputs_equal_the_eager_layer_for_two_batch_sizes(model, request):
    layer, prefix = request.getfixturevalue(model)
    predictor = predictor_of(prefix)
    shape = [4] if model == "mlp" else [1, 8, 8]
    for batch in (3, 5):
        x = rand(batch, *shape)
        (got,) = run_handles(predictor, x)
        want = layer(paddle.to_tensor(x)).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert predictor.get_output_handle("fetch_name_0").shape() == [batch, want.shape[1]]


def test_run_with_a_list_of_tensors_returns_the_outputs_as_tensors(mlp):
    layer, prefix = mlp
    predictor = predictor_of(prefix)
    x = paddle.to_tensor(rand(2, 4))
    (out,) = predictor.run([x])
    assert isinstance(out, paddle.Tensor)
    np.testing.assert_array_equal(out.numpy(), layer(x).numpy())
    np.testing.assert_array_equal(predictor.get_output_handle("fetch_name_0").copy_to_cpu(), layer(x).numpy())


@pytest.mark.parametrize("case", ["named", "unnamed"])
def test_input_and_output_names_are_paddles(case, tmp_path):
    names = ["xin", None] if case == "named" else [None, None]
    prefix = export(Two(), tmp_path, [InputSpec([None, 4], "float32", names[0]), InputSpec([None, 3], "float32")])
    predictor = predictor_of(prefix)
    assert [predictor.get_input_names(), predictor.get_output_names()] == REF["names"][case]


def test_two_inputs_and_two_outputs_equal_the_eager_layer(tmp_path):
    layer = Two()
    predictor = predictor_of(export(layer, tmp_path, [InputSpec([None, 4], "float32"), InputSpec([None, 3], "float32")]))
    x, y = rand(2, 4), rand(2, 3)
    got = run_handles(predictor, x, y)
    want = layer(paddle.to_tensor(x), paddle.to_tensor(y))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.numpy())


def test_handles_before_data_are_like_paddles(mlp):
    predictor = predictor_of(mlp[1])
    x, out = predictor.get_input_handle("x"), predictor.get_output_handle("fetch_name_0")
    before = REF["before_data"]
    assert x.shape() == before["input_shape"] and out.shape() == before["output_shape"]
    assert x.lod() == before["input_lod"] and x.type() == getattr(inference.DataType, before["input_type"])
    with pytest.raises(getattr(builtins, REF["errors"]["output_copy_to_cpu_before_run"]), match="call Predictor.run"):
        out.copy_to_cpu()
    x.copy_from_cpu(rand(1, 4))
    assert repr(predictor.run()) == REF["run_returns"]
    assert predictor.try_shrink_memory() == REF["try_shrink_memory"]


def test_misuse_raises_paddles_error_types_naming_the_input(tmp_path):
    prefix = export(Two(), tmp_path, [InputSpec([None, 4], "float32", "xin"), InputSpec([None, 3], "float32")])
    predictor = predictor_of(prefix)
    errors = {name: getattr(builtins, kind) for name, kind in REF["errors"].items()}
    with pytest.raises(errors["unknown_input"], match="'nope'.*'xin', 'y'"):
        predictor.get_input_handle("nope")
    with pytest.raises(errors["unknown_output"], match="'nope'.*'fetch_name_0'"):
        predictor.get_output_handle("nope")
    with pytest.raises(errors["copy_from_cpu_list"], match="ndarray"):
        predictor.get_input_handle("xin").copy_from_cpu([[1.0] * 4])
    with pytest.raises(errors["run_list_of_wrong_length"], match="need 2 but get 1"):
        predictor.run([paddle.ones([2, 4])])
    with pytest.raises(errors["run_list_of_wrong_shape"], match="'xin' has shape \\[2, 5\\]"):
        predictor.run([paddle.ones([2, 5]), paddle.ones([2, 3])])
    with pytest.raises(TypeError, match="list of paddle.Tensor"):
        predictor.run([rand(2, 4), rand(2, 3)])
    predictor.get_input_handle("xin").copy_from_cpu(rand(2, 4))
    with pytest.raises(ValueError, match="'y' hold no data"):
        predictor.run()
    predictor.get_input_handle("y").copy_from_cpu(np.ones([2, 3], "float64"))
    with pytest.raises(ValueError, match="'y' has dtype float64"):
        predictor.run()
    predictor.get_input_handle("y").copy_from_cpu(rand(2, 4))
    with pytest.raises(ValueError, match="'y' has shape \\[2, 4\\]"):
        predictor.run()
    with pytest.raises(RuntimeError, match="is an output"):
        predictor.get_output_handle("fetch_name_0").copy_from_cpu(rand(2, 3))


def test_copy_from_cpu_copies_and_share_external_data_does_not(mlp):
    layer, prefix = mlp
    predictor = predictor_of(prefix)
    handle, out = predictor.get_input_handle("x"), predictor.get_output_handle("fetch_name_0")
    x = rand(2, 4)
    fed = x.copy()
    handle.copy_from_cpu(x)
    x += 1.0
    predictor.run()
    np.testing.assert_array_equal(out.copy_to_cpu(), layer(paddle.to_tensor(fed)).numpy())
    np.testing.assert_array_equal(handle.copy_to_cpu(), fed)
    shared = paddle.to_tensor(rand(2, 4))
    handle.share_external_data(shared)
    shared.set_value(paddle.to_tensor(x))
    predictor.run()
    np.testing.assert_array_equal(out.copy_to_cpu(), layer(paddle.to_tensor(x)).numpy())
    first = out.copy_to_cpu()
    first += 1.0
    np.testing.assert_array_equal(out.copy_to_cpu(), layer(paddle.to_tensor(x)).numpy())


def test_reshape_sets_the_reported_shape_until_data_is_fed(mlp):
    handle = predictor_of(mlp[1]).get_input_handle("x")
    handle.reshape([3, 4])
    assert handle.shape() == [3, 4]
    handle.copy_from_cpu(rand(2, 4))
    assert handle.shape() == [2, 4] and handle.type() == inference.DataType.FLOAT32


def test_clones_run_in_two_threads_each_with_its_own_results(cnn):
    layer, prefix = cnn
    first = predictor_of(prefix)
    predictors = [first, first.clone()]
    inputs = [[rand(b, 1, 8, 8) for b in (2, 3, 1, 4)], [rand(b, 1, 8, 8) for b in (3, 1, 2, 2)]]
    wants = [[layer(paddle.to_tensor(x)).numpy() for x in xs] for xs in inputs]
    got: list[list] = [[], []]
    errors = []
    barrier = threading.Barrier(2)

    def serve(i):
        try:
            barrier.wait()
            for _ in range(3):
                got[i] = [run_handles(predictors[i], x)[0] for x in inputs[i]]
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=serve, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(2):
        for g, w in zip(got[i], wants[i]):
            np.testing.assert_array_equal(g, w)
    pool = inference.PredictorPool(inference.Config(prefix + ".pdmodel", prefix + ".pdiparams"), 2)
    np.testing.assert_array_equal(run_handles(pool.retrive(1), inputs[0][0])[0], wants[0][0])


def test_config_finds_the_model_in_a_folder_and_records_the_speed_switches(mlp, tmp_path):
    layer, prefix = mlp
    config = inference.Config(str(tmp_path))
    assert config.model_dir() == str(tmp_path) and config.prog_file() == ""
    config.enable_memory_optim()
    config.switch_ir_optim(False)
    config.set_cpu_math_library_num_threads(2)
    config.disable_glog_info()
    config.enable_mkldnn()
    assert (config.memory_optim_enabled(), config.ir_optim(), config.cpu_math_library_num_threads(),
            config.glog_info_disabled(), config.mkldnn_enabled()) == (True, False, 2, True, True)
    summary = config.summary()
    assert str(tmp_path) in summary and "| cpu_math_thread" in summary and "| 2 " in summary
    x = rand(3, 4)
    (got,) = run_handles(inference.create_predictor(config), x)
    np.testing.assert_array_equal(got, layer(paddle.to_tensor(x)).numpy())
    other = inference.Config()
    other.set_model(prefix + ".pdmodel", prefix + ".pdiparams")
    assert (other.prog_file(), other.params_file(), other.model_dir()) == (prefix + ".pdmodel",
                                                                           prefix + ".pdiparams", "")


def test_a_folder_with_two_models_or_missing_files_is_paddles_not_found(mlp, tmp_path):
    paddle.jit.save(MLP(), str(tmp_path / "second"), input_spec=[InputSpec([None, 4], "float32")])
    with pytest.raises(RuntimeError, match="NotFound.*2 '\\*.pdmodel' files"):
        inference.create_predictor(inference.Config(str(tmp_path)))
    with pytest.raises(RuntimeError, match="NotFound.*missing.pdmodel"):
        inference.create_predictor(inference.Config(str(tmp_path / "missing.pdmodel"), mlp[1] + ".pdiparams"))
    with pytest.raises(RuntimeError, match="NotFound.*names no model"):
        inference.create_predictor(inference.Config())


@pytest.mark.parametrize("content", [b"\x0a\x8b\x01\x12\x04feed", b'{"base_code": {"magic": "pir"}, "program": {}}'],
                         ids=["protobuf", "pir-json"])
def test_a_model_exported_by_paddlepaddle_itself_is_refused_saying_so(mlp, tmp_path, content):
    prog = tmp_path / "paddle_export.pdmodel"
    prog.write_bytes(content)
    with pytest.raises(ValueError, match="exported by PaddlePaddle itself.*cannot be read"):
        inference.create_predictor(inference.Config(str(prog), mlp[1] + ".pdiparams"))


@pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks the machine without a usable GPU")
def test_enable_use_gpu_without_a_gpu_warns_and_stays_on_the_cpu(mlp):
    config = inference.Config(mlp[1] + ".pdmodel", mlp[1] + ".pdiparams")
    with pytest.warns(UserWarning, match="runs on the CPU"):
        config.enable_use_gpu(100, 0)
    assert not config.use_gpu() and config.memory_pool_init_size_mb() == 100 and config.gpu_device_id() == 0
    predictor = inference.create_predictor(config)
    assert predictor.get_input_handle("x").place() == inference.PlaceType.CPU


@pytest.mark.gpu
def test_enable_use_gpu_runs_on_the_gpu_with_the_eager_result(mlp):
    layer, prefix = mlp
    config = inference.Config(prefix + ".pdmodel", prefix + ".pdiparams")
    config.enable_use_gpu(100, 0)
    predictor = inference.create_predictor(config)
    x = rand(3, 4)
    (got,) = run_handles(predictor, x)
    assert config.use_gpu() and predictor.get_output_handle("fetch_name_0").place() == inference.PlaceType.GPU
    np.testing.assert_allclose(got, layer(paddle.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_enums_have_paddles_values_and_sizes():
    for name, members in REF["enums"].items():
        assert {k: int(v) for k, v in getattr(inference, name).__members__.items()} == members
    assert inference.get_num_bytes_of_data_type(inference.DataType.FLOAT64) == 8
    assert inference.get_num_bytes_of_data_type(inference.DataType.BFLOAT16) == 2
    assert inference.get_version().startswith(f"version: {paddle.__version__}")


def test_a_failed_run_keeps_the_previous_outputs(mlp):
    layer, prefix = mlp
    predictor = predictor_of(prefix)
    x = rand(2, 4)
    run_handles(predictor, x)
    predictor.get_input_handle("x").copy_from_cpu(rand(2, 5))
    with pytest.raises(ValueError):
        predictor.run()
    np.testing.assert_array_equal(predictor.get_output_handle("fetch_name_0").copy_to_cpu(),
                                  layer(paddle.to_tensor(x)).numpy())
