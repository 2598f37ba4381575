"""Guards and the code cache: every check kind, the generated guard tree against a naive oracle.

The truth tables below are CPython facts (1, 1.0 and True are different constants to a
translation; NaN is NaN; a subclass is not the exact type); each case is checked both by the
guard's naive evaluation and by the generated function of a one-entry cache. The differential
tests drive random caches and random frames and compare every lookup with the first matching
entry, most recent hit first, found by evaluating each entry's guards one by one.
"""
import collections
import importlib
import math
import sys
import types

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import runtime as paddle

guards = importlib.import_module("sot.guards")
CodeCache, FrameLike, Guard = guards.CodeCache, guards.FrameLike, guards.Guard
TensorMeta, RUN_EAGERLY = guards.TensorMeta, guards.RUN_EAGERLY


def _fn(x, n):
    return x


def _generated_holds(guard, f_locals, f_globals=None):
    cache = CodeCache(_fn.__code__)
    cache.insert([guard], "hit")
    return cache.lookup(FrameLike(f_locals, f_globals or {})) == "hit"


def _both(guard, value):
    """(naive, generated) verdicts of `guard` on f_locals['v'] = value."""
    return guard.holds({"v": value}), _generated_holds(guard, {"v": value})


# ----- each check kind -----

NAN = float("nan")
VALUE_CASES = [  # (expected, actual, passes)
    (1, 1, True), (1, 1.0, False), (1, True, False), (True, 1, False), (True, True, True),
    (False, 0, False), (0, False, False), (1.0, 1.0 + 0.0, True), (1.0, 1, False),
    (NAN, float("nan"), True), (NAN, 1.0, False), (1.0, NAN, False),
    (0.0, -0.0, False), (-0.0, -0.0 * 1, True), (0.0, 0.0, True),
    (math.inf, float("inf"), True), (math.inf, -math.inf, False),
    ("a", "a", True), ("a", "b", False), ("1", 1, False), (b"x", b"x", True), (b"x", "x", False),
    (None, None, True), (None, 0, False), (None, False, False), (0, None, False),
    (10**30, 10**30 + 0, True), (2**70, float(2**70), False),
    ((1, 2.0), (1, 2.0), True), ((1, 2.0), (1, 2), False), ((1,), [1], False), ((), (), True),
    ((1, (2, "a")), (1, (2, "a")), True), ((1, (2, "a")), (1, (2.0, "a")), False),
    ((NAN,), (float("nan"),), True), ((1, 2), (1, 2, 3), False),
]


@pytest.mark.parametrize("expected,actual,passes", VALUE_CASES)
def test_value_eq(expected, actual, passes):
    assert _both(Guard("f_locals['v']", "value_eq", expected), actual) == (passes, passes)


def test_value_eq_subclass_of_int_is_not_int():
    class MyInt(int):
        pass
    assert _both(Guard("f_locals['v']", "value_eq", 3), MyInt(3)) == (False, False)


def test_value_eq_rejects_what_it_cannot_compare():
    with pytest.raises(TypeError, match="value_eq supports"):
        Guard("f_locals['v']", "value_eq", [1, 2])
    with pytest.raises(TypeError, match="value_eq supports"):
        Guard("f_locals['v']", "value_eq", (1, [2]))


def test_type_is_is_exact():
    class Base:
        pass

    class Sub(Base):
        pass
    g = Guard("f_locals['v']", "type_is", Base)
    assert _both(g, Base()) == (True, True)
    assert _both(g, Sub()) == (False, False)
    t = Guard("f_locals['v']", "type_is", paddle.Tensor)
    assert _both(t, paddle.ones([2])) == (True, True)
    assert _both(t, paddle.create_parameter([2], "float32")) == (False, False)
    assert _both(Guard("f_locals['v']", "type_is", int), True) == (False, False)
    with pytest.raises(TypeError):
        Guard("f_locals['v']", "type_is", 3)


def test_id_is():
    layer, other = paddle.nn.Linear(2, 2), paddle.nn.Linear(2, 2)
    for obj, same, different in [(math, math, types.ModuleType("math")), (_fn, _fn, lambda x, n: x),
                                 (layer, layer, other), (paddle.Tensor, paddle.Tensor, int)]:
        g = Guard("f_locals['v']", "id_is", obj)
        assert _both(g, same) == (True, True)
        assert _both(g, different) == (False, False)


def _tensor(shape, dtype="float32", stop_gradient=True):
    return paddle.to_tensor(paddle.zeros(shape, dtype=dtype).numpy(), stop_gradient=stop_gradient)


META_CASES = [  # (expected shape, dtype, stop_gradient) vs tensor (shape, dtype, stop_gradient)
    (([2, 3], "float32", True), ([2, 3], "float32", True), True),
    (([2, 3], "float32", True), ([3, 2], "float32", True), False),
    (([2, 3], "float32", True), ([2, 3, 1], "float32", True), False),
    (([2, -1], "float32", True), ([2, 7], "float32", True), True),
    (([-1, -1], "float32", True), ([5, 1], "float32", True), True),
    (([-1, -1], "float32", True), ([5], "float32", True), False),
    (([2, -1], "float32", True), ([3, 7], "float32", True), False),
    (([2, 3], "float32", True), ([2, 3], "float64", True), False),
    (([2, 3], "int64", True), ([2, 3], "int32", True), False),
    (([2, 3], "float32", True), ([2, 3], "float32", False), False),
    (([2, 3], "float32", False), ([2, 3], "float32", False), True),
    (([], "float32", True), ([], "float32", True), True),
    (([], "float32", True), ([1], "float32", True), False),
]


@pytest.mark.parametrize("expected,actual,passes", META_CASES)
def test_tensor_meta(expected, actual, passes):
    shape, dtype, sg = expected
    g = Guard("f_locals['v']", "tensor_meta", TensorMeta(tuple(shape), getattr(paddle, dtype), sg))
    assert _both(g, _tensor(*actual)) == (passes, passes)


def test_tensor_meta_never_reads_values_and_fails_on_non_tensors():
    t = _tensor([2, 2])
    g = Guard("f_locals['v']", "tensor_meta", TensorMeta.of(t))
    assert _both(g, paddle.ones([2, 2])) == (True, True)  # other values, same meta
    assert _both(g, t.numpy()) == (False, False)
    assert _both(g, None) == (False, False)
    param = paddle.create_parameter([2, 2], "float32")  # a subclass with the same meta
    assert _both(Guard("f_locals['v']", "tensor_meta", TensorMeta.of(param)), param) == (True, True)
    assert TensorMeta.of(t, dynamic_dims=(1,)).shape == (2, -1)
    with pytest.raises(ValueError):
        Guard("f_locals['v']", "tensor_meta", TensorMeta((2, -2), paddle.float32, True))


def test_len_keys_none():
    assert _both(Guard("f_locals['v']", "len_eq", 2), [1, 2]) == (True, True)
    assert _both(Guard("f_locals['v']", "len_eq", 2), (1, 2, 3)) == (False, False)
    assert _both(Guard("f_locals['v']", "len_eq", 2), 5) == (False, False)  # len() raises
    keys = Guard("f_locals['v']", "keys_eq", ("a", "b"))
    assert _both(keys, {"a": 1, "b": 2}) == (True, True)
    assert _both(keys, {"b": 2, "a": 1}) == (False, False)  # order matters
    assert _both(keys, {"a": 1}) == (False, False)
    typed = Guard("f_locals['v']", "keys_eq", (1, "x"))
    assert _both(typed, {1: 0, "x": 0}) == (True, True)
    assert _both(typed, {True: 0, "x": 0}) == (False, False)
    assert _both(typed, {1.0: 0, "x": 0}) == (False, False)
    for value, is_none in [(None, True), (0, False), (False, False), ((), False)]:
        assert _both(Guard("f_locals['v']", "is_none"), value) == (is_none, is_none)
        assert _both(Guard("f_locals['v']", "not_none"), value) == (not is_none, not is_none)


def test_sources_that_cannot_be_read_fail_the_guard():
    class Obj:
        a = 1
    g = Guard("f_locals['v'].b", "value_eq", 1)
    assert _both(g, Obj()) == (False, False)
    assert _both(Guard("f_locals['v'].a", "value_eq", 1), Obj()) == (True, True)
    assert not _generated_holds(Guard("f_locals['missing']", "is_none"), {})
    assert _both(Guard("f_locals['v'][3]", "value_eq", 1), [1]) == (False, False)
    assert _both(Guard("f_locals['v'][0]", "value_eq", 1), [1]) == (True, True)
    assert _generated_holds(Guard("f_globals['g']['k']", "value_eq", 2), {}, {"g": {"k": 2}})


def test_bad_guards_are_rejected():
    with pytest.raises(ValueError, match="unknown guard kind"):
        Guard("f_locals['v']", "shape_is", 1)
    with pytest.raises(ValueError, match="may only read"):
        Guard("frame.f_locals['v']", "is_none")
    with pytest.raises(ValueError, match="not a Python expression"):
        Guard("f_locals[", "is_none")


def test_guards_compare_as_data():
    a = Guard('f_locals["x"]', "value_eq", 1)
    assert a == Guard("f_locals['x']", "value_eq", 1)  # same source text once normalised
    assert len({a, Guard("f_locals['x']", "value_eq", 1.0), Guard("f_locals['x']", "value_eq", True)}) == 3
    assert str(a) == "f_locals['x'] == 1"
    assert str(Guard("f_locals['x']", "type_is", paddle.Tensor)) == "type(f_locals['x']) is runtime.tensor.Tensor"
    meta = Guard("f_locals['x']", "tensor_meta", TensorMeta((2, -1), paddle.float32, True))
    assert str(meta) == "f_locals['x'] is a tensor of shape [2, -1], dtype float32, stop_gradient=True"
    assert str(Guard("f_globals['m']", "id_is", math)) == "f_globals['m'] is module math"
    assert str(Guard("f_locals['d']", "keys_eq", ["a"])) == "list(f_locals['d']) == ['a']"


# ----- the generated function against the naive oracle -----

class Obj:
    """A user object; attribute `p` present or not."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


class MyInt(int):
    pass


T23 = _tensor([2, 3])
POOL = [0, 1, 1.0, True, False, -0.0, 0.0, NAN, 2.5, "a", "b", None, (1, 2), (1, 2.0), [1, 2],
        {"a": 1, "b": 2}, {"b": 2, "a": 1}, MyInt(1), T23, _tensor([2, 3], "float64"), _tensor([2, 4]),
        _tensor([2, 3], stop_gradient=False), paddle.create_parameter([2, 3], "float32"), math, Obj]
OBJECTS = [Obj(p=1), Obj(p=2.0), Obj(p=T23), Obj(p=None), Obj(), Obj(p=Obj(q=1)), Obj(p=Obj())]
SOURCES = ["f_locals['a']", "f_locals['b']", "f_globals['g']", "f_locals['o'].p", "f_locals['o'].p.q",
           "f_locals['a'][0]"]
DTYPES = [paddle.float32, paddle.float64]
SHAPES = [(2, 3), (2, -1), (-1, -1), (2, 4), (3,)]


@st.composite
def _guard(draw):
    src = draw(st.sampled_from(SOURCES))
    kind = draw(st.sampled_from(["type_is", "id_is", "value_eq", "tensor_meta", "len_eq", "keys_eq",
                                 "is_none", "not_none"]))
    v = draw(st.sampled_from(POOL + OBJECTS))
    if kind == "type_is":
        return Guard(src, kind, type(v))
    if kind == "id_is":
        return Guard(src, kind, v)
    if kind == "value_eq":
        const = draw(st.sampled_from([0, 1, 1.0, True, False, -0.0, 0.0, NAN, 2.5, "a", None, (1, 2), (1, 2.0)]))
        return Guard(src, kind, const)
    if kind == "tensor_meta":
        return Guard(src, kind, TensorMeta(draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)),
                                           draw(st.booleans())))
    if kind == "len_eq":
        return Guard(src, kind, draw(st.integers(0, 3)))
    if kind == "keys_eq":
        return Guard(src, kind, draw(st.sampled_from([("a", "b"), ("b", "a"), ()])))
    return Guard(src, kind)


_frame = st.builds(lambda a, b, g, o: FrameLike({"a": a, "b": b, "o": o}, {"g": g}),
                   st.sampled_from(POOL), st.sampled_from(POOL), st.sampled_from(POOL),
                   st.sampled_from(OBJECTS))
_op = st.one_of(st.tuples(st.just("insert"), st.lists(_guard(), max_size=5)),
                st.tuples(st.just("lookup"), _frame))


def _oracle_first(order, frame):
    for gs, code in order:
        if all(g.holds(frame.f_locals, frame.f_globals, frame.f_builtins) for g in gs):
            return code
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_op, min_size=1, max_size=30))
def test_generated_lookup_agrees_with_naive_oracle_in_mru_order(ops):
    cache = CodeCache(_fn.__code__, cache_size_limit=100)
    order = []  # the oracle's own MRU list of (guards, code)
    for n, (op, arg) in enumerate(ops):
        if op == "insert":
            code = f"code{n}"
            cache.insert(arg, code)
            order.insert(0, (arg, code))
        else:
            expected = _oracle_first(order, arg)
            assert cache.lookup(arg) == expected, cache.guard_source()
            if expected is not None:
                pos = [c for _, c in order].index(expected)
                order.insert(0, order.pop(pos))
        assert [e.code for e in cache.entries] == [c for _, c in order]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(_guard(), max_size=4), min_size=1, max_size=6), st.lists(_frame, max_size=8))
def test_no_lookup_returns_an_entry_whose_guards_fail(entries, frames):
    cache = CodeCache(_fn.__code__, cache_size_limit=100)
    for i, gs in enumerate(entries):
        cache.insert(gs, i)
    for frame in frames:
        code = cache.lookup(frame)
        if code is not None:
            assert all(g.holds(frame.f_locals, frame.f_globals) for g in entries[code])


# ----- each source read at most once per lookup -----

class Counted:
    """An object whose attribute reads are counted by path."""

    def __init__(self, reads, path, attrs):
        object.__setattr__(self, "_reads", reads)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_attrs", attrs)

    def __getattr__(self, name):
        self._reads[f"{self._path}.{name}"] += 1
        value = self._attrs[name]
        return Counted(self._reads, f"{self._path}.{name}", value) if isinstance(value, dict) else value


class CountedDict(dict):
    def __init__(self, reads, name, items):
        super().__init__(items)
        self._reads, self._name = reads, name

    def __getitem__(self, key):
        self._reads[f"{self._name}[{key!r}]"] += 1
        return super().__getitem__(key)


COUNTED_SOURCES = ["f_locals['a']", "f_locals['o'].p", "f_locals['o'].p.q", "f_locals['o'].p.r",
                   "f_globals['g']"]


@st.composite
def _counted_guard(draw):
    src = draw(st.sampled_from(COUNTED_SOURCES))
    kind = draw(st.sampled_from(["value_eq", "type_is", "is_none", "not_none"]))
    if kind == "value_eq":
        return Guard(src, kind, draw(st.sampled_from([0, 1, 1.0, None])))
    if kind == "type_is":
        return Guard(src, kind, draw(st.sampled_from([int, float, type(None)])))
    return Guard(src, kind)


_small = st.sampled_from([0, 1, 1.0, None])


def _counted_frame(reads, a, q, r, g):
    o = Counted(reads, "o", {"p": {"q": q, "r": r}})
    return FrameLike(CountedDict(reads, "L", {"a": a, "o": o}), CountedDict(reads, "G", {"g": g}))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_counted_guard(), max_size=4), min_size=1, max_size=6),
       st.lists(st.tuples(_small, _small, _small, _small), min_size=1, max_size=8))
def test_each_source_is_read_at_most_once_per_lookup(entries, frames):
    cache = CodeCache(_fn.__code__, cache_size_limit=100)
    for i, gs in enumerate(entries):
        cache.insert(gs, i)
    for values in frames:
        reads = collections.Counter()
        cache.lookup(_counted_frame(reads, *values))
        assert max(reads.values(), default=0) <= 1, (reads, cache.guard_source())
    assert cache.careful_lookups == 0  # nothing raised: the generated function decided alone


def test_a_source_read_in_an_earlier_branch_is_not_read_again():
    cache = CodeCache(_fn.__code__)
    cache.insert([Guard("f_globals['g']", "value_eq", 0), Guard("f_locals['a']", "value_eq", 1)], 0)
    cache.insert([Guard("f_globals['g']", "value_eq", 1), Guard("f_locals['a']", "is_none")], 1)
    for a, g, hit in [(None, 5, None), (1, 0, 0), (None, 1, 1), (1, 1, None)]:
        reads = collections.Counter()
        assert cache.lookup(_counted_frame(reads, a, 0, 0, g)) == hit
        assert reads == {"L['a']": 1, "G['g']": 1} or reads == {"L['a']": 1}
    assert "G_g if G_g is not _U else (G_g := f_globals['g'])" in cache.guard_source()
    assert cache.careful_lookups == 0


def test_a_lookup_where_a_read_raises_still_reads_the_rest_once():
    cache = CodeCache(_fn.__code__)
    cache.insert([Guard("f_locals['o'].p.q", "value_eq", 1)], 0)
    cache.insert([Guard("f_locals['o'].p.missing", "value_eq", 1), Guard("f_locals['a']", "value_eq", 2)], 1)
    reads = collections.Counter()
    assert cache.lookup(_counted_frame(reads, 2, 1, 0, 0)) == 0
    assert cache.careful_lookups == 1
    assert reads["L['o']"] == 1 and reads["o.p"] == 1 and reads["o.p.q"] == 1


# ----- the cache: order, limit, misses, text -----

def test_mru_order_decides_between_entries_that_both_match():
    cache = CodeCache(_fn.__code__)
    cache.insert([Guard("f_locals['x']", "type_is", int)], "any int")
    cache.insert([Guard("f_locals['x']", "value_eq", 1)], "one")
    assert cache.lookup(FrameLike({"x": 1})) == "one"  # most recent first
    assert cache.lookup(FrameLike({"x": 2})) == "any int"
    assert [e.code for e in cache.entries] == ["any int", "one"]
    assert cache.lookup(FrameLike({"x": 1})) == "any int"  # now checked first, and it matches
    assert cache.guard_source().index("return 0") < cache.guard_source().index("return 1")


def test_exclusive_entries_reorder_without_regenerating():
    cache = CodeCache(_fn.__code__)
    for v in (1, 2, 3):
        cache.insert([Guard("f_locals['x']", "value_eq", v)], v)
    before = cache.generated
    for v in (1, 2, 3, 1, 2, 3):
        assert cache.lookup(FrameLike({"x": v})) == v
    assert cache.generated == before
    assert [e.code for e in cache.entries] == [3, 2, 1]


def test_alternating_overlapping_entries_reuse_their_generated_functions():
    cache = CodeCache(_fn.__code__)
    cache.insert([Guard("f_locals['x']", "type_is", int)], "int")
    cache.insert([Guard("f_locals['y']", "type_is", int)], "y int")
    frames = [FrameLike({"x": 1, "y": "s"}), FrameLike({"x": "s", "y": 1})]
    for _ in range(3):
        assert [cache.lookup(f) for f in frames] == ["int", "y int"]
    assert cache.generated <= 4  # empty cache, two inserts, one new order; then reused


def test_shared_guards_are_written_once():
    cache = CodeCache(_fn.__code__)
    for shape in ([2, 3], [4, 3], [5, 3]):
        cache.insert(guards.tensor_guards("f_locals['x']", _tensor(shape))
                     + [Guard("f_globals['paddle']", "id_is", paddle)], tuple(shape))
    src = cache.guard_source()
    assert src.count("is T_Tensor") == 1 and src.count("is I_runtime") == 1
    assert src.count("_a.shape ==") == 3
    glb = {"paddle": paddle}
    for shape in ([2, 3], [4, 3], [5, 3]):
        assert cache.lookup(FrameLike({"x": _tensor(shape)}, glb)) == tuple(shape)
    assert cache.lookup(FrameLike({"x": _tensor([6, 3])}, glb)) is None


def test_guard_source_is_readable_and_stable():
    def make():
        cache = CodeCache(_fn.__code__)
        cache.insert([Guard("f_locals['x']", "type_is", paddle.Tensor),
                      Guard("f_locals['self'].fc1.weight", "tensor_meta", TensorMeta((4, 2), paddle.float32, False)),
                      Guard("f_locals['self'].fc1.bias", "tensor_meta", TensorMeta((4,), paddle.float32, False)),
                      Guard("f_locals['n']", "value_eq", 3)], "c")
        return cache
    src = make().guard_source()
    assert src == make().guard_source()
    assert "def guard__fn(f_locals, f_globals, f_builtins):" in src
    assert "(L_n := f_locals['n'])" in src and "L_n == 3" in src
    # the shared prefix self.fc1 is read once, into its own local
    assert src.count("f_locals['self']") == 1 and "(L_self_fc1 := " in src
    assert "L_self_fc1_weight" in src and "L_self_fc1_bias" in src
    assert "# T_Tensor = <class 'runtime.tensor.Tensor'>" in src
    compile(src, "<guards>", "exec")


def test_miss_reasons_name_the_first_failing_guard_of_each_entry():
    cache = CodeCache(_fn.__code__, keep_misses=3)
    cache.insert(guards.tensor_guards("f_locals['x']", _tensor([2, 3])), "a")
    cache.insert([Guard("f_locals['x']", "type_is", int), Guard("f_locals['n']", "value_eq", 1)], "b")
    assert cache.lookup(FrameLike({"x": _tensor([4, 3]), "n": 1})) is None
    miss = cache.miss_reasons()[-1]
    assert [r.entry for r in miss.reasons] == [1, 0]
    assert miss.reasons[0].expected == "type(f_locals['x']) is int"
    assert miss.reasons[0].actual == "type runtime.tensor.Tensor"
    assert miss.reasons[1].expected.endswith("shape [2, 3], dtype float32, stop_gradient=True")
    assert miss.reasons[1].actual == "tensor of shape [4, 3], dtype float32, stop_gradient=True"
    assert "entry 0: f_locals['x'] is a tensor of shape [2, 3]" in str(miss)
    cache.lookup(FrameLike({"x": 7, "n": 2.0}))
    assert str(cache.miss_reasons()[-1].reasons[0]) == "entry 1: f_locals['n'] == 1; got 2.0 (float)"
    for _ in range(5):
        cache.lookup(FrameLike({"x": 7, "n": 0}))
    assert len(cache.miss_reasons()) == 3  # only the last misses are kept


def test_miss_reason_of_an_unreadable_source():
    cache = CodeCache(_fn.__code__)
    cache.insert([Guard("f_locals['o'].p", "value_eq", 1)], "a")
    assert cache.lookup(FrameLike({"o": Obj()})) is None
    assert cache.careful_lookups == 1
    assert "raised AttributeError" in cache.miss_reasons()[-1].reasons[0].actual
    assert cache.lookup(FrameLike({"o": Obj(p=1)})) == "a"


def test_size_limit_warns_once_then_runs_eagerly():
    def step(x):
        return x
    cache = CodeCache(step.__code__, cache_size_limit=2)
    for x in (1, 2):
        cache.insert([Guard("f_globals['mode']", "value_eq", "train"), Guard("f_locals['x']", "value_eq", x)], x)
    assert cache.lookup(FrameLike({"x": 2}, {"mode": "train"})) == 2
    where = f"step ({step.__code__.co_filename}:{step.__code__.co_firstlineno})"
    with pytest.warns(guards.CacheSizeLimitWarning) as rec:
        assert cache.lookup(FrameLike({"x": 1}, {"mode": "eval"})) is RUN_EAGERLY
    msg = str(rec[0].message)
    assert where in msg and "cache_size_limit=2" in msg
    assert "f_globals['mode'] == 'train'" in msg and "got 'eval' (str)" in msg
    assert cache.lookup(FrameLike({"x": 2}, {"mode": "train"})) is RUN_EAGERLY  # even a former hit
    with pytest.raises(ValueError, match="full"):
        cache.insert([], 3)
    assert "gave up" in cache.describe()


def test_counts_per_entry_and_guard():
    cache = CodeCache(_fn.__code__)
    shared = Guard("f_locals['x']", "type_is", int)
    cache.insert([shared, Guard("f_locals['x']", "value_eq", 1)], 1)
    cache.insert([shared, Guard("f_locals['x']", "value_eq", 2)], 2)
    for v in (1, 1, 2, 3, "s"):
        cache.lookup(FrameLike({"x": v}))
    assert {e.code: e.hits for e in cache.entries} == {1: 2, 2: 1}
    counts = {str(c.guard): (c.hits, c.fails) for c in cache.guard_counts()}
    assert counts["type(f_locals['x']) is int"] == (3, 2)  # "s" failed it for both entries
    assert counts["f_locals['x'] == 1"] == (2, 1) and counts["f_locals['x'] == 2"] == (1, 1)


def test_empty_guard_list_always_matches_and_entries_after_it_still_work():
    cache = CodeCache(_fn.__code__)
    cache.insert([Guard("f_locals['x']", "value_eq", 1)], "one")
    cache.insert([], "anything")
    assert cache.lookup(FrameLike({"x": 1})) == "anything"
    assert CodeCache(_fn.__code__).lookup(FrameLike({})) is None


def test_lookup_on_a_real_frame():
    cache = CodeCache(_fn.__code__)
    cache.insert(guards.tensor_guards("f_locals['x']", _tensor([2]))
                 + [Guard("f_locals['n']", "value_eq", 3), Guard("f_globals['paddle']", "id_is", paddle),
                    Guard("f_builtins['len']", "id_is", len)], "hit")

    def frame_of(x, n):
        return sys._getframe()
    assert cache.lookup(frame_of(_tensor([2]), 3)) == "hit"
    assert cache.lookup(frame_of(_tensor([2]), 4)) is None


def test_many_guards_and_deep_trees_compile():
    cache = CodeCache(_fn.__code__, cache_size_limit=120)
    glb = {f"g{i}": i * 0.5 for i in range(400)}
    cache.insert([Guard(f"f_globals['g{i}']", "value_eq", v) for i, v in enumerate(glb.values())], "wide")
    assert cache.lookup(FrameLike({}, glb)) == "wide"
    deep = CodeCache(_fn.__code__, cache_size_limit=120)
    for i in range(60):  # each entry branches off one guard deeper: a 60-deep tree
        deep.insert([Guard(f"f_locals['v{j}']", "not_none") for j in range(60 - i)]
                    + [Guard("f_locals['k']", "value_eq", i)], i)
    values = {f"v{j}": 1 for j in range(60)}
    for k in (0, 30, 59):
        assert deep.lookup(FrameLike({**values, "k": k})) == k
    assert deep.lookup(FrameLike({**values, "v59": None, "k": 0})) is None
