"""Fused elementwise chains as one CUDA kernel: the generated body is C, so each test here compiles it on
the host (`cc -O1 -ffp-contract=off`, with the CUDA-only words defined away), runs it on broadcast host
inputs and compares with the NumPy chain of the `fused_elementwise` op. Arithmetic, comparisons,
selections, casts and sqrt must give NumPy's bits. Transcendental steps call the host libm here (glibc)
and libdevice on a GPU, while NumPy uses its own SIMD code: they are compared with a tolerance of
a few ulp (TRANSCENDENTAL_TOL). Chains without a CUDA form give None and run on the xp path."""
import ctypes
import math
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime as paddle
from runtime.ops import fused, fused_cuda, get_op
from runtime.ops.registry import TensorSpec
from runtime.static.passes import apply_passes
from sot_helpers import jit_of

F32, F64, BOOL = np.dtype("float32"), np.dtype("float64"), np.dtype("bool")
# relative tolerance of one transcendental step, libm against NumPy (a few ulp), and absolute: the runtime's
# erf (NumPy has none) is a Chebyshev fit good to about 1e-9 in float32 and 1e-15 in float64 (erf(0) is 2e-10)
TRANSCENDENTAL_TOL = {F32: (2e-6, 1e-9), F64: (1e-14, 1e-15)}

SPECIALS = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, 3e38, -3e38, 1.0, -1.0, 0.5, -0.5, 2.0, 6.0,
            -3.0, 3.0, 0.1, 1.5, 2.5, -2.5, 7.25, 1e-310]

_PRELUDE = "#include <math.h>\n#include <stdbool.h>\n#define __device__\n"


def _source(code: fused_cuda.CudaChain, device: bool = False) -> tuple[str, np.dtype]:
    """The kernel body inside a loop over flat arrays, `run(n, out, *inputs)`: host C for cc, or (`device`) a CUDA
    kernel over the same arguments for NVRTC; and the output dtype."""
    params = [p.split() for p in code.in_params.split(", ")]
    out_dtype, out_name = code.out_params.split()
    ctype = fused_cuda._CTYPES
    args = ", ".join([f"long n", f"{ctype[np.dtype(out_dtype)]} *pout",
                      *(f"const {ctype[np.dtype(d)]} *p_{name}" for d, name in params)])
    loads = "".join(f"        const {ctype[np.dtype(d)]} {name} = p_{name}[i];\n" for d, name in params)
    body = "".join(f"        {line}\n" for line in code.body.splitlines())
    prefix = code.preamble if device else _PRELUDE + code.preamble
    head = f'extern "C" __global__ void run({args}) {{' if device else f"void run({args}) {{"
    loop = ("for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {" if device
            else "for (long i = 0; i < n; i++) {")
    source = (f"{prefix}\n{head}\n    {loop}\n{loads}"
              f"        {ctype[np.dtype(out_dtype)]} {out_name};\n{body}        pout[i] = {out_name};\n    }}\n}}\n")
    return source, np.dtype(out_dtype)


def _c_function(code: fused_cuda.CudaChain, tmp_path, counter=[0]):  # noqa: B006 - one name per library
    """The kernel body compiled by cc into a shared library: (fn(n, out, *inputs), the output dtype)."""
    source, out_dtype = _source(code)
    counter[0] += 1
    src, lib = tmp_path / f"chain{counter[0]}.c", tmp_path / f"chain{counter[0]}.so"
    src.write_text(source)
    subprocess.run(["cc", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-o", str(lib), str(src), "-lm"],
                   check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib)).run, out_dtype


def run_c(chain: tuple, inputs: list[np.ndarray], tmp_path) -> np.ndarray:
    """The chain's CUDA body run on the host, on inputs broadcast and flattened as CuPy's kernel sees them."""
    code = fused_cuda.cuda_chain(chain, len(inputs), [TensorSpec(a.shape, a.dtype) for a in inputs])
    assert code is not None, chain
    return call_c(*_c_function(code, tmp_path), inputs)


def call_c(fn, out_dtype: np.dtype, inputs: list[np.ndarray]) -> np.ndarray:
    """Run a compiled body as CuPy runs an ElementwiseKernel: inputs broadcast, output of their shape."""
    flat = [np.ascontiguousarray(a).ravel() for a in np.broadcast_arrays(*inputs)]
    out = np.empty(flat[0].size, out_dtype)
    fn(ctypes.c_long(out.size), out.ctypes.data_as(ctypes.c_void_p), *[a.ctypes.data_as(ctypes.c_void_p) for a in flat])
    return out.reshape(np.broadcast_shapes(*[a.shape for a in inputs]))


def run_numpy(chain: tuple, inputs: list[np.ndarray]) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(get_op("fused_elementwise").kernel(np, *inputs, chain=chain))


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal dtype and bits (signed zeros count), NaNs equal whatever their payloads: which operand's NaN
    an IEEE operation passes on is not specified (compilers swap the operands of a + b), and a GPU makes
    its own NaN."""
    assert got.dtype == want.dtype and got.size == want.size
    want = want.reshape(got.shape)
    nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
    assert np.array_equal(np.isnan(got) if got.dtype.kind == "f" else nan, nan), (got, want)
    assert got[~nan].tobytes() == want[~nan].tobytes(), (got, want)


def grid(dtype: np.dtype, arity: int) -> list[np.ndarray]:
    """Every pair (or single) of special values, as arrays of `dtype`."""
    with np.errstate(over="ignore"):
        values = np.array(SPECIALS, dtype)
    if arity == 1:
        return [values]
    return [np.repeat(values, len(values)), np.tile(values, len(values))]


def const(value, dtype) -> tuple:
    """A constant step: a one-element assign_value of `dtype`."""
    return ("assign_value", (), (("dtype", np.dtype(dtype)), ("shape", (1,)), ("values", (value,))))


BINARY_EXACT = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin", "equal", "not_equal",
                "less_than", "less_equal", "greater_than", "greater_equal", "logical_and", "logical_or", "logical_xor"]
UNARY_EXACT = [("neg", ()), ("abs", ()), ("sqrt", ()), ("rsqrt", ()), ("square", ()), ("reciprocal", ()),
               ("floor", ()), ("ceil", ()), ("trunc", ()), ("round", ()), ("relu", ()), ("relu6", ()),
               ("isnan", ()), ("isinf", ()), ("isfinite", ()), ("logical_not", ()),
               ("leaky_relu", (("negative_slope", 0.1),)), ("hardtanh", (("max", 1.5), ("min", -0.5))),
               ("clip", (("max", 2.0), ("min", -0.0))), ("clip", (("max", 0.3), ("min", None))),
               ("clip", (("max", None), ("min", 0.0))), ("clip", (("max", 0.1), ("min", 0.1))),
               ("scale", (("bias", 0.1), ("bias_after_scale", True), ("scale", 3.0))),
               ("scale", (("bias", -0.7), ("bias_after_scale", False), ("scale", 0.3))),
               ("cast", (("dtype", F32),)), ("cast", (("dtype", F64),)), ("cast", (("dtype", BOOL),))]
GRADS_EXACT = [("relu_grad", ()), ("relu6_grad", ()), ("leaky_relu_grad", (("negative_slope", 0.2),)),
               ("hardtanh_grad", (("max", 1.0), ("min", -1.0)))]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name", BINARY_EXACT)
def test_a_binary_step_gives_numpys_bits_on_every_pair_of_special_values(name, dtype, tmp_path):
    inputs = grid(dtype, 2)
    chain = ((name, (0, 1), ()),)
    same_bits(run_c(chain, inputs, tmp_path), run_numpy(chain, inputs))


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name, attrs", UNARY_EXACT + GRADS_EXACT)
def test_a_unary_step_gives_numpys_bits_on_special_values(name, attrs, dtype, tmp_path):
    inputs = grid(dtype, 2 if name.endswith("_grad") else 1)
    chain = ((name, tuple(range(len(inputs))), attrs),)
    same_bits(run_c(chain, inputs, tmp_path), run_numpy(chain, inputs))


def test_where_and_mixed_dtypes_promote_as_numpy_does(tmp_path):
    rng = np.random.default_rng(4)
    x32 = np.array(SPECIALS, F32)
    x64 = rng.standard_normal((3, 1)) * 1e10
    i64 = np.array([3, -(2 ** 62) - 1, 2 ** 53 + 1], np.int64).reshape(3, 1)
    cond = rng.random(len(SPECIALS)) > 0.5
    chain = (("add", (1, 2), ()),                  # 4: float32 + float64 -> float64
             ("multiply", (0, 4), ()),             # 5: int64 (rounded to float64) * float64
             ("cast", (5,), (("dtype", F32),)),    # 6: float64 -> float32, rounding
             ("where", (3, 6, 1), ()),             # 7: bool condition, float32 on both sides
             ("divide", (0, 0), ()),               # 8: int64 / int64 -> the default float (float32)
             ("less_than", (7, 8), ()),            # 9: float32 < float32
             ("where", (9, 7, 2), ()))             # 10: float32 | float64 -> float64
    inputs = [i64, x32, x64, cond]
    same_bits(run_c(chain, inputs, tmp_path), run_numpy(chain, inputs))


def test_constants_are_exact_literals_of_their_dtype_including_non_finite_ones(tmp_path):
    x = np.array(SPECIALS, F32)
    chain = (const(0.1, "float32"), const(float("inf"), "float32"), const(float("nan"), "float64"),
             const(-0.0, "float32"), const(1e-45, "float32"), const(-(2 ** 63), "int64"), const(True, "bool"),
             ("add", (0, 1), ()), ("minimum", (8, 2), ()), ("subtract", (9, 4), ()), ("multiply", (10, 5), ()),
             ("greater_than", (0, 1), ()), ("where", (12, 11, 3), ()), ("cast", (6,), (("dtype", F32),)),
             ("multiply", (13, 14), ()), ("where", (7, 15, 13), ()))
    same_bits(run_c(chain, [x], tmp_path), run_numpy(chain, [x]))


def test_one_element_constants_may_add_leading_dimensions(tmp_path):
    x = np.arange(6, dtype=F32).reshape(2, 3)
    chain = (("assign_value", (), (("dtype", F32), ("shape", (1, 1, 1)), ("values", (0.25,)))), ("multiply", (0, 1), ()))
    want = run_numpy(chain, [x])
    assert want.shape == (1, 2, 3)
    same_bits(run_c(chain, [x], tmp_path), want)


# ---------------------------------------------------------------- random chains of exact steps
_EXACT_STEPS = [("add", 2), ("subtract", 2), ("multiply", 2), ("divide", 2), ("maximum", 2), ("minimum", 2),
                ("sqrt", 1), ("abs", 1), ("neg", 1), ("relu", 1), ("square", 1), ("rsqrt", 1),
                ("clip", 1), ("scale", 1), ("where", 2), ("cast", 1), ("relu_grad", 2)]


@st.composite
def exact_chains(draw):
    """(chain, inputs): 1-3 float32/float64 inputs of broadcastable shapes holding special values, a
    one-element constant, then steps of _EXACT_STEPS over earlier values, each value read by a later one."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    shapes = draw(st.lists(st.sampled_from([(2, 3), (3,), (1, 3), (2, 1), ()]), min_size=1, max_size=3))
    inputs = []
    for shape in shapes:
        with np.errstate(over="ignore"):
            values = np.where(rng.random(shape) < 0.3, rng.choice(np.array(SPECIALS), shape), rng.uniform(-4, 4, shape))
            inputs.append(values.astype(draw(st.sampled_from([F32, F64]))))
    n_in = len(inputs)
    first_const = const(draw(st.sampled_from([0.5, -1.25, 0.1, 3.0])), draw(st.sampled_from(["float32", "float64"])))
    chain = [first_const]
    dtypes = [a.dtype for a in inputs] + [first_const[2][0][1]]   # the dtype of every value, by ref

    def add(name, refs, attrs=()):
        chain.append((name, tuple(refs), attrs))
        dtypes.append(get_op(name).meta(*[TensorSpec((), dtypes[r]) for r in refs], **dict(attrs)).dtype)

    for _ in range(draw(st.integers(1, 8))):
        name, arity = _EXACT_STEPS[draw(st.integers(0, len(_EXACT_STEPS) - 1))]
        floats = [r for r, d in enumerate(dtypes) if d != BOOL]
        refs = [draw(st.sampled_from(floats)) for _ in range(arity)]
        first = refs[0]
        attrs: tuple = ()
        if name == "clip":
            attrs = (("max", 1.5), ("min", -0.5))
        elif name == "scale":
            attrs = (("bias", 0.3), ("bias_after_scale", draw(st.booleans())), ("scale", -1.7))
        elif name == "cast":
            attrs = (("dtype", F32 if dtypes[first] == F64 else F64),)
        elif name == "where":
            add("greater_than", [refs[1], first])
            refs = [len(dtypes) - 1, *refs]
        elif name == "relu_grad" and dtypes[refs[0]] != dtypes[refs[1]]:
            refs[1] = refs[0]
        add(name, refs, attrs)
    read = {r for _, refs, _ in chain for r in refs}
    for unread in [r for r in range(len(dtypes) - 1) if r not in read and dtypes[r] != BOOL]:
        add("add", [len(dtypes) - 1, unread])   # every value reaches the result, as in a fused chain
    return tuple(chain), inputs


@settings(max_examples=40, deadline=None)
@given(exact_chains())
def test_random_chains_of_exact_steps_give_numpys_bits(tmp_path_factory, example):
    chain, inputs = example
    same_bits(run_c(chain, inputs, tmp_path_factory.mktemp("chain")), run_numpy(chain, inputs))


# ---------------------------------------------------------------- transcendental steps
TRANSCENDENTAL = [*((name, ()) for name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
                                             "asin", "acos", "atan", "sinh", "cosh", "tanh")),
                  ("erf", ()), ("sigmoid", ()), ("silu", ()), ("gelu", (("approximate", False),)),
                  ("gelu", (("approximate", True),)), ("silu_grad", ()), ("gelu_grad", (("approximate", False),)),
                  ("gelu_grad", (("approximate", True),)), ("pow", ())]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name, attrs", TRANSCENDENTAL)
def test_a_transcendental_step_is_within_a_few_ulp_of_numpy(name, attrs, dtype, tmp_path):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-6, 6, 200), np.array(SPECIALS)]).astype(dtype)
    inputs = [np.abs(x) if name.startswith("log") or name == "pow" else x]
    if name.endswith("_grad") or name == "pow":
        inputs.append(rng.permutation(x))
    chain = ((name, tuple(range(len(inputs))), attrs),)
    rtol, atol = TRANSCENDENTAL_TOL[dtype]
    got, want = run_c(chain, inputs, tmp_path), run_numpy(chain, inputs)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    with np.errstate(all="ignore"):
        # the formulas add terms of the size of x (times out_grad) that may cancel: the error is relative to them
        scale = np.abs(want) + (np.abs(x) * np.abs(inputs[-1]) if name.endswith("_grad") else
                                np.abs(x) if name in ("silu", "gelu") else 0)
        err = np.abs(got.astype(F64) - want) - rtol * scale.astype(F64)
    assert np.all(err[finite] <= atol), (name, float(np.max(err[finite])))


# ---------------------------------------------------------------- chains without a CUDA form
@pytest.mark.parametrize("chain, dtypes", [
    ((("add", (0, 1), ()),), ["float16", "float16"]),                          # float16: no exact form here
    ((("add", (0, 1), ()),), ["int32", "int64"]),                              # integer arithmetic
    ((("tanh", (0,), ()), ("elu", (1,), (("alpha", 1.0),))), ["float32"]),     # an op not in the table
    ((("cast", (0,), (("dtype", np.dtype("int32")),)),), ["float32"]),         # float -> int
    ((("assign_value", (), (("dtype", F32), ("shape", (2,)), ("values", (1.0, 2.0)))),
      ("add", (0, 1), ())), ["float32"]),                                      # a multi-element constant
    ((("scale", (0,), (("bias", np.float64(0.5)), ("bias_after_scale", True), ("scale", 2.0))),),
     ["float32"]),                                                             # a NumPy scalar promotes
    ((("tanh", (0,), ()),), ["float32", "float32"]),                           # an input the result ignores
])
def test_a_chain_with_a_step_without_cuda_form_gives_none(chain, dtypes):
    specs = [TensorSpec((3, 2)[-k - 1:], np.dtype(d)) for k, d in enumerate(dtypes)]
    assert fused_cuda.cuda_chain(chain, len(specs), specs) is None


def test_a_chain_from_the_fusion_pass_gives_the_executors_bits(static_mode, tmp_path):
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        x = paddle.static.data("x", [4, 8], "float32")
        y = paddle.static.data("y", [8], "float32")
        h = paddle.maximum(x * 1.01 + 0.1, y) - 3 / 7
        h = paddle.nn.functional.relu(h) * 2.0 + paddle.sqrt(paddle.abs(y))
        out = paddle.clip(h, -1.0, 4.0) / 1.7
    (op,) = apply_passes(main, {out.name}).global_block().ops
    assert op.type == "fused_elementwise" and any(not refs for _, refs, _ in op.attrs["chain"])  # constants inside
    rng = np.random.default_rng(6)
    feed = {"x": np.concatenate([rng.uniform(-3, 3, 9), np.array(SPECIALS)]).astype(F32).reshape(4, 8),
            "y": rng.uniform(-3, 3, 8).astype(F32)}
    with np.errstate(over="ignore"):   # x * 1.01 overflows on 3e38, as it does in eager
        (want,) = paddle.static.Executor().run(main, feed=feed, fetch_list=[out])
    same_bits(run_c(op.attrs["chain"], [feed[name] for name in op.inputs], tmp_path), want)


# ---------------------------------------------------------------- the kernel on a (stand-in) device
@pytest.fixture
def fresh_caches(monkeypatch):
    """Compiled chains and kernels start empty, so a test sees its own compilations."""
    monkeypatch.setattr(fused, "_CHAINS", {})
    monkeypatch.setattr(fused, "_BY_ID", {})
    monkeypatch.setattr(fused_cuda, "_KERNELS", {})


DEVICE_CHAIN = (const(0.5, "float32"), ("multiply", (0, 2), ()), ("add", (3, 1), ()), ("abs", (4,), ()),
                ("sqrt", (5,), ()), ("maximum", (6, 1), ()))


def _device_inputs(fake, rows: int) -> tuple[list[np.ndarray], list]:
    rng = np.random.default_rng(rows)
    host = [rng.uniform(-2, 2, (rows, 3)).astype(F32), np.array([0.0, -0.0, np.nan], F32)]
    return host, [fake.asarray(a) for a in host]


def test_on_a_device_that_cannot_compile_the_chain_runs_on_the_xp_path_compiling_once(fake_gpu, fresh_caches,
                                                                                       monkeypatch):
    built, called = [], []

    class Counting(fake_gpu.ElementwiseKernel):
        def __init__(self, *args, **kwargs):
            built.append(args)
            super().__init__(*args, **kwargs)

        def __call__(self, *args):
            called.append(args)
            return super().__call__(*args)
    monkeypatch.setattr(fake_gpu, "ElementwiseKernel", Counting)
    kernel = get_op("fused_elementwise").kernel
    for rows in (2, 2, 5, 2):   # two input signatures of one dtype tuple
        host, device = _device_inputs(fake_gpu, rows)
        got = kernel(fake_gpu, *device, chain=DEVICE_CHAIN)
        assert isinstance(got, fake_gpu.ndarray)
        same_bits(got.get(), run_numpy(DEVICE_CHAIN, host))
    assert len(built) == 1 and len(called) == 1


class _HostCompiled:
    """An ElementwiseKernel for the stand-in that compiles its body with the host C compiler (as run_c)."""

    tmp_path = None
    made: list = []

    def __init__(self, in_params, out_params, operation, name="kernel", *, preamble="", options=()):
        code = fused_cuda.CudaChain(in_params, out_params, operation, preamble, name)
        self.fn, self.out_dtype = _c_function(code, self.tmp_path)
        self.options, self.calls = options, 0
        self.made.append(self)

    def __call__(self, *args):
        import fake_cupy  # noqa: PLC0415 - the stand-in, installed by the fake_gpu fixture
        self.calls += 1
        return fake_cupy.asarray(call_c(self.fn, self.out_dtype, [a.get() for a in args]))


@pytest.fixture
def compiling_device(fake_gpu, fresh_caches, monkeypatch, tmp_path):
    """The stand-in device whose ElementwiseKernel compiles and runs the body on the host."""
    monkeypatch.setattr(_HostCompiled, "tmp_path", tmp_path)
    monkeypatch.setattr(_HostCompiled, "made", [])
    monkeypatch.setattr(fake_gpu, "ElementwiseKernel", _HostCompiled)
    return fake_gpu


def test_on_a_device_the_chain_runs_as_one_kernel_without_fma_and_gives_numpys_bits(compiling_device):
    fake = compiling_device
    kernel = get_op("fused_elementwise").kernel
    for rows in (2, 5, 2):
        host, device = _device_inputs(fake, rows)
        got = kernel(fake, *device, chain=DEVICE_CHAIN)
        same_bits(got.get(), run_numpy(DEVICE_CHAIN, host))
    (made,) = _HostCompiled.made
    assert made.calls == 3 and made.options == ("--fmad=false", "--std=c++17")


def test_on_a_device_constants_with_more_dimensions_shape_the_result_as_numpy(compiling_device):
    fake = compiling_device
    chain = (("assign_value", (), (("dtype", F32), ("shape", (1, 1, 1)), ("values", (0.25,)))), ("multiply", (0, 1), ()))
    x = np.arange(6, dtype=F32).reshape(2, 3)
    got = get_op("fused_elementwise").kernel(fake, fake.asarray(x), chain=chain)
    assert got.shape == (1, 2, 3)
    same_bits(got.get(), run_numpy(chain, [x]))


def test_on_a_device_a_chain_without_cuda_form_builds_no_kernel(compiling_device):
    fake = compiling_device
    chain = (("tanh", (0,), ()), ("elu", (1,), (("alpha", 1.0),)))
    x = np.linspace(-2, 2, 6, dtype=F32)
    got = get_op("fused_elementwise").kernel(fake, fake.asarray(x), chain=chain)
    same_bits(got.get(), run_numpy(chain, [x]))
    assert _HostCompiled.made == []


def test_a_static_program_on_a_device_place_runs_its_chain_as_one_kernel(compiling_device, static_mode):
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        x = paddle.static.data("x", [2, 3], "float32")
        y = paddle.static.data("y", [3], "float32")
        out = paddle.clip(paddle.sqrt(paddle.abs(x * 0.5 + y)) - y, -0.5, None)
    feed = {"x": np.array([[-2.0, 0.5, np.nan], [3.0, -0.0, 1e-40]], F32), "y": np.array([0.0, 1.0, -2.0], F32)}
    (want,) = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[out])
    for _ in range(2):
        (got,) = paddle.static.Executor(paddle.CUDAPlace(0)).run(main, feed=feed, fetch_list=[out])
        same_bits(np.asarray(got), want)
    (made,) = _HostCompiled.made
    assert made.calls == 2


# ---------------------------------------------------------------- on a real GPU
GPU_CHAINS = {
    "exact": lambda d: (const(1.01, d), const(0.1, d), ("multiply", (0, 2), ()), ("add", (4, 3), ()),
                        ("maximum", (5, 1), ()), ("abs", (6,), ()), ("sqrt", (7,), ()), ("relu", (8,), ()),
                        ("clip", (9,), (("max", 1.5), ("min", -0.5))), ("divide", (10, 3), ())),
    "transcendental": lambda d: (const(0.5, d), ("multiply", (0, 2), ()), ("tanh", (3,), ()), ("exp", (4,), ()),
                                 ("gelu", (5,), (("approximate", False),)), ("silu", (6,), ()),
                                 ("sigmoid", (7,), ()), ("pow", (8, 1), ())),
}


def _nvrtc():
    """CuPy's NVRTC binding where it loads (it compiles without a GPU), else the test is skipped."""
    cupy = pytest.importorskip("cupy", reason="needs CuPy with NVRTC (the gpu extra); no GPU needed")
    nvrtc = cupy.cuda.nvrtc
    try:
        nvrtc.getVersion()
    except Exception as e:  # noqa: BLE001 - a CuPy whose NVRTC library is missing
        pytest.skip(f"needs CuPy's NVRTC library: {e}")
    return nvrtc


def _nvrtc_compiles(nvrtc, chain: tuple, dtypes: list) -> None:
    code = fused_cuda.cuda_chain(chain, len(dtypes), [TensorSpec((4,), np.dtype(d)) for d in dtypes])
    assert code is not None, chain
    program = nvrtc.createProgram(_source(code, device=True)[0], "chain.cu", [], [])
    try:
        nvrtc.compileProgram(program, [*fused_cuda._NVRTC_OPTIONS, "-arch=compute_70"])
    except Exception:
        pytest.fail(f"NVRTC rejected the kernel of {chain}:\n{nvrtc.getProgramLog(program)}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nvrtc_compiles_the_kernel_of_every_step_with_a_cuda_form(dtype):
    nvrtc = _nvrtc()
    steps = [*((n, 2, ()) for n in BINARY_EXACT), *((n, len(get_op(n).inputs), a)
                                                   for n, a in [*UNARY_EXACT, *GRADS_EXACT, *TRANSCENDENTAL])]
    for name, arity, attrs in steps:
        _nvrtc_compiles(nvrtc, ((name, tuple(range(arity)), attrs),), [dtype] * arity)
    for make in GPU_CHAINS.values():
        _nvrtc_compiles(nvrtc, make(dtype), [dtype, dtype])
    _nvrtc_compiles(nvrtc, (const(np.inf, dtype), const(np.nan, dtype), ("add", (0, 1), ()), ("multiply", (2, 3), ())),
                    [dtype])


@settings(max_examples=40, deadline=None)
@given(exact_chains())
def test_nvrtc_compiles_the_kernel_of_random_exact_chains(example):
    chain, inputs = example
    _nvrtc_compiles(_nvrtc(), chain, [a.dtype for a in inputs])


GPU_TOL = {F32: 1e-5, F64: 1e-12}   # libdevice against NumPy through a short chain


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("kind", sorted(GPU_CHAINS))
def test_on_a_gpu_the_fused_kernel_matches_the_unfused_cupy_chain_and_the_cpu(kind, dtype, fresh_caches,
                                                                             monkeypatch):
    import cupy  # noqa: PLC0415 - only with a GPU
    chain = GPU_CHAINS[kind](dtype.name)
    rng = np.random.default_rng(8)
    host = [np.concatenate([rng.uniform(-3, 3, 40), np.array(SPECIALS[:8])]).astype(dtype).reshape(6, 8),
            rng.uniform(0.5, 2, 8).astype(dtype)]
    kernel = get_op("fused_elementwise").kernel
    fused_out = kernel(cupy, *[cupy.asarray(a) for a in host], chain=chain).get()
    assert [k.kernel is not None for k in fused_cuda._KERNELS.values()] == [True]   # it ran as one kernel
    monkeypatch.setattr(fused, "_CHAINS", {})
    monkeypatch.setattr(fused, "_BY_ID", {})
    monkeypatch.setattr(fused_cuda, "cuda_chain", lambda *args: None)   # the xp path: one CuPy call per step
    unfused = kernel(cupy, *[cupy.asarray(a) for a in host], chain=chain).get()
    cpu = run_numpy(chain, host)
    if kind == "exact":
        same_bits(fused_out, cpu)
    np.testing.assert_allclose(fused_out, cpu, rtol=GPU_TOL[dtype], atol=GPU_TOL[dtype])
    np.testing.assert_allclose(fused_out, unfused, rtol=GPU_TOL[dtype], atol=GPU_TOL[dtype])


def test_to_static_on_device_tensors_runs_the_chain_as_one_kernel_with_eagers_bits(compiling_device):
    def f(x, y):
        return paddle.maximum(paddle.sqrt(paddle.abs(x * 0.5 + y)) - y, x)
    place = paddle.CUDAPlace(0)
    x = paddle.to_tensor(np.array([[-2.0, 0.5, np.nan], [3.0, -0.0, 1e-40]], F32), place=place)
    y = paddle.to_tensor(np.array([0.0, 1.0, -2.0], F32), place=place)
    jit = jit_of(f)
    for _ in range(2):
        got = jit(x, y)
        assert got.place == place
        same_bits(got.numpy(), f(x, y).numpy())
    (made,) = _HostCompiled.made
    assert made.calls == 2
