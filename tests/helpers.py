"""Helpers shared by the tests: tensors from arrays, and central finite differences.

pytest puts this directory on sys.path (tests/ has a conftest.py and no __init__.py),
so test modules import it as `from helpers import fd_grad, t`."""
from typing import Callable

import numpy as np

import runtime as paddle


def t(a, grad: bool = False) -> paddle.Tensor:
    """A tensor from np.asarray(a); grad=True makes it record gradients."""
    return paddle.to_tensor(np.asarray(a), stop_gradient=not grad)


def fd_grad(f: Callable[[], float], a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of the scalar f() with respect to array a (perturbed in place); for a
    complex a, dL/dRe + i*dL/dIm (Paddle's convention for complex gradients)."""
    g = np.zeros_like(a)
    flat, gflat = a.reshape(-1), g.reshape(-1)
    for step in ((eps, 1j * eps) if a.dtype.kind == "c" else (eps,)):
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + step
            up = f()
            flat[i] = orig - step
            down = f()
            flat[i] = orig
            gflat[i] += (up - down) / (2 * eps) * (step / eps)
    return g


def output_weights(rng: np.random.Generator, out: np.ndarray) -> list[np.ndarray]:
    """Random weights turning an output into a real scalar loss: one array, two for a complex output
    (its real and imaginary parts weighed apart)."""
    return [rng.normal(size=out.shape) for _ in range(2 if out.dtype.kind == "c" else 1)]


def weighted_sum_np(out: np.ndarray, weights: list[np.ndarray]) -> float:
    """sum(w0 * real(out)) [+ sum(w1 * imag(out))], in NumPy."""
    return float(sum((w * part).sum() for w, part in zip(weights, (out.real, out.imag))))


def weighted_sum(out: "paddle.Tensor", weights: list[np.ndarray], place=None) -> "paddle.Tensor":
    """sum(w0 * real(out)) [+ sum(w1 * imag(out))] as a differentiable tensor (weights on `place`); works
    on a static Variable too."""
    parts = [paddle.real(out), paddle.imag(out)] if paddle.is_complex(out) else [out]
    terms = [(p * paddle.to_tensor(w.astype(p.dtype.np_dtype), place=place)).sum() for w, p in zip(weights, parts)]
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def assert_device_equal(got, want, device, rtol: float = 1e-5, atol: float = 1e-6, err_msg: str = "") -> None:
    """A device result against the CPU's: bit for bit on the CuPy stand-in (it computes with NumPy),
    within rtol/atol on a real GPU, whose kernels sum and round in their own order."""
    if getattr(device, "__name__", "") == "fake_cupy":
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=err_msg)


def grad_positions(op, sample) -> list[int]:
    """The inputs of a registry sample whose gradient is checked: those it names, else every floating array."""
    if sample.grad_inputs is not None:
        return list(sample.grad_inputs)
    return [i for i, a in enumerate(sample.inputs) if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]


def registry_cases(need_grad: bool = False):
    """One pytest param per sample of every registry op (`need_grad`: only differentiable ones with an input
    whose gradient is checked), with ids `op-i`."""
    import pytest  # noqa: PLC0415 - helpers is imported by scripts too
    from runtime.ops import all_ops  # noqa: PLC0415
    for name, op in sorted(all_ops().items()):
        if op.samples is None or (need_grad and (op.grad is None or op.random)):
            continue
        for i, s in enumerate(op.samples()):
            if need_grad and not grad_positions(op, s):
                continue
            yield pytest.param(op, s, id=f"{name}-{i}")
