"""to_static inlines calls of Python code into the caller's graph: functions, closures, methods,
properties, super(), lambdas, comprehensions, generator expressions and Layer forwards.

Every JIT result is compared with the eager result of the same code on the same inputs; a frame
that must be captured is checked to have been translated with no fallback.
"""
import copy
import sys

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime import nn
from sot_helpers import assert_same_result, captured, events, fresh, jit_of, rand

K = 2.0


def scale(x, k=K):
    return x * k


def three_deep(x):
    return two_deep(x) + 1


def two_deep(x):
    return one_deep(x) * 2


def one_deep(x):
    return paddle.tanh(x)


def calls_nested(x):
    return three_deep(x) - scale(x)


def star_args(*xs, bias=0.5, **named):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    for key in sorted(named):
        total = total * named[key]
    return total + bias


def calls_with_star_args(x, y):
    args = (x, y)
    options = {"a": 2.0, "b": 3.0}
    return star_args(*args, bias=1.0, **options), star_args(x)


def keyword_only(x, *, power=2, shift):
    return x ** power + shift


def calls_keyword_only(x):
    return keyword_only(x, shift=1.0) + keyword_only(x, power=3, shift=0.0)


def lambdas_and_closures(x, y):
    offset = 3.0
    add_offset = lambda t: t + offset  # noqa: E731
    def times_y(t):
        return t * y
    return times_y(add_offset(x))


def nonlocal_counter(x):
    count = 0
    def bump(t):
        nonlocal count
        count += 1
        return t * count
    y = bump(x)
    y = bump(y)
    return y, count


def generator_expression(xs):
    return tuple(t * 2 for t in xs), sum(i * i for i in range(4))


def dict_comprehension(x):
    parts = {f"p{i}": x * i for i in range(3)}
    return parts["p2"] - parts["p1"]


def tensor_attributes(x):
    rows, cols = x.shape
    flat = x.reshape([rows * cols])
    return flat * x.ndim, len(x), x.size, x.dtype == paddle.float32


def f_strings(x, n):
    label = f"layer_{n:02d}/{'x'!r}"
    return x + len(label), label


def in_place_on_fresh_tensors(x, y):
    z = x + y
    z += 1
    z *= y
    n = 3
    n -= 1
    items = [x]
    items += [y]
    return z, n, len(items)


def in_place_with_cast(x):
    z = x * 1  # float32
    z += paddle.ones([2], dtype="float64")  # eager keeps z's dtype
    return z


def in_place_methods_on_fresh_tensors(x, y):
    z = x * 2
    z.add_(y)
    z.clip_(0.5, 1.5)
    z.scale_(3.0)
    return z


def store_subscript(x):
    cache = {"a": x}
    cache["b"] = x * 2
    values = [x, x]
    values[1] = x + 1
    return cache["b"] + values[1]


def getattr_hasattr(x, obj):
    k = getattr(obj, "k", 1.0)
    fallback = getattr(obj, "missing_with_default", 5.0) if hasattr(obj, "k") else 0.0
    return x * k + fallback


def star_unpack(xs):
    first, *middle, last = xs
    return first + last, len(middle)


def math_on_constants(x):
    import math
    return x * math.sqrt(4.0) + math.pi


class Scaler:
    factor = 2.0

    def __init__(self, k):
        self.k = k

    @property
    def double(self):
        return self.k * 2

    @staticmethod
    def shift(t):
        return t + 1

    @classmethod
    def times_factor(cls, t):
        return t * cls.factor

    def apply(self, t):
        return self.shift(self.times_factor(t)) * self.double


class ScalerChild(Scaler):
    def apply(self, t):
        return super().apply(t) - self.k


def method_calls(x, obj):
    return obj.apply(x)


CASES = [
    (calls_nested, lambda: (rand(2, 3),)),
    (calls_with_star_args, lambda: (rand(3), rand(3))),
    (calls_keyword_only, lambda: (rand(3),)),
    (lambdas_and_closures, lambda: (rand(2), rand(2))),
    (nonlocal_counter, lambda: (rand(2),)),
    (generator_expression, lambda: ([rand(2), rand(2)],)),
    (dict_comprehension, lambda: (rand(2),)),
    (tensor_attributes, lambda: (rand(2, 3),)),
    (f_strings, lambda: (rand(2), 7)),
    (in_place_on_fresh_tensors, lambda: (rand(3), rand(3))),
    (in_place_with_cast, lambda: (rand(2),)),
    (in_place_methods_on_fresh_tensors, lambda: (rand(3), rand(3))),
    (store_subscript, lambda: (rand(2),)),
    (getattr_hasattr, lambda: (rand(2), Scaler(3.0))),
    (star_unpack, lambda: ([rand(2), rand(2), rand(2), rand(2)],)),
    (math_on_constants, lambda: (rand(2),)),
    (method_calls, lambda: (rand(2), Scaler(1.5))),
    (method_calls, lambda: (rand(2), ScalerChild(1.5))),
]


@pytest.mark.parametrize("fn,inputs", CASES, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_inlined_calls_are_captured_and_match_eager(fn, inputs):
    captured(fn, *inputs())


def test_a_closure_decorated_function_reads_its_free_tensor_on_every_call():
    weight = rand(3)

    def uses_free_tensor(x):
        return x * weight

    jit = sot.to_static(uses_free_tensor)
    x = rand(3)
    assert_same_result(jit(x), uses_free_tensor(x))
    weight = rand(3)  # the cell now holds another tensor: the compiled code loads it again  # noqa: F841
    assert_same_result(jit(x), uses_free_tensor(x))
    assert jit.sot_translator.translations == 1 and jit.sot_translator.fallbacks == []


def test_a_changed_global_of_another_module_translates_again():
    namespace = {"paddle": paddle, "FACTOR": 2.0}
    exec("def helper(x):\n    return x * FACTOR\n", namespace)
    helper = namespace["helper"]

    def calls_helper(x):
        return helper(x) + 1

    jit = sot.to_static(calls_helper)
    x = rand(2)
    assert_same_result(jit(x), calls_helper(x))
    namespace["FACTOR"] = 5.0  # read through helper.__globals__: guarded there
    assert_same_result(jit(x), calls_helper(x))
    assert jit.sot_translator.translations == 2


def test_a_changed_method_attribute_translates_again():
    obj = Scaler(2.0)
    jit = jit_of(method_calls)
    x = rand(2)
    assert_same_result(jit(x, obj), method_calls(x, obj))
    obj.k = 4.0
    assert_same_result(jit(x, obj), method_calls(x, obj))
    assert jit.sot_translator.translations == 2
    assert_same_result(jit(x, ScalerChild(4.0)), method_calls(x, ScalerChild(4.0)))  # another type: its methods
    assert jit.sot_translator.translations == 3


# ----- Layers -----

class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


class SmallCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2D(4)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(4 * 2 * 2, 3))

    def forward(self, x):
        return self.fc(self.pool(F.relu(self.bn(self.conv(x)))))


def run_model(model, x):
    return model(x)


@pytest.mark.parametrize("make,shape", [(MLP, (2, 4)), (SmallCNN, (2, 2, 4, 4))], ids=["mlp", "cnn"])
def test_layer_forward_matches_eager_in_eval_and_train_mode_with_gradients(make, shape):
    x = rand(*shape)
    for training in (False, True):
        paddle.seed(0)
        eager_model = make()
        jit_model = copy.deepcopy(eager_model)
        for m in (eager_model, jit_model):
            m.train() if training else m.eval()
        jit = jit_of(run_model)
        for _ in range(2):  # translation, then the cache hit
            if training:
                paddle.seed(1)  # dropout draws the same mask in both runs
            want = run_model(eager_model, x)
            if training:
                paddle.seed(1)
            got = jit(jit_model, x)
            assert_same_result(got, want)
        assert jit.sot_translator.fallbacks == [] and jit.sot_translator.translations == 1
        for (name, a), (_, b) in zip(eager_model.state_dict().items(), jit_model.state_dict().items()):
            np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=name)  # BatchNorm running stats
        paddle.seed(2)
        run_model(eager_model, x).sum().backward()
        paddle.seed(2)
        jit(jit_model, x).sum().backward()
        for a, b in zip(eager_model.parameters(), jit_model.parameters()):
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_an_optimizer_step_between_calls_needs_no_new_translation():
    model = MLP()
    model.eval()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    jit = jit_of(run_model)
    x = rand(2, 4)
    for _ in range(3):
        loss = jit(model, x).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        with sot.disable():
            assert_same_result(jit(model, x), run_model(model, x))
    assert jit.sot_translator.translations == 1  # parameters are bound, not baked in


def test_to_static_of_a_layer_translates_its_forward_and_keeps_the_layer():
    model = MLP()
    model.eval()
    x = rand(2, 4)
    want = model(x)
    same = sot.to_static(model)
    assert same is model and isinstance(same, MLP)
    assert_same_result(model(x), want)
    assert model.forward.sot_translator.translations == 1 and model.forward.sot_translator.fallbacks == []
    assert set(model.state_dict()) == set(MLP().state_dict()) and len(model.parameters()) == 4
    model.train()
    paddle.seed(3)
    got = model(x)
    paddle.seed(3)
    with sot.disable():
        assert_same_result(got, model(x))


def test_a_forward_hook_is_honoured():
    model = MLP()
    model.eval()
    x = rand(2, 4)
    jit = jit_of(run_model)
    assert_same_result(jit(model, x), model(x))
    handle = model.register_forward_post_hook(lambda layer, inputs, out: out * 0)
    assert_same_result(jit(model, x), model(x))  # the guard on the hook dict failed: new translation
    handle.remove()
    assert_same_result(jit(model, x), model(x))


# ----- what still runs eagerly, never wrongly -----

def raises_value_error(x, n):
    if n > 2:
        raise ValueError(f"n must be at most 2, got {n}")
    return x * n


def test_a_user_exception_is_raised_with_eager_type_and_message_in_both_modes():
    for fallback in (True, False):
        jit = jit_of(raises_value_error, fallback=fallback)
        x = rand(2)
        assert_same_result(jit(x, 2), raises_value_error(x, 2))
        with pytest.raises(ValueError, match="n must be at most 2, got 3"):
            jit(x, 3)
        assert jit.sot_translator.translations == 1


def bad_call(x):
    return scale(x, 1.0, 2.0)


def test_a_call_eager_code_rejects_raises_cpythons_type_error():
    jit = jit_of(bad_call)
    with pytest.raises(TypeError) as got:
        jit(rand(2))
    with pytest.raises(TypeError) as want:
        bad_call(rand(2))
    assert str(got.value) == str(want.value)


@sot.not_to_static
def eager_only(x):
    return x + 1


def calls_eager_only(x):
    return eager_only(x) * 2


def set_value_of_argument(x):
    x.set_value(paddle.zeros([2]))
    return x + 1


def calls_backward(x):
    y = (x * x).sum()
    y.backward()
    return y


def in_place_on_view(x):
    y = x + 0
    z = y.reshape([4])
    y += 1  # in eager, z sees the update when no grad is recorded: must not be captured as a copy
    return z


def deep_recursion(x, n):
    return x if n == 0 else deep_recursion(x + 1, n - 1)


@pytest.mark.parametrize("fn,inputs,reason", [
    (calls_eager_only, lambda: (rand(2),), "`eager_only(x)` calls eager_only, which is marked sot.not_to_static"),
    (in_place_on_view, lambda: (rand(2, 2),), "`y += 1` updates a tensor in place"),
    (set_value_of_argument, lambda: (rand(2),), "calls Tensor.set_value, which changes a tensor in place"),
    (calls_backward, lambda: (rand(2, grad=True),), "Tensor.backward"),
    (deep_recursion, lambda: (rand(2), 40), "recurses into deep_recursion deeper than"),
], ids=["not_to_static", "view", "set_value", "backward", "recursion"])  # in-place on arguments: test_in_place_inputs
def test_what_cannot_be_captured_breaks_there_with_its_reason_and_is_cached(fn, inputs, reason):
    args = inputs()
    jit = jit_of(fn)
    want = fn(*copy.deepcopy(args))
    assert_same_result(jit(*copy.deepcopy(args)), want)
    seen = events(jit)
    assert any(reason in r and where.startswith(__file__) for _, r, where in seen), seen
    assert_same_result(jit(*copy.deepcopy(args)), want)
    assert events(jit) == seen  # served from the caches, not simulated again


def test_recursion_on_python_values_is_unrolled():
    captured(deep_recursion, rand(2), 3)


def test_fresh_copies_keep_their_own_code_caches():
    a, b = jit_of(scale), sot.to_static(fresh(scale))
    x = rand(2)
    assert_same_result(a(x), scale(x))
    assert_same_result(b(x, 3.0), scale(x, 3.0))
    assert a.sot_translator.cache is not b.sot_translator.cache


class Stack(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(3, 3) for _ in range(3)])
        self.heads = nn.LayerDict({"a": nn.Linear(3, 2), "b": nn.Linear(3, 2)})

    def forward(self, x):
        for block in self.blocks:
            x = F.relu(block(x))
        x = self.blocks[-1](x) + self.blocks[0](x) * len(self.blocks)
        head = "a" if "a" in self.heads else "b"
        return self.heads[head](x)


def test_layer_containers_iterate_index_and_count_inlined():
    model = Stack()
    model.eval()
    jit = captured(run_model, model, rand(2, 3))
    assert jit.sot_translator.translations == 1


def numpy_scalar_and_iterators(x, s):
    items = iter([x, x * 2])
    first = next(items)
    second = next(items, None)
    return first * s + second, next(items, 7)


def test_numpy_scalars_fold_and_are_guarded_by_value():
    jit = captured(numpy_scalar_and_iterators, rand(2), np.float32(1.5))
    x = rand(2)
    assert_same_result(jit(x, np.float32(2.5)), numpy_scalar_and_iterators(x, np.float32(2.5)))
    assert_same_result(jit(x, np.float64(1.5)), numpy_scalar_and_iterators(x, np.float64(1.5)))
    assert jit.sot_translator.translations == 3  # a new value, then a new type


def while_and_assert(x, n):
    assert n >= 0, "n must be non-negative"
    while n > 0:
        x = x * 0.5
        n -= 1
    return x


def test_while_loops_and_assertions_on_python_values():
    jit = captured(while_and_assert, rand(2), 3)
    with pytest.raises(AssertionError, match="n must be non-negative"):
        jit(rand(2), -1)  # (pytest rewrites this module's asserts into calls: they break, then raise)


class ShapeError(Exception):
    pass


def raises_own_exception(x):
    if x.shape[0] != 3:
        raise ShapeError(f"expected 3 rows, got {x.shape[0]}")
    return x


def prints(x):
    print("value:", x.shape, file=sys.stdout)  # to a file: a print that cannot be deferred
    return x + 1


def test_user_exception_classes_run_eagerly_and_prints_break(capsys):
    jit = jit_of(raises_own_exception)
    with pytest.raises(ShapeError, match="expected 3 rows, got 2"):
        jit(rand(2))
    x = rand(3)
    assert_same_result(jit(x), x)
    jit = jit_of(prints)
    x = rand(2)
    assert_same_result(jit(x), prints(x))
    assert capsys.readouterr().out == "value: [2]\nvalue: [2]\n"
    ((code, reason, _),) = events(jit)
    assert code == "SOT-B003" and "print" in reason
