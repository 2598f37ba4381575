"""`scaled_dot_product_attention` in Paddle's layout [batch, seq_len, num_heads, head_dim].

Composed of existing differentiable ops (transpose, matmul, softmax, dropout, where) in the order
of Paddle's CPU ("math") path, so autograd, static programs and the JIT need nothing of their own
and the numbers follow Paddle's: the causal mask adds -1e4 above the diagonal (not -inf), a bool
mask keeps True positions (a row masked entirely gives NaN, as in Paddle), a float mask is added.
"""
from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...ops import activation as _act
from ...ops import common as _common
from ...ops import creation as _creation
from ...ops import gather as _gather
from ...ops import linalg as _linalg
from ...ops import math as _math
from ...ops import meta_utils as _mu
from ...ops import shape as _shape
from ...tensor import Tensor, as_tensor

__all__ = ["scaled_dot_product_attention"]

_API = "scaled_dot_product_attention"
_CAUSAL_FILL = -1e4  # Paddle's upper-triangle mask value on CPU


def _check_shapes(q: list, k: list, v: list, enable_gqa: bool) -> None:
    """Paddle's rules: 4-D (3-D unbatched) q/k/v, kv heads divide q heads (equal without GQA),
    k and v agree in length and heads, q and k in head_dim."""
    for arg, s in (("query", q), ("key", k), ("value", v)):
        if len(s) != 4:
            raise ValueError(f"{_API}: '{arg}' must be 4-D [batch, seq_len, num_heads, head_dim] (or 3-D "
                             f"unbatched, as 'query'), got shape {s}")
    if k[2] != v[2] or k[1] != v[1] or k[0] != v[0]:
        raise ValueError(f"{_API}: 'key' {k} and 'value' {v} must have the same batch, seq_len and num_heads")
    if q[3] != k[3] or q[0] != k[0]:
        raise ValueError(f"{_API}: 'query' {q} and 'key' {k} must have the same batch size and head_dim")
    if enable_gqa and k[2] and q[2] % k[2]:
        raise ValueError(f"{_API}: the number of heads of 'query' ({q[2]}) must be divisible by that of "
                         f"'key' ({k[2]}) with enable_gqa=True")
    if not enable_gqa and q[2] != k[2]:
        raise ValueError(f"{_API}: 'query' ({q[2]}) and 'key' ({k[2]}) must have the same number of heads "
                         "with enable_gqa=False")


def _additive_mask(attn_mask: Any, dtype: Any) -> Tensor:
    """A bool mask becomes 0 where True and -inf where False; a float mask is used as is."""
    mask = as_tensor(attn_mask, "attn_mask", _API)
    if mask.dtype == _dt.bool:  # the two values live where the mask does
        zero = _creation.create_on(mask, "full", dtype, shape=(), fill_value=0.0)
        return _math.where(mask, zero, _creation.create_on(mask, "full", dtype, shape=(), fill_value=float("-inf")))
    if not _dt.is_floating_point(mask):
        raise TypeError(f"{_API}: 'attn_mask' must be a bool or floating tensor, got {mask.dtype}")
    return mask if mask.dtype == dtype else _math.cast(mask, dtype)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, training: bool = True,
                                 backend: str | None = None, scale: float | None = None,
                                 enable_gqa: bool = True, name: str | None = None) -> Tensor:
    """softmax(Q K^T * scale + mask) V per head; scale defaults to 1/sqrt(head_dim).

    `is_causal` ignores `attn_mask` (as Paddle); with fewer key/value heads than query heads each
    key/value head serves consecutive query heads (grouped-query attention). `backend` only
    selects Paddle's distributed ring attention, so it is accepted and ignored here.
    """
    q, k, v = (as_tensor(t, arg, _API) for t, arg in ((query, "query"), (key, "key"), (value, "value")))
    p = _mu.number_arg(_API, "dropout_p", dropout_p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{_API}: 'dropout_p' must be in [0, 1], got {dropout_p}")
    batched = len(q.shape) == 4
    if not batched:
        q, k, v = (_shape.unsqueeze(t, 0) for t in (q, k, v))
    _check_shapes(list(q.shape), list(k.shape), list(v.shape), bool(enable_gqa))
    repeats = q.shape[2] // k.shape[2] if k.shape[2] else 1
    if repeats != 1:
        k, v = _gather.repeat_interleave(k, repeats, axis=2), _gather.repeat_interleave(v, repeats, axis=2)
    head_dim = q.shape[-1]
    if not scale:  # Paddle's `scale or ...`: 0 means the default too
        scale = head_dim ** -0.5 if head_dim else 1.0
    q, k, v = (_shape.transpose(t, [0, 2, 1, 3]) for t in (q, k, v))
    product = _linalg.matmul(_math.scale(q, _mu.number_arg(_API, "scale", scale)), k, transpose_y=True)
    if is_causal:
        product = product + _creation.triu(_creation.full_like(product, _CAUSAL_FILL), diagonal=1)
    elif attn_mask is not None:
        product = product + _additive_mask(attn_mask, product.dtype)
    weights = _act.softmax(product)
    if p > 0.0:
        weights = _common.dropout(weights, p, training=bool(training), mode="upscale_in_train")
    out = _shape.transpose(_linalg.matmul(weights, v), [0, 2, 1, 3])
    return out if batched else _shape.squeeze(out, 0)
