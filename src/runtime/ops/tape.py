"""The eager tape: one `Node` per recorded op call, written by eager dispatch, walked by the
autograd engine.

A node keeps what its op's gradient rule needs (the input tensors, the output arrays
when the rule reads outputs, the attributes) and one edge per input to where that
input's gradient goes: the producing (node, output index), the leaf tensor itself, or
None. Edges are fixed at record time, so later in-place writes cannot re-route gradients;
input versions are recorded so such writes are detected instead of giving wrong grads.
"""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor

__all__ = ["Node", "ModifiedArray"]


class ModifiedArray:
    """Stands in for a saved input that was written in place after the forward pass.

    Its shape and dtype are still those the op saw, so gradient rules that need only
    shapes (sum, reshape, expand, concat...) work; reading its values raises the error.
    """

    __slots__ = ("shape", "dtype", "message")

    def __init__(self, shape: tuple, dtype, message: str):
        self.shape = shape
        self.dtype = dtype
        self.message = message

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __getattr__(self, name: str):
        raise RuntimeError(self.message)

    def __array__(self, *args, **kwargs):
        raise RuntimeError(self.message)


class Node:
    """The autograd record of one op call (the `ctx` a gradient rule receives)."""

    __slots__ = ("op", "attrs", "_inputs", "_specs", "_out_arrays", "out_specs", "edges",
                 "versions", "out_hooks", "released", "__weakref__")

    def __init__(self, op, inputs, attrs, out_arrays, out_specs, edges, versions, specs):
        self.op = op
        self.attrs = attrs
        self._inputs = inputs
        self._specs = specs
        self._out_arrays = out_arrays if op.save_outputs else None
        self.out_specs = out_specs
        self.edges = edges
        self.versions = versions
        self.out_hooks = None
        self.released = False

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        """Per input: does a gradient for it go anywhere? (rules skip the rest)"""
        return tuple(e is not None for e in self.edges)

    @property
    def inputs(self) -> tuple[Any, ...]:
        """The op's input tensors; one written in place since is replaced by a stand-in
        that still knows its shape and dtype but raises if its values are read."""
        self._check_alive()
        stale = None
        for i, (t, v) in enumerate(zip(self._inputs, self.versions)):
            if t is not None and t._version != v:
                stale = stale or list(self._inputs)
                shape, dtype = self._specs[i]
                stale[i] = type(t)._wrap(ModifiedArray(shape, dtype, (
                    f"a tensor needed to compute the gradient of op '{self.op.name}' was modified "
                    f"by an in-place operation after it was used (version {v} -> {t._version}); "
                    "use an out-of-place op or clone() it first")))
        return self._inputs if stale is None else tuple(stale)

    @property
    def outputs(self) -> tuple[Any, ...]:
        """The op's outputs as tensors still connected to this node (for double backward)."""
        self._check_alive()
        if self._out_arrays is None:
            raise RuntimeError(f"op '{self.op.name}' did not save its outputs (save_outputs=False)")
        return tuple(Tensor._from_node(a, self, i) for i, a in enumerate(self._out_arrays))

    def _check_alive(self) -> None:
        if self.released:
            raise RuntimeError(
                f"trying to run backward through op '{self.op.name}' a second time, but its saved "
                "tensors were freed; pass retain_graph=True to the first backward()")

    def release(self) -> None:
        """Free what the gradient rule needed (after a backward without retain_graph)."""
        self._inputs = ()
        self._out_arrays = None
        self.released = True

    def add_out_hook(self, index: int, hook) -> None:
        if self.out_hooks is None:
            self.out_hooks = {}
        self.out_hooks.setdefault(index, []).append(hook)
