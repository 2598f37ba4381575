"""paddle.save / paddle.load: round trips of state dicts, and rejection of garbage, truncated or
tampered files and of pickles that would run code (Paddle's own pickles: test_paddle_checkpoints.py)."""
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import runtime as paddle


def _state():
    w = paddle.Parameter(np.arange(12, dtype=np.float32).reshape(3, 4), name="linear_0.w_0")
    return {
        "linear_0.w_0": w,
        "bias": paddle.to_tensor(np.array([1.5, -2.0], dtype=np.float64)),
        "steps": paddle.to_tensor(np.array([3], dtype=np.int64)),
        "half": paddle.to_tensor(np.ones(2, np.float16)),
        "LR_Scheduler": {"last_epoch": 4, "last_lr": 0.125},
        "meta": ["a", 1, 2.5, None, True, (1, 2)],
        "array": np.arange(5, dtype=np.int32),
        "scalar": np.float32(0.5),
        3: "int key",
    }


def test_round_trip_values_dtypes_and_structure(tmp_path):
    path = tmp_path / "sub" / "model.pdparams"
    state = _state()
    paddle.save(state, str(path))
    out = paddle.load(str(path))
    assert list(out) == list(state)
    for k in ("linear_0.w_0", "bias", "steps", "half"):
        assert isinstance(out[k], paddle.Tensor)
        assert out[k].dtype == state[k].dtype
        np.testing.assert_array_equal(out[k].numpy(), state[k].numpy())
        assert out[k].stop_gradient
    assert out["linear_0.w_0"].name == "linear_0.w_0"
    assert out["LR_Scheduler"] == {"last_epoch": 4, "last_lr": 0.125}
    assert out["meta"] == ["a", 1, 2.5, None, True, (1, 2)]
    assert isinstance(out["array"], np.ndarray) and out["array"].dtype == np.int32
    np.testing.assert_array_equal(out["array"], np.arange(5))
    assert out["scalar"] == np.float32(0.5) and out["scalar"].dtype == np.float32
    assert out[3] == "int key"


def test_return_numpy_and_file_objects():
    buf = io.BytesIO()
    paddle.save({"w": paddle.to_tensor([1.0, 2.0])}, buf)
    buf.seek(0)
    out = paddle.load(buf, return_numpy=True)
    assert isinstance(out["w"], np.ndarray)
    np.testing.assert_array_equal(out["w"], [1.0, 2.0])


def test_optimizer_state_round_trip(tmp_path):
    p = paddle.Parameter(np.ones(3), name="p")
    opt = paddle.optimizer.Adam(learning_rate=paddle.optimizer.lr.StepDecay(0.1, step_size=2), parameters=[p])
    (p * p).sum().backward()
    opt.step()
    paddle.save(opt.state_dict(), str(tmp_path / "o.pdopt"))
    loaded = paddle.load(str(tmp_path / "o.pdopt"))
    assert set(loaded) == {"p_moment1_0", "p_moment2_0", "p_beta1_pow_acc_0", "p_beta2_pow_acc_0", "LR_Scheduler"}
    np.testing.assert_array_equal(loaded["p_moment1_0"].numpy(), opt.state_dict()["p_moment1_0"].numpy())


def test_scalar_tensor_and_plain_values(tmp_path):
    path = str(tmp_path / "x")
    paddle.save(paddle.to_tensor(2.5), path)
    assert paddle.load(path).item() == 2.5
    paddle.save([1, "two", {"three": 3.0}], path)
    assert paddle.load(path) == [1, "two", {"three": 3.0}]


def test_save_rejects_unsupported_objects_and_leaves_no_file(tmp_path):
    path = tmp_path / "bad.pdparams"
    with pytest.raises(TypeError, match=r"object of type object at obj\['x'\]"):
        paddle.save({"x": object()}, str(path))
    with pytest.raises(TypeError, match="dtype object"):
        paddle.save({"x": np.array([{}, 1], dtype=object)}, str(path))
    with pytest.raises(TypeError, match="dict keys"):
        paddle.save({(1, 2): 1}, str(path))
    assert not path.exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="protocol"):
        paddle.save({}, str(path), protocol=5)
    with pytest.raises(ValueError, match="configs"):
        paddle.save({}, str(path), bogus=1)
    with pytest.raises(ValueError, match="filename is empty"):
        paddle.save({}, str(tmp_path) + "/")


def test_failed_save_keeps_the_previous_file(tmp_path):
    path = str(tmp_path / "m.pdparams")
    paddle.save({"w": paddle.to_tensor([1.0])}, path)
    with pytest.raises(TypeError):
        paddle.save({"w": paddle.to_tensor([2.0]), "bad": object()}, path)
    np.testing.assert_array_equal(paddle.load(path)["w"].numpy(), [1.0])


class _Boom:
    def __reduce__(self):
        return (exec, ("raise SystemExit('unpickled!')",))


def test_load_refuses_a_pickle_that_would_run_code(tmp_path):
    path = tmp_path / "evil.pdparams"
    path.write_bytes(pickle.dumps({"w": _Boom()}, protocol=4))
    with pytest.raises(ValueError, match="evil.pdparams.*'builtins.exec'.*refuses"):
        paddle.load(str(path))


def test_load_rejects_garbage_truncated_and_foreign_files(tmp_path):
    garbage = tmp_path / "garbage"
    garbage.write_bytes(np.random.default_rng(0).bytes(256))
    with pytest.raises(ValueError, match="garbage.*expected a paddle.save file"):
        paddle.load(str(garbage))
    good = tmp_path / "good"
    paddle.save({"w": paddle.to_tensor(np.ones(1000))}, str(good))
    truncated = tmp_path / "truncated"
    truncated.write_bytes(good.read_bytes()[:600])
    with pytest.raises(ValueError, match="truncated"):
        paddle.load(str(truncated))
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, w=np.ones(3))
    with pytest.raises(ValueError, match="foreign.npz.*__manifest__"):
        paddle.load(str(foreign))
    with pytest.raises(ValueError, match="does not exist"):
        paddle.load(str(tmp_path / "missing"))


def _with_manifest(path, manifest, arrays=None):
    arrays = dict(arrays or {})
    arrays["__manifest__"] = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("manifest,what", [
    ({"format": "other", "version": 1, "tree": {"t": "none"}}, "does not describe"),
    ({"format": "runtime.save", "version": 99, "tree": {"t": "none"}}, "version 99"),
    ({"format": "runtime.save", "version": 1, "tree": {"t": "pickle", "v": "x"}}, "unknown node type"),
    ({"format": "runtime.save", "version": 1, "tree": {"t": "tensor", "key": "a7", "kind": "Tensor"}},
     "missing array 'a7'"),
    ({"format": "runtime.save", "version": 1, "tree": {"t": "int", "v": "1"}}, "int node"),
    ({"format": "runtime.save", "version": 1, "tree": {"t": "dict", "items": [[1, 2, 3]]}}, "pair"),
])
def test_load_rejects_tampered_manifests(tmp_path, manifest, what):
    path = tmp_path / "tampered"
    _with_manifest(path, manifest)
    with pytest.raises(ValueError, match=what):
        paddle.load(str(path))


def test_load_never_unpickles_object_arrays(tmp_path):
    path = tmp_path / "objarr"
    with zipfile.ZipFile(path, "w") as z:
        buf = io.BytesIO()
        np.save(buf, np.array([_Boom()], dtype=object), allow_pickle=True)
        z.writestr("a0.npy", buf.getvalue())
        man = io.BytesIO()
        np.save(man, np.frombuffer(json.dumps({"format": "runtime.save", "version": 1,
                                               "tree": {"t": "ndarray", "key": "a0"}}).encode(), np.uint8))
        z.writestr("__manifest__.npy", man.getvalue())
    with pytest.raises(ValueError, match="cannot be read"):
        paddle.load(str(path))


def test_load_rejects_unknown_configs(tmp_path):
    path = str(tmp_path / "m")
    paddle.save({}, path)
    with pytest.raises(ValueError, match="configs"):
        paddle.load(path, bogus=True)


def test_layer_state_dict_round_trip(tmp_path):
    path = str(tmp_path / "m.pdparams")
    layer = paddle.nn.Linear(4, 3)
    paddle.save(layer.state_dict(), path)
    other = paddle.nn.Linear(4, 3)
    other.set_state_dict(paddle.load(path))
    for k, v in layer.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[k].numpy(), v.numpy())
