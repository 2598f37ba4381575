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
    """Central finite differences of the scalar f() with respect to array a (perturbed in place)."""
    g = np.zeros_like(a)
    flat, gflat = a.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + eps
        up = f()
        flat[i] = orig - eps
        down = f()
        flat[i] = orig
        gflat[i] = (up - down) / (2 * eps)
    return g


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
    return [i for i, a in enumerate(sample.inputs) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]


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
