"""fused_elementwise: a chain of elementwise ops run as one op, and `out=` forms of elementwise ops.

The static fusion pass (runtime.static.passes) replaces a chain of single-consumer
elementwise ops by ONE `fused_elementwise` op whose attribute `chain` describes the members:
a tuple of steps `(op name, input refs, attrs)`, where a ref `r < len(inputs)` names the fused
op's input `r` and `r >= len(inputs)` the output of step `r - len(inputs)`; attrs are the
member's attributes as sorted `(name, value)` pairs, so the chain is hashable. The kernel
evaluates the steps in order with each member's own computation, writing a step's result with
`out=` into the buffer of an operand the chain owns and no longer needs, so a chain runs in
one buffer; the meta replays the members' metas.

`ELEMENTWISE` is the table of ops the pass may fuse (each output element depends only on the
matching, broadcast, input elements). `inplace_kernel(name)` gives the `out=` form of an op,
`fn(xp, out, *arrays, **attrs)`: the executor calls it for an op the in-place pass marked, with
`out` the input array whose buffer may be overwritten. Every `out=` form falls back to the
op's kernel when `out` cannot hold the result exactly (another dtype or shape at run time), so
results are bit-identical with and without reuse. There is no gradient rule: the fusion pass
runs only on the copy of a program the executor makes, after append_backward/minimize have
added the backward ops to the user's program.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import activation as _act
from . import math as _m
from .registry import Sample, TensorSpec, defop, get_op

__all__: list[str] = []

# ---------------------------------------------------------------- the fusible ops
ELEMENTWISE: frozenset[str] = frozenset(
    [*_m._BINARY, "divide", *_m._UNARY, *_m._COMPARE, *_m._LOGICAL, *_m._BITWISE,
     "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "where", "clip", "scale", "cast", "lerp",
     *_act._ACTIVATIONS, *(f"{n}_grad" for n in _act._ACTIVATIONS)])


# ---------------------------------------------------------------- out= forms (bit-identical to the kernels)
def _fits(xp, out: Any, arrays: tuple) -> bool:
    """True when `out` is a writable float array that the op's result has exactly (shape and dtype)."""
    if not isinstance(out, xp.ndarray) or out.dtype.kind not in "fc" or not out.flags.writeable:
        return False
    dt, shape, nd = out.dtype, out.shape, out.ndim
    for a in arrays:
        if a.dtype != dt:
            return False
        if a.shape != shape:
            if a.ndim > nd:
                return False
            for da, do in zip(reversed(a.shape), reversed(shape)):
                if da != 1 and da != do:
                    return False
    return True


def _ufunc_into(fname: str) -> Callable:
    def into(xp, out, *arrays):
        return getattr(xp, fname)(*arrays, out=out)
    return into


def _relu_into(xp, out, x):
    return xp.maximum(x, 0, out=out)


def _scale_into(xp, out, x, *, scale, bias, bias_after_scale):
    if bias_after_scale:
        xp.multiply(x, scale, out=out)
        return xp.add(out, bias, out=out)
    xp.add(x, bias, out=out)
    return xp.multiply(out, scale, out=out)


def _clip_into(xp, out, x, *, min, max):  # noqa: A002 - the op's attribute names
    return xp.clip(x, min, max, out=out)


def _rsqrt_into(xp, out, x):
    xp.sqrt(x, out=out)
    return xp.reciprocal(out, out=out)


_UNARY_UFUNCS = {"abs": "absolute", "neg": "negative", "exp": "exp", "expm1": "expm1", "log": "log",
                 "log2": "log2", "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "square": "square",
                 "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
                 "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "reciprocal": "reciprocal", "floor": "floor",
                 "ceil": "ceil", "trunc": "trunc", "sign": "sign"}

# op name -> fn(xp, out, *arrays, **attrs), valid when _fits(out, arrays)
_INTO: dict[str, Callable] = {
    **{name: _ufunc_into(spec[0].__name__) for name, spec in _m._BINARY.items()},
    "divide": _ufunc_into("true_divide"),
    **{name: _ufunc_into(fname) for name, fname in _UNARY_UFUNCS.items()},
    "rsqrt": _rsqrt_into, "relu": _relu_into, "scale": _scale_into, "clip": _clip_into,
}


def _guarded(name: str, into: Callable) -> Callable:
    """The out= form of `name` that computes a fresh array when `out` cannot hold the result."""
    kernel = get_op(name).kernel

    def run(xp, out, *arrays, **attrs):
        if _fits(xp, out, arrays):
            return into(xp, out, *arrays, **attrs)
        return kernel(xp, *arrays, **attrs)
    return run


# ---------------------------------------------------------------- the fused op
class _Plan:
    """A chain compiled once: per step its kernel, out= form, refs, attrs, reusable and dead refs."""

    __slots__ = ("n_in", "steps")

    def __init__(self, chain: tuple, n_in: int):
        self.n_in = n_in
        last_use: dict[int, int] = {}
        for k, (_, refs, _) in enumerate(chain):
            for r in refs:
                last_use[r] = k
        steps = []
        for k, (name, refs, attrs) in enumerate(chain):
            ending = tuple(dict.fromkeys(r for r in refs if last_use[r] == k))
            steps.append((get_op(name).kernel, _INTO.get(name), tuple(refs), dict(attrs), ending))
        self.steps = steps

    def run(self, xp, inputs: tuple, granted: int = -1):
        """Evaluate the chain; only member outputs and input `granted` may be overwritten."""
        n_in = self.n_in
        vals = list(inputs)
        for kernel, into, refs, attrs, ending in self.steps:
            args = [vals[r] for r in refs]
            out = None
            if into is not None:
                for r in ending:
                    if (r >= n_in or r == granted) and _fits(xp, vals[r], args):
                        out = vals[r]
                        break
            for r in ending:
                vals[r] = None  # dead after this step: the chain keeps no extra buffers alive
            vals.append(kernel(xp, *args, **attrs) if out is None else into(xp, out, *args, **attrs))
        return vals[-1]


_PLANS: dict[tuple[tuple, int], _Plan] = {}
_PLANS_LIMIT = 4096


def _plan(chain: tuple, n_in: int) -> _Plan:
    key = (chain, n_in)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _Plan(chain, n_in)
        if len(_PLANS) < _PLANS_LIMIT:
            _PLANS[key] = plan
    return plan


def _fused_kernel(xp, *inputs, chain):
    return _plan(chain, len(inputs)).run(xp, inputs)


def _fused_into(xp, out, *inputs, chain):
    granted = next(k for k, a in enumerate(inputs) if a is out)
    return _plan(chain, len(inputs)).run(xp, inputs, granted)


def _fused_meta(*inputs: TensorSpec, chain: tuple) -> TensorSpec:
    if not chain:
        raise ValueError("fused_elementwise: attribute 'chain' must hold at least one step")
    specs = list(inputs)
    for k, (name, refs, attrs) in enumerate(chain):
        if name not in ELEMENTWISE:
            raise ValueError(f"fused_elementwise: step {k} op '{name}' is not an elementwise op")
        if any(not 0 <= r < len(specs) for r in refs):
            raise ValueError(f"fused_elementwise: step {k} ('{name}') refers to {refs}, but only "
                             f"{len(specs)} values exist before it")
        specs.append(get_op(name).meta(*[specs[r] for r in refs], **dict(attrs)))
    return specs[-1]


def _fused_samples() -> list[Sample]:
    rng = np.random.default_rng(7)
    scale = ("scale", (3,), (("bias", 0.5), ("bias_after_scale", True), ("scale", 2.0)))
    return [
        Sample((rng.normal(size=(3, 4)), rng.normal(size=(4,))),
               {"chain": (("add", (0, 1), ()), ("relu", (2,), ()), scale, ("multiply", (4, 0), ()))}),
        Sample((rng.random((2, 3)) > 0.5, rng.normal(size=(2, 3)), rng.normal(size=(3,))),
               {"chain": (("tanh", (1,), ()), ("where", (0, 3, 2), ()), ("cast", (4,), (("dtype", np.dtype("float64")),)),
                          ("exp", (5,), ()))}),
    ]


FUSED_ELEMENTWISE = defop("fused_elementwise", kernel=_fused_kernel, meta=_fused_meta, attrs={"chain": ()},
                          inputs=("*x",), samples=_fused_samples)

_INPLACE: dict[str, Callable] = {**{name: _guarded(name, into) for name, into in _INTO.items()},
                                 "fused_elementwise": _fused_into}


def inplace_kernel(name: str) -> Callable | None:
    """fn(xp, out, *arrays, **attrs) computing op `name` into `out` where it fits, or None."""
    return _INPLACE.get(name)
