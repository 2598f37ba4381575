"""CTC, Poisson and Gaussian NLL losses, the loss layers over existing functionals, LocalResponseNorm,
SpectralNorm and paddle.nn.utils (weight_norm, spectral_norm, parameters_to_vector): recorded real-Paddle
numbers (fixtures/paddle/distribution), references written here (CTC by enumerating every alignment),
gradients against finite differences, errors, and the JIT against eager."""
import itertools
import math

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from fixtures.paddle.distribution.cases import LOSSES, load
from helpers import fd_grad, t
from sot_helpers import jit_of
from test_distribution import assert_matches_recorded

REF = load()["losses"]


@pytest.mark.parametrize("case", sorted(LOSSES))
def test_outputs_match_paddle(case):
    want = dict(REF[case])
    if case == "spectral_norm_layer":
        del want["grad"]  # Paddle's kernel computes G * (1 - u v^T sum(out)) / sigma, not the derivative (below)
    assert_matches_recorded(LOSSES[case](paddle), want)


# ---------------------------------------------------------------- CTC
def ctc_by_enumeration(logits, label, blank):
    """-log of the total probability of every length-T path that collapses (merge repeats, drop blanks) to
    `label`, under softmax(logits) [T, C]."""
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(logits.shape[1]), repeat=logits.shape[0]):
        merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
        if [c for c in merged if c != blank] == list(label):
            total += np.prod(p[np.arange(len(path)), path])
    return -math.log(total) if total > 0 else math.inf


def ctc(x, labels, in_len, lab_len, **kw):
    return F.ctc_loss(x, t(np.asarray(labels, "int32")), t(np.asarray(in_len, "int64")),
                      t(np.asarray(lab_len, "int64")), **kw)


@pytest.mark.parametrize("blank, labels, in_len, lab_len", [
    (0, [[1, 2], [2, 2]], [5, 4], [2, 2]),
    (0, [[1, 1], [2, 0]], [3, 5], [2, 1]),
    (2, [[0, 1], [1, 1]], [4, 5], [2, 2]),
    (1, [[0, 0], [2, 0]], [5, 2], [0, 1]),
])
def test_ctc_loss_is_the_negative_log_of_all_alignments(blank, labels, in_len, lab_len):
    x = np.random.default_rng(4).normal(size=(5, 2, 3))
    got = ctc(t(x), labels, in_len, lab_len, blank=blank, reduction="none").numpy()
    want = [ctc_by_enumeration(x[:in_len[b], b], labels[b][:lab_len[b]], blank) for b in range(2)]
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_ctc_gradient_matches_finite_differences_and_norm_by_times_scales_it_only():
    x = np.random.default_rng(5).normal(size=(6, 2, 4))
    args = ([[1, 3, 3], [2, 1, 0]], [6, 5], [3, 2])
    w = np.array([0.7, 1.3])

    def loss(norm_by_times=False):
        xt = t(x, grad=True)
        out = ctc(xt, *args, reduction="none", norm_by_times=norm_by_times)
        (out * t(w)).sum().backward()
        return out.numpy(), xt.grad.numpy()

    plain, g = loss()
    want = fd_grad(lambda: float((ctc(t(x), *args, reduction="none").numpy() * w).sum()), x)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    scaled, g_norm = loss(norm_by_times=True)
    np.testing.assert_array_equal(scaled, plain)
    np.testing.assert_allclose(g_norm, g / np.array([6.0, 5.0])[None, :, None], rtol=1e-12)


def test_ctc_reductions_infeasible_samples_and_padding_past_the_lengths():
    x = t(np.random.default_rng(6).normal(size=(4, 2, 3)))
    none = ctc(x, [[1, 2], [1, 1]], [4, 2], [2, 2], reduction="none").numpy()
    padded = ctc(x, [[1, 2, -1, 7], [1, 1, 9, -5]], [4, 2], [2, 2], reduction="none").numpy()
    np.testing.assert_array_equal(padded, none)  # whatever pads the labels past their lengths is ignored
    assert none[1] == 0.0  # 1, 1 needs three frames (1 blank 1): warp-ctc gives such a sample 0
    np.testing.assert_allclose(ctc(x, [[1, 2], [1, 1]], [4, 2], [2, 2]).numpy(), (none / 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(ctc(x, [[1, 2], [1, 1]], [4, 2], [2, 2], reduction="sum").numpy(), none.sum(),
                               rtol=1e-6)


@pytest.mark.parametrize("kw, err", [
    ({"blank": 3}, ValueError),
    ({"in_len": [5, 2]}, ValueError),
    ({"lab_len": [3, 1]}, ValueError),
    ({"labels": np.array([[1.0, 2.0], [1.0, 0.0]])}, TypeError),
    ({"labels": np.array([[1, 3], [1, 0]], "int32")}, ValueError),
    ({"reduction": "max"}, ValueError),
])
def test_ctc_bad_arguments_raise(kw, err):
    args = {"labels": np.array([[1, 2], [1, 0]], "int32"), "in_len": [4, 2], "lab_len": [2, 1]}
    extra = {k: v for k, v in kw.items() if k not in args}
    args.update({k: v for k, v in kw.items() if k in args})
    labels = t(args["labels"]) if args["labels"].dtype.kind == "f" else t(args["labels"].astype("int32"))
    with pytest.raises(err):
        F.ctc_loss(t(np.zeros((4, 2, 3), "float32")), labels, t(np.asarray(args["in_len"], "int64")),
                   t(np.asarray(args["lab_len"], "int64")), **extra)


def _ctc_step(x, labels, in_len, lab_len):
    return paddle.nn.CTCLoss(blank=0)(x, labels, in_len, lab_len).mean() * 2.0


def test_to_static_of_ctc_loss_matches_eager():
    rng = np.random.default_rng(8)
    data = rng.normal(size=(5, 2, 4)).astype("float32")
    others = (t(np.array([[1, 2], [3, 3]], "int32")), t(np.array([5, 4], "int64")), t(np.array([2, 2], "int64")))

    def run(fn):
        x = t(data, grad=True)
        out = fn(x, *others)
        out.backward()
        return out.numpy(), x.grad.numpy()

    want = run(_ctc_step)
    jit = jit_of(_ctc_step)
    for _ in range(2):
        got = run(jit)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


# ---------------------------------------------------------------- Poisson / Gaussian NLL
X = np.array([[0.5, -0.2, 1.5], [0.1, 2.0, 0.7]])
Y = np.array([[1.0, 0.0, 3.0], [2.0, 1.0, 0.5]])


def test_poisson_nll_closed_forms_and_gradient():
    np.testing.assert_allclose(F.poisson_nll_loss(t(X), t(Y), reduction="none").numpy(), np.exp(X) - Y * X)
    xp = np.abs(X) + 0.1
    stirling = np.where(Y > 1, Y * np.log(np.where(Y > 1, Y, 1)) - Y + 0.5 * np.log(2 * np.pi * np.where(Y > 1, Y, 1)), 0)
    np.testing.assert_allclose(F.poisson_nll_loss(t(xp), t(Y), log_input=False, full=True, reduction="sum").numpy(),
                               (xp - Y * np.log(xp + 1e-8) + stirling).sum())
    xt = t(xp, grad=True)
    F.poisson_nll_loss(xt, t(Y), log_input=False, full=True).backward()
    want = fd_grad(lambda: float(F.poisson_nll_loss(t(xp), t(Y), log_input=False, full=True).numpy()), xp)
    np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-6)


def test_gaussian_nll_closed_form_clips_variance_and_gives_it_no_gradient():
    var = np.array([[0.5, 1.0, 2.0], [0.1, 1e-9, 3.0]])
    got = F.gaussian_nll_loss(t(X), t(Y), t(var), full=True, reduction="none").numpy()
    v = np.maximum(var, 1e-6)
    np.testing.assert_allclose(got, 0.5 * (np.log(v) + (X - Y) ** 2 / v) + 0.5 * math.log(2 * math.pi))
    vt = t(var, grad=True)
    xt = t(X, grad=True)
    F.gaussian_nll_loss(xt, t(Y), vt).backward()
    assert vt.grad is None
    np.testing.assert_allclose(xt.grad.numpy(), (X - Y) / v / X.size)


@pytest.mark.parametrize("call, err", [
    (lambda: F.poisson_nll_loss(t(X), t(Y), epsilon=0.0), ValueError),
    (lambda: F.poisson_nll_loss(t(X), t(Y[:, :2])), ValueError),
    (lambda: F.poisson_nll_loss(t(X), t(Y.astype("int64"))), TypeError),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(-np.ones_like(X))), ValueError),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(np.ones((2, 2)))), ValueError),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(np.ones_like(X)), reduction="avg"), ValueError),
    (lambda: paddle.nn.PoissonNLLLoss(reduction="avg"), ValueError),
])
def test_nll_bad_arguments_raise(call, err):
    with pytest.raises(err):
        call()


# ---------------------------------------------------------------- layers over existing functionals
def test_loss_layers_call_their_functionals():
    a, b, c = (t(np.random.default_rng(i).normal(size=(3, 4))) for i in range(3))
    lab = t(np.array([1, -1, 1]))
    np.testing.assert_array_equal(paddle.nn.TripletMarginLoss(margin=0.3, p=1.0)(a, b, c).numpy(),
                                  F.triplet_margin_loss(a, b, c, margin=0.3, p=1.0).numpy())
    np.testing.assert_array_equal(paddle.nn.CosineEmbeddingLoss(0.2, "sum")(a, b, lab).numpy(),
                                  F.cosine_embedding_loss(a, b, lab, 0.2, "sum").numpy())
    y = t((np.random.default_rng(9).random((3, 4)) > 0.5).astype("float64"))
    np.testing.assert_array_equal(paddle.nn.MultiLabelSoftMarginLoss(reduction="none")(a, y).numpy(),
                                  F.multi_label_soft_margin_loss(a, y, reduction="none").numpy())
    x = t(np.linspace(-1, 1, 2 * 6 * 3).reshape(2, 6, 3))
    np.testing.assert_array_equal(paddle.nn.LocalResponseNorm(3, data_format="NCL")(x).numpy(),
                                  F.local_response_norm(x, 3, data_format="NCL").numpy())


# ---------------------------------------------------------------- SpectralNorm layer, nn.utils
def test_spectral_norm_layer_gradient_treats_the_power_iteration_as_constant():
    """d/dW of sum(G * W / sigma) with sigma = u^T W v and u, v held fixed: (G - u v^T <G, out>) / sigma."""
    layer = paddle.nn.SpectralNorm([3, 4], dim=0, power_iters=3, dtype="float64")
    w = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
    g = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    x = t(w, grad=True)
    out = layer(x)
    (out * t(g)).sum().backward()
    u, v = layer.weight_u.numpy(), layer.weight_v.numpy()
    for _ in range(3):
        v = w.T @ u / (np.linalg.norm(w.T @ u) + 1e-12)
        u = w @ v / (np.linalg.norm(w @ v) + 1e-12)
    sigma = u @ w @ v
    np.testing.assert_allclose(out.numpy(), w / sigma, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), (g - np.outer(u, v) * (g * w / sigma).sum()) / sigma, rtol=1e-10)


def test_weight_norm_keeps_the_output_and_trains_g_and_v():
    paddle.seed(3)
    layer = paddle.nn.Linear(3, 2)
    x = t(np.random.default_rng(1).normal(size=(4, 3)).astype("float32"))
    before = layer(x).numpy()
    paddle.nn.utils.weight_norm(layer, dim=1)
    np.testing.assert_allclose(layer(x).numpy(), before, rtol=1e-6)
    assert sorted(layer.state_dict()) == ["bias", "weight_g", "weight_v"] and layer.weight_g.shape == [2]
    with pytest.raises(RuntimeError):
        paddle.nn.utils.weight_norm(layer, dim=1)

    v0 = layer.weight_v.numpy().astype("float64")

    def loss_of(v):
        gv = layer.weight_g.numpy().astype("float64")
        w = v / np.linalg.norm(v, axis=0, keepdims=True) * gv
        return float(((x.numpy() @ w + layer.bias.numpy()) ** 2).sum())

    (layer(x) ** 2).sum().backward()
    np.testing.assert_allclose(layer.weight_v.grad.numpy(), fd_grad(lambda: loss_of(v0), v0), rtol=2e-3, atol=2e-3)
    paddle.nn.utils.remove_weight_norm(layer)
    assert sorted(layer.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(layer(x).numpy(), before, rtol=1e-6)
    with pytest.raises(ValueError):
        paddle.nn.utils.remove_weight_norm(layer)


def test_spectral_norm_converges_to_the_largest_singular_value_and_eval_freezes_u():
    paddle.seed(5)
    layer = paddle.nn.Linear(4, 3)
    w = layer.weight.numpy().astype("float64")
    paddle.nn.utils.spectral_norm(layer, n_power_iterations=50)
    x = t(np.eye(4, dtype="float32"))
    out = layer(x).numpy() - layer.bias.numpy()
    np.testing.assert_allclose(out, w / np.linalg.svd(w, compute_uv=False)[0], rtol=1e-4)
    layer.eval()
    u = layer.weight_u.numpy().copy()
    layer(x)
    np.testing.assert_array_equal(layer.weight_u.numpy(), u)
    assert sorted(layer.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]


def test_parameters_to_vector_round_trip_and_size_check():
    layer = paddle.nn.Linear(3, 2)
    vec = paddle.nn.utils.parameters_to_vector(layer.parameters())
    np.testing.assert_array_equal(vec.numpy(), np.concatenate([p.numpy().ravel() for p in layer.parameters()]))
    paddle.nn.utils.vector_to_parameters(vec * 2.0, layer.parameters())
    np.testing.assert_array_equal(paddle.nn.utils.parameters_to_vector(layer.parameters()).numpy(), vec.numpy() * 2)
    with pytest.raises(ValueError):
        paddle.nn.utils.vector_to_parameters(vec[:3], layer.parameters())


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm_scales_by_the_total_norm(norm_type):
    layer = paddle.nn.Linear(3, 2)
    (layer(t(np.ones((2, 3), "float32"))) ** 2).sum().backward()
    grads = [p.grad.numpy().astype("float64") for p in layer.parameters()]
    flat = np.concatenate([g.ravel() for g in grads])
    total = np.abs(flat).max() if norm_type == math.inf else np.linalg.norm(flat, norm_type)
    got = paddle.nn.utils.clip_grad_norm_(layer.parameters(), 0.5, norm_type=norm_type)
    np.testing.assert_allclose(float(got), total, rtol=1e-5)
    for p, g in zip(layer.parameters(), grads):
        np.testing.assert_allclose(p.grad.numpy(), g * min(1.0, 0.5 / (total + 1e-6)), rtol=1e-5)
    paddle.nn.utils.clip_grad_value_(layer.parameters(), 1e-3)
    assert all(np.abs(p.grad.numpy()).max() <= 1e-3 for p in layer.parameters())
    with pytest.raises(ValueError):
        paddle.nn.utils.clip_grad_norm_(layer.parameters(), 1.0, norm_type=3.0)


def test_to_static_of_weight_and_spectral_normed_layers_matches_eager():
    """The hooks' attribute writes and the power iteration's buffer updates happen as in eager code."""
    paddle.seed(1)
    net = paddle.nn.Sequential(paddle.nn.utils.weight_norm(paddle.nn.Linear(3, 4)), paddle.nn.ReLU(),
                               paddle.nn.utils.spectral_norm(paddle.nn.Linear(4, 2)))
    x = t(np.random.default_rng(0).normal(size=(5, 3)).astype("float32"))
    start = {k: v.numpy().copy() for k, v in net.state_dict().items()}

    def step(x):
        return (net(x) ** 2).mean()

    def run(fn):
        net.set_state_dict({k: t(v) for k, v in start.items()})
        seen = []
        for _ in range(3):
            loss = fn(x)
            loss.backward()
            seen.append([loss.numpy(), net[0].weight_g.grad.numpy(), net[2].weight_orig.grad.numpy(),
                         net[2].weight_u.numpy().copy()])
            net.clear_gradients()
        return seen

    want = run(step)
    got = run(jit_of(step))
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_multi_margin_loss_closed_form_and_gradient():
    x = np.random.default_rng(11).normal(size=(4, 5))
    label = np.array([0, 3, 4, 1])
    w = np.array([1.0, 0.5, 2.0, 1.5, 0.7])

    def ref(x):
        picked = x[np.arange(4), label][:, None]
        terms = np.maximum(0.7 - picked + x, 0.0) ** 2
        terms[np.arange(4), label] = 0.0  # the mean runs over the other classes (divided by all 5)
        return (w[label] * terms.sum(1) / 5).mean()

    xt = t(x, grad=True)
    loss = F.multi_margin_loss(xt, t(label), p=2, margin=0.7, weight=t(w))
    np.testing.assert_allclose(loss.numpy(), ref(x), rtol=1e-12)
    loss.backward()
    np.testing.assert_allclose(xt.grad.numpy(), fd_grad(lambda: ref(x), x), rtol=1e-6, atol=1e-9)


def test_triplet_margin_with_distance_layer_uses_its_distance_function():
    """Paddle 3.3.1's layer drops `distance_function` (it calls the functional without it); ours passes it on."""
    a, b, c = (t(np.random.default_rng(i).normal(size=(3, 4))) for i in (1, 2, 3))

    def manhattan(u, v):
        return (u - v).abs().sum(-1)

    got = paddle.nn.TripletMarginWithDistanceLoss(distance_function=manhattan, reduction="none")(a, b, c).numpy()
    want = np.maximum(np.abs(a.numpy() - b.numpy()).sum(-1) - np.abs(a.numpy() - c.numpy()).sum(-1) + 1.0, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda a: F.triplet_margin_with_distance_loss(a, a, a, margin=-1.0),
    lambda a: F.triplet_margin_with_distance_loss(a, a, a, distance_function=lambda u, v: (u - v).sum(-1) - 1.0),
    lambda a: F.triplet_margin_with_distance_loss(a, a[:2], a),
    lambda a: F.multi_margin_loss(a, t(np.array([0, 1]))),
    lambda a: F.multi_margin_loss(a, t(np.array([0, 1, 2])), weight=t(np.ones(3))),
])
def test_margin_losses_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call(t(np.ones((3, 4))))
