"""`paddle.jit.load`: a saved inference program as a callable Layer, `TranslatedLayer`.

The saved parameters and buffers become the layer's own tensors under their structured names
(`state_dict()` has the original layer's keys), and each call binds their current arrays into the
layer's private Scope (no copy), so `set_state_dict` on the loaded layer is seen by its next call.
The program is the inference program `paddle.jit.save` wrote: dropout and BatchNorm are in eval
form and the outputs carry no gradient, so `train()` only sets the flag (and warns).
"""
from __future__ import annotations

import json
import os
import warnings
from typing import Any

from .. import static
from ..executor import Executor, Scope, scope_guard
from ..mode import in_dynamic_mode
from ..nn import Layer
from ..parameter import Parameter
from ..static import Program
from ..tensor import Tensor, to_tensor
from .export import INFO_FORMAT, INFO_SUFFIX

__all__ = ["TranslatedLayer", "load"]


class TranslatedLayer(Layer):
    """A Layer running a program loaded by `paddle.jit.load` (inference only)."""

    def __init__(self, program: Program, feed_names: list[str], fetch_names: list[str], scope: Scope,
                 tensors: dict[str, tuple[str, str]], packing: str, layer_name: str):
        super().__init__()
        self._program = program
        self._feed_names = list(feed_names)
        self._fetch_names = list(fetch_names)
        self._scope = scope
        self._packing = packing
        self._layer_name = layer_name
        self._executor = Executor()
        self._bound: list[tuple[str, Tensor]] = []
        block = program.global_block()
        for var_name, (structured, kind) in tensors.items():
            value = scope.find_var(var_name).get_tensor()
            owner, _, key = self._owner_of(structured)
            if kind == "parameter":
                tensor = Parameter._from_array(value, var_name, trainable=not block.var(var_name).stop_gradient)
                owner.add_parameter(key, tensor)
            else:
                tensor = to_tensor(value)
                owner.register_buffer(key, tensor, persistable=kind == "buffer")
            self._bound.append((var_name, tensor))
        self.eval()

    def _owner_of(self, structured: str) -> tuple[Layer, str, str]:
        """The (plain) sublayer holding `structured` ("fc.weight" -> self.fc), created on the way."""
        *path, key = structured.split(".")
        owner: Layer = self
        for part in path:
            sub = owner._sub_layers.get(part)
            if sub is None:
                sub = owner.add_sublayer(part, Layer())
            owner = sub
        return owner, ".".join(path), key

    def forward(self, *inputs: Any) -> Any:
        if not in_dynamic_mode():
            raise TypeError(f"TranslatedLayer ({self._layer_name}) runs its program with an executor, so it cannot be "
                            "called while building a static program (nor saved again): save the original layer")
        if len(inputs) != len(self._feed_names):
            raise TypeError(f"TranslatedLayer ({self._layer_name}): expected {len(self._feed_names)} input(s) "
                            f"({', '.join(self._feed_names)}), got {len(inputs)}")
        for var_name, tensor in self._bound:   # the tensors' current arrays: set_state_dict is seen
            self._scope.var(var_name).value = tensor._data
        results = self._executor.run(self._program, feed=dict(zip(self._feed_names, inputs)),
                                     fetch_list=self._fetch_names, scope=self._scope)
        outputs = [to_tensor(r) for r in results]
        if self._packing == "tensor":
            return outputs[0]
        return tuple(outputs) if self._packing == "tuple" else outputs

    def train(self) -> "TranslatedLayer":
        warnings.warn(f"TranslatedLayer ({self._layer_name}) runs an inference program: train() sets the flag "
                      "only; dropout and batch norm stay in eval form and outputs carry no gradient",
                      UserWarning, stacklevel=2)
        return super().train()

    def program(self, method_name: str = "forward") -> Program:
        """The loaded inference program."""
        if method_name != "forward":
            raise ValueError(f"TranslatedLayer.program: argument 'method_name' must be 'forward', got {method_name!r}")
        return self._program


def load(path: str, **configs: Any) -> TranslatedLayer:
    """The layer `paddle.jit.save(layer, path, ...)` exported, as a TranslatedLayer."""
    if configs:
        raise ValueError(f"paddle.jit.load: config(s) {', '.join(sorted(configs))} are not supported")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"paddle.jit.load: argument 'path' must be a str, got {type(path).__name__}")
    path = os.fspath(path)
    info_path = path + INFO_SUFFIX
    if not os.path.isfile(info_path):
        raise ValueError(f"paddle.jit.load: no file '{info_path}': argument 'path' must be the prefix given to "
                         "paddle.jit.save")
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    if not isinstance(info, dict) or info.get("format") != INFO_FORMAT or info.get("version") != 1:
        raise ValueError(f"paddle.jit.load: '{info_path}' is not a file written by paddle.jit.save")
    scope = Scope()
    with scope_guard(scope):
        program, feed_names, fetch_vars = static.load_inference_model(path, Executor())
    return TranslatedLayer(program, feed_names, [v.name for v in fetch_vars], scope,
                           {k: tuple(v) for k, v in info["tensors"].items()}, info["outputs"], info["layer"])
