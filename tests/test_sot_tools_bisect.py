"""sot.tools.bisect: a fault injected into the compiled path only (lowering adds 1 to tanh's
result) is found at its statement; a correct JIT gives no culprit."""
import numpy as np
import pytest

import runtime as paddle
from sot.ir import ApiStatement, replay
from sot.tools.bisect import bisect


def chain(x, y):
    a = x * 2
    b = a + y
    c = paddle.tanh(b)
    d = c * y
    e = d.sum(axis=0)
    return e - 1


def inputs():
    return (paddle.to_tensor(np.random.rand(3, 4).astype("float32")),
            paddle.to_tensor(np.random.rand(3, 4).astype("float32")))


@pytest.fixture
def faulty_tanh(monkeypatch):
    """Programs compute tanh(x) + 1; eager code is untouched."""
    lower_api = replay._RUN[ApiStatement]

    def faulty(st, args, kwargs, binder):
        out = lower_api(st, args, kwargs, binder)
        return out + 1 if st.fn is paddle.tanh else out
    monkeypatch.setitem(replay._RUN, ApiStatement, faulty)


def test_a_correct_jit_has_no_culprit():
    assert bisect(chain, *inputs()) is None


def test_the_faulty_statement_is_named(faulty_tanh):
    culprit = bisect(chain, *inputs())
    assert (culprit.start, culprit.stop, culprit.max_abs_diff) == (2, 3, pytest.approx(1.0))
    (text,) = culprit.statements
    assert "runtime.tanh" in text and culprit.sir == "SIR_chain"
    assert culprit.where == f"{__file__}:{chain.__code__.co_firstlineno}"
    assert "[2] api" in str(culprit)


def test_a_tolerance_accepts_small_differences_and_a_range_can_be_the_answer(faulty_tanh):
    x, y = inputs()
    assert bisect(chain, x, y, atol=4.0) is None  # |diff| <= 3: three rows of at most 1 summed
    culprit = bisect(chain, x, y, atol=2.0)  # each half alone stays within 2; together they do not
    assert (culprit.start, culprit.stop, len(culprit.statements)) == (0, 6, 6) and culprit.max_abs_diff > 2.0


def test_bisect_wants_a_function():
    with pytest.raises(TypeError, match="bisect: expected a Python function"):
        bisect(abs, paddle.to_tensor([1.0]))


CASE_SCRIPT = '''
import numpy as np
import runtime as paddle

def chain(x):
    return paddle.tanh(x * 2) - 1

def case():
    return chain(paddle.to_tensor(np.linspace(-1, 1, 6, dtype="float32")))

if __name__ == "__main__":
    raise SystemExit("the script's main block must not run under sot bisect")
'''


def test_the_command_names_the_culprit_or_says_none_differs(tmp_path, capsys, faulty_tanh):
    from sot.tools.cli import main
    script = tmp_path / "case.py"
    script.write_text(CASE_SCRIPT)
    assert main(["bisect", f"{script}:case"]) == 1
    out = capsys.readouterr().out
    assert "runtime.tanh" in out and str(script) in out
    assert main(["bisect", f"{script}:case", "--atol", "2"]) == 0
    assert "matches eager" in capsys.readouterr().out
    assert main(["bisect", f"{script}:missing"]) == 2
    assert "defines no function 'missing'" in capsys.readouterr().err
