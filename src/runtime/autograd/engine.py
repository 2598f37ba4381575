"""The backward pass: walk the tape from the roots in dependency order.

Each node runs once, after every gradient flowing into it has been summed; its gradient
rule (from the op registry) maps output gradients to input gradients with the public
ops, so with `create_graph=True` the backward pass is itself recorded (double backward).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..ops import creation, math
from ..ops.grad_mode import set_grad_enabled
from ..place import default_place
from ..tensor import Tensor

__all__ = ["backward", "grad"]


def _collect(root_nodes: Iterable) -> dict:
    """Number of pending consumers (edges from reachable nodes) of every reachable node."""
    deps: dict = {}
    stack = list(root_nodes)
    seen = set(stack)
    for n in stack:
        deps.setdefault(n, 0)
    while stack:
        node = stack.pop()
        for e in node.edges:
            if type(e) is tuple:
                child = e[0]
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
    return deps


def _run_hooks(hooks, g: Tensor) -> Tensor:
    for h in list(hooks):
        r = h(g)
        if r is not None:
            g = r
    return g


def _check_grad_root(t: Tensor, g, api: str) -> Tensor:
    if t.stop_gradient:
        raise RuntimeError(f"{api}: tensor (shape {t.shape}) has stop_gradient=True, so there is "
                           "nothing to differentiate")
    if g is None:
        return creation.ones_like(t)
    if not isinstance(g, Tensor):
        raise TypeError(f"{api}: grad_tensor must be a Tensor or None, got {type(g).__name__}")
    if g._data.shape != t._data.shape:
        raise ValueError(f"{api}: grad_tensor has shape {g.shape} but the tensor has shape {t.shape}")
    return g


def _execute(roots: Sequence[Tensor], grads: Sequence[Tensor], retain_graph: bool,
             create_graph: bool, capture: dict | None) -> dict:
    """Propagate; return {id(leaf): (leaf, grad)} and fill `capture` for non-leaf targets."""
    leaf_grads: dict = {}
    buffers: dict = {}
    root_nodes = []
    for t, g in zip(roots, grads):
        e = t._edge()
        if type(e) is tuple:
            buf = buffers.setdefault(e[0], [None] * len(e[0].out_specs))
            buf[e[1]] = g if buf[e[1]] is None else math.add(buf[e[1]], g)
            root_nodes.append(e[0])
        else:
            _accumulate(leaf_grads, t, g)
    deps = _collect(root_nodes)
    ready = [n for n in dict.fromkeys(root_nodes) if deps[n] == 0]
    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            outs = buffers.pop(node, None)
            in_grads = None
            if outs is not None and any(g is not None for g in outs):
                if node.out_hooks:
                    for i, hooks in node.out_hooks.items():
                        if outs[i] is not None:
                            outs[i] = _run_hooks(hooks, outs[i])
                if capture is not None:
                    for i, g in enumerate(outs):
                        key = (node, i)
                        if key in capture and g is not None:
                            capture[key] = g
                device = _device_of(outs)
                if device is None:
                    in_grads = _run_rule(node, outs)
                else:  # constants the rule creates (and zeros for missing gradients) go to the device
                    with default_place(device):
                        in_grads = _run_rule(node, outs)
                if len(in_grads) != len(node.edges):
                    raise RuntimeError(f"gradient rule of op '{node.op.name}' returned {len(in_grads)} "
                                       f"gradients for {len(node.edges)} inputs")
            if not retain_graph:
                node.release()
            for j, e in enumerate(node.edges):
                if e is None:
                    continue
                g = None if in_grads is None else in_grads[j]
                if type(e) is tuple:
                    child, idx = e
                    if g is not None:
                        buf = buffers.setdefault(child, [None] * len(child.out_specs))
                        buf[idx] = g if buf[idx] is None else math.add(buf[idx], g)
                    deps[child] -= 1
                    if deps[child] == 0:
                        ready.append(child)
                elif g is not None:
                    _accumulate(leaf_grads, e, g)
    return leaf_grads


def _run_rule(node, outs: list) -> tuple:
    """The node's gradient rule on its output gradients (zeros for the missing ones)."""
    filled = [g if g is not None else creation.zeros(list(spec.shape), dtype=spec.dtype)
              for g, spec in zip(outs, node.out_specs)]
    return node.op.grad(node, *filled)


def _device_of(outs: list):
    """The place of the gradients when they live on a device, else None (the CPU fast path)."""
    for g in outs:
        if g is not None:
            return None if type(g._data) is np.ndarray else g.place
    return None


def _accumulate(leaf_grads: dict, leaf: Tensor, g: Tensor) -> None:
    prev = leaf_grads.get(id(leaf))
    leaf_grads[id(leaf)] = (leaf, g if prev is None else math.add(prev[1], g))


def backward(tensors: Sequence[Tensor], grad_tensors: Sequence | None = None,
             retain_graph: bool = False) -> None:
    """Accumulate gradients of `tensors` into the `.grad` of the leaves they depend on."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    grad_tensors = [None] * len(tensors) if grad_tensors is None else list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"backward: got {len(grad_tensors)} grad_tensors for {len(tensors)} tensors")
    grads = [_check_grad_root(t, g, "backward") for t, g in zip(tensors, grad_tensors)]
    leaf_grads = _execute(tensors, grads, retain_graph, False, None)
    for leaf, g in leaf_grads.values():
        if leaf._hooks:
            g = _run_hooks(leaf._hooks, g)
        _store_leaf_grad(leaf, g)


def _store_leaf_grad(leaf: Tensor, g: Tensor) -> None:
    """Accumulate into leaf.grad as Paddle does; the grad Tensor object stays the same."""
    data = g._data if g._data.dtype == leaf._data.dtype else g._data.astype(leaf._data.dtype)
    current = leaf._grad
    if current is None:
        leaf._grad = Tensor._wrap(data)
        leaf._grad_owned = False
    elif leaf._grad_zero:
        current._data = data
        leaf._grad_owned = False
        leaf._grad_zero = False
    elif leaf._grad_owned:
        current._data += data
    else:
        current._data = current._data + data
        leaf._grad_owned = True


def _tensor_backward(self: Tensor, grad_tensor: Tensor | None = None, retain_graph: bool = False) -> None:
    """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that needs it."""
    backward([self], [grad_tensor], retain_graph=retain_graph)


# `loss.backward()` is bound here, as the ops bind theirs: Tensor sits below the engine
_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"
Tensor.backward = _tensor_backward


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool = False,
         no_grad_vars=None) -> list[Tensor | None]:
    """Gradients of `outputs` w.r.t. `inputs`, returned (not accumulated into `.grad`)."""
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs[{i}] must be a Tensor, got {type(t).__name__}")
        if t.stop_gradient:
            raise ValueError(f"grad: inputs[{i}] has stop_gradient=True; it cannot receive a gradient")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_check_grad_root(t, g, "grad") for t, g in zip(outputs, grad_outputs)]
    capture = {t._edge(): None for t in inputs if t._node is not None}
    leaf_grads = _execute(outputs, roots, retain_graph, create_graph, capture)
    result = []
    for i, t in enumerate(inputs):
        g = capture.get(t._edge()) if t._node is not None else leaf_grads.get(id(t), (None, None))[1]
        if g is None and not allow_unused:
            raise ValueError(f"grad: inputs[{i}] is not reachable from the outputs; "
                             "pass allow_unused=True to get None for it")
        if g is not None and not create_graph:
            g = Tensor._wrap(g._data)
        result.append(g)
    return result
