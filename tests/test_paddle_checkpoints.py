"""paddle.load reads checkpoints written by real Paddle (pickles), and nothing that could run code.

The fixtures in tests/fixtures/paddle/ were written by real Paddle (record_checkpoints.py there):
a Conv2D/BatchNorm2D/Linear model's .pdparams after one Adam step (also with pickle protocol 2),
Adam's .pdopt, nested objects and a lone Tensor. expected.json records what Paddle's own
paddle.load returned for each (structure, types, dtypes, Tensor names); expected.npz its arrays,
the model's eval output for one input, and the parameters after a second training step. Hostile
pickles are crafted here: each is shown to run its payload under plain pickle, then paddle.load
must refuse it, by name, without running it."""
import codecs
import collections
import io
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing._private.utils import runstring

import runtime as paddle
from fixtures.paddle.recording import arrays_of, checkpoint_net, describe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
FILES = ("net.pdparams", "net_p2.pdparams", "net.pdopt", "nested.pdobj", "arrays.pdobj", "tensor.pdtensor")


def _fixture(name):
    return os.path.join(FIXTURES, name)


with open(_fixture("expected.json")) as _f:
    RECORDED = json.load(_f)["load"]
with np.load(_fixture("expected.npz"), allow_pickle=False) as _npz:
    EXPECTED = {k: _npz[k] for k in _npz.files}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("mode", ["", "@numpy"])
def test_each_file_loads_as_paddle_loaded_it(name, mode):
    out = paddle.load(_fixture(name), return_numpy=mode == "@numpy")
    assert describe(out, paddle.Tensor, names=name != "arrays.pdobj") == RECORDED[name + mode]


def test_keep_name_table_keeps_paddles_table():
    out = paddle.load(_fixture("net.pdparams"), keep_name_table=True)
    assert describe(out, paddle.Tensor) == RECORDED["net.pdparams@keep_name_table"]
    assert out["StructuredToParameterName@@"]["bn._mean"] == "batch_norm2d_0.w_0"


@pytest.mark.parametrize("name", FILES)
def test_loaded_arrays_equal_paddles(name):
    ours = {}
    arrays_of(name, paddle.load(_fixture(name)), ours, paddle.Tensor)
    theirs = {k: v for k, v in EXPECTED.items() if k == name or k.startswith(name + "/")}
    assert sorted(ours) == sorted(theirs)
    for k, v in theirs.items():
        assert ours[k].dtype == v.dtype, k
        np.testing.assert_array_equal(ours[k], v, err_msg=k)


def test_loaded_tensors_stop_gradient_and_own_writable_memory():
    state = paddle.load(_fixture("net.pdparams"))
    for value in state.values():
        assert value.stop_gradient
        value.numpy()[...] = 0  # arrays unpickled from bytes must not be read-only views of the file
    nested = paddle.load(_fixture("nested.pdobj"))
    assert nested["tensors"][1].stop_gradient  # saved with stop_gradient=False, loaded as Paddle does


@pytest.mark.parametrize("name", ["net.pdparams", "net_p2.pdparams"])
def test_set_state_dict_then_forward_equals_paddles_output(name):
    net = checkpoint_net(paddle)
    net.set_state_dict(paddle.load(_fixture(name)))
    np.testing.assert_array_equal(net.bn._mean.numpy(), EXPECTED["net.pdparams/bn._mean"])
    net.eval()
    out = net(paddle.to_tensor(EXPECTED["x_eval"]))
    np.testing.assert_allclose(out.numpy(), EXPECTED["y_eval"], rtol=1e-5, atol=1e-6)


def _train_step(net, opt, x):
    loss = (net(x) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()


def test_adam_state_from_paddle_continues_training_as_paddle_did():
    net = checkpoint_net(paddle)
    net.set_state_dict(paddle.load(_fixture("net.pdparams")))
    sched = paddle.optimizer.lr.StepDecay(0.01, step_size=2, gamma=0.5)
    opt = paddle.optimizer.Adam(learning_rate=sched, parameters=net.parameters())
    opt.set_state_dict(paddle.load(_fixture("net.pdopt")))
    assert sched.last_epoch == 1 and opt.get_lr() == float(EXPECTED["step2/lr"])
    net.train()
    _train_step(net, opt, paddle.to_tensor(EXPECTED["x_train"]))
    for key, value in net.state_dict().items():
        np.testing.assert_allclose(value.numpy(), EXPECTED[f"step2/{key}"], rtol=1e-5, atol=1e-6, err_msg=key)


def test_files_written_under_numpy_1_name_its_module_paths(tmp_path):
    # NumPy 1.x pickles name numpy.core.multiarray where 2.x names numpy._core.multiarray
    data = open(_fixture("net_p2.pdparams"), "rb").read()
    assert data.count(b"numpy._core.multiarray\n") == 1
    path = tmp_path / "np1.pdparams"
    path.write_bytes(data.replace(b"numpy._core.multiarray\n", b"numpy.core.multiarray\n"))
    out = paddle.load(str(path))
    for key, value in out.items():
        np.testing.assert_array_equal(value.numpy(), EXPECTED[f"net.pdparams/{key}"])


def test_detection_is_by_content_not_extension(tmp_path):
    pickled = tmp_path / "weights.npz"
    pickled.write_bytes(open(_fixture("tensor.pdtensor"), "rb").read())
    np.testing.assert_array_equal(paddle.load(str(pickled)).numpy(), EXPECTED["tensor.pdtensor"])
    ours = tmp_path / "model.pdparams"
    paddle.save({"w": paddle.to_tensor([1.0, 2.0])}, str(ours))
    np.testing.assert_array_equal(paddle.load(str(ours))["w"].numpy(), [1.0, 2.0])
    with open(_fixture("net.pdopt"), "rb") as f:
        assert paddle.load(io.BytesIO(f.read()))["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.01}


def test_slices_of_a_big_array_are_joined_as_paddle_does(tmp_path):
    # protocol 2/3 state dicts split arrays over 1 GiB into "<key>@@.<i>" slices plus this table
    whole = np.arange(12, dtype=np.float32).reshape(3, 4)
    saved = {"w@@.0": whole.ravel()[:5], "w@@.1": whole.ravel()[5:], "b": np.ones(2, np.float32),
             "UnpackBigParamInfor@@": {"w": {"OriginShape": (3, 4), "slices": ["w@@.0", "w@@.1"]}},
             "StructuredToParameterName@@": {"w": "linear_0.w_0", "b": "linear_0.b_0"}}
    path = tmp_path / "big.pdparams"
    path.write_bytes(pickle.dumps(saved, protocol=2))
    out = paddle.load(str(path))
    assert list(out) == ["b", "w"]
    np.testing.assert_array_equal(out["w"].numpy(), whole)
    assert out["w"].name == "linear_0.w_0"


def test_a_truncated_paddle_pickle_is_a_clear_error(tmp_path):
    path = tmp_path / "cut.pdparams"
    path.write_bytes(open(_fixture("net.pdparams"), "rb").read()[:300])
    with pytest.raises(pickle.UnpicklingError, match="cut.pdparams.*unpickling failed") as e:
        paddle.load(str(path))
    assert isinstance(e.value, ValueError)


# ---------------------------------------------------------------- hostile pickles
class _Reduce:
    """Pickles as the call fn(*args): what a hostile file makes the unpickler run."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args

    def __call__(self, *args):  # pickle wants a callable; it is never called here
        raise AssertionError("not called")


def _payloads(marker, module_dir):
    """name -> (payload that creates `marker` when unpickled, the global paddle.load must name)."""
    touch = f"open({str(marker)!r}, 'w').close()"
    module = "ckpt_hostile_module"
    (module_dir / f"{module}.py").write_text(touch + "\n")
    get_system = _Reduce(getattr, _Reduce(__import__, "os"), "system")
    return {
        "os.system": (_Reduce(os.system, f"touch {marker}"), f"{os.system.__module__}.system"),
        "eval": (_Reduce(eval, touch), "builtins.eval"),
        "exec": (_Reduce(exec, touch), "builtins.exec"),
        "getattr": (_Reduce(get_system, f"touch {marker}"), "builtins.getattr"),
        "__import__": (_Reduce(__import__, module), "builtins.__import__"),
        "subprocess": (_Reduce(subprocess.check_call, ["touch", str(marker)]), "subprocess.check_call"),
        "numpy submodule": (_Reduce(runstring, touch, {}), f"{runstring.__module__}.runstring"),
    }


@pytest.mark.parametrize("kind", ["os.system", "eval", "exec", "getattr", "__import__", "subprocess",
                                  "numpy submodule"])
@pytest.mark.parametrize("where", ["top level", "nested in a state dict"])
def test_a_hostile_pickle_is_refused_by_name_without_running(tmp_path, monkeypatch, kind, where):
    marker = tmp_path / "ran"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ckpt_hostile_module", raising=False)
    payload, refused = _payloads(marker, tmp_path)[kind]
    if where != "top level":
        payload = {"fc.weight": np.ones(2, np.float32), "deep": [1, {"x": (payload,)}],
                   "StructuredToParameterName@@": {"fc.weight": "linear_0.w_0"}}
    for protocol in (2, 4):
        path = tmp_path / f"evil{protocol}.pdparams"
        path.write_bytes(pickle.dumps(payload, protocol=protocol))
        # protocol 2 names Python 2's modules (__builtin__, commands); the message adds Python 3's name
        with pytest.raises(pickle.UnpicklingError, match=f"evil{protocol}.pdparams.*'{refused}'"):
            paddle.load(str(path))
        assert not marker.exists()
    # the payload is live: plain unpickling runs it
    monkeypatch.delitem(sys.modules, "ckpt_hostile_module", raising=False)
    try:
        pickle.loads(path.read_bytes())
    except Exception:
        pass
    assert marker.exists()


def test_a_numpy_global_outside_the_reconstructors_is_refused(tmp_path):
    path = tmp_path / "npload.pdparams"
    path.write_bytes(pickle.dumps({"w": _Reduce(np.load, "elsewhere.npy", None, True)}))
    with pytest.raises(pickle.UnpicklingError, match="'numpy.load'"):
        paddle.load(str(path))


@pytest.mark.parametrize("protocol", [2, 3, 4])
def test_plain_data_loads_as_plain_unpickling_gives_it(tmp_path, protocol):
    data = {"empty": b"", "bytes": b"\x00\xffxy", "z": 1 + 2j, "frozen": frozenset({1}), "set": {2, 3},
            "od": collections.OrderedDict(b=1, a=2), "t": (1, "a", None), "big": 2 ** 70, "f": np.float64(1.5),
            "text": "\u00e9t\u00e9", "nested": [[{"k": (True, 0.5)}]]}
    path = tmp_path / "plain.pdobj"
    path.write_bytes(pickle.dumps(data, protocol=protocol))
    out = paddle.load(str(path))
    assert out == pickle.loads(path.read_bytes()) == data
    assert type(out["od"]) is collections.OrderedDict and type(out["f"]) is np.float64


@pytest.mark.parametrize("payload,what", [
    (_Reduce(codecs.encode, "abc", "rot13"), "latin-1 text, not 'rot13'"),
    (_Reduce(bytes, 10 ** 6), "builtins.bytes is only allowed without arguments"),
])
def test_allowed_globals_refuse_arguments_a_checkpoint_never_needs(tmp_path, payload, what):
    path = tmp_path / "args.pdparams"
    path.write_bytes(pickle.dumps([payload], protocol=2))
    with pytest.raises(pickle.UnpicklingError, match=f"args.pdparams.*{what}"):
        paddle.load(str(path))


def test_attributes_built_onto_an_ordered_dict_are_refused(tmp_path):
    od = collections.OrderedDict(a=np.ones(1))
    od.keys = "shadowing a method"
    path = tmp_path / "od.pdparams"
    path.write_bytes(pickle.dumps({"od": od}))
    with pytest.raises(pickle.UnpicklingError, match="OrderedDict carries attributes \\['keys'\\]"):
        paddle.load(str(path))


def test_a_persistent_id_is_refused(tmp_path):
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return "storage" if isinstance(obj, bytes) else None

    buf = io.BytesIO()
    Pickler(buf, protocol=4).dump({"w": b"data"})
    path = tmp_path / "pid.pdparams"
    path.write_bytes(buf.getvalue())
    with pytest.raises(pickle.UnpicklingError, match="persistent id"):
        paddle.load(str(path))
