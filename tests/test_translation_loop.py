"""The translation loop: a simulation that asks to run again must change what the next one sees.

A dim read as a Python int asks to simulate again with it kept static; were keeping it static to
change nothing, the loop would ask forever. It gives up instead: the frame runs eagerly (its
result is eager's), with the reason recorded.
"""
import pytest

import sot
from sot_helpers import assert_same_result, jit_of, rand


def reshape_by_first_dim(x):
    return x.reshape([int(x.shape[0]), 2, 2]) + 1  # int(): the size's value, read while translating


def test_a_retranslation_that_changes_nothing_runs_the_frame_eagerly(monkeypatch):
    jit = jit_of(reshape_by_first_dim)
    translator = jit.sot_translator
    first = rand(2, 4)
    assert_same_result(jit(first), reshape_by_first_dim(first))
    monkeypatch.setattr(translator.shapes, "keep_static", lambda error, where: None)  # the dim stays dynamic
    x = rand(3, 4)  # a second size makes dim 0 dynamic; int() then reads it
    assert_same_result(jit(x), reshape_by_first_dim(x))
    (fallback,) = translator.fallbacks
    assert fallback.code == "SOT-G001"
    assert fallback.reason.startswith("the translation asked to simulate the frame again with nothing changed (")
    assert "must stay static" in fallback.reason
    assert translator.translations == 1


def test_a_retranslation_that_changes_nothing_raises_in_full_graph_mode(monkeypatch):
    jit = jit_of(reshape_by_first_dim, fallback=False)
    jit(rand(2, 4))
    monkeypatch.setattr(jit.sot_translator.shapes, "keep_static", lambda error, where: None)
    with pytest.raises(sot.GraphBreakError, match="nothing changed"):
        jit(rand(3, 4))
