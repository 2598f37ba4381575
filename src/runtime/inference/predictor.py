"""`paddle.inference.create_predictor` and the Predictor: a loaded inference program, its named
input and output handles, and runs of the program with the static executor.

Paddle's contract is kept: inputs are named as the exported layer's InputSpecs (or its forward's
parameters), outputs `fetch_name_0`, `fetch_name_1`...; `copy_from_cpu` copies the array it is
given, `copy_to_cpu` returns a new array; a handle holds no data before it is fed (inputs) or
before a run (outputs), and `shape()` is then `[0]`. A dtype or shape that the program cannot take
is a ValueError of the run naming the input (before anything runs). A Predictor is used by one
thread at a time, as Paddle's: `clone()` makes another one sharing the program and the (read-only)
parameters, with its own executor, scope and handles, for another thread.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..executor import Executor, Scope
from ..static import Program
from ..static.io import read_inference_files
from ..tensor import Tensor as _RuntimeTensor
from .config import Config
from .enums import DataType, PlaceType, data_type_of

__all__ = ["Predictor", "PredictorPool", "Tensor", "create_predictor", "get_version"]


class Tensor:
    """A named input or output of a Predictor (Paddle's `PaddleInferTensor`)."""

    def __init__(self, name: str, dtype: np.dtype, place: Any, is_input: bool):
        self._name = name
        self._dtype = dtype
        self._place = place
        self._is_input = is_input
        self._value: Any = None      # an ndarray, or for an input given by share_external_data its Tensor
        self._shape: list[int] = [0]
        self._lod: list = []

    def copy_from_cpu(self, data: np.ndarray) -> None:
        """Feed a copy of `data` (a NumPy array; its dtype and shape are checked by the run)."""
        self._check_input("copy_from_cpu")
        if not isinstance(data, np.ndarray):
            raise TypeError("In copy_from_cpu, we only support numpy ndarray data type, "
                            f"got {type(data).__name__} for input '{self._name}'")
        self._value = np.array(data, copy=True, order="C")
        self._shape = list(data.shape)

    def share_external_data(self, data: _RuntimeTensor) -> None:
        """Feed `data` without a copy: the run reads the tensor's values as they are then."""
        self._check_input("share_external_data")
        if not isinstance(data, _RuntimeTensor):
            raise TypeError(f"share_external_data: input '{self._name}' takes a paddle.Tensor, "
                            f"got {type(data).__name__}")
        self._value = data
        self._shape = list(data.shape)

    def copy_to_cpu(self) -> np.ndarray:
        """A new host array of the handle's data (an output's after `Predictor.run`)."""
        if self._value is None:
            raise RuntimeError(f"(PreconditionNotMet) Tensor '{self._name}' holds no data: "
                               + ("feed it with copy_from_cpu first" if self._is_input else "call Predictor.run() first"))
        value = self._value._data if isinstance(self._value, _RuntimeTensor) else self._value
        return np.array(value if type(value) is np.ndarray else value.get(), copy=True)

    def reshape(self, shape: list[int]) -> None:
        """Set the shape `shape()` reports until data is fed (the data fed then decides)."""
        self._check_input("reshape")
        self._shape = [int(d) for d in shape]

    def shape(self) -> list[int]:
        return list(self._shape)

    def type(self) -> DataType:
        return data_type_of(self._dtype)

    def lod(self) -> list:
        return [list(level) for level in self._lod]

    def set_lod(self, lod: list) -> None:
        """Recorded (and returned by `lod()`): no op of a program here reads LoD."""
        self._lod = [list(level) for level in lod]

    def place(self) -> PlaceType:
        return PlaceType.GPU if self._place.is_gpu_place() else PlaceType.CPU

    def _check_input(self, what: str) -> None:
        if not self._is_input:
            raise RuntimeError(f"(PreconditionNotMet) {what}: '{self._name}' is an output of the predictor")

    def _feed_value(self) -> Any:
        return self._value._data if isinstance(self._value, _RuntimeTensor) else self._value

    def _set_output(self, value: _RuntimeTensor) -> None:
        self._value = value
        self._shape = list(value.shape)


class _Model:
    """What clones share: the program, its feed and fetch names, the parameters' arrays."""

    def __init__(self, config: Config):
        prog_file, params_file = config.model_files()
        self.program, self.feed_names, self.fetch_names, self.values = read_inference_files(
            prog_file, params_file, "paddle.inference.create_predictor")
        block = self.program.global_block()
        self.feed_dtypes = [block.var(n)._np_dtype for n in self.feed_names]
        self.fetch_dtypes = [block.var(n)._np_dtype for n in self.fetch_names]
        self.output_names = [f"fetch_name_{i}" for i in range(len(self.fetch_names))]


class Predictor:
    """Runs one exported model; made by `create_predictor(config)`."""

    def __init__(self, config: Config, model: _Model | None = None):
        self._config = config
        self._model = model if model is not None else _Model(config)
        self._place = config.place()
        self._executor = Executor(self._place)
        self._scope = Scope()
        for name, value in self._model.values.items():
            self._scope.var(name).set(value)
        m = self._model
        self._inputs = {n: Tensor(n, d, self._place, True) for n, d in zip(m.feed_names, m.feed_dtypes)}
        self._outputs = {n: Tensor(n, d, self._place, False) for n, d in zip(m.output_names, m.fetch_dtypes)}

    def get_input_names(self) -> list[str]:
        return list(self._inputs)

    def get_output_names(self) -> list[str]:
        return list(self._outputs)

    def get_input_handle(self, name: str) -> Tensor:
        return _handle(self._inputs, name, "input")

    def get_output_handle(self, name: str) -> Tensor:
        return _handle(self._outputs, name, "output")

    def run(self, inputs: list[_RuntimeTensor] | None = None) -> list[_RuntimeTensor] | None:
        """Run on the input handles' data (returns None), or on `inputs`, one paddle.Tensor per input in
        `get_input_names()` order (returns the outputs as Tensors, as Paddle 2.5+). The output handles
        hold the results either way."""
        if inputs is None:
            missing = [n for n, h in self._inputs.items() if h._value is None]
            if missing:
                raise ValueError(f"Predictor.run: input(s) {', '.join(map(repr, missing))} hold no data: feed each "
                                 "input with get_input_handle(name).copy_from_cpu(array) before run()")
            feed = {n: h._feed_value() for n, h in self._inputs.items()}
        else:
            feed = self._feed_of(inputs)
        results = self._executor.run(self._model.program, feed=feed, fetch_list=self._model.fetch_names,
                                     scope=self._scope, return_numpy=False)
        for handle, value in zip(self._outputs.values(), results):
            handle._set_output(value)
        return None if inputs is None else list(results)

    def _feed_of(self, inputs: Any) -> dict:
        if not isinstance(inputs, (list, tuple)) or not all(isinstance(t, _RuntimeTensor) for t in inputs):
            raise TypeError("Predictor.run: argument 'inputs' must be a list of paddle.Tensor, one per input "
                            f"({', '.join(self._inputs)})")
        if len(inputs) != len(self._inputs):
            raise ValueError(f"(InvalidArgument) wrong feed input size, need {len(self._inputs)} but get {len(inputs)} "
                             f"(inputs: {', '.join(self._inputs)})")
        return {n: t._data for n, t in zip(self._inputs, inputs)}

    def clone(self) -> "Predictor":
        """Another predictor of the same model (program and parameters shared, not copied), for another thread."""
        return Predictor(self._config, self._model)

    def clear_intermediate_tensor(self) -> None:
        """Nothing to clear: the executor frees each intermediate after its last use in a run."""

    def try_shrink_memory(self) -> int:
        """Nothing to release (see clear_intermediate_tensor); 0, as Paddle's CPU predictor returns."""
        return 0

    @property
    def program(self) -> Program:
        """The loaded inference program (for inspection)."""
        return self._model.program


def _handle(handles: dict[str, Tensor], name: str, kind: str) -> Tensor:
    try:
        return handles[name]
    except KeyError:
        raise RuntimeError(f"(PreconditionNotMet) The {kind} named {name!r} is not found in the predictor: its "
                           f"{kind}s are {', '.join(map(repr, handles))}") from None


def create_predictor(config: Config) -> Predictor:
    """A Predictor of the model `config` names."""
    if not isinstance(config, Config):
        raise TypeError(f"create_predictor: argument 'config' must be a paddle.inference.Config, "
                        f"got {type(config).__name__}")
    return Predictor(config)


class PredictorPool:
    """`size` predictors of one model (clones of the first), one per serving thread."""

    def __init__(self, config: Config, size: int = 1):
        first = create_predictor(config)
        self._predictors = [first] + [first.clone() for _ in range(int(size) - 1)]

    def retrive(self, idx: int) -> Predictor:   # Paddle's spelling
        """The idx-th predictor."""
        return self._predictors[idx]


def get_version() -> str:
    """The version text, as Paddle's `get_version()` lays it out."""
    from .. import __version__  # noqa: PLC0415 - the package's version is set after its modules are imported
    return f"version: {__version__}\ncommit: none\nbranch: none"
