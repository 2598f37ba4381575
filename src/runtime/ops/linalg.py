"""Linear algebra: matmul (transpose_x/transpose_y), mm, bmm, dot, mv, t, einsum, outer, inner,
cross, norm, dist, and the matrix functions behind `paddle.linalg` (inv, det, solve, cholesky,
qr, svd, matrix_power, multi_dot).

matmul's gradient is matmul again with transpose flags (no transposed copies), summed over
broadcast batch dimensions. einsum's gradient is an einsum of the output gradient with the
other operands, derived from the subscripts (repeated labels via identity matrices, labels
summed inside one operand via broadcasting back).
"""
from __future__ import annotations

import functools
import math as _pymath
import string
from typing import Any, Sequence

import numpy as np

from ..tensor import Tensor, as_tensor, tensor_method
from . import meta_utils as mu
from .creation import create_on, eye, ones_like, tril, zeros_like
from .grad_utils import holomorphic, unbroadcast
from .math import abs as abs_, add, divide, equal, multiply, neg, pow as pow_, scale, sign, subtract, where
from .reduction import _expand_back
from .registry import Sample, TensorSpec, defop, normal_sampler
from .shape import expand, reshape, transpose

__all__ = ["matmul", "mm", "bmm", "addmm", "baddbmm", "dot", "mv", "t", "einsum", "outer", "inner", "cross", "norm", "dist",
           "inverse", "cholesky"]

_rng = np.random.default_rng(5)
_normal = normal_sampler(_rng)
_NUMERIC = "iufc"


def _same_dtype(op: str, specs: Sequence[TensorSpec], names: Sequence[str]) -> None:
    for s, n in zip(specs, names):
        mu.require_dtype_kind(op, s, _NUMERIC, "a numeric (int, float or complex) tensor", n)
    first = specs[0].dtype
    for s, n in zip(specs[1:], names[1:]):
        if s.dtype != first:
            raise TypeError(f"{op}: argument '{n}' has dtype {s.dtype.name} but '{names[0]}' has "
                            f"{first.name}; they must have the same dtype (cast one first)")


def _mT(a: Tensor) -> Tensor:
    """a with its last two dimensions swapped."""
    n = len(a.shape)
    return transpose(a, list(range(n - 2)) + [n - 1, n - 2])


def _add_dims(t: Tensor, shape: Sequence[int]) -> Tensor:
    return reshape(t, list(shape))


# ---------------------------------------------------------------- matmul
def _matmul_meta(x: TensorSpec, y: TensorSpec, *, transpose_x: bool, transpose_y: bool) -> TensorSpec:
    for arg, s in (("x", x), ("y", y)):
        if not s.shape:
            raise ValueError(f"matmul: argument '{arg}' must be at least 1-D, got a 0-D tensor")
    _same_dtype("matmul", (x, y), ("x", "y"))
    xs, ys = tuple(x.shape), tuple(y.shape)
    xm = (1, xs[0]) if len(xs) == 1 else xs[:-2] + ((xs[-1], xs[-2]) if transpose_x else xs[-2:])
    ym = (ys[0], 1) if len(ys) == 1 else ys[:-2] + ((ys[-1], ys[-2]) if transpose_y else ys[-2:])
    if xm[-1] != ym[-2] and xm[-1] != -1 and ym[-2] != -1:
        xdesc = " (transposed)" if transpose_x and len(xs) > 1 else ""
        ydesc = " (transposed)" if transpose_y and len(ys) > 1 else ""
        which = "only dimension" if len(ys) == 1 else "second-to-last dimension"
        raise ValueError(f"matmul: the last dimension of argument 'x' {mu.shape_str(xs)}{xdesc} ({xm[-1]}) "
                         f"must equal the {which} of argument 'y' {mu.shape_str(ys)}{ydesc} ({ym[-2]})")
    try:
        batch = mu.broadcast_shape("matmul", xm[:-2], ym[:-2])
    except ValueError:
        raise ValueError(f"matmul: the batch dimensions of argument 'x' {mu.shape_str(xs)} and argument 'y' "
                         f"{mu.shape_str(ys)} cannot be broadcast together") from None
    out = batch + ((xm[-2],) if len(xs) > 1 else ()) + ((ym[-1],) if len(ys) > 1 else ())
    return TensorSpec(out, x.dtype)


def _matmul_kernel(xp, x, y, *, transpose_x, transpose_y):
    if transpose_x and x.ndim > 1:
        x = xp.swapaxes(x, -1, -2)  # a view: BLAS reads it transposed
    if transpose_y and y.ndim > 1:
        y = xp.swapaxes(y, -1, -2)
    return xp.matmul(x, y)


def _g_matmul(ctx, g):
    """For A = op(x), B = op(y): dA = g B^T, dB = A^T g, written as matmuls with flags."""
    x, y = ctx.inputs
    tx, ty = ctx.attrs["transpose_x"], ctx.attrs["transpose_y"]
    need = ctx.needs_input_grad
    x1, y1 = len(x.shape) == 1, len(y.shape) == 1
    if x1 or y1:  # work on 2-D views of 1-D operands: x as [1, n], y as [n, 1]
        gshape = list(g.shape)
        if x1:
            gshape.insert(len(gshape) - (0 if y1 else 1), 1)
        if y1:
            gshape.append(1)
        g = _add_dims(g, gshape)
        x = _add_dims(x, [1, x.shape[0]]) if x1 else x
        y = _add_dims(y, [y.shape[0], 1]) if y1 else y
        tx, ty = tx and not x1, ty and not y1
    gx = gy = None
    if need[0]:
        gx = matmul(y, g, transpose_x=ty, transpose_y=True) if tx else matmul(g, y, transpose_y=not ty)
        gx = unbroadcast(gx, x)
        if x1:
            gx = _add_dims(gx, ctx.inputs[0].shape)
    if need[1]:
        gy = matmul(g, x, transpose_x=True, transpose_y=tx) if ty else matmul(x, g, transpose_x=not tx)
        gy = unbroadcast(gy, y)
        if y1:
            gy = _add_dims(gy, ctx.inputs[1].shape)
    return gx, gy


def _matmul_samples():
    def s(xs, ys, tx=False, ty=False):
        return Sample((_normal(*xs), _normal(*ys)), {"transpose_x": tx, "transpose_y": ty})
    return [s((3, 4), (4, 5)), s((4, 3), (4, 5), tx=True), s((3, 4), (5, 4), ty=True),
            s((4, 3), (5, 4), True, True), s((2, 3, 4), (4, 2)), s((2, 1, 3, 4), (3, 5, 4), ty=True),
            s((4,), (4,)), s((4,), (2, 4, 3)), s((2, 3, 4), (4,)), s((4,), (3, 4), ty=True),
            s((1, 3, 4), (2, 4, 2), tx=False)]


_MATMUL = defop("matmul", kernel=_matmul_kernel, meta=_matmul_meta, grad=holomorphic(_g_matmul),
                inputs=("x", "y"), attrs={"transpose_x": False, "transpose_y": False}, samples=_matmul_samples)


@tensor_method
def matmul(x: Tensor, y: Tensor, transpose_x: bool = False, transpose_y: bool = False,
           name: str | None = None) -> Tensor:
    """Matrix product with NumPy's broadcasting and 1-D rules, optionally transposing x/y first."""
    if type(x) is not Tensor:
        x = as_tensor(x, "x", "matmul")
    if type(y) is not Tensor:
        y = as_tensor(y, "y", "matmul")
    return _MATMUL(x, y, transpose_x=bool(transpose_x), transpose_y=bool(transpose_y))


@tensor_method
def mm(input: Tensor, mat2: Tensor, name: str | None = None) -> Tensor:  # noqa: A002 - Paddle's name
    """Matrix product (matmul without transposes)."""
    return _MATMUL(as_tensor(input, "input", "mm"), as_tensor(mat2, "mat2", "mm"),
                   transpose_x=False, transpose_y=False)


Tensor.__matmul__ = lambda self, other: matmul(self, other) if isinstance(other, Tensor) else NotImplemented
Tensor.__rmatmul__ = lambda self, other: matmul(other, self) if isinstance(other, Tensor) else NotImplemented


# ---------------------------------------------------------------- bmm, dot, mv, t
def _bmm_meta(x: TensorSpec, y: TensorSpec) -> TensorSpec:
    for arg, s in (("x", x), ("y", y)):
        if len(s.shape) != 3:
            raise ValueError(f"bmm: argument '{arg}' must be 3-D [batch, rows, cols], got shape {mu.shape_str(s.shape)}")
    _same_dtype("bmm", (x, y), ("x", "y"))
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"bmm: the batch sizes of argument 'x' {mu.shape_str(x.shape)} and argument 'y' "
                         f"{mu.shape_str(y.shape)} must be equal ({x.shape[0]} vs {y.shape[0]})")
    if x.shape[2] != y.shape[1]:
        raise ValueError(f"bmm: the last dimension of argument 'x' {mu.shape_str(x.shape)} ({x.shape[2]}) must "
                         f"equal the second dimension of argument 'y' {mu.shape_str(y.shape)} ({y.shape[1]})")
    return TensorSpec((x.shape[0], x.shape[1], y.shape[2]), x.dtype)


def _g_bmm(ctx, g):
    x, y = ctx.inputs
    need = ctx.needs_input_grad
    return (matmul(g, y, transpose_y=True) if need[0] else None,
            matmul(x, g, transpose_x=True) if need[1] else None)


_BMM = defop("bmm", kernel=lambda xp, x, y: xp.matmul(x, y), meta=_bmm_meta, grad=holomorphic(_g_bmm),
             inputs=("x", "y"), samples=lambda: [Sample((_normal(2, 3, 4), _normal(2, 4, 5)))])


@tensor_method
def bmm(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """Batched matrix product of two 3-D tensors with equal batch sizes (no broadcasting)."""
    return _BMM(as_tensor(x, "x", "bmm"), as_tensor(y, "y", "bmm"))


# ---------------------------------------------------------------- addmm, baddbmm
def _check_add_mm(op: str, input: Tensor, x: Tensor, y: Tensor, ndim: int) -> None:  # noqa: A002
    """Paddle's shape rules: x, y are `ndim`-D and chain; input broadcasts to the product's shape."""
    xs, ys, ins = list(x.shape), list(y.shape), list(input.shape)
    if len(xs) != ndim or len(ys) != ndim:
        raise ValueError(f"{op}: the dimension of x, y should be {ndim} but receive x's shape: {xs}, "
                         f"y's shape: {ys}")
    if -1 not in (xs[-1], ys[-2]) and xs[-1] != ys[-2]:
        raise ValueError(f"{op}: x's width must equal y's height, but received x's shape = {xs}, "
                         f"y's shape = {ys}")
    out = xs[:-1] + ys[-1:]
    if len(ins) not in (ndim - 1, ndim) or any(
            i not in (o, 1, -1) and o != -1 for i, o in zip(ins[::-1], out[::-1])):
        raise ValueError(f"{op}: input's shape {ins} is not broadcastable with the product's shape {out}")


def _add_mm(op: str, input: Tensor, x: Tensor, y: Tensor, beta: float, alpha: float,  # noqa: A002
            ndim: int) -> Tensor:
    """beta * input + alpha * (x @ y), composed of differentiable ops (so autograd and static work)."""
    input, x, y = as_tensor(input, "input", op), as_tensor(x, "x", op), as_tensor(y, "y", op)
    _check_add_mm(op, input, x, y, ndim)
    beta, alpha = mu.number_arg(op, "beta", beta), mu.number_arg(op, "alpha", alpha)
    prod = _MATMUL(x, y, transpose_x=False, transpose_y=False)
    return add(scale(input, beta), scale(prod, alpha))


@tensor_method
def addmm(input: Tensor, x: Tensor, y: Tensor, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
          name: str | None = None) -> Tensor:
    """beta * input + alpha * (x @ y) for 2-D x, y (Paddle's fused linear form)."""
    return _add_mm("addmm", input, x, y, beta, alpha, 2)


@tensor_method
def baddbmm(input: Tensor, x: Tensor, y: Tensor, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
            name: str | None = None) -> Tensor:
    """beta * input + alpha * bmm(x, y) for 3-D x, y."""
    return _add_mm("baddbmm", input, x, y, beta, alpha, 3)


def _dot_meta(x: TensorSpec, y: TensorSpec) -> TensorSpec:
    _same_dtype("dot", (x, y), ("x", "y"))
    if len(x.shape) not in (1, 2) or x.shape != y.shape:
        raise ValueError(f"dot: arguments 'x' {mu.shape_str(x.shape)} and 'y' {mu.shape_str(y.shape)} must be "
                         "1-D or 2-D tensors of the same shape")
    return TensorSpec(tuple(x.shape[:-1]), x.dtype)


def _dot_kernel(xp, x, y):
    if x.ndim == 1:
        return xp.asarray(xp.dot(x, y))
    return xp.einsum("ij,ij->i", x, y)


def _g_dot(ctx, g):
    x, y = ctx.inputs
    if len(x.shape) == 2:
        g = _add_dims(g, [x.shape[0], 1])
    need = ctx.needs_input_grad
    return (multiply(g, y) if need[0] else None, multiply(g, x) if need[1] else None)


_DOT = defop("dot", kernel=_dot_kernel, meta=_dot_meta, grad=holomorphic(_g_dot), inputs=("x", "y"),
             samples=lambda: [Sample((_normal(5), _normal(5))), Sample((_normal(3, 4), _normal(3, 4)))])


@tensor_method
def dot(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """Inner product of 1-D tensors (0-D result), or row-wise of 2-D tensors ([batch] result)."""
    return _DOT(as_tensor(x, "x", "dot"), as_tensor(y, "y", "dot"))


@tensor_method
def mv(x: Tensor, vec: Tensor, name: str | None = None) -> Tensor:
    """Matrix-vector product of a 2-D x and a 1-D vec."""
    x, vec = as_tensor(x, "x", "mv"), as_tensor(vec, "vec", "mv")
    if x.ndim != 2 or vec.ndim != 1:
        raise ValueError(f"mv: argument 'x' must be 2-D and 'vec' 1-D, got shapes {x.shape} and {vec.shape}")
    return _MATMUL(x, vec, transpose_x=False, transpose_y=False)


@tensor_method
def t(input: Tensor, name: str | None = None) -> Tensor:  # noqa: A002 - Paddle's name
    """Transpose of a 2-D tensor; 0-D and 1-D tensors are returned as they are."""
    input = as_tensor(input, "input", "t")
    if input.ndim > 2:
        raise ValueError(f"t: argument 'input' must be at most 2-D, got shape {input.shape} "
                         "(use paddle.transpose for more dimensions)")
    return input if input.ndim < 2 else _mT(input)


# ---------------------------------------------------------------- einsum
_LETTERS = string.ascii_letters


@functools.lru_cache(maxsize=1024)
def _einsum_parse(equation: str, ndims: tuple[int, ...]) -> tuple[tuple[str, ...], str]:
    """Subscripts with '...' spelled out as letters, and the (explicit) output subscripts."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"einsum: equation {equation!r} has more than one '->'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: equation {equation!r} has {len(terms)} operand term(s) but "
                         f"{len(ndims)} operand(s) were given")
    for term in terms + ([rhs] if arrow else []):
        rest = term.replace("...", "", 1)
        if "." in rest or any(c not in _LETTERS for c in rest):
            raise ValueError(f"einsum: bad subscripts {term!r} in equation {equation!r}: use letters a-z, A-Z "
                             "and at most one '...' per term")
    used = {c for c in eq if c in _LETTERS}
    pool = [c for c in _LETTERS[::-1] if c not in used]
    n_ell = 0
    for i, (term, nd) in enumerate(zip(terms, ndims)):
        labels = len(term.replace("...", ""))
        if ("..." in term and labels > nd) or ("..." not in term and labels != nd):
            raise ValueError(f"einsum: term {term!r} of equation {equation!r} has {labels} label(s) but "
                             f"operand {i} has {nd} dimension(s)")
        if "..." in term:
            n_ell = max(n_ell, nd - labels)
    if n_ell > len(pool):
        raise ValueError(f"einsum: equation {equation!r} uses too many labels")
    ell = "".join(pool[:n_ell])
    expanded = tuple(t.replace("...", ell[n_ell - (nd - len(t.replace("...", ""))):] if n_ell else "")
                     for t, nd in zip(terms, ndims))
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if c not in "".join(expanded):
                raise ValueError(f"einsum: output label '{c}' of equation {equation!r} appears in no operand")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscripts {rhs!r} of equation {equation!r} repeat a label")
    else:
        counts = {}
        for c in "".join(terms):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c in _LETTERS))
    return expanded, out


def _einsum_sizes(equation: str, subs: tuple[str, ...], shapes: Sequence[tuple]) -> dict:
    """The size of every label, checking that operands agree (size-1 dims broadcast)."""
    sizes: dict = {}
    for i, (sub, shape) in enumerate(zip(subs, shapes)):
        seen: dict = {}
        for c, d in zip(sub, shape):
            if c in seen and seen[c] != d and -1 not in (seen[c], d):
                raise ValueError(f"einsum: label '{c}' repeats in operand {i} of {equation!r} with different "
                                 f"sizes {seen[c]} and {d} (shape {mu.shape_str(shape)})")
            seen[c] = d
            s = sizes.get(c)
            if s is None or s == 1 or s == -1:
                sizes[c] = d if s is None or d != 1 else s
            elif d not in (1, -1, s):
                raise ValueError(f"einsum: label '{c}' of {equation!r} has size {s} in an earlier operand but {d} "
                                 f"in operand {i} (shape {mu.shape_str(shape)})")
    return sizes


def _einsum_meta(*operands: TensorSpec, equation: str) -> TensorSpec:
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    _same_dtype("einsum", operands, [f"operands[{i}]" for i in range(len(operands))])
    subs, out = _einsum_parse(equation, tuple(len(s.shape) for s in operands))
    sizes = _einsum_sizes(equation, subs, [s.shape for s in operands])
    return TensorSpec(tuple(sizes[c] for c in out), operands[0].dtype)


def _einsum_kernel(xp, *operands, equation):
    big = len(operands) > 1 and max(a.size for a in operands) >= 4096
    return xp.asarray(xp.einsum(equation, *operands, optimize="greedy" if big else False))


@functools.lru_cache(maxsize=1024)
def _einsum_grad_plan(equation: str, shapes: tuple[tuple[int, ...], ...], i: int):
    """How to get operand i's gradient: (equation, other operand indices, identity sizes,
    shape to reshape the einsum result to or None, whether to expand it to operand i's shape)."""
    subs, out = _einsum_parse(equation, tuple(len(s) for s in shapes))
    sizes = _einsum_sizes(equation, subs, shapes)
    fresh = [c for c in _LETTERS if c not in set("".join(subs) + out)]
    shape_i = shapes[i]
    others = [j for j in range(len(shapes)) if j != i]
    target: list = []  # (position, label) of the dims the einsum produces
    eyes: list = []    # (first label, duplicate label, size): repeated labels become identity factors
    seen: set = set()
    for p, c in enumerate(subs[i]):
        if shape_i[p] == 1 and sizes[c] != 1:
            continue  # a broadcast dim: the einsum sums it
        if c in seen:
            if not fresh:
                raise ValueError(f"einsum: equation {equation!r} uses too many labels to differentiate")
            dup = fresh.pop()
            eyes.append((c, dup, sizes[c]))
            c = dup
        seen.add(c)
        target.append((p, c))
    terms = [out] + [subs[j] for j in others] + [a + b for a, b, _ in eyes]
    term_shapes = [tuple(sizes[c] for c in out)] + [shapes[j] for j in others] + [(n, n) for _, _, n in eyes]
    in_size: dict = {}
    for term, shape in zip(terms, term_shapes):
        for c, d in zip(term, shape):
            in_size[c] = max(in_size.get(c, 1), d)
    kept = [(p, c) for p, c in target if c in in_size]
    result = "".join(c for _, c in kept)
    grad_eq = ",".join(terms) + "->" + result
    kept_pos = {p: c for p, c in kept}
    shape = tuple(in_size[kept_pos[p]] if p in kept_pos else 1 for p in range(len(shape_i)))
    reshape_to = None if shape == tuple(in_size[c] for c in result) else shape
    return grad_eq, tuple(others), tuple(n for _, _, n in eyes), reshape_to, shape != tuple(shape_i)


def _g_einsum(ctx, g):
    inputs = ctx.inputs
    shapes = tuple(tuple(t.shape) for t in inputs)
    equation = ctx.attrs["equation"]
    grads = []
    for i, need in enumerate(ctx.needs_input_grad):
        if not need:
            grads.append(None)
            continue
        grad_eq, others, eyes, reshape_to, grow = _einsum_grad_plan(equation, shapes, i)
        ops = [g] + [inputs[j] for j in others] + [eye(n, dtype=g.dtype) for n in eyes]
        r = _EINSUM(*ops, equation=grad_eq)
        if reshape_to is not None:
            r = reshape(r, list(reshape_to))
        if grow:
            r = expand(r, list(shapes[i]))
        grads.append(r)
    return tuple(grads)


def _einsum_samples():
    def s(eq, *shapes):
        return Sample(tuple(_normal(*sh) for sh in shapes), {"equation": eq})
    return [s("ij,jk->ik", (3, 4), (4, 5)), s("bij,bjk->bik", (2, 3, 4), (2, 4, 2)), s("ij->ji", (3, 4)),
            s("ii->i", (3, 3)), s("ii", (3, 3)), s("ij->i", (3, 4)), s("i,j->ij", (3,), (4,)),
            s("...ij,...jk", (2, 3, 4), (4, 5)), s("...i,...i->...", (1, 3, 4), (2, 1, 4)),
            s("bii,bj->bij", (2, 3, 3), (2, 4)), s("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
            s("i,i", (4,), (4,)), s("abc->", (2, 3, 2))]


_EINSUM = defop("einsum", kernel=_einsum_kernel, meta=_einsum_meta, grad=holomorphic(_g_einsum),
                inputs=("*operands",), attrs={"equation": ""}, samples=_einsum_samples)


def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Einstein summation over the operands (NumPy's subscripts, '...' and implicit output)."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: argument 'equation' must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _EINSUM(*[as_tensor(a, f"operands[{i}]", "einsum") for i, a in enumerate(operands)], equation=equation)


# ---------------------------------------------------------------- outer, inner, cross
@tensor_method
def outer(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """Outer product of the flattened x and y: [x.size, y.size]."""
    x, y = as_tensor(x, "x", "outer"), as_tensor(y, "y", "outer")
    return matmul(_add_dims(x, [-1, 1]), _add_dims(y, [1, -1]))


@tensor_method
def inner(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """Sum over the last dimension: shape x.shape[:-1] + y.shape[:-1]."""
    x, y = as_tensor(x, "x", "inner"), as_tensor(y, "y", "inner")
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"inner: the last dimensions of argument 'x' {x.shape} and argument 'y' {y.shape} "
                         "must be equal")
    k = x.shape[-1]
    out = matmul(_add_dims(x, [-1, k]), _add_dims(y, [-1, k]), transpose_y=True)
    return _add_dims(out, x.shape[:-1] + y.shape[:-1])


def _cross_meta(x: TensorSpec, y: TensorSpec, *, axis: int) -> TensorSpec:
    _same_dtype("cross", (x, y), ("x", "y"))
    if x.shape != y.shape:
        raise ValueError(f"cross: arguments 'x' {mu.shape_str(x.shape)} and 'y' {mu.shape_str(y.shape)} must have "
                         "the same shape")
    a = mu.normalize_axis("cross", axis, len(x.shape))
    if x.shape[a] != 3:
        raise ValueError(f"cross: dimension {axis} of the inputs (shape {mu.shape_str(x.shape)}) must have size 3")
    return x


def _g_cross(ctx, g):
    x, y = ctx.inputs
    axis = ctx.attrs["axis"]
    need = ctx.needs_input_grad
    return (_CROSS(y, g, axis=axis) if need[0] else None, _CROSS(g, x, axis=axis) if need[1] else None)


_CROSS = defop("cross", kernel=lambda xp, x, y, *, axis: xp.cross(x, y, axis=axis), meta=_cross_meta,
               grad=_g_cross, inputs=("x", "y"), attrs={"axis": -1},
               samples=lambda: [Sample((_normal(4, 3), _normal(4, 3)), {"axis": 1}),
                                Sample((_normal(3, 2), _normal(3, 2)), {"axis": 0})])


@tensor_method
def cross(x: Tensor, y: Tensor, axis: int = 9, name: str | None = None) -> Tensor:
    """Cross product of 3-vectors along `axis` (default: the first dimension of size 3)."""
    x, y = as_tensor(x, "x", "cross"), as_tensor(y, "y", "cross")
    if axis == 9:  # Paddle's sentinel: the first axis of size 3
        axis = next((i for i, d in enumerate(x.shape) if d == 3), None)
        if axis is None:
            raise ValueError(f"cross: argument 'x' {x.shape} has no dimension of size 3")
    return _CROSS(x, y, axis=int(axis))


# ---------------------------------------------------------------- norm, dist
def _norm_meta(x: TensorSpec, *, p: float, axis: Any, keepdim: bool) -> TensorSpec:
    mu.require_float("norm", x)
    axes = mu.normalize_axes("norm", axis, len(x.shape))
    if p in (_pymath.inf, -_pymath.inf) and 0 in [x.shape[a] for a in axes]:
        raise ValueError(f"norm: cannot take the {p} norm over a zero-size dimension (shape {mu.shape_str(x.shape)})")
    return TensorSpec(mu.reduce_shape(x.shape, axes, keepdim), x.dtype)


def _norm_kernel(xp, x, *, p, axis, keepdim):
    ax = None if x.ndim == 0 else axis
    if p == 2.0:
        return xp.sqrt(xp.sum(x * x, axis=ax, keepdims=keepdim))
    a = xp.abs(x)
    if p == _pymath.inf:
        return xp.max(a, axis=ax, keepdims=keepdim)
    if p == -_pymath.inf:
        return xp.min(a, axis=ax, keepdims=keepdim)
    if p == 0.0:
        return xp.sum(a != 0, axis=ax, keepdims=keepdim).astype(x.dtype)
    if p == 1.0:
        return xp.sum(a, axis=ax, keepdims=keepdim)
    return (xp.sum(a ** p, axis=ax, keepdims=keepdim) ** (1.0 / p)).astype(x.dtype, copy=False)


def _g_norm(ctx, g):
    (x,) = ctx.inputs
    p, axis, keepdim = ctx.attrs["p"], ctx.attrs["axis"], ctx.attrs["keepdim"]
    if p == 0.0:
        return (zeros_like(x),)
    g = _expand_back(g, x, axis, keepdim)
    if p == 1.0:
        return (multiply(g, sign(x)),)
    out = _expand_back(ctx.outputs[0], x, axis, keepdim)
    if p in (_pymath.inf, -_pymath.inf):  # as Paddle's p_norm_grad: every tied extreme element gets g * sign
        return (multiply(g, multiply(sign(x), equal(abs_(x), out).astype(x.dtype))),)
    safe = where(equal(out, 0.0), ones_like(out), out)
    if p == 2.0:
        return (multiply(g, divide(x, safe)),)
    return (multiply(g, multiply(sign(x), pow_(divide(abs_(x), safe), p - 1.0))),)


def _norm_samples():
    def s(shape, p, axis, keepdim=False):
        return Sample((_normal(*shape),), {"p": p, "axis": axis, "keepdim": keepdim})
    return [s((3, 4), 2.0, None), s((3, 4), 2.0, (0, 1), True), s((2, 3, 4), 1.0, 1), s((2, 3, 4), 3.0, (0, 2)),
            s((3, 4), _pymath.inf, 1), s((3, 4), -_pymath.inf, None), s((5,), 0.5, 0), s((3, 4), 0.0, 1, True)]


_NORM = defop("p_norm", kernel=_norm_kernel, meta=_norm_meta, grad=_g_norm, save_outputs=True,
              attrs={"p": 2.0, "axis": None, "keepdim": False}, samples=_norm_samples)


def _norm_p(p: Any) -> float:
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        raise ValueError(f"norm: argument 'p' must be 'fro', a number, inf or -inf, got {p!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"norm: argument 'p' must be 'fro' or a number, got {type(p).__name__}")
    return float(p)


@tensor_method
def norm(x: Tensor, p: Any = "fro", axis: Any = None, keepdim: bool = False, name: str | None = None) -> Tensor:
    """Vector p-norm over `axis` (one or two axes; None: all elements); 'fro' is the 2-norm."""
    x = as_tensor(x, "x", "norm")
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        if len(axis) > 2:
            raise ValueError(f"norm: argument 'axis' must be an int or a list of at most two ints, got {list(axis)}")
        axis = tuple(axis) if axis else None
    return _NORM(x, p=_norm_p(p), axis=axis, keepdim=bool(keepdim))


@tensor_method
def dist(x: Tensor, y: Tensor, p: float = 2, name: str | None = None) -> Tensor:
    """The p-norm of x - y over all elements (x and y broadcast)."""
    diff = subtract(as_tensor(x, "x", "dist"), as_tensor(y, "y", "dist"))
    return _NORM(diff, p=_norm_p(p), axis=None, keepdim=False)


# ---------------------------------------------------------------- matrix functions (paddle.linalg)
def _square_meta(op: str):
    def meta(x: TensorSpec) -> TensorSpec:
        _require_square(op, x)
        return x
    return meta


def _require_square(op: str, x: TensorSpec, arg: str = "x") -> None:
    mu.require_float(op, x, arg)
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}: argument '{arg}' must be a (batch of) square matrices [..., n, n], got shape "
                         f"{mu.shape_str(x.shape)}")


def _g_inverse(ctx, g):
    inv_ = ctx.outputs[0]  # d(A^-1) = -A^-1 dA A^-1  =>  gA = -A^-T g A^-T
    return (neg(matmul(matmul(inv_, g, transpose_x=True), inv_, transpose_y=True)),)


def _spd(*shape):
    a = _normal(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


_INVERSE = defop("inverse", kernel=lambda xp, x: xp.linalg.inv(x), meta=_square_meta("inverse"), grad=_g_inverse,
                 save_outputs=True, samples=lambda: [Sample((_spd(3, 3),)), Sample((_spd(2, 4, 4),))])


@tensor_method
def inverse(x: Tensor, name: str | None = None) -> Tensor:
    """The inverse of a (batch of) square matrices."""
    return _INVERSE(as_tensor(x, "x", "inverse"))


inv = inverse


def _det_meta(x: TensorSpec) -> TensorSpec:
    _require_square("det", x)
    return TensorSpec(tuple(x.shape[:-2]), x.dtype)


def _g_det(ctx, g):
    (x,) = ctx.inputs
    scale = _add_dims(multiply(g, ctx.outputs[0]), list(x.shape[:-2]) + [1, 1])
    return (multiply(scale, _mT(inverse(x))),)  # d det = det * tr(A^-1 dA)


_DET = defop("det", kernel=lambda xp, x: xp.asarray(xp.linalg.det(x)), meta=_det_meta, grad=_g_det,
             save_outputs=True, samples=lambda: [Sample((_spd(3, 3),)), Sample((_normal(2, 3, 3) + 3 * np.eye(3),))])


def det(x: Tensor, name: str | None = None) -> Tensor:
    """The determinant of a (batch of) square matrices."""
    return _DET(as_tensor(x, "x", "det"))


def _solve_meta(x: TensorSpec, y: TensorSpec) -> TensorSpec:
    _require_square("solve", x)
    mu.require_float("solve", y, "y")
    _same_dtype("solve", (x, y), ("x", "y"))
    n = x.shape[-1]
    if len(y.shape) == 1:
        if y.shape[0] != n:
            raise ValueError(f"solve: argument 'y' {mu.shape_str(y.shape)} must have {n} elements to match "
                             f"argument 'x' {mu.shape_str(x.shape)}")
        return TensorSpec(tuple(x.shape[:-1]), x.dtype)
    if y.shape[-2] != n:
        raise ValueError(f"solve: the second-to-last dimension of argument 'y' {mu.shape_str(y.shape)} must be {n} "
                         f"to match argument 'x' {mu.shape_str(x.shape)}")
    try:
        batch = mu.broadcast_shape("solve", x.shape[:-2], y.shape[:-2])
    except ValueError:
        raise ValueError(f"solve: the batch dimensions of argument 'x' {mu.shape_str(x.shape)} and argument 'y' "
                         f"{mu.shape_str(y.shape)} cannot be broadcast together") from None
    return TensorSpec(batch + tuple(y.shape[-2:]), x.dtype)


def _solve_kernel(xp, x, y):
    if y.ndim == 1:  # a vector: solve for one column, spelled out so no NumPy version reads it as a stack
        return xp.linalg.solve(x, xp.broadcast_to(y[:, None], x.shape[:-1] + (1,)))[..., 0]
    if x.shape[:-2] != y.shape[:-2]:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        x = xp.broadcast_to(x, batch + x.shape[-2:])
        y = xp.broadcast_to(y, batch + y.shape[-2:])
    return xp.linalg.solve(x, y)


def _g_solve(ctx, g):
    x, y = ctx.inputs
    out = ctx.outputs[0]
    vec = len(y.shape) == 1
    if vec:  # solve for a column: view g and out as [..., n, 1]
        g = _add_dims(g, list(g.shape) + [1])
        out = _add_dims(out, list(out.shape) + [1])
    gy = solve(_mT(x), g)  # x^T gy = g
    gx = neg(matmul(gy, out, transpose_y=True)) if ctx.needs_input_grad[0] else None
    if vec:
        gy = _add_dims(unbroadcast(gy, _add_dims(y, [y.shape[0], 1])), y.shape)
    else:
        gy = unbroadcast(gy, y)
    return (unbroadcast(gx, x) if gx is not None else None, gy if ctx.needs_input_grad[1] else None)


_SOLVE = defop("solve", kernel=_solve_kernel, meta=_solve_meta, grad=_g_solve, save_outputs=True,
               inputs=("x", "y"),
               samples=lambda: [Sample((_spd(3, 3), _normal(3, 2))), Sample((_spd(3, 3), _normal(3))),
                                Sample((_spd(2, 3, 3), _normal(3, 4))), Sample((_spd(3, 3), _normal(2, 3, 1))),
                                Sample((_spd(2, 3, 3), _normal(3)))])


def solve(x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """The solution X of x @ X = y (y: [..., n, k] or a vector [n]); batch dims broadcast."""
    return _SOLVE(as_tensor(x, "x", "solve"), as_tensor(y, "y", "solve"))


def _cholesky_meta(x: TensorSpec, *, upper: bool) -> TensorSpec:
    _require_square("cholesky", x)
    return x


def _cholesky_kernel(xp, x, *, upper):
    low = xp.linalg.cholesky((x + xp.swapaxes(x, -1, -2)) * 0.5)  # reads x as the symmetric matrix it is
    return xp.ascontiguousarray(xp.swapaxes(low, -1, -2)) if upper else low


def _g_cholesky(ctx, g):
    """gA = sym(L^-T Phi(L^T gL) L^-1), Phi = lower triangle with the diagonal halved."""
    low = ctx.outputs[0]
    if ctx.attrs["upper"]:
        low, g = _mT(low), _mT(g)
    n = low.shape[-1]
    p = matmul(low, g, transpose_x=True)
    phi = subtract(tril(p), multiply(multiply(p, eye(n, dtype=p.dtype)), 0.5))
    low_inv = inverse(low)
    s = matmul(matmul(low_inv, phi, transpose_x=True), low_inv)
    return (multiply(add(s, _mT(s)), 0.5),)


_CHOLESKY = defop("cholesky", kernel=_cholesky_kernel, meta=_cholesky_meta, grad=_g_cholesky, save_outputs=True,
                  attrs={"upper": False},
                  samples=lambda: [Sample((_spd(3, 3),), {"upper": False}), Sample((_spd(2, 3, 3),), {"upper": True})])


@tensor_method
def cholesky(x: Tensor, upper: bool = False, name: str | None = None) -> Tensor:
    """The Cholesky factor L (x = L L^T) of symmetric positive-definite matrices; U = L^T if upper."""
    return _CHOLESKY(as_tensor(x, "x", "cholesky"), upper=bool(upper))


def _matrix_meta(op: str, x: TensorSpec) -> tuple[int, int]:
    mu.require_float(op, x)
    if len(x.shape) < 2:
        raise ValueError(f"{op}: argument 'x' must be a (batch of) matrices [..., m, n], got shape "
                         f"{mu.shape_str(x.shape)}")
    return x.shape[-2], x.shape[-1]


def _qr_meta(x: TensorSpec, *, mode: str):
    m, n = _matrix_meta("qr", x)
    batch = tuple(x.shape[:-2])
    k = min(m, n)
    if mode == "r":
        return TensorSpec(batch + (k, n), x.dtype)
    if mode == "complete":
        return (TensorSpec(batch + (m, m), x.dtype), TensorSpec(batch + (m, n), x.dtype))
    return (TensorSpec(batch + (m, k), x.dtype), TensorSpec(batch + (k, n), x.dtype))


_QR = defop("qr", kernel=lambda xp, x, *, mode: xp.linalg.qr(x, mode=mode) if mode == "r"
            else tuple(xp.linalg.qr(x, mode=mode)), meta=_qr_meta, attrs={"mode": "reduced"},
            samples=lambda: [Sample((_normal(4, 3),), {"mode": "reduced"}), Sample((_normal(2, 3, 4),), {"mode": "complete"}),
                             Sample((_normal(3, 3),), {"mode": "r"})])


def qr(x: Tensor, mode: str = "reduced", name: str | None = None):
    """QR decomposition: (Q, R), or R alone for mode='r' (no gradient)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: argument 'mode' must be 'reduced', 'complete' or 'r', got {mode!r}")
    return _QR(as_tensor(x, "x", "qr"), mode=mode)


def _svd_meta(x: TensorSpec, *, full_matrices: bool):
    m, n = _matrix_meta("svd", x)
    batch = tuple(x.shape[:-2])
    k = min(m, n)
    u, vh = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return (TensorSpec(batch + u, x.dtype), TensorSpec(batch + (k,), x.dtype), TensorSpec(batch + vh, x.dtype))


_SVD = defop("svd", kernel=lambda xp, x, *, full_matrices: tuple(xp.linalg.svd(x, full_matrices=full_matrices)),
             meta=_svd_meta, attrs={"full_matrices": False},
             samples=lambda: [Sample((_normal(4, 3),), {"full_matrices": False}),
                              Sample((_normal(2, 3, 4),), {"full_matrices": True})])


def svd(x: Tensor, full_matrices: bool = False, name: str | None = None):
    """Singular value decomposition (U, S, VH) with x = U diag(S) VH (no gradient)."""
    return _SVD(as_tensor(x, "x", "svd"), full_matrices=bool(full_matrices))


def matrix_power(x: Tensor, n: int, name: str | None = None) -> Tensor:
    """x multiplied by itself n times (n < 0: of its inverse; n = 0: the identity)."""
    x = as_tensor(x, "x", "matrix_power")
    _require_square("matrix_power", TensorSpec(tuple(x.shape), x._data.dtype))
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: argument 'n' must be an int, got {type(n).__name__}")
    if n == 0:  # the identity where x lives, whatever the default device
        identity = create_on(x, "eye", num_rows=x.shape[-1], num_columns=x.shape[-1])
        return expand(identity, x.shape)
    base = inverse(x) if n < 0 else x
    result = None
    n = abs(int(n))
    while n:  # square-and-multiply: O(log n) matmuls
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(x: Sequence[Tensor], name: str | None = None) -> Tensor:
    """The product of a chain of matrices (the first/last may be vectors)."""
    if not isinstance(x, (list, tuple)) or len(x) < 2:
        raise ValueError("multi_dot: argument 'x' must be a list of at least two tensors")
    tensors = [as_tensor(a, f"x[{i}]", "multi_dot") for i, a in enumerate(x)]
    for i, a in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if a.ndim not in allowed:
            raise ValueError(f"multi_dot: x[{i}] must be {'1-D or ' if len(allowed) == 2 else ''}2-D, "
                             f"got shape {a.shape}")
    out = tensors[0]
    for a in tensors[1:]:
        out = matmul(out, a)
    return out
