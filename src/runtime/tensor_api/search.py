"""`paddle.tensor.search`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.creation import assign
from ..ops.gather import index_sample, index_select
from ..ops.indexing import masked_select, nonzero
from ..ops.math import where
from ..ops.reduction import argmax, argmin
from ..ops.search import argsort, bucketize, kthvalue, mode, searchsorted, sort, topk

__all__ = ["argmax", "argmin", "argsort", "assign", "bucketize", "index_sample", "index_select", "kthvalue",
           "masked_select", "mode", "nonzero", "searchsorted", "sort", "topk", "where"]
