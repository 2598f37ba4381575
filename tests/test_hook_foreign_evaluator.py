"""Another PEP 523 evaluator installed (another JIT's, a profiler's): sot cannot hook frames, so a
decorated function runs eagerly, with its eager result, one RuntimeWarning and a count of such runs,
instead of raising. Once the other evaluator is gone, translation resumes."""
import warnings

import numpy as np
import pytest

import runtime as paddle
from sot import _eval_frame
from sot.hook.eval_frame import counters
from sot_helpers import jit_of, translators


def affine(x):
    return paddle.tanh(x) * 2 + 1


@pytest.fixture
def foreign_evaluator():
    _eval_frame._set_foreign_evaluator_for_testing(True)
    try:
        yield
    finally:
        _eval_frame._set_foreign_evaluator_for_testing(False)


def test_a_decorated_call_runs_eagerly_while_another_evaluator_is_installed(foreign_evaluator):
    jit = jit_of(affine)
    x = paddle.to_tensor(np.linspace(-1, 1, 6, dtype="float32"))
    before = counters()["foreign_runs"]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for _ in range(2):
            np.testing.assert_array_equal(jit(x).numpy(), affine(x).numpy())
    assert counters()["foreign_runs"] == before + 2
    assert all(t.translations == 0 for t in translators(jit))  # nothing was hooked


def test_the_first_such_run_of_the_process_warns_once():
    import subprocess
    import sys
    script = ("import warnings, runtime as paddle, sot\n"
              "from sot import _eval_frame\n"
              "f = sot.to_static(lambda x: x + 1)\n"
              "_eval_frame._set_foreign_evaluator_for_testing(True)\n"
              "with warnings.catch_warnings(record=True) as seen:\n"
              "    warnings.simplefilter('always')\n"
              "    outs = [float(f(paddle.ones([1]))) for _ in range(3)]\n"
              "_eval_frame._set_foreign_evaluator_for_testing(False)\n"
              "print(outs, len(seen), seen[0].category.__name__, 'another PEP 523' in str(seen[0].message))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[2.0,", "2.0,", "2.0]", "1", "RuntimeWarning", "True"]


def test_translation_resumes_once_the_other_evaluator_is_gone(foreign_evaluator):
    jit = jit_of(affine)
    x = paddle.to_tensor(np.ones(3, dtype="float32"))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        jit(x)
    _eval_frame._set_foreign_evaluator_for_testing(False)
    np.testing.assert_array_equal(jit(x).numpy(), affine(x).numpy())
    assert sum(t.translations for t in translators(jit)) == 1
