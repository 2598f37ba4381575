"""`paddle.incubate`: the fused softmax ops and segment reductions model files call, computed from
public ops (so they differentiate and run in both modes where their shapes allow), and importable
placeholders for the rest (see `unsupported`)."""
from . import nn  # noqa: F401
from .ops import (segment_max, segment_mean, segment_min, segment_sum, softmax_mask_fuse,
                  softmax_mask_fuse_upper_triangle)
from .unsupported import unsupported_class, unsupported_function

_GRAPH = "graph sampling ops; use paddle.geometric-style code on plain tensors"
graph_send_recv = unsupported_function("paddle.incubate.graph_send_recv", _GRAPH)
graph_khop_sampler = unsupported_function("paddle.incubate.graph_khop_sampler", _GRAPH)
graph_sample_neighbors = unsupported_function("paddle.incubate.graph_sample_neighbors", _GRAPH)
graph_reindex = unsupported_function("paddle.incubate.graph_reindex", _GRAPH)
identity_loss = unsupported_function("paddle.incubate.identity_loss", "an IPU-only loss marker")
LookAhead = unsupported_class("paddle.incubate.LookAhead", "an optimizer wrapper; use the inner optimizer")
ModelAverage = unsupported_class("paddle.incubate.ModelAverage", "parameter averaging is not implemented")

__all__ = ["nn", "softmax_mask_fuse", "softmax_mask_fuse_upper_triangle", "segment_sum", "segment_mean",
           "segment_max", "segment_min", "graph_send_recv", "graph_khop_sampler", "graph_sample_neighbors",
           "graph_reindex", "identity_loss", "LookAhead", "ModelAverage"]
