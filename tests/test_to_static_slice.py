"""The first end-to-end slice of sot.to_static: straight-line tensor functions, guards, cache, fallback.

Every JIT result is compared with the eager result of the same function on the same inputs.
"""

import sys

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from sot_helpers import assert_same_result, events, fresh, jit_of, rand
from sot.hook.eval_frame import counters

G_SCALE = 3
W = paddle.to_tensor(np.arange(12, dtype="float32").reshape(3, 4) / 10)


def add_one(x):
    return x + 1


def tanh_mul_sub(x, y):
    return paddle.tanh(x) * y - 2


def matmul_relu(x):
    return F.relu(paddle.matmul(x, W) - 0.5)


def method_sum(x):
    return x.sum()


def method_kwargs(x):
    return x.sum(axis=0, keepdim=True) + x.mean(axis=1).reshape([-1, 1])


def tuple_return(x, y):
    s = x + y
    return s, x - y, -s


def folded(x):
    k = 2 * 3 - 1
    return x * (k / 4) + (1 - k)


def reflected(x):
    return 1 - x, 2 / (x + 1), 3 * x, -x + 0.5


def with_global(x):
    return x * G_SCALE + x.sum()


def number_arg(x, k):
    return x * k - k


def chain(x, y):
    a = paddle.exp(x) + paddle.sin(y)
    b = a * a / (paddle.abs(y) + 1)
    return paddle.sqrt(b).sum(axis=-1), a


CASES = [
    (add_one, lambda: (rand(3, 4),)),
    (tanh_mul_sub, lambda: (rand(2, 3), rand(2, 3))),
    (matmul_relu, lambda: (rand(5, 3),)),
    (method_sum, lambda: (rand(4, 2),)),
    (method_kwargs, lambda: (rand(3, 3),)),
    (tuple_return, lambda: (rand(2, 2), rand(2, 2))),
    (folded, lambda: (rand(6),)),
    (reflected, lambda: (rand(2, 5),)),
    (with_global, lambda: (rand(3),)),
    (number_arg, lambda: (rand(2, 3), 2.5)),
    (chain, lambda: (rand(4, 3), rand(4, 3))),
]


@pytest.mark.parametrize("fn,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_jit_equals_eager(fn, inputs):
    args = inputs()
    jit = jit_of(fn)
    assert_same_result(jit(*args), fn(*args))
    assert jit.sot_translator.translations == 1 and jit.sot_translator.fallbacks == []
    assert_same_result(jit(*args), fn(*args))  # from the cache


def test_gradients_flow_through_the_compiled_frame():
    x, y = rand(2, 3, grad=True), rand(2, 3, grad=True)
    tanh_mul_sub(x, y).sum().backward()
    eager = x.grad.numpy().copy(), y.grad.numpy().copy()
    x.clear_grad(), y.clear_grad()
    jit_of(tanh_mul_sub)(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), eager[0], rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), eager[1], rtol=1e-6)


def test_wrapper_looks_like_the_function():
    jit = sot.to_static(add_one)
    assert jit.__wrapped__ is add_one and jit.__name__ == "add_one"
    with_args = sot.to_static(fallback=False, cache_size_limit=2)(add_one)
    assert with_args.__wrapped__ is add_one
    x = rand(2)
    assert_same_result(with_args(x), add_one(x))
    assert sot.symbolic_translate(add_one).__wrapped__ is add_one


def passthrough(x, k):
    return x, k * 2, [x * 2]


def test_returned_inputs_are_the_inputs_themselves():
    x = rand(2)
    jit = jit_of(passthrough)
    out = jit(x, 3)
    assert out[0] is x and out[1] == 6 and isinstance(out[2], list)
    np.testing.assert_array_equal(out[2][0].numpy(), passthrough(x, 3)[2][0].numpy())
    assert jit.sot_translator.translations == 1


def test_second_call_hits_the_cache_without_calling_back():
    jit = jit_of(tanh_mul_sub)
    x, y = rand(2, 3), rand(2, 3)
    jit(x, y)
    before = counters()["callback_calls"]
    for _ in range(3):
        x, y = rand(2, 3), rand(2, 3)
        assert_same_result(jit(x, y), tanh_mul_sub(x, y))
    assert counters()["callback_calls"] == before
    assert jit.sot_translator.translations == 1


def test_wrappers_of_one_function_share_its_code_cache():
    fn = fresh(add_one)
    x = rand(4)
    sot.to_static(fn)(x)
    before = counters()["callback_calls"]
    again = sot.to_static(fn)
    assert_same_result(again(x), add_one(x))
    assert counters()["callback_calls"] == before and again.sot_translator.translations == 0


def test_new_shape_retranslates():
    jit = jit_of(matmul_relu)
    jit(rand(5, 3))
    x = rand(7, 3)
    assert_same_result(jit(x), matmul_relu(x))
    assert jit.sot_translator.translations == 2
    jit(rand(5, 3))
    assert jit.sot_translator.translations == 2  # both entries stay cached


def test_new_constant_argument_retranslates():
    jit = jit_of(number_arg)
    x = rand(2, 2)
    assert_same_result(jit(x, 2.5), number_arg(x, 2.5))
    assert_same_result(jit(x, 4.0), number_arg(x, 4.0))
    assert_same_result(jit(x, 4), number_arg(x, 4))  # int, not float: another translation
    assert jit.sot_translator.translations == 3


def test_changed_global_retranslates(monkeypatch):
    jit = jit_of(with_global)
    x = rand(3)
    assert_same_result(jit(x), with_global(x))
    monkeypatch.setitem(globals(), "G_SCALE", 7)
    assert_same_result(jit(x), with_global(x))
    assert jit.sot_translator.translations == 2


def test_global_tensor_is_read_at_call_time(monkeypatch):
    jit = jit_of(matmul_relu)
    x = rand(2, 3)
    jit(x)
    monkeypatch.setitem(globals(), "W", W * 2)  # same meta: the cached entry runs on the new tensor
    assert_same_result(jit(x), matmul_relu(x))
    assert jit.sot_translator.translations == 1


def loops(x, y):
    out = x
    if x.sum() > y.sum():  # a condition on a tensor needs a graph break
        out = out + y
    return out


LOOP_LINE = loops.__code__.co_firstlineno + 2


def prints(x):
    y = x * 2
    print("y computed", file=sys.stdout)  # to a file: a print that cannot be deferred
    return y


PRINT_LINE = prints.__code__.co_firstlineno + 2


def test_a_tensor_condition_breaks_the_graph_where_it_is():
    x, y = rand(3), rand(3)
    jit = jit_of(loops)
    assert_same_result(jit(x, y), loops(x, y))
    code, reason, where = events(jit)[0]
    assert code == "SOT-B001" and reason == "`x.sum() > y.sum()` decides on a tensor's value"
    assert where == f"{__file__}:{LOOP_LINE}"
    assert jit.sot_translator.fallbacks == [] and jit.sot_translator.translations == 1


def test_fallback_runs_the_frame_for_real(capsys):
    x = rand(2)
    result = jit_of(prints)(x)
    assert capsys.readouterr().out == "y computed\n"
    assert_same_result(result, prints(x))


@pytest.mark.parametrize("fn,quoted,line", [(loops, "`x.sum() > y.sum()`", LOOP_LINE),
                                            (prints, '`print("y computed", file=sys.stdout)`', PRINT_LINE)])
def test_full_graph_mode_raises_graph_break(fn, quoted, line, capsys):
    jit = jit_of(fn, fallback=False)
    with pytest.raises(sot.GraphBreakError) as info:
        jit(rand(3), rand(3)) if fn is loops else jit(rand(3))
    assert info.value.reason.startswith(quoted) and info.value.where == f"{__file__}:{line}"
    assert f"{__file__}:{line}" in str(info.value)
    assert capsys.readouterr().out == ""  # nothing of the frame ran


def test_user_errors_are_the_eager_errors():
    jit = jit_of(matmul_relu, fallback=False)
    with pytest.raises(ValueError) as eager:
        matmul_relu(rand(2, 5))
    with pytest.raises(ValueError) as compiled:
        jit(rand(2, 5))
    assert str(compiled.value) == str(eager.value)


def test_sot_disable_leaves_the_function_untouched(monkeypatch):
    monkeypatch.setenv("SOT_DISABLE", "1")
    assert sot.to_static(add_one) is add_one
    assert sot.to_static(fallback=False)(add_one) is add_one


def test_hook_is_removed_after_the_call():
    from sot.hook.eval_frame import set_eval_frame
    jit_of(add_one)(rand(2))
    assert set_eval_frame(None) is None
