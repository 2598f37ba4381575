"""Containers: Sequential, LayerList, LayerDict, ParameterList."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Iterator

from ...parameter import Parameter, is_parameter
from .layers import Layer

__all__ = ["Sequential", "LayerList", "LayerDict", "ParameterList"]


def _abs_index(container: str, idx: Any, n: int) -> int:
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise TypeError(f"{container} indices must be integers or slices, not {type(idx).__name__}")
    if not -n <= idx < n:
        raise IndexError(f"{container}: index {idx} is out of range, should be an integer in range [{-n}, {n})")
    return idx + n if idx < 0 else idx


class Sequential(Layer):
    """Run layers in order; built from layers (named "0", "1", ...) or (name, layer) pairs."""

    def __init__(self, *layers: Any):
        super().__init__()
        if layers and isinstance(layers[0], (list, tuple)):
            for name, layer in layers:
                self.add_sublayer(name, layer)
        else:
            for idx, layer in enumerate(layers):
                self.add_sublayer(str(idx), layer)

    def __getitem__(self, name: Any) -> Layer:
        if isinstance(name, slice):
            return type(self)(*list(self._sub_layers.values())[name])
        if isinstance(name, str):
            return self._sub_layers[name]
        return list(self._sub_layers.values())[_abs_index("Sequential", name, len(self._sub_layers))]

    def __setitem__(self, name: Any, layer: Layer) -> None:
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential: only a Layer can be set, got {type(layer).__name__}")
        setattr(self, str(name), layer)

    def __delitem__(self, name: Any) -> None:
        name = str(name)
        if name not in self._sub_layers:
            raise KeyError(f"Sequential has no sublayer named {name!r}")
        del self._sub_layers[name]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def forward(self, input: Any) -> Any:  # noqa: A002 - Paddle's argument name
        for layer in self._sub_layers.values():
            input = layer(input)  # noqa: A001
        return input


class LayerList(Layer):
    """A list of sublayers, registered as "0", "1", ... (indexing, slicing, append, extend, insert)."""

    def __init__(self, sublayers: Iterable[Layer] | None = None):
        super().__init__()
        if sublayers is not None:
            for idx, layer in enumerate(sublayers):
                self.add_sublayer(str(idx), layer)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._sub_layers.values())[idx])
        return self._sub_layers[str(_abs_index("LayerList", idx, len(self)))]

    def __setitem__(self, idx: int, sublayer: Layer) -> None:
        setattr(self, str(_abs_index("LayerList", idx, len(self))), sublayer)

    def __delitem__(self, idx: Any) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._sub_layers))[idx]:
                del self._sub_layers[str(k)]
        else:
            del self._sub_layers[str(_abs_index("LayerList", idx, len(self)))]
        layers = list(self._sub_layers.values())
        self._sub_layers.clear()
        self._sub_layers.update((str(i), layer) for i, layer in enumerate(layers))

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())

    def append(self, sublayer: Layer) -> "LayerList":
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        """Insert before `index` (negative counts from the end)."""
        n = len(self)
        if isinstance(index, bool) or not isinstance(index, int) or not -n <= index <= n:
            raise IndexError(f"LayerList.insert: index should be an integer in range [{-n}, {n}], got {index!r}")
        index = index + n if index < 0 else index
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def extend(self, sublayers: Iterable[Layer]) -> "LayerList":
        offset = len(self)
        for i, layer in enumerate(sublayers):
            self.add_sublayer(str(offset + i), layer)
        return self


class LayerDict(Layer):
    """An ordered dict of sublayers keyed by name."""

    def __init__(self, sublayers: Any = None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, sublayer: Layer) -> None:
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key: str) -> None:
        del self._sub_layers[key]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[str]:
        return iter(self._sub_layers)

    def __contains__(self, key: str) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        self._sub_layers.clear()

    def pop(self, key: str) -> Layer:
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers: Any) -> None:
        """Add from a mapping (or LayerDict) or from an iterable of (key, layer) pairs."""
        if isinstance(sublayers, (Mapping, LayerDict)):
            for key, layer in sublayers.items():
                self.add_sublayer(key, layer)
            return
        if not isinstance(sublayers, Iterable):
            raise TypeError(f"LayerDict.update: expected a mapping or an iterable of key/value pairs, "
                            f"got {type(sublayers).__name__}")
        for i, kv in enumerate(sublayers):
            if not isinstance(kv, (list, tuple)) or len(kv) != 2:
                raise ValueError(f"LayerDict.update: element {i} of sublayers must be a (key, layer) pair, got {kv!r}")
            self.add_sublayer(kv[0], kv[1])


class ParameterList(Layer):
    """A list of parameters, registered as "0", "1", ..."""

    def __init__(self, parameters: Iterable[Parameter] | None = None):
        super().__init__()
        if parameters is not None:
            for param in parameters:
                self.append(param)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._parameters.values())[idx])
        return self._parameters[str(_abs_index("ParameterList", idx, len(self)))]

    def __setitem__(self, idx: int, param: Parameter) -> None:
        if not is_parameter(param):
            raise TypeError(f"ParameterList: only a Parameter can be set, got {type(param).__name__}")
        setattr(self, str(_abs_index("ParameterList", idx, len(self))), param)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def append(self, parameter: Parameter) -> "ParameterList":
        self.add_parameter(str(len(self._parameters)), parameter)
        return self

