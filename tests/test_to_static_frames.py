"""What code sees of a compiled frame, against what it sees of the same frame run eagerly.

A translated function runs as generated code, and after a graph break as resume functions: each
probe below reads the frame it is called from (its locals, its code's names, the stack, a logging
record, a warning's location, a traceback) from inside functions with 0, 1 and 2 breaks before
it, and must read what eager code reads: the user's names, file, lines and locals only.
"""
import logging
import sys
import traceback
import warnings

import numpy as np
import pytest

import runtime as paddle
import sot
from sot_helpers import events, fresh, rand

_log = logging.getLogger("sot.test.frames")


class _Records(logging.Handler):
    """Keeps the records it is given."""

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


def frame_locals():
    return sorted(sys._getframe(1).f_locals)


def code_names():
    code = sys._getframe(1).f_code
    return code.co_name, code.co_qualname, code.co_filename


def frame_line():
    frame = sys._getframe(1)
    return frame.f_code.co_name, frame.f_lineno


def last_stack_entry():
    entry = traceback.extract_stack()[-2]
    return entry.name, entry.lineno, entry.line, entry.filename


def log_record():
    _log.warning("probe", stacklevel=2)  # the record names the probe's caller


def warning_location():
    warnings.warn("probe", stacklevel=2)  # the warning names the probe's caller


PROBES = [frame_locals, code_names, frame_line, last_stack_entry, log_record, warning_location]


def no_break(x, probe):
    y = x * 2
    r = probe()
    return y + 1, r


def one_break(x, probe):
    y = x * 2
    if y.sum() > 0:  # a break (SOT-B001)
        y = y + 1
    r = probe()
    return y + 1, r


def two_breaks(x, probe):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    z = y * 3
    if z.sum() > 0:
        z = z - 1
    r = probe()
    return z + 1, r


def helper_calls_probe(probe):
    return probe()


def probe_in_a_callee(x, probe):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    r = helper_calls_probe(probe)  # the probe reads the helper's frame, which must be a real one
    return y + 1, r


FUNCTIONS = [no_break, one_break, two_breaks, probe_in_a_callee]


def _run(fn, *args):
    """fn(*args)'s second result, with where each record logged and each warning issued during the call
    says it came from."""
    handler = _Records()
    _log.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            read = fn(*args)[1]
    finally:
        _log.removeHandler(handler)
    return (read, [(r.funcName, r.lineno, r.pathname) for r in handler.records],
            [(w.filename, w.lineno) for w in caught])


def _compare(fn, *args):
    """What the call reads, logs and warns under to_static (twice: the translation, then a cache hit)
    equals eager's, and the frame was not run eagerly whole."""
    want = _run(fn, *args)
    jit = sot.to_static(fresh(fn))
    for _ in range(2):
        assert _run(jit, *args) == want
    assert jit.sot_translator.translations == 1 and jit.sot_translator.fallbacks == []


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.__name__)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_probe_of_the_calling_frame_reads_what_it_reads_eagerly(fn, probe):
    _compare(fn, rand(3) + 0.5, probe)


def locals_no_break(x):
    y = x * 2
    names = sorted(locals())
    return y, names


def locals_one_break(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    names = sorted(locals())
    return y, names


def locals_two_breaks(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    z = y * 3
    if z.sum() > 0:
        z = z - 1
    names = sorted(locals())
    return z, names


def vars_and_dir_one_break(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    return y, (sorted(vars()), dir())


def getframe_one_break(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    code = sys._getframe().f_code
    return y, (code.co_name, code.co_qualname)


def extract_stack_no_break(x):
    y = x * 2
    entry = traceback.extract_stack()[-1]
    return y, (entry.name, entry.lineno)


def extract_stack_one_break(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    entry = traceback.extract_stack()[-1]
    return y, (entry.name, entry.lineno)


@pytest.mark.parametrize("fn", [locals_no_break, locals_one_break, locals_two_breaks, vars_and_dir_one_break,
                                getframe_one_break,
                                extract_stack_no_break, extract_stack_one_break], ids=lambda f: f.__name__)
def test_the_frame_read_in_the_function_itself_is_the_users(fn):
    _compare(fn, rand(3) + 0.5)


def locals_passed_on(x, keep):
    y = x * 2
    if y.sum() > 0:  # after the break, a resume function: its arguments are the generated ones
        y = y + 1
    keep.append(sorted(locals()))
    z = y * 3
    if z.sum() > 0:
        z = z - 1
    return z, sorted(locals())


def test_a_resume_functions_locals_are_the_users_after_its_stack_arguments_are_pushed():
    x = rand(3) + 0.5
    want_kept, got_kept = [], []
    want = locals_passed_on(x, want_kept)[1]
    jit = sot.to_static(fresh(locals_passed_on))
    assert jit(x, got_kept)[1] == want and got_kept == want_kept


def raises_after(x, n_breaks):
    y = x * 2
    if n_breaks > 0 and y.sum() > 0:
        y = y + 1
    if n_breaks > 1 and (y * 3).sum() > 0:
        y = y - 1
    raise ValueError(f"bad {y.shape}")


def kernel_fails_after(a, b, n_breaks):
    c = a * 1
    if n_breaks > 0 and c.sum() > 0:
        c = c + 1
    if n_breaks > 1 and (c * 3).sum() > 0:
        c = c - 1
    return c ** b  # an integer to a negative power: fails when the compiled graph runs


def _last_frame(fn, *args):
    with pytest.raises(ValueError) as info:
        fn(*args)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    return type(info.value), str(info.value), last.name, last.lineno, last.filename


@pytest.mark.parametrize("n_breaks", [0, 1, 2])
@pytest.mark.parametrize("fn", [raises_after, kernel_fails_after], ids=lambda f: f.__name__)
def test_an_exception_raised_after_breaks_has_the_users_last_frame(fn, n_breaks):
    a = paddle.to_tensor(np.array([2, 3], "int64"))
    args = (a, n_breaks) if fn is raises_after else (a, paddle.to_tensor(np.array([1, -1], "int64")), n_breaks)
    want = _last_frame(fn, *args)
    jit = sot.to_static(fresh(fn))
    if fn is kernel_fails_after:  # translated and compiled on values that do not fail, then the cache hit fails
        ok = paddle.to_tensor(np.array([1, 2], "int64"))
        np.testing.assert_array_equal(jit(a, ok, n_breaks).numpy(), fn(a, ok, n_breaks).numpy())
    for _ in range(2):
        assert _last_frame(jit, *args) == want


def numpy_in(a, w):
    x = paddle.to_tensor(a)
    y = (x * w).sum()
    _log.warning("numpy in")
    return y, None


def test_a_function_called_with_a_numpy_array_logs_the_users_line():
    _compare(numpy_in, np.ones(3, "float32"), rand(3))


def test_a_frame_reader_inside_an_inlined_call_breaks_the_caller_at_its_call():
    jit = sot.to_static(fresh(probe_in_a_callee))
    x = rand(3) + 0.5
    assert jit(x, frame_line)[1] == probe_in_a_callee(x, frame_line)[1]
    readers = [e for e in events(jit) if "reads its caller's frame" in e[1]]
    assert readers and all(code == "SOT-B003" for code, _, _ in readers)


def logs_through_a_logger_it_gets(x):
    logger = logging.getLogger("sot.test.frames")
    logger.warning("scaled %d", x.shape[0])
    return x * 2, None


def test_logging_runs_for_real_once_per_call_with_the_users_line():
    """logging takes locks and calls handlers: each call of it breaks once and runs untranslated (inlined,
    it broke at every lock and then ran the frame eagerly), and its record names the user's line."""
    x = rand(3)
    jit = sot.to_static(fresh(logs_through_a_logger_it_gets))
    assert _run(jit, x) == _run(logs_through_a_logger_it_gets, x)
    np.testing.assert_array_equal(jit(x)[0].numpy(), (x * 2).numpy())
    assert [code for code, _, _ in events(jit)] == ["SOT-B003", "SOT-B003"]
    assert all("takes locks and may read its caller" in detail for _, detail, _ in events(jit))


def fails_before_a_break(a, b):
    c = a ** b  # an integer to a negative power: fails when the graph before the break runs
    if c.sum() > 0:
        c = c + 1
    return c


def catches_before_a_break(a, b):
    try:
        c = a ** b
    except ValueError as e:
        c = a * 0 + len(str(e))
    if c.sum() > 0:
        c = c + 1
    return c


def _last_user_frame(fn, *args):
    """The exception fn(*args) raises and the last traceback entry of fn's own code (name, line)."""
    with pytest.raises(ValueError) as info:
        fn(*args)
    mine = [e for e in traceback.extract_tb(info.value.__traceback__) if e.name == fn.__name__]
    return type(info.value), str(info.value), mine[-1].lineno, mine[-1].line


def test_a_graph_failing_before_a_break_raises_through_the_users_line_and_except():
    a, bad = paddle.to_tensor(np.array([2, 3], "int64")), paddle.to_tensor(np.array([1, -1], "int64"))
    ok = paddle.to_tensor(np.array([1, 2], "int64"))
    for fn in (fails_before_a_break, catches_before_a_break):
        jit = sot.to_static(fresh(fn))
        np.testing.assert_array_equal(jit(a, ok).numpy(), fn(a, ok).numpy())  # translated on values that work
        for _ in range(2):
            if fn is fails_before_a_break:
                assert _last_user_frame(jit, a, bad) == _last_user_frame(fn, a, bad)
            else:
                np.testing.assert_array_equal(jit(a, bad).numpy(), fn(a, bad).numpy())
        assert jit.sot_translator.translations == 1
        assert [f.code for f in jit.sot_translator.fallbacks] == ["SOT-R001"]  # the eager re-run, recorded once
