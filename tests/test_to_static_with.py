"""`with` blocks and `try`/`except`/`finally` inside translated frames.

Grad-mode blocks (`paddle.no_grad()`, `enable_grad()`, `set_grad_enabled(flag)`) are captured into
the SIR: every test compares values, stop_gradient flags and gradients (backward through the
compiled graph) with eager runs of the same function, and the grad mode after the call with
eager's. User context managers with Python `__enter__`/`__exit__` are inlined; anything else runs
the frame eagerly with its reason recorded. The normal path of `try`/`except`/`finally` is captured
in every bytecode shape 3.11, 3.12 and 3.13 give it; an exception the frame would raise runs it
eagerly, so eager's exception (and eager's `except`) is what the caller sees.
"""
import contextlib
import threading

import numpy as np
import pytest

import runtime as paddle
import sot
from runtime import nn
from sot import config
from sot.ir import Meta, SIRBuilder
from sot_helpers import assert_like_eager_with_grads, assert_same_result, events, jit_of, run_with_grads, translators


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """Every test starts with grad on and leaves it on, whatever the code under test did to it."""
    assert paddle.is_grad_enabled()
    yield
    paddle.set_grad_enabled(True)


def _x(values=(1.0, 2.0, 4.0), grad=True):
    return paddle.to_tensor(np.array(values, "float32"), stop_gradient=not grad)


def _assert_like_eager(fn, *args, inputs=None, translations=1, **options):
    """JIT and eager agree on values, stop_gradient flags, gradients and the grad mode after the call;
    the frame was captured whole (no fallback, no break) in `translations` translations."""
    inputs = inputs if inputs is not None else [_x()]
    want, want_grads, want_mode = run_with_grads(fn, inputs, *args)
    jit = jit_of(fn, **options)
    got, got_grads, got_mode = run_with_grads(jit, inputs, *args)
    assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode)
    assert events(jit) == [] and jit.sot_translator.translations == translations
    return jit


# ---------------------------------------------------------------- grad-mode blocks
def centred(x):
    with paddle.no_grad():
        mean = x.mean()
    return x * 2 - mean


def test_a_no_grad_block_is_captured_and_takes_no_part_in_backward():
    jit = _assert_like_eager(centred)
    (sir,) = [e.payload for e in jit.sot_translator.cache.entries]
    assert "= var_0.mean()  # float32[]  [no_grad]" in str(sir)  # recorded, and marked


def made_under_no_grad(x):
    with paddle.no_grad():
        y = x * 3
        z = y + x
    w = y * 2  # computed from no_grad values only: no gradient either
    return y, z, w, x * y


def test_tensors_made_under_no_grad_do_not_require_grad_as_in_eager():
    x = _x()
    want = made_under_no_grad(x)
    assert [t.stop_gradient for t in want] == [True, True, True, False]  # the eager facts the JIT must match
    _assert_like_eager(made_under_no_grad, inputs=[x])


class StatisticNet(nn.Layer):
    """A forward that computes a statistic under no_grad from one layer and trains another."""

    def __init__(self):
        super().__init__()
        self.probe = nn.Linear(3, 3)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        with paddle.no_grad():
            scale = self.probe(x).abs().mean()
        return self.fc(x) * scale


def test_a_layer_called_under_no_grad_gets_no_gradient_and_the_others_get_eager_gradients():
    paddle.seed(0)
    net = StatisticNet()
    x = _x([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], grad=False)
    want = net(x)
    want.sum().backward()
    want_grads = {n: None if p.grad is None else p.grad.numpy().copy() for n, p in net.named_parameters()}
    net.clear_gradients()
    jit = sot.to_static(net)
    got = jit(x)
    got.sum().backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for name, p in net.named_parameters():
        if want_grads[name] is None:
            assert p.grad is None, name  # the probe: only used under no_grad
        else:
            np.testing.assert_allclose(p.grad.numpy(), want_grads[name], rtol=1e-5)
    assert want_grads["probe.weight"] is None and want_grads["fc.weight"] is not None
    assert [e for t in translators(jit.forward) for e in t.fallbacks] == []


def nested_modes(x):
    with paddle.no_grad():
        a = x * 2
        with paddle.enable_grad():
            b = x * 3
        c = b * a
    return a + b, c, b


def test_enable_grad_inside_no_grad_records_gradients_again():
    _assert_like_eager(nested_modes)


def with_flag(x, on):
    with paddle.set_grad_enabled(on):
        y = x * 2
    return y + x, y


@pytest.mark.parametrize("on", [False, True])
def test_set_grad_enabled_as_a_context_manager(on):
    _assert_like_eager(with_flag, on)


def test_set_grad_enabled_guards_its_flag():
    jit = jit_of(with_flag)
    x = _x()
    for on in (False, True, False):
        got, want = jit(x, on), with_flag(x, on)
        assert [t.stop_gradient for t in got] == [t.stop_gradient for t in want]
    assert jit.sot_translator.translations == 2 and events(jit) == []


def returns_inside(x):
    with paddle.no_grad():
        return x.mean() + 1


def test_a_return_inside_a_no_grad_block_leaves_grad_on_as_eager():
    _assert_like_eager(returns_inside)
    assert paddle.is_grad_enabled()


def two_blocks(x):
    with paddle.no_grad():
        a = x + 1
    b = x * a
    with paddle.no_grad():
        c = b.exp()
    return b - c


def in_a_loop(x):
    total = x
    for i in range(3):
        with paddle.no_grad():
            total = total + x * i
        total = total * x
    return total


def two_managers_in_one_statement(x):
    with paddle.no_grad(), paddle.enable_grad():
        a = x * 2
    with paddle.enable_grad(), paddle.no_grad():
        b = x * 3
    return a + b, b


@pytest.mark.parametrize("fn", [two_blocks, in_a_loop, two_managers_in_one_statement])
def test_several_grad_mode_blocks_in_one_frame(fn):
    _assert_like_eager(fn)


@paddle.no_grad()
def _statistic(x):
    return x.max() - x.min()


def calls_a_no_grad_function(x):
    return x * _statistic(x)


def test_a_function_decorated_with_no_grad_is_inlined_with_its_grad_mode():
    _assert_like_eager(calls_a_no_grad_function)


@paddle.no_grad
def _bare_decorated(x):
    return x * 3 + 1


class InferenceNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    @paddle.no_grad()
    def forward(self, x):
        return self.fc(x).abs()


def test_a_translated_function_or_forward_decorated_with_no_grad_is_captured_whole():
    x = _x()
    jit = sot.to_static(_bare_decorated)
    got, want = jit(x), _bare_decorated(x)
    assert_same_result(got, want)
    assert got.stop_gradient and want.stop_gradient
    assert events(jit) == [] and jit.sot_translator.translations == 1
    paddle.seed(0)
    net = InferenceNet()
    jit_net = sot.to_static(InferenceNet())
    jit_net.set_state_dict(net.state_dict())
    batch = _x([[1.0, -2.0, 0.5]], grad=False)
    got, want = jit_net(batch), net(batch)
    assert_same_result(got, want)
    assert got.stop_gradient and want.stop_gradient
    assert [e for t in translators(jit_net.forward) for e in t.fallbacks] == []
    assert paddle.is_grad_enabled()


OUTSIDE = paddle.no_grad()


def enters_an_outside_context(x):
    with OUTSIDE:
        m = x.mean()
    return x * m


def enters_it_twice(x):
    with OUTSIDE:
        m = x.mean()
        with OUTSIDE:  # the object saves the mode of its last entry: leaving the outer block leaves grad off
            n = x.sum()
    return x * m + n


def test_a_no_grad_object_from_outside_the_frame():
    _assert_like_eager(enters_an_outside_context)


def test_an_object_entered_inside_its_own_block_runs_the_frame_eagerly_as_it_changes_the_grad_mode():
    x = _x()
    want = enters_it_twice(x)
    assert not paddle.is_grad_enabled()  # the eager fact: grad left off
    paddle.set_grad_enabled(True)
    jit = jit_of(enters_it_twice)
    assert_same_result(jit(x), want)
    assert not paddle.is_grad_enabled()
    assert [code for code, _, _ in events(jit)] == ["SOT-S001"]


def test_one_translation_serves_calls_with_grad_on_and_off():
    jit = jit_of(made_under_no_grad)
    x = _x()
    for outer in (True, False, True):
        with paddle.set_grad_enabled(outer):
            got, want = jit(x), made_under_no_grad(x)
        assert_same_result(got, want)
        assert [t.stop_gradient for t in got] == [t.stop_gradient for t in want]
    assert jit.sot_translator.translations == 1  # nothing in it depends on the caller's mode: no guard on it
    assert not any("is_grad_enabled" in str(g) for e in jit.sot_translator.cache.entries for g in e.guards)


def asks_the_mode(x):
    with paddle.no_grad():
        inside = paddle.is_grad_enabled()
    return x * 2, inside, paddle.is_grad_enabled()


def reads_stop_gradient(x):
    y = x * 2
    return y + 1 if y.stop_gradient else y - 1


@pytest.mark.parametrize("fn", [asks_the_mode, reads_stop_gradient])
def test_what_depends_on_the_callers_grad_mode_is_guarded(fn):
    jit = jit_of(fn)
    x = _x()
    for outer in (True, False, True, False):
        with paddle.set_grad_enabled(outer):
            assert_same_result(jit(x), fn(x))
    assert jit.sot_translator.translations == 2 and events(jit) == []


def test_enable_grad_under_the_callers_no_grad_runs_eagerly():
    jit = jit_of(nested_modes)
    x = _x()
    with paddle.no_grad():
        got, want = jit(x), nested_modes(x)
    assert_same_result(got, want)
    assert [t.stop_gradient for t in got] == [t.stop_gradient for t in want] == [True, True, False]
    assert [code for code, _, _ in events(jit)] == ["SOT-G001"]
    got, want = jit(x), nested_modes(x)  # with grad on: translated and captured
    assert_same_result(got, want)
    assert jit.sot_translator.translations == 1


def switches_for_the_rest(x):
    y = x * 2
    paddle.set_grad_enabled(False)
    z = y * 3
    paddle.set_grad_enabled(True)
    return z


def test_set_grad_enabled_outside_a_with_statement_breaks_at_the_call():
    x = _x()
    want = switches_for_the_rest(x)
    jit = jit_of(switches_for_the_rest)
    got = jit(x)
    assert_same_result(got, want)
    assert got.stop_gradient is want.stop_gradient is True
    assert paddle.is_grad_enabled()
    assert [code for code, _, _ in events(jit)] == ["SOT-S001", "SOT-S001"]


def test_a_no_grad_block_in_a_graph_too_small_to_compile_runs_its_ops_under_no_grad():
    config.set_min_graph_size(1000)
    try:
        jit = jit_of(centred)
        x = _x()
        want, want_grads, _ = run_with_grads(centred, [x])
        got, got_grads, _ = run_with_grads(jit, [x])
        assert_same_result(got, want)
        np.testing.assert_allclose(got_grads[0], want_grads[0])
        assert [e.code for e in jit.sot_translator.small_graphs] == ["SOT-C001"]
    finally:
        config.set_min_graph_size(None)


def no_grad_then_print(x):
    with paddle.no_grad():
        m = x.mean()
    print("mean", m.numpy())
    return x * m + x


def print_then_no_grad(x):
    print("sum", x.sum().numpy())
    with paddle.no_grad():
        m = x.mean()
    return x * m + x


@pytest.mark.parametrize("fn", [no_grad_then_print, print_then_no_grad])
def test_a_no_grad_block_before_or_after_a_graph_break_is_captured_with_eager_gradients(fn, capsys):
    x = _x()
    want, want_grads, _ = run_with_grads(fn, [x])
    want_out = capsys.readouterr().out
    jit = jit_of(fn)
    got, got_grads, mode = run_with_grads(jit, [x])
    assert capsys.readouterr().out == want_out
    assert_same_result(got, want)
    np.testing.assert_allclose(got_grads[0], want_grads[0], rtol=1e-6)
    assert mode
    assert [code for code, _, _ in events(jit)] == ["SOT-B002", "SOT-B003"]  # .numpy() and print break; no fallback
    assert all(t.fallbacks == [] for t in translators(jit))


def prints_inside_no_grad(x):
    with paddle.no_grad():
        print("inside", x.sum().numpy())
        m = x.mean()
    return x * m


def _helper_printing_under_no_grad(x):
    with paddle.no_grad():
        print("helper", x.sum().numpy())  # a value read as NumPy: a break inside the block
        m = x.mean()
    return m


def calls_a_helper_that_breaks_in_its_no_grad_block(x):
    y = x * 2
    z = _helper_printing_under_no_grad(y) + y
    return z * y


@pytest.mark.parametrize("fn", [prints_inside_no_grad, calls_a_helper_that_breaks_in_its_no_grad_block])
def test_a_break_inside_a_no_grad_block_gives_eagers_output_and_gradients(fn, capsys):
    # the break resumes inside the block (tests/test_graph_breaks_in_with.py has the details)
    x = _x()
    want = run_with_grads(fn, [x])
    want_out = capsys.readouterr().out
    jit = jit_of(fn)
    got = run_with_grads(jit, [x])
    assert capsys.readouterr().out == want_out
    assert_like_eager_with_grads(got[0], want[0], got[1], want[1], got[2], want[2])
    assert jit.sot_translator.breaks != [] and all(t.fallbacks == [] for t in translators(jit))


def raises_under_no_grad(x):
    with paddle.no_grad():
        m = x.mean()
        raise ValueError(f"rejected {m.shape}")


def test_an_exception_raised_inside_a_no_grad_block_restores_the_mode_as_in_eager():
    x = _x()
    with pytest.raises(ValueError) as want:
        raises_under_no_grad(x)
    jit = jit_of(raises_under_no_grad)
    with pytest.raises(ValueError) as got:
        jit(x)
    assert str(got.value) == str(want.value) == "rejected []"
    assert paddle.is_grad_enabled()
    assert [code for code, _, _ in events(jit)] == ["SOT-R001"]


def test_the_builder_stamps_statements_with_its_grad_mode_and_a_rollback_restores_it():
    builder = SIRBuilder("grad_modes")
    x = builder.add_input(Meta.make([2], "float32", stop_gradient=False))
    y = builder.call_method("__mul__", x, (2.0,))
    mark = builder.mark()
    builder.grad_mode = False
    z = builder.call_method("__add__", y, (1.0,))
    assert (y.meta.stop_gradient, z.meta.stop_gradient) == (False, True)
    assert [st.grad for st in builder.build().statements] == [None, False]
    builder.rollback(mark)  # a break before that call: it runs for real, the mode as it was
    assert builder.grad_mode is None and [st.grad for st in builder.build().statements] == [None]


# ---------------------------------------------------------------- user context managers
class Scaled:
    """A context manager written in Python: counts its entries and exits, gives its factor."""

    def __init__(self, factor):
        self.factor = factor
        self.entered = 0
        self.exited = 0

    def __enter__(self):
        self.entered += 1
        return self.factor

    def __exit__(self, kind, value, traceback):
        self.exited += 1
        return False


SCALED = Scaled(3.0)


def with_a_user_context(x):
    with SCALED as k:
        y = x * k
    return y + SCALED.entered


def test_a_python_context_manager_is_inlined_and_its_writes_replayed():
    x = _x()
    before = (SCALED.entered, SCALED.exited)
    want = with_a_user_context(x)
    eager_counts = (SCALED.entered, SCALED.exited)
    assert eager_counts == (before[0] + 1, before[1] + 1)
    jit = jit_of(with_a_user_context)
    got = jit(x)
    assert (SCALED.entered, SCALED.exited) == (eager_counts[0] + 1, eager_counts[1] + 1)
    np.testing.assert_allclose(got.numpy(), (want + 1).numpy())  # one more entry counted, as eager's next call
    assert events(jit) == [] and jit.sot_translator.translations == 1


def with_an_argument_context(x, ctx):
    with ctx as k:
        return x * k


def test_a_context_manager_passed_in():
    ctx = Scaled(2.0)
    want = with_an_argument_context(_x(), ctx)
    jit = jit_of(with_an_argument_context)
    assert_same_result(jit(_x(), ctx), want)
    assert (ctx.entered, ctx.exited) == (2, 2)
    assert events(jit) == []


LOCK = threading.Lock()


def with_a_lock(x):
    with LOCK:
        y = x * 2
    return y


def test_a_context_manager_written_in_c_runs_the_frame_eagerly_with_its_reason():
    x = _x()
    jit = jit_of(with_a_lock)
    assert_same_result(jit(x), with_a_lock(x))
    ((code, reason, _),) = events(jit)
    assert code == "SOT-B003" and "__enter__" in reason
    assert not LOCK.locked()


def with_nullcontext(x):
    with contextlib.nullcontext(5.0) as k:
        y = x * k
    return y


def test_a_context_manager_the_frame_makes_is_captured_with_it():
    x = _x()
    jit = jit_of(with_nullcontext)
    assert_same_result(jit(x), with_nullcontext(x))
    assert events(jit) == []  # the object is made in the translation, its __enter__/__exit__ inlined
    assert all(t.fallbacks == [] for t in translators(jit))


# ---------------------------------------------------------------- try / except / finally
def try_finally(x):
    try:
        y = x + 1
    finally:
        y = y * 2
    return y


def return_inside_try(x):
    try:
        return x + 1
    finally:
        x = x * 3


def except_with_a_name(x):
    try:
        y = x * 2
    except ValueError as e:
        y = x - len(str(e))
    return y


def try_except_else_finally(x):
    try:
        try:
            y = x * 2
        finally:
            y = y + 1
    except (KeyError, TypeError):
        y = x
    else:
        y = y - 3
    finally:
        y = y / 2
    return y


def with_inside_try(x):
    try:
        with paddle.no_grad():
            m = x.mean()
    finally:
        z = x * 2
    return z - m


def try_in_a_loop(x):
    for i in range(3):
        try:
            if i == 1:
                continue
            x = x + i
        finally:
            x = x * 2
    return x


def _helper_with_finally(x):
    try:
        return x.exp()
    finally:
        pass


def try_in_a_callee(x):
    return _helper_with_finally(x) + 1


def prints_inside_try(x):
    try:
        y = x * 2
        print("inside", y.sum().numpy())
    finally:
        y = y + 1
    return y


def test_a_print_inside_a_try_block_gives_eagers_output_and_result(capsys):
    x = _x()
    want = prints_inside_try(x)
    want_out = capsys.readouterr().out
    jit = jit_of(prints_inside_try)
    got = jit(x)
    assert capsys.readouterr().out == want_out
    assert_same_result(got, want)


@pytest.mark.parametrize("fn", [try_finally, return_inside_try, except_with_a_name, try_except_else_finally,
                                with_inside_try, try_in_a_loop, try_in_a_callee])
def test_the_normal_path_of_try_is_captured(fn):
    _assert_like_eager(fn)


def catches_a_missing_key(x, table):
    try:
        scale = table["scale"]
    except KeyError as e:
        scale = len(e.args)
    return x * scale


def test_a_missing_key_caught_in_the_frame_is_captured():
    x = _x()
    jit = jit_of(catches_a_missing_key)
    assert_same_result(jit(x, {}), catches_a_missing_key(x, {}))  # the KeyError's handler is simulated
    assert_same_result(jit(x, {"scale": 3}), catches_a_missing_key(x, {"scale": 3}))  # the keys are guarded
    assert events(jit) == [] and jit.sot_translator.translations == 2


def raises_through_finally(x, log):
    try:
        y = x * 2
        raise ValueError(f"bad value {y.shape}")
    finally:
        log.append("finally")


def test_an_exception_the_frame_raises_passes_through_finally_as_in_eager():
    x = _x()
    want_log, got_log = [], []
    with pytest.raises(ValueError) as want:
        raises_through_finally(x, want_log)
    jit = jit_of(raises_through_finally)
    with pytest.raises(ValueError) as got:
        jit(x, got_log)
    assert str(got.value) == str(want.value) == "bad value [3]"
    assert got_log == want_log == ["finally"]
    assert [code for code, _, _ in events(jit)] == ["SOT-R001"]


def meta_error_caught(x):
    try:
        y = x.reshape([7])
    except ValueError:
        y = x
    return y * 2


def test_a_shape_error_caught_by_the_frame_gives_eagers_result():
    x = _x()
    jit = jit_of(meta_error_caught)
    assert_same_result(jit(x), meta_error_caught(x))
    assert [code for code, _, _ in events(jit)] == ["SOT-E001"]


# ---------------------------------------------------------------- exceptions raised by captured code at run time
def integer_power(a, b):
    c = a * 2
    return c ** b + 1  # integers to a negative power: only the kernel sees it


def _failing_inputs():
    return paddle.to_tensor(np.array([2, 3], "int64")), paddle.to_tensor(np.array([1, -1], "int64"))


def _user_lines(excinfo, fn):
    """The lines of `fn` (or of its resume functions, which keep its name) among a raised exception's traceback entries."""
    name = fn.__code__.co_name
    return [entry.lineno + 1 for entry in excinfo.traceback if entry.frame.code.raw.co_name == name]


def test_a_kernel_failing_at_run_time_raises_eagers_exception_through_the_users_line():
    a, b = _failing_inputs()
    with pytest.raises(ValueError) as want:
        integer_power(a, b)
    line = integer_power.__code__.co_firstlineno + 2
    assert line in _user_lines(want, integer_power)
    jit = jit_of(integer_power)
    ok = paddle.to_tensor(np.array([1, 2], "int64"))
    assert_same_result(jit(a, ok), integer_power(a, ok))  # translated and compiled on good values
    for _ in range(2):  # the cache hit, twice
        with pytest.raises(ValueError) as got:
            jit(a, b)
        assert str(got.value) == str(want.value)
        assert line in _user_lines(got, integer_power)  # the eager re-run's frame, at the user's line
        assert got.value.__context__ is None  # no link to the compiled graph's failure
    assert jit.sot_translator.translations == 1
    assert [f.code for f in jit.sot_translator.fallbacks] == ["SOT-R001"]  # recorded once


def power_or_zero(a, b, log):
    log[0] = "called"
    try:
        y = a ** b
    except ValueError as e:
        y = a * 0 + len(e.args)
    return y


def test_a_kernel_failure_inside_try_is_caught_by_the_users_except_as_in_eager():
    a, b = _failing_inputs()
    ok = paddle.to_tensor(np.array([1, 2], "int64"))
    jit = jit_of(power_or_zero)
    for exponent in (ok, b, ok, b):
        want_log, got_log = [None], [None]
        assert_same_result(jit(a, exponent, got_log), power_or_zero(a, exponent, want_log))
        assert got_log == want_log == ["called"]  # the side effect made, also when the call ran again
    assert jit.sot_translator.translations == 1


def prints_then_powers(a, b):
    print("powers of", a.numpy())
    try:
        y = a ** b
    except ValueError:
        y = a * 0
    return y + a ** b  # raises: the second power is outside the try


def test_a_resume_function_whose_graph_fails_runs_again_eagerly(capsys):
    a, b = _failing_inputs()
    with pytest.raises(ValueError) as want:
        prints_then_powers(a, b)
    want_out = capsys.readouterr().out
    jit = jit_of(prints_then_powers)
    with pytest.raises(ValueError) as got:
        jit(a, b)
    assert capsys.readouterr().out == want_out  # printed once: the break's print is not re-run
    assert str(got.value) == str(want.value)
    line = prints_then_powers.__code__.co_firstlineno + 6
    assert line in _user_lines(want, prints_then_powers) and line in _user_lines(got, prints_then_powers)
    assert "SOT-R001" in [code for code, _, _ in events(jit)]


def appends_then_powers(a, b, log):
    log.append(len(log))
    return a ** b


def test_side_effects_are_not_made_twice_when_a_failed_call_runs_again():
    a, b = _failing_inputs()
    want_log, got_log = [], []
    with pytest.raises(ValueError):
        appends_then_powers(a, b, want_log)
    jit = jit_of(appends_then_powers)
    with pytest.raises(ValueError):
        jit(a, b, got_log)
    assert got_log == want_log == [0]
    ((code, reason, _),) = events(jit)
    assert code == "SOT-R001" and "ran again eagerly" in reason  # the compiled graph failed, then eager code


def closure_with_every_kind_of_parameter():
    scale = 3

    def inner(a, *rest, offset, **options):
        try:
            y = a ** rest[0]
        except ValueError:
            y = a * scale
        return y + offset + options["extra"]
    return inner


def test_the_eager_rerun_passes_every_kind_of_parameter_and_the_closure():
    fn = closure_with_every_kind_of_parameter()
    a, b = _failing_inputs()
    jit = jit_of(fn)
    for exponent in (paddle.to_tensor(np.array([1, 2], "int64")), b):
        assert_same_result(jit(a, exponent, offset=1, extra=5), fn(a, exponent, offset=1, extra=5))
    assert jit.sot_translator.translations == 1


def arguments_in_cells(a, b):
    power = lambda: a ** b  # noqa: E731 - a and b live in cells
    try:
        return power() + 1
    except ValueError:
        return a * 0


def test_the_eager_rerun_passes_arguments_that_live_in_cells():
    a, b = _failing_inputs()
    jit = jit_of(arguments_in_cells)
    for exponent in (paddle.to_tensor(np.array([1, 2], "int64")), b):
        assert_same_result(jit(a, exponent), arguments_in_cells(a, exponent))
    assert jit.sot_translator.translations == 1
    assert [code for code, _, _ in events(jit)] == ["SOT-R001"]


def test_a_failure_in_a_graph_that_requires_grad_raises_eagers_error_and_leaves_no_gradient():
    x = _x([1.0, -2.0, 0.5])

    def masked(x, flags):
        return x * 2 + -(flags > 0)  # `-` on bools: only the kernel rejects it

    flags = paddle.to_tensor(np.array([1, 0, 1], "int64"))
    jit = jit_of(masked)
    with pytest.raises(TypeError) as want:
        masked(x, flags)
    with pytest.raises(TypeError) as got:
        jit(x, flags)
    assert str(got.value) == str(want.value)
    assert x.grad is None  # no autograd node left behind by the failed compiled forward
