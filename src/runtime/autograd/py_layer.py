"""`PyLayer`: an op whose forward and backward are Python functions (Paddle's `paddle.autograd.PyLayer`).

`apply` runs `forward(ctx, *args, **kwargs)` without recording; when grad mode is on and a
Tensor argument requires grad, it records ONE node on the eager tape whose gradient rule calls
`backward(ctx, *output_grads)`. Eager autograd never learns what happened inside forward: this
is the extension point for computations described outside the op registry (a user's fused op, a
compiled subgraph that runs a whole static Program as one step).

Rules (as Paddle's): `backward` receives one gradient per Tensor output of `forward` (zeros for
outputs that got none) and returns one value per Tensor argument of `forward` (positional, then
keyword, in order): a Tensor of that argument's shape, or None when no gradient flows to that
argument (Paddle asks for a Tensor wherever the argument requires grad; None leaves its `.grad`
untouched, as eager autograd does for an input the outputs do not depend on). Outputs that are
not floating, or were passed to `ctx.mark_non_differentiable`, get no gradient. The tensors
`forward` returns join the tape themselves (so a saved output stays differentiable for double
backward). Tensors given to `ctx.save_for_backward` and then written in place raise when
`saved_tensor()` reads them, as saved inputs of registry ops do.
"""
from __future__ import annotations

from typing import Any

from ..ops.grad_mode import no_grad, state as _grad_state
from ..ops.registry import TensorSpec
from ..ops.tape import Node
from ..tensor import Tensor

__all__ = ["PyLayer", "PyLayerContext"]


class PyLayerContext:
    """What `forward` hands to `backward`: saved tensors, flags, and any attribute set on it."""

    def __init__(self) -> None:
        self._saved: tuple[Tensor, ...] | None = None
        self._saved_versions: tuple[int, ...] = ()
        self._non_differentiable: set[int] = set()
        self.needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Tensor) -> None:
        """Keep `tensors` for `backward` (read them with `saved_tensor()`)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward: argument {i} must be a Tensor or None, got {type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple(0 if t is None else t._version for t in tensors)

    def saved_tensor(self) -> tuple[Tensor, ...] | None:
        """The tensors given to `save_for_backward` (None if it was not called)."""
        if self._saved is None:
            return None
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._version != v:
                raise RuntimeError(f"saved_tensor: saved tensor {i} (shape {t.shape}) was modified by an in-place "
                                   f"operation after it was saved (version {v} -> {t._version}); use an "
                                   "out-of-place op or save a clone()")
        return self._saved

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs of `forward` that get no gradient (their backward argument is zeros)."""
        self._non_differentiable.update(id(t) for t in tensors)


class _PyLayerOp:
    """What the tape reads from an op (name, save_outputs, grad) for one PyLayer subclass."""

    __slots__ = ("name", "layer")
    save_outputs = False

    def __init__(self, layer: type):
        self.name = layer.__name__
        self.layer = layer

    def grad(self, node: "_PyLayerNode", *out_grads: Tensor) -> tuple:
        node._check_alive()
        ctx, shapes = node.ctx, node.input_shapes
        result = self.layer.backward(ctx, *out_grads)
        grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(grads) != len(shapes):
            raise ValueError(f"{self.name}.backward returned {len(grads)} gradients, expected {len(shapes)} "
                             "(one per Tensor argument of forward)")
        for i, (g, shape) in enumerate(zip(grads, shapes)):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"{self.name}.backward: gradient {i} must be a Tensor or None, got "
                                f"{type(g).__name__}")
            if g._data.shape != shape:
                raise ValueError(f"{self.name}.backward: gradient {i} has shape {g.shape}, but Tensor argument {i} "
                                 f"of forward has shape {list(shape)}")
        return grads


class _PyLayerNode(Node):
    """A tape node of a PyLayer call: it also keeps the context (freed with the node)."""

    __slots__ = ("ctx", "input_shapes")

    def release(self) -> None:
        super().release()
        self.ctx = None


class PyLayer:
    """Subclass with static `forward(ctx, ...)` and `backward(ctx, *grads)`; call `.apply(...)`."""

    @staticmethod
    def forward(ctx: PyLayerContext, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("PyLayer subclasses must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx: PyLayerContext, *grads: Tensor) -> Any:
        raise NotImplementedError("PyLayer subclasses must define a static backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward; record one tape node when an argument requires grad (grad mode on)."""
        tensors = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Tensor))
        record = _grad_state.enabled and any(not t.stop_gradient for t in tensors)
        ctx = PyLayerContext()
        ctx.needs_input_grad = tuple(record and not t.stop_gradient for t in tensors)
        with no_grad():
            outputs = cls.forward(ctx, *args, **kwargs)
        if not record:
            return outputs
        single = isinstance(outputs, Tensor)
        outs = [outputs] if single else list(outputs) if isinstance(outputs, (tuple, list)) else None
        if outs is None:
            raise TypeError(f"{cls.__name__}.forward must return a Tensor or a tuple/list of them, got "
                            f"{type(outputs).__name__}")
        positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        op = cls.__dict__.get("_tape_op")
        if op is None:
            op = _PyLayerOp(cls)
            cls._tape_op = op
        specs = tuple(TensorSpec(outs[i]._data.shape, outs[i]._data.dtype) for i in positions)
        edges = tuple(None if t.stop_gradient else t._edge() for t in tensors)
        node = _PyLayerNode(op, (), {}, None, specs, edges, (), ())
        node.ctx = ctx
        node.input_shapes = tuple(t._data.shape for t in tensors)
        given = {id(t) for t in tensors}
        for k, i in enumerate(positions):
            o = outs[i]
            if id(o) in ctx._non_differentiable or o._data.dtype.kind not in "fc":
                continue
            if id(o) in given or o._node is not None:  # an argument passed through: a new tensor
                outs[i] = Tensor._from_node(o._data, node, k)
            else:  # the very tensor forward made (and maybe saved) joins the tape, as in Paddle
                o._node, o._oidx, o.stop_gradient = node, k, False
        if single:
            return outs[0]
        return tuple(outs) if isinstance(outputs, tuple) else outs
