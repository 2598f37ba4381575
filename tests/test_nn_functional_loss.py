"""nn.functional losses against NumPy references of Paddle's semantics (weights, ignore_index,
reductions, soft labels, label smoothing), gradients against finite differences, errors."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
from test_nn_functional import numeric_grad, t

RNG = np.random.default_rng(1)


def _log_softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def ref_hard_ce(x, label, weight=None, ignore_index=-100, reduction="mean", axis=-1, use_softmax=True):
    """Paddle's hard-label cross-entropy: mean divides by the summed weights of valid labels, or
    by the valid count when ignore_index >= 0, else by N."""
    xm = np.moveaxis(x, axis, -1)
    lab = label.reshape(xm.shape[:-1])
    logp = _log_softmax(xm) if use_softmax else np.log(xm)
    valid = lab != ignore_index
    safe = np.where(valid, lab, 0)
    loss = -np.take_along_axis(logp, safe[..., None], -1)[..., 0] * valid
    w = None
    if weight is not None:
        w = weight[safe] * valid
        loss = loss * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if w is not None:
        return loss.sum() / w.sum()
    return loss.sum() / valid.sum() if ignore_index >= 0 else loss.mean()


def ref_soft_ce(x, label, weight=None, reduction="mean", axis=-1):
    loss = -(label * _log_softmax(x, axis)).sum(axis=axis, keepdims=True)
    if weight is None:
        return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]
    shape = [1] * x.ndim
    shape[axis] = -1
    wg = (label * weight.reshape(shape)).sum(axis=axis, keepdims=True)
    loss = loss * wg
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / wg.sum()}[reduction]


X = RNG.normal(size=(6, 5)) * 2
LAB = np.array([0, 4, 2, 2, 1, 3])
W = RNG.uniform(0.5, 2.0, 5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [None, W])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_hard_labels(reduction, weight, ignore_index):
    kw = dict(weight=None if weight is None else t(weight), ignore_index=ignore_index, reduction=reduction)
    ref = ref_hard_ce(X, LAB, weight, ignore_index, reduction)
    out = F.cross_entropy(t(X), t(LAB), **kw)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    out_col = F.cross_entropy(t(X), t(LAB.reshape(-1, 1)), **kw)  # [N, 1] labels are accepted too
    np.testing.assert_allclose(out_col.numpy().reshape(np.shape(ref)), ref, rtol=1e-12)
    if reduction == "none":
        assert out.shape == [6] and out_col.shape == [6, 1]
    else:
        assert out.shape == []


def test_cross_entropy_negative_ignore_index_counts_ignored_samples_in_the_mean():
    lab = LAB.copy()
    lab[1] = -100
    out = F.cross_entropy(t(X), t(lab))
    np.testing.assert_allclose(out.numpy(), ref_hard_ce(X, lab), rtol=1e-12)
    per = ref_hard_ce(X, lab, reduction="none")
    assert per[1] == 0 and np.isclose(out.numpy(), per.sum() / 6)


def test_cross_entropy_axis_and_float32():
    x = RNG.normal(size=(2, 4, 3))
    lab = RNG.integers(0, 4, (2, 3))
    np.testing.assert_allclose(F.cross_entropy(t(x), t(lab), axis=1).numpy(), ref_hard_ce(x, lab, axis=1), rtol=1e-12)
    none = F.cross_entropy(t(x), t(lab[:, None, :]), axis=1, reduction="none")
    assert none.shape == [2, 1, 3]
    out32 = F.cross_entropy(t(X.astype(np.float32)), t(LAB))
    assert out32.dtype == paddle.float32
    np.testing.assert_allclose(out32.numpy(), ref_hard_ce(X, LAB), rtol=1e-6)


def test_cross_entropy_without_softmax():
    p = np.exp(_log_softmax(X))
    out = F.cross_entropy(t(p), t(LAB), use_softmax=False, weight=t(W))
    np.testing.assert_allclose(out.numpy(), ref_hard_ce(p, LAB, W, use_softmax=False), rtol=1e-12)
    soft = RNG.dirichlet(np.ones(5), size=6)
    out = F.cross_entropy(t(p), t(soft), soft_label=True, use_softmax=False)
    np.testing.assert_allclose(out.numpy(), (-(soft * np.log(p)).sum(-1)).mean(), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_soft_labels(reduction):
    soft = RNG.dirichlet(np.ones(5), size=6)
    out = F.cross_entropy(t(X), t(soft), soft_label=True, reduction=reduction)
    np.testing.assert_allclose(out.numpy(), ref_soft_ce(X, soft, reduction=reduction), rtol=1e-12)
    outw = F.cross_entropy(t(X), t(soft), weight=t(W), soft_label=True, reduction=reduction)
    np.testing.assert_allclose(outw.numpy(), ref_soft_ce(X, soft, W, reduction), rtol=1e-12)
    if reduction == "none":
        assert out.shape == [6, 1]


def test_cross_entropy_label_smoothing():
    eps = 0.1
    smooth = np.eye(5)[LAB] * (1 - eps) + eps / 5
    out = F.cross_entropy(t(X), t(LAB), label_smoothing=eps)
    np.testing.assert_allclose(out.numpy(), ref_soft_ce(X, smooth), rtol=1e-12)
    outw = F.cross_entropy(t(X), t(LAB.reshape(-1, 1)), weight=t(W), label_smoothing=eps)
    np.testing.assert_allclose(outw.numpy(), ref_soft_ce(X, smooth, W), rtol=1e-12)
    x3 = RNG.normal(size=(2, 4, 3))
    lab3 = RNG.integers(0, 4, (2, 3))
    smooth3 = np.moveaxis(np.eye(4)[lab3], -1, 1) * (1 - eps) + eps / 4
    np.testing.assert_allclose(F.cross_entropy(t(x3), t(lab3), axis=1, label_smoothing=eps).numpy(),
                               ref_soft_ce(x3, smooth3, axis=1), rtol=1e-12)


GRAD_CASES = {
    "weight_ignore_mean": lambda x: F.cross_entropy(x, t(LAB), weight=t(W), ignore_index=2),
    "ignore_count_mean": lambda x: F.cross_entropy(x, t(LAB), ignore_index=4),
    "none_weighted": lambda x: F.cross_entropy(x, t(LAB), weight=t(W), reduction="none") * t(np.arange(1.0, 7.0)),
    "sum_axis0": lambda x: F.cross_entropy(x.transpose([1, 0]), t(LAB), axis=0, reduction="sum"),
    "soft_weighted": lambda x: F.cross_entropy(x, t(RNG_SOFT), weight=t(W), soft_label=True),
    "smoothing": lambda x: F.cross_entropy(x, t(LAB), label_smoothing=0.2, reduction="sum"),
    "no_softmax": lambda x: F.cross_entropy(F.softmax(x), t(LAB), use_softmax=False, weight=t(W)),
    "legacy": lambda x: F.softmax_with_cross_entropy(x, t(LAB.reshape(-1, 1))) * t(np.arange(6.0).reshape(6, 1)),
    "nll": lambda x: F.nll_loss(F.log_softmax(x), t(LAB), weight=t(W), ignore_index=0),
}
RNG_SOFT = RNG.dirichlet(np.ones(5), size=6)


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_cross_entropy_gradients_match_finite_differences(case):
    fn = GRAD_CASES[case]
    x = t(X, True)
    fn(x).sum().backward()
    numeric = numeric_grad(lambda xa: float(fn(t(xa)).sum()), [X], 0)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_cross_entropy_double_backward():
    """d/dx of ||d loss / d x||^2 through the fused gradient op, against differences."""
    def penalty(xa, create_graph):
        x = t(xa, True)
        (g,) = paddle.grad(F.cross_entropy(x, t(LAB), weight=t(W), ignore_index=1), x, create_graph=create_graph)
        return (g * g).sum(), x

    p, x = penalty(X, True)
    (gx,) = paddle.grad(p, x)
    numeric = numeric_grad(lambda xa: float(penalty(xa, False)[0]), [X], 0)
    np.testing.assert_allclose(gx.numpy(), numeric, rtol=1e-5, atol=1e-8)


def test_cross_entropy_errors():
    with pytest.raises(ValueError, match=r"label value 5 is out of range \[0, 5\) for an input with 5 classes"):
        F.cross_entropy(t(X), t(np.array([0, 1, 5, 2, 2, 1])))
    with pytest.raises(ValueError, match=r"label value -3 is out of range"):
        F.cross_entropy(t(X), t(np.array([0, 1, -3, 2, 2, 1])))
    with pytest.raises(TypeError, match="argument 'label' must be an int64 or int32 tensor"):
        F.cross_entropy(t(X), t(LAB.astype(np.float64)))
    with pytest.raises(ValueError, match=r"argument 'label' has shape \[5\]"):
        F.cross_entropy(t(X), t(LAB[:5]))
    with pytest.raises(ValueError, match="argument 'reduction' must be one of"):
        F.cross_entropy(t(X), t(LAB), reduction="avg")
    with pytest.raises(ValueError, match=r"argument 'weight' must have shape \[5\]"):
        F.cross_entropy(t(X), t(LAB), weight=t(np.ones(4)))
    with pytest.raises(ValueError, match="ignore_index"):
        F.cross_entropy(t(X), t(RNG_SOFT), soft_label=True, ignore_index=1)
    with pytest.raises(TypeError, match="with soft labels, argument 'label' must be a floating tensor"):
        F.cross_entropy(t(X), t(LAB), soft_label=True)
    with pytest.raises(ValueError, match="must have the same shape"):
        F.cross_entropy(t(X), t(RNG_SOFT[:, :4]), soft_label=True)
    with pytest.raises(ValueError, match=r"label value 7 is out of range \[0, 5\)"):
        F.nll_loss(t(X), t(np.array([0, 7, 1, 1, 1, 1])))


def test_softmax_with_cross_entropy_legacy_api():
    loss = F.softmax_with_cross_entropy(t(X), t(LAB.reshape(-1, 1)))
    assert loss.shape == [6, 1]
    np.testing.assert_allclose(loss.numpy()[:, 0], ref_hard_ce(X, LAB, reduction="none"), rtol=1e-12)
    loss, sm = F.softmax_with_cross_entropy(t(X), t(RNG_SOFT), soft_label=True, return_softmax=True)
    np.testing.assert_allclose(loss.numpy(), ref_soft_ce(X, RNG_SOFT, reduction="none"), rtol=1e-12)
    np.testing.assert_allclose(sm.numpy(), np.exp(_log_softmax(X)), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    logp = _log_softmax(X)
    ref = ref_hard_ce(X, LAB, W, 3, reduction)
    np.testing.assert_allclose(F.nll_loss(t(logp), t(LAB), weight=t(W), ignore_index=3, reduction=reduction).numpy(),
                               ref, rtol=1e-12)
    x4 = _log_softmax(RNG.normal(size=(2, 4, 3, 2)), axis=1)
    lab4 = RNG.integers(0, 4, (2, 3, 2))
    lab4[0, 0, 0] = -100
    valid = lab4 != -100
    picked = -np.take_along_axis(x4, np.where(valid, lab4, 0)[:, None], 1)[:, 0] * valid
    ref4 = {"none": picked, "sum": picked.sum(), "mean": picked.sum() / valid.sum()}[reduction]
    np.testing.assert_allclose(F.nll_loss(t(x4), t(lab4), reduction=reduction).numpy(), ref4, rtol=1e-12)


def test_nll_loss_shape_errors():
    with pytest.raises(ValueError, match="nll_loss: argument 'input' must be at least 2-D"):
        F.nll_loss(t(np.zeros(3)), t(np.array([0])))
    with pytest.raises(ValueError, match="nll_loss: argument 'label'"):
        F.nll_loss(t(X), t(LAB.reshape(-1, 1)))


# ---------------------------------------------------------------- elementwise losses
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(3, 4))


def _red(v, reduction):
    return {"none": v, "mean": v.mean(), "sum": v.sum()}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    np.testing.assert_allclose(F.mse_loss(t(A), t(B), reduction).numpy(), _red((A - B) ** 2, reduction), rtol=1e-12)
    np.testing.assert_allclose(F.l1_loss(t(A), t(B), reduction).numpy(), _red(np.abs(A - B), reduction), rtol=1e-12)
    r = np.abs(A - B)
    huber = np.where(r <= 0.7, 0.5 * r * r, 0.7 * (r - 0.35))
    np.testing.assert_allclose(F.smooth_l1_loss(t(A), t(B), reduction, delta=0.7).numpy(), _red(huber, reduction),
                               rtol=1e-12)
    np.testing.assert_allclose(F.square_error_cost(t(A), t(B)).numpy(), (A - B) ** 2)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    p = RNG.uniform(0.05, 0.95, (3, 4))
    y = RNG.uniform(0, 1, (3, 4))
    w = RNG.uniform(0.5, 1.5, (4,))
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p)) * w
    np.testing.assert_allclose(F.binary_cross_entropy(t(p), t(y), t(w), reduction).numpy(), _red(ref, reduction),
                               rtol=1e-12)
    edge = F.binary_cross_entropy(t(np.array([0.0, 1.0])), t(np.array([1.0, 0.0])), reduction="none").numpy()
    np.testing.assert_allclose(edge, [100.0, 100.0])  # log is clamped at -100
    with pytest.raises(ValueError, match=r"binary_cross_entropy: argument 'input' must hold probabilities in \[0, 1\]"):
        F.binary_cross_entropy(t(np.array([1.5])), t(np.array([1.0])))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(reduction):
    x = RNG.normal(size=(3, 4)) * 3
    y = RNG.uniform(0, 1, (3, 4))
    pw = RNG.uniform(0.5, 3.0, 4)
    w = RNG.uniform(0.5, 1.5, (3, 1))
    sp_neg = np.log1p(np.exp(-x))  # log(1 + exp(-x)) = -log(sigmoid(x))
    ref = ((1 - y) * x + sp_neg) * w
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(t(x), t(y), t(w), reduction).numpy(),
                               _red(ref, reduction), rtol=1e-10)
    ref_pw = (1 - y) * x + (1 + (pw - 1) * y) * sp_neg
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(t(x), t(y), reduction=reduction,
                                                                  pos_weight=t(pw)).numpy(),
                               _red(ref_pw, reduction), rtol=1e-10)
    big = F.binary_cross_entropy_with_logits(t(np.array([1000.0, -1000.0])), t(np.array([0.0, 1.0])),
                                             reduction="none").numpy()
    np.testing.assert_allclose(big, [1000.0, 1000.0])


def test_bce_with_logits_gradients_for_every_input():
    x0, y0, pw0 = RNG.normal(size=(2, 3)), RNG.uniform(0, 1, (2, 3)), RNG.uniform(0.5, 2, 3)

    def f(xa, ya, pwa):
        return F.binary_cross_entropy_with_logits(t(xa), t(ya), pos_weight=t(pwa), reduction="sum")

    x, y, pw = t(x0, True), t(y0, True), t(pw0, True)
    F.binary_cross_entropy_with_logits(x, y, pos_weight=pw, reduction="sum").backward()
    for i, got in enumerate((x.grad, y.grad, pw.grad)):
        np.testing.assert_allclose(got.numpy(), numeric_grad(lambda *a: float(f(*a)), [x0, y0, pw0], i),
                                   rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_kl_div(reduction):
    logq = _log_softmax(A)
    p = np.exp(_log_softmax(B))
    p[0, 0] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.where(p > 0, p * (np.log(p) - logq), 0.0)
    expect = ref.sum() / 3 if reduction == "batchmean" else _red(ref, reduction)
    np.testing.assert_allclose(F.kl_div(t(logq), t(p), reduction).numpy(), expect, rtol=1e-12)
    logp = _log_softmax(B)
    ref_log = np.exp(logp) * (logp - logq)
    expect = ref_log.sum() / 3 if reduction == "batchmean" else _red(ref_log, reduction)
    np.testing.assert_allclose(F.kl_div(t(logq), t(logp), reduction, log_target=True).numpy(), expect, rtol=1e-12)


def test_margin_losses():
    x, o = RNG.normal(size=6), RNG.normal(size=6)
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    np.testing.assert_allclose(F.margin_ranking_loss(t(x), t(o), t(y), margin=0.3).numpy(),
                               np.maximum(0, -y * (x - o) + 0.3).mean(), rtol=1e-12)
    np.testing.assert_allclose(F.hinge_embedding_loss(t(x), t(y), margin=0.5, reduction="none").numpy(),
                               np.where(y == 1, x, np.maximum(0, 0.5 - x)), rtol=1e-12)
    np.testing.assert_allclose(F.soft_margin_loss(t(x), t(y), "sum").numpy(), np.log1p(np.exp(-y * x)).sum(),
                               rtol=1e-12)
    p = RNG.uniform(0.1, 0.9, 6)
    yb = (y > 0).astype(float)
    np.testing.assert_allclose(F.log_loss(t(p), t(yb)).numpy(),
                               -yb * np.log(p + 1e-4) - (1 - yb) * np.log(1 - p + 1e-4), rtol=1e-12)
    s = 1 / (1 + np.exp(-x))
    p_t = s * yb + (1 - s) * (1 - yb)
    bce = np.maximum(x, 0) - x * yb + np.log1p(np.exp(-np.abs(x)))
    focal = (0.25 * yb + 0.75 * (1 - yb)) * (1 - p_t) ** 2 * bce
    np.testing.assert_allclose(F.sigmoid_focal_loss(t(x), t(yb)).numpy(), focal.sum(), rtol=1e-12)
    np.testing.assert_allclose(F.sigmoid_focal_loss(t(x), t(yb), normalizer=t(np.array([2.0])),
                                                    reduction="mean").numpy(), (focal / 2).mean(), rtol=1e-12)


@pytest.mark.parametrize("fn", ["smooth_l1", "bce", "kl_div"])
def test_elementwise_loss_gradients(fn):
    calls = {
        "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, delta=0.5),
        "bce": lambda a, b: F.binary_cross_entropy(F.sigmoid(a), F.sigmoid(b)),
        "kl_div": lambda a, b: F.kl_div(a, F.softmax(b), reduction="batchmean"),
    }
    call = calls[fn]
    a, b = t(A, True), t(B, True)
    call(a, b).backward()
    for i, got in enumerate((a.grad, b.grad)):
        np.testing.assert_allclose(got.numpy(), numeric_grad(lambda *arr: float(call(*map(t, arr))), [A, B], i),
                                   rtol=1e-5, atol=1e-7)


def test_elementwise_loss_errors():
    with pytest.raises(ValueError, match="mse_loss: argument 'reduction' must be one of"):
        F.mse_loss(t(A), t(B), reduction="batchmean")
    with pytest.raises(ValueError, match="smooth_l1_loss: argument 'input' .* must have the same shape"):
        F.smooth_l1_loss(t(A), t(B[:, :2]))
    with pytest.raises(ValueError, match="smooth_l1_loss: argument 'delta' must be positive"):
        F.smooth_l1_loss(t(A), t(B), delta=0.0)
    with pytest.raises(TypeError, match="binary_cross_entropy_with_logits: argument 'label' must be a floating"):
        F.binary_cross_entropy_with_logits(t(A), t(np.ones((3, 4), np.int64)))
    with pytest.raises(ValueError, match="kl_div: argument 'reduction'"):
        F.kl_div(t(A), t(B), reduction="avg")


def test_embedding_and_multilabel_losses():
    a, b = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    y = np.array([1, -1, 1, -1])
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-11) * ((b * b).sum(-1) + 1e-11))
    ref = np.where(y == 1, 1 - cos, np.maximum(cos - 0.1, 0))
    np.testing.assert_allclose(F.cosine_embedding_loss(t(a), t(b), t(y), margin=0.1, reduction="none").numpy(), ref,
                               rtol=1e-12)
    n = RNG.normal(size=(4, 3))

    def dist(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(-1))

    ref = np.maximum(dist(a, b) - np.minimum(dist(a, n), dist(b, n)) + 1.0, 0).mean()
    np.testing.assert_allclose(F.triplet_margin_loss(t(a), t(b), t(n), swap=True).numpy(), ref, rtol=1e-12)
    lab = (RNG.uniform(size=(4, 3)) > 0.5).astype(float)
    w = RNG.uniform(0.5, 1.5, 3)
    sig = 1 / (1 + np.exp(-a))
    ref = (-(lab * np.log(sig) + (1 - lab) * np.log(1 - sig)) * w).mean(-1).sum()
    np.testing.assert_allclose(F.multi_label_soft_margin_loss(t(a), t(lab), t(w), reduction="sum").numpy(), ref,
                               rtol=1e-10)
    probs = np.exp(_log_softmax(RNG.normal(size=(2, 3, 4))))
    labels = RNG.integers(0, 4, (2, 3, 1))
    onehot = np.eye(4)[labels[..., 0]]
    inter = (probs * onehot).sum(axis=(1, 2))
    ref = (1 - 2 * inter / (probs.sum(axis=(1, 2)) + onehot.sum(axis=(1, 2)) + 1e-5)).mean()
    np.testing.assert_allclose(F.dice_loss(t(probs), t(labels)).numpy(), ref, rtol=1e-12)
    with pytest.raises(ValueError, match="dice_loss: argument 'label' must have shape"):
        F.dice_loss(t(probs), t(labels[..., 0]))
