"""`paddle.tensor.manipulation`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.creation import zeros
from ..ops.gather import (gather, gather_nd, index_add, index_add_, masked_fill, masked_fill_, put_along_axis,
    put_along_axis_, repeat_interleave, scatter, scatter_, scatter_nd, scatter_nd_add, take_along_axis)
from ..ops.indexing import index_put, index_put_, slice, strided_slice
from ..ops.math import cast
from ..ops.search import unique, unique_consecutive
from ..ops.shape import (broadcast_tensors, broadcast_to, chunk, concat, expand, expand_as, flatten, flatten_,
    flip, moveaxis, reshape, reshape_, roll, rot90, split, squeeze, squeeze_, stack, tile, transpose,
    unbind, unflatten, unsqueeze, unsqueeze_, unstack, view, view_as)

__all__ = ["broadcast_tensors", "broadcast_to", "cast", "chunk", "concat", "expand", "expand_as", "flatten",
           "flatten_", "flip", "gather", "gather_nd", "index_add", "index_add_", "index_put", "index_put_",
           "masked_fill", "masked_fill_", "moveaxis", "put_along_axis", "put_along_axis_",
           "repeat_interleave", "reshape", "reshape_", "roll", "rot90", "scatter", "scatter_",
           "scatter_nd", "scatter_nd_add", "slice", "split", "squeeze", "squeeze_", "stack", "strided_slice",
           "take_along_axis", "tile", "transpose", "unbind", "unflatten", "unique", "unique_consecutive",
           "unsqueeze", "unsqueeze_", "unstack", "view", "view_as", "zeros"]
