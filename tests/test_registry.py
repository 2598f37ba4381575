"""Walk the op registry: every op has samples; meta agrees with the kernel; gradients
of every differentiable op match central finite differences in float64."""
import numpy as np
import pytest

import runtime as paddle
from runtime.ops import all_ops
from runtime.ops.registry import TensorSpec

from helpers import fd_grad, grad_positions, output_weights, registry_cases, weighted_sum, weighted_sum_np

OPS = all_ops()
EPS = 1e-6




def test_every_op_has_samples():
    missing = [n for n, op in OPS.items() if op.samples is None]
    assert not missing, f"ops without sample inputs: {missing}"


def _kernel_outputs(op, arrays, attrs):
    out = op.kernel(np, *arrays, **attrs)
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def _check_meta(op, arrays, attrs):
    specs = [None if a is None else TensorSpec(np.asarray(a).shape, np.asarray(a).dtype) for a in arrays]
    meta = op.meta(*specs, **attrs)
    metas = list(meta) if type(meta) is tuple else [meta]
    outs = _kernel_outputs(op, [None if a is None else np.asarray(a) for a in arrays], attrs)
    assert len(metas) == len(outs), f"{op.name}: meta gives {len(metas)} outputs, kernel {len(outs)}"
    for k, (m, o) in enumerate(zip(metas, outs)):
        assert len(m.shape) == o.ndim, f"{op.name} output {k}: meta rank {m.shape} vs kernel {o.shape}"
        for dm, do in zip(m.shape, o.shape):
            assert dm == do or (dm == -1 and op.dynamic_shape), \
                f"{op.name} output {k}: meta shape {m.shape} vs kernel {o.shape}"
        assert m.dtype == o.dtype, f"{op.name} output {k}: meta dtype {m.dtype} vs kernel {o.dtype}"


@pytest.mark.parametrize("op,sample", list(registry_cases()))
def test_meta_matches_kernel(op, sample):
    if op.random:
        paddle.seed(0)
    _check_meta(op, sample.inputs, sample.attrs)
    as32 = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a
            for a in sample.inputs]
    _check_meta(op, as32, sample.attrs)




@pytest.mark.parametrize("op,sample", list(registry_cases(need_grad=True)))
def test_gradient_matches_finite_differences(op, sample):
    positions = grad_positions(op, sample)
    arrays = [None if a is None else np.array(a, copy=True) for a in sample.inputs]
    rng = np.random.default_rng(3)
    outs = _kernel_outputs(op, arrays, sample.attrs)
    diff_out = [k for k, o in enumerate(outs) if k not in op.nondiff_outputs and o.dtype.kind in "fc"]
    weights = {k: output_weights(rng, outs[k]) for k in diff_out}

    def f(arrs):
        res = _kernel_outputs(op, arrs, sample.attrs)
        return sum(weighted_sum_np(res[k], weights[k]) for k in diff_out)

    tensors = [None if a is None else paddle.to_tensor(a, stop_gradient=i not in positions)
               for i, a in enumerate(arrays)]
    result = op(*tensors, **sample.attrs)
    results = list(result) if isinstance(result, tuple) else [result]
    loss = None
    for k in diff_out:
        term = weighted_sum(results[k], weights[k])
        loss = term if loss is None else loss + term
    grads = paddle.grad(loss, [tensors[i] for i in positions], allow_unused=True)
    for i, g in zip(positions, grads):
        numeric = fd_grad(lambda: f(arrays), arrays[i], EPS)
        analytic = np.zeros_like(numeric) if g is None else g.numpy()
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{op.name}: gradient of input {op.input_name(i)}")
