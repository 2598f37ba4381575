"""`sequence_mask`: the padding mask of a batch of sequence lengths (used by the RNN layers).

Composed from existing ops (arange, a comparison, a cast), so it needs no kernel of its own; the
result never requires a gradient, as in Paddle.
"""
from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...ops import creation as _creation
from ...ops import math as _math
from ...ops import reduction as _reduction
from ...ops import shape as _shape
from ...tensor import Tensor, as_tensor

__all__ = ["sequence_mask"]


def sequence_mask(x: Tensor, maxlen: Any = None, dtype: Any = "int64", name: str | None = None) -> Tensor:
    """mask[..., j] = (j < x[...]), of shape x.shape + [maxlen]; maxlen None (or negative) means max(x).

    Reading max(x) needs the values of x, so only a given `maxlen` keeps the shape known in advance.
    """
    x = as_tensor(x, "x", "sequence_mask")
    if isinstance(maxlen, Tensor):
        maxlen = maxlen.item()
    if maxlen is not None and (isinstance(maxlen, bool) or not isinstance(maxlen, int)):
        raise TypeError(f"sequence_mask: argument 'maxlen' must be an int, a Tensor or None, "
                        f"got {type(maxlen).__name__}")
    if maxlen is None or maxlen < 0:
        maxlen = int(_reduction.max(x).item()) if x.size else 0
    steps = _creation.create_on(x, "arange", start=0, end=maxlen, step=1)
    mask = _math.less_than(steps, _shape.unsqueeze(x, -1))
    out = _math.cast(mask, _dt.to_np_dtype(dtype))
    out.stop_gradient = True
    return out
