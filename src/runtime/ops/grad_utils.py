"""Helpers for gradient rules, written with public ops so they replay in static mode too.

Gradient rules are where the op families meet: math's rules sum over broadcast dimensions
(reduction), reduction's rules expand back (shape, math). `unbroadcast` is used by the families
it is built from, so it reaches them when called, not at import.
"""
from __future__ import annotations

__all__ = ["unbroadcast"]


def unbroadcast(g, like):
    """Sum `g` over the dimensions that broadcasting added to `like` and cast to its dtype."""
    from . import math, reduction, shape  # noqa: PLC0415 - math and shape import this module
    gshape, tshape = list(g.shape), list(like.shape)
    if gshape != tshape:
        lead = len(gshape) - len(tshape)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(tshape)
                                    if d == 1 and gshape[lead + i] != 1]
        if axes:
            g = reduction.sum(g, axis=axes, keepdim=False)
        if list(g.shape) != tshape:
            g = shape.reshape_like(g, like)
    if g.dtype != like.dtype and like.dtype.is_floating:
        g = math.cast(g, like.dtype)
    return g
