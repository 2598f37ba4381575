"""An exception raised inside an inlined call and caught by a `try` of its caller is simulated: the
caller's handler runs in the graph (one graph, no fallback), with Python's semantics (`except E as e`,
class matching, `finally` and `with` exits of the callee on the way out, the callee's side effects
before the raise). One that escapes the translated frame, or that only eager code can make, runs the
frame eagerly, which raises the user's exception itself."""
import sys

import pytest

import runtime as paddle
import sot

from sot_helpers import assert_same_result, events, fresh, jit_of, rand


def explained_once(fn, *args):
    """fn eagerly and under sot.explain (a fresh copy): the same result, one graph, no break, no fallback."""
    want = fn(*args)
    report = sot.explain(fresh(fn), *args)
    assert_same_result(report.result, want)
    assert report.graph_count == 1 and report.fallbacks == [] and report.breaks == [], str(report)
    return report


class Cell:
    @property
    def state_dtype(self):
        raise NotImplementedError


def not_implemented():
    raise NotImplementedError


def caught_from_callee(x):
    try:
        d = not_implemented()
    except NotImplementedError:
        d = 1
    return x + d


def caught_from_property(x, cell):
    try:
        dtype = cell.state_dtype
    except NotImplementedError:
        dtype = "float32"
    return x.astype(dtype) * 2


def test_raise_in_callee_is_caught_by_caller():
    explained_once(caught_from_callee, rand(3))


def test_raise_in_property_is_caught_by_caller():
    explained_once(caught_from_property, rand(3), Cell())


def lookup(d, k):
    return d[k]


def key_error_default(x, d):
    try:
        v = lookup(d, "scale")
    except KeyError as e:
        v = len(e.args)
    return x * v


def test_key_error_of_a_known_dict_is_caught():
    explained_once(key_error_default, rand(3), {"shift": 2})
    explained_once(key_error_default, rand(3), {"scale": 3})


def first(items):
    return next(iter(items))


def stop_iteration_default(x, items):
    try:
        v = first(items)
    except StopIteration:
        v = -1
    return x + v


def test_stop_iteration_of_next_is_caught():
    explained_once(stop_iteration_default, rand(3), [])
    explained_once(stop_iteration_default, rand(3), [4])


def check(n):
    if n < 0:
        raise ValueError("negative: %d" % n)
    return n


def inner(log, n):
    try:
        log.append("inner")
        return check(n)
    finally:
        log.append("inner finally")


def outer(log, n):
    with paddle.no_grad():
        log.append("outer")
        return inner(log, n) + 1


def two_levels(x, log, n):
    try:
        v = outer(log, n)
    except (KeyError, ValueError) as e:
        log.append(f"caught {type(e).__name__}: {e}")
        log.append(str(e.args[0]))
        v = 0
    return x * 2 + v, paddle.is_grad_enabled()


@pytest.mark.parametrize("n", [-3, 4])
def test_two_levels_deep_with_finally_and_with_and_the_message(n):
    eager_log, jit_log = [], []
    want = two_levels(rand(3, grad=True), eager_log, n)
    report = sot.explain(fresh(two_levels), rand(3, grad=True), jit_log, n)
    assert report.graph_count == 1 and report.fallbacks == [] and report.breaks == [], str(report)
    assert report.result[1] == want[1] and jit_log == eager_log
    assert (f"caught ValueError: negative: {n}" in jit_log) == (n < 0)


def prints_then_raises(n):
    print("before", n)
    raise KeyError(n)


def print_in_handler(x):
    try:
        prints_then_raises(7)
    except KeyError as e:
        print("handled", e)
    return x + 1


def test_side_effects_and_prints_before_the_raise_are_kept(capsys):
    x = rand(3)
    want = print_in_handler(x)
    eager_out = capsys.readouterr().out
    report = sot.explain(fresh(print_in_handler), x)
    assert_same_result(report.result, want)
    assert capsys.readouterr().out == eager_out == "before 7\nhandled 7\n"
    assert report.graph_count == 1 and report.fallbacks == [], str(report)


def wrong_handler_inside(n):
    try:
        return check(n)
    except KeyError:
        return 100


def next_handler_catches(x, n):
    try:
        v = wrong_handler_inside(n)
    except ValueError as e:
        v = len(str(e))
    return x + v


def test_non_matching_handler_passes_the_exception_to_the_next():
    explained_once(next_handler_catches, rand(3), -12)


def escapes(x, n):
    try:
        v = wrong_handler_inside(n)
    except TypeError:
        v = 0
    return x + v


def test_exception_escaping_the_frame_is_eagers_exception():
    with pytest.raises(ValueError) as eager:
        escapes(rand(3), -5)
    jit = jit_of(escapes)
    with pytest.raises(ValueError) as got:
        jit(rand(3), -5)
    assert str(got.value) == str(eager.value) == "negative: -5"
    assert [code for code, _, _ in events(jit)] == ["SOT-R001"]


def raises_in_loop(x, values):
    total = x
    for v in values:
        try:
            total = total + check(v)
        except ValueError:
            total = total * 2
    return total


def test_raise_inside_a_loop_body():
    explained_once(raises_in_loop, rand(3), [1, -1, 2, -2])


def tensor_op_raises(a, b):
    return paddle.matmul(a, b)


def shape_mismatch_is_not_caught(x, y):
    try:
        return tensor_op_raises(x, y)
    except ValueError:
        return x


def test_a_tensor_ops_error_caught_by_the_caller_runs_eagerly():
    x, y = rand(2, 3), rand(2, 3)
    jit = jit_of(shape_mismatch_is_not_caught)
    assert_same_result(jit(x, y), shape_mismatch_is_not_caught(x, y))  # eager: matmul raises, the handler returns x
    assert events(jit), "the frame ran eagerly, with a reason"


class Custom(Exception):
    def __init__(self, code):
        super().__init__(f"code {code}")


def raise_custom():
    raise Custom(3)


def custom_caught(x):
    try:
        raise_custom()
    except Custom as e:
        return x + len(str(e))


def test_a_user_exception_class_runs_eagerly_with_a_reason():
    x = rand(3)
    jit = jit_of(custom_caught)
    assert_same_result(jit(x), custom_caught(x))
    assert [code for code, _, _ in events(jit)] == ["SOT-R001"]


class Recording:
    """A context manager written in Python that records its exit and may suppress the exception."""

    def __init__(self, log, suppress):
        self.log, self.suppress = log, suppress

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append(("exit", kind is None, None if value is None else str(value)))
        return self.suppress


def raises_in_with(manager, n):
    with manager:
        check(n)
        return n
    return -100


def with_exit_then_handler(x, log, suppress, n):
    try:
        v = raises_in_with(Recording(log, suppress), n)
    except ValueError:
        v = 7
    return x + v


@pytest.mark.parametrize("suppress, n", [(False, -1), (True, -1), (False, 2)])
def test_a_python_context_managers_exit_sees_the_exception(suppress, n):
    eager_log, jit_log = [], []
    x = rand(3)
    want = with_exit_then_handler(x, eager_log, suppress, n)
    report = sot.explain(fresh(with_exit_then_handler), x, jit_log, suppress, n)
    assert_same_result(report.result, want)
    assert jit_log == eager_log
    assert report.graph_count == 1 and report.fallbacks == [], str(report)


def comprehension_raises(x, values):
    try:
        ys = [v if v > 0 else {}["missing"] for v in values]
    except KeyError as e:
        ys = [len(e.args), 10]
    return x + sum(ys)


@pytest.mark.parametrize("values", [[1, -1], [1, 2]])
def test_raise_inside_a_comprehension(values):
    explained_once(comprehension_raises, rand(3), values)


class Config:
    def __init__(self):
        self.hidden = 4


def width_of(config):
    return config.width


def probe_attribute(x, config):
    try:
        w = width_of(config)
    except AttributeError as e:
        w = len(str(e))
    return x * w


def test_attribute_error_of_a_plain_object_is_caught_and_guarded():
    config = Config()
    jit = jit_of(probe_attribute)
    x = rand(3)
    assert_same_result(jit(x, config), probe_attribute(x, config))
    config.width = 3  # the attribute appears: the translation's guard fails, eager's answer again
    assert_same_result(jit(x, config), probe_attribute(x, config))
    assert events(jit) == [] and jit.sot_translator.translations == 2


def compares_exceptions(x):
    caught = []
    for n in (-1, -2):
        try:
            check(n)
        except ValueError as e:
            caught.append(e)
    first, second = caught
    return x + 1, first == first, first == second, str(second)


def test_a_caught_exception_is_one_object():
    explained_once(compares_exceptions, rand(3))


def translate_key(table, name):
    try:
        return table[name]
    except KeyError:
        raise AttributeError(f"no option {name!r}") from None


def option_or_default(x, table):
    try:
        v = translate_key(table, "gain")
    except AttributeError as e:
        v = len(e.args[0])
    return x * v


def test_raise_from_inside_a_handler_is_caught_by_the_caller():
    explained_once(option_or_default, rand(3), {})
    explained_once(option_or_default, rand(3), {"gain": 2})


def import_optional():
    import sot_test_optional_module_absent as module
    return module.VALUE


def optional_dependency(x):
    try:
        v = import_optional()
    except ImportError as e:
        v = len(str(e))
    return x + v


def test_import_error_of_a_missing_module_is_caught_and_guarded(tmp_path, monkeypatch):
    x = rand(3)
    jit = jit_of(optional_dependency)
    assert_same_result(jit(x), optional_dependency(x))
    assert events(jit) == [] and jit.sot_translator.translations == 1
    (tmp_path / "sot_test_optional_module_absent.py").write_text("VALUE = 100\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # the module can be found now: the guard fails
    try:
        assert_same_result(jit(x), optional_dependency(x))
    finally:
        sys.modules.pop("sot_test_optional_module_absent", None)


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)

    def forward(self, x):
        try:
            scale = self.scale
        except AttributeError:
            scale = 2.0
        return self.fc(x) * scale


def test_attribute_probing_on_a_layer_is_caught_and_guarded():
    block, x = Block(), rand(2, 3)
    jit = sot.to_static(fresh(type(block).forward))
    assert_same_result(jit(block, x), block(x))
    block.register_buffer("scale", paddle.to_tensor([3.0]))  # a buffer appears: the guard fails
    assert_same_result(jit(block, x), block(x))
    assert events(jit) == [] and jit.sot_translator.translations == 2


def _raises_value_error():
    raise ValueError("v")


def hashes_a_caught_exception(x):
    try:
        _raises_value_error()
    except ValueError as e:
        return x + 1, hash(e)


def test_the_hash_of_a_caught_exception_is_not_folded():
    """Eager code hashes a new exception object on every call (an identity hash): a folded constant would
    be the same number each time, so the call runs for real."""
    x = rand(2)
    report = sot.explain(fresh(hashes_a_caught_exception), x)
    reasons = [str(e) for e in [*report.breaks, *report.fallbacks]]
    assert any("`hash(e)` hashes an exception" in r for r in reasons), str(report)
    assert_same_result(report.result[0], hashes_a_caught_exception(x)[0])
    assert isinstance(report.result[1], int)
