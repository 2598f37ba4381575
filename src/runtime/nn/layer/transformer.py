"""Attention and Transformer layers: MultiHeadAttention, TransformerEncoder(Layer),
TransformerDecoder(Layer), Transformer.

Inputs are batch-first [batch, seq_len, embed_dim]. An attention mask broadcasts to
[batch, num_heads, len_q, len_k]: a bool (or int) mask keeps True positions and masks False
ones, a float mask is added to the attention scores, as in Paddle.
"""
from __future__ import annotations

import collections
import copy
from typing import Any

from ... import dtypes as _dt
from ...ops import creation as _creation
from ...ops import linalg as _linalg
from ...ops import math as _math
from ...ops import shape as _shape
from ...tensor import Tensor
from .. import functional as F
from ..param_attr import ParamAttr
from ._validation import positive_int
from .common import Dropout, Linear
from .container import LayerList
from .layers import Layer
from .norm import LayerNorm

__all__ = ["MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]


def _convert_attention_mask(attn_mask: Tensor | None, dtype: Any) -> Tensor | None:
    """A bool/int mask (True = keep) becomes additive 0 / -1e9; a float mask is cast to `dtype`."""
    if attn_mask is None or attn_mask.dtype == dtype:
        return attn_mask
    if not _dt.is_floating_point(attn_mask):
        return (_math.cast(attn_mask, dtype) - 1.0) * 1e9
    return _math.cast(attn_mask, dtype)


def _convert_param_attr_to_list(param_attr: Any, n: int) -> list:
    """One attr per sublayer: a list is taken as is, a single attr is copied (named attrs get _i suffixes)."""
    if isinstance(param_attr, (list, tuple)):
        if len(param_attr) != n:
            raise ValueError(f"length of param_attr should be {n} when it is a list/tuple, got {len(param_attr)}")
        return [False if a is False else ParamAttr._to_attr(None if a is True else a) for a in param_attr]
    if isinstance(param_attr, bool):
        return [ParamAttr._to_attr(None) if param_attr else False for _ in range(n)]
    attr = ParamAttr._to_attr(param_attr)
    attrs = []
    for i in range(n):
        attr_i = copy.deepcopy(attr)
        if attr.name:
            attr_i.name = f"{attr.name}_{i}"
        attrs.append(attr_i)
    return attrs


def _check_sizes(layer: str, **sizes: Any) -> None:
    for arg, v in sizes.items():
        positive_int(layer, arg, v)


def _stack(layer: Layer, num_layers: int, owner: str) -> LayerList:
    """`layer` then num_layers-1 fresh layers built from its configuration (own parameters and names)."""
    _check_sizes(owner, num_layers=num_layers)
    return LayerList([layer if i == 0 else type(layer)(**layer._config) for i in range(num_layers)])


class MultiHeadAttention(Layer):
    """Scaled dot-product attention over `num_heads` heads with q/k/v/out projections."""

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, kdim: int | None = None,
                 vdim: int | None = None, need_weights: bool = False, weight_attr: Any = None,
                 bias_attr: Any = None):
        super().__init__()
        _check_sizes("MultiHeadAttention", embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.num_heads = num_heads
        self.dropout = dropout
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _split_heads(self, x: Tensor) -> Tensor:
        """[B, L, E] -> [B, H, L, D]."""
        return _shape.transpose(_shape.reshape(x, [0, 0, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def compute_kv(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Projected keys and values, split into heads."""
        return self._split_heads(self.k_proj(key)), self._split_heads(self.v_proj(value))

    def gen_cache(self, key: Tensor, value: Tensor | None = None, type: Any = Cache) -> Any:  # noqa: A002
        """A StaticCache of projected key/value, or an (empty or given) incremental Cache."""
        if type == MultiHeadAttention.StaticCache:
            return self.StaticCache(*self.compute_kv(key, value))
        if value is None:
            shape = [key.shape[0], self.num_heads, 0, self.head_dim]
            return self.Cache(_creation.full(shape, 0, dtype=key.dtype), _creation.full(shape, 0, dtype=key.dtype))
        return self.Cache(key, value)

    def _prepare_qkv(self, query: Tensor, key: Tensor, value: Tensor, cache: Any) -> tuple:
        q = self._split_heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k = _shape.concat([cache.k, k], axis=2)
            v = _shape.concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        return q, k, v, cache

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                attn_mask: Tensor | None = None, cache: Any = None) -> Any:
        key = query if key is None else key
        value = query if value is None else value
        q, k, v, cache = self._prepare_qkv(query, key, value, cache)
        product = _linalg.matmul(q * (self.head_dim ** -0.5), k, transpose_y=True)
        if attn_mask is not None:
            product = product + _convert_attention_mask(attn_mask, product.dtype)
        weights = F.softmax(product)
        if self.dropout:
            weights = F.dropout(weights, self.dropout, training=self.training, mode="upscale_in_train")
        out = _shape.transpose(_linalg.matmul(weights, v), [0, 2, 1, 3])
        out = self.out_proj(_shape.reshape(out, [0, 0, self.embed_dim]))
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(cache)
        return out if len(outs) == 1 else tuple(outs)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


class _TransformerLayerBase(Layer):
    """The encoder and decoder layers' common part: the attentions named in `_ATTENTIONS`, then a
    feed-forward block, each in a residual block i (1-based) with dropout{i} and LayerNorm norm{i}."""

    _ATTENTIONS: tuple[str, ...] = ()

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: float | None = None, act_dropout: float | None = None,
                 normalize_before: bool = False, weight_attr: Any = None, bias_attr: Any = None,
                 layer_norm_eps: float = 1e-05):
        self._config = {"d_model": d_model, "nhead": nhead, "dim_feedforward": dim_feedforward,
                        "dropout": dropout, "activation": activation, "attn_dropout": attn_dropout,
                        "act_dropout": act_dropout, "normalize_before": normalize_before,
                        "weight_attr": weight_attr, "bias_attr": bias_attr, "layer_norm_eps": layer_norm_eps}
        super().__init__()
        _check_sizes(type(self).__name__, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        if not hasattr(F, activation):
            raise ValueError(f"{type(self).__name__}: unknown activation {activation!r}")
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        blocks = len(self._ATTENTIONS) + 1
        weight_attrs = _convert_param_attr_to_list(weight_attr, blocks)
        bias_attrs = _convert_param_attr_to_list(bias_attr, blocks)
        for i, name in enumerate(self._ATTENTIONS):
            setattr(self, name, MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=weight_attrs[i],
                                                   bias_attr=bias_attrs[i]))
        self.linear1 = Linear(d_model, dim_feedforward, weight_attrs[-1], bias_attr=bias_attrs[-1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weight_attrs[-1], bias_attr=bias_attrs[-1])
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, epsilon=layer_norm_eps))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
        self.activation = getattr(F, activation)

    def _norm_before(self, i: int, x: Tensor) -> Tensor:
        """The input of residual block i's sublayer: norm{i}(x) when normalize_before, else x."""
        return getattr(self, f"norm{i}")(x) if self.normalize_before else x

    def _add_norm(self, i: int, residual: Tensor, out: Tensor) -> Tensor:
        """residual + dropout{i}(out), then norm{i} unless normalize_before."""
        x = residual + getattr(self, f"dropout{i}")(out)
        return x if self.normalize_before else getattr(self, f"norm{i}")(x)

    def _attention_block(self, i: int, attn: MultiHeadAttention, x: Tensor, memory: Tensor | None,
                         mask: Tensor | None, cache: Any, cached: bool) -> tuple[Tensor, Any]:
        """Residual block i around attention from x to itself (memory None) or to memory; with `cached`,
        attention runs on `cache` and its new cache comes back second (else None)."""
        q = self._norm_before(i, x)
        kv = q if memory is None else memory
        new_cache = None
        if cached:
            out, new_cache = attn(q, kv, kv, mask, cache)
        else:
            out = attn(q, kv, kv, mask, None)
        return self._add_norm(i, x, out), new_cache

    def _feed_forward(self, x: Tensor) -> Tensor:
        """The last residual block: linear1, activation, dropout, linear2."""
        i = len(self._ATTENTIONS) + 1
        out = self.linear2(self.dropout(self.activation(self.linear1(self._norm_before(i, x)))))
        return self._add_norm(i, x, out)


class TransformerEncoderLayer(_TransformerLayerBase):
    """Self-attention then a feed-forward block, each with residual, dropout and LayerNorm (pre or post)."""

    _ATTENTIONS = ("self_attn",)

    def forward(self, src: Tensor, src_mask: Tensor | None = None, cache: Any = None) -> Any:
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        src, incremental_cache = self._attention_block(1, self.self_attn, src, None, src_mask, cache,
                                                       cache is not None)
        src = self._feed_forward(src)
        return src if cache is None else (src, incremental_cache)

    def gen_cache(self, src: Tensor) -> Any:
        """An empty incremental cache for this layer's self-attention."""
        return self.self_attn.gen_cache(src, type=self.self_attn.Cache)


class TransformerEncoder(Layer):
    """`num_layers` encoder layers: the given one first, then fresh ones built from its configuration
    (so each layer has its own parameters and names), and an optional final norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Layer | None = None):
        super().__init__()
        self.layers = _stack(encoder_layer, num_layers, "TransformerEncoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, src_mask: Tensor | None = None, cache: list | None = None) -> Any:
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        output = src
        new_caches = []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, src_mask=src_mask)
            else:
                output, new_cache = layer(output, src_mask=src_mask, cache=cache[i])
                new_caches.append(new_cache)
        if self.norm is not None:
            output = self.norm(output)
        return output if cache is None else (output, new_caches)

    def gen_cache(self, src: Tensor) -> list:
        """One incremental cache per layer."""
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(_TransformerLayerBase):
    """Self-attention, cross-attention over `memory`, then a feed-forward block, each with residual,
    dropout and LayerNorm (pre or post)."""

    _ATTENTIONS = ("self_attn", "cross_attn")

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, cache: Any = None) -> Any:
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        cached = cache is not None
        tgt, incremental_cache = self._attention_block(1, self.self_attn, tgt, None, tgt_mask,
                                                       cache[0] if cached else None, cached)
        tgt, static_cache = self._attention_block(2, self.cross_attn, tgt, memory, memory_mask,
                                                  cache[1] if cached else None, cached)
        tgt = self._feed_forward(tgt)
        return tgt if cache is None else (tgt, (incremental_cache, static_cache))

    def gen_cache(self, memory: Tensor) -> tuple:
        """(empty incremental self-attention cache, static cross-attention cache of `memory`)."""
        incremental = self.self_attn.gen_cache(memory, type=self.self_attn.Cache)
        static = self.cross_attn.gen_cache(memory, memory, type=self.cross_attn.StaticCache)
        return incremental, static


class TransformerDecoder(Layer):
    """`num_layers` decoder layers (the given one, then fresh ones from its configuration) and an
    optional final norm."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Layer | None = None):
        super().__init__()
        self.layers = _stack(decoder_layer, num_layers, "TransformerDecoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, cache: list | None = None) -> Any:
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        output = tgt
        new_caches = []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=None)
            else:
                output, new_cache = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                                          cache=cache[i])
                new_caches.append(new_cache)
        if self.norm is not None:
            output = self.norm(output)
        return output if cache is None else (output, new_caches)

    def gen_cache(self, memory: Tensor, do_zip: bool = False) -> list:
        """One (incremental, static) cache pair per layer (zipped into two lists when do_zip)."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*cache)) if do_zip else cache


def _split_attr(attr: Any, api: str) -> tuple[Any, Any]:
    """Transformer's weight_attr / bias_attr: one value for all, or 1-3 entries (encoder gets 2, decoder 3)."""
    if not isinstance(attr, (list, tuple)):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]] * 2, [attr[0]] * 3
    if len(attr) == 2:
        return list(attr), [attr[0], attr[0], attr[-1]]
    if len(attr) == 3:
        return [attr[0], attr[-1]], list(attr)
    raise ValueError(f"Transformer: length of {api} should be 1, 2 or 3 when it is a list/tuple, got {len(attr)}")


class Transformer(Layer):
    """An encoder-decoder Transformer (each stack with a final LayerNorm), or custom encoder/decoder."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = "relu",
                 attn_dropout: float | None = None, act_dropout: float | None = None, normalize_before: bool = False,
                 weight_attr: Any = None, bias_attr: Any = None, custom_encoder: Layer | None = None,
                 custom_decoder: Layer | None = None):
        super().__init__()
        enc_weight, dec_weight = _split_attr(weight_attr, "weight_attr")
        enc_bias, dec_bias = _split_attr(bias_attr, "bias_attr")
        settings = (d_model, nhead, dim_feedforward, dropout, activation, attn_dropout, act_dropout, normalize_before)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        elif num_encoder_layers > 0:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*settings, enc_weight, enc_bias),
                                              num_encoder_layers, LayerNorm(d_model))
        else:
            self.encoder = None
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*settings, dec_weight, dec_bias),
                                              num_decoder_layers, LayerNorm(d_model))
        self.d_model = d_model
        self.nhead = nhead

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None) -> Tensor:
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        memory = src if self.encoder is None else self.encoder(src, src_mask=src_mask)
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, memory.dtype)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def generate_square_subsequent_mask(self, length: int) -> Tensor:
        """[length, length] additive causal mask: 0 on and below the diagonal, -inf above."""
        return _creation.triu(_creation.full([length, length], -float("inf"), dtype=_dt.get_default_dtype()), 1)
