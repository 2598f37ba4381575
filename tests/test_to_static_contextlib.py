"""contextlib's context managers made inside a compiled function are captured, not run for real.

A `@contextlib.contextmanager` function's generator is inlined: entering the `with` runs it to its
`yield`, leaving resumes it to its end, and an exception leaving the block is thrown in at the
`yield` (its `try`/`except`/`finally` run as in eager code; catching it suppresses it).
`contextlib.suppress(...)` is simulated too, and `contextlib.nullcontext()` is made in the translation.
Every test compares the compiled call with the same code run eagerly: result, the manager's own log, flags it sets and
restores, gradients; and counts the graphs (the block is in the one graph, nothing runs eagerly).
A graph break inside the block makes the manager for real (breaks where it is made, entered and
left) and compiles the rest; where the translation cannot follow the manager (one that misbehaves),
the frame runs eagerly with its reason, and the result is still eager's.
"""
import contextlib

import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import (assert_like_eager_with_grads, assert_same_result, assert_user_terms, fresh, jit_of,
                         run_with_grads, translators)

LOG = []


class Flags:
    """A settings object of the user's, which managers switch for the length of a block."""

    training = True


FLAGS = Flags()
MODE = "train"


@pytest.fixture(autouse=True)
def _clean_state():
    """Every test starts with an empty log, the flags as set here and grad on; and leaves them so."""
    LOG.clear()
    yield
    LOG.clear()
    FLAGS.training = True
    globals()["MODE"] = "train"
    paddle.set_grad_enabled(True)


def _x():
    return paddle.to_tensor(np.array([[1.0, -2.0], [3.0, 0.5]], "float32"))


def _captured_like_eager(fn, *args):
    """fn(*args) under sot.explain equals eager's, with the same log and flags after the call; one
    graph, no break, no fallback."""
    want = fn(*args)
    eager_log, eager_flags = list(LOG), (FLAGS.training, MODE)
    LOG.clear()
    FLAGS.training, globals()["MODE"] = True, "train"
    report = sot.explain(fresh(fn), *args)
    assert_same_result(report.result, want)
    assert (LOG, (FLAGS.training, MODE)) == (eager_log, eager_flags)
    assert report.graph_count == 1 and report.breaks == [] and report.fallbacks == [], str(report)
    return report


def _eager_with_reason(fn, make_args, reason):
    """fn runs eagerly under to_static (the result, the log and what it raises are eager's) and its
    fallback's reason says `reason`."""
    jit = jit_of(fn)
    outcomes = []
    for run in (fn, jit):
        LOG.clear()
        try:
            outcome = run(*make_args())
        except Exception as e:  # eager's own exception, compared by type and message
            outcome = (type(e), str(e))
        outcomes.append((outcome, list(LOG)))
    (want, want_log), (got, got_log) = outcomes
    if isinstance(want, paddle.Tensor):
        assert_same_result(got, want)
    else:
        assert got == want
    assert got_log == want_log
    found = [f.reason for t in translators(jit) for f in t.fallbacks]
    assert found and reason in found[0], found
    assert_user_terms(found[0])
    return jit


# ---------------------------------------------------------------- the manager's generator, inlined
@contextlib.contextmanager
def scope(name):
    LOG.append(("enter", name))
    yield name
    LOG.append(("exit", name))


def one_scope(x):
    with scope("block") as n:
        y = x * 2
    return y + len(n)


def same_manager_twice(x):
    with scope("a"):
        y = x * 2
    with scope("b") as n:
        y = y + len(n)
    return y


def nested_scopes(x):
    with scope("outer") as a:
        with scope(a + "/inner") as b:
            y = x * len(b)
    return y - len(a)


def two_in_one_statement(x):
    with scope("first") as a, scope(a * 2) as b:
        y = x + len(b)
    return y


def _layer_scope(x):
    with scope("inside a callee"):
        return x.exp()


def scope_in_a_callee(x):
    return _layer_scope(x) * 2


@pytest.mark.parametrize("fn", [one_scope, same_manager_twice, nested_scopes, two_in_one_statement,
                                scope_in_a_callee])
def test_a_contextmanager_block_is_captured_in_one_graph(fn):
    _captured_like_eager(fn, _x())
    assert LOG  # (the manager's code ran in the compiled call too)


@contextlib.contextmanager
def tripled(x):
    LOG.append("made")
    yield x * 3


def yields_a_tensor(x):
    with tripled(x + 1) as t:
        y = t.sum() * x
    return y


def test_a_manager_yielding_a_tensor_it_computed():
    report = _captured_like_eager(yields_a_tensor, _x())
    assert sum("||" in line for line in report.sir_texts[0].splitlines()) == 4  # x + 1, * 3, sum, * x


class Settings:
    """A user object with a contextmanager method."""

    def __init__(self):
        self.scale = 1.0

    @contextlib.contextmanager
    def scaled(self, factor):
        old = self.scale
        self.scale = factor
        try:
            yield self
        finally:
            self.scale = old


def uses_a_method_manager(x, settings):
    with settings.scaled(4.0) as s:
        y = x * s.scale
    return y * settings.scale


def test_a_contextmanager_method_sets_and_restores_an_attribute_of_its_object():
    settings = Settings()
    want = uses_a_method_manager(_x(), settings)
    jit = jit_of(uses_a_method_manager)
    assert_same_result(jit(_x(), settings), want)
    assert settings.scale == 1.0
    assert jit.sot_translator.fallbacks == [] and jit.sot_translator.breaks == []


# ---------------------------------------------------------------- flags switched for a block
@contextlib.contextmanager
def evaluating():
    old = FLAGS.training
    FLAGS.training = False
    try:
        yield
    finally:
        FLAGS.training = old


@contextlib.contextmanager
def mode(name):
    global MODE
    old, MODE = MODE, name
    try:
        yield old
    finally:
        MODE = old


def reads_the_flag_inside(x):
    with evaluating():
        y = x * 2 if FLAGS.training else x * 3
    return y * (10 if FLAGS.training else 1)


def reads_the_global_inside(x):
    with mode("eval") as before:
        y = x * len(MODE)
    return y + len(before) * len(MODE)


@pytest.mark.parametrize("fn", [reads_the_flag_inside, reads_the_global_inside])
def test_a_flag_set_on_entry_is_seen_inside_and_restored_on_exit(fn):
    _captured_like_eager(fn, _x())
    assert (FLAGS.training, MODE) == (True, "train")


def test_the_flag_the_manager_saves_is_guarded():
    jit = jit_of(reads_the_flag_inside)
    for flag in (True, False, True):
        FLAGS.training = flag
        want = reads_the_flag_inside(_x())
        assert FLAGS.training is flag
        assert_same_result(jit(_x()), want)
        assert FLAGS.training is flag  # restored to what it was, as eagerly
    assert jit.sot_translator.translations == 2 and jit.sot_translator.fallbacks == []


# ---------------------------------------------------------------- exceptions leaving the block
@contextlib.contextmanager
def catching(kind):
    try:
        yield
    except kind:
        LOG.append("caught")
    finally:
        LOG.append("finally")


@contextlib.contextmanager
def noting_and_reraising():
    try:
        yield
    except ValueError as e:
        LOG.append(("saw", str(e)))
        raise


@contextlib.contextmanager
def replacing():
    try:
        yield
    except ValueError:
        raise KeyError("replaced")


@contextlib.contextmanager
def failing_on_exit():
    yield
    raise KeyError("exit failed")


def suppressed_by_the_manager(x):
    y = x * 2
    with catching(ValueError):
        y = y + 1
        raise ValueError("inside")
    return y


def not_the_kind_it_catches(x):
    try:
        with catching(KeyError):
            raise ValueError("inside")
    except ValueError as e:
        return x * len(str(e))


def reraised_by_the_manager(x):
    try:
        with noting_and_reraising():
            raise ValueError("inside")
    except ValueError as e:
        return x + len(e.args[0])


def replaced_by_the_manager(x):
    try:
        with replacing():
            raise ValueError("inside")
    except KeyError as e:
        return x - len(e.args[0])


def raised_by_the_managers_exit(x):
    try:
        with failing_on_exit():
            y = x * 5
    except KeyError:
        y = x * 7
    return y


def through_a_manager_without_try(x):
    try:
        with scope("plain"):
            raise ValueError("inside")
    except ValueError:
        return x * 4


def through_a_flag_restoring_manager(x):
    try:
        with evaluating():
            raise ValueError("inside")
    except ValueError:
        return x * (2 if FLAGS.training else 3)


@pytest.mark.parametrize("fn", [suppressed_by_the_manager, not_the_kind_it_catches, reraised_by_the_manager,
                                replaced_by_the_manager, raised_by_the_managers_exit, through_a_manager_without_try,
                                through_a_flag_restoring_manager])
def test_an_exception_in_the_block_goes_through_the_manager_as_eagerly(fn):
    _captured_like_eager(fn, _x())


def suppressed(x):
    with contextlib.suppress(KeyError, ValueError):
        x = x * 2
        raise ValueError("dropped")
    with contextlib.suppress(KeyError):
        x = x + 1
    return x


def not_suppressed(x):
    try:
        with contextlib.suppress(KeyError):
            raise ValueError("kept")
    except ValueError:
        x = x - 1
    return x


@pytest.mark.parametrize("fn", [suppressed, not_suppressed])
def test_contextlib_suppress(fn):
    _captured_like_eager(fn, _x())


KINDS = (KeyError, (IndexError, ValueError))


def suppress_given_a_tuple(x):
    y = x * 2
    with contextlib.suppress(KINDS):
        raise ValueError("dropped")
    return y + 1


def test_suppress_given_nested_tuples_of_classes():
    _captured_like_eager(suppress_given_a_tuple, _x())


def suppress_given_a_string(x):
    y = x * 2
    with contextlib.suppress("not a class"):
        y = y + 1
    return y


def test_suppress_given_something_else_is_made_for_real_at_a_break():
    jit = jit_of(suppress_given_a_string)
    assert_same_result(jit(_x()), suppress_given_a_string(_x()))
    (brk,) = jit.sot_translator.breaks
    assert brk.code == "SOT-B003" and "contextlib.suppress with other arguments than exception classes" in brk.detail
    assert all(t.fallbacks == [] for t in translators(jit))


def _reraises(x):
    try:
        raise ValueError("plain")
    except ValueError:
        LOG.append("noted")
        raise


def bare_raise_in_a_handler(x):
    try:
        _reraises(x)
    except ValueError as e:
        return x * len(str(e))


def test_a_bare_raise_in_a_handler_raises_the_exception_it_handles():
    _captured_like_eager(bare_raise_in_a_handler, _x())


# ---------------------------------------------------------------- nullcontext, and grad mode
def null_or_no_grad(x, frozen):
    with paddle.no_grad() if frozen else contextlib.nullcontext():
        y = x * x
    with contextlib.nullcontext(3.0) as k:
        return y * k + x


@contextlib.contextmanager
def no_grad_wrapper():
    with paddle.no_grad():
        LOG.append("no grad")
        yield


def frozen_in_a_wrapper(x):
    a = x * 2
    with no_grad_wrapper():
        b = a * x
    return a * b + x


def raises_under_the_wrapper(x):
    a = x * 2
    try:
        with no_grad_wrapper():
            b = a * x
            raise ValueError("inside")
    except ValueError:
        mode = paddle.is_grad_enabled()
    return a * b + x, mode


@pytest.mark.parametrize("fn, args", [(null_or_no_grad, (True,)), (null_or_no_grad, (False,)),
                                      (frozen_in_a_wrapper, ()), (raises_under_the_wrapper, ())])
def test_ops_inside_get_eagers_gradients(fn, args):
    inputs = [paddle.to_tensor(np.array([1.0, 2.0, -3.0], "float32"), stop_gradient=False)]
    want, want_grads, want_mode = run_with_grads(fn, inputs, *args)
    eager_log = list(LOG)
    LOG.clear()
    report = sot.explain(fresh(fn), *inputs, *args)
    got, got_grads, got_mode = run_with_grads(lambda *a: report.result, inputs, *args)
    assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode)
    assert LOG == eager_log
    assert report.graph_count == 1 and report.breaks == [] and report.fallbacks == [], str(report)


# ---------------------------------------------------------------- a manager decorating a function
@scope("decorated")
def _decorated(x):
    return x * 3


def calls_a_decorated_function(x):
    return _decorated(x) + _decorated(x + 1)


def test_a_function_decorated_with_a_contextmanager_manager():
    _captured_like_eager(calls_a_decorated_function, _x())
    assert LOG == [("enter", "decorated"), ("exit", "decorated")] * 2


# ---------------------------------------------------------------- a graph break inside the block
def breaks_inside(x):
    with evaluating():
        y = x * (2 if FLAGS.training else 3)
        LOG.append(float(y.sum()))
        y = y + 1
    return y * (4 if FLAGS.training else 5)


def _breaks_in_its_block(x):
    with scope("breaking") as n:
        y = x * 2
        LOG.append(float(y.sum()))
    return y + len(n)


def calls_a_function_breaking_in_its_block(x):
    return _breaks_in_its_block(x * 3) - 1


@contextlib.contextmanager
def breaking_manager(x):
    LOG.append(float(x.sum()))
    yield
    LOG.append("left")


def manager_breaks(x):
    with breaking_manager(x):
        y = x * 2
    return y


def made_then_entered_after_a_break(x):
    manager = scope("later")
    y = x * 2
    LOG.append(float(y.sum()))
    with manager as n:
        return y + len(n)


def null_context_around_a_break(x):
    with contextlib.nullcontext(2.0) as k:
        y = x * k
        LOG.append(float(y.sum()))
    return y + 1


@pytest.mark.parametrize("fn", [breaks_inside, calls_a_function_breaking_in_its_block, manager_breaks,
                                made_then_entered_after_a_break])
def test_a_break_inside_the_block_makes_and_enters_the_manager_for_real(fn):
    """The simulated generator cannot cross the break: the frame is simulated again with the manager
    made, entered and left for real (breaks there), the rest captured around them."""
    want = fn(_x())
    eager_log = list(LOG)
    LOG.clear()
    jit = jit_of(fn)
    assert_same_result(jit(_x()), want)
    assert LOG == eager_log and FLAGS.training
    assert all(t.fallbacks == [] for t in translators(jit))
    details = [e.detail for t in translators(jit) for e in t.breaks]
    assert any("for real, as a graph break inside its with block" in d for d in details), details
    LOG.clear()
    assert_same_result(jit(_x()), want)  # again, from the caches
    assert LOG == eager_log


def test_a_break_inside_a_nullcontext_block_resumes_inside_it():
    want = null_context_around_a_break(_x())
    eager_log = list(LOG)
    LOG.clear()
    jit = jit_of(null_context_around_a_break)
    assert_same_result(jit(_x()), want)
    assert LOG == eager_log
    assert all(t.fallbacks == [] for t in translators(jit))


def passed_in(x, manager):
    y = x * 2
    with manager as k:
        y = y * k
    return y + 1


def test_a_contextmanager_manager_passed_in_is_entered_and_left_for_real():
    want = passed_in(_x(), tripled(2.0))
    eager_log = list(LOG)
    LOG.clear()
    jit = jit_of(passed_in)
    assert_same_result(jit(_x(), tripled(2.0)), want)
    assert LOG == eager_log
    assert all(t.fallbacks == [] for t in translators(jit))
    details = [e.detail for t in translators(jit) for e in t.breaks]
    assert any("entered for real" in d for d in details) and any("its exit runs for real" in d for d in details)


# ---------------------------------------------------------------- what runs eagerly, and why

@contextlib.contextmanager
def never_yields():
    LOG.append("no yield")
    if False:
        yield


@contextlib.contextmanager
def yields_twice():
    yield 1
    LOG.append("second")
    yield 2


@contextlib.contextmanager
def yields_after_the_exception():
    try:
        yield
    except ValueError:
        LOG.append("again")
        yield


@contextlib.contextmanager
def stops_before_yielding():
    raise StopIteration
    yield


def entered_without_a_yield(x):
    with never_yields():
        return x * 2


def leaves_a_second_yield(x):
    with yields_twice() as k:
        return x * k


def leaves_by_an_exception_to_a_second_yield(x):
    with yields_after_the_exception():
        raise ValueError("inside")


def enters_one_manager_twice(x):
    manager = scope("twice")
    with manager:
        x = x * 2
    with manager:
        return x + 1


def stop_iteration_in_the_manager(x):
    with stops_before_yielding():
        return x * 2


HELD = []


def keeps_a_manager_it_made(x):
    HELD.append(scope("kept"))  # a simulated manager cannot be made again after the graph
    return x * 2


@scope("decorated, breaking")
def _decorated_breaking(x):
    y = x * 2
    LOG.append(float(y.sum()))
    return y + 1


def calls_a_decorated_function_that_breaks(x):
    # contextlib's wrapper has closure cells, so no resume function can go on inside it, and the manager
    # wrote into LOG before the break, so the call cannot run for real either
    return _decorated_breaking(x) * 2


@pytest.mark.parametrize("fn, reason", [
    (entered_without_a_yield, "returns without yielding"),
    (leaves_a_second_yield, "yields again after its with block"),
    (leaves_by_an_exception_to_a_second_yield, "yields again after its with block"),
    (enters_one_manager_twice, "a second time: contextlib raises AttributeError"),
    (stop_iteration_in_the_manager, "StopIteration leaves a generator"),
    (calls_a_decorated_function_that_breaks, "reads a tensor's value into Python"),
    (keeps_a_manager_it_made, "the context manager test_to_static_contextlib.scope(...) made in the function"),
])
def test_what_the_translation_cannot_follow_runs_the_frame_eagerly_with_its_reason(fn, reason):
    _eager_with_reason(fn, lambda: (_x(),), reason)
