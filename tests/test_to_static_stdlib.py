"""functools.partial, enum members and the small standard-library calls model code makes, under
to_static: each is compared with eager runs of the same code, captured in one graph with no break,
and its guards checked: a changed partial or enum member misses the cache and translates again, an
equal one hits."""
import enum
import functools
import itertools
import math
import operator

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn
from sot_helpers import assert_same_result, events, jit_of, rand


class Mode(enum.Enum):
    A = 1
    B = 2


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


class Size(enum.IntEnum):
    S = 2
    L = 3


MODE = Mode.A
SCALES = {Mode.A: 2.0, Mode.B: 3.0}


def one_graph(fn, *args):
    """fn's to_static copy: the same result as eager, translated once, with no break and no fallback."""
    jit = jit_of(fn)
    assert_same_result(jit(*args), fn(*args))
    assert events(jit) == [] and jit.sot_translator.translations == 1
    return jit


def same_again(jit, fn, *args):
    """Another call of `jit` gives eager's result; how many translations it has made by now."""
    assert_same_result(jit(*args), fn(*args))
    assert events(jit) == []
    return jit.sot_translator.translations


# ------------------------------------------------------------------ functools.partial made in the frame
def test_partial_made_in_the_frame_is_called_with_its_arguments():
    def f(x):
        h = functools.partial(paddle.add, y=x)
        return h(x)

    one_graph(f, rand(2, 3))


def test_partial_keywords_of_the_call_win_and_positionals_come_first():
    def scaled(a, b, alpha=1.0, beta=0.0):
        return a * alpha + b * beta

    def f(x, y):
        h = functools.partial(scaled, x, alpha=2.0, beta=5.0)
        return h(y, beta=3.0), h(y)

    one_graph(f, rand(2, 3), rand(2, 3))


def test_partial_attributes_are_readable():
    def f(x):
        h = functools.partial(F.leaky_relu, x, negative_slope=0.2)
        return h.func(*h.args, **h.keywords), len(h.args), h.keywords["negative_slope"], h.func is F.leaky_relu

    one_graph(f, rand(2, 3) - 0.5)


def test_partial_of_a_partial_is_flattened_as_eager_does():
    def f(x):
        inner = functools.partial(paddle.clip, min=0.1)
        outer = functools.partial(inner, max=0.5)
        return outer(x), outer.func is paddle.clip, sorted(outer.keywords)

    one_graph(f, rand(2, 3))


def test_partial_keywords_changed_before_the_call_are_seen():
    def f(x):
        h = functools.partial(F.leaky_relu, negative_slope=0.1)
        h.keywords["negative_slope"] = 0.3
        return h(x)

    one_graph(f, rand(2, 3) - 0.5)


def test_partial_of_something_not_callable_raises_as_eager():
    def f(x):
        return functools.partial(3, x)

    jit = jit_of(f)
    with pytest.raises(TypeError, match="callable"):
        f(rand(2))
    with pytest.raises(TypeError, match="callable"):
        jit(rand(2))


def test_partial_returned_from_the_frame_gives_eager_result():
    def f(x):
        return functools.partial(paddle.multiply, y=x * 2)

    x = rand(2, 3)
    jit = jit_of(f)
    got, want = jit(x), f(x)
    assert type(got) is functools.partial and got.func is want.func
    assert_same_result(got(x), want(x))
    assert events(jit)  # not rebuilt after a graph: recorded, and run eagerly


def test_partial_live_at_a_graph_break_gives_eager_result():
    def f(x):
        h = functools.partial(paddle.multiply, y=x)
        if x.sum() > 0:  # decides on a tensor's value
            x = x + 1
        return h(x)

    x = rand(2, 3)
    jit = jit_of(f)
    assert_same_result(jit(x), f(x))
    assert events(jit)  # recorded


SCALED = functools.partial(paddle.scale, scale=2.0)


def partial_of_an_outside_partial(x):
    return functools.partial(SCALED, bias=1.0)(x)


def getter_of_run_time_keys(x):
    return operator.itemgetter(x)({})


def enum_keyed_lookup_by_a_member_made_here(x):
    return x * SCALES[Mode(2)]


def enum_functional_api(x):
    return Mode("Other", "C D")


@pytest.mark.parametrize("fn", [partial_of_an_outside_partial, getter_of_run_time_keys,
                                enum_keyed_lookup_by_a_member_made_here, enum_functional_api])
def test_what_is_not_simulated_runs_as_eagerly(fn):
    x = rand(2, 3)
    jit = jit_of(fn)
    try:
        want = fn(x)
    except Exception as e:  # noqa: BLE001 - whatever eager raises, the JIT raises
        with pytest.raises(type(e)):
            jit(x)
    else:
        assert_same_result(jit(x), want)
    assert events(jit)  # a break (or the frame run eagerly), recorded


# ------------------------------------------------------------------ functools.partial from outside
class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = functools.partial(F.leaky_relu, negative_slope=0.1)

    def forward(self, x):
        return self.act(self.fc(x))


def run_block(block, x):
    return block(x)


def test_partial_attribute_of_a_layer_is_captured():
    one_graph(run_block, Block(), rand(2, 3))


def test_partial_attribute_rebound_misses_only_where_eager_differs():
    block, x = Block(), rand(2, 3)
    jit = one_graph(run_block, block, x)
    block.act = functools.partial(F.leaky_relu, negative_slope=0.1)  # another, equal partial: a hit
    assert same_again(jit, run_block, block, x) == 1
    block.act = functools.partial(F.leaky_relu, negative_slope=0.5)
    assert same_again(jit, run_block, block, x) == 2
    block.act = functools.partial(F.relu)
    assert same_again(jit, run_block, block, x) == 3
    block.act = functools.partial(paddle.clip, min=0.0, max=0.2)
    assert same_again(jit, run_block, block, x) == 4


def test_partial_of_a_bound_method_kept_by_a_layer():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.run = functools.partial(self.impl, scale=2.0)

        def impl(self, x, scale=1.0):
            return self.fc(x) * scale

        def forward(self, x):
            return self.run(x)

    net, x = Net(), rand(2, 3)
    jit = one_graph(run_block, net, x)
    net.run = functools.partial(net.impl, scale=3.0)
    assert same_again(jit, run_block, net, x) == 2


def test_partial_argument_with_positional_arguments_is_guarded():
    def f(act, x):
        return act(x)

    x, y = rand(2, 3), rand(2, 3)
    jit = one_graph(f, functools.partial(paddle.add, y), x)
    assert same_again(jit, f, functools.partial(paddle.add, y), x) == 1  # the same tensor, read by identity
    assert same_again(jit, f, functools.partial(paddle.add, rand(2, 3)), x) == 2
    assert same_again(jit, f, functools.partial(paddle.add, 1.5), x) == 3
    assert same_again(jit, f, functools.partial(paddle.subtract, 1.5), x) == 4


# ------------------------------------------------------------------ enum members
def by_identity(x, m=Mode.A):
    return x * 2 if m is Mode.A else x


def by_equality(x, m):
    return x * 2 if m == Mode.A else x - 1


def by_membership(x, m):
    return x * 3 if m in (Mode.A, Mode.B) else x


def by_global(x):
    return x * 2 if MODE is Mode.A else x


@pytest.mark.parametrize("fn", [by_identity, by_equality, by_membership])
def test_enum_member_argument_is_pinned_by_identity(fn):
    x = rand(2, 3)
    jit = one_graph(fn, x, Mode.A)
    assert same_again(jit, fn, x, Mode.A) == 1
    assert same_again(jit, fn, x, Mode.B) == 2
    assert same_again(jit, fn, x, Mode.A) == 2  # both translations are kept


def test_enum_member_default_argument_is_captured():
    one_graph(by_identity, rand(2, 3))


def test_enum_member_global_rebound_misses_the_cache():
    global MODE
    x = rand(2, 3)
    jit = one_graph(by_global, x)
    try:
        MODE = Mode.B
        assert same_again(jit, by_global, x) == 2
    finally:
        MODE = Mode.A


def test_enum_member_attribute_of_a_layer_is_guarded():
    class Scaled(nn.Layer):
        def __init__(self):
            super().__init__()
            self.mode = Mode.A

        def forward(self, x):
            return x * self.mode.value if self.mode is Mode.A else x + 1

    layer, x = Scaled(), rand(2, 3)
    jit = one_graph(run_block, layer, x)
    layer.mode = Mode.B
    assert same_again(jit, run_block, layer, x) == 2


def test_enum_value_name_lookups_and_dicts_keyed_by_members():
    def f(x, m):
        d = {Mode.A: x, Mode.B: x * 3}
        weighted = [d[k] * k.value for k in Mode]
        members = {Mode.A, Mode.B}
        members.discard(m)
        return (d[m], weighted, m.name, m.value, Mode["B"] is Mode(2), [k.name for k in d],
                {Mode.A, Mode.B} == {m, Mode.B}, Mode(m.value) is m, members.pop() is Mode.A,
                [k is m for k in {Mode.A: 1, Mode.B: 2}.keys()], [k is m for k, _ in dict(d).items()])

    x = rand(2, 3)
    jit = one_graph(f, x, Mode.B)
    assert same_again(jit, f, x, Mode.A) == 2


def test_enum_keyed_global_dict_is_read_through_the_lookup():
    def f(x, m):
        return x * SCALES[m]

    x = rand(2, 3)
    jit = one_graph(f, x, Mode.A)
    assert same_again(jit, f, x, Mode.B) == 2
    SCALES[Mode.B] = 5.0  # the item the lookup read is guarded
    try:
        assert same_again(jit, f, x, Mode.B) == 3
    finally:
        SCALES[Mode.B] = 3.0


def test_enum_keyed_global_dict_get_and_membership():
    def f(x, m):
        return x * SCALES.get(m, 7.0) + (m in SCALES), SCALES.get(m)

    x = rand(2, 3)
    jit = one_graph(f, x, Mode.A)
    assert same_again(jit, f, x, Mode.B) == 2
    del SCALES[Mode.B]  # now missing: `in` and `get` are guarded
    try:
        assert same_again(jit, f, x, Mode.B) == 3
    finally:
        SCALES[Mode.B] = 3.0


def test_unknown_enum_value_raises_as_eager():
    def f(x):
        return x * Mode(7).value

    with pytest.raises(ValueError):
        f(rand(2))
    with pytest.raises(ValueError):
        jit_of(f)(rand(2))


def test_flag_combinations_fold():
    def f(x, p):
        q = p | Perm.W
        return x * q.value if Perm.R in q else x, bool(p & Perm.X), (~p).value, (q & Perm.W) is Perm.W

    x = rand(2, 3)
    jit = one_graph(f, x, Perm.R)
    assert same_again(jit, f, x, Perm.X) == 2


def test_int_enum_meets_tensors_as_its_int():
    def f(x, s):
        return x * s + (s == 2), s + 1

    one_graph(f, rand(2, 3), Size.L)


# ------------------------------------------------------------------ operator, functools, itertools
def test_operator_functions_on_tensors_are_recorded_as_operators():
    def f(x, y):
        return (operator.add(x, 1), operator.mul(x, y), operator.getitem(x, 0), operator.sub(2, y),
                operator.neg(x), operator.lt(x, y), operator.truediv(x, 2))

    one_graph(f, rand(2, 3), rand(2, 3))


def test_reduce_with_operator_mul_of_a_shape():
    def f(x):
        return x.reshape([functools.reduce(operator.mul, x.shape, 1)]), functools.reduce(operator.add, [x, x, x])

    one_graph(f, rand(2, 3))


def test_itemgetter_and_attrgetter_made_in_the_frame():
    def f(x):
        d = {"a": x, "b": x * 2}
        first, second = operator.itemgetter("a", "b")(d)
        pairs = sorted([(3, x), (1, x * 3), (2, x * 2)], key=operator.itemgetter(0))
        return first + second, [p[1] for p in pairs], operator.attrgetter("shape")(x)

    one_graph(f, rand(2, 3))


BY_KEY = operator.itemgetter(1)
SHAPE_OF = operator.attrgetter("shape")


def sorted_by_global_getter(x):
    return [x * p[0] for p in sorted([(3, 1), (1, 2), (2, 0)], key=BY_KEY)], SHAPE_OF(x)


def test_itemgetter_from_outside_is_guarded_on_its_keys():
    global BY_KEY
    x = rand(2, 3)
    jit = one_graph(sorted_by_global_getter, x)
    assert same_again(jit, sorted_by_global_getter, x) == 1
    try:
        BY_KEY = operator.itemgetter(0)
        assert same_again(jit, sorted_by_global_getter, x) == 2
    finally:
        BY_KEY = operator.itemgetter(1)


def test_itertools_chain_product_accumulate():
    def f(x):
        chained = [x * a for a in itertools.chain([1, 2], (3,))]
        flat = [x + a for a in itertools.chain.from_iterable([[1], [2, 3]])]
        grid = [x * (a + b) for a, b in itertools.product([1, 2], [3, 4])]
        squares = list(itertools.product([1, 2], repeat=2))
        totals = list(itertools.accumulate([x, x, x]))
        running = list(itertools.accumulate([1, 2, 3], operator.mul, initial=2))
        return chained, flat, grid, squares, totals, running

    one_graph(f, rand(2, 3))


def test_map_filter_and_more_itertools():
    def f(x, y):
        return (list(map(lambda t: t * 2, [x, y])), [x * a for a in map(int, ["1", "2"])],
                list(map(paddle.add, [x, y, x], [y, x])), [x * a for a in filter(None, [0, 1, 2])],
                list(filter(lambda t: t > 1, [1, 2, 3])), list(itertools.starmap(operator.mul, [(x, 2), (y, 3)])),
                list(itertools.islice([x, y, x * 2, y * 2], 1, None, 2)), list(itertools.islice(range(10), 3)),
                [a + b for a, b in itertools.pairwise([x, y, x])],
                list(itertools.zip_longest([x, y], [1], fillvalue=0.5)),
                list(itertools.repeat(x, 2)), list(itertools.combinations([x, y, x * 3], 2)),
                list(itertools.permutations([1, 2, 3], 2)),
                list(itertools.combinations_with_replacement("ab", 2)), dict.fromkeys(["a", "b"], x))

    one_graph(f, rand(2, 3), rand(2, 3))


def test_classmethods_of_c_classes_hit_the_cache_again():
    def f(x):
        return [x + a for a in itertools.chain.from_iterable([[1], [2, 3]])], dict.fromkeys("ab", 1)

    x = rand(2, 3)
    jit = one_graph(f, x)
    assert same_again(jit, f, x) == 1  # `dict.fromkeys` is a new object on every read


def _assert_logs_like_eager(f):
    """`f(x, log)` compiled gives eager's result and log, in one translation without a break."""
    x = rand(2, 3)
    want_log, got_log = [], []
    want = f(x, want_log)
    jit = jit_of(f)
    assert_same_result(jit(x, got_log), want)
    assert got_log == want_log
    assert events(jit) == [] and jit.sot_translator.translations == 1


def test_lazy_iterators_run_generators_no_further_than_eager():
    def f(x, log):
        def gen(tag):
            for i in range(4):
                log.append((tag, i))
                yield x * i

        first = next(map(lambda t: t + 1, gen("map")))
        kept = next(filter(lambda t: True, gen("filter")))
        window = list(itertools.islice(gen("islice"), 1, 3))
        pair = next(itertools.pairwise(gen("pairwise")))
        longest = next(itertools.zip_longest(gen("a"), gen("b")))
        zipped = list(map(operator.add, gen("short"), [1]))
        log.append("end")
        return first, kept, window, pair, longest, zipped

    _assert_logs_like_eager(f)


def test_chain_and_accumulate_run_generators_no_further_than_eager():
    def f(x, log):
        def gen(tag):
            for i in range(3):
                log.append((tag, i))
                yield x * i

        for item in itertools.chain(gen("a"), gen("b")):
            log.append("item")
            if len(log) > 4:
                break
        totals = itertools.accumulate(gen("c"))
        first = next(totals)
        log.append("after")
        return item, first

    _assert_logs_like_eager(f)


def test_callable_of_functions_made_in_the_frame_and_of_methods():
    def f(x):
        checks = (callable(lambda: 1), callable(functools.partial(F.relu)), callable(x.sum), callable(x),
                  callable(Mode.A), callable(Mode), callable([x]))
        return x * 2 if checks == (True, True, True, False, False, True, False) else x

    one_graph(f, rand(2, 3))


# ------------------------------------------------------------------ probed: already captured before, kept so
def test_small_builtins_model_code_uses_are_captured():
    class Config:
        k = 3

    config = Config()

    def f(x):
        d = {"b": 2, "a": 1}
        n = x.shape[0]
        if n != 2:
            raise ValueError("bad size {} of {}".format(n, x.shape))
        q, r = divmod(7, 2)
        return (x.reshape([-1, math.prod(x.shape)]), [x * v for _, v in sorted(d.items(),
                                                                                              key=lambda kv: kv[1])],
                x * getattr(config, "missing", 2) + getattr(config, "k", 0), len(type(x).__name__),
                f"size {n} of {x.shape[1]:d}", x * d.get("a", 0) + d.get("c", 5),
                [x * a for a in reversed([1, 2, 3])], [a + b for a, b in zip(*[[1, 2], [3, 4]])],
                x * q + r + round(2.6) + abs(-3) + abs(-1.5), min([3, 1, 2], key=lambda v: -v),
                max({"a": 1, "b": 3}, key=lambda k: k == "a"))

    one_graph(f, rand(2, 3))


def test_jit_results_match_numpy():
    def f(x):
        return functools.partial(operator.mul, 2.0)(x) + functools.reduce(operator.add, itertools.chain([x], [x]))

    a = np.random.rand(2, 3).astype("float32")
    jit = one_graph(f, paddle.to_tensor(a))
    np.testing.assert_allclose(jit(paddle.to_tensor(a)).numpy(), 4 * a, rtol=1e-6)


def returns_members(x, mode):
    return x * 2, mode, Mode(2), Size.S if mode is Mode.A else Size.L, paddle.float32, math.sqrt


def test_returning_enum_members_classes_and_functions_returns_the_very_objects():
    """Objects pinned by identity (an enum member, a dtype, a function) are returned as they are (before,
    returning one ran the whole function eagerly)."""
    x = rand(2)
    jit = jit_of(returns_members)
    for mode in (Mode.A, Mode.B, Mode.A):
        got, want = jit(x, mode), returns_members(x, mode)
        assert_same_result(got[0], want[0])
        assert all(g is w for g, w in zip(got[1:], want[1:]))
    assert events(jit) == []
