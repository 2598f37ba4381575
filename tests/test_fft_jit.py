"""to_static of code using paddle.fft, paddle.signal and complex tensors gives exactly the eager result,
with complex tensors flowing through the captured graph (inputs, intermediates and outputs)."""
import numpy as np

import runtime as paddle
import sot

from sot_helpers import assert_like_eager_with_grads, assert_same_result, captured, events, jit_of, run_with_grads


def _signal(*shape, seed=0, dtype="float32"):
    return paddle.to_tensor(np.random.default_rng(seed).normal(size=shape).astype(dtype))


def spectral_mix(x, w):
    """An FNet/FNO-style block: a spectrum, scaled per frequency by complex weights, back to real."""
    spectrum = paddle.fft.rfft2(x, norm="ortho")
    return paddle.fft.irfft2(spectrum * w, s=x.shape[-2:], norm="ortho") + paddle.real(paddle.fft.fft(x)).mean()


def test_spectral_block_is_captured_and_matches_eager():
    x = _signal(2, 4, 6)
    w = paddle.complex(_signal(4, 4, seed=1), _signal(4, 4, seed=2))
    captured(spectral_mix, x, w)


def test_spectral_block_gradients_match_eager():
    x = _signal(2, 4, 6)
    x.stop_gradient = False
    w = paddle.complex(_signal(4, 4, seed=1), _signal(4, 4, seed=2))
    w.stop_gradient = False
    want = run_with_grads(spectral_mix, [x, w])
    got = run_with_grads(jit_of(spectral_mix), [x, w])
    assert_like_eager_with_grads(got[0], want[0], got[1], want[1], got[2], want[2])
    assert want[1][1].dtype == np.complex64  # the complex leaf got a complex gradient


def complex_outputs(z):
    """Complex in, complex and real out, through every complex helper."""
    y = paddle.fft.ifft(z, n=8, norm="forward")
    parts = paddle.as_real(y) * 2.0
    return paddle.as_complex(parts), paddle.angle(y) + paddle.abs(paddle.conj(y)), paddle.imag(y)


def test_complex_tensors_flow_through_a_graph():
    z = paddle.complex(_signal(3, 5, dtype="float64"), _signal(3, 5, seed=3, dtype="float64"))
    captured(complex_outputs, z)


def spectrogram(x, window):
    spec = paddle.signal.stft(x, n_fft=16, hop_length=4, window=window, center=True, pad_mode="reflect")
    return paddle.log(paddle.abs(spec) ** 2 + 1e-6)


def test_stft_is_captured_and_matches_eager():
    captured(spectrogram, _signal(2, 64), paddle.to_tensor(np.hanning(16).astype("float32")))


def test_fft_helpers_are_captured():
    def f(x):
        freqs = paddle.fft.fftfreq(x.shape[-1], d=0.5)
        return paddle.fft.fftshift(paddle.abs(paddle.fft.fft(x)) * freqs, axes=-1)
    captured(f, _signal(3, 6))


def resynthesize(x, window):
    spec = paddle.signal.stft(x, n_fft=16, hop_length=4, window=window)
    return paddle.signal.istft(spec * 0.5, n_fft=16, hop_length=4, window=window, length=x.shape[-1])


def test_istft_runs_eagerly_under_to_static_and_matches():
    """istft reads the window envelope (the NOLA check), so the JIT breaks the graph there and runs it
    eagerly: the result is eager's, and the round trip returns half the signal."""
    x, window = _signal(2, 64), paddle.to_tensor(np.hanning(16).astype("float32") + 0.01)
    jit = jit_of(resynthesize)
    got = jit(x, window)
    assert_same_result(got, resynthesize(x, window))
    np.testing.assert_allclose(got.numpy(), 0.5 * x.numpy(), atol=1e-5)
    assert any(code == "SOT-B002" for code, _, _ in events(jit)), events(jit)


def test_nola_failure_raises_under_to_static_as_eagerly():
    x = _signal(1, 32)
    window = paddle.zeros([16])
    spec = paddle.signal.stft(x, n_fft=16, hop_length=4, window=paddle.ones([16]))
    jit = jit_of(lambda s, w: paddle.signal.istft(s, n_fft=16, hop_length=4, window=w))
    for fn in (jit, lambda s, w: paddle.signal.istft(s, n_fft=16, hop_length=4, window=w)):
        try:
            fn(spec, window)
        except ValueError as e:
            assert "NOLA" in str(e)
        else:
            raise AssertionError("istft accepted a window that sums to zero")


def batch_spectral(x, w):
    y = paddle.fft.irfft2(paddle.fft.rfft2(x) * w, s=x.shape[-2:])
    return y, paddle.signal.stft(x[:, 0], 4, hop_length=2), paddle.fft.fftshift(x, axes=[-1])


def test_batch_dim_becomes_dynamic_through_transforms():
    """Sizes of the axes not transformed flow through as -1: a new batch size reuses the second translation."""
    jit = jit_of(batch_spectral)
    w = paddle.complex(paddle.ones([4, 3]), paddle.ones([4, 3]))
    for n in (2, 3, 4, 5):
        x = _signal(n, 4, 4, seed=n)
        assert_same_result(jit(x, w), batch_spectral(x, w))
    assert jit.sot_translator.translations == 2 and jit.sot_translator.fallbacks == []


def test_changing_the_transform_length_matches_eager():
    """irfft's default output length is read from the input's size, so a new length translates again."""
    def f(x):
        return paddle.fft.irfft(paddle.fft.rfft(x) * 2.0), paddle.fft.fft(x, n=8)
    jit = jit_of(f)
    for n in (6, 7, 10):
        x = _signal(2, n, seed=n)
        assert_same_result(jit(x), f(x))
    assert jit.sot_translator.fallbacks == []


def test_is_complex_branch_is_captured():
    def f(z):
        if z.is_complex() and paddle.is_complex(z):
            return paddle.real(z) * 2.0
        return z
    captured(f, paddle.complex(_signal(3), _signal(3, seed=1)))
    captured(f, _signal(3))
