"""The examples in a small configuration: what they show a newcomer holds (JIT == eager, the
breaks they explain, what the JIT captured)."""
import gc
import sys
from pathlib import Path

import numpy as np
import pytest

import sot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import graph_breaks  # noqa: E402


def test_graph_breaks_example_explains_each_break_and_the_rewrite_removes_them(capsys):
    before, after = graph_breaks.main()
    out = capsys.readouterr().out
    printed = [line for line in out.splitlines() if line.startswith("hidden norm")]  # (the explanation quotes the line)
    assert len(printed) == 2 and "breaks 4 -> 0" in out and "SOT-B001: compute both branches" in out
    assert "hidden norm Tensor(shape=[]" in out  # the rewrite prints the tensor, deferred to after its graph
    first = graph_breaks.Net.forward.__code__.co_firstlineno
    # if, float() (its print is deferred), .numpy(), NumPy's max of the array
    assert [(b.code, int(b.where.rsplit(":", 1)[1]) - first) for b in before.breaks] == [
        ("SOT-B001", 2), ("SOT-B002", 4), ("SOT-B002", 5), ("SOT-B003", 5)]
    assert (before.graph_count, after.graph_count, after.break_count, after.fallbacks) == (3, 1, 0, [])
    paddle = graph_breaks.paddle
    paddle.seed(0)
    x = paddle.to_tensor(np.random.default_rng(0).random((4, 8), dtype=np.float32))
    net = graph_breaks.Net()
    with sot.disable():
        np.testing.assert_array_equal(before.result.numpy(), net(x).numpy())  # JIT == eager, same weights
    np.testing.assert_allclose(after.result.numpy(), before.result.numpy(), rtol=1e-6, atol=1e-6)


@pytest.fixture
def kept_translators():
    """The examples drop their models when main returns, and a Layer whose forward is translated
    is a reference cycle: no collection until the test has read sot.report()."""
    gc.disable()
    yield
    gc.enable()


def test_compiled_mlp_training_matches_eager_and_is_captured(capsys, kept_translators):
    pytest.importorskip("sklearn", reason="the digits data set ships with scikit-learn (extra 'examples')")
    import train_mlp

    eager = train_mlp.main(epochs=1, compiled=False)
    compiled = train_mlp.main(epochs=1, compiled=True)
    assert compiled == eager  # same seed, same data order: JIT == eager, so the same predictions
    (forward,) = [f for f in sot.report().functions if f.qualname == "MLP.forward" and f.file == train_mlp.__file__]
    assert forward.graphs and not forward.breaks and not forward.fallbacks and forward.captured_ratio == 1.0
    assert "JIT: " in capsys.readouterr().out


def test_compiled_cnn_training_matches_eager_and_is_captured(capsys, kept_translators):
    import train_cnn

    eager, compiled = train_cnn.main(epochs=1, limit=200)
    assert compiled == eager  # same seed, same batches: the compiled forward computes what eager does
    out = capsys.readouterr().out
    assert "epoch 1: eager" in out and "compiled" in out and "JIT: " in out
    (forward,) = [f for f in sot.report().functions if f.qualname == "ResNet.forward" and f.file == train_cnn.__file__]
    assert forward.graphs and not forward.breaks and not forward.fallbacks


def test_see_what_jit_did_example_breaks_once_recompiles_and_keeps_the_read_dim_static(kept_translators):
    import see_what_jit_did

    outputs = see_what_jit_did.main()  # main() itself checks each compiled output against eager's
    assert [o.shape[0] for o in outputs] == [2, 3, 6, 6]
    tree = [f for f in sot.report().function("Net.forward") if f.file == see_what_jit_did.__file__]
    breaks = [(e.code, e.source) for f in tree for e in f.breaks]
    assert breaks and all(b == ("SOT-B001", "if h.mean() > 0.5:") for b in breaks)
    kept = [k for f in tree for k in f.kept_static]
    assert kept and all(k.dim == "x dim 0" and k.source == "if x.shape[0] > 4:" for k in kept)
    assert any(dims == "f_locals['x'] dim 0" for f in tree for dims in f.made_dynamic)
