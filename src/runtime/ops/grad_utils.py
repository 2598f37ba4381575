"""Helpers for gradient rules, written with public ops so they replay in static mode too.

Gradient rules are where the op families meet: math's rules sum over broadcast dimensions
(reduction), reduction's rules expand back (shape, math). `unbroadcast` is used by the families
it is built from, so it reaches them when called, not at import.
"""
from __future__ import annotations

__all__ = ["unbroadcast", "holomorphic"]


def unbroadcast(g, like):
    """Sum `g` over the dimensions that broadcasting added to `like` and cast to its dtype (found when the
    program runs where a static program's sizes are unknown)."""
    from . import math, reduction, shape  # noqa: PLC0415 - math and shape import this module
    gshape, tshape = list(g.shape), list(like.shape)
    if -1 in tshape:  # a static program's size of `like` known at run time: maybe a 1 that broadcast
        g = reduction.SUM_LIKE(g, like)
    elif gshape != tshape:
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


def holomorphic(rule):
    """The rule of an op analytic in its inputs, written for real tensors (g * f'(x)), made right for
    complex ones. Paddle's convention for a real loss of a complex z = a + ib is dL/da + i*dL/db, which
    takes g * conj(f'(x)) = conj(rule(conj(g))). A complex gradient arrives only when an input is complex,
    so real graphs pay one dtype check per rule."""
    def wrapped(ctx, *grads):
        for g in grads:  # a loop, not all(...): this runs for every node of every backward pass
            if g.dtype.np_dtype.kind == "c":
                from .math import conj  # noqa: PLC0415 - math imports this module
                return tuple(None if r is None else conj(r) for r in rule(ctx, *(conj(g) for g in grads)))
        return rule(ctx, *grads)
    wrapped.__name__ = wrapped.__qualname__ = getattr(rule, "__name__", "rule")
    wrapped.__doc__ = rule.__doc__
    return wrapped
