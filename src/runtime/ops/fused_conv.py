"""fused_epilogue (a conv/linear/matmul and the ops run on its fresh output) and max_pool_values.

The static epilogue pass (runtime.static.epilogue) replaces a `conv`, `linear` or `matmul` op
(the head) followed by a chain of single-consumer ops (which chains: see that module) by ONE
`fused_epilogue` op. Its inputs
are the head's inputs (positionally, None where the head has none) and then every other
input of the chain; its attributes are

- `head`: the head op's name, `head_attrs`: its attributes as sorted `(name, value)` pairs;
- `steps`: a tuple of `(op name, refs, attrs)` with attrs as sorted pairs and refs naming each
  operand: -1 the running value (the previous step's result), `k >= 0` the fused op's input
  `k`, None an absent optional input;
- `pool`: empty, or the attributes of a `max_pool_values` of the last step's result (the op's
  output). Where every step is ReLU or a batch norm with finite positive scale and finite
  shift (checked per call), the steps never reorder values, so the kernel pools the head's
  output first and runs the steps on a quarter of the elements: the same bits.
- `fold`: the first step is an eval-mode `batch_norm_infer` folded into the head's weight and
  bias (W' = W * s per output channel, b' = b * s + shift). This changes rounding, so the pass
  sets it only under FLAGS_fold_batch_norm. A fold is computed once and reused while the
  head's weight and bias and the statistics and affine parameters hold the same values.

The kernel runs the head, then each step writing into the head's fresh buffer: eval-mode
batch norm with the exact arithmetic of the `batch_norm_infer` kernel, elementwise ops and
`fused_elementwise` through their `out=` forms (`runtime.ops.fused.inplace_kernel`), so the
result is bit-identical to running the ops one by one, without their temporaries.

`max_pool_values` is `max_pool` without the argmax mask, for programs where nothing reads the
mask: the same running maximum over the window's taps, so the values are bit-identical.
Neither op has a gradient rule: the passes run only on the copy of a program the executor
makes, after any backward ops were added.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .activation import relu_np
from .conv import from_channel_first, out_geometry, to_channel_first, windows
from .fused import ELEMENTWISE, inplace_kernel, writeable
from .norm import _channel_params, bn_infer_scale_shift
from .pool import _lowest, _max_pool_meta
from .registry import Sample, TensorSpec, defop, get_op, normal_sampler

__all__ = ["HEADS", "FOLDABLE_HEADS", "STEPS", "folds_computed"]

HEADS: frozenset[str] = frozenset({"conv", "linear", "matmul"})
FOLDABLE_HEADS: frozenset[str] = frozenset({"conv", "linear"})  # a weight with one output channel per slice
STEPS: frozenset[str] = ELEMENTWISE | {"fused_elementwise", "batch_norm_infer"}

_rng = np.random.default_rng(31)
_normal = normal_sampler(_rng)


# ---------------------------------------------------------------- eval-mode batch norm
def _bn_into(xp, y, mean, variance, weight, bias, *, epsilon, channel_axis):
    """batch_norm_infer(y, ...) written into y's buffer: the kernel's multiply and add, with out=y."""
    scale, shift = bn_infer_scale_shift(xp, mean, variance, weight, bias, epsilon)
    shape = _channel_params(y.shape, channel_axis)
    xp.multiply(y, scale.reshape(shape).astype(y.dtype, copy=False), out=y)
    xp.add(y, shift.reshape(shape), out=y)
    return y


def _relu_into(xp, y):
    """relu(y) written into y's buffer."""
    return relu_np(xp, y, out=y)


# op name -> fn(xp, y, *other operands, **attrs) of the steps whose running value is their first operand
_STEP_INTO = {"batch_norm_infer": _bn_into, "relu": _relu_into}


# ---------------------------------------------------------------- folding batch norm into the head
class _Fold:
    """One folded (weight, bias) with copies of the values it was computed from."""

    __slots__ = ("sources", "weight", "bias")

    def __init__(self, sources: tuple, weight: Any, bias: Any):
        self.sources, self.weight, self.bias = sources, weight, bias

    def holds(self, xp, arrays: tuple) -> bool:
        """True when every source array still has the values (and dtype) the fold was computed from."""
        return all((a is None) == (s is None) and (a is None or (a.dtype == s.dtype and
                                                                  xp.array_equal(a, s, equal_nan=True)))
                   for a, s in zip(arrays, self.sources))


_FOLD_LIMIT = 256
_folds: dict[tuple, _Fold] = {}
_fold_count = 0


def folds_computed() -> int:
    """How many folds have been computed in this process (a reused fold is not counted)."""
    return _fold_count


def _folded(xp, head: str, weight, bias, bn: tuple, epsilon: float) -> tuple:
    """(W', b') of `head`'s weight and bias with the batch norm (mean, variance, gamma, beta) folded in."""
    global _fold_count
    arrays = (weight, bias, *bn)
    key = (head, epsilon, *(None if a is None else id(a) for a in arrays))
    fold = _folds.get(key)
    if fold is not None and fold.holds(xp, arrays):
        return fold.weight, fold.bias
    scale, shift = bn_infer_scale_shift(xp, *bn, epsilon)
    scale = scale.astype(weight.dtype, copy=False)
    # conv weights are [out, in / groups, *kernel], linear weights [in, out]
    per_out = (-1,) + (1,) * (weight.ndim - 1) if head == "conv" else (1, -1)
    new_w = weight * scale.reshape(per_out)
    new_b = (shift if bias is None else bias * scale + shift).astype(weight.dtype, copy=False)
    if len(_folds) >= _FOLD_LIMIT:
        _folds.clear()
    _folds[key] = _Fold(tuple(None if a is None else a.copy() for a in arrays), new_w, new_b)
    _fold_count += 1
    return new_w, new_b


# ---------------------------------------------------------------- fused_epilogue
def _operands(y, refs: tuple, inputs: tuple) -> list:
    return [y if r == -1 else None if r is None else inputs[r] for r in refs]


def _owned(xp, y, inputs: tuple) -> bool:
    """True when y is a writable float array sharing no memory with the op's inputs (a step may overwrite it)."""
    return (isinstance(y, xp.ndarray) and y.dtype.kind in "fc" and writeable(y)
            and not any(a is not None and xp.may_share_memory(y, a) for a in inputs))


def _fused_kernel(xp, *inputs, head, head_attrs, steps, fold, pool):
    op = get_op(head)
    args = list(inputs[:len(op.inputs)])
    if fold:
        (_, refs, attrs), steps = steps[0], steps[1:]
        args[1], args[2] = _folded(xp, head, args[1], args[2], tuple(_operands(None, refs[1:], inputs)),
                                   dict(attrs)["epsilon"])
    y = op.kernel(xp, *args, **dict(head_attrs))
    if not pool:
        return _epilogue(xp, y, steps, inputs)
    if _commutes_with_max(xp, steps, inputs):
        return _epilogue(xp, _max_values_kernel(xp, y, **dict(pool)), steps, inputs)
    return _max_values_kernel(xp, _epilogue(xp, y, steps, inputs), **dict(pool))


def _epilogue(xp, y, steps: tuple, inputs: tuple):
    """The steps run on y, each written into y's buffer where y is the kernel's own."""
    owned = _owned(xp, y, inputs)
    for name, refs, attrs in steps:
        operands, attrs = _operands(y, refs, inputs), dict(attrs)
        step = _STEP_INTO.get(name) if refs[0] == -1 else None
        into = inplace_kernel(name)
        if owned and step is not None:
            res = step(xp, y, *operands[1:], **attrs)
        elif owned and into is not None:
            res = into(xp, y, *operands, **attrs)
        else:
            res = get_op(name).kernel(xp, *operands, **attrs)
        owned = res is y or _owned(xp, res, inputs)
        y = res
    return y


def _capturing(xp) -> bool:
    """Whether the current CUDA stream is capturing a graph (never on NumPy)."""
    return xp is not np and xp.cuda.get_current_stream().is_capturing()


def _commutes_with_max(xp, steps: tuple, inputs: tuple) -> bool:
    """True when the steps are non-decreasing in the running value for these inputs, so taking the
    window maxima first gives the same bits on a quarter of the elements.

    ReLU and a batch norm with finite positive scale and finite shift (a correctly rounded
    multiply by a positive number, then an add) never reorder two values, so the maximum of
    their results is their result on the maximum. A NaN in a window is the maximum either way;
    a NaN or non-positive scale, or a NaN shift, keeps the steps before the pooling; so does a
    CUDA graph capture, which cannot read the scale on the host (the same bits, more work).
    """
    for name, refs, attrs in steps:
        if refs[0] != -1:
            return False
        if name == "batch_norm_infer":
            if _capturing(xp):   # the check below reads values on the host, which a CUDA graph capture refuses
                return False
            scale, shift = bn_infer_scale_shift(xp, *_operands(None, refs[1:], inputs), dict(attrs)["epsilon"])
            if not (bool((scale > 0).all()) and bool(xp.isfinite(scale).all()) and bool(xp.isfinite(shift).all())):
                return False
        elif name != "relu":
            return False
    return True


def _fused_meta(*inputs: TensorSpec | None, head: str, head_attrs: tuple, steps: tuple, fold: bool,
                pool: tuple) -> TensorSpec:
    op = get_op(head)
    if op.name not in HEADS:
        raise ValueError(f"fused_epilogue: head '{head}' is not one of {sorted(HEADS)}")
    spec = op.meta(*inputs[:len(op.inputs)], **dict(head_attrs))
    for k, (name, refs, attrs) in enumerate(steps):
        if any(r is not None and not -1 <= r < len(inputs) for r in refs):
            raise ValueError(f"fused_epilogue: step {k} ('{name}') refers to {refs}, but the op has "
                             f"{len(inputs)} inputs")
        if name not in STEPS:
            raise ValueError(f"fused_epilogue: step {k} op '{name}' is not elementwise nor batch_norm_infer")
        spec = get_op(name).meta(*_operands(spec, refs, inputs), **dict(attrs))
    return _max_values_meta(spec, **dict(pool)) if pool else spec


def _fused_samples() -> list[Sample]:
    conv = (("channel_last", False), ("dilation", (1, 1)), ("groups", 1), ("padding", (1, 1, 1, 1)),
            ("stride", (1, 1)))
    bn = ("batch_norm_infer", (-1, 3, 4, 5, 6), (("channel_axis", 1), ("epsilon", 1e-5)))
    var = np.abs(_normal(4)) + 0.5
    conv_inputs = (_normal(2, 3, 5, 5), _normal(4, 3, 3, 3), _normal(4), _normal(4), var, _normal(4), _normal(4))
    pool = (("ceil_mode", True), ("channel_last", False), ("kernel_size", (2, 2)), ("padding", (0, 0, 0, 0)),
            ("stride", (2, 2)))

    def attrs(head: str, head_attrs: tuple, steps: tuple, fold: bool = False, pooled: tuple = ()) -> dict:
        return {"head": head, "head_attrs": head_attrs, "steps": steps, "fold": fold, "pool": pooled}
    return [
        Sample(conv_inputs, attrs("conv", conv, (bn, ("relu", (-1,), ())))),
        Sample(conv_inputs, attrs("conv", conv, (bn, ("tanh", (-1,), ())), fold=True)),
        Sample(conv_inputs, attrs("conv", conv, (bn, ("relu", (-1,), ())), pooled=pool)),
        Sample((_normal(3, 5), _normal(5, 4), None, _normal(3, 4)),
               attrs("linear", (), (("add", (3, -1), ()), ("sigmoid", (-1,), ())))),
        Sample((_normal(3, 5), _normal(4, 5)),
               attrs("matmul", (("transpose_x", False), ("transpose_y", True)), (("relu", (-1,), ()),))),
    ]


FUSED_EPILOGUE = defop("fused_epilogue", kernel=_fused_kernel, meta=_fused_meta,
                       attrs={"head": "conv", "head_attrs": (), "steps": (), "fold": False, "pool": ()},
                       inputs=("*x",), samples=_fused_samples)


# ---------------------------------------------------------------- max_pool without the mask
def _max_values_meta(x: TensorSpec, *, kernel_size: tuple, stride: tuple, padding: Any, ceil_mode: bool,
                     channel_last: bool) -> TensorSpec:
    return _max_pool_meta(x, kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                          channel_last=channel_last)[0]


def _max_values_kernel(xp, x, *, kernel_size, stride, padding, ceil_mode, channel_last):
    """The running maximum `max_pool` computes (same order of np.maximum calls), without the argmax."""
    x = to_channel_first(xp, x, channel_last)
    nd = len(kernel_size)
    pads, _, out = out_geometry("max_pool", x.shape[2:], kernel_size, stride, padding, (1,) * nd, ceil_mode)
    view = windows(xp, x, kernel_size, stride, (1,) * nd, pads, out, _lowest(x.dtype))
    lead = (slice(None), slice(None))
    taps = (view[lead + tap] for tap in np.ndindex(*kernel_size))
    best = next(taps).copy()
    for tap in taps:
        xp.maximum(best, tap, out=best)
    return from_channel_first(xp, best, channel_last)


def _max_values_samples() -> list[Sample]:
    return [Sample((s.inputs[0],), dict(s.attrs)) for s in get_op("max_pool").samples()]


MAX_POOL_VALUES = defop("max_pool_values", kernel=_max_values_kernel, meta=_max_values_meta,
                        attrs=dict(get_op("max_pool").attrs), samples=_max_values_samples)
