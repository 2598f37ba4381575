"""fused_elementwise: a chain of elementwise ops run as one op, and `out=` forms of elementwise ops.

The static fusion pass (runtime.static.passes) replaces a chain of single-consumer
elementwise ops by ONE `fused_elementwise` op whose attribute `chain` describes the members:
a tuple of steps `(op name, input refs, attrs)`, where a ref `r < len(inputs)` names the fused
op's input `r` and `r >= len(inputs)` the output of step `r - len(inputs)`; attrs are the
member's attributes as sorted `(name, value)` pairs, so the chain is hashable. A step with no
refs is a constant (a no-input op that is not random, `assign_value` or `full`), evaluated once
per signature with the op's kernel and read from the generated function's globals. The kernel
evaluates the steps in order with each member's own computation, writing a step's result with
`out=` into the buffer of an operand the chain owns and no longer needs, so a chain runs in
one buffer; a chain on one-element values whose steps give the same bits on NumPy scalars runs
on scalars instead (`_SCALAR_OPERATORS`, `_SCALAR_UFUNCS`). On a GPU (an `xp` other than NumPy) a
chain with a CUDA form runs as one generated CuPy kernel instead (`fused_cuda`); the NumPy path
is unchanged. The meta replays the members' metas.

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

import functools
import math
from typing import Any, Callable

import numpy as np

from . import activation as _act
from . import fused_cuda
from . import math as _m
from .registry import Sample, TensorSpec, defop, get_op

__all__ = ["constant_step", "writeable"]

# ---------------------------------------------------------------- the fusible ops
ELEMENTWISE: frozenset[str] = frozenset(
    [*_m._BINARY, "divide", *_m._UNARY, *_m._COMPARE, *_m._LOGICAL, *_m._BITWISE,
     "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "where", "clip", "scale", "cast", "lerp",
     *_act._ACTIVATIONS, *(f"{n}_grad" for n in _act._ACTIVATIONS)])


# ---------------------------------------------------------------- out= forms (bit-identical to the kernels)
def writeable(a: Any) -> bool:
    """NumPy arrays may be read-only; CuPy's are always writeable (their flags have no `writeable`)."""
    return getattr(a.flags, "writeable", True)


def _fits(xp, out: Any, arrays: tuple) -> bool:
    """True when `out` is a writable float array that the op's result has exactly (shape and dtype).

    One-element buffers are not reused: NumPy's `out=` path is slower than allocating them.
    """
    if not isinstance(out, xp.ndarray) or out.dtype.kind not in "fc" or out.size < 2 or not writeable(out):
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
    return _act.relu_np(xp, x, out=out)


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

# op name -> the ufunc (by name in xp) that computes it, for ops that are exactly one ufunc call
_UFUNC_STEPS: dict[str, str] = {**{name: spec[0].__name__ for name, spec in _m._BINARY.items()},
                                "divide": "true_divide", **_UNARY_UFUNCS}

# op name -> fn(xp, out, *arrays, **attrs), valid when _fits(out, arrays)
_INTO: dict[str, Callable] = {**{name: _ufunc_into(fname) for name, fname in _UFUNC_STEPS.items()},
                              "rsqrt": _rsqrt_into, "relu": _relu_into, "scale": _scale_into, "clip": _clip_into}


def _guarded(name: str, into: Callable) -> Callable:
    """The out= form of `name` that computes a fresh array when `out` cannot hold the result."""
    kernel = get_op(name).kernel

    def run(xp, out, *arrays, **attrs):
        if _fits(xp, out, arrays):
            return into(xp, out, *arrays, **attrs)
        return kernel(xp, *arrays, **attrs)
    return run


# ---------------------------------------------------------------- the fused op
def constant_step(name: str) -> bool:
    """True for an op with no input whose output is the same on every run (`assign_value`, `full`):
    a chain holds such a constant as a step, evaluated once when the chain is compiled."""
    op = get_op(name)
    return not op.inputs and not (op.random or op.side_effect or op.inplace)


# The scalar path, for steps whose operands all have the step's dtype, one of _SCALAR_DTYPES: these
# run as Python operators on NumPy scalars (one IEEE operation of that precision, as the ufunc's loop
# does), and these ufuncs are called on NumPy scalars (the loop one-element arrays run, tested). Not
# `pow`, `remainder`, `floor_divide`: their loops take other paths for contiguous arrays (x ** -1).
_SCALAR_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
_SCALAR_UFUNCS = frozenset([*_UNARY_UFUNCS, "maximum", "minimum", "fmax", "fmin"])
_SCALAR_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64"))


class _Chain:
    """A chain, compiled per input signature into one straight-line NumPy function.

    Shapes and dtypes of every step follow from the inputs' by replaying the members' metas,
    so which step writes into which dead operand's buffer (`out=`) is decided once per
    signature; the generated source is kept in `sources` for inspection. Constant steps are
    evaluated once per signature and read from the function's globals.
    """

    __slots__ = ("chain", "n_in", "compiled", "sources")

    def __init__(self, chain: tuple, n_in: int):
        self.chain, self.n_in = chain, n_in
        self.compiled: dict[tuple, Callable] = {}
        self.sources: dict[tuple, str] = {}

    def run(self, xp, inputs: tuple, granted: int = -1):
        """Evaluate the chain; only member outputs and input `granted` may be overwritten."""
        if granted >= 0 and not (isinstance(inputs[granted], xp.ndarray) and writeable(inputs[granted])):
            granted = -1
        key = (xp, granted, *[(a.shape, a.dtype) for a in inputs])
        fn = self.compiled.get(key)
        if fn is None:
            fn = self._compile(xp, inputs, granted, key)
        return fn(*inputs)

    def _compile(self, xp, inputs: tuple, granted: int, key: tuple) -> Callable:
        n_in = self.n_in
        specs = [TensorSpec(tuple(a.shape), a.dtype) for a in inputs]
        names: dict[str, Any] = {}
        consts: dict[int, Any] = {}   # ref of a constant step -> its value
        for k, (name, refs, attrs) in enumerate(self.chain):
            op = get_op(name)
            specs.append(op.meta(*[specs[r] for r in refs], **dict(attrs)))
            if constant_step(name):
                consts[n_in + k] = value = xp.asarray(op.kernel(xp, **dict(attrs)))
                if xp is np:
                    value.flags.writeable = False   # shared by every run: a write must raise
        if self._scalar(xp, specs, consts):
            lines = self._scalar_lines(specs, consts, names)
        else:
            lines = self._array_lines(xp, specs, consts, granted, names)
        source = "\n".join([f"def fused_elementwise({', '.join(f'v{i}' for i in range(n_in))}):", *lines])
        exec(compile(source, f"<fused_elementwise {len(self.chain)} steps>", "exec"), names)  # noqa: S102
        fn = names["fused_elementwise"]
        if xp is not np:  # on a GPU: one generated kernel for the whole chain where it has a CUDA form
            fn = fused_cuda.device_function(xp, self.chain, n_in, specs, fn)
        if len(self.compiled) >= _CACHE_LIMIT:
            self.compiled.clear()
            self.sources.clear()
        self.compiled[key], self.sources[key] = fn, source
        return self.compiled[key]

    def _scalar(self, xp, specs: list[TensorSpec], consts: dict[int, Any]) -> bool:
        """True when every input and constant has one element and every step is a scalar-path step
        (above) whose operands have its dtype: the chain then runs on NumPy scalars."""
        n_in = self.n_in
        if xp is not np or any(math.prod(specs[r].shape) != 1 for r in (*range(n_in), *consts)):
            return False
        for k, (name, refs, _) in enumerate(self.chain):
            out = specs[n_in + k]
            if n_in + k not in consts and ((name not in _SCALAR_OPERATORS and name not in _SCALAR_UFUNCS)
                                           or out.dtype not in _SCALAR_DTYPES
                                           or any(specs[r].dtype != out.dtype for r in refs)):
                return False
        return True

    def _scalar_lines(self, specs: list[TensorSpec], consts: dict[int, Any], names: dict[str, Any]) -> list[str]:
        """Each input read as a NumPy scalar, each step one operator or ufunc call on scalars, and the
        result written once into a fresh array of the chain's shape and dtype."""
        n_in = self.n_in

        def at(shape: tuple) -> str:
            return "[()]" if not shape else f"[{', '.join('0' for _ in shape)}]"
        lines = [f"    s{i} = v{i}{at(specs[i].shape)}" for i in range(n_in)]
        for r, value in consts.items():
            names[f"c{r}"] = value.reshape(())[()]
        for k, (name, refs, _) in enumerate(self.chain):
            r = n_in + k
            if r in consts:
                continue
            operands = [f"c{i}" if i in consts else f"s{i}" for i in refs]
            if name in _SCALAR_OPERATORS and len(refs) == 2:
                lines.append(f"    s{r} = {operands[0]} {_SCALAR_OPERATORS[name]} {operands[1]}")
            else:
                names[f"u{k}"] = getattr(np, _UFUNC_STEPS[name])
                lines.append(f"    s{r} = u{k}({', '.join(operands)})")
        last = specs[-1]
        names.update(_empty=np.empty, _shape=tuple(last.shape), _dtype=last.dtype)
        return lines + ["    out = _empty(_shape, _dtype)", f"    out{at(last.shape)} = s{len(specs) - 1}",
                        "    return out"]

    def _array_lines(self, xp, specs: list[TensorSpec], consts: dict[int, Any], granted: int,
                     names: dict[str, Any]) -> list[str]:
        """Each step one ufunc or kernel call on arrays, writing with `out=` into a buffer the chain owns
        and no later step reads, where its shape and dtype allow."""
        n_in = self.n_in
        last_use = {r: k for k, (_, refs, _) in enumerate(self.chain) for r in refs if r not in consts}
        lines = []
        for r, value in consts.items():
            names[f"c{r}"] = value
        for k, (name, refs, attrs) in enumerate(self.chain):
            if n_in + k in consts:
                continue
            op, attrs = get_op(name), dict(attrs)
            args, out = [specs[r] for r in refs], specs[n_in + k]
            ending = list(dict.fromkeys(r for r in refs if last_use.get(r) == k))
            # a float step whose operands all have its dtype is exactly its ufunc / out= form
            plain = out.dtype.kind in "fc" and all(a.dtype == out.dtype for a in args)
            reuse = None
            if plain and name in _INTO and math.prod(out.shape) > 1:  # NumPy's out= is slower for one element
                reuse = next((r for r in ending if (r >= n_in or r == granted) and specs[r] == out), None)
            operands = ", ".join(f"c{r}" if r in consts else f"v{r}" for r in refs)
            if name in _UFUNC_STEPS and plain:
                names[f"u{k}"] = getattr(xp, _UFUNC_STEPS[name])
                lines.append(f"    v{n_in + k} = u{k}({operands}{'' if reuse is None else f', out=v{reuse}'})")
            elif reuse is None:
                names[f"k{k}"] = functools.partial(op.kernel, xp, **attrs)
                lines.append(f"    v{n_in + k} = k{k}({operands})")
            else:
                names[f"i{k}"] = functools.partial(_INTO[name], xp, **attrs)
                lines.append(f"    v{n_in + k} = i{k}(v{reuse}, {operands})")
            if ending:
                lines.append(f"    del {', '.join(f'v{r}' for r in ending)}")
        return lines + [f"    return v{n_in + len(self.chain) - 1}"]


_CACHE_LIMIT = 1024
_CHAINS: dict[tuple[tuple, int], _Chain] = {}
_BY_ID: dict[int, tuple[tuple, _Chain]] = {}  # id(chain) -> (chain, compiled): no re-hashing per run


def _compiled(chain: tuple, n_in: int) -> _Chain:
    hit = _BY_ID.get(id(chain))
    if hit is not None and hit[0] is chain and hit[1].n_in == n_in:
        return hit[1]
    if len(_CHAINS) >= _CACHE_LIMIT:
        _CHAINS.clear()
    if len(_BY_ID) >= _CACHE_LIMIT:
        _BY_ID.clear()
    compiled = _CHAINS.get((chain, n_in))
    if compiled is None:
        compiled = _CHAINS[(chain, n_in)] = _Chain(chain, n_in)
    _BY_ID[id(chain)] = (chain, compiled)
    return compiled


def _fused_kernel(xp, *inputs, chain):
    return _compiled(chain, len(inputs)).run(xp, inputs)


def _fused_into(xp, out, *inputs, chain):
    granted = next(k for k, a in enumerate(inputs) if a is out)
    return _compiled(chain, len(inputs)).run(xp, inputs, granted)


def _fused_meta(*inputs: TensorSpec, chain: tuple) -> TensorSpec:
    if not chain:
        raise ValueError("fused_elementwise: attribute 'chain' must hold at least one step")
    specs = list(inputs)
    for k, (name, refs, attrs) in enumerate(chain):
        if name not in ELEMENTWISE and (refs or not constant_step(name)):
            raise ValueError(f"fused_elementwise: step {k} op '{name}' is not an elementwise op or a constant")
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
