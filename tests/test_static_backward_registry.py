"""Walk the op registry: for every differentiable, non-random op and each of its samples,
`append_backward` in a static program (inputs fed as `static.data`) gives the same input
gradients as eager autograd on the same inputs."""
import numpy as np
import pytest

import runtime as paddle
from runtime import static
from runtime.ops import all_ops
from runtime.ops.registry import TensorSpec

from helpers import output_weights, weighted_sum

OPS = all_ops()

# Ops whose gradient cannot be built in a static program, with the reason (keep this tiny).
EAGER_ONLY: dict[str, str] = {}


def _grad_positions(sample):
    """The sample's checked inputs; an empty `grad_inputs` only means that finite differences
    cannot check it (mode's ties), and static-vs-eager can: then every floating input."""
    if sample.grad_inputs:
        return list(sample.grad_inputs)
    return [i for i, a in enumerate(sample.inputs) if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]


def _cases():
    for name, op in sorted(OPS.items()):
        if op.grad is None or op.random or op.samples is None or name in EAGER_ONLY:
            continue
        for i, s in enumerate(op.samples()):
            if _grad_positions(s) and _differentiable_outputs(op, s):
                yield pytest.param(op, s, id=f"{name}-{i}")


def _differentiable_outputs(op, sample):
    """Indices of the floating and complex outputs a gradient flows back from (by the meta function)."""
    specs = [None if a is None else TensorSpec(np.shape(a), np.asarray(a).dtype) for a in sample.inputs]
    meta = op.meta(*specs, **sample.attrs)
    metas = meta if type(meta) is tuple else (meta,)
    return [k for k, m in enumerate(metas) if k not in op.nondiff_outputs and m.dtype.kind in "fc"]


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _eager_grads(op, sample, arrays, positions, weights):
    tensors = [None if a is None else paddle.to_tensor(a, stop_gradient=i not in positions)
               for i, a in enumerate(arrays)]
    outs = _outputs(op(*tensors, **sample.attrs))
    loss = None
    for k, w in weights.items():
        term = weighted_sum(outs[k], w)
        loss = term if loss is None else loss + term
    grads = paddle.grad(loss, [tensors[i] for i in positions], allow_unused=True)
    return [np.zeros_like(arrays[i]) if g is None else g.numpy() for i, g in zip(positions, grads)]


def _static_grads(op, sample, arrays, positions, weights):
    paddle.enable_static()
    try:
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            xs = []
            for i, a in enumerate(arrays):
                if a is None:
                    xs.append(None)
                    continue
                v = static.data(f"in{i}", list(a.shape), a.dtype)
                v.stop_gradient = i not in positions
                xs.append(v)
            outs = _outputs(op(*xs, **sample.attrs))
            loss = None
            for k, w in weights.items():
                term = weighted_sum(outs[k], w)
                loss = term if loss is None else loss + term
            n_forward = len(main.global_block().ops)
            static.append_backward(loss)
        block = main.global_block()
        seed = block.ops[n_forward]  # the backward part starts with the loss's gradient: 1.0
        assert seed.type == "full" and seed.attrs["fill_value"] == 1.0 and seed.outputs == [loss.name + "@GRAD"]
        fetch = [f"in{i}@GRAD" for i in positions]
        present = [n for n in fetch if block.has_var(n)]
        feed = {f"in{i}": a for i, a in enumerate(arrays) if a is not None}
        values = static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=present,
                                                         scope=static.Scope())
    finally:
        paddle.disable_static()
    got = dict(zip(present, values))
    return [got.get(n, np.zeros_like(arrays[i])) for n, i in zip(fetch, positions)], main


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_append_backward_matches_eager_autograd(op, sample):
    positions = _grad_positions(sample)
    arrays = [None if a is None else np.array(a, copy=True) for a in sample.inputs]
    outs = _outputs(op.kernel(np, *[None if a is None else a.copy() for a in arrays], **sample.attrs))
    rng = np.random.default_rng(5)
    weights = {k: output_weights(rng, np.asarray(o)) for k, o in enumerate(outs)
               if k not in op.nondiff_outputs and np.asarray(o).dtype.kind in "fc"}
    expected = _eager_grads(op, sample, arrays, positions, weights)
    got, main = _static_grads(op, sample, arrays, positions, weights)
    for i, e, g in zip(positions, expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10,
                                   err_msg=f"{op.name}: gradient of input {op.input_name(i)}\n{main}")


def test_the_walk_covers_every_differentiable_non_random_op():
    walked = {p.values[0].name for p in _cases()}
    expected = {n for n, op in OPS.items() if op.grad is not None and not op.random}
    assert not expected - walked - set(EAGER_ONLY), sorted(expected - walked)
    assert set(EAGER_ONLY) <= expected
