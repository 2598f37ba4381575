"""`paddle.jit.save`: a Layer's forward, in eval mode, as an inference program plus its parameters.

The forward is run once in static mode on `paddle.static.data` inputs made from the specs. The
layer itself is never changed (other threads may use it meanwhile): a stand-in, a shallow copy of
the layer and each sublayer in eval mode whose parameters and buffers are persistable Variables
(one per tensor, named after its structured name), is what runs. The program and the tensors'
values are written by `paddle.static.save_inference_model` (`<path>.pdmodel`, `<path>.pdiparams`);
`<path>.pdiparams.info` is JSON telling `paddle.jit.load` which var is which parameter or buffer
and how the outputs were packed. These are this project's files, not Paddle's protobuf files.
"""
from __future__ import annotations

import inspect
import json
import os
import traceback
import types
from typing import Any

from .. import static
from ..executor import Executor, Scope, scope_guard
from ..nn import Layer
from ..parameter import is_parameter
from ..static import InputSpec, Program, Variable
from ..tensor import Tensor
from .api import StaticFunction

__all__ = ["save", "INFO_SUFFIX", "INFO_FORMAT"]

INFO_SUFFIX = ".pdiparams.info"
INFO_FORMAT = "runtime.jit.translated_layer"
_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def save(layer: Layer, path: str, input_spec: Any = None, **configs: Any) -> None:
    """Export `layer` (compiled with to_static or not) for inference: see the module docstring. The
    inputs come from `input_spec` (InputSpecs or example Tensors), else from the to_static spec of its
    forward, else from the shapes of its last compiled call."""
    if configs:
        raise ValueError(f"paddle.jit.save: config(s) {', '.join(sorted(configs))} are not supported")
    if not isinstance(layer, Layer):
        raise TypeError(f"paddle.jit.save: argument 'layer' must be an nn.Layer, got {type(layer).__name__}")
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path) or os.fspath(path).endswith(("/", os.sep)):
        raise ValueError(f"paddle.jit.save: argument 'path' must be a file name prefix like 'dir/model', got {path!r}")
    path = os.fspath(path)
    forward = _plain_forward(layer)
    specs = _specs_for(layer, input_spec)
    names = _structured_names(layer)
    program, feeds, fetches, bound, packing = _build(layer, forward, specs, names)
    scope = Scope()
    for name, tensor in bound.items():
        scope.var(name).value = tensor._data
    with scope_guard(scope):
        static.save_inference_model(path, feeds, fetches, Executor(), program=program)
    info = {"format": INFO_FORMAT, "version": 1, "layer": type(layer).__name__, "outputs": packing,
            "tensors": {name: names[id(t)] for name, t in bound.items()}}
    with open(path + INFO_SUFFIX, "w", encoding="utf-8") as f:
        json.dump(info, f)


def _plain_forward(layer: Layer) -> types.FunctionType:
    """The Python function behind `layer.forward`, past any to_static wrapper."""
    forward = layer.__dict__.get("forward")
    forward = forward.__func__ if isinstance(forward, types.MethodType) else type(layer).forward
    forward = inspect.unwrap(forward)
    if not isinstance(forward, types.FunctionType):
        raise TypeError(f"paddle.jit.save: {type(layer).__name__}.forward is not a Python function")
    return forward


def _specs_for(layer: Layer, input_spec: Any) -> list[InputSpec]:
    name = type(layer).__name__
    if input_spec is None:
        compiled = layer.__dict__.get("forward")
        compiled = compiled.__func__ if isinstance(compiled, types.MethodType) else type(layer).__dict__.get("forward")
        if isinstance(compiled, StaticFunction):
            if compiled.input_spec is not None and None not in compiled.input_spec:
                return list(compiled.input_spec)
            if compiled.last_call_shapes is not None and None not in compiled.last_call_shapes:
                return [InputSpec(list(shape), dtype) for shape, dtype in compiled.last_call_shapes]
        raise ValueError(f"paddle.jit.save: no input_spec for {name}.forward: pass input_spec=[InputSpec(...), ...] "
                         "or call the layer compiled by paddle.jit.to_static once before saving")
    if not isinstance(input_spec, (list, tuple)):
        raise TypeError(f"paddle.jit.save: argument 'input_spec' must be a list of InputSpec or Tensor, "
                        f"got {type(input_spec).__name__}")
    specs = []
    for i, s in enumerate(input_spec):
        if isinstance(s, Tensor):
            s = InputSpec(s.shape, s.dtype, s.name)
        if not isinstance(s, InputSpec):
            raise TypeError(f"paddle.jit.save: input_spec[{i}] must be an InputSpec or a Tensor, got {type(s).__name__}")
        specs.append(s)
    return specs


def _feed_names(forward: types.FunctionType, specs: list[InputSpec]) -> list[str]:
    params = list(inspect.signature(forward).parameters.values())[1:]
    names = []
    for i, spec in enumerate(specs):
        name = spec.name or (params[i].name if i < len(params) and params[i].kind in
                             (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD) else f"input_{i}")
        if name in names:
            raise ValueError(f"paddle.jit.save: two inputs are named {name!r}; give the InputSpecs distinct names")
        names.append(name)
    return names


def _build(layer: Layer, forward: types.FunctionType, specs: list[InputSpec],
           names: dict[int, tuple[str, str]]) -> tuple:
    """(program, feed vars, fetch vars, var name -> bound eager tensor, how the outputs were packed)."""
    program = Program()
    block = program.global_block()
    bound: dict[str, Tensor] = {}
    by_id: dict[int, Variable] = {}

    def bind(tensor: Tensor) -> Variable:
        var = by_id.get(id(tensor))
        if var is None:
            name = names[id(tensor)][0]
            while block.has_var(name):
                name += "_"
            shape, dtype = list(tensor._data.shape), tensor._data.dtype
            var = (block.create_parameter(name, shape, dtype, trainable=not tensor.stop_gradient)
                   if is_parameter(tensor) else
                   block.create_var(name, shape, dtype, persistable=True, stop_gradient=True))
            by_id[id(tensor)] = var
            bound[name] = tensor
        return var

    with static.appending_to(program):
        feeds = []
        for name, spec in zip(_feed_names(forward, specs), specs):
            feeds.append(static.data(name, list(spec.shape), spec.dtype))
        stand_in = static.stand_in_layer(layer, bind, training=False)
        try:
            outputs = forward(stand_in, *feeds)
        except Exception as e:
            raise RuntimeError(_build_error(layer, forward, e)) from e
    fetches, packing = _flatten_outputs(layer, outputs)
    return program, feeds, fetches, bound, packing


def _structured_names(layer: Layer) -> dict[int, tuple[str, str]]:
    """id(tensor) -> (its structured name such as "fc.weight", its kind: "parameter", "buffer" or
    "nonpersistable_buffer"); a tensor shared by two sublayers keeps its first name."""
    names: dict[int, tuple[str, str]] = {}
    for prefix, sub in layer.named_sublayers(include_self=True):
        dot = prefix + "." if prefix else ""
        for key, t in sub._parameters.items():
            if t is not None:
                names.setdefault(id(t), (dot + key, "parameter"))
        for key, t in sub._buffers.items():
            if t is not None:
                kind = "nonpersistable_buffer" if key in sub._non_persistable_buffer_names_set else "buffer"
                names.setdefault(id(t), (dot + key, kind))
    return names


def _build_error(layer: Layer, forward: types.FunctionType, error: Exception) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    user = [f for f in frames if not f.filename.startswith(_RUNTIME_DIR)] or frames  # a runtime layer's own code
    where = f"{user[-1].filename}:{user[-1].lineno}"
    hint = ""
    if isinstance(error, TypeError) and "has no value at build time" in str(error):
        hint = (" Python control flow or conversions on tensor values (if/while on a tensor, .item(), "
                ".numpy(), float()) cannot be exported: use paddle.static.nn.cond / paddle.where instead.")
    return (f"paddle.jit.save: {type(layer).__name__}.forward cannot be built as a static program, at {where}: "
            f"{type(error).__name__}: {error}.{hint}")


def _flatten_outputs(layer: Layer, outputs: Any) -> tuple[list[Variable], str]:
    packing = "tensor" if isinstance(outputs, Tensor) else type(outputs).__name__
    items = [outputs] if isinstance(outputs, Tensor) else outputs
    if packing not in ("tensor", "tuple", "list") or not all(isinstance(v, Variable) for v in items) or not items:
        raise TypeError(f"paddle.jit.save: {type(layer).__name__}.forward must return a tensor or a flat tuple or "
                        f"list of tensors computed from its inputs, got {outputs!r}")
    return list(items), packing
