"""Softmax-family ops on extreme logits against numbers recorded from Paddle 3.3.1 (CPU).

Paddle clips the max-shifted logits at -64 before exp, so probabilities never fall below about
exp(-64) relative to the largest one and softmax cross-entropy never exceeds about 64 per sample.
Gradients are Paddle's formulas evaluated at the clipped softmax (softmax - onehot for cross-entropy),
and match finite differences wherever no clip binds."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from helpers import fd_grad, t
from sot_helpers import assert_same_result, jit_of

# name -> (fn(x), logits, {dtype: (forward, gradient of forward.sum())}) as Paddle 3.3.1 printed them.
PADDLE_CASES = {
    "cross_entropy_hard": (
        lambda x: F.cross_entropy(x, t([0]), reduction="none"), [[0.0, 100.0]],
        {"float32": ([64.0], [[-1.0, 1.0]]), "float64": ([64.0], [[-1.0, 1.0]])}),
    "cross_entropy_hard_two_rows": (
        lambda x: F.cross_entropy(x, t([0, 2]), reduction="none"), [[0.0, 70.0, 60.0], [-1.0, 3.0, 2.0]],
        {"float32": ([64.00004577636719, 1.3265626430511475],
                     [[-1.0, 0.9999545812606812, 4.539786823443137e-05],
                      [0.01321288663893938, 0.7213991284370422, -0.7346121072769165]]),
         "float64": ([64.00004539889922, 1.3265626412674705],
                     [[-1.0, 0.9999546021312976, 4.53978687024344e-05],
                      [0.013212886953789414, 0.7213991842739687, -0.7346120712277581]])}),
    "cross_entropy_mean": (
        lambda x: F.cross_entropy(x, t([0, 2])), [[0.0, 70.0, 60.0], [-1.0, 3.0, 2.0]],
        {"float32": (32.66330337524414, [[-0.5, 0.4999772906303406, 2.2698934117215686e-05],
                                         [0.00660644331946969, 0.3606995642185211, -0.36730605363845825]]),
         "float64": (32.663304020083345, [[-0.5, 0.4999773010656488, 2.26989343512172e-05],
                                          [0.006606443476894707, 0.3606995921369843, -0.36730603561387903]])}),
    "cross_entropy_axis0": (
        lambda x: F.cross_entropy(x, t([[0, 1]]), axis=0, reduction="none"), [[0.0, 1.0], [100.0, 2.0]],
        {"float32": ([[64.0, 0.31326165795326233]], [[-1.0, 0.2689414322376251], [1.0, -0.26894140243530273]]),
         "float64": ([[64.0, 0.3132616875182228]], [[-1.0, 0.2689414213699951], [1.0, -0.2689414213699951]])}),
    "cross_entropy_soft": (
        lambda x: F.cross_entropy(x, t(np.array([[0.25, 0.75]], x.numpy().dtype)), soft_label=True,
                                  reduction="none"), [[0.0, 100.0]],
        {"float32": ([[16.0]], [[-0.25, 0.25]]), "float64": ([[16.0]], [[-0.25, 0.25]])}),
    "cross_entropy_label_smoothing": (
        lambda x: F.cross_entropy(x, t([0]), label_smoothing=0.1, reduction="none"), [[0.0, 100.0]],
        {"float32": ([[60.79999923706055]], [[-0.949999988079071, 0.949999988079071]])}),
    "softmax_with_cross_entropy": (
        lambda x: F.softmax_with_cross_entropy(x, t([[0]])), [[0.0, 100.0]],
        {"float32": ([[64.0]], [[-1.0, 1.0]]), "float64": ([[64.0]], [[-1.0, 1.0]])}),
    "softmax": (
        lambda x: F.softmax(x) * t(np.array([[1.0, 2.0, 3.0]], x.numpy().dtype)), [[0.0, 100.0, -10.0]],
        {"float32": ([[1.6038109389511792e-28, 2.0, 4.811432816853538e-28]],
                     [[-1.6038109389511792e-28, 0.0, 1.6038109389511792e-28]]),
         "float64": ([[1.603810890548638e-28, 2.0, 4.811432671645914e-28]],
                     [[-1.603810890548638e-28, 0.0, 1.603810890548638e-28]])}),
    "softmax_axis0": (
        lambda x: F.softmax(x, axis=0) * t(np.array([[1.0, 2.0], [3.0, 4.0]], x.numpy().dtype)),
        [[0.0, 1.0], [100.0, 2.0]],
        {"float32": ([[1.6038109389511792e-28, 0.5378828644752502], [3.0, 2.924234390258789]],
                     [[-3.2076218779023584e-28, -0.3932238817214966], [0.0, 0.3932238519191742]]),
         "float64": ([[1.603810890548638e-28, 0.5378828427399902], [3.0, 2.9242343145200196]],
                     [[-3.207621781097276e-28, -0.39322386648296365], [0.0, 0.39322386648296387]])}),
    "log_softmax": (
        lambda x: F.log_softmax(x), [[0.0, 100.0]],
        {"float32": ([[-64.0, 0.0]], [[1.0, -1.0]]), "float64": ([[-64.0, 0.0]], [[1.0, -1.0]])}),
}
CASE_IDS = [(name, dt) for name, (_, _, refs) in PADDLE_CASES.items() for dt in refs]


@pytest.mark.parametrize("name,dtype", CASE_IDS, ids=[f"{n}-{d}" for n, d in CASE_IDS])
@pytest.mark.parametrize("create_graph", [False, True])
def test_extreme_logits_match_paddle_forward_and_gradient(name, dtype, create_graph):
    fn, logits, refs = PADDLE_CASES[name]
    want_out, want_grad = refs[dtype]
    x = t(np.array(logits, dtype), grad=True)
    out = fn(x)
    (grad,) = paddle.grad(out.sum(), x, create_graph=create_graph)
    rtol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.numpy(), np.array(want_out), rtol=rtol, atol=0)
    np.testing.assert_allclose(grad.numpy(), np.array(want_grad), rtol=rtol, atol=1e-7 if dtype == "float32" else 0)


def test_cross_entropy_of_a_hopeless_logit_is_64_not_the_logit_gap():
    loss = F.cross_entropy(t(np.array([[0.0, 100.0]], np.float32)), t([0]))
    assert float(loss) == 64.0


def _plain_log_softmax(x):
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def test_clip_binds_only_below_minus_64_and_ordinary_rows_match_numpy():
    """Row 0 is ordinary logits, row 1 sits at the edge: -63.5 is kept, -64.5 and -90 become -64."""
    rng = np.random.default_rng(0)
    x = np.stack([rng.normal(size=4) * 5, np.array([10.0, 10.0 - 63.5, 10.0 - 64.5, 10.0 - 90.0])])
    clipped = np.maximum(x - x.max(axis=-1, keepdims=True), -64.0)
    want = np.stack([_plain_log_softmax(x[0]), _plain_log_softmax(clipped[1])])
    assert want[1, 2] == want[1, 3]  # both floored to the same log-probability
    np.testing.assert_allclose(F.log_softmax(t(x)).numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(F.softmax(t(x)).numpy(), np.exp(want), rtol=1e-13, atol=0)
    lab = np.array([1, 3])
    want_ce = -want[[0, 1], lab]
    np.testing.assert_allclose(F.cross_entropy(t(x), t(lab), reduction="none").numpy(), want_ce, rtol=1e-13)
    np.testing.assert_allclose(F.cross_entropy(t(x), t(np.exp(want)), soft_label=True, reduction="none").numpy(),
                               -(np.exp(want) * want).sum(-1, keepdims=True), rtol=1e-13)


def test_gradients_match_finite_differences_of_the_clipped_forward_where_it_is_smooth():
    """Labels and perturbed entries avoid the clipped ones, so the clipped forward is differentiable there."""
    x = np.array([[0.0, 100.0, 99.0], [0.3, -0.2, 1.1]])
    lab = np.array([1, 2])

    def loss_of(xt):
        return F.cross_entropy(xt, t(lab), reduction="sum")

    xt = t(x, grad=True)
    (grad,) = paddle.grad(loss_of(xt), xt)
    fd = fd_grad(lambda: float(loss_of(t(x))), x)
    np.testing.assert_allclose(grad.numpy()[:, 1:], fd[:, 1:], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grad.numpy()[1], fd[1], rtol=1e-6, atol=1e-9)
    # the clipped entry's gradient is Paddle's softmax - onehot there: exp(-64) / sum, not the flat 0
    np.testing.assert_allclose(grad.numpy()[0, 0], np.exp(-64.0) / (1.0 + np.exp(-1.0) + np.exp(-64.0)),
                               rtol=1e-12, atol=0)


def test_to_static_cross_entropy_on_extreme_logits_is_eager_and_paddle():
    def f(x, lab):
        return F.cross_entropy(x, lab, reduction="none"), F.log_softmax(x)

    x, lab = t(np.array([[0.0, 100.0], [2.0, -1.0]], np.float32)), t([0, 0])
    eager = f(x, lab)
    assert_same_result(jit_of(f)(x, lab), eager)
    assert eager[0].numpy()[0] == 64.0
