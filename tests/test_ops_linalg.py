"""Linear algebra against NumPy references and finite differences; error messages."""
import numpy as np
import pytest

import runtime as paddle

from helpers import fd_grad

rng = np.random.default_rng(1)


def t(a, grad=False):
    return paddle.to_tensor(a, stop_gradient=not grad)


def n(*shape):
    return rng.normal(size=shape)


def spd(k):
    a = n(k, k)
    return a @ a.T + k * np.eye(k)


def numeric_grad(f, a, eps=1e-6):
    """Central differences of the scalar function f at array a."""
    a = a.copy()
    return fd_grad(lambda: f(a), a, eps)


# ---------------------------------------------------------------- matmul family
@pytest.mark.parametrize("xs,ys,tx,ty", [
    ((3, 4), (4, 5), False, False), ((4, 3), (4, 5), True, False), ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True), ((2, 3, 4), (4, 5), False, False), ((2, 1, 3, 4), (5, 4, 2), False, False),
    ((4,), (4,), False, False), ((4,), (2, 4, 3), False, False), ((2, 3, 4), (4,), False, False),
    ((4,), (3, 4), True, True), ((2, 4, 3), (1, 4, 5), True, False),
])
def test_matmul_matches_numpy(xs, ys, tx, ty):
    a, b = n(*xs), n(*ys)
    ref_a = np.swapaxes(a, -1, -2) if tx and a.ndim > 1 else a
    ref_b = np.swapaxes(b, -1, -2) if ty and b.ndim > 1 else b
    out = paddle.matmul(t(a), t(b), transpose_x=tx, transpose_y=ty)
    expect = np.matmul(ref_a, ref_b)
    assert out.shape == list(np.shape(expect))
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12)


def test_matmul_operator_methods_and_aliases():
    a, b = n(3, 4), n(4, 2)
    np.testing.assert_allclose((t(a) @ t(b)).numpy(), a @ b)
    np.testing.assert_allclose(t(a).matmul(t(b)).numpy(), a @ b)
    np.testing.assert_allclose(paddle.mm(t(a), t(b)).numpy(), a @ b)
    np.testing.assert_allclose(t(a).mv(t(b[:, 0])).numpy(), a @ b[:, 0])
    assert paddle.matmul(t(a.astype(np.float32)), t(b.astype(np.float32))).dtype == paddle.float32
    assert paddle.matmul(t(np.arange(6).reshape(2, 3)), t(np.arange(3))).numpy().tolist() == [5, 14]


def test_matmul_broadcast_gradient_matches_numpy_formula():
    a, b = n(2, 1, 3, 4), n(5, 4, 2)
    w = n(2, 5, 3, 2)
    x, y = t(a, True), t(b, True)
    (paddle.matmul(x, y) * t(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (w @ np.swapaxes(b, -1, -2)).sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), (np.swapaxes(a, -1, -2) @ w).sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("xs,ys,tx,ty", [((4, 3), (5, 4), True, True), ((4,), (2, 3, 4), False, True),
                                         ((3, 2, 4), (4,), False, False)])
def test_matmul_gradient_finite_differences(xs, ys, tx, ty):
    a, b = n(*xs), n(*ys)
    out_shape = paddle.matmul(t(a), t(b), tx, ty).shape
    w = n(*out_shape)

    def f(a_, b_):
        ra = np.swapaxes(a_, -1, -2) if tx and a_.ndim > 1 else a_
        rb = np.swapaxes(b_, -1, -2) if ty and b_.ndim > 1 else b_
        return float((np.matmul(ra, rb) * w).sum())

    x, y = t(a, True), t(b, True)
    (paddle.matmul(x, y, tx, ty) * t(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda v: f(v, b), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(y.grad.numpy(), numeric_grad(lambda v: f(a, v), b), rtol=1e-6, atol=1e-8)


def test_matmul_double_backward():
    a, b = n(2, 3), n(3, 2)
    x, y = t(a, True), t(b, True)
    (gx,) = paddle.grad((paddle.matmul(x, y) ** 2).sum(), x, create_graph=True)
    (gy,) = paddle.grad(gx.sum(), y)
    # gx = 2 (x y) y^T; d/dy sum(gx) = 2 x^T 1 1^T y ... checked by finite differences
    np.testing.assert_allclose(gy.numpy(), numeric_grad(lambda v: float((2 * (a @ v) @ v.T).sum()), b), rtol=1e-6)


def test_tensor_methods_are_bound():
    for name in ("matmul", "mm", "bmm", "dot", "mv", "t", "outer", "inner", "cross", "norm", "dist", "inverse",
                 "cholesky"):
        assert getattr(paddle.Tensor, name) is getattr(paddle, name), name


def test_bmm_dot_t():
    a, b = n(2, 3, 4), n(2, 4, 5)
    np.testing.assert_allclose(paddle.bmm(t(a), t(b)).numpy(), a @ b)
    u, v = n(5), n(5)
    d = paddle.dot(t(u), t(v))
    assert d.shape == [] and d.item() == pytest.approx(u @ v)
    m1, m2 = n(3, 4), n(3, 4)
    np.testing.assert_allclose(paddle.dot(t(m1), t(m2)).numpy(), (m1 * m2).sum(1))
    assert paddle.t(t(u)).shape == [5] and paddle.t(t(np.array(2.0))).shape == []
    np.testing.assert_array_equal(t(m1).t().numpy(), m1.T)


def test_outer_inner_cross():
    u, v = n(3), n(4)
    np.testing.assert_allclose(paddle.outer(t(u), t(v)).numpy(), np.outer(u, v))
    np.testing.assert_allclose(paddle.outer(t(n(2, 2)), t(v)).shape, [4, 4])
    a, b = n(2, 3, 4), n(5, 4)
    np.testing.assert_allclose(paddle.inner(t(a), t(b)).numpy(), np.inner(a, b), rtol=1e-12)
    assert paddle.inner(t(v), t(v)).item() == pytest.approx(v @ v)
    c, e = n(4, 3), n(4, 3)
    np.testing.assert_allclose(paddle.cross(t(c), t(e)).numpy(), np.cross(c, e))
    c2, e2 = n(3, 3), n(3, 3)
    np.testing.assert_allclose(paddle.cross(t(c2), t(e2)).numpy(), np.cross(c2, e2, axis=0))
    np.testing.assert_allclose(paddle.cross(t(c2), t(e2), axis=1).numpy(), np.cross(c2, e2, axis=1))


# ---------------------------------------------------------------- einsum
@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij->", [(2, 3)]), ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("...i,...i", [(2, 1, 3), (4, 3)]), ("ba,Ab", [(3, 2), (4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("i...->...", [(3, 2, 2)]), ("ij->ji", [(2, 5)]),
    (" i j , j k -> i k ", [(3, 4), (4, 2)]),
])
def test_einsum_matches_numpy(eq, shapes):
    ops = [n(*s) for s in shapes]
    out = paddle.einsum(eq, *[t(o) for o in ops])
    expect = np.einsum(eq.replace(" ", ""), *ops)
    assert out.shape == list(np.shape(expect))
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12)


def test_einsum_accepts_a_list_of_operands():
    a, b = n(2, 3), n(3, 2)
    np.testing.assert_allclose(paddle.einsum("ij,jk->ik", [t(a), t(b)]).numpy(), a @ b)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bii,bj->bij", [(2, 3, 3), (2, 4)]), ("ij->i", [(3, 4)]),
    ("...i,...i->...", [(1, 3, 4), (2, 1, 4)]), ("ii", [(3, 3)]), ("ijk,k->ij", [(2, 3, 4), (4,)]),
])
def test_einsum_gradients_finite_differences(eq, shapes):
    ops = [n(*s) for s in shapes]
    w = n(*np.shape(np.einsum(eq, *ops)))
    tensors = [t(o, True) for o in ops]
    (paddle.einsum(eq, *tensors) * t(w)).sum().backward()
    for i, o in enumerate(ops):
        def f(v, i=i):
            args = list(ops)
            args[i] = v
            return float((np.einsum(eq, *args) * w).sum())
        np.testing.assert_allclose(tensors[i].grad.numpy(), numeric_grad(f, o), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- norm, dist
@pytest.mark.parametrize("p,axis,ref", [
    ("fro", None, lambda a: np.sqrt((a ** 2).sum())),
    ("fro", [0, 1], lambda a: np.sqrt((a ** 2).sum(axis=(0, 1)))),
    (2, 1, lambda a: np.linalg.norm(a, 2, axis=1)),
    (1, -1, lambda a: np.abs(a).sum(-1)),
    (np.inf, 1, lambda a: np.abs(a).max(1)),
    (-np.inf, None, lambda a: np.abs(a).min()),
    (0, 2, lambda a: (a != 0).sum(2).astype(float)),
    (3, [0, 2], lambda a: (np.abs(a) ** 3).sum(axis=(0, 2)) ** (1 / 3)),
    (0.5, None, lambda a: (np.abs(a) ** 0.5).sum() ** 2),
])
def test_norm_matches_reference(p, axis, ref):
    a = n(2, 3, 4)
    a[0, 0, 0] = 0.0
    out = paddle.norm(t(a), p=p, axis=axis)
    np.testing.assert_allclose(out.numpy(), ref(a), rtol=1e-12)
    kept = t(a).norm(p=p, axis=axis, keepdim=True)
    assert kept.ndim == 3


def test_norm_gradients():
    a = n(3, 4)
    x = t(a, True)
    paddle.norm(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), a / np.sqrt((a ** 2).sum()), rtol=1e-12)
    x = t(a, True)
    paddle.norm(x, p=np.inf, axis=1).sum().backward()
    expect = np.zeros_like(a)
    idx = np.abs(a).argmax(1)
    expect[np.arange(3), idx] = np.sign(a[np.arange(3), idx])
    np.testing.assert_allclose(x.grad.numpy(), expect)
    z = t(np.zeros(3), True)
    paddle.norm(z).backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.zeros(3))


def test_dist():
    a, b = n(3, 4), n(4)
    assert paddle.dist(t(a), t(b)).item() == pytest.approx(np.sqrt(((a - b) ** 2).sum()))
    assert paddle.dist(t(a), t(b), p=np.inf).item() == pytest.approx(np.abs(a - b).max())
    assert paddle.dist(t(a), t(a), p=0).item() == 0.0


# ---------------------------------------------------------------- paddle.linalg
def test_linalg_namespace_functions():
    a = spd(4)
    b = n(4, 2)
    np.testing.assert_allclose(paddle.linalg.inv(t(a)).numpy(), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(paddle.inverse(t(a)).numpy(), np.linalg.inv(a), rtol=1e-10)
    assert paddle.linalg.det(t(a)).item() == pytest.approx(np.linalg.det(a))
    np.testing.assert_allclose(paddle.linalg.solve(t(a), t(b)).numpy(), np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(paddle.linalg.solve(t(a), t(b[:, 0])).numpy(), np.linalg.solve(a, b[:, 0]), rtol=1e-10)
    low = paddle.linalg.cholesky(t(a)).numpy()
    np.testing.assert_allclose(low, np.linalg.cholesky(a), rtol=1e-10)
    np.testing.assert_allclose(paddle.cholesky(t(a), upper=True).numpy(), np.linalg.cholesky(a).T, rtol=1e-10)
    q, r = paddle.linalg.qr(t(n(5, 3)))
    assert q.shape == [5, 3] and r.shape == [3, 3]
    np.testing.assert_allclose((q @ r).numpy(), q.numpy() @ r.numpy())
    m = n(2, 4, 3)
    u, s, vh = paddle.linalg.svd(t(m))
    np.testing.assert_allclose((u.numpy() * s.numpy()[:, None, :]) @ vh.numpy(), m, atol=1e-12)
    np.testing.assert_allclose(paddle.linalg.matrix_power(t(a), 3).numpy(), np.linalg.matrix_power(a, 3), rtol=1e-10)
    np.testing.assert_allclose(paddle.linalg.matrix_power(t(a), -2).numpy(), np.linalg.matrix_power(a, -2), rtol=1e-8)
    np.testing.assert_array_equal(paddle.linalg.matrix_power(t(a), 0).numpy(), np.eye(4))
    c, d = n(3, 4), n(4)
    np.testing.assert_allclose(paddle.linalg.multi_dot([t(c.T), t(c), t(d)]).numpy(), c.T @ c @ d, rtol=1e-12)
    np.testing.assert_allclose(paddle.linalg.norm(t(c)).numpy(), np.linalg.norm(c))
    np.testing.assert_allclose(paddle.linalg.matmul(t(c), t(d)).numpy(), c @ d)


def test_batched_solve_broadcasts():
    a = np.stack([spd(3), spd(3)])
    b = n(3, 2)
    np.testing.assert_allclose(paddle.linalg.solve(t(a), t(b)).numpy(), np.linalg.solve(a, np.stack([b, b])),
                               rtol=1e-10)
    v = n(3)
    np.testing.assert_allclose(paddle.linalg.solve(t(a), t(v)).numpy(),
                               np.stack([np.linalg.solve(a[i], v) for i in range(2)]), rtol=1e-10)


def test_inverse_and_det_gradients_match_formulas():
    a = spd(3) + n(3, 3) * 0.1
    w = n(3, 3)
    x = t(a, True)
    (paddle.linalg.inv(x) * t(w)).sum().backward()
    ai = np.linalg.inv(a)
    np.testing.assert_allclose(x.grad.numpy(), -ai.T @ w @ ai.T, rtol=1e-10)
    x = t(a, True)
    paddle.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.linalg.det(a) * ai.T, rtol=1e-10)


def test_solve_gradient_finite_differences():
    a, b = spd(3), n(3, 2)
    w = n(3, 2)
    x, y = t(a, True), t(b, True)
    (paddle.linalg.solve(x, y) * t(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda v: float((np.linalg.solve(v, b) * w).sum()), a),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(y.grad.numpy(), np.linalg.solve(a.T, w), rtol=1e-10)


def test_cholesky_gradient_under_symmetric_perturbations():
    a = spd(3)
    w = np.tril(n(3, 3))
    x = t(a, True)
    (paddle.linalg.cholesky(x) * t(w)).sum().backward()
    g = x.grad.numpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12)
    eps = 1e-6
    for i, j in [(0, 0), (1, 0), (2, 1), (2, 2)]:
        e = np.zeros((3, 3))
        e[i, j] = e[j, i] = eps
        fd = ((np.linalg.cholesky(a + e) - np.linalg.cholesky(a - e)) * w).sum() / (2 * eps)
        analytic = g[i, j] * (1 if i == j else 2)
        assert analytic == pytest.approx(fd, rel=1e-5)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("call,exc,match", [
    (lambda: paddle.matmul(t(n(3, 4)), t(n(5, 6))), ValueError,
     r"matmul: the last dimension of argument 'x' \[3, 4\] \(4\) must equal the second-to-last dimension of "
     r"argument 'y' \[5, 6\] \(5\)"),
    (lambda: paddle.matmul(t(n(3, 4)), t(n(3, 4)), transpose_y=False), ValueError, r"\[3, 4\].*\[3, 4\]"),
    (lambda: paddle.matmul(t(n(3, 4)), t(n(5))), ValueError, "only dimension of argument 'y' \\[5\\]"),
    (lambda: paddle.matmul(t(n(2, 3, 4)), t(n(3, 4, 5))), ValueError, "batch dimensions"),
    (lambda: paddle.matmul(t(np.array(1.0)), t(n(3))), ValueError, "at least 1-D"),
    (lambda: paddle.matmul(t(n(2, 2)), t(n(2, 2).astype(np.float32))), TypeError, "same dtype"),
    (lambda: paddle.matmul(n(2, 2), t(n(2, 2))), TypeError, "matmul: argument 'x' must be a Tensor"),
    (lambda: paddle.bmm(t(n(3, 4)), t(n(4, 5))), ValueError, "bmm: argument 'x' must be 3-D"),
    (lambda: paddle.bmm(t(n(2, 3, 4)), t(n(3, 4, 5))), ValueError, "batch sizes"),
    (lambda: paddle.bmm(t(n(2, 3, 4)), t(n(2, 5, 5))), ValueError, r"\(4\) must equal the second dimension"),
    (lambda: paddle.dot(t(n(3)), t(n(4))), ValueError, "same shape"),
    (lambda: paddle.dot(t(n(2, 2, 2)), t(n(2, 2, 2))), ValueError, "1-D or 2-D"),
    (lambda: paddle.mv(t(n(3)), t(n(3))), ValueError, "mv: argument 'x' must be 2-D"),
    (lambda: paddle.t(t(n(2, 2, 2))), ValueError, "at most 2-D"),
    (lambda: paddle.einsum("ij,jk", t(n(2, 3))), ValueError, "2 operand term"),
    (lambda: paddle.einsum("ij", t(n(2, 3, 4))), ValueError, "has 2 label"),
    (lambda: paddle.einsum("ij,jk", t(n(2, 3)), t(n(4, 5))), ValueError, "label 'j'"),
    (lambda: paddle.einsum("ij->k", t(n(2, 3))), ValueError, "output label 'k'"),
    (lambda: paddle.einsum("ij->ii", t(n(2, 3))), ValueError, "repeat"),
    (lambda: paddle.einsum("i1", t(n(2, 3))), ValueError, "bad subscripts"),
    (lambda: paddle.einsum("i->i->i", t(n(2))), ValueError, "more than one"),
    (lambda: paddle.einsum("ii", t(n(2, 3))), ValueError, "repeats in operand 0"),
    (lambda: paddle.einsum(3, t(n(2))), TypeError, "'equation' must be a str"),
    (lambda: paddle.cross(t(n(2, 4)), t(n(2, 4))), ValueError, "no dimension of size 3"),
    (lambda: paddle.cross(t(n(3, 4)), t(n(3, 4)), axis=1), ValueError, "must have size 3"),
    (lambda: paddle.norm(t(n(3)), p="nuc"), ValueError, "'p' must be 'fro'"),
    (lambda: paddle.norm(t(n(2, 2, 2)), axis=[0, 1, 2]), ValueError, "at most two"),
    (lambda: paddle.norm(t(np.arange(3))), TypeError, "norm: argument 'x' must be a floating"),
    (lambda: paddle.norm(t(n(3)), axis=2), ValueError, "out of range"),
    (lambda: paddle.linalg.inv(t(n(2, 3))), ValueError, "square"),
    (lambda: paddle.linalg.det(t(n(3))), ValueError, "square"),
    (lambda: paddle.linalg.solve(t(spd(3)), t(n(4, 2))), ValueError, "must be 3"),
    (lambda: paddle.linalg.solve(t(spd(3)), t(n(4))), ValueError, "3 elements"),
    (lambda: paddle.linalg.cholesky(t(np.eye(3, dtype=np.int64))), TypeError, "floating"),
    (lambda: paddle.linalg.qr(t(n(3, 3)), mode="full"), ValueError, "'mode'"),
    (lambda: paddle.linalg.matrix_power(t(n(2, 3)), 2), ValueError, "square"),
    (lambda: paddle.linalg.matrix_power(t(spd(2)), 1.5), TypeError, "'n' must be an int"),
    (lambda: paddle.linalg.multi_dot([t(n(2, 2))]), ValueError, "at least two"),
    (lambda: paddle.linalg.multi_dot([t(n(2, 2)), t(n(2, 2, 2)), t(n(2, 2))]), ValueError, r"x\[1\] must be 2-D"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_inf_norm_gradient_follows_paddle_at_ties_and_zeros():
    """Paddle's p_norm_grad for p = +-inf gives every element tied at the extreme |x| the full
    g * sign(x) (no split), and an all-zero slice a zero gradient (not 0 / 0)."""
    a = np.array([[1.0, -3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.5, -0.5, 2.0, 1.0]])
    x = t(a, True)
    paddle.norm(x, p=np.inf, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, -1, 1, 0], [0, 0, 0, 0], [0, 0, 1, 0]])
    x = t(a, True)
    paddle.norm(x, p=-np.inf, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 0, 0], [0, 0, 0, 0], [1, -1, 0, 0]])
