"""F.scaled_dot_product_attention in Paddle's [batch, seq_len, num_heads, head_dim] layout: values and
a gradient equal Paddle 3.3.1's (bool/float masks, causal, scale, unbatched, grouped-query heads);
to_static equals eager; a static program computes the same; Paddle's argument errors."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from runtime import static
from fixtures.paddle.more_apis_cases import load
from sot_helpers import captured, jit_of

REF = load()["sdpa"]
SDPA = F.scaled_dot_product_attention


def t(name, grad=False):
    return paddle.to_tensor(np.array(REF[name], "float32"), stop_gradient=not grad)


def bool_mask():
    return paddle.to_tensor(np.array(REF["bool_mask"]))


CASES = {
    "plain": lambda: SDPA(t("q"), t("k"), t("v")),
    "bool": lambda: SDPA(t("q"), t("k"), t("v"), attn_mask=bool_mask()),
    "float": lambda: SDPA(t("q"), t("k"), t("v"), attn_mask=t("float_mask")),
    "causal": lambda: SDPA(t("q"), t("kq"), t("vq"), is_causal=True),
    "scale": lambda: SDPA(t("q"), t("k"), t("v"), scale=0.5),
    "unbatched": lambda: SDPA(t("q")[0], t("k")[0], t("v")[0]),
    "gqa": lambda: SDPA(t("gqa_q"), t("gqa_k"), t("gqa_v")),
}


def _close(got, want):
    np.testing.assert_allclose(got, np.array(want, "float32"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_equal_paddle(case):
    _close(CASES[case]().numpy(), REF[case])


def test_query_gradient_equals_paddle():
    q = t("q", grad=True)
    out = SDPA(q, t("k"), t("v"))
    (out * out).sum().backward()
    _close(q.grad.numpy(), REF["plain_grad_q"])


def test_causal_ignores_the_mask_and_masks_the_future():
    q, k, v = t("q"), t("kq"), t("vq")
    _close(SDPA(q, k, v, attn_mask=t("float_mask")[:, :4], is_causal=True).numpy(), REF["causal"])
    first = SDPA(q[:, :1], k[:, :1], v[:, :1]).numpy()  # position 0 attends to itself only
    _close(SDPA(q, k, v, is_causal=True).numpy()[:, :1], first)


def test_dropout_is_applied_to_the_weights_while_training_only():
    q, k, v = t("q"), t("k"), t("v")
    _close(SDPA(q, k, v, dropout_p=0.5, training=False).numpy(), REF["plain"])
    paddle.seed(7)
    got = SDPA(q, k, v, dropout_p=0.5).numpy()
    paddle.seed(7)
    weights = F.softmax(paddle.matmul(q.transpose([0, 2, 1, 3]) * (3 ** -0.5), k.transpose([0, 2, 1, 3]),
                                      transpose_y=True))
    want = paddle.matmul(F.dropout(weights, 0.5), v.transpose([0, 2, 1, 3])).transpose([0, 2, 1, 3])
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)


def test_to_static_equals_eager_with_masks_and_causal():
    def f(q, k, v, kq, vq, fmask, bmask):
        a = SDPA(q, k, v, attn_mask=fmask)
        b = SDPA(q, k, v, attn_mask=bmask)
        c = SDPA(q, kq, vq, is_causal=True)
        return a + b + c

    captured(f, t("q"), t("k"), t("v"), t("kq"), t("vq"), t("float_mask"), bool_mask())


def test_static_program_computes_paddle_values():
    paddle.enable_static()
    try:
        main = static.Program()
        with static.program_guard(main, static.Program()):
            q, k, v = (static.data(n, list(np.shape(REF[n]))) for n in ("q", "k", "v"))
            m = static.data("m", list(np.shape(REF["bool_mask"])), dtype="bool")
            out = SDPA(q, k, v, attn_mask=m)
        feed = {n: np.array(REF[n], "float32") for n in ("q", "k", "v")}
        feed["m"] = np.array(REF["bool_mask"])
        got, = static.Executor().run(main, feed=feed, fetch_list=[out])
    finally:
        paddle.disable_static()
    _close(got, REF["bool"])


@pytest.mark.parametrize("call,error,arg", [
    (lambda: SDPA(t("q"), t("k")[:, :, :, :2], t("v")), ValueError, "head_dim"),
    (lambda: SDPA(t("q"), t("k"), t("v")[:, :4]), ValueError, "value"),
    (lambda: SDPA(t("gqa_q")[:, :, :3], t("gqa_k"), t("gqa_v")), ValueError, "divisible"),
    (lambda: SDPA(t("gqa_q"), t("gqa_k"), t("gqa_v"), enable_gqa=False), ValueError, "enable_gqa"),
    (lambda: SDPA(t("q"), t("k"), t("v"), dropout_p=1.5), ValueError, "dropout_p"),
    (lambda: SDPA(t("q"), t("k"), t("v"), attn_mask=paddle.ones([4, 5], "int32")), TypeError, "attn_mask"),
    (lambda: SDPA(t("q")[0, 0], t("k")[0, 0], t("v")[0, 0]), ValueError, "query"),
])
def test_bad_arguments_raise_paddle_error_types_naming_the_argument(call, error, arg):
    with pytest.raises(error, match=arg):
        call()


def test_to_static_gradients_equal_eager():
    def f(q, k, v, mask):
        return (SDPA(q, k, v, attn_mask=mask) ** 2).sum()

    def grads(fn):
        q, k, v = t("q", grad=True), t("k", grad=True), t("v", grad=True)
        fn(q, k, v, t("float_mask")).backward()
        return [q.grad.numpy(), k.grad.numpy(), v.grad.numpy()]

    for got, want in zip(grads(jit_of(f)), grads(f)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
