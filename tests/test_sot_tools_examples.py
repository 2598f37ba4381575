"""examples/train_mlp.py in a small configuration: compiled training trains as eager training does,
and the JIT captures the model's forward whole (what `make demo` shows a newcomer)."""
import sys
from pathlib import Path

import pytest

import sot

pytest.importorskip("sklearn", reason="the example's data set ships with scikit-learn (extra 'examples')")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import train_mlp  # noqa: E402


def test_compiled_mlp_training_matches_eager_and_is_captured(capsys):
    eager = train_mlp.main(epochs=1, compiled=False)
    compiled = train_mlp.main(epochs=1, compiled=True)
    assert compiled == eager  # same seed, same data order: JIT == eager, so the same predictions
    (forward,) = [f for f in sot.report().functions if f.qualname == "MLP.forward" and f.file == train_mlp.__file__]
    assert forward.graphs and not forward.breaks and not forward.fallbacks and forward.captured_ratio == 1.0
    assert "JIT: " in capsys.readouterr().out
