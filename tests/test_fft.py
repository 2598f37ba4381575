"""paddle.fft, paddle.signal and the complex helpers against real Paddle's numbers (recorded by
tests/fixtures/paddle/fft/record_fft.py): outputs, dtypes, gradients (Paddle's convention for complex
tensors: dL/dRe + i*dL/dIm) and the errors bad arguments raise; eager against NumPy where Paddle is not
needed."""
import json
import pathlib

import numpy as np
import pytest

import runtime as paddle

from helpers import fd_grad

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "paddle" / "fft"
CASES = json.loads((FIXTURES / "cases.json").read_text())
ARRAYS = np.load(FIXTURES / "arrays.npz")
ERRORS = json.loads((FIXTURES / "errors.json").read_text())
MODULES = {"fft": paddle.fft, "paddle": paddle, "signal": paddle.signal}


def _tol(a: np.ndarray) -> dict:
    return {"rtol": 1e-5, "atol": 1e-5} if a.dtype in (np.float32, np.complex64) else {"rtol": 1e-9, "atol": 1e-10}


def _loss(out: paddle.Tensor, key: str) -> paddle.Tensor:
    """The recording's loss: sum(w * out), or sum(wr * real(out) + wi * imag(out))."""
    if paddle.is_complex(out):
        re, im = paddle.real(out), paddle.imag(out)
        return ((re * paddle.to_tensor(ARRAYS[key + "_wr"].astype(re.numpy().dtype))).sum()
                + (im * paddle.to_tensor(ARRAYS[key + "_wi"].astype(im.numpy().dtype))).sum())
    return (out * paddle.to_tensor(ARRAYS[key + "_w"].astype(out.numpy().dtype))).sum()


def _run(key: str, case: dict) -> tuple[list, paddle.Tensor]:
    tensors = [paddle.to_tensor(ARRAYS[n], stop_gradient=not case["grad"]) for n in case["inputs"]]
    kwargs = dict(case["kwargs"])
    args = tensors
    if case.get("window"):
        kwargs["window"], args = tensors[-1], tensors[:-1]
    return tensors, getattr(MODULES[case["module"]], case["fn"])(*args, **kwargs)


@pytest.mark.parametrize("key", sorted(CASES))
def test_matches_paddle(key):
    case = CASES[key]
    tensors, out = _run(key, case)
    want = ARRAYS[key + "_out"]
    got = out.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape, f"{key}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    np.testing.assert_allclose(got, want, **_tol(want), err_msg=key)
    if case["grad"]:
        grads = paddle.grad(_loss(out, key), tensors)
        for i, g in enumerate(grads):
            want_g = ARRAYS[f"{key}_grad{i}"]
            assert g.numpy().dtype == want_g.dtype, f"{key}: gradient {i} dtype"
            np.testing.assert_allclose(g.numpy(), want_g, **_tol(want_g), err_msg=f"{key}: gradient {i}")


def test_grad_of_abs_fft_of_real_input_matches_paddle():
    x = paddle.to_tensor(ARRAYS["abs_fft_sum_x"], stop_gradient=False)
    (g,) = paddle.grad(paddle.abs(paddle.fft.fft(x)).sum(), x)
    assert g.dtype == paddle.float64
    np.testing.assert_allclose(g.numpy(), ARRAYS["abs_fft_sum_grad"], rtol=1e-9)
    # and it is the derivative: finite differences of the same loss in NumPy
    a = ARRAYS["abs_fft_sum_x"].copy()
    np.testing.assert_allclose(g.numpy(), fd_grad(lambda: float(np.abs(np.fft.fft(a)).sum()), a), rtol=1e-6)


@pytest.mark.parametrize("n,d", [(5, 1.0), (6, 0.5), (1, 2.0)])
def test_frequencies_match_paddle(n, d):
    for fn in ("fftfreq", "rfftfreq"):
        got = getattr(paddle.fft, fn)(n, d)
        want = ARRAYS[f"{fn}_{n}"]
        assert got.dtype == paddle.float32
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_allclose(paddle.fft.fftfreq(5, 0.3, dtype="float64").numpy(), ARRAYS["fftfreq_5_f64"],
                               rtol=1e-15)


def test_shifts_match_paddle():
    x = paddle.to_tensor(ARRAYS["shift_in"])
    np.testing.assert_array_equal(paddle.fft.fftshift(x).numpy(), ARRAYS["fftshift"])
    np.testing.assert_array_equal(paddle.fft.ifftshift(x).numpy(), ARRAYS["ifftshift"])
    np.testing.assert_array_equal(paddle.fft.fftshift(x, axes=1).numpy(), np.fft.fftshift(ARRAYS["shift_in"], axes=1))
    np.testing.assert_array_equal(paddle.fft.ifftshift(x, axes=[0, 2]).numpy(),
                                  np.fft.ifftshift(ARRAYS["shift_in"], axes=[0, 2]))
    scalar = paddle.to_tensor(3.0)
    shifted = paddle.fft.fftshift(scalar)
    assert shifted is not scalar and shifted.item() == 3.0


_X1 = np.random.default_rng(0).normal(size=(2, 6))
_X3 = np.random.default_rng(1).normal(size=(2, 3, 4))
_ERROR_CALLS = {
    "fft_norm": ("fft", lambda: paddle.fft.fft(paddle.to_tensor(_X1), norm="bad")),
    "fft_axis": ("fft", lambda: paddle.fft.fft(paddle.to_tensor(_X1), axis=2)),
    "fft_n0": ("fft", lambda: paddle.fft.fft(paddle.to_tensor(_X1), n=0)),
    "irfft_n_neg": ("irfft", lambda: paddle.fft.irfft(paddle.to_tensor(_X1), n=-2)),
    "rfft2_rank": ("rfft2", lambda: paddle.fft.rfft2(paddle.to_tensor(_X1[0]))),
    "fft2_s_len": ("fft2", lambda: paddle.fft.fft2(paddle.to_tensor(_X3), s=[3])),
    "fftn_s_axes": ("fftn", lambda: paddle.fft.fftn(paddle.to_tensor(_X3), s=[3], axes=(1, 2))),
    "fftn_s0": ("fftn", lambda: paddle.fft.fftn(paddle.to_tensor(_X3), s=[0, 3])),
    "fftn_axes": ("fftn", lambda: paddle.fft.fftn(paddle.to_tensor(_X3), axes=(0, 5))),
    "fftfreq_0": ("fftfreq", lambda: paddle.fft.fftfreq(0)),
    "frame_axis": ("frame", lambda: paddle.signal.frame(paddle.to_tensor(_X1), 2, 1, axis=1)),
    "frame_hop": ("frame", lambda: paddle.signal.frame(paddle.to_tensor(_X1), 2, 0)),
    "frame_long": ("frame", lambda: paddle.signal.frame(paddle.to_tensor(_X1), 7, 1)),
    "overlap_add_axis": ("overlap_add", lambda: paddle.signal.overlap_add(paddle.to_tensor(_X3), 2, axis=2)),
    "stft_rank": ("stft", lambda: paddle.signal.stft(paddle.to_tensor(_X3), 4)),
    "stft_n_fft": ("stft", lambda: paddle.signal.stft(paddle.to_tensor(_X1), 7)),
    "stft_win_length": ("stft", lambda: paddle.signal.stft(paddle.to_tensor(_X1), 4, win_length=5)),
    "stft_pad_mode": ("stft", lambda: paddle.signal.stft(paddle.to_tensor(_X1), 4, pad_mode="circular")),
    "istft_nola": ("istft", lambda: paddle.signal.istft(
        paddle.to_tensor(ARRAYS["istft_center_in0"]), 8, hop_length=2, window=paddle.zeros([8], "float64"))),
    "istft_fft_size": ("istft", lambda: paddle.signal.istft(paddle.to_tensor(ARRAYS["istft_center_in0"]), 6,
                                                            hop_length=2)),
    "as_complex_last": ("as_complex", lambda: paddle.as_complex(paddle.to_tensor(np.ones((3, 3))))),
}


@pytest.mark.parametrize("key", sorted(_ERROR_CALLS))
def test_errors_are_paddles(key):
    """ValueError (Paddle asserts stft/istft's arguments: AssertionError there), naming the function, with
    Paddle's message (its own words where Paddle's is an internal check)."""
    op, call = _ERROR_CALLS[key]
    kind, message = ERRORS[key]
    with pytest.raises(ValueError) as info:
        call()
    assert kind in ("ValueError", "AssertionError")
    assert str(info.value).startswith(f"{op}: ")
    if "[Hint" not in message:
        assert message.split(" For more")[0] in str(info.value)


def test_bad_arguments_raise_before_running():
    """Dtype errors are TypeErrors naming the function and argument (Paddle: an internal RuntimeError)."""
    with pytest.raises(TypeError, match="rfft: argument 'x' must be a real"):
        paddle.fft.rfft(paddle.to_tensor(np.ones(4, complex)))
    with pytest.raises(TypeError, match="fft: argument 'x' must be a float, integer or complex"):
        paddle.fft.fft(paddle.to_tensor(np.ones(4, bool)))
    with pytest.raises(TypeError, match="irfft: argument 'x' must be a float or complex"):
        paddle.fft.irfft(paddle.to_tensor(np.ones(4, "int64")))
    with pytest.raises(ValueError, match="fft2: FFT axes .* duplicate"):
        paddle.fft.fft2(paddle.to_tensor(_X3), axes=(1, 1))
    with pytest.raises(TypeError, match="real: argument 'x' must be a complex"):
        paddle.real(paddle.to_tensor(_X1))
    with pytest.raises(TypeError, match="complex: arguments 'real' .* same dtype"):
        paddle.complex(paddle.to_tensor(_X1), paddle.to_tensor(_X1.astype("float32")))


@pytest.mark.parametrize("dtype,want", [("float32", "complex64"), ("float64", "complex128"), ("int64", "complex64"),
                                        ("int32", "complex64")])
def test_output_dtypes_as_paddle(dtype, want):
    x = paddle.to_tensor(np.arange(6).astype(dtype))
    for fn in ("fft", "ifft", "rfft", "ihfft"):
        assert getattr(paddle.fft, fn)(x).dtype == want, fn
    spectrum = paddle.fft.fft(paddle.to_tensor(np.arange(6).astype("float64" if want == "complex128" else "float32")))
    assert paddle.fft.irfft(spectrum).dtype == want.replace("complex64", "float32").replace("complex128", "float64")


def test_integer_input_is_transformed_as_float():
    a = np.arange(7) - 3
    np.testing.assert_allclose(paddle.fft.rfft(paddle.to_tensor(a)).numpy(), np.fft.rfft(a), rtol=1e-6)


@pytest.mark.parametrize("shape,axes", [((4, 6), (0, 1)), ((2, 3, 5), (0, 2)), ((3, 4, 2), (2, 1))])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_nd_transforms_match_numpy(shape, axes, norm):
    rng = np.random.default_rng(5)
    x = rng.normal(size=shape)
    c = x + 1j * rng.normal(size=shape)
    t, tc = paddle.to_tensor(x), paddle.to_tensor(c)
    np.testing.assert_allclose(paddle.fft.fftn(tc, axes=axes, norm=norm).numpy(), np.fft.fftn(c, axes=axes, norm=norm))
    np.testing.assert_allclose(paddle.fft.ifftn(t, axes=axes, norm=norm).numpy(), np.fft.ifftn(x, axes=axes, norm=norm))
    np.testing.assert_allclose(paddle.fft.rfftn(t, axes=axes, norm=norm).numpy(), np.fft.rfftn(x, axes=axes, norm=norm))
    s = [shape[a] + 1 for a in axes]
    np.testing.assert_allclose(paddle.fft.irfftn(tc, s=s, axes=axes, norm=norm).numpy(),
                               np.fft.irfftn(c, s=s, axes=axes, norm=norm), atol=1e-12)


def test_roundtrips():
    x = paddle.to_tensor(np.random.default_rng(2).normal(size=(3, 10)))
    np.testing.assert_allclose(paddle.fft.irfft(paddle.fft.rfft(x), n=10).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(paddle.real(paddle.fft.ifft(paddle.fft.fft(x))).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(paddle.fft.hfft(paddle.fft.ihfft(x), n=10).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(paddle.fft.irfft2(paddle.fft.rfft2(x), s=[3, 10]).numpy(), x.numpy(), atol=1e-12)


def test_gradient_flows_to_real_and_complex_leaves_with_backward():
    """loss.backward() into a real leaf gets a real gradient (the real part), a complex leaf a complex one."""
    rng = np.random.default_rng(6)
    x = paddle.to_tensor(rng.normal(size=8), stop_gradient=False)
    w = paddle.to_tensor(rng.normal(size=5) + 1j * rng.normal(size=5), stop_gradient=False)
    loss = paddle.abs(paddle.fft.rfft(x) * w).sum()
    loss.backward()
    assert x.grad.dtype == paddle.float64 and w.grad.dtype == paddle.complex128
    xa, wa = x.numpy().copy(), w.numpy().copy()

    def f():
        return float(np.abs(np.fft.rfft(xa) * wa).sum())
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(f, xa), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(w.grad.numpy(), fd_grad(f, wa), rtol=1e-6, atol=1e-8)


def test_double_backward_through_fft():
    """The gradient rules are ops, so a gradient differentiates again (checked by nested finite differences)."""
    rng = np.random.default_rng(7)
    x = paddle.to_tensor(rng.normal(size=6), stop_gradient=False)
    v = rng.normal(size=6)
    (g,) = paddle.grad((paddle.abs(paddle.fft.rfft(x)) ** 2).sum(), x, create_graph=True)
    (gg,) = paddle.grad((g * paddle.to_tensor(v)).sum(), x)
    xa = x.numpy().copy()

    def first(a):
        b = a.copy()
        return fd_grad(lambda: float((np.abs(np.fft.rfft(b)) ** 2).sum()), b, 1e-5)

    def f():
        return float((first(xa) * v).sum())
    np.testing.assert_allclose(gg.numpy(), fd_grad(f, xa, 1e-4), rtol=1e-4, atol=1e-6)


def test_tensor_methods_and_is_complex():
    z = paddle.complex(paddle.to_tensor([1.0, -2.0]), paddle.to_tensor([0.5, 3.0]))
    assert z.dtype == paddle.complex64 and paddle.is_complex(z) and not paddle.is_complex(z.real())
    assert z.is_complex() and not z.abs().is_complex()
    np.testing.assert_array_equal(z.real().numpy(), [1.0, -2.0])
    np.testing.assert_array_equal(z.imag().numpy(), [0.5, 3.0])
    np.testing.assert_array_equal(z.conj().numpy(), np.conj(z.numpy()))
    np.testing.assert_array_equal(z.angle().numpy(), np.angle(z.numpy()).astype("float32"))
    np.testing.assert_array_equal(z.as_real().as_complex().numpy(), z.numpy())
    np.testing.assert_array_equal(paddle.abs(z).numpy(), np.abs(z.numpy()))
    assert paddle.abs(z).dtype == paddle.float32


_B = np.random.default_rng(8).normal(size=(3, 2)) + 1j * np.random.default_rng(9).normal(size=(3, 2))
ANALYTIC = {
    "matmul": lambda z: paddle.matmul(z, paddle.to_tensor(_B)),
    "matmul_t": lambda z: paddle.matmul(paddle.to_tensor(_B), z, transpose_x=True, transpose_y=True),
    "einsum": lambda z: paddle.einsum("ij,jk->ik", z, paddle.to_tensor(_B)),
    "bmm": lambda z: paddle.bmm(z.unsqueeze(0), paddle.to_tensor(_B).unsqueeze(0)),
    "dot": lambda z: paddle.dot(z, z * 2.0),
    "multiply": lambda z: z * z,
    "divide": lambda z: 1.0 / (z + 3.0),
    "pow": lambda z: z ** 3,
    "exp": paddle.exp,
    "square": paddle.square,
    "sin": paddle.sin,
    "tanh": paddle.tanh,
    "sqrt": paddle.sqrt,
    "log": paddle.log,
    "real_times_complex": lambda z: paddle.real(z) * paddle.to_tensor(_B.T),
}


@pytest.mark.parametrize("name", sorted(ANALYTIC))
def test_complex_gradients_of_analytic_ops_match_finite_differences(name):
    """Paddle's convention dL/dRe + i*dL/dIm: the rule multiplies by the conjugate derivative."""
    f = ANALYTIC[name]
    rng = np.random.default_rng(10)
    a = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    z = paddle.to_tensor(a, stop_gradient=False)
    out = f(z)
    wr, wi = rng.normal(size=out.shape), rng.normal(size=out.shape)
    loss = (paddle.real(out) * paddle.to_tensor(wr)).sum() + (paddle.imag(out) * paddle.to_tensor(wi)).sum()
    (g,) = paddle.grad(loss, z)

    def numeric():
        o = f(paddle.to_tensor(a)).numpy()
        return float((o.real * wr).sum() + (o.imag * wi).sum())
    np.testing.assert_allclose(g.numpy(), fd_grad(numeric, a), rtol=1e-6, atol=1e-8)
