"""NumPy functions of numbers known at translation time (`int(np.prod(x.shape[1:]))`, `np.sqrt(d)`): the real
function runs on the real values while translating, and its NumPy scalar, of eager's type, is a constant of
the graph. Anything NumPy does with an array or a tensor still breaks the graph and runs for real."""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_same_result, jit_of, translators


def flatten_by_prod(x):
    b, *rest = x.shape
    n = np.prod(rest)
    return x.reshape([b, int(n)]), type(n).__name__, float(np.sqrt(x.shape[-1])) * 2


def scaled(x, d=8):
    return x / np.sqrt(d) + np.maximum(d, 3) - np.round(2.5) + np.log2(d) * np.power(2, 3) + np.mean([1, 2])


@pytest.mark.parametrize("fn", [flatten_by_prod, scaled])
def test_numpy_of_numbers_folds_into_the_graph(fn):
    x = paddle.to_tensor(np.arange(24, dtype="float32").reshape(2, 3, 4))
    jit = jit_of(fn)
    report = sot.explain(jit, x)
    assert_same_result(report.result, fn(x))
    assert report.breaks == [] and report.graph_count == 1
    assert all(t.fallbacks == [] for t in translators(jit))


def numpy_of_an_array(x, a):
    return x * float(np.sum(a))


def test_numpy_of_an_array_breaks_and_runs_for_real():
    x, a = paddle.to_tensor(np.ones(2, "float32")), np.array([1.0, 2.0])
    jit = jit_of(numpy_of_an_array)
    report = sot.explain(jit, x, a)
    assert_same_result(report.result, numpy_of_an_array(x, a))
    assert [b.code for b in report.breaks] == ["SOT-B003"]
