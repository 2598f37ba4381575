"""Threads: compiled calls from many threads, eager code beside translations, finalizers during them.

Each test runs enough rounds under a tiny switch interval that a race hit one time in a few hundred
fails it; every result is compared with eager results computed before the threads start, and any
exception in any thread fails the test.
"""
import contextlib
import gc
import io
import itertools
import sys
import threading

import numpy as np

import runtime as paddle
import sot
from runtime import static
from sot.hook.eval_frame import get_code_cache
from sot.ir import Meta, SIRBuilder, lower
from sot.translation.translator import Translator
from sot_helpers import fresh, rand, translators

SINK = io.StringIO()


@contextlib.contextmanager
def tiny_switch_interval():
    """Thread switches after (almost) every bytecode, so races show up in a few hundred calls."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def run_threads(*targets):
    """Start every target together, join them; the exceptions they raised (a list, empty on success)."""
    errors = []
    barrier = threading.Barrier(len(targets))

    def guarded(target):
        try:
            barrier.wait()
            target()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def with_item_break(x, c):
    y = x * c + 1.0
    s = y.sum().item()  # graph break
    return y - s


def with_print_break(x, c):
    y = paddle.tanh(x) * c
    print("y", c, file=SINK)  # graph break
    return y + x


def plain(x, c):
    return (x + c) * x


FUNCTIONS = (with_item_break, with_print_break, plain)


def test_compiled_functions_with_breaks_and_recompiles_from_many_threads():
    """4 threads x 150 calls per round, 30 rounds: each round compiles fresh copies, so the threads miss,
    translate and insert into the same caches at once (shapes and constants vary: recompiles)."""
    n_threads, calls = 4, 150
    cases = [(fn_i, rand(n), float(c)) for fn_i in range(len(FUNCTIONS)) for n in (1, 2, 3) for c in (1, 2)]
    want = [FUNCTIONS[i](x, c).numpy() for i, x, c in cases]
    wrong = []
    with tiny_switch_interval():
        for _ in range(30):
            jits = [sot.to_static(fresh(fn)) for fn in FUNCTIONS]

            def work(k, jits=jits):
                for j in range(calls):
                    i = (j * 7 + k * 5) % len(cases)
                    fn_i, x, c = cases[i]
                    got = jits[fn_i](x, c).numpy()
                    if not np.array_equal(got, want[i]):
                        wrong.append((i, got, want[i]))

            errors = run_threads(*(lambda k=k: work(k) for k in range(n_threads)))
            assert errors == [] and wrong == []


def loss_with_break(x, w):
    y = paddle.tanh(x @ w) * 2.0
    s = y.mean().item()  # graph break
    return (y - s).sum() + (x * x).sum()


def test_backward_through_compiled_graphs_from_many_threads():
    """4 threads x 40 forward and backward calls per round, 8 rounds, a fresh copy each round: while one
    thread translates, the others run compiled graphs and their gradient programs (whose output gradients
    the autograd engine makes with eager ops); values and input gradients as eager's."""
    w = rand(3, 3)
    xs = [rand(2, 3, grad=True) for _ in range(4)]
    want = []
    for x in xs:
        out = loss_with_break(x, w)
        out.backward()
        want.append((out.numpy(), x.grad.numpy().copy()))
        x.clear_grad()
    wrong = []
    with tiny_switch_interval():
        for _ in range(8):
            jit = sot.to_static(fresh(loss_with_break))

            def work(k, jit=jit):
                x = xs[k]
                for _ in range(40):
                    out = jit(x, w)
                    out.backward()
                    got = (out.numpy(), x.grad.numpy().copy())
                    x.clear_grad()
                    if not all(np.allclose(g, e, rtol=1e-5, atol=1e-6) for g, e in zip(got, want[k])):
                        wrong.append((k, got))

            errors = run_threads(*(lambda k=k: work(k) for k in range(4)))
            assert errors == [] and wrong == []


def eager_work(x):
    """Plain runtime code: ops, a reduction read back, a Layer built (its parameters created)."""
    layer = paddle.nn.Linear(3, 2)
    y = layer(x * 2.0 + 1.0)
    return (y * 0.0 + paddle.tanh(x).sum()).numpy(), x.mean().item()


def translated_often(x):
    return paddle.tanh(x * 3.0) + x.sum()


def test_eager_threads_compute_while_other_threads_translate():
    """Two eager threads run plain runtime code (never the JIT) while two others translate 40 fresh copies
    each: the eager results are exact, and nothing in them is a static Variable."""
    x = rand(4, 3)
    want_tensor, want_mean = eager_work(x)
    want_translated = translated_often(x).numpy()
    done = threading.Event()
    rounds, wrong = [0], []

    def eager():
        while not done.is_set() or rounds[0] < 50:
            got_tensor, got_mean = eager_work(x)
            if not (np.array_equal(got_tensor, want_tensor) and got_mean == want_mean):
                wrong.append((got_tensor, got_mean))
            rounds[0] += 1

    def translate():
        for _ in range(40):
            got = sot.to_static(fresh(translated_often))(x).numpy()
            if not np.array_equal(got, want_translated):
                wrong.append(got)

    def translating():
        try:
            translate()
        finally:
            done.set()

    with tiny_switch_interval():
        errors = run_threads(eager, eager, translating, translate)
    assert errors == [] and wrong == []


class EagerFinalizer:
    """A finalizer doing eager tensor math (cleanup code that logs a statistic, say)."""

    results: list = []

    def __init__(self, value):
        self.value = value
        self.me = self  # a cycle: only the garbage collector frees it

    def __del__(self):
        t = paddle.to_tensor(np.array([self.value], dtype="float32"))
        try:
            EagerFinalizer.results.append((self.value, (t * 2.0 + 1.0).item()))
        except Exception as e:  # noqa: BLE001 - __del__ cannot raise: recorded for the test
            EagerFinalizer.results.append((self.value, e))


def double(x):
    return x * 2.0


def collect_then_double(x):
    """`double`, letting the garbage collector run in the middle of a replay."""
    gc.collect()
    return double(x)


def sir_of(fn):
    b = SIRBuilder("f")
    b.set_outputs([b.call_api(fn, (b.add_input(Meta((2,), np.dtype("float32"), True)),))])
    return b.build()


def test_a_finalizer_run_in_the_middle_of_a_replay_computes_eagerly():
    """The collector runs finalizers while this thread replays statements in static mode (building the SIR,
    then lowering it): their ops compute eagerly and add nothing to the program being built."""
    EagerFinalizer.results = []
    want_ops = [op.type for op in lower(sir_of(double)).program.global_block().ops]
    for v in range(20):
        EagerFinalizer(float(v))
    sir = sir_of(collect_then_double)
    for v in range(20, 40):
        EagerFinalizer(float(v))
    lowered = lower(sir)
    assert dict(EagerFinalizer.results) == {float(v): v * 2.0 + 1.0 for v in range(40)}
    assert [op.type for op in lowered.program.global_block().ops] == want_ops


def test_finalizers_during_translations_compute_eagerly():
    """Garbage with finalizers is collected often (a low gc threshold) while two threads translate: some made
    by each translating thread just before it translates, more by a third thread meanwhile."""
    EagerFinalizer.results = []
    x = rand(3)
    want = translated_often(x).numpy()
    wrong, values, finished = [], itertools.count(), [threading.Event(), threading.Event()]

    def make_garbage(n):
        for _ in range(n):
            EagerFinalizer(float(next(values)))

    def translate(finished):
        try:
            for _ in range(50):
                make_garbage(10)
                got = sot.to_static(fresh(translated_often))(x).numpy()
                if not np.array_equal(got, want):
                    wrong.append(got)
        finally:
            finished.set()

    def make_garbage_meanwhile():
        for _ in range(1000):
            if all(e.is_set() for e in finished):
                break
            make_garbage(1)

    threshold = gc.get_threshold()
    gc.set_threshold(50)
    try:
        with tiny_switch_interval():
            errors = run_threads(lambda: translate(finished[0]), lambda: translate(finished[1]),
                                 make_garbage_meanwhile)
    finally:
        gc.set_threshold(*threshold)
    gc.collect()
    assert errors == [] and wrong == []
    made = next(values)
    assert sorted(EagerFinalizer.results) == [(float(v), v * 2.0 + 1.0) for v in range(made)]


def test_a_layer_bound_by_a_replay_is_untouched_for_other_threads():
    """Lowering a SIR that calls a Layer binds its parameters to Variables; another thread calling the same
    Layer eagerly meanwhile sees its own parameters (and gets the eager result)."""
    layer = paddle.nn.Linear(3, 2)
    x = rand(2, 3)
    want = layer(x).numpy()
    b = SIRBuilder("f")
    b.set_outputs([b.call_layer(layer, (b.add_input(Meta.from_tensor(x)),))])
    sir = b.build()
    done, wrong, calls = threading.Event(), [], [0]

    def lowering():
        try:
            for _ in range(300):
                lower(sir)
        finally:
            done.set()

    def eager():
        while not done.is_set() or calls[0] < 300:
            calls[0] += 1
            if not isinstance(layer.weight, paddle.Tensor) or isinstance(layer.weight, static.Variable):
                wrong.append(type(layer.weight))
            got = layer(x).numpy()
            if not np.array_equal(got, want):
                wrong.append(got)

    with tiny_switch_interval():
        errors = run_threads(lowering, eager)
    assert errors == [] and wrong == []


def test_static_mode_and_program_guard_are_per_thread():
    """paddle.enable_static() and program_guard in one thread leave another thread eager, on the default programs."""
    entered, leave = threading.Event(), threading.Event()
    main, guarded = static.default_main_program(), static.Program()

    def static_thread():
        paddle.enable_static()
        try:
            with static.program_guard(guarded):
                entered.set()
                leave.wait()
        finally:
            paddle.disable_static()

    t = threading.Thread(target=static_thread)
    t.start()
    try:
        entered.wait()
        assert paddle.in_dynamic_mode() and static.default_main_program() is main
        x = rand(2)
        np.testing.assert_array_equal((x * 2.0).numpy(), x.numpy() * 2.0)
    finally:
        leave.set()
        t.join()


def test_one_translation_per_code_when_threads_miss_together():
    """Threads missing together on one code object: one translates, the others wait and then hit."""
    n_threads = 4
    x = rand(3)
    want = plain(x, 2.0).numpy()
    for _ in range(20):
        jit = sot.to_static(fresh(plain))
        results = []
        with tiny_switch_interval():
            errors = run_threads(*(lambda: results.append(jit(x, 2.0).numpy()) for _ in range(n_threads)))
        assert errors == []
        assert all(np.array_equal(r, want) for r in results) and len(results) == n_threads
        assert sum(t.translations for t in translators(jit)) == 1


def test_translators_of_one_code_made_together_share_its_cache():
    """Translators of one code object made by several threads at once (callees translated on their own at
    breaks, in translations running in parallel) all use the one cache the hook reads."""
    for _ in range(30):
        code = fresh(plain).__code__
        made = []
        with tiny_switch_interval():
            errors = run_threads(*(lambda: made.append(Translator(code)) for _ in range(4)))
        assert errors == []
        assert all(t.cache is get_code_cache(code) for t in made)
