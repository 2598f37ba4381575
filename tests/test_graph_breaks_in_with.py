"""Graph breaks inside `with` blocks: the break resumes inside the block.

The break code enters a grad-mode context of the block's mode for real around the breaking
instruction and leaves it; the resume function enters it again in its prologue, so its translation
simulates the block from there on. A user context manager read from outside the frame is passed
on as its bound `__exit__`. What the breaking instruction raises reaches the block's `__exit__` as
in eager code. Every test compares against the same function run eagerly: values, stop_gradient,
gradients, the grad mode after the call, printed text and the context manager's own log.
"""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import assert_like_eager_with_grads, assert_same_result, jit_of, run_with_grads, translators


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    assert paddle.is_grad_enabled()
    yield
    paddle.set_grad_enabled(True)


def _x(sign=1.0):
    return paddle.to_tensor(np.array([1.0, -2.0, 4.0], "float32") * sign, stop_gradient=False)


def _assert_like_eager(fn, inputs, *args, breaks, graphs, capsys=None):
    """JIT and eager agree (values, stop_gradient, gradients, grad mode after, stdout) on two calls;
    the second (served from the caches: it translates nothing) has `breaks` graph breaks and runs
    `graphs` compiled subgraphs; no fallback anywhere."""
    jit = jit_of(fn)
    for call in range(2):
        want, want_grads, want_mode = run_with_grads(fn, inputs, *args)
        want_out = capsys.readouterr().out if capsys else None
        report = sot.explain(jit, *inputs, *args)
        got = report.result
        if capsys:
            assert capsys.readouterr().out == want_out
        got, got_grads, got_mode = run_with_grads(lambda *a: got, inputs, *args)
        assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode)
        if call == 1:
            assert [b.code for b in report.breaks] == breaks and report.graph_count == graphs
        assert all(t.fallbacks == [] for t in translators(jit))
        if call == 0:
            made = sum(t.translations for t in translators(jit))
    assert sum(t.translations for t in translators(jit)) == made
    return jit


def branch_under_no_grad(x):
    y = x * 2
    with paddle.no_grad():
        z = y + 1
        if z.sum() > 0:
            z = z * 3
        w = z - 1
    return w + y * x


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_branch_inside_no_grad_resumes_in_the_block_with_eager_gradients(sign):
    _assert_like_eager(branch_under_no_grad, [_x(sign)], breaks=["SOT-B001"], graphs=2)


def numpy_inside_nested_modes(x):
    with paddle.no_grad():
        a = x * 2
        with paddle.enable_grad():
            b = a * x
            x.numpy()  # a break two blocks deep
            c = b * 2
        d = c + a
    return d * x


def numpy_under_set_grad_enabled(x, flag):
    with paddle.set_grad_enabled(flag):
        a = x * 2
        x.numpy()
        b = a * x
    return b + x


@pytest.mark.parametrize("fn, args", [(numpy_inside_nested_modes, ()), (numpy_under_set_grad_enabled, (False,)),
                                      (numpy_under_set_grad_enabled, (True,))])
def test_a_break_inside_nested_and_set_grad_enabled_blocks_keeps_each_blocks_mode(fn, args):
    _assert_like_eager(fn, [_x()], *args, breaks=["SOT-B002"], graphs=2)


def _eager_double(x):
    return x * 2


def skipped_call_under_no_grad(x):
    y = x * 3
    with paddle.no_grad():
        z = _eager_double(y)  # runs for real at the break: its output must not require grad, as in eager
        w = z + 1
    return w * y, z


def test_the_breaking_call_runs_in_the_blocks_grad_mode():
    with sot.skip_function(_eager_double):
        jit = _assert_like_eager(skipped_call_under_no_grad, [_x()], breaks=["SOT-B004"], graphs=2)
    assert jit.sot_translator.breaks[0].where.endswith(f":{skipped_call_under_no_grad.__code__.co_firstlineno + 3}")


def _helper_printing_under_no_grad(x):
    with paddle.no_grad():
        m = x.mean()
        print("helper", m.numpy())
        n = m * 2
    return n * x


def calls_a_helper_with_a_break_in_its_block(x):
    y = x * 3
    return _helper_printing_under_no_grad(y) + y


def test_a_break_inside_a_callees_block_resumes_inside_the_callee(capsys):
    jit = _assert_like_eager(calls_a_helper_with_a_break_in_its_block, [_x()], breaks=["SOT-B002", "SOT-B003"],
                             graphs=3, capsys=capsys)
    line = _helper_printing_under_no_grad.__code__.co_firstlineno + 3
    assert all(e.where.endswith(f":{line}") for e in jit.sot_translator.breaks)


def _breaking_helper(t):
    u = t * 2
    if u.sum() > 0:
        u = u + 1
    return u * t


def calls_a_breaking_helper_under_no_grad(x):
    y = x * 3
    with paddle.no_grad():
        z = _breaking_helper(y)  # the call is in the block: it breaks here, the helper its own frame
        w = z * 2
    return w + y * x, z


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_callee_breaking_inside_the_callers_block_runs_as_its_own_frame_in_the_blocks_mode(sign):
    jit = _assert_like_eager(calls_a_breaking_helper_under_no_grad, [_x(sign)], breaks=["SOT-B001", "SOT-B001"],
                             graphs=4)
    assert "inside a try or with block" in jit.sot_translator.breaks[0].detail


class Log:
    """A context manager of Python code that logs its calls (and what its __exit__ was given)."""

    suppress = False

    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, traceback):
        self.log.append(("exit", None if kind is None else kind.__name__))
        return self.suppress


class Quiet(Log):
    suppress = True


def branch_under_a_users_manager(x, manager):
    with manager as m:
        m.log.append("in")
        if x.sum() > 0:
            return x + 1
        y = x * 5
    return y


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_break_inside_a_users_manager_passes_its_exit_on(sign):
    x = _x(sign)
    jit = jit_of(branch_under_a_users_manager)
    for _ in range(2):
        want_manager, got_manager = Log(), Log()
        want = branch_under_a_users_manager(x, want_manager)
        report = sot.explain(jit, x, got_manager)
        assert_same_result(report.result, want)
        assert got_manager.log == want_manager.log == ["enter", "in", ("exit", None)]
        assert [b.code for b in report.breaks] == ["SOT-B001"] and report.graph_count == 2
        assert all(t.fallbacks == [] for t in translators(jit))


def raises_under_no_grad(x):
    with paddle.no_grad():
        y = x * 2
        if y:  # three values: bool() raises
            y = y + 1
    return y


def raises_under_a_manager(x, manager):
    y = x * 3
    with manager:
        if y:
            y = y + 1
    return y - 1


@pytest.mark.parametrize("kind", [Log, Quiet])
def test_what_the_breaking_instruction_raises_reaches_the_managers_exit(kind):
    x = _x()
    want_manager, got_manager = kind(), kind()
    if kind is Quiet:
        want = raises_under_a_manager(x, want_manager)
        assert_same_result(jit_of(raises_under_a_manager)(x, got_manager), want)
    else:
        with pytest.raises(ValueError) as want:
            raises_under_a_manager(x, want_manager)
        with pytest.raises(ValueError) as got:
            jit_of(raises_under_a_manager)(x, got_manager)
        assert str(got.value) == str(want.value)
    assert got_manager.log == want_manager.log == ["enter", ("exit", "ValueError")]


def manager_made_in_the_frame(x):
    with Log() as m:  # made in the simulation: the break's code makes it with what __enter__ left in it
        if x.sum() > 0:
            y = x + 1
        else:
            y = x * 2
    return y, m.log


def test_a_manager_made_in_the_frame_is_resumed_in_its_block():
    for sign in (1.0, -1.0):
        _assert_like_eager(manager_made_in_the_frame, [_x(sign)], breaks=["SOT-B001"], graphs=2)


def hot_while_under_no_grad(x):
    y = x * 2
    with paddle.no_grad():
        while x.sum() > 0:  # a while on a tensor: the loop runs for real, its body a compiled function
            x = x - 1
        z = x * 3
    return z + y * x


def hot_for_in_try(x):
    y = x * 2
    try:
        for i in range(40):  # more than SOT_MAX_LOOP_BREAKS iterations: runs for real
            if x.sum() > 0:
                x = x - 1
    except ValueError:
        x = x + 100
    return x + y


@pytest.mark.parametrize("fn", [hot_while_under_no_grad, hot_for_in_try])
def test_a_hot_loop_inside_a_with_or_try_body_runs_for_real(fn):
    # the while: the test before the loop, the loop (its body's test breaks), the rest after it;
    # the for: the first test, the loop, the body function's break, its resumes and the rest
    breaks, graphs = (3, 3) if fn is hot_while_under_no_grad else (2, 4)
    jit = _assert_like_eager(fn, [_x()], breaks=["SOT-B001"] * breaks, graphs=graphs)
    assert any("the loop runs for real" in b.detail for t in translators(jit) for b in t.breaks)


def raises_in_a_hot_loop_under_no_grad(x):
    with paddle.no_grad():
        for i in range(40):
            if x.sum() > 0:
                x = x - 1
            if i == 35 and x:  # three values: bool() raises in the body function
                x = x + 1
    return x


@pytest.mark.parametrize("fn", [raises_under_no_grad, raises_in_a_hot_loop_under_no_grad])
def test_what_is_raised_at_a_break_or_in_a_hot_loops_body_leaves_the_no_grad_block_as_in_eager(fn):
    x = _x()
    with pytest.raises(ValueError) as want:
        fn(x)
    jit = jit_of(fn)
    for _ in range(2):
        with pytest.raises(ValueError) as got:
            jit(x)
        assert str(got.value) == str(want.value)
        assert paddle.is_grad_enabled()  # the block's __exit__ ran
    assert [b.code for b in jit.sot_translator.breaks] == ["SOT-B001"]
    # the block's handler itself runs eagerly (its resume function), recorded
    assert [f.code for t in translators(jit) for f in t.fallbacks] == ["SOT-U001"]


def returns_from_a_hot_loop_under_no_grad(x):
    with paddle.no_grad():
        for i in range(40):
            if x.sum() < 0:
                return x * 2  # leaves the block through its __exit__
            x = x - 1
    return x


def test_a_return_from_a_hot_loop_inside_a_with_block_runs_the_rest_eagerly():
    x = _x()
    jit = jit_of(returns_from_a_hot_loop_under_no_grad)
    got, want = jit(x), returns_from_a_hot_loop_under_no_grad(x)
    assert_same_result(got, want)
    assert got.stop_gradient and want.stop_gradient and paddle.is_grad_enabled()
    assert [f.code for t in translators(jit) for f in t.fallbacks] == ["SOT-C002"]
