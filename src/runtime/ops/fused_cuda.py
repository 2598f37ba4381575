"""A fused elementwise chain as ONE CUDA kernel (CuPy `ElementwiseKernel`), for chains run on a GPU.

On a GPU the xp path of `fused.py` launches one CuPy kernel per step and writes every intermediate
to device memory; the kernel built here computes the whole chain per element in registers.
`cuda_chain` translates a chain step by step into CUDA C that computes what the NumPy kernels
compute: each step in the dtype its member's meta gives, operands converted to it as the NumPy
kernel converts them, Python-number attributes rounded to that dtype as NumPy rounds them, and
NumPy's behaviour at the edges (NaN and signed zeros through maximum/minimum/relu/clip). A step
with no such form (float16, integer arithmetic, an op not in the table, a multi-element constant)
makes it return None, and the chain runs on the xp path. Arithmetic, comparisons, selections,
casts and sqrt give NumPy's bits; transcendental functions (exp, log, tanh, erf, pow...) use
CUDA's libdevice, which is not glibc or NumPy's SIMD code: a few ulp apart.

`device_function` wraps a chain's kernel for one input signature; the kernel is built once per
(chain, input dtypes), compiled by NVRTC with `--fmad=false` (a contracted a*b+c would round
once where the NumPy chain rounds twice) and `--std=c++17` (hex float literals), and a chain NVRTC cannot compile is remembered and runs
on the xp path from then on.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Callable, NamedTuple

import numpy as np

from . import activation as _act
from . import meta_utils as mu
from .registry import TensorSpec, get_op

__all__ = ["CudaChain", "cuda_chain", "device_function"]


class CudaChain(NamedTuple):
    """The pieces of a CuPy ElementwiseKernel: parameter lists, the per-element body (CUDA C) and a
    preamble with the helper functions the body calls ('' when none)."""

    in_params: str
    out_params: str
    body: str
    preamble: str
    name: str


_CTYPES: dict[np.dtype, str] = {np.dtype(k): v for k, v in {
    "float32": "float", "float64": "double", "bool": "bool", "int8": "signed char", "int16": "short",
    "int32": "int", "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long"}.items()}
_FLOATS = frozenset(np.dtype(t) for t in ("float32", "float64"))

# Non-finite constants are built from their bits: C has no portable literal for them, and a NaN keeps
# its payload this way.
_PREAMBLE = """static __device__ inline float fused_f32_bits(unsigned int b) {
    union { unsigned int u; float f; } v; v.u = b; return v.f; }
static __device__ inline double fused_f64_bits(unsigned long long b) {
    union { unsigned long long u; double f; } v; v.u = b; return v.f; }
"""


class _Unsupported(Exception):
    """A step has no exact CUDA form: the chain takes the xp path."""


def _literal(value: Any, dtype: np.dtype) -> str:
    """`value` converted to `dtype` as NumPy converts a Python number or array element to it, written
    as an exact C literal of that type."""
    if dtype.kind == "b":
        return "true" if bool(value) else "false"
    if dtype.kind in "iu":
        return f"(({_CTYPES[dtype]})0x{int(value) & (2 ** (8 * dtype.itemsize) - 1):x}ULL)"
    with np.errstate(over="ignore"):
        v = dtype.type(value)
    if math.isfinite(v):
        return f"({float(v).hex()}{'f' if dtype == np.float32 else ''})"
    if dtype == np.float32:
        return f"fused_f32_bits(0x{struct.unpack('<I', v.tobytes())[0]:x}u)"
    return f"fused_f64_bits(0x{struct.unpack('<Q', v.tobytes())[0]:x}ull)"


def _number(value: Any) -> float | int:
    """An attribute NumPy treats as a weak Python scalar (converted to the array's dtype); any other
    value (a NumPy scalar promotes the computation) has no form here."""
    if type(value) not in (int, float):
        raise _Unsupported
    return value


class _Body:
    """Statements of the kernel body, each value a named local of one C type."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.uses_bits = False

    def let(self, dtype: np.dtype, expr: str) -> str:
        name = f"t{len(self.lines)}"
        self.lines.append(f"const {_CTYPES[dtype]} {name} = {expr};")
        return name

    def lit(self, value: Any, dtype: np.dtype) -> str:
        text = _literal(value, dtype)
        self.uses_bits |= text.startswith("fused_")
        return text


def _fn(name: str, dtype: np.dtype) -> str:
    """The C math function `name` for `dtype` (expf for float, exp for double)."""
    return name + "f" if dtype == np.float32 else name


# NumPy's float maximum/minimum (SIMD and scalar loops agree, checked by the tests): NaN in the first
# operand wins, otherwise the second operand unless the first is strictly greater (smaller); so a NaN
# in either propagates and max(-0.0, 0.0) is the second operand. np.fmax/fmin ignore a NaN instead.
def _max(a: str, b: str) -> str:
    return f"(({a} != {a}) ? {a} : (({a} > {b}) ? {a} : {b}))"


def _min(a: str, b: str) -> str:
    return f"(({a} != {a}) ? {a} : (({a} < {b}) ? {a} : {b}))"


def _fmax(a: str, b: str) -> str:
    return f"(({b} != {b}) ? {a} : (({a} > {b}) ? {a} : {b}))"


def _fmin(a: str, b: str) -> str:
    return f"(({b} != {b}) ? {a} : (({a} < {b}) ? {a} : {b}))"


def _tanh_sigmoid(b: _Body, t: np.dtype, x: str) -> str:
    """The activations' sigmoid, 0.5 * (1 + tanh(0.5 * x)) (silu and its gradient use it)."""
    half, one = b.lit(0.5, t), b.lit(1.0, t)
    return f"({half} * ({one} + {_fn('tanh', t)}({half} * {x})))"


def _erf_gelu_cdf(b: _Body, t: np.dtype, x: str) -> str:
    return f"(({_fn('erf', t)}({x} * {b.lit(_act._SQRT1_2, t)}) + {b.lit(1.0, t)}) * {b.lit(0.5, t)})"


def _gelu(b: _Body, t: np.dtype, x: str, *, approximate: bool) -> str:
    half, one = b.lit(0.5, t), b.lit(1.0, t)
    if approximate:
        inner = f"({b.lit(_act._GELU_C, t)} * ({x} + {b.lit(_act._GELU_K, t)} * {x} * {x} * {x}))"
        return f"({half} * {x} * ({one} + {_fn('tanh', t)}({inner})))"
    return f"({half} * {x} * ({one} + {_fn('erf', t)}({x} * {b.lit(_act._SQRT1_2, t)})))"


def _gelu_grad(b: _Body, t: np.dtype, x: str, g: str, *, approximate: bool) -> str:
    """activation._vjp_gelu, operation for operation."""
    one, half = b.lit(1.0, t), b.lit(0.5, t)
    if approximate:
        u = b.let(t, f"(({x} + {x} * {x} * {x} * {b.lit(_act._GELU_K, t)}) * {b.lit(_act._GELU_C, t)})")
        th = b.let(t, f"{_fn('tanh', t)}({u})")
        slope = f"(({x} * {x} * {b.lit(3.0 * _act._GELU_K, t)} + {one}) * {b.lit(_act._GELU_C, t)})"
        return f"({g} * (({th} + {one}) * {half} + {x} * {half} * ({one} - {th} * {th}) * {slope}))"
    cdf = b.let(t, _erf_gelu_cdf(b, t, x))
    pdf = b.let(t, f"({_fn('exp', t)}({x} * {x} * {b.lit(-0.5, t)}) * {b.lit(_act._INV_SQRT_2PI, t)})")
    return f"({g} * ({cdf} + {x} * {pdf}))"


def _silu_grad(b: _Body, t: np.dtype, x: str, g: str) -> str:
    s = b.let(t, _tanh_sigmoid(b, t, x))
    one = b.lit(1.0, t)
    return f"({g} * {s} * ({x} * ({one} - {s}) + {one}))"


def _sigmoid(b: _Body, t: np.dtype, x: str) -> str:
    """math._sigmoid: exp(-|x|) then 1/(1+e), picking r or e*r by the sign of x."""
    e = b.let(t, f"{_fn('exp', t)}(-{_fn('fabs', t)}({x}))")
    r = b.let(t, f"({b.lit(1.0, t)} / ({b.lit(1.0, t)} + {e}))")
    return f"(({x} >= {b.lit(0, t)}) ? {r} : {e} * {r})"


def _clip(b: _Body, t: np.dtype, x: str, *, min: Any, max: Any) -> str:  # noqa: A002 - the op's attributes
    """np.clip: with both bounds NumPy's clip loop (x kept unless below min / above max, NaN x kept);
    with one bound None it is np.maximum / np.minimum."""
    if min is None and max is None:
        raise _Unsupported
    if max is None:
        return _max(x, b.lit(_number(min), t))
    if min is None:
        return _min(x, b.lit(_number(max), t))
    lo, hi = b.lit(_number(min), t), b.lit(_number(max), t)
    low = b.let(t, f"((({x} != {x}) || !({x} < {lo} || {lo} != {lo})) ? {x} : {lo})")
    return f"((({low} != {low}) || !({low} > {hi} || {hi} != {hi})) ? {low} : {hi})"


def _scale(b: _Body, t: np.dtype, x: str, *, scale: Any, bias: Any, bias_after_scale: bool) -> str:
    s, c = b.lit(_number(scale), t), b.lit(_number(bias), t)
    return f"({x} * {s} + {c})" if bias_after_scale else f"(({x} + {c}) * {s})"


_UNARY_FUNCTIONS = {"exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
                    "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
                    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "erf": "erf",
                    "sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "rint"}
_ARITHMETIC = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
_COMPARISONS = {"equal": "==", "not_equal": "!=", "less_than": "<", "less_equal": "<=", "greater_than": ">",
                "greater_equal": ">="}
_LOGICAL = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}

# Float steps computed in the step's dtype from operands converted to it: name -> fn(body, dtype, *operands,
# **attrs) -> C expression.
_FLOAT_STEPS: dict[str, Callable[..., str]] = {
    **{name: (lambda op: lambda b, t, x, y: f"({x} {op} {y})")(op) for name, op in _ARITHMETIC.items()},
    "maximum": lambda b, t, x, y: _max(x, y), "minimum": lambda b, t, x, y: _min(x, y),
    "fmax": lambda b, t, x, y: _fmax(x, y), "fmin": lambda b, t, x, y: _fmin(x, y),
    "pow": lambda b, t, x, y: f"{_fn('pow', t)}({x}, {y})",
    **{name: (lambda f: lambda b, t, x: f"{_fn(f, t)}({x})")(f) for name, f in _UNARY_FUNCTIONS.items()},
    "neg": lambda b, t, x: f"(-{x})", "abs": lambda b, t, x: f"{_fn('fabs', t)}({x})",
    "square": lambda b, t, x: f"({x} * {x})", "reciprocal": lambda b, t, x: f"({b.lit(1.0, t)} / {x})",
    "rsqrt": lambda b, t, x: f"({b.lit(1.0, t)} / {_fn('sqrt', t)}({x}))",
    "sigmoid": _sigmoid, "scale": _scale, "clip": _clip,
    "relu": lambda b, t, x: _max(x, b.lit(0, t)),
    "relu6": lambda b, t, x: _min(_max(x, b.lit(0, t)), b.lit(6, t)),
    "leaky_relu": lambda b, t, x, *, negative_slope: (
        f"(({x} > {b.lit(0, t)}) ? {x} : {x} * {b.lit(_number(negative_slope), t)})"),
    "hardtanh": lambda b, t, x, *, min, max: _min(_max(x, b.lit(_number(min), t)), b.lit(_number(max), t)),  # noqa: A006
    "gelu": _gelu,
    "silu": lambda b, t, x: f"({x} * {_tanh_sigmoid(b, t, x)})",
    "relu_grad": lambda b, t, x, g: f"(({x} > {b.lit(0.0, t)}) ? {g} : {b.lit(0.0, t)})",
    "relu6_grad": lambda b, t, x, g: (
        f"((({x} > {b.lit(0.0, t)}) && ({x} < {b.lit(6.0, t)})) ? {g} : {b.lit(0.0, t)})"),
    "leaky_relu_grad": lambda b, t, x, g, *, negative_slope: (
        f"(({x} > {b.lit(0.0, t)}) ? {g} : {g} * {b.lit(_number(negative_slope), t)})"),
    "hardtanh_grad": lambda b, t, x, g, *, min, max: (  # noqa: A006
        f"((({x} > {b.lit(_number(min), t)}) && ({x} < {b.lit(_number(max), t)})) ? {g} : {b.lit(0.0, t)})"),
    "gelu_grad": _gelu_grad,
    "silu_grad": _silu_grad,
}
# the activation gradients compute in out_grad's dtype and cast to x's: supported where the two agree
_GRADS = frozenset(name for name in _FLOAT_STEPS if name.endswith("_grad"))


def _convert(value: str, src: np.dtype, dst: np.dtype) -> str:
    """`value` of dtype `src` as NumPy's astype(dst) gives it, where C's conversion is the same."""
    if src == dst:
        return value
    if dst.kind == "b":
        return f"({value} != 0)"
    if dst.kind == "f" or src.kind == "b":
        return f"(({_CTYPES[dst]}){value})"
    if src.kind in "iu" and dst.kind in "iu" and (np.can_cast(src, dst, "safe")):
        return f"(({_CTYPES[dst]}){value})"
    raise _Unsupported   # float -> int (NaN, overflow) and narrowing integer casts differ between C and NumPy


def _step(b: _Body, name: str, values: list[tuple[str, np.dtype]], attrs: dict, out: np.dtype) -> str:
    """The C expression of one step over its operands' (expression, dtype)."""
    dtypes = [d for _, d in values]
    if name in _COMPARISONS:
        t = mu.promote(*dtypes)
        x, y = (_convert(v, d, t) for v, d in values)
        return f"({x} {_COMPARISONS[name]} {y})"
    if name in _LOGICAL:
        x, y = (f"({v} != 0)" for v, _ in values)
        return f"({x} {_LOGICAL[name]} {y})"
    if name == "logical_not":
        return f"({values[0][0]} == 0)"
    if name == "cast":
        return _convert(values[0][0], dtypes[0], out)
    if name == "where":
        (c, _), *xy = values
        if any(d != out and d.kind not in "fb" for d in dtypes[1:]):  # NumPy's where promotes differently
            raise _Unsupported
        x, y = (_convert(v, d, out) for v, d in xy)
        return f"({c} ? {x} : {y})"
    if name in ("isnan", "isinf", "isfinite") and dtypes[0] in _FLOATS:
        x, inf = values[0][0], b.lit(math.inf, dtypes[0])
        absolute = f"{_fn('fabs', dtypes[0])}({x})"
        return {"isnan": f"({x} != {x})", "isinf": f"({absolute} == {inf})",
                "isfinite": f"({absolute} < {inf})"}[name]
    if name not in _FLOAT_STEPS or out not in _FLOATS:
        raise _Unsupported
    if name in _GRADS and dtypes[1] != out:
        raise _Unsupported
    return _FLOAT_STEPS[name](b, out, *(_convert(v, d, out) for v, d in values), **attrs)


def cuda_chain(chain: tuple, n_in: int, specs: list[TensorSpec]) -> CudaChain | None:
    """The ElementwiseKernel computing `chain` (see fused.py) on inputs of `specs`, or None when a step
    has no CUDA form that computes what its NumPy kernel computes."""
    if not n_in or any(s.dtype not in _CTYPES for s in specs):
        return None
    all_specs = list(specs)
    values: list[tuple[str, np.dtype]] = [(f"v{i}", s.dtype) for i, s in enumerate(specs)]
    b = _Body()
    try:
        for name, refs, attrs in chain:
            op = get_op(name)
            attrs = dict(attrs)
            out = op.meta(*[all_specs[r] for r in refs], **attrs)
            all_specs.append(out)
            if out.dtype not in _CTYPES:
                raise _Unsupported
            if not refs:   # a constant step: one element, written as a literal of its dtype
                value = np.asarray(op.kernel(np, **attrs))
                if value.size != 1:
                    raise _Unsupported
                values.append((b.let(out.dtype, b.lit(value.reshape(())[()], out.dtype)), out.dtype))
                continue
            expr = _step(b, name, [values[r] for r in refs], attrs, out.dtype)
            values.append((b.let(out.dtype, expr), out.dtype))
    except _Unsupported:
        return None
    last = all_specs[-1]
    if math.prod(last.shape) != math.prod(np.broadcast_shapes(*[tuple(s.shape) for s in specs])):
        return None   # an input the result does not depend on would still broadcast the kernel's output
    return CudaChain(in_params=", ".join(f"{s.dtype.name} v{i}" for i, s in enumerate(specs)),
                     out_params=f"{last.dtype.name} out0", body="\n".join([*b.lines, f"out0 = {values[-1][0]};"]),
                     preamble=_PREAMBLE if b.uses_bits else "", name=f"fused_elementwise_{len(chain)}")


_CACHE_LIMIT = 1024


class _Kernel:
    """A chain's ElementwiseKernel for one tuple of input dtypes; `kernel` None once it is known to
    have no CUDA form or NVRTC rejected it (shared by every input shape, so it compiles once)."""

    __slots__ = ("kernel",)

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel


_KERNELS: dict[tuple, _Kernel] = {}   # (xp, chain, n_in, input dtypes) -> its kernel


# no contraction of a*b+c into one rounding (the NumPy chain rounds twice); C++17 for the hex float literals
_NVRTC_OPTIONS = ("--fmad=false", "--std=c++17")


def _kernel(xp, chain: tuple, n_in: int, specs: list[TensorSpec]) -> _Kernel:
    key = (xp, chain, n_in, tuple(s.dtype for s in specs))
    hit = _KERNELS.get(key)
    if hit is None:
        code = cuda_chain(chain, n_in, specs)
        hit = _Kernel(None)
        if code is not None:
            try:
                hit.kernel = xp.ElementwiseKernel(code.in_params, code.out_params, code.body, code.name,
                                                  preamble=code.preamble, options=_NVRTC_OPTIONS)
            except xp.cuda.compiler.CompileException:
                pass
        if len(_KERNELS) >= _CACHE_LIMIT:
            _KERNELS.clear()
        _KERNELS[key] = hit
    return hit


def device_function(xp, chain: tuple, n_in: int, specs: list[TensorSpec], fallback: Callable) -> Callable:
    """The chain as one kernel call for inputs of `specs` (the inputs' specs, then every step's), or
    `fallback` (the xp path) when the chain has no CUDA form or NVRTC failed on it before; a compile
    error on the first call switches this and every later call to `fallback`."""
    held = _kernel(xp, chain, n_in, specs[:n_in])
    if held.kernel is None:
        return fallback
    shape = tuple(specs[-1].shape)
    # size-1 constants may add leading 1-dims the inputs do not have
    reshape = np.broadcast_shapes(*[tuple(s.shape) for s in specs[:n_in]]) != shape
    failed = xp.cuda.compiler.CompileException

    def run(*inputs):
        kernel = held.kernel
        if kernel is None:
            return fallback(*inputs)
        try:
            out = kernel(*inputs)
        except failed:
            held.kernel = None
            return fallback(*inputs)
        return out.reshape(shape) if reshape else out
    return run
