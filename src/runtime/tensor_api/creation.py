"""`paddle.tensor.creation`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..nn.layer.layers import create_parameter
from ..ops.creation import (arange, assign, clone, diag, diagflat, empty, empty_like, eye, full, full_like,
    linspace, meshgrid, ones, ones_like, tril, triu, zeros, zeros_like)
from ..tensor import to_tensor

__all__ = ["arange", "assign", "clone", "create_parameter", "diag", "diagflat", "empty", "empty_like", "eye",
           "full", "full_like", "linspace", "meshgrid", "ones", "ones_like", "to_tensor", "tril", "triu",
           "zeros", "zeros_like"]
