"""paddle.distribution: every recorded output against real Paddle 3.3.1 (fixtures/paddle/distribution), the
formulas against closed forms written here with `math`, sampling moments within 6-sigma bounds, gradients of
rsample and log_prob, dispatch of kl_divergence, errors, and the JIT against eager."""
import math
import warnings

import numpy as np
import pytest

import runtime as paddle
from fixtures.paddle.distribution.cases import DISTRIBUTIONS, load
from helpers import fd_grad, t
from sot_helpers import jit_of

D = paddle.distribution
REF = load()


def assert_matches_recorded(got: dict, want: dict) -> None:
    """Every recorded output: shapes and dtypes exactly, values to float32 rounding."""
    for key, w in want.items():
        g = got[key]
        if isinstance(w, dict) and "values" in w:
            g = g.numpy() if isinstance(g, paddle.Tensor) else g
            assert list(g.shape) == w["shape"] and str(g.dtype) == w["dtype"], key
            np.testing.assert_allclose(g, np.array([float(v) for v in w["values"]]).reshape(w["shape"]),
                                       rtol=2e-5, atol=1e-6, err_msg=key)
        else:
            assert g == w, key


# Paddle raises NotImplementedError for Uniform-Uniform KL; we give the closed form (tested below)
DEVIATIONS = {"uniform_kl"}


@pytest.mark.parametrize("case", sorted(set(DISTRIBUTIONS) - DEVIATIONS))
def test_outputs_match_paddle(case):
    want = REF["distributions"][case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in want:
            with pytest.raises(Exception) as info:
                DISTRIBUTIONS[case](paddle)
            assert type(info.value).__name__ == want["error"]
        else:
            assert_matches_recorded(DISTRIBUTIONS[case](paddle), want)


# ---------------------------------------------------------------- closed forms (float64)
def f64(*a):
    return t(np.asarray(a, dtype="float64"))


def test_normal_log_prob_entropy_kl_closed_forms():
    mu, s, x = np.array([0.3, -1.0]), np.array([0.7, 2.0]), np.array([1.0, 0.5])
    d = D.Normal(t(mu), t(s))
    np.testing.assert_allclose(d.log_prob(t(x)).numpy(), -(x - mu) ** 2 / (2 * s * s) - np.log(s * math.sqrt(2 * math.pi)))
    np.testing.assert_allclose(d.entropy().numpy(), 0.5 * np.log(2 * math.pi * math.e * s * s))
    mu2, s2 = np.array([1.0, 0.0]), np.array([1.5, 0.5])
    want = np.log(s2 / s) + (s * s + (mu - mu2) ** 2) / (2 * s2 * s2) - 0.5
    np.testing.assert_allclose(D.kl_divergence(d, D.Normal(t(mu2), t(s2))).numpy(), want)


def test_beta_and_dirichlet_log_prob_match_the_gamma_function():
    a, b, x = 2.5, 0.7, 0.3
    want = (a - 1) * math.log(x) + (b - 1) * math.log(1 - x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    np.testing.assert_allclose(D.Beta(f64(a), f64(b)).log_prob(f64(x)).numpy(), [want], rtol=1e-12)
    c, v = np.array([1.5, 2.0, 0.5]), np.array([0.2, 0.5, 0.3])
    want = sum((ci - 1) * math.log(vi) - math.lgamma(ci) for ci, vi in zip(c, v)) + math.lgamma(c.sum())
    np.testing.assert_allclose(D.Dirichlet(t(c)).log_prob(t(v)).numpy(), want, rtol=1e-12)


def test_multinomial_log_prob_is_the_multinomial_pmf():
    p, k = np.array([0.2, 0.3, 0.5]), np.array([1.0, 0.0, 3.0])
    want = math.log(math.factorial(4) / (1 * 1 * 6) * 0.2 * 0.5 ** 3)
    np.testing.assert_allclose(D.Multinomial(4, t(p)).log_prob(t(k)).numpy(), want, rtol=1e-12)


def test_kl_divergence_closed_forms_against_numeric_integration():
    """KL(p || q) = integral of p log(p / q), by the trapezoid rule on a fine grid."""
    grid = np.linspace(1e-4, 1 - 1e-4, 200001)
    p, q = D.Beta(f64(2.0), f64(3.0)), D.Beta(f64(1.5), f64(1.2))
    lp, lq = p.log_prob(t(grid)).numpy(), q.log_prob(t(grid)).numpy()
    want = np.trapezoid(np.exp(lp) * (lp - lq), grid)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), [want], rtol=1e-5)
    grid = np.linspace(1e-6, 40.0, 400001)
    p, q = D.Gamma(f64(2.0), f64(1.5)), D.Gamma(f64(3.0), f64(0.5))
    lp, lq = p.log_prob(t(grid)).numpy(), q.log_prob(t(grid)).numpy()
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), [np.trapezoid(np.exp(lp) * (lp - lq), grid)], rtol=1e-5)


def test_continuous_bernoulli_density_moments_and_cdf_by_numeric_integration():
    grid = np.linspace(0.0, 1.0, 200001)
    for p in (0.2, 0.4995, 0.9):
        d = D.ContinuousBernoulli(f64(p))
        dens = d.prob(t(grid[:, None])).numpy()[:, 0]
        mean = np.trapezoid(grid * dens, grid)
        np.testing.assert_allclose(np.trapezoid(dens, grid), 1.0, rtol=1e-6)
        np.testing.assert_allclose(d.mean.numpy(), [mean], rtol=1e-6)
        np.testing.assert_allclose(d.variance.numpy(), [np.trapezoid((grid - mean) ** 2 * dens, grid)], rtol=1e-4)
        if p != 0.4995:  # within `lims` of 1/2 the cdf is Paddle's uniform approximation, cdf(x) = x
            np.testing.assert_allclose(d.cdf(f64(0.3)).numpy(), [np.trapezoid(dens[:60001], grid[:60001])], rtol=1e-6)
        np.testing.assert_allclose(d.icdf(d.cdf(f64(0.3))).numpy(), [0.3], rtol=1e-6)


def test_stick_breaking_maps_onto_the_simplex_with_the_jacobians_log_det():
    x = np.array([0.3, -1.2, 2.0])
    sb = D.StickBreakingTransform()
    y = sb.forward(t(x)).numpy()
    assert y.shape == (4,) and (y > 0).all()
    np.testing.assert_allclose(y.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(sb.inverse(t(y)).numpy(), x, rtol=1e-10)
    h = 1e-6  # the Jacobian of x -> y[:3] (y[3] is determined by the rest), by central differences
    jac = np.stack([(sb.forward(t(x + h * e)).numpy() - sb.forward(t(x - h * e)).numpy())[:3] / (2 * h)
                    for e in np.eye(3)], axis=1)
    want = np.log(abs(np.linalg.det(jac)))
    np.testing.assert_allclose(sb.forward_log_det_jacobian(t(x)).numpy(), want, rtol=1e-6)
    # an elementwise scale inside a chain counts once per event element, even when given with one element
    # (Paddle's AffineTransform returns log|scale| unbroadcast, so a chain sums it once: its log-det is short)
    chain = D.ChainTransform([D.AffineTransform(f64(0.5), f64(2.0)), sb])
    np.testing.assert_allclose(chain.forward_log_det_jacobian(t(x)).numpy(),
                               3 * math.log(2.0) + sb.forward_log_det_jacobian(t(0.5 + 2.0 * x)).numpy(), rtol=1e-10)


def test_uniform_kl_is_log_width_ratio_inside_and_inf_outside():
    p = D.Uniform(f64(0.0, 1.0), f64(1.0, 3.0))
    q = D.Uniform(f64(-1.0, 1.5), f64(2.0, 4.0))
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), [math.log(3.0), math.inf])


def test_lgamma_digamma_polygamma_against_math():
    x = np.array([1e-3, 0.2, 0.5, 1.0, 2.0, 3.7, 9.5, 10.0, 33.0, 170.5, -0.4, -2.5, -7.3])
    np.testing.assert_allclose(paddle.lgamma(t(x)).numpy(), [math.lgamma(v) for v in x], rtol=1e-13, atol=1e-13)
    h = 1e-7  # digamma is lgamma's derivative, polygamma(1) digamma's: central differences of math.lgamma
    fd = np.array([(math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h) for v in x])
    np.testing.assert_allclose(paddle.digamma(t(x)).numpy(), fd, rtol=1e-6, atol=1e-6)
    k = np.arange(100000.0)  # trigamma(v) = sum_k 1/(v + k)^2, the tail past K by its integral
    series = np.array([(1 / (v + k) ** 2).sum() + 1 / (v + k[-1] + 0.5) for v in x])
    np.testing.assert_allclose(paddle.polygamma(t(x), 1).numpy(), series, rtol=1e-9)
    np.testing.assert_allclose(t(x).digamma().numpy(), paddle.polygamma(t(x), 0).numpy())


def test_special_function_poles():
    assert np.isposinf(paddle.lgamma(f64(0.0, -3.0)).numpy()).all()
    d = paddle.digamma(f64(0.0, -3.0)).numpy()
    assert np.isneginf(d[0]) and np.isnan(d[1])
    assert paddle.lgamma(t(np.array([2.5], "float32"))).dtype == paddle.float32


# ---------------------------------------------------------------- sampling
N = 40000


def assert_mean_within(samples, mean, var, axis=0):
    """Sample mean within 6 standard errors of the true mean (fails by chance with probability < 1e-8)."""
    got = np.asarray(samples).mean(axis=axis)
    bound = 6 * np.sqrt(np.asarray(var) / np.asarray(samples).shape[axis])
    assert np.all(np.abs(got - mean) <= bound), (got, mean, bound)


@pytest.mark.parametrize("make", [
    lambda: D.Normal(t(np.array([0.0, 2.0], "float32")), t(np.array([1.0, 0.5], "float32"))),
    lambda: D.Uniform(t(np.array([0.0, -2.0], "float32")), t(np.array([1.0, 2.0], "float32"))),
    lambda: D.Bernoulli(t(np.array([0.2, 0.7], "float32"))),
    lambda: D.Exponential(t(np.array([0.5, 3.0], "float32"))),
    lambda: D.Laplace(t(np.array([0.0, 1.0], "float32")), t(np.array([1.0, 0.3], "float32"))),
    lambda: D.Gumbel(t(np.array([0.0, 1.0], "float32")), t(np.array([1.0, 2.0], "float32"))),
    lambda: D.Gamma(t(np.array([0.5, 4.0], "float32")), t(np.array([2.0, 1.0], "float32"))),
    lambda: D.Beta(t(np.array([0.5, 4.0], "float32")), t(np.array([2.0, 1.0], "float32"))),
    lambda: D.LogNormal(t(np.array([0.0, 0.5], "float32")), t(np.array([0.5, 0.25], "float32"))),
    lambda: D.Dirichlet(t(np.array([[1.0, 2.0, 0.5], [3.0, 3.0, 3.0]], "float32"))),
    lambda: D.Multinomial(6, t(np.array([0.2, 0.3, 0.5], "float32"))),
    lambda: D.Poisson(t(np.array([0.5, 7.0], "float32"))),
    lambda: D.Binomial(t(np.array([4, 20])), t(np.array([0.3, 0.9], "float32"))),
    lambda: D.Geometric(t(np.array([0.2, 0.9], "float32"))),
    lambda: D.Chi2(t(np.array([1.0, 6.0], "float32"))),
    lambda: D.StudentT(t(np.array([5.0, 9.0], "float32")), t(np.array([0.0, 1.0], "float32")),
                       t(np.array([1.0, 0.5], "float32"))),
    lambda: D.MultivariateNormal(t(np.array([1.0, -1.0], "float32")),
                                 covariance_matrix=t(np.array([[2.0, 0.6], [0.6, 0.5]], "float32"))),
], ids=["normal", "uniform", "bernoulli", "exponential", "laplace", "gumbel", "gamma", "beta", "lognormal",
        "dirichlet", "multinomial", "poisson", "binomial", "geometric", "chi2", "student_t", "mvn"])
def test_sample_shape_dtype_and_moments(make):
    paddle.seed(2024)
    d = make()
    s = d.sample([N])
    assert s.shape == [N] + list(d.batch_shape) + list(d.event_shape) and s.dtype == paddle.float32
    assert_mean_within(s.numpy().astype("float64"), d.mean.numpy(), d.variance.numpy())


def test_mvn_sample_covariance_and_cauchy_median():
    paddle.seed(12)
    cov = np.array([[2.0, 0.6], [0.6, 0.5]])
    s = D.MultivariateNormal(t(np.zeros(2)), covariance_matrix=t(cov)).sample([N]).numpy()
    # each product x_i x_j has mean cov_ij and variance cov_ii cov_jj + cov_ij^2
    prods = s[:, :, None] * s[:, None, :]
    assert_mean_within(prods.reshape(N, 4), cov.ravel(), (np.outer(np.diag(cov), np.diag(cov)) + cov ** 2).ravel())
    c = D.Cauchy(t(np.array([1.0, -2.0])), t(np.array([0.5, 3.0]))).sample([N]).numpy()
    assert_mean_within((c < np.array([1.0, -2.0])).astype("float64"), [0.5, 0.5], [0.25, 0.25])


def test_categorical_sample_frequencies_follow_softmax_of_the_logits():
    paddle.seed(7)
    logits = np.array([[0.0, 1.0, 2.0], [2.0, 0.0, -1.0]], "float32")
    s = D.Categorical(t(logits)).sample([N, 2])
    assert s.shape == [N, 2, 2] and s.dtype == paddle.int64
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    for row in range(2):
        freq = np.stack([(s.numpy()[:, :, row] == k).reshape(-1) for k in range(3)], -1).astype("float64")
        assert_mean_within(freq, p[row], p[row] * (1 - p[row]))


def test_seeded_sampling_repeats():
    d = D.Normal(t(np.zeros(3, "float32")), t(np.ones(3, "float32")))
    paddle.seed(11)
    a = d.sample([4]).numpy()
    paddle.seed(11)
    np.testing.assert_array_equal(a, d.sample([4]).numpy())


def test_normal_rsample_is_differentiable_in_loc_and_scale():
    loc = t(np.array([0.5, -1.0], "float64"), grad=True)
    scale = t(np.array([2.0, 0.5], "float64"), grad=True)
    x = D.Normal(loc, scale).rsample([5])
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
    eps = (x.numpy() - loc.numpy()) / scale.numpy()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-6)


def test_mvn_rsample_is_differentiable_in_loc_and_scale_tril():
    loc = t(np.array([0.5, -1.0]), grad=True)
    tril = t(np.array([[1.0, 0.0], [0.5, 2.0]]), grad=True)
    x = D.MultivariateNormal(loc, scale_tril=tril).rsample([3])
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    eps = np.linalg.solve(tril.numpy(), (x.numpy() - loc.numpy()).T).T  # x = loc + L eps
    np.testing.assert_allclose(tril.grad.numpy(), np.tile(eps.sum(0), (2, 1)), rtol=1e-6)  # d sum(x) / dL_ij


def test_exponential_and_laplace_rsample_gradients_follow_the_inverse_cdf():
    rate = t(np.array([0.5, 2.0], "float64"), grad=True)
    x = D.Exponential(rate).rsample([3])
    x.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), (-x.numpy() / rate.numpy()).sum(0), rtol=1e-6)
    assert D.Exponential(rate).sample([3]).stop_gradient


@pytest.mark.parametrize("name", ["normal", "beta", "dirichlet", "gamma", "categorical_kl", "bernoulli"])
def test_log_prob_and_kl_gradients_match_finite_differences(name):
    a = np.array([0.8, 1.7, 2.5])
    b = np.array([1.3, 0.6, 1.1])

    def value(arr):
        p = t(arr, grad=True)
        if name == "normal":
            out = D.Normal(p, t(b)).log_prob(t(np.array([0.1, 2.0, -1.0])))
        elif name == "beta":
            out = D.kl_divergence(D.Beta(p, t(b)), D.Beta(t(b), p))
        elif name == "dirichlet":
            out = D.Dirichlet(p).entropy() + D.kl_divergence(D.Dirichlet(p), D.Dirichlet(t(b)))
        elif name == "gamma":
            out = D.Gamma(p, t(b)).log_prob(t(np.array([0.5, 1.0, 3.0]))) + D.Gamma(p, t(b)).entropy()
        elif name == "categorical_kl":
            out = D.Categorical(p).kl_divergence(D.Categorical(t(b)))
        else:
            out = D.Bernoulli(p / 3.0).entropy() + D.Bernoulli(p / 3.0).log_prob(t(np.array([1.0, 0.0, 1.0])))
        return p, out.sum()

    p, out = value(a)
    out.backward()
    np.testing.assert_allclose(p.grad.numpy(), fd_grad(lambda: float(value(a)[1]), a), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- dispatch, shapes, errors
def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return p.loc * 0.0 + 42.0

    p = MyNormal(t(np.array([0.0], "float32")), t(np.array([1.0], "float32")))
    q = D.Normal(t(np.array([1.0], "float32")), t(np.array([2.0], "float32")))
    assert D.kl_divergence(p, q).numpy().tolist() == [42.0]
    np.testing.assert_allclose(D.kl_divergence(q, p).numpy(), q.kl_divergence(p).numpy())


def test_kl_divergence_errors():
    n = D.Normal(0.0, 1.0)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(n, D.Exponential(1.0))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


@pytest.mark.parametrize("call, err", [
    (lambda: D.Multinomial(0, t(np.array([0.5, 0.5])) ), ValueError),
    (lambda: D.Multinomial(2, t(np.array(0.5))), ValueError),
    (lambda: D.Independent(D.Normal(0.0, 1.0), 1), ValueError),
    (lambda: D.Independent("normal", 1), TypeError),
    (lambda: D.Laplace("0", 1.0), TypeError),
    (lambda: D.Gumbel(0.0, [1.0]), TypeError),
    (lambda: D.Normal(t(np.zeros(2, "float32")), 1.0), ValueError),
    (lambda: D.Normal(0.0, 1.0).sample(3), TypeError),
    (lambda: D.Dirichlet(t(np.array(1.0))), ValueError),
    (lambda: D.Exponential(1.0).kl_divergence(D.Normal(0.0, 1.0)), TypeError),
    (lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), [1]), TypeError),
    (lambda: D.MultivariateNormal(t(np.zeros(2)), covariance_matrix=t(np.eye(2)), scale_tril=t(np.eye(2))),
     ValueError),
    (lambda: D.MultivariateNormal(t(np.zeros(2)), covariance_matrix=t(np.ones(2))), ValueError),
    (lambda: D.Chi2(t(np.array([-1.0]))), ValueError),
    (lambda: D.StudentT(3.0, 0.0, -1.0), ValueError),
    (lambda: D.Geometric("0.5"), TypeError),
    (lambda: D.Geometric(0.5).pmf(0.5), TypeError),
    (lambda: D.Cauchy(0.0, 1.0).log_prob(0.5), TypeError),
    (lambda: D.Poisson(t(np.ones(2))).kl_divergence(D.Poisson(t(np.ones(3)))), ValueError),
])
def test_bad_arguments_raise_paddles_error_type(call, err):
    with pytest.raises(err):
        call()


def test_mvn_log_prob_and_kl_closed_forms():
    cov_p, cov_q = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[1.0, 0.3], [0.3, 4.0]])
    mu_p, mu_q, x = np.array([1.0, 2.0]), np.array([0.0, -1.0]), np.array([0.5, 1.0])
    p = D.MultivariateNormal(t(mu_p), covariance_matrix=t(cov_p))
    q = D.MultivariateNormal(t(mu_q), precision_matrix=t(np.linalg.inv(cov_q)))
    d = x - mu_p
    want = -0.5 * (d @ np.linalg.solve(cov_p, d) + np.log(np.linalg.det(cov_p)) + 2 * math.log(2 * math.pi))
    np.testing.assert_allclose(p.log_prob(t(x)).numpy(), want, rtol=1e-12)
    dm = mu_q - mu_p
    want = 0.5 * (np.trace(np.linalg.solve(cov_q, cov_p)) + dm @ np.linalg.solve(cov_q, dm) - 2
                  + np.log(np.linalg.det(cov_q) / np.linalg.det(cov_p)))
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), want, rtol=1e-10)


def test_shapes_of_independent_and_float64_parameters():
    base = D.Normal(t(np.zeros((2, 3))), t(np.ones((2, 3))))
    d = D.Independent(base, 1)
    assert (d.batch_shape, d.event_shape) == ((2,), (3,))
    assert d.log_prob(t(np.zeros((2, 3)))).shape == [2]
    assert base.dtype == paddle.float64 and D.Normal(np.zeros(2), np.ones(2)).dtype == paddle.float64
    assert D.Normal([0.0, 1.0], [1.0, 1.0]).dtype == paddle.float32


# ---------------------------------------------------------------- the JIT gives eager's result
def _policy_loss(mu, log_std, action, old_mu):
    dist = D.Normal(mu, log_std.exp())
    old = D.Normal(old_mu, paddle.ones_like(old_mu))
    return -dist.log_prob(action).sum() + D.kl_divergence(dist, old).mean() - 0.01 * dist.entropy().mean()


def test_to_static_of_normal_log_prob_and_kl_matches_eager():
    rng = np.random.default_rng(3)
    args = [rng.normal(size=(4, 2)).astype("float32") for _ in range(4)]

    def run(fn):
        mu = t(args[0], grad=True)
        out = fn(mu, t(args[1]), t(args[2]), t(args[3]))
        out.backward()
        return out.numpy(), mu.grad.numpy()

    want = run(_policy_loss)
    jit = jit_of(_policy_loss)
    for _ in range(2):
        got = run(jit)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
