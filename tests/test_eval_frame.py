"""The PEP 523 hook against plain CPython: what the callback sees, and that running other code in a frame
gives exactly what calling that code as a function gives (closures, defaults, *args/**kwargs, methods,
exceptions, recursion), per thread, without leaking references."""
import builtins
import gc
import sys
import threading
import types
import weakref

import pytest

from sot.hook.eval_frame import (
    CacheBase,
    CallWithCallback,
    CustomCode,
    add_disable_depth,
    counters,
    eval_frame_callback,
    get_code_cache,
    hook_disabled,
    set_code_cache,
    set_eval_frame,
    skip_code,
)
from sot_helpers import frames_of

HERE = __file__


class Answer:
    """A callback that records this file's frames and answers by code-object identity (None otherwise)."""

    def __init__(self, *pairs):
        self.pairs = pairs
        self.seen = []
        self.locals = {}

    def __call__(self, frame):
        code = frame.f_code
        if code.co_filename == HERE:
            self.seen.append(code.co_name)
            self.locals.setdefault(code.co_name, dict(frame.f_locals))
        for original, choice in self.pairs:
            if code is original:
                return choice
        return None


def hooked(callback, fn, *args, **kwargs):
    """Calls fn(*args, **kwargs) with callback set on this thread."""
    with eval_frame_callback(callback):
        return fn(*args, **kwargs)


def outcome(fn, *args, **kwargs):
    """The result, or the exception's type and message, of a call."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the oracle compares any exception
        return ("raised", type(exc), str(exc))


def function_like(fn, code):
    """A plain function running `code` with fn's globals, defaults and closure: the oracle for CustomCode(code)."""
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def traced_locals(fn, *args, **kwargs):
    """CPython's own view: f_locals of this file's frames at their 'call' trace event."""
    seen = {}

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == HERE:
            seen.setdefault(frame.f_code.co_name, dict(frame.f_locals))

    sys.settrace(tracer)
    try:
        fn(*args, **kwargs)
    finally:
        sys.settrace(None)
    return seen


# ---------------------------------------------------------------- what the callback sees

def _sample(a, b=2, *rest, key="k", **extra):
    scale = 3

    def inner(x, y=None):
        return (x, y, a, scale)

    return inner(a + b, y=rest)


def test_callback_sees_each_frame_with_cpythons_locals():
    answer = Answer()
    result = hooked(answer, _sample, 1, 5, 6, key="z", more=7)
    assert result == _sample(1, 5, 6, key="z", more=7)
    assert answer.seen == ["_sample", "inner"]
    assert answer.locals == traced_locals(_sample, 1, 5, 6, key="z", more=7)
    assert answer.locals["inner"] == {"x": 6, "y": (6,), "a": 1, "scale": 3}


def test_frame_view_attributes_and_a_kept_view():
    kept = []

    def callback(frame):
        if frame.f_code is _sample.__code__:
            kept.append(frame)

    hooked(callback, _sample, 4)
    (frame,) = kept
    assert frame.f_code is _sample.__code__
    assert frame.f_globals is globals()
    assert frame.f_builtins is builtins.__dict__
    assert frame.f_locals == {"a": 4, "b": 2, "rest": (), "key": "k", "extra": {}}
    assert "_sample" in repr(frame)


def _gen(n):
    yield from range(n)


async def _coro(x):
    return x * 2


async def _agen():
    yield 5


def _uses_generators(n):
    total = sum(_gen(n))
    try:
        _coro(total).send(None)
    except StopIteration as stop:
        total += stop.value
    try:
        _agen().__anext__().send(None)
    except StopIteration as stop:
        total += stop.value
    return total


def test_generators_and_coroutines_are_not_handed_to_the_callback():
    answer = Answer()
    assert hooked(answer, _uses_generators, 4) == _uses_generators(4) == 6 + 12 + 5
    assert answer.seen == ["_uses_generators"]


def _skipped_leaf(x):
    return x + 1


def _skipped_outer(x):
    return _skipped_leaf(x) * 2


def test_skipped_code_is_never_handed_over_but_its_callees_are():
    skip_code(_skipped_outer.__code__)
    answer = Answer()
    assert hooked(answer, _skipped_outer, 3) == 8
    assert answer.seen == ["_skipped_leaf"]


def test_the_callback_runs_with_the_hook_off():
    seen = []

    def callback(frame):
        if frame.f_code.co_filename == HERE:
            seen.append(frame.f_code.co_name)
        _skipped_leaf(1)  # a frame inside the callback is not handed over again

    hooked(callback, _callee, 1)
    assert seen == ["_callee"]


def test_set_eval_frame_returns_the_previous_callback_and_none_restores_plain_evaluation():
    def first(frame):
        return None

    def second(frame):
        raise AssertionError("not reached")

    assert set_eval_frame(first) is None
    assert set_eval_frame(second) is first
    assert set_eval_frame(None) is second
    assert _skipped_leaf(1) == 2
    assert set_eval_frame(None) is None
    with pytest.raises(TypeError):
        set_eval_frame(42)


# ---------------------------------------------------------------- None changes nothing

def _fact(n):
    return 1 if n <= 1 else n * _fact(n - 1)


def _closure_maker(base):
    def add(x, *more, scale=1, **named):
        return (base + x + sum(more)) * scale + len(named)

    return add


class _Shape:
    def __init__(self, side):
        self.side = side

    def area(self, times=1):
        return self.side * self.side * times


class _Square(_Shape):
    def area(self, times=1):
        return super().area(times) + 1


def _raises(x):
    raise KeyError(f"no {x}")


@pytest.mark.parametrize("call", [
    lambda: _fact(6),
    lambda: _closure_maker(3)(1, 2, 3, scale=2, a=1),
    lambda: _Square(3).area(times=2),
    lambda: _sample(1, key="q"),
    lambda: _raises("key"),
], ids=["recursion", "closure-varargs", "method-super", "defaults", "exception"])
def test_returning_none_leaves_results_unchanged(call):
    assert outcome(hooked, Answer(), call) == outcome(call)


# ---------------------------------------------------------------- running other code

def _poly(x, y=3):
    return x * 10 + y


def test_custom_code_with_replaced_constants():
    consts = tuple(100 if c == 10 and type(c) is int else c for c in _poly.__code__.co_consts)
    new = _poly.__code__.replace(co_consts=consts)
    answer = Answer((_poly.__code__, CustomCode(new)))
    assert hooked(answer, _poly, 4) == function_like(_poly, new)(4) == 403
    assert _poly(4) == 43


def _make_accumulator():
    total = 0
    step = 2

    def add(x, times=1):
        nonlocal total
        total += x * times
        return total, step

    def add_stepped(x, times=1):
        nonlocal total
        total += x * times * step
        return total, step

    return add, add_stepped


def test_custom_code_shares_the_originals_closure_cells():
    add, stepped = _make_accumulator()
    _, oracle = _make_accumulator()
    answer = Answer((add.__code__, CustomCode(stepped.__code__)))
    assert hooked(answer, add, 3) == oracle(3) == (6, 2)
    assert hooked(answer, add, 1, times=5) == oracle(1, times=5) == (16, 2)
    assert add(1) == (17, 2)  # the cell the custom code wrote is the original's


def _signature(a, /, b, c=10, *rest, d, e=20, **named):
    return ("orig", a, b, c, rest, d, e, named)


def _signature_variant(a, /, b, c=10, *rest, d, e=20, **named):
    return ("variant", a + b + c + sum(rest) + d + e, sorted(named.items()))


@pytest.mark.parametrize("args, kwargs", [
    ((1, 2), {"d": 3}),
    ((1, 2, 3, 4, 5), {"d": 6, "e": 7, "a": "posonly-name-in-kwargs", "z": 8}),
])
def test_custom_code_gets_defaults_varargs_and_kwargs_as_bound(args, kwargs):
    answer = Answer((_signature.__code__, CustomCode(_signature_variant.__code__)))
    assert hooked(answer, _signature, *args, **kwargs) == _signature_variant(*args, **kwargs)


class _Counter:
    def __init__(self):
        self.n = 0

    def bump(self, by=1):
        self.n += by
        return self.n

    def bump_twice(self, by=1):
        self.n += 2 * by
        return self.n


class _Tiled(_Shape):
    def area(self, times=1):
        return super().area(times) + 1

    def area_variant(self, times=1):
        return super().area(times) * 100


def test_custom_code_for_methods_with_self_and_super():
    counter = _Counter()
    answer = Answer((_Counter.bump.__code__, CustomCode(_Counter.bump_twice.__code__)))
    assert hooked(answer, counter.bump, 3) == 6 and counter.n == 6
    answer = Answer((_Tiled.area.__code__, CustomCode(_Tiled.area_variant.__code__)))
    assert hooked(answer, _Tiled(2).area, times=3) == _Tiled(2).area_variant(times=3) == 1200


def _plain(x):
    return x


def _plain_raising(x):
    raise ValueError(f"bad {x}")


def test_exception_raised_by_custom_code_keeps_its_traceback():
    answer = Answer((_plain.__code__, CustomCode(_plain_raising.__code__)))
    with pytest.raises(ValueError, match="bad 7") as info:
        hooked(answer, _plain, 7)
    entries = []
    tb = info.value.__traceback__
    while tb is not None:
        entries.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    assert entries[-2][0] is hooked.__code__
    assert entries[-1] == (_plain_raising.__code__, _plain_raising.__code__.co_firstlineno + 1)


def _fact_variant(n):
    return 1 if n <= 1 else n * _fact(n - 1) + 1


def _fact_reference(n):
    return 1 if n <= 1 else n * _fact_reference(n - 1) + 1


def test_recursion_runs_custom_code_inside_other_hooked_frames():
    answer = Answer((_fact.__code__, CustomCode(_fact_variant.__code__)))
    assert hooked(answer, _fact, 8) == _fact_reference(8)
    assert answer.seen == ["_fact"] * 8


def test_module_body_runs_other_code_in_its_namespace():
    original = compile("y = x + 1", "<module-test>", "exec")
    variant = compile("y = x * 100", "<module-test>", "exec")
    namespace = {"x": 5}
    seen = []

    def callback(frame):
        if frame.f_code is original:
            seen.append(frame.f_locals is namespace)
            return CustomCode(variant)

    hooked(callback, exec, original, namespace)
    assert namespace["y"] == 500 and seen == [True]


def _deep(n, tag, *rest, step=1, **named):
    return 0 if n == 0 else _deep(n - 1, tag, *rest, step=step, **named) + step


# Many locals make its frame far larger than _deep's, so growing _deep's frame in place regularly
# runs out of room in the thread's frame-stack chunk and the code runs in a relocated frame.
exec("def _deep_big(n, tag, *rest, step=1, **named):\n"
     + "".join(f"    v{i} = n + {i}\n" for i in range(400))
     + "    return 0 if n == 0 else _deep(n - 1, tag, *rest, step=step, **named) + 2 * step + len(rest)"
       " + len(named) + v399 - v0 - 399\n")


def test_custom_code_too_big_to_grow_in_place_runs_relocated():
    answer = Answer((_deep.__code__, CustomCode(_deep_big.__code__)))  # noqa: F821 - defined by exec
    before = counters()["relocated_runs"]
    for depth in (20, 45, 70):
        assert hooked(answer, _deep, depth, "tag", 1, 2, step=3, k=4) == depth * (2 * 3 + 2 + 1)
    assert counters()["relocated_runs"] > before


def _make_one_arg_closure():
    base = 1

    def plus_base(x):
        return x + base

    return plus_base


@pytest.mark.parametrize("other, why", [
    (_poly.__code__, "arguments differ"),
    (_make_one_arg_closure().__code__, "free variables differ"),
    (_gen.__code__, "generator or coroutine"),
])
def test_code_with_another_layout_is_refused(other, why):
    obj = object()
    baseline = sys.getrefcount(obj)
    with pytest.raises(TypeError, match=why):
        hooked(Answer((_plain.__code__, CustomCode(other))), _plain, obj)
    assert sys.getrefcount(obj) == baseline


# ---------------------------------------------------------------- disable_eval_frame

def _callee(x):
    return x + 1


def _caller(x):
    return _callee(x) * 2


def _caller_variant(x):
    return _callee(x) * 3


@pytest.mark.parametrize("code, disable, seen, result", [
    (_caller_variant.__code__, True, ["_caller"], 9),
    (_caller_variant.__code__, False, ["_caller", "_callee"], 9),
    (None, True, ["_caller"], 6),
    (None, False, ["_caller", "_callee"], 6),
])
def test_disable_eval_frame_turns_the_hook_off_for_callees_only(code, disable, seen, result):
    answer = Answer((_caller.__code__, CustomCode(code, disable)))
    with eval_frame_callback(answer):
        assert _caller(2) == result
        assert _callee(0) == 1  # the hook is back on after the frame
    assert answer.seen == seen + ["_callee"]


# ---------------------------------------------------------------- per-code cache

class _Cache:
    """A cache whose lookup answers from a function of the frame's locals, counting lookups."""

    def __init__(self, decide):
        self.decide = decide
        self.lookups = 0

    def lookup(self, frame):
        self.lookups += 1
        return self.decide(frame.f_locals)


def _cached(x):
    return x + 1


def _cached_variant(x):
    return x + 1000


def test_a_cache_hit_never_calls_the_callback_and_a_miss_does():
    cache = _Cache(lambda local: _cached_variant.__code__ if local["x"] > 0 else None)
    set_code_cache(_cached.__code__, cache)
    try:
        answer = Answer((_cached.__code__, CustomCode(None)))
        with eval_frame_callback(answer):
            assert [_cached(1), _cached(2)] == [1001, 1002]
            assert answer.seen == [] and cache.lookups == 2
            assert _cached(-1) == 0
            assert answer.seen == ["_cached"] and cache.lookups == 3
        assert get_code_cache(_cached.__code__) is cache
        assert _cached(5) == 6 and cache.lookups == 3  # no callback set: nothing is asked
    finally:
        set_code_cache(_cached.__code__, None)
    assert get_code_cache(_cached.__code__) is None


def test_a_cache_hit_may_return_custom_code_with_the_hook_off_for_callees():
    cache = _Cache(lambda local: CustomCode(_caller_variant.__code__, True))
    set_code_cache(_caller.__code__, cache)
    try:
        answer = Answer()
        assert hooked(answer, _caller, 2) == 9
        assert answer.seen == [] and cache.lookups == 1
    finally:
        set_code_cache(_caller.__code__, None)


def test_cache_and_skip_arguments_are_checked():
    with pytest.raises(TypeError, match="lookup"):
        set_code_cache(_cached.__code__, object())
    with pytest.raises(TypeError):
        set_code_cache(_cached, _Cache(None))
    with pytest.raises(TypeError):
        skip_code("not code")
    with pytest.raises(TypeError):
        CustomCode(42)


def _skip_after_cache(x):
    return x


def test_skip_code_replaces_a_cache():
    cache = _Cache(lambda local: None)
    set_code_cache(_skip_after_cache.__code__, cache)
    skip_code(_skip_after_cache.__code__)
    assert get_code_cache(_skip_after_cache.__code__) is None
    answer = Answer()
    assert hooked(answer, _skip_after_cache, 1) == 1
    assert answer.seen == [] and cache.lookups == 0


def test_views_kept_by_lookups_keep_their_own_locals():
    kept = []

    class Keeping(_Cache):
        def lookup(self, frame):
            if len(kept) < 2:
                kept.append(frame)  # a kept view is never reused for a later lookup
            return super().lookup(frame)

    set_code_cache(_cached.__code__, Keeping(lambda local: _cached_variant.__code__))
    try:
        assert [hooked(Answer(), _cached, x) for x in (1, 2, 3, 4)] == [1001, 1002, 1003, 1004]
    finally:
        set_code_cache(_cached.__code__, None)
    assert kept[0] is not kept[1]
    assert [v.f_locals for v in kept] == [{"x": 1}, {"x": 2}]
    assert all(v.f_code is _cached.__code__ and v.f_globals is globals() for v in kept)


# ---------------------------------------------------------------- CacheBase: the hit path in C

class _Entry:
    """What a CacheBase counts hits on."""

    def __init__(self):
        self.hits = 0


class _Table(CacheBase):
    """A CacheBase whose check answers `self.found` and whose slow path answers from `self.slow_answers`."""

    def __init__(self, found, front_code):
        self.found = found
        self.checked = []
        self.slow = []
        self.slow_answers = {}
        self._check = self.check
        self._set_front(0, _Entry(), front_code)

    def check(self, f_locals, f_globals, f_builtins):
        self.checked.append(({"x": f_locals["x"]}, f_globals is globals(), f_builtins is builtins.__dict__))
        return self.found

    def _lookup_slow(self, i):
        self.slow.append(i)
        return self.slow_answers.get(i)


def test_a_cache_base_hit_on_its_front_entry_runs_no_python_frame_but_its_check():
    table = _Table(0, CustomCode(_cached_variant.__code__))
    set_code_cache(_cached.__code__, table)
    try:
        answer = Answer()
        with eval_frame_callback(answer):
            before = counters()
            result, ran = frames_of(_cached, 1)
            assert (result, [name for _, name in ran]) == (1001, ["check", "_cached_variant"])
            after = counters()
        assert table.checked == [({"x": 1}, True, True)]
        assert table._front_entry.hits == 1 and table.slow == [] and "_cached" not in answer.seen
        assert after["cache_hits"] - before["cache_hits"] == 1
        assert get_code_cache(_cached.__code__) is table
    finally:
        set_code_cache(_cached.__code__, None)


def _closure_over(value):
    def inner(a, b=2):
        return a + b + value
    return inner


def test_a_cache_base_check_reads_the_frames_arguments_and_free_variables_by_name():
    inner = _closure_over(30)
    seen, kept = [], []
    table = _Table(0, CustomCode(None))

    def check(f_locals, f_globals, f_builtins):
        kept.append(f_locals)
        equal_name = "".join(["val", "ue"])  # equal to the free variable's name, not the same object
        seen.append((f_locals["a"], f_locals["b"], f_locals["value"], f_locals[equal_name]))
        for missing in ("nope", 1):
            with pytest.raises(KeyError):
                f_locals[missing]
        return 0

    table._check = check
    set_code_cache(inner.__code__, table)
    try:
        assert hooked(Answer(), inner, 1) == 33 and hooked(Answer(), inner, 4, b=5) == 39
    finally:
        set_code_cache(inner.__code__, None)
    assert seen == [(1, 2, 30, 30), (4, 5, 30, 30)]
    assert kept[0]["a"] == 1 and kept[1]["b"] == 5  # kept past the call: the snapshot of its frame
    assert kept[0].f_locals == {"a": 1, "b": 2, "value": 30}


def test_a_cache_base_asks_lookup_slow_for_other_entries_and_misses_then_the_callback():
    table = _Table(1, CustomCode(_cached_variant.__code__))
    table.slow_answers[1] = _cached_variant.__code__
    set_code_cache(_cached.__code__, table)
    try:
        answer = Answer((_cached.__code__, None))
        with eval_frame_callback(answer):
            assert _cached(2) == 1002 and table.slow == [1] and answer.seen == []
            table.found = -1  # a miss: the slow path says None, the callback is asked with the same locals
            assert _cached(3) == 4 and table.slow == [1, -1]
            assert answer.seen == ["_cached"] and answer.locals["_cached"] == {"x": 3}
            table._check = None  # no check runs: every lookup is slow
            assert _cached(4) == 5 and table.slow == [1, -1, -1] and len(table.checked) == 2
        assert table._front_entry.hits == 0
        assert table._lookup_namespaces({"x": 1}, globals(), builtins.__dict__) is None
    finally:
        set_code_cache(_cached.__code__, None)


def test_a_cache_base_check_that_raises_or_answers_no_int_raises_in_the_caller():
    table = _Table(0, CustomCode(_cached_variant.__code__))

    def broken(f_locals, f_globals, f_builtins):
        raise KeyError("guard")

    set_code_cache(_cached.__code__, table)
    try:
        table._check = broken
        with pytest.raises(KeyError, match="guard"):
            hooked(Answer(), _cached, 1)
        table._check = lambda *namespaces: "entry"
        with pytest.raises(TypeError):
            hooked(Answer(), _cached, 1)
        table._check = table.check
        assert hooked(Answer(), _cached, 1) == 1001  # the frame was released: it runs again
    finally:
        set_code_cache(_cached.__code__, None)
    assert table.slow == [] and table._front_entry.hits == 1


# ---------------------------------------------------------------- CallWithCallback and hook_disabled

def _wrapped_target(a, b=2, *rest, key="k", **extra):
    """The function a CallWithCallback calls in these tests."""
    return (a, b, rest, key, extra, _callee(a))


@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((1, 5, 6), {"key": "z", "more": 7}), ((), {"a": 3})])
def test_call_with_callback_calls_fn_with_the_callback_set(args, kwargs):
    answer = Answer()
    wrapper = CallWithCallback(_wrapped_target, answer)
    assert wrapper(*args, **kwargs) == _wrapped_target(*args, **kwargs)
    assert answer.seen == ["_wrapped_target", "_callee"]
    assert set_eval_frame(None) is None  # restored: no callback before, none after
    assert (wrapper.fn, wrapper.callback) == (_wrapped_target, answer)


def test_call_with_callback_restores_the_previous_callback_also_on_error():
    outer, inner = Answer(), Answer((_raises.__code__, CustomCode(None)))
    wrapper = CallWithCallback(_raises, inner)
    assert set_eval_frame(outer) is None
    try:
        assert outcome(wrapper, "x") == outcome(_raises, "x")
        assert inner.seen == ["_raises"]
    finally:
        assert set_eval_frame(None) is outer
    assert outer.seen == ["outcome", "outcome", "_raises"]  # the wrapper's _raises frame went to inner


def test_call_with_callback_nests_and_binds_as_a_method():
    outer_cb, inner_cb = Answer(), Answer()
    inner = CallWithCallback(_callee, inner_cb)

    def outer_fn(x):
        return inner(x) + _callee(x)  # inner's callback for its call only, then outer's again

    assert CallWithCallback(outer_fn, outer_cb)(1) == 2 * _callee(1)
    assert outer_cb.seen == ["outer_fn", "_callee"] and inner_cb.seen == ["_callee"]

    class Shape(_Shape):
        scaled = CallWithCallback(lambda self, k: self.side * k, Answer())

    shape = Shape(3)
    assert shape.scaled(2) == Shape.scaled(shape, 2) == getattr(shape, "scaled")(2) == 6


def test_hook_disabled_turns_the_hook_off_and_call_with_callback_calls_plainly():
    answer = Answer()
    wrapper = CallWithCallback(_callee, answer)
    with eval_frame_callback(answer):
        with hook_disabled():
            assert add_disable_depth(0) == 1
            with hook_disabled():
                assert add_disable_depth(0) == 2
                assert wrapper(1) == _callee(1)
            assert _callee(2) == 3
        assert answer.seen == []
        assert add_disable_depth(0) == 0
        _callee(3)
    assert answer.seen == ["_callee"]


def test_call_with_callback_in_a_reference_cycle_is_collected():
    namespace = {}
    exec("def target(x):\n    return wrapper(x - 1) if x else 0\n", namespace)  # noqa: S102 - a cycle via globals
    namespace["wrapper"] = CallWithCallback(namespace["target"], Answer())
    assert namespace["wrapper"](3) == 0
    ref = weakref.ref(namespace["wrapper"])
    del namespace
    gc.collect()
    assert ref() is None


def test_call_with_callback_and_disable_depth_check_their_arguments():
    with pytest.raises(TypeError, match="fn must be callable"):
        CallWithCallback(42, Answer())
    with pytest.raises(TypeError, match="callback must be callable"):
        CallWithCallback(_callee, None)
    for bad in (2, -1):  # -1 at depth 0 would turn the hook on inside code that turned it off
        with pytest.raises(ValueError, match="add_disable_depth"):
            add_disable_depth(bad)
    assert add_disable_depth(0) == 0


# ---------------------------------------------------------------- errors raised by the hook's parties

def _takes(obj):
    return obj


def test_errors_from_callback_lookup_or_answer_propagate_and_release_the_frame():
    def failing_callback(frame):
        if frame.f_code is _takes.__code__:
            raise RuntimeError("callback failed")

    def wrong_answer(frame):
        if frame.f_code is _takes.__code__:
            return 3

    obj = object()
    baseline = sys.getrefcount(obj)
    with pytest.raises(RuntimeError, match="callback failed"):
        hooked(failing_callback, _takes, obj)
    with pytest.raises(TypeError, match="CustomCode, not int"):
        hooked(wrong_answer, _takes, obj)
    set_code_cache(_takes.__code__, _Cache(lambda local: 1 / 0))
    try:
        with pytest.raises(ZeroDivisionError):
            hooked(Answer(), _takes, obj)
    finally:
        set_code_cache(_takes.__code__, None)
    gc.collect()
    assert sys.getrefcount(obj) == baseline
    assert hooked(Answer(), _takes, obj) is obj


# ---------------------------------------------------------------- threads

def _in_hooked_thread(x):
    return x + 1


def _in_plain_thread(x):
    return x - 1


def test_the_callback_is_per_thread():
    rounds = 30
    barrier = threading.Barrier(2)
    answer = Answer()
    idents = set()

    def callback(frame):
        if frame.f_code.co_filename == HERE:
            idents.add(threading.get_ident())
        return answer(frame)

    def hooked_worker():
        with eval_frame_callback(callback):
            for i in range(rounds):
                barrier.wait()
                _in_hooked_thread(i)

    worker = threading.Thread(target=hooked_worker)
    worker.start()
    for i in range(rounds):
        barrier.wait()
        _in_plain_thread(i)
    worker.join()
    assert set(answer.seen) == {"_in_hooked_thread"} and len(answer.seen) == rounds
    assert idents == {worker.ident}
    assert set_eval_frame(None) is None


def _spawner(x):
    return x


def _spawner_variant(x):
    return _hooked_in_a_thread(x)


def _hooked_in_a_thread(x):
    """Runs _in_hooked_thread(x) on a new thread with its own callback; what that callback saw."""
    answer = Answer()

    def work():
        with eval_frame_callback(answer):
            _in_hooked_thread(x)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    return answer.seen


def test_code_run_with_the_hook_off_uninstalls_it_and_another_threads_callback_installs_it_again():
    main = Answer((_spawner.__code__, CustomCode(_spawner_variant.__code__, True)))
    before = counters()["suspended_runs"]
    with eval_frame_callback(main):
        thread_saw = _spawner(1)  # the only callback is this thread's: its run uninstalls the hook
        _callee(1)  # and the hook is back for this thread after the run
    assert counters()["suspended_runs"] == before + 1
    assert thread_saw == ["_in_hooked_thread"]  # the thread's callback set during the run was honoured
    assert main.seen == ["_spawner", "_callee"]  # not _hooked_in_a_thread: the run's callees are unhooked


def test_no_uninstall_while_another_thread_has_a_callback():
    other, ready, done = Answer(), threading.Event(), threading.Event()

    def work():
        with eval_frame_callback(other):
            ready.set()
            done.wait()
            _in_hooked_thread(2)

    worker = threading.Thread(target=work)
    worker.start()
    ready.wait()
    main = Answer((_caller.__code__, CustomCode(_caller_variant.__code__, True)))
    before = counters()["suspended_runs"]
    try:
        assert hooked(main, _caller, 2) == 9
    finally:
        done.set()
        worker.join()
    assert counters()["suspended_runs"] == before
    assert "_in_hooked_thread" in other.seen and "_caller" in main.seen


# ---------------------------------------------------------------- no reference leaks

def _leak_target(obj, items, *, scale=2):
    return len(items) * scale + (obj is not None)


def _leak_variant(obj, items, *, scale=2):
    return len(items) * scale * 10 + (obj is not None)


def assert_flat(run, watched):
    """Runs 100,000 calls and checks refcounts of `watched` and the process's allocated blocks stay flat."""
    run(1000)
    gc.collect()
    refs = [sys.getrefcount(o) for o in watched]
    blocks = sys.getallocatedblocks()
    run(100_000)
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == refs
    assert sys.getallocatedblocks() - blocks < 200


@pytest.mark.parametrize("path", ["callback", "cache-hit", "none", "callback-error", "cache-base-hit",
                                  "cache-base-slow"])
def test_no_reference_leaks(path):
    obj, items = object(), [1, 2, 3]
    choice = CustomCode(_leak_variant.__code__)
    cache = _Cache(lambda local: choice)
    if path.startswith("cache-base"):  # the C hit path on its front entry, or _lookup_slow for another
        cache = _Table(0 if path == "cache-base-hit" else 1, choice)
        cache.check = lambda f_locals, f_globals, f_builtins: cache.found if f_locals["obj"] is obj else -1
        cache._check = cache.check
        cache.slow_answers[1] = choice

    def callback(frame):
        if frame.f_code is _leak_target.__code__:
            if path == "callback-error":
                raise LookupError(obj)
            return None if path == "none" else choice

    expected = {"callback": 61, "cache-hit": 61, "none": 7, "cache-base-hit": 61, "cache-base-slow": 61}.get(path)

    def run(n):
        with eval_frame_callback(callback):
            for _ in range(n):
                try:
                    assert _leak_target(obj, items, scale=2) == expected
                except LookupError:
                    pass

    if path.startswith("cache"):
        set_code_cache(_leak_target.__code__, cache)
    try:
        assert_flat(run, [obj, items, choice, cache, _leak_target.__code__, _leak_variant.__code__])
    finally:
        set_code_cache(_leak_target.__code__, None)


@pytest.mark.parametrize("raises", [False, True])
def test_no_reference_leaks_through_call_with_callback(raises):
    obj, items = object(), [1, 2, 3]
    answer = Answer() if not raises else (lambda frame: (_ for _ in ()).throw(LookupError(obj)))
    wrapper = CallWithCallback(_leak_target, answer)

    def run(n):
        for _ in range(n):
            try:
                assert wrapper(obj, items, scale=2) == 7
            except LookupError:
                pass
            if not raises:
                answer.seen.clear()

    assert_flat(run, [obj, items, wrapper, answer])
    assert set_eval_frame(None) is None


def test_no_reference_leaks_on_to_static_hits():
    import runtime
    import sot

    def add_one(x):
        return x + 1

    jit, x = sot.to_static(add_one), runtime.ones([2], dtype="float32")
    expected = (x + 1).numpy()

    def run(n):
        for _ in range(n):
            jit(x)
        assert (jit(x).numpy() == expected).all()

    assert_flat(run, [x, jit, jit.sot_translator, add_one.__code__])
    assert jit.sot_translator.translations == 1


def test_no_reference_leaks_when_relocated():
    answer = Answer((_deep.__code__, CustomCode(_deep_big.__code__)))  # noqa: F821 - defined by exec
    tag, item, key = object(), object(), object()
    before = counters()["relocated_runs"]

    def run(n):
        with eval_frame_callback(answer):
            for _ in range(n // 50):
                _deep(50, tag, item, k=key)
        answer.seen.clear()

    assert_flat(run, [tag, item, key, _deep.__code__, _deep_big.__code__])  # noqa: F821
    assert counters()["relocated_runs"] > before
