"""`paddle.incubate.nn`: the fused functional ops (`functional`) and placeholders for the fused layers."""
from . import functional  # noqa: F401
from ..unsupported import unsupported_class

_FUSED = "a fused GPU layer; build it from paddle.nn layers"
FusedMultiHeadAttention = unsupported_class("paddle.incubate.nn.FusedMultiHeadAttention", _FUSED)
FusedFeedForward = unsupported_class("paddle.incubate.nn.FusedFeedForward", _FUSED)
FusedTransformerEncoderLayer = unsupported_class("paddle.incubate.nn.FusedTransformerEncoderLayer", _FUSED)
FusedMultiTransformer = unsupported_class("paddle.incubate.nn.FusedMultiTransformer", _FUSED)
FusedLinear = unsupported_class("paddle.incubate.nn.FusedLinear", _FUSED)
FusedBiasDropoutResidualLayerNorm = unsupported_class("paddle.incubate.nn.FusedBiasDropoutResidualLayerNorm",
                                                      _FUSED)
FusedDropoutAdd = unsupported_class("paddle.incubate.nn.FusedDropoutAdd", _FUSED)
FusedDropout = unsupported_class("paddle.incubate.nn.FusedDropout", _FUSED)

__all__ = ["functional", "FusedMultiHeadAttention", "FusedFeedForward", "FusedTransformerEncoderLayer",
           "FusedMultiTransformer", "FusedLinear", "FusedBiasDropoutResidualLayerNorm", "FusedDropoutAdd",
           "FusedDropout"]
