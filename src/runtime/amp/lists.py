"""The default op lists of auto_cast, by amp dtype and level, as Paddle 3.3.1 ships them.

Paddle names its ops by kernel (`matmul_v2`, `reduce_mean`); the lists are the public answer of
`paddle.amp.white_list()` / `black_list()` and what custom lists are merged into. runtime casts no op
(see docs/runtime.md, "Mixed precision"), so they are data for scripts that read or extend them.
"""
from __future__ import annotations

__all__ = ["white_list", "black_list"]

# ops run in the amp dtype (float16 adds the fake-quantize and fused attention kernels bfloat16 lacks)
_WHITE_FLOAT16 = frozenset({
    'conv2d', 'einsum', 'fake_quantize_dequantize_abs_max', 'fake_quantize_dequantize_moving_average_abs_max',
    'flash_attn', 'fused_attention', 'fused_feedforward', 'fused_gemm_epilogue',
    'fused_rotary_position_embedding', 'linear_v2', 'matmul', 'matmul_v2', 'max_pool2d_with_index', 'mul',
})

_WHITE_BFLOAT16 = frozenset({
    'conv2d', 'einsum', 'flash_attn', 'fused_gemm_epilogue', 'fused_rotary_position_embedding', 'linear_v2',
    'matmul', 'matmul_v2', 'max_pool2d_with_index', 'mul',
})

# ops kept in float32 at level O1; level O2 keeps only the lookups and interpolations; OD keeps none
_BLACK_O1 = frozenset({
    'acos', 'asin', 'atanh', 'bicubic_interp_v2', 'bilinear_interp_v2', 'c_softmax_with_cross_entropy',
    'c_softmax_with_multi_label_cross_entropy', 'cosh', 'cross_entropy', 'cross_entropy2', 'cumprod', 'cumsum',
    'dist', 'erfinv', 'exp', 'expm1', 'frobenius_norm', 'group_norm', 'hsigmoid_loss', 'huber_loss',
    'layer_norm', 'linear_interp_v2', 'log', 'log10', 'log2', 'log_loss', 'log_softmax', 'lookup_table',
    'lookup_table_v2', 'margin_cross_entropy', 'mean', 'nearest_interp_v2', 'nll_loss', 'pnorm', 'pow',
    'reciprocal', 'reduce_mean', 'reduce_prod', 'reduce_sum', 'renorm', 'rsqrt', 'scatter',
    'sigmoid_cross_entropy_with_logits', 'sinh', 'softmax', 'softmax_with_cross_entropy', 'softmin',
    'softplus', 'square', 'tan', 'tanh_shrink', 'trilinear_interp_v2', 'triplet_margin_loss',
})

_BLACK_O2 = frozenset({
    'bicubic_interp_v2', 'bilinear_interp_v2', 'linear_interp_v2', 'lookup_table', 'lookup_table_v2',
    'nearest_interp_v2', 'scatter', 'trilinear_interp_v2',
})


def white_list() -> dict[str, dict[str, set[str]]]:
    """{dtype: {level: ops run in the amp dtype}} (fresh sets: a caller may change them)."""
    return {"float16": {level: set(_WHITE_FLOAT16) for level in ("OD", "O1", "O2")},
            "bfloat16": {level: set(_WHITE_BFLOAT16) for level in ("OD", "O1", "O2")}}


def black_list() -> dict[str, dict[str, set[str]]]:
    """{dtype: {level: ops kept in float32}} (fresh sets: a caller may change them)."""
    by_level = {"OD": frozenset(), "O1": _BLACK_O1, "O2": _BLACK_O2}
    return {dtype: {level: set(ops) for level, ops in by_level.items()} for dtype in ("float16", "bfloat16")}
