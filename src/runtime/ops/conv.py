"""Convolutions: conv1d/2d/3d and their transposes, as im2col + matmul (no loops over pixels).

Three ops form one linear family over any spatial rank (1, 2 or 3, read from the attributes):
`conv` (one strided view of the padded input, one copy into columns, one matmul that also
adds the bias), `conv_transpose` (the input gradient of `conv`: one matmul, then a col2im
that adds back each of the few kernel taps; with unit strides often a `conv` of the flipped
kernel instead) and `conv_grad_filter` (the weight gradient: one matmul). Each copy and
matmul runs a block of images at a time, so that the columns stay in cache between the two.
The gradient of each is written with the other two, so double backward comes for free.
Channel-last layouts move the channel axis inside the kernels (views, no extra copies).
The argument parsing, window geometry and strided-window helpers are shared with pooling.
"""
from __future__ import annotations

import functools
import math as _pymath
from typing import Any, Iterator

import numpy as np

from ..tensor import Tensor, as_tensor
from . import meta_utils as mu
from .reduction import sum as _sum
from .registry import Sample, TensorSpec, defop, uniform_sampler
from .scratch import scratch

__all__ = ["conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose", "conv3d_transpose"]

_rng = np.random.default_rng(21)
_f64 = uniform_sampler(_rng)
FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


# ---------------------------------------------------------------- argument parsing (shared with pool)
def channel_last(api: str, data_format: Any, nd: int) -> bool:
    """True for the channel-last layout of rank `nd`; ValueError for an unknown layout."""
    first, last = FORMATS[nd]
    if data_format == first:
        return False
    if data_format == last:
        return True
    raise ValueError(f"{api}: argument 'data_format' must be '{first}' or '{last}', got {data_format!r}")


def _int(api: str, arg: str, v: Any) -> int:
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{api}: argument '{arg}' must hold ints, got {v!r}")
    return int(v)


def ntuple(api: str, arg: str, value: Any, nd: int, minimum: int = 1) -> tuple[int, ...]:
    """An int or a list/tuple of `nd` ints (each >= minimum) as a tuple of `nd` ints."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if len(value) != nd:
            raise ValueError(f"{api}: argument '{arg}' must be an int or a list of {nd} ints, got {list(value)}")
        out = tuple(_int(api, arg, v) for v in value)
    else:
        out = (_int(api, arg, value),) * nd
    if any(v < minimum for v in out):
        raise ValueError(f"{api}: argument '{arg}' must hold ints >= {minimum}, got {list(out)}")
    return out


def parse_padding(api: str, padding: Any, nd: int, is_channel_last: bool) -> str | tuple[int, ...]:
    """Paddle's padding forms -> 'SAME' or the flat (before, after) pairs of the spatial dims.

    Accepted: 'SAME' / 'VALID' (any case), an int, `nd` ints (symmetric), `2*nd` ints
    (before/after per dim), or `nd + 2` pairs including zero pairs for batch and channel.
    """
    if isinstance(padding, str):
        upper = padding.upper()
        if upper == "SAME":
            return "SAME"
        if upper == "VALID":
            return (0,) * (2 * nd)
        raise ValueError(f"{api}: argument 'padding' must be 'SAME', 'VALID', an int or a list of ints, "
                         f"got {padding!r}")
    if isinstance(padding, Tensor):
        padding = padding.tolist()
    if isinstance(padding, (list, tuple)):
        if len(padding) == nd + 2 and all(isinstance(p, (list, tuple)) for p in padding):
            if any(len(p) != 2 for p in padding):
                raise ValueError(f"{api}: argument 'padding' pairs must have 2 ints each, got {list(padding)}")
            batch_channel = (padding[0], padding[-1]) if is_channel_last else (padding[0], padding[1])
            if any(_int(api, "padding", v) != 0 for p in batch_channel for v in p):
                raise ValueError(f"{api}: argument 'padding' {list(padding)} pads the batch or channel "
                                 "dimension; only spatial dimensions may be padded")
            spatial = padding[1:-1] if is_channel_last else padding[2:]
            flat = [v for p in spatial for v in p]
        elif len(padding) == 2 * nd:
            flat = list(padding)
        elif len(padding) == nd:
            flat = [v for v in padding for _ in (0, 1)]
        else:
            raise ValueError(f"{api}: argument 'padding' must be an int, {nd} or {2 * nd} ints, or {nd + 2} "
                             f"[before, after] pairs, got {list(padding)}")
    else:
        flat = [padding] * (2 * nd)
    out = tuple(_int(api, "padding", v) for v in flat)
    if any(v < 0 for v in out):
        raise ValueError(f"{api}: argument 'padding' must hold non-negative ints, got {list(out)}")
    return out


def groups_arg(api: str, groups: Any) -> int:
    g = _int(api, "groups", groups)
    if g < 1:
        raise ValueError(f"{api}: argument 'groups' must be a positive int, got {g}")
    return g


# ---------------------------------------------------------------- window geometry (shared with pool)
@functools.lru_cache(maxsize=4096)
def _geometry(size: tuple, kernel: tuple, stride: tuple, padding: Any, dilation: tuple, ceil_mode: bool):
    nd = len(size)
    if padding == "SAME":
        pads = []
        for s, k, st in zip(size, kernel, stride):
            total = max((-(-s // st) - 1) * st + k - s, 0) if s >= 0 else 0
            pads += [total // 2, total - total // 2]
        padding, dilation = tuple(pads), (1,) * nd
    out = []
    for i, (s, k, st, d) in enumerate(zip(size, kernel, stride, dilation)):
        if s < 0:
            out.append(-1)
            continue
        pb, pa = padding[2 * i], padding[2 * i + 1]
        span = s + pb + pa - (d * (k - 1) + 1)
        if span < 0:
            return padding, dilation, None, (i, s, pb, pa, k, d)
        out.append((span + (st - 1 if ceil_mode else 0)) // st + 1)
    return padding, dilation, tuple(out), None


def out_geometry(api: str, size: tuple, kernel: tuple, stride: tuple, padding: Any, dilation: tuple,
                 ceil_mode: bool = False) -> tuple[tuple, tuple, tuple]:
    """Resolved (flat pads, dilation, output sizes) of windows sliding over spatial `size`.

    'SAME' pads so that out = ceil(size / stride) and, as in Paddle, uses dilation 1.
    Unknown (-1) sizes give unknown outputs; a window larger than the padded input raises.
    """
    pads, dil, out, bad = _geometry(tuple(size), tuple(kernel), stride, padding, dilation, ceil_mode)
    if bad is not None:
        i, s, pb, pa, k, d = bad
        raise ValueError(f"{api}: the window (kernel {k}, dilation {d}) does not fit spatial dimension {i} "
                         f"of size {s} padded by ({pb}, {pa}); the output size would be non-positive")
    return pads, dil, out


def spatial(shape, is_channel_last: bool) -> tuple:
    """The spatial sizes of an (N, C, *S) or (N, *S, C) shape."""
    return tuple(shape[1:-1]) if is_channel_last else tuple(shape[2:])


def channels(shape, is_channel_last: bool) -> int:
    return shape[-1] if is_channel_last else shape[1]


def layout(n: int, c: int, sizes: tuple, is_channel_last: bool) -> tuple:
    """The (N, C, *S) or (N, *S, C) shape."""
    return (n, *sizes, c) if is_channel_last else (n, c, *sizes)


def to_channel_first(xp, a, is_channel_last: bool):
    return xp.moveaxis(a, -1, 1) if is_channel_last else a


def from_channel_first(xp, a, is_channel_last: bool):
    return xp.moveaxis(a, 1, -1) if is_channel_last else a


def _pad(xp, x, widths: list, fill: float, work: bool):
    """x padded by `widths` with `fill`: a fresh array, or with `work` this thread's "pad" work array
    (only the border is filled, then x copied in: no second pass over the whole)."""
    if not work or xp is not np:
        return xp.pad(x, widths, constant_values=fill)
    shape = tuple(s + a + b for s, (a, b) in zip(x.shape, widths))
    buf = scratch(xp, shape, x.dtype, slot="pad")
    for axis, (before, after) in enumerate(widths):
        lead = (slice(None),) * axis
        if before:
            buf[lead + (slice(0, before),)] = fill
        if after:
            buf[lead + (slice(shape[axis] - after, None),)] = fill
    buf[tuple(slice(a, a + s) for s, (a, _) in zip(x.shape, widths))] = x
    return buf


def windows(xp, x, kernel: tuple, stride: tuple, dilation: tuple, pads: tuple, out: tuple, fill: float = 0,
            work: bool = False):
    """(N, C, *kernel, *out) strided view of x (N, C, *S) padded with `fill` (no copy unless padded).

    Only the padding the windows reach is materialised (ceil mode may need more at the end).
    With `work`, the padded copy lives in this thread's "pad" work array (see `scratch`): for a
    caller that reads the view before anything else takes that slot, and returns none of it.
    """
    widths = [(0, 0), (0, 0)]
    for i, s in enumerate(x.shape[2:]):
        reach = (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
        widths.append((pads[2 * i], max(reach - s - pads[2 * i], 0)))
    if any(w != (0, 0) for w in widths):
        x = _pad(xp, x, widths, fill, work)
    st = x.strides
    view_strides = (*st[:2], *(st[2 + i] * d for i, d in enumerate(dilation)),
                    *(st[2 + i] * s for i, s in enumerate(stride)))
    return xp.lib.stride_tricks.as_strided(x, (*x.shape[:2], *kernel, *out), view_strides)


def _padded_size(size: tuple, out: tuple, kernel: tuple, stride: tuple, dilation: tuple, pads: tuple) -> list:
    """The padded input's sizes that the windows' adjoint writes (ceil-mode windows may reach past it)."""
    padded = [s + pads[2 * i] + pads[2 * i + 1] for i, s in enumerate(size)]
    return [max(p, (o - 1) * st + d * (k - 1) + 1) for p, o, st, d, k in zip(padded, out, stride, dilation, kernel)]


def _add_taps(buf, cols, kernel: tuple, stride: tuple, dilation: tuple, per_tap: bool) -> None:
    """Add the (N, C, *kernel, *out) columns onto the padded (N, C, *padded) `buf`, one strided add per
    kernel tap (a small fixed count), none per pixel. With per_tap=False, `cols` is (N, C, *out) and
    is added for every tap."""
    nd = len(kernel)
    out = cols.shape[-nd:]
    lead = (slice(None), slice(None))
    for tap in np.ndindex(*kernel):
        dst = lead + tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                           for t, d, o, s in zip(tap, dilation, out, stride))
        buf[dst] += cols[lead + tap] if per_tap else cols


def _crop(buf, size: tuple, pads: tuple):
    """The unpadded (N, C, *size) region of a padded buffer (a view)."""
    return buf[(slice(None), slice(None)) + tuple(slice(pads[2 * i], pads[2 * i] + s) for i, s in enumerate(size))]


def col2im(xp, cols, size: tuple, kernel: tuple, stride: tuple, dilation: tuple, pads: tuple,
           per_tap: bool = True):
    """Adjoint of `windows`: add the (N, C, *kernel, *out) columns back onto (N, C, *size).

    With per_tap=False, `cols` is (N, C, *out) and is added for every tap (average pooling).
    """
    out = cols.shape[-len(kernel):]
    padded = _padded_size(size, out, kernel, stride, dilation, pads)
    buf = xp.zeros((*cols.shape[:2], *padded), dtype=cols.dtype)
    _add_taps(buf, cols, kernel, stride, dilation, per_tap)
    if not any(pads) and tuple(padded) == tuple(size):
        return buf
    return _crop(buf, size, pads)


# ---------------------------------------------------------------- im2col columns, a block of images at a time
_BLOCK_BYTES = 1 << 19  # a block's columns stay in a core's L2 cache (1 MiB or more) from the copy to the matmul


def _block(xp, n: int, image_bytes: int) -> int:
    """Images per block: the most whose temporaries (`image_bytes` each) fit `_BLOCK_BYTES`, at least one.

    Copying all N images' columns and then multiplying streams them through memory twice;
    a block at a time, the matmul reads them from cache (measured 0.8x the time at W5's shapes,
    with the same matmul per image, so the same results).
    """
    if xp is not np:
        return n
    return max(1, min(n, _BLOCK_BYTES // max(image_bytes, 1)))


def im2col_blocks(xp, x, kernel: tuple, stride: tuple, dilation: tuple, pads: tuple, out: tuple, groups: int,
                  ones_row: bool = False) -> Iterator[tuple[int, int, Any]]:
    """(start, stop, columns) for consecutive blocks of images; the columns of images start:stop are
    (stop - start, groups, C / groups * prod(kernel) [+ 1], prod(out)), in a work array reused by the
    next block (consume each before asking for the next).

    With ones_row, one more row of ones per group lets a matmul add a bias. A 1x1 kernel with
    unit stride and no padding needs no copy: its columns are x itself, in one block.
    """
    n, c = x.shape[:2]
    k, length = c // groups * _pymath.prod(kernel), _pymath.prod(out)
    if not ones_row and all(v == 1 for v in kernel + stride) and not any(pads):
        yield 0, n, x.reshape(n, groups, k, length)
        return
    view = windows(xp, x, kernel, stride, dilation, pads, out, work=True)
    rows = groups * (k + ones_row)
    step = _block(xp, n, rows * length * x.dtype.itemsize)
    cols = scratch(xp, (step, groups, k + ones_row, length), x.dtype, slot="cols")
    if ones_row:
        cols[:, :, k] = 1
    for start in range(0, n, step):
        stop = min(start + step, n)
        part = cols[:stop - start]
        split = (stop - start, groups, c // groups, *kernel, *out)  # only splits axes: both reshapes are views
        part[:, :, :k].reshape(split)[...] = view[start:stop].reshape(split)
        yield start, stop, part


# ---------------------------------------------------------------- meta checks
def _api(nd: int, suffix: str = "") -> str:
    return f"conv{nd}d{suffix}"


def check_rank(api: str, spec, arg: str, nd: int, what: str) -> None:
    if len(spec.shape) != nd + 2:
        raise ValueError(f"{api}: argument '{arg}' must be a {nd + 2}-D tensor ({what}), got shape "
                         f"{mu.shape_str(spec.shape)}")


_W_CONV = "[out_channels, in_channels / groups, *kernel]"
_W_CONV_T = "[in_channels, out_channels / groups, *kernel]"


def _check_operands(api: str, x: TensorSpec, w: TensorSpec, bias: TensorSpec | None, nd: int,
                    cl: bool, w_arg: str = "weight", w_what: str = _W_CONV) -> None:
    mu.require_float(api, x)
    check_rank(api, x, "x", nd, FORMATS[nd][cl])
    check_rank(api, w, w_arg, nd, w_what)
    if w.dtype != x.dtype:
        raise TypeError(f"{api}: argument '{w_arg}' has dtype {w.dtype.name} but 'x' has {x.dtype.name}; "
                        "they must match")
    if bias is not None and bias.dtype != x.dtype:
        raise TypeError(f"{api}: argument 'bias' has dtype {bias.dtype.name} but 'x' has {x.dtype.name}; "
                        "they must match")


def _check_groups(api: str, groups: int, count: int, what: str) -> None:
    if groups < 1:
        raise ValueError(f"{api}: argument 'groups' must be a positive int, got {groups}")
    if count >= 0 and count % groups:
        raise ValueError(f"{api}: the number of {what} ({count}) must be divisible by groups ({groups})")


def _check_bias(api: str, bias: TensorSpec | None, c: int) -> None:
    if bias is not None and tuple(bias.shape) != (c,):
        raise ValueError(f"{api}: argument 'bias' must have shape [{c}] (one value per output channel), "
                         f"got {mu.shape_str(bias.shape)}")


# ---------------------------------------------------------------- conv
def _conv_meta(x: TensorSpec, weight: TensorSpec, bias: TensorSpec | None, *, stride: tuple, padding: Any,
               dilation: tuple, groups: int, channel_last: bool) -> TensorSpec:
    nd = len(stride)
    api = _api(nd)
    _check_operands(api, x, weight, bias, nd, channel_last)
    c, (o, cg) = channels(x.shape, channel_last), weight.shape[:2]
    _check_groups(api, groups, c, "input channels")
    _check_groups(api, groups, o, "output channels weight.shape[0]")
    if c >= 0 and c != cg * groups:
        raise ValueError(f"{api}: the number of input channels of 'x' ({c}, shape {mu.shape_str(x.shape)}) must "
                         f"equal weight.shape[1] * groups = {cg} * {groups} = {cg * groups} (weight shape "
                         f"{mu.shape_str(weight.shape)})")
    _check_bias(api, bias, o)
    _, _, out = out_geometry(api, spatial(x.shape, channel_last), tuple(weight.shape[2:]), stride, padding,
                             dilation)
    return TensorSpec(layout(x.shape[0], o, out, channel_last), x.dtype)


def _conv_kernel(xp, x, weight, bias, *, stride, padding, dilation, groups, channel_last):
    x = to_channel_first(xp, x, channel_last)
    n, o, cg, kernel = x.shape[0], weight.shape[0], weight.shape[1], weight.shape[2:]
    pads, dil, out = out_geometry("conv", x.shape[2:], kernel, stride, padding, dilation)
    w = weight.reshape(groups, o // groups, cg * _pymath.prod(kernel))
    if bias is not None:
        # the bias joins the matmul as one more column of weights over a row of ones (no pass over y)
        w = xp.concatenate([w, bias.reshape(groups, o // groups, 1).astype(w.dtype, copy=False)], axis=2)
    y = xp.empty((n, o, *out), dtype=xp.result_type(w, x))
    y4 = y.reshape(n, groups, o // groups, _pymath.prod(out))
    for start, stop, cols in im2col_blocks(xp, x, kernel, stride, dil, pads, out, groups, ones_row=bias is not None):
        xp.matmul(w, cols, out=y4[start:stop])
    return from_channel_first(xp, y, channel_last)


def _bias_grad(g, nd: int, cl: bool):
    return _sum(g, axis=list(range(nd + 1)) if cl else [0, *range(2, nd + 2)])


def _common(attrs: dict, pads: tuple, dil: tuple) -> dict:
    return {"stride": attrs["stride"], "padding": pads, "dilation": dil, "groups": attrs["groups"],
            "channel_last": attrs["channel_last"]}


def _g_conv(ctx, g):
    x, w, b = ctx.inputs
    a, need = ctx.attrs, ctx.needs_input_grad
    cl, kernel = a["channel_last"], tuple(w.shape[2:])
    size = spatial(x.shape, cl)
    if -1 in size:  # a static program's input of sizes known only at run time: the padding is resolved then
        common = _common(a, a["padding"], a["dilation"])
        input_grad = _CONV_T_LIKE(g, w, x, **common) if need[0] else None
    else:
        pads, dil, _ = out_geometry("conv", size, kernel, a["stride"], a["padding"], a["dilation"])
        common = _common(a, pads, dil)
        input_grad = _CONV_T(g, w, None, output_size=size, **common) if need[0] else None
    return (input_grad,
            _CONV_GRAD_FILTER(x, g, kernel_size=kernel, **common) if need[1] else None,
            _bias_grad(g, len(kernel), cl) if b is not None and need[2] else None)


def _conv_samples():
    return [
        Sample((_f64(2, 3, 5, 5), _f64(4, 3, 3, 3), _f64(4)),
               {"stride": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1, "channel_last": False}),
        Sample((_f64(2, 4, 6, 5), _f64(6, 2, 3, 2), None),
               {"stride": (2, 1), "padding": (1, 0, 0, 2), "dilation": (1, 2), "groups": 2, "channel_last": False}),
        Sample((_f64(1, 5, 5, 2), _f64(3, 2, 3, 3), _f64(3)),
               {"stride": (2, 2), "padding": "SAME", "dilation": (2, 2), "groups": 1, "channel_last": True}),
        Sample((_f64(2, 3, 7), _f64(4, 3, 3), _f64(4)),
               {"stride": (2,), "padding": (1, 1), "dilation": (2,), "groups": 1, "channel_last": False}),
        Sample((_f64(1, 2, 3, 4, 4), _f64(2, 2, 2, 2, 2), None),
               {"stride": (1, 1, 1), "padding": (0, 1, 1, 0, 0, 0), "dilation": (1, 1, 1), "groups": 1,
                "channel_last": False}),
    ]


_CONV_ATTRS = {"stride": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1, "channel_last": False}
_CONV = defop("conv", kernel=_conv_kernel, meta=_conv_meta, grad=_g_conv, attrs=_CONV_ATTRS,
              inputs=("x", "weight", "bias"), samples=_conv_samples)


# ---------------------------------------------------------------- conv_transpose (input gradient of conv)
def _conv_t_meta(x: TensorSpec, weight: TensorSpec, bias: TensorSpec | None, *, stride: tuple, padding: tuple,
                 dilation: tuple, groups: int, output_size: tuple, channel_last: bool) -> TensorSpec:
    nd = len(stride)
    api = _api(nd, "_transpose")
    _check_operands(api, x, weight, bias, nd, channel_last, w_what=_W_CONV_T)
    c, (cw, og) = channels(x.shape, channel_last), weight.shape[:2]
    if c >= 0 and c != cw:
        raise ValueError(f"{api}: the number of input channels of 'x' ({c}, shape {mu.shape_str(x.shape)}) must "
                         f"equal weight.shape[0] ({cw}, weight shape {mu.shape_str(weight.shape)})")
    _check_groups(api, groups, cw, "input channels")
    _check_bias(api, bias, og * groups)
    for i, (s, k) in enumerate(zip(spatial(x.shape, channel_last), weight.shape[2:])):
        if s < 0:
            continue
        infer = (s - 1) * stride[i] - padding[2 * i] - padding[2 * i + 1] + dilation[i] * (k - 1) + 1
        if infer <= 0:
            raise ValueError(f"{api}: the output size along spatial dimension {i} would be {infer} (input {s}, "
                             f"padding {padding[2 * i:2 * i + 2]}, kernel {k}); it must be positive")
        if not infer <= output_size[i] < infer + stride[i]:
            raise ValueError(f"{api}: output size {output_size[i]} of spatial dimension {i} is not reachable: it "
                             f"must lie in [{infer}, {infer + stride[i] - 1}] (input {s}, stride {stride[i]})")
    return TensorSpec(layout(x.shape[0], og * groups, tuple(output_size), channel_last), x.dtype)


def _as_conv_pads(cin: int, cout: int, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """The pads of the direct convolution equal to this transposed one, or None where col2im is cheaper.

    With unit strides a transposed convolution is the convolution of x, padded by
    dilation * (kernel - 1) - padding on each side, with the flipped, transposed kernel. Its
    im2col copies cin * taps rows where col2im adds cout * taps rows in three memory passes,
    so it is the cheaper route while cin <= 2 * cout (measured: equal at 2x, 0.6-0.7x the time
    at 1x and below). Padding wider than the kernel's reach would crop, so it keeps col2im.
    """
    if any(s != 1 for s in stride) or cin > 2 * cout:
        return None
    pads = tuple(dilation[i // 2] * (kernel[i // 2] - 1) - p for i, p in enumerate(padding))
    return pads if min(pads) >= 0 else None


def _conv_t_kernel(xp, x, weight, bias, *, stride, padding, dilation, groups, output_size, channel_last):
    x = to_channel_first(xp, x, channel_last)
    n, cin, size = x.shape[0], x.shape[1], x.shape[2:]
    kernel, cout = weight.shape[2:], weight.shape[1] * groups
    pads = _as_conv_pads(cin, cout, kernel, stride, padding, dilation)
    if pads is not None:
        nd = len(kernel)
        flipped = weight.reshape(groups, cin // groups, cout // groups, *kernel).swapaxes(1, 2)
        flipped = flipped[(Ellipsis, *(slice(None, None, -1),) * nd)].reshape(cout, cin // groups, *kernel)
        y = _conv_kernel(xp, x, flipped, bias, stride=stride, padding=pads, dilation=dilation, groups=groups,
                         channel_last=False)
        return from_channel_first(xp, y, channel_last)
    y = _col2im_conv_t(xp, x, weight, groups, output_size, stride, padding, dilation)
    if bias is not None:
        y += bias.reshape((cout,) + (1,) * len(size))
    return from_channel_first(xp, y, channel_last)


def _col2im_conv_t(xp, x, weight, groups: int, size: tuple, stride: tuple, pads: tuple, dilation: tuple):
    """Transposed convolution as one matmul per block of images (W^T x: the columns) and the columns'
    taps added onto a padded work array while they are in cache, then the padding cropped off
    into a fresh contiguous output."""
    n, cin, isize = x.shape[0], x.shape[1], x.shape[2:]
    kernel, cout = weight.shape[2:], weight.shape[1] * groups
    length = _pymath.prod(isize)
    w = weight.reshape(groups, cin // groups, -1).transpose(0, 2, 1)
    x4 = x.reshape(n, groups, cin // groups, length)
    dtype = xp.result_type(w, x)
    padded = _padded_size(size, isize, kernel, stride, dilation, pads)
    cropped = any(pads) or tuple(padded) != tuple(size)
    acc = scratch(xp, (n, cout, *padded), dtype, slot="pad") if cropped else xp.empty((n, cout, *size), dtype)
    acc[...] = 0
    step = _block(xp, n, w.shape[1] * groups * length * dtype.itemsize)
    cols = scratch(xp, (step, groups, w.shape[1], length), dtype, slot="cols")
    for start in range(0, n, step):
        stop = min(start + step, n)
        part = xp.matmul(w, x4[start:stop], out=cols[:stop - start])
        _add_taps(acc[start:stop], part.reshape((stop - start, cout, *kernel, *isize)), kernel, stride, dilation,
                  per_tap=True)
    return xp.array(_crop(acc, size, pads)) if cropped else acc


def _g_conv_t(ctx, g):
    x, w, b = ctx.inputs
    a, need = ctx.attrs, ctx.needs_input_grad
    kernel = tuple(w.shape[2:])
    common = _common(a, a["padding"], a["dilation"])
    return (_CONV(g, w, None, **common) if need[0] else None,
            _CONV_GRAD_FILTER(g, x, kernel_size=kernel, **common) if need[1] else None,
            _bias_grad(g, len(kernel), a["channel_last"]) if b is not None and need[2] else None)


def _conv_t_samples():
    return [
        Sample((_f64(2, 4, 3, 3), _f64(4, 3, 3, 3), _f64(3)),
               {"stride": (2, 2), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1,
                "output_size": (6, 6), "channel_last": False}),
        Sample((_f64(1, 4, 4, 3), _f64(4, 2, 2, 3), None),
               {"stride": (1, 2), "padding": (0, 1, 1, 0), "dilation": (2, 1), "groups": 2,
                "output_size": (5, 7), "channel_last": False}),
        Sample((_f64(2, 4, 3), _f64(3, 2, 3), _f64(2)),
               {"stride": (2,), "padding": (0, 0), "dilation": (1,), "groups": 1, "output_size": (9,),
                "channel_last": True}),
    ]


_CONV_T = defop("conv_transpose", kernel=_conv_t_kernel, meta=_conv_t_meta, grad=_g_conv_t,
                attrs={**_CONV_ATTRS, "output_size": (1, 1)}, inputs=("x", "weight", "bias"),
                samples=_conv_t_samples)


# conv_transpose into the sizes of `like` (the convolved input; its values are not read), with the padding
# ('SAME' included) resolved on them: the input gradient of a conv whose sizes are known only at run time
def _conv_t_like_geometry(weight, like, stride: tuple, padding: Any, dilation: tuple, channel_last: bool):
    size = spatial(like.shape, channel_last)
    pads, dil, _ = out_geometry("conv", size, tuple(weight.shape[2:]), stride, padding, dilation)
    return {"padding": pads, "dilation": dil, "output_size": size}


def _conv_t_like_meta(x: TensorSpec, weight: TensorSpec, like: TensorSpec, *, stride: tuple, padding: Any,
                      dilation: tuple, groups: int, channel_last: bool) -> TensorSpec:
    return _conv_t_meta(x, weight, None, stride=stride, groups=groups, channel_last=channel_last,
                        **_conv_t_like_geometry(weight, like, stride, padding, dilation, channel_last))


def _conv_t_like_kernel(xp, x, weight, like, *, stride, padding, dilation, groups, channel_last):
    return _conv_t_kernel(xp, x, weight, None, stride=stride, groups=groups, channel_last=channel_last,
                          **_conv_t_like_geometry(weight, like, stride, padding, dilation, channel_last))


def _g_conv_t_like(ctx, gg):
    x, w, _ = ctx.inputs
    a, need = ctx.attrs, ctx.needs_input_grad
    return (_CONV(gg, w, None, **_common(a, a["padding"], a["dilation"])) if need[0] else None,
            _CONV_GRAD_FILTER(gg, x, kernel_size=tuple(w.shape[2:]), **_common(a, a["padding"], a["dilation"]))
            if need[1] else None, None)


def _conv_t_like_samples():
    out = []
    for s in _conv_samples():
        x, w, _ = s.inputs
        attrs = dict(s.attrs)
        spec = _conv_meta(TensorSpec(x.shape, x.dtype), TensorSpec(w.shape, w.dtype), None, **attrs)
        out.append(Sample((_f64(*spec.shape), w, x), attrs, grad_inputs=(0, 1)))
    return out


_CONV_T_LIKE = defop("conv_transpose_like", kernel=_conv_t_like_kernel, meta=_conv_t_like_meta, grad=_g_conv_t_like,
                     attrs=_CONV_ATTRS, inputs=("x", "weight", "like"), samples=_conv_t_like_samples)


# ---------------------------------------------------------------- conv_grad_filter (weight gradient of conv)
def _grad_filter_meta(x: TensorSpec, grad_out: TensorSpec, *, stride: tuple, padding: Any, dilation: tuple,
                      groups: int, kernel_size: tuple, channel_last: bool) -> TensorSpec:
    nd = len(stride)
    api = _api(nd, "_grad_filter")
    _check_operands(api, x, grad_out, None, nd, channel_last, "grad_out", FORMATS[nd][channel_last])
    c, o = channels(x.shape, channel_last), channels(grad_out.shape, channel_last)
    _check_groups(api, groups, c, "input channels")
    _check_groups(api, groups, o, "output channels")
    _, _, out = out_geometry(api, spatial(x.shape, channel_last), kernel_size, stride, padding, dilation)
    got = spatial(grad_out.shape, channel_last)
    if any(a != b and a >= 0 and b >= 0 for a, b in zip(out, got)):
        raise ValueError(f"{api}: argument 'grad_out' has spatial size {list(got)} but the convolution of 'x' "
                         f"gives {list(out)}")
    return TensorSpec((o, c // groups, *kernel_size), x.dtype)


def _grad_filter_kernel(xp, x, grad_out, *, stride, padding, dilation, groups, kernel_size, channel_last):
    x = to_channel_first(xp, x, channel_last)
    grad_out = to_channel_first(xp, grad_out, channel_last)
    n, c, o = x.shape[0], x.shape[1], grad_out.shape[1]
    pads, dil, out = out_geometry("conv", x.shape[2:], kernel_size, stride, padding, dilation)
    g4 = grad_out.reshape(n, groups, o // groups, _pymath.prod(out))
    gw = xp.zeros((groups, o // groups, c // groups * _pymath.prod(kernel_size)), xp.result_type(grad_out, x))
    for start, stop, cols in im2col_blocks(xp, x, kernel_size, stride, dil, pads, out, groups):
        gw += xp.matmul(g4[start:stop], cols.transpose(0, 1, 3, 2)).sum(axis=0)
    return gw.reshape((o, c // groups, *kernel_size))


def _g_grad_filter(ctx, gg):
    x, gout = ctx.inputs
    a, need = ctx.attrs, ctx.needs_input_grad
    size = spatial(x.shape, a["channel_last"])
    pads, dil, _ = out_geometry("conv", size, a["kernel_size"], a["stride"], a["padding"], a["dilation"])
    common = _common(a, pads, dil)
    return (_CONV_T(gout, gg, None, output_size=size, **common) if need[0] else None,
            _CONV(x, gg, None, **common) if need[1] else None)


def _grad_filter_samples():
    return [
        Sample((_f64(2, 3, 5, 5), _f64(2, 4, 5, 5)),
               {"stride": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1, "kernel_size": (3, 3),
                "channel_last": False}),
        Sample((_f64(1, 4, 6, 5), _f64(1, 6, 3, 5)),
               {"stride": (2, 1), "padding": (1, 0, 0, 2), "dilation": (1, 2), "groups": 2, "kernel_size": (3, 2),
                "channel_last": False}),
        Sample((_f64(2, 5, 3), _f64(2, 3, 2)),
               {"stride": (2,), "padding": "SAME", "dilation": (1,), "groups": 1, "kernel_size": (2,),
                "channel_last": True}),
    ]


_CONV_GRAD_FILTER = defop("conv_grad_filter", kernel=_grad_filter_kernel, meta=_grad_filter_meta,
                          grad=_g_grad_filter, attrs={**_CONV_ATTRS, "kernel_size": (1, 1)},
                          inputs=("x", "grad_out"), samples=_grad_filter_samples)


# ---------------------------------------------------------------- public API
def _tensors(api: str, x: Any, weight: Any, bias: Any) -> tuple:
    return (as_tensor(x, "x", api), as_tensor(weight, "weight", api),
            None if bias is None else as_tensor(bias, "bias", api))


def _conv_api(nd: int, x: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: Any,
              data_format: str) -> Tensor:
    api = _api(nd)
    x, weight, bias = _tensors(api, x, weight, bias)
    cl = channel_last(api, data_format, nd)
    return _CONV(x, weight, bias, stride=ntuple(api, "stride", stride, nd), padding=parse_padding(api, padding, nd, cl),
                 dilation=ntuple(api, "dilation", dilation, nd), groups=groups_arg(api, groups), channel_last=cl)


def _conv_t_api(nd: int, x: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any,
                groups: Any, dilation: Any, output_size: Any, data_format: str) -> Tensor:
    api = _api(nd, "_transpose")
    x, weight, bias = _tensors(api, x, weight, bias)
    cl = channel_last(api, data_format, nd)
    stride = ntuple(api, "stride", stride, nd)
    dilation = ntuple(api, "dilation", dilation, nd)
    pads = parse_padding(api, padding, nd, cl)
    check_rank(api, x, "x", nd, FORMATS[nd][cl])
    check_rank(api, weight, "weight", nd, _W_CONV_T)
    size, kernel = spatial(x.shape, cl), tuple(weight.shape[2:])
    if pads == "SAME":  # as Paddle: the pads a forward conv would use on x's size, dilation 1
        pads, dilation, _ = out_geometry(api, size, kernel, stride, "SAME", dilation)
    infer = tuple((s - 1) * st - pads[2 * i] - pads[2 * i + 1] + d * (k - 1) + 1
                  for i, (s, st, d, k) in enumerate(zip(size, stride, dilation, kernel)))
    if output_size is not None:
        if any(ntuple(api, "output_padding", output_padding, nd, minimum=0)):
            raise ValueError(f"{api}: arguments 'output_padding' and 'output_size' are mutually exclusive")
        target = ntuple(api, "output_size", output_size, nd)
    else:
        extra = ntuple(api, "output_padding", output_padding, nd, minimum=0)
        if any(e >= st for e, st in zip(extra, stride)):
            raise ValueError(f"{api}: argument 'output_padding' {list(extra)} must be smaller than 'stride' "
                             f"{list(stride)}")
        target = tuple(i + e for i, e in zip(infer, extra))
    return _CONV_T(x, weight, bias, stride=stride, padding=pads, dilation=dilation, groups=groups_arg(api, groups),
                   output_size=target, channel_last=cl)


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, data_format: str = "NCL", name: str | None = None) -> Tensor:
    """1-D convolution; weight is [out_channels, in_channels / groups, k]."""
    return _conv_api(1, x, weight, bias, stride, padding, dilation, groups, data_format)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """2-D convolution; weight is [out_channels, in_channels / groups, kh, kw]."""
    return _conv_api(2, x, weight, bias, stride, padding, dilation, groups, data_format)


def conv3d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, data_format: str = "NCDHW", name: str | None = None) -> Tensor:
    """3-D convolution; weight is [out_channels, in_channels / groups, kd, kh, kw]."""
    return _conv_api(3, x, weight, bias, stride, padding, dilation, groups, data_format)


def conv1d_transpose(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1, output_size: Any = None,
                     data_format: str = "NCL", name: str | None = None) -> Tensor:
    """1-D transposed convolution; weight is [in_channels, out_channels / groups, k]."""
    return _conv_t_api(1, x, weight, bias, stride, padding, output_padding, groups, dilation, output_size,
                       data_format)


def conv2d_transpose(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1, output_size: Any = None,
                     data_format: str = "NCHW", name: str | None = None) -> Tensor:
    """2-D transposed convolution; weight is [in_channels, out_channels / groups, kh, kw]."""
    return _conv_t_api(2, x, weight, bias, stride, padding, output_padding, groups, dilation, output_size,
                       data_format)


def conv3d_transpose(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1, output_size: Any = None,
                     data_format: str = "NCDHW", name: str | None = None) -> Tensor:
    """3-D transposed convolution; weight is [in_channels, out_channels / groups, kd, kh, kw]."""
    return _conv_t_api(3, x, weight, bias, stride, padding, output_padding, groups, dilation, output_size,
                       data_format)
