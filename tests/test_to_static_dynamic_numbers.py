"""Dynamic numbers (sot.dynamic.numbers): a Python int/float that changes between calls does not make
the function translate once per value. Every test compares the JIT's results with eager's (bit for
bit for tensors: values, dtype, shape) and asserts how many translations were made."""
import re
import warnings

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime import nn
from sot.guards import CacheSizeLimitWarning
from sot_helpers import assert_same_result, jit_of, translators


def same_bits(got, want):
    """Tensors identical bit for bit (dtype, shape, bytes: -0.0 and NaN payloads included)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.numpy().tobytes() == want.numpy().tobytes(), (got.numpy(), want.numpy())


def made_dynamic(translator):
    """Every source the translator's recompiles made dynamic."""
    return [d for r in translator.recompiles for d in r.dynamic]


def _scale_shift(x, s):
    return x * s + s


def test_a_float_argument_changing_every_call_translates_twice_and_matches_eager():
    jit = jit_of(_scale_shift)
    x = paddle.to_tensor(np.linspace(-1, 1, 6, dtype="float32"))
    for s in np.linspace(-3, 3, 13).tolist() + [0.1, 1e-8, 1e30]:
        same_bits(jit(x, s), _scale_shift(x, s))
    translator = jit.sot_translator
    assert translator.translations == 2 and translator.fallbacks == []
    assert made_dynamic(translator) == ["f_locals['s'] (number)"]
    assert "f_locals['s'] (number): dynamic" in translator.shapes.describe()


def _item_then_scale(x):
    s = x.sum().item()  # breaks (SOT-B002): the rest runs in a resume function that receives s
    return x * s - s


def _float_of(x):
    return x / float(x.max())


def _int_of(x):
    n = int(x.sum())
    return x * n, n


@pytest.mark.parametrize("fn", [_item_then_scale, _float_of, _int_of])
def test_a_number_read_from_a_tensor_does_not_make_its_resume_function_translate_per_value(fn):
    jit = jit_of(fn)
    for value in (1.25, 2.5, 3.75, 5.0, 6.25, 7.5):
        x = paddle.to_tensor(np.array([value, 1.0, -0.5], dtype="float32"))
        assert_same_result(jit(x), fn(x))
    root, resume = translators(jit)
    assert [e.code for e in root.breaks] == ["SOT-B002"] and root.translations == 1
    assert resume.translations == 2 and resume.fallbacks == []
    (dynamic,) = made_dynamic(resume)  # the stack item the resume function receives: the number
    assert re.fullmatch(r"f_locals\['__sot_s\d+_\d+'\] \(number\)", dynamic)


_OPS = {
    "x + s": lambda x, s: x + s,
    "s - x": lambda x, s: s - x,
    "x * s": lambda x, s: x * s,
    "s / x": lambda x, s: s / x,
    "x < s": lambda x, s: x < s,
    "s >= x": lambda x, s: s >= x,
    "y += s": lambda x, s: _add_in_place(x * 1, s),
}


def _add_in_place(y, s):
    y += s
    return y


_NUMBERS = {int: [3, -7, 0, 12], float: [0.1, -2.5, 1e10, -0.0, 7.3]}


@pytest.mark.parametrize("op", list(_OPS))
@pytest.mark.parametrize("kind", [int, float])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_tensor_and_number_operators_follow_eager_dtype_rules_bit_for_bit(dtype, kind, op):
    # eager gives a number the dtype of the tensor beside it (a float beside an int tensor: the default
    # float); the captured graph feeds the number as that 0-D tensor, so results are eager's bit for bit
    fn = _OPS[op]
    jit = jit_of(fn)
    x = paddle.to_tensor(np.array([1.5, -2.0, 0.0, 3.0]).astype(dtype))
    for s in _NUMBERS[kind]:
        with np.errstate(all="ignore"):
            same_bits(jit(x, s), fn(x, s))
    assert jit.sot_translator.translations == 2 and jit.sot_translator.fallbacks == []


def _branch(x, s):
    if s > 0:
        return x * s
    return x - s


def test_a_number_deciding_a_python_branch_is_specialised_and_gives_eager_results():
    jit = jit_of(_branch, cache_size_limit=16)
    x = paddle.to_tensor(np.array([1.0, 2.0], dtype="float32"))
    values = [1.5, -1.5, 2.5, -2.5, 1.5, -1.5]
    for s in values:
        same_bits(jit(x, s), _branch(x, s))
    translator = jit.sot_translator
    assert translator.translations == 4  # one per distinct value: its value is needed to simulate the `if`
    static = translator.shapes.numbers.static
    assert list(static) == ["f_locals['s']"] and "needed at translation time" in static["f_locals['s']"]


def _fill(x, s):
    return paddle.full([2], s) * x


def _reshape(x, n):
    return x.reshape([n, -1]) * n


def _loop(x, n):
    for _ in range(n):
        x = x * 2
    return x


@pytest.mark.parametrize("fn, values", [(_fill, [1.5, 2.5, 3.5]), (_reshape, [1, 2, 4]), (_loop, [1, 2, 3])])
def test_a_number_an_op_needs_as_a_value_is_specialised(fn, values):
    jit = jit_of(fn)
    x = paddle.to_tensor(np.arange(4, dtype="float32")[:2] if fn is _fill else np.arange(4, dtype="float32"))
    for v in values:
        same_bits(jit(x, v), fn(x, v))
    assert jit.sot_translator.translations == len(values) and jit.sot_translator.fallbacks == []


def _scale(x, s):
    return x * s


def test_bool_stays_static_and_int_and_float_are_kept_apart():
    jit = jit_of(_scale)
    x = paddle.to_tensor(np.array([1, 2, 3], dtype="int32"))
    for s in (True, False, True):  # a bool is guarded by value
        same_bits(jit(x, s), _scale(x, s))
    assert jit.sot_translator.translations == 2 and made_dynamic(jit.sot_translator) == []
    jit = jit_of(_scale)
    for s in (2, 3, 4, 2.5, 3.5, 4.5):  # int32 * int stays int32, int32 * float is float32
        same_bits(jit(x, s), _scale(x, s))
    assert jit.sot_translator.translations == 3  # int, int made dynamic, float (its own type guard)


def _pass_through(x, s):
    y = x * s
    return s, y.sum().item(), y  # s is on the stack at the break: reloaded, not baked in


def test_a_dynamic_number_is_returned_as_the_same_object_also_across_a_break():
    jit = jit_of(_pass_through)
    x = paddle.to_tensor(np.array([1.0, -2.0], dtype="float32"))
    for s in (1.5, 2.5, 3.5, -0.0, float("nan"), 4.5):
        got, want = jit(x, s), _pass_through(x, s)
        assert got[0] is s and want[0] is s
        assert got[1] == want[1] or (np.isnan(want[1]) and np.isnan(got[1]))
        same_bits(got[2], want[2])
    root = translators(jit)[0]
    assert root.translations == 2 and made_dynamic(root) == ["f_locals['s'] (number)"]
    assert all(t.translations <= 2 and t.fallbacks == [] for t in translators(jit))


def _accumulate(x, total):
    loss = (x * x).mean().item()
    total = total + loss * 0.5
    return x * -loss, total


def test_arithmetic_of_dynamic_numbers_is_python_arithmetic_computed_on_every_call():
    jit = jit_of(_accumulate)
    total_jit = total_eager = 0.0
    for step in range(8):
        x = paddle.to_tensor(np.array([0.1 * step, 0.3, -0.7], dtype="float32"))
        (y_jit, total_jit), (y_eager, total_eager) = jit(x, total_jit), _accumulate(x, total_eager)
        same_bits(y_jit, y_eager)
        assert total_jit == total_eager  # exactly: the generated code adds the Python floats itself
    root, resume = translators(jit)
    assert root.translations == 1 and resume.translations == 2
    stack_item, total = sorted(made_dynamic(resume))
    assert re.fullmatch(r"f_locals\['__sot_s\d+_\d+'\] \(number\)", stack_item)
    assert total == "f_locals['total'] (number)"


def _inverse(x, s):
    return x * (1 / s)


def test_a_division_of_a_dynamic_number_is_specialised_and_raises_as_eager():
    jit = jit_of(_inverse)
    x = paddle.ones([2])
    for s in (2.0, 4.0):
        same_bits(jit(x, s), _inverse(x, s))
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        _inverse(x, 0.0)
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        jit(x, 0.0)
    assert "f_locals['s']" in jit.sot_translator.shapes.numbers.static


def test_an_int_out_of_the_tensor_dtype_range_raises_as_eager():
    jit = jit_of(_scale)
    x = paddle.to_tensor(np.array([1, 2], dtype="int32"))
    for s in (2, 3):
        same_bits(jit(x, s), _scale(x, s))
    with pytest.raises(OverflowError) as eager:
        _scale(x, 2 ** 40)
    with pytest.raises(OverflowError) as compiled:
        jit(x, 2 ** 40)
    assert str(compiled.value) == str(eager.value)
    assert jit.sot_translator.translations == 2


SCALE = 2.0


def _global_scale(x):
    return x * SCALE


def test_a_global_number_that_changes_is_dynamic_too():
    global SCALE
    jit = jit_of(_global_scale)
    x = paddle.to_tensor(np.array([1.0, 3.0], dtype="float32"))
    try:
        for SCALE in (2.0, 0.5, -1.25, 3.0):
            same_bits(jit(x), _global_scale(x))
    finally:
        SCALE = 2.0
    assert jit.sot_translator.translations == 2 and made_dynamic(jit.sot_translator) == ["f_globals['SCALE'] (number)"]


def _weighted(x, w):
    return (x * w).sum()


def test_gradients_through_a_dynamic_number_equal_eager():
    jit = jit_of(_weighted)
    data = np.array([0.5, -1.0, 2.0], dtype="float32")
    for w in (0.5, 1.5, -2.25):
        x_jit, x_eager = (paddle.to_tensor(data, stop_gradient=False) for _ in range(2))
        out_jit, out_eager = jit(x_jit, w), _weighted(x_eager, w)
        same_bits(out_jit, out_eager)
        out_jit.backward()
        out_eager.backward()
        same_bits(x_jit.grad, x_eager.grad)
    assert jit.sot_translator.translations == 2


class _MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def _forward(model, x, y, weight):
    loss = F.mse_loss(model(x), y) * weight
    return loss, loss.item()  # .item() breaks: the number goes back through the resume function


def _train(compiled, steps=6):
    """A seeded training loop summing loss.item() (read in the compiled forward); the loss weight is a
    float argument that changes every step."""
    paddle.seed(0)
    model = _MLP()
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=model.parameters())
    rng = np.random.default_rng(0)

    run = jit_of(_forward) if compiled else _forward
    total, losses = 0.0, []
    for i in range(steps):
        x = paddle.to_tensor(rng.standard_normal((5, 4)).astype("float32"))
        y = paddle.to_tensor(rng.standard_normal((5, 1)).astype("float32"))
        loss, value = run(model, x, y, 1.0 / (1 + i))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(value)
        total += value
    return total, losses, run


def test_a_seeded_training_loop_summing_loss_item_stays_compiled():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheSizeLimitWarning)
        total, losses, jit = _train(compiled=True)
    eager_total, eager_losses, _ = _train(compiled=False)
    assert len(set(losses)) == len(losses)  # a new number every step
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(total, eager_total, rtol=1e-6)
    found = translators(jit)
    assert all(t.translations <= 2 and t.fallbacks == [] for t in found)
    assert "f_locals['weight'] (number)" in made_dynamic(found[0])
    assert sum(t.cache.eager_runs for t in found) == 0


def _mixed(x, n, f):
    return x * (n + f)


def test_a_dynamic_int_meeting_a_float_is_specialised_as_its_conversion_may_raise():
    jit = jit_of(_mixed)
    x = paddle.ones([2])
    for n in (1, 2, 3):
        same_bits(jit(x, n, 0.5), _mixed(x, n, 0.5))
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        _mixed(x, 10 ** 400, 0.5)
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        jit(x, 10 ** 400, 0.5)
    assert "f_locals['n']" in jit.sot_translator.shapes.numbers.static


class _Box:
    pass


LAST = None


def _store(x, s, box):
    global LAST
    LAST = s  # side effects replayed after the graph, with this call's number
    box.value = s * 2
    return x ** s


def test_a_dynamic_number_stored_by_a_side_effect_is_this_calls_number():
    global LAST
    jit = jit_of(_store)
    x = paddle.to_tensor(np.array([1.5, 2.0], dtype="float32"))
    try:
        for s in (2.0, 3.0, 0.5, 1.5):
            box_jit, box_eager = _Box(), _Box()
            got = jit(x, s, box_jit)
            assert LAST is s
            LAST = None
            same_bits(got, _store(x, s, box_eager))
            assert LAST is s and box_jit.value == box_eager.value == s * 2
    finally:
        LAST = None
    assert jit.sot_translator.translations == 2 and made_dynamic(jit.sot_translator) == ["f_locals['s'] (number)"]


class _CountingLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        self.calls += 1  # an attribute counter: read, incremented, written back on every call
        return self.fc(x) * self.calls


def test_an_attribute_counter_a_forward_increments_translates_at_most_twice():
    eager, compiled = _CountingLayer(), _CountingLayer()
    compiled.set_state_dict(eager.state_dict())
    sot.to_static(compiled)
    x = paddle.to_tensor(np.ones([2, 3], dtype="float32"))
    for _ in range(5):
        np.testing.assert_array_equal(compiled(x).numpy(), eager(x).numpy())
    assert compiled.calls == eager.calls == 5
    translator = compiled.forward.sot_translator
    assert translator.translations == 2 and made_dynamic(translator) == ["f_locals['self'].calls (number)"]
