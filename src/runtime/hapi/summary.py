"""`paddle.summary`: one forward pass on random inputs with a hook on every layer, printed as Paddle's
table (layer `Class-N` with N from the layer's unique name, input and output shapes, parameter
count), followed by the totals and size estimates; returns {'total_params', 'trainable_params'}.

Sequential and LayerList containers (and the network itself, unless it has no sublayers) get no row.
Parameters count where they are owned, so a layer's row counts its own parameters, not its
sublayers'. A parameter is trainable when `trainable` and not `stop_gradient` (BatchNorm's running
statistics are not)."""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..autograd import no_grad
from ..nn import Layer, LayerList, Sequential
from ..ops.math import cast
from ..ops.random import rand
from ..static import InputSpec
from ..tensor import Tensor

__all__ = ["summary"]


def _is_shape(shape: Sequence) -> bool:
    return not any(isinstance(item, (list, tuple)) for item in shape)


def _all_numbers(items: Sequence) -> bool:
    return all(isinstance(item, numbers.Number) for item in items)


def _checked_shape(shape: Sequence) -> tuple:
    """The shape with its one unknown (None or -1) batch dimension set to 1."""
    unknown = 0
    out = []
    for item in shape:
        if item is None or item == -1:
            unknown += 1
            if unknown > 1:
                raise ValueError("Option input_size only the dim of batch_size can be None or -1.")
            item = 1
        elif isinstance(item, numbers.Number) and item <= 0:
            raise ValueError(f"Expected element in input size greater than zero, but got {item}")
        out.append(item)
    return tuple(out)


def _checked_input(input_size: Any) -> Any:
    if isinstance(input_size, (list, tuple)) and _is_shape(input_size):
        return _checked_shape(input_size)
    return [_checked_input(i) for i in input_size]


def _normalised_size(input_size: Any, input: Any) -> Any:  # noqa: A002 - Paddle's argument name
    """input_size as a shape tuple or a list of them (from InputSpecs, ints or example tensors)."""
    if input_size is None:
        if input is None:
            raise ValueError("input_size and input cannot be None at the same time")
        if isinstance(input, Tensor):
            input_size = tuple(input.shape)
        elif isinstance(input, (list, tuple)):
            input_size = [tuple(x.shape) for x in input]
        elif isinstance(input, dict):
            input_size = [tuple(x.shape) for x in input.values()]
        else:
            raise ValueError("Input is not tensor, list, tuple and dict, unable to determine input_size, please "
                             "input input_size.")
    if isinstance(input_size, InputSpec):
        return tuple(input_size.shape)
    if isinstance(input_size, list):
        out = []
        for item in input_size:
            item = (item,) if isinstance(item, int) else item
            if not isinstance(item, (tuple, InputSpec)):
                raise TypeError(f"When input_size is list, expect item in input_size is a tuple or InputSpec, but "
                                f"got {type(item)}")
            out.append(tuple(item.shape) if isinstance(item, InputSpec) else item)
        return out
    return (input_size,) if isinstance(input_size, int) else input_size


def summary(net: Layer, input_size: Any = None, dtypes: Any = None, input: Any = None) -> dict:  # noqa: A002
    """Print the layer table of `net` on inputs of `input_size` (a shape, an InputSpec or a list of
    them; the batch dimension may be None) or on the example `input`; the parameter totals."""
    size = _checked_input(_normalised_size(input_size, input))
    was_training = net.training
    if was_training:
        net.eval()
    try:
        text, params_info = summary_string(net, size, dtypes, input)
    finally:
        if was_training:
            net.train()
    print(text)
    return params_info


def _dtypes_for(input_size: Any, dtype: Any) -> list:
    dtype = dtype or "float32"
    if isinstance(input_size, (list, tuple)) and _all_numbers(input_size):
        return [dtype]
    return [_dtypes_for(i, dtype) for i in input_size]


def _random_inputs(input_size: Any, dtypes: Any) -> Any:
    if isinstance(input_size, (list, tuple)) and _all_numbers(input_size):
        dtype = dtypes[0] if isinstance(dtypes, (list, tuple)) else dtypes
        return cast(rand(list(input_size)), dtype)
    return [_random_inputs(i, dtype) for i, dtype in zip(input_size, dtypes)]


def _shapes(value: Any) -> Any:
    if isinstance(value, Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    return None


def _output_shape(output: Any) -> list:
    if isinstance(output, (list, tuple)):
        return [_output_shape(o) for o in output]
    return list(output.shape) if hasattr(output, "shape") else []


def _row_of(layer: Layer, inputs: Any, output: Any) -> dict:
    """One table row: shapes, the layer's own parameters and how many of them train."""
    row: dict[str, Any] = {"input_shape": _shapes(inputs), "output_shape": _output_shape(output),
                           "trainable_params": 0}
    params = 0
    for param in layer._parameters.values():
        if param is None:
            continue
        count = np.prod(param.shape)
        params += count
        if getattr(param, "trainable", True) and not param.stop_gradient:
            row["trainable_params"] += count
            row["trainable"] = True
        elif not row.get("trainable"):
            row["trainable"] = False
    row["nb_params"] = params
    return row


def _layer_key(layer: Layer, rows: dict) -> str:
    try:
        index = int(layer._full_name.split("_")[-1])
    except ValueError:
        index = len(rows)
    return f"{type(layer).__name__}-{index + 1}"


@no_grad()
def summary_string(model: Layer, input_size: Any = None, dtypes: Any = None,
                   input: Any = None) -> tuple[str, dict]:  # noqa: A002 - Paddle's argument name
    """The table text and the parameter totals (see `summary`)."""
    if not isinstance(dtypes, (list, tuple)):
        dtypes = _dtypes_for(input_size, dtypes)
    depth = len(model.sublayers())
    rows: dict[str, dict] = {}
    hooks = []

    def register(layer: Layer) -> None:
        if isinstance(layer, (Sequential, LayerList)) or (layer is model and depth >= 1):
            return

        def hook(layer: Layer, inputs: Any, output: Any) -> None:
            rows[_layer_key(layer, rows)] = _row_of(layer, inputs, output)

        hooks.append(layer.register_forward_post_hook(hook))

    model.apply(register)
    try:
        if input is not None:
            model(input)
        else:
            model(*_random_inputs([input_size] if isinstance(input_size, tuple) else input_size, dtypes))
    finally:
        for h in hooks:
            h.remove()
    return _table(rows, [input_size] if isinstance(input_size, tuple) else input_size)


def _widths(rows: dict) -> dict[str, int]:
    widths = {"layer_width": 15, "input_shape_width": 20, "output_shape_width": 20, "params_width": 15,
              "table_width": 75}
    for name, row in rows.items():
        widths["output_shape_width"] = max(widths["output_shape_width"], len(str(row["output_shape"])))
        widths["input_shape_width"] = max(widths["input_shape_width"], len(str(row["input_shape"])))
        widths["layer_width"] = max(widths["layer_width"], len(str(name)))
        widths["params_width"] = max(widths["params_width"], len(str(row["nb_params"])))
    columns = sum(v for k, v in widths.items() if k != "table_width")
    widths["table_width"] = max(widths["table_width"], columns + 5)
    return widths


def _input_megabytes(input_size: Any) -> float:
    if isinstance(input_size, (list, tuple)) and _all_numbers(input_size):
        return abs(np.prod(input_size) * 4.0 / 1024 ** 2.0)
    return sum(_input_megabytes(i) for i in input_size)


def _table(rows: dict, input_size: Any) -> tuple[str, dict]:
    w = _widths(rows)

    def line(*cells: str) -> str:
        return "{:^{}} {:^{}} {:^{}} {:^{}}".format(
            cells[0], w["layer_width"], cells[1], w["input_shape_width"], cells[2], w["output_shape_width"],
            cells[3], w["params_width"]) + "\n"

    text = "-" * w["table_width"] + "\n" + line("Layer (type)", "Input Shape", "Output Shape", "Param #")
    text += "=" * w["table_width"] + "\n"
    total_params = total_output = trainable_params = 0
    for name, row in rows.items():
        text += line(name, str(row["input_shape"]), str(row["output_shape"]), f"{row['nb_params']:,}")
        total_params += row["nb_params"]
        try:
            total_output += np.sum(np.prod(row["output_shape"], axis=-1))
        except ValueError:  # several outputs of different ranks
            for shape in row["output_shape"]:
                total_output += np.sum(np.prod(shape, axis=-1))
        if row.get("trainable"):
            trainable_params += row["trainable_params"]
    input_mb = _input_megabytes(input_size)
    output_mb = abs(2.0 * total_output * 4.0 / 1024 ** 2.0)
    params_mb = abs(total_params * 4.0 / 1024 ** 2.0)
    text += "=" * w["table_width"] + "\n"
    text += f"Total params: {total_params:,}\n"
    text += f"Trainable params: {trainable_params:,}\n"
    text += f"Non-trainable params: {total_params - trainable_params:,}\n"
    text += "-" * w["table_width"] + "\n"
    text += f"Input size (MB): {input_mb:0.2f}\n"
    text += f"Forward/backward pass size (MB): {output_mb:0.2f}\n"
    text += f"Params size (MB): {params_mb:0.2f}\n"
    text += f"Estimated Total Size (MB): {params_mb + output_mb + input_mb:0.2f}\n"
    text += "-" * w["table_width"] + "\n"
    return text, {"total_params": total_params, "trainable_params": trainable_params}
