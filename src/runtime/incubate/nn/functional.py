"""`paddle.incubate.nn.functional`: the fused ops that are one or two public ops (matmul + bias,
dropout + add, SwiGLU), computed that way; the fused attention and normalisation kernels are
importable placeholders that raise NotImplementedError naming themselves."""
from __future__ import annotations

from typing import Any

from ...ops import activation, common, linalg, math, shape
from ...tensor import Tensor
from ..unsupported import unsupported_function

__all__ = ["fused_matmul_bias", "fused_linear", "fused_dropout_add", "swiglu", "fused_multi_head_attention",
           "fused_feedforward", "fused_multi_transformer", "fused_bias_dropout_residual_layer_norm",
           "fused_rotary_position_embedding", "fused_rms_norm", "fused_layer_norm", "fused_bias_act",
           "fused_linear_activation", "masked_multihead_attention", "variable_length_memory_efficient_attention",
           "block_multihead_attention"]


def _require_tensor(api: str, arg: str, value: Any) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{api}: argument '{arg}' must be a Tensor, got {type(value).__name__}")
    return value


def fused_matmul_bias(x: Tensor, y: Tensor, bias: Tensor | None = None, transpose_x: bool = False,
                      transpose_y: bool = False, name: str | None = None) -> Tensor:
    """matmul(x, y) + bias (one cuBLASLt epilogue on Paddle's GPUs)."""
    out = linalg.matmul(_require_tensor("fused_matmul_bias", "x", x), _require_tensor("fused_matmul_bias", "y", y),
                        transpose_x=transpose_x, transpose_y=transpose_y)
    return out if bias is None else math.add(out, _require_tensor("fused_matmul_bias", "bias", bias))


def fused_linear(x: Tensor, weight: Tensor, bias: Tensor | None = None, transpose_weight: bool = False,
                 name: str | None = None) -> Tensor:
    """x @ weight + bias, with weight stored [in, out] (or [out, in] when `transpose_weight`)."""
    return fused_matmul_bias(x, weight, bias, False, transpose_weight)


def fused_dropout_add(x: Tensor, y: Tensor, p: float = 0.5, training: bool = True,
                      mode: str = "upscale_in_train", name: str | None = None) -> Tensor:
    """dropout(x, p) + y: the residual add after a dropout."""
    return math.add(common.dropout(_require_tensor("fused_dropout_add", "x", x), p, training=training, mode=mode),
                    _require_tensor("fused_dropout_add", "y", y))


def swiglu(x: Tensor, y: Tensor | None = None, name: str | None = None) -> Tensor:
    """silu(x) * y; with y None, x's last axis is split in halves [a, b] and the result is silu(a) * b."""
    _require_tensor("swiglu", "x", x)
    if y is None:
        if x.shape[-1] % 2:
            raise ValueError(f"swiglu: the last dimension of argument 'x' must be even when 'y' is None, "
                             f"got shape {x.shape}")
        x, y = shape.chunk(x, 2, axis=-1)
    return math.multiply(activation.silu(x), _require_tensor("swiglu", "y", y))


def _placeholder(name: str, hint: str) -> Any:
    return unsupported_function(f"paddle.incubate.nn.functional.{name}", hint)


_ATTENTION = "a fused GPU attention kernel; use paddle.nn.MultiHeadAttention or compose matmul and softmax"
_NORM = "a fused GPU normalisation kernel; use paddle.nn.functional.layer_norm and the ops around it"
fused_multi_head_attention = _placeholder("fused_multi_head_attention", _ATTENTION)
fused_feedforward = _placeholder("fused_feedforward", "a fused GPU kernel; compose linear, activation, dropout")
fused_multi_transformer = _placeholder("fused_multi_transformer", _ATTENTION)
fused_bias_dropout_residual_layer_norm = _placeholder("fused_bias_dropout_residual_layer_norm", _NORM)
fused_rotary_position_embedding = _placeholder("fused_rotary_position_embedding",
                                               "a fused GPU kernel; apply the rotation with sin/cos and slicing")
fused_rms_norm = _placeholder("fused_rms_norm", _NORM)
fused_layer_norm = _placeholder("fused_layer_norm", _NORM)
fused_bias_act = _placeholder("fused_bias_act", "a fused GPU kernel; add the bias and apply the activation")
fused_linear_activation = _placeholder("fused_linear_activation",
                                       "a fused GPU kernel; use fused_linear and the activation")
masked_multihead_attention = _placeholder("masked_multihead_attention", _ATTENTION)
variable_length_memory_efficient_attention = _placeholder("variable_length_memory_efficient_attention", _ATTENTION)
block_multihead_attention = _placeholder("block_multihead_attention", _ATTENTION)
