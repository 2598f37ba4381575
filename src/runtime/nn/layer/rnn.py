"""Recurrent networks over a cell: RNN, BiRNN, and the stacked SimpleRNN, LSTM and GRU.

The time loop is a Python loop over the steps calling the cell, so autograd needs no rule of its
own and the JIT unrolls it into one graph. With `sequence_length`, a sequence's states stop
changing past its length (reversed runs start at its last valid step), as in Paddle. SimpleRNN,
LSTM and GRU also zero the outputs past each length, as Paddle's fused rnn kernel does; RNN, BiRNN
and an LSTM with proj_size (which Paddle runs without that kernel) leave them as the cell computed
them, as Paddle does.
"""
from __future__ import annotations

from typing import Any

from ...ops import common as _common
from ...ops import creation as _creation
from ...ops import shape as _shape
from ...tensor import Tensor, as_tensor
from ..functional.extension import sequence_mask
from ._validation import positive_int
from .container import LayerList
from .layers import Layer
from .rnn_cells import GRUCell, LSTMCell, RNNCellBase, SimpleRNNCell, _map_structure

__all__ = ["RNN", "BiRNN", "SimpleRNN", "LSTM", "GRU"]

_BIDIRECTIONAL = ("bidirectional", "bidirect")


def _check_inputs(layer: str, inputs: Any, input_size: int | None = None) -> Tensor:
    """inputs as a 3-D tensor (with last dim input_size when given), else ValueError naming 'inputs'."""
    inputs = as_tensor(inputs, "inputs", layer)
    if inputs.ndim != 3 or (input_size is not None and inputs.shape[-1] != input_size):
        size = "input_size" if input_size is None else input_size
        raise ValueError(f"{layer}: argument 'inputs' must be a 3-D tensor [batch_size, time_steps, {size}] "
                         f"(or [time_steps, batch_size, {size}] when time_major), got shape {inputs.shape}")
    return inputs


def _check_lengths(layer: str, sequence_length: Any, batch: int) -> None:
    """sequence_length must be an integer tensor of shape [batch_size]."""
    sequence_length = as_tensor(sequence_length, "sequence_length", layer)
    if list(sequence_length.shape) != [batch] or sequence_length.dtype.name not in ("int32", "int64"):
        raise ValueError(f"{layer}: argument 'sequence_length' must be an int32 or int64 tensor of shape "
                         f"[{batch}] ([batch_size]), got {sequence_length.dtype.name} {sequence_length.shape}")


def _step_mask(sequence_length: Tensor, time_steps: int, time_major: bool, dtype: Any) -> Tensor:
    """1/0 (in `dtype`) per step and sequence, shaped [batch, time, 1] (or [time, batch, 1] if time_major)."""
    mask = sequence_mask(sequence_length, maxlen=time_steps, dtype=dtype)
    if time_major:
        mask = _shape.transpose(mask, [1, 0])
    return _shape.unsqueeze(mask, -1)


def _keep_past_length(state: Tensor, new_state: Tensor, step_mask: Tensor, past_end: Tensor) -> Tensor:
    """new_state where the step is inside the sequence, the previous state past its end (past_end = 1 - mask);
    a blend, as Paddle computes it."""
    return new_state * step_mask + state * past_end


def _rnn(cell: Layer, inputs: Tensor, initial_states: Any, sequence_length: Tensor | None, time_major: bool,
         is_reverse: bool, layer: str, **kwargs: Any) -> tuple[Tensor, Any]:
    """Run `cell` over the time steps of `inputs`; (outputs stacked over time, final states)."""
    inputs = _check_inputs(layer, inputs)
    time_axis = 0 if time_major else 1
    time_steps = inputs.shape[time_axis]
    if initial_states is None:
        initial_states = cell.get_initial_states(batch_ref=inputs, batch_dim_idx=1 if time_major else 0)
    if not time_major:
        inputs = _shape.transpose(inputs, [1, 0, 2])
    mask = None
    if sequence_length is not None:
        _check_lengths(layer, sequence_length, inputs.shape[1])
        mask = _step_mask(sequence_length, time_steps, True, inputs.dtype)
    if is_reverse:
        inputs = _shape.flip(inputs, [0])
        mask = None if mask is None else _shape.flip(mask, [0])
    states = initial_states
    outputs = []
    for i in range(time_steps):
        step_output, new_states = cell(inputs[i], states, **kwargs)
        if mask is not None:
            step_mask = mask[i]
            past_end = 1 - step_mask
            new_states = _map_structure(lambda old, new: _keep_past_length(old, new, step_mask, past_end), states,
                                        new_states)
        states = new_states
        outputs.append(step_output)
    if is_reverse:
        outputs.reverse()
    return _shape.stack(outputs, axis=time_axis), states


def _check_cell(layer: str, arg: str, cell: Any) -> None:
    if not isinstance(cell, Layer):
        raise TypeError(f"{layer}: argument '{arg}' must be an RNN cell (a Layer), got {type(cell).__name__}")


class RNN(Layer):
    """Runs `cell` over the time steps of its input (backwards when is_reverse); returns (outputs, final states)."""

    def __init__(self, cell: RNNCellBase, is_reverse: bool = False, time_major: bool = False):
        super().__init__()
        _check_cell("RNN", "cell", cell)
        self.cell = cell
        self.is_reverse = is_reverse
        self.time_major = time_major

    def forward(self, inputs: Tensor, initial_states: Any = None, sequence_length: Tensor | None = None,
                **kwargs: Any) -> tuple[Tensor, Any]:
        return _rnn(self.cell, inputs, initial_states, sequence_length, self.time_major, self.is_reverse, "RNN",
                    **kwargs)


class BiRNN(Layer):
    """cell_fw forwards and cell_bw backwards over the input; outputs concatenated on the last axis,
    final states (states_fw, states_bw)."""

    def __init__(self, cell_fw: RNNCellBase, cell_bw: RNNCellBase, time_major: bool = False):
        super().__init__()
        _check_cell("BiRNN", "cell_fw", cell_fw)
        _check_cell("BiRNN", "cell_bw", cell_bw)
        self.cell_fw = cell_fw
        self.cell_bw = cell_bw
        if cell_fw.input_size != cell_bw.input_size:
            raise ValueError(f"input size of forward cell({cell_fw.input_size}) does not equals "
                             f"that of backward cell({cell_bw.input_size})")
        self.time_major = time_major

    def forward(self, inputs: Tensor, initial_states: Any = None, sequence_length: Tensor | None = None,
                **kwargs: Any) -> tuple[Tensor, tuple[Any, Any]]:
        if initial_states is None:
            states_fw = states_bw = None
        elif isinstance(initial_states, (tuple, list)) and len(initial_states) == 2:
            states_fw, states_bw = initial_states
        else:
            raise ValueError("BiRNN: argument 'initial_states' must be a pair (states of cell_fw, states of cell_bw)")
        outputs_fw, states_fw = _rnn(self.cell_fw, inputs, states_fw, sequence_length, self.time_major, False,
                                     "BiRNN", **kwargs)
        outputs_bw, states_bw = _rnn(self.cell_bw, inputs, states_bw, sequence_length, self.time_major, True,
                                     "BiRNN", **kwargs)
        return _shape.concat([outputs_fw, outputs_bw], -1), (states_fw, states_bw)


def _split_states(states: list[Tensor], bidirectional: bool) -> list:
    """[L*D, N, C] state tensors (one per component) to one state per layer (a (fw, bw) pair if bidirectional)."""
    per_cell = [tuple(parts) for parts in zip(*(_shape.unstack(s) for s in states))]
    if len(states) == 1:
        per_cell = [parts[0] for parts in per_cell]
    if not bidirectional:
        return per_cell
    return list(zip(per_cell[::2], per_cell[1::2]))


def _concat_states(states: list, bidirectional: bool, components: int) -> Any:
    """The inverse of _split_states: one [L*D, N, C] tensor per state component."""
    cells = [s for pair in states for s in pair] if bidirectional else states
    if components == 1:
        return _shape.stack(cells)
    return tuple(_shape.stack([cell[k] for cell in cells]) for k in range(components))


class RNNBase(LayerList):
    """num_layers of RNN (or BiRNN) over one cell type, with dropout between layers while training.

    Initial and final states are [num_layers * num_directions, batch_size, hidden_size] tensors (a pair
    (h, c) for LSTM). The parameters are also registered on this layer as weight_ih_l{k}[_reverse],
    weight_hh_l..., bias_ih_l..., bias_hh_l..., so state_dict holds both spellings, as in Paddle.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None, bias_ih_attr: Any = None,
                 bias_hh_attr: Any = None, proj_size: int = 0):
        super().__init__()
        name = type(self).__name__
        if direction not in ("forward",) + _BIDIRECTIONAL:
            raise ValueError("direction should be forward or bidirect (or bidirectional), "
                             f"received direction = {direction}")
        positive_int(name, "num_layers", num_layers)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"{name}: argument 'dropout' must be a number in [0, 1], got {dropout!r}")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.dropout = dropout
        self.num_directions = 2 if direction in _BIDIRECTIONAL else 1
        self.time_major = time_major
        self.num_layers = num_layers
        self.state_components = 2 if mode == "LSTM" else 1
        self.proj_size = proj_size
        kwargs: dict[str, Any] = {"weight_ih_attr": weight_ih_attr, "weight_hh_attr": weight_hh_attr,
                                  "bias_ih_attr": bias_ih_attr, "bias_hh_attr": bias_hh_attr}
        if mode == "LSTM":
            cell_cls, kwargs["proj_size"] = LSTMCell, proj_size
        elif mode == "GRU":
            cell_cls = GRUCell
        else:
            cell_cls, kwargs["activation"] = SimpleRNNCell, "relu" if mode == "RNN_RELU" else "tanh"
        out_size = (proj_size or hidden_size) * self.num_directions
        for k in range(num_layers):
            in_size = input_size if k == 0 else out_size
            if self.num_directions == 2:
                self.append(BiRNN(cell_cls(in_size, hidden_size, **kwargs), cell_cls(in_size, hidden_size, **kwargs),
                                  time_major))
            else:
                self.append(RNN(cell_cls(in_size, hidden_size, **kwargs), False, time_major))
        self._alias_parameters(bias_ih_attr is not False, bias_hh_attr is not False)

    def _alias_parameters(self, has_bias_ih: bool, has_bias_hh: bool) -> None:
        """Register the flat names on this layer, zipped in order with parameters() exactly as Paddle does.

        Paddle leaves out the names of biases whose attr is False (their frozen parameters still exist) and
        has no name for weight_ho, so in those cases its names shift onto later parameters; doing the same
        keeps state_dict keys and shapes loadable both ways.
        """
        names = []
        for k in range(self.num_layers):
            for d in range(self.num_directions):
                suffix = "_reverse" if d == 1 else ""
                names += [f"weight_ih_l{k}{suffix}", f"weight_hh_l{k}{suffix}"]
                names += [f"bias_ih_l{k}{suffix}"] if has_bias_ih else []
                names += [f"bias_hh_l{k}{suffix}"] if has_bias_hh else []
        for name, param in zip(names, self.parameters()):
            setattr(self, name, param)

    def _initial_states(self, inputs: Tensor, initial_states: Any) -> list[Tensor]:
        """The given states (checked) or zeros, as a list of [L*D, N, C] tensors, one per component."""
        batch = inputs.shape[1 if self.time_major else 0]
        widths = (self.proj_size or self.hidden_size, self.hidden_size)[:self.state_components]
        rows = self.num_layers * self.num_directions
        if initial_states is None:  # zeros where the inputs live, whatever the default device
            return [_creation.create_on(inputs, "full", shape=(rows, batch, w), fill_value=0.0) for w in widths]
        states = [initial_states] if isinstance(initial_states, Tensor) else initial_states
        expected = " and ".join(f"[{rows}, {batch}, {w}]" for w in widths)
        if not isinstance(states, (tuple, list)) or len(states) != self.state_components or not all(
                isinstance(s, Tensor) and list(s.shape) == [rows, batch, w] for s, w in zip(states, widths)):
            got = [list(s.shape) if isinstance(s, Tensor) else type(s).__name__ for s in states] \
                if isinstance(states, (tuple, list)) else type(states).__name__
            raise ValueError(f"{type(self).__name__}: argument 'initial_states' must be {expected} "
                             "([num_layers * num_directions, batch_size, hidden_size]), got " + str(got))
        return list(states)

    def forward(self, inputs: Tensor, initial_states: Any = None,
                sequence_length: Tensor | None = None) -> tuple[Tensor, Any]:
        inputs = _check_inputs(type(self).__name__, inputs, self.input_size)
        states = _split_states(self._initial_states(inputs, initial_states), self.num_directions == 2)
        final_states = []
        outputs = inputs
        for i, rnn_layer in enumerate(self):
            if i > 0:
                outputs = _common.dropout(outputs, self.dropout, training=self.training, mode="upscale_in_train")
            outputs, final_state = rnn_layer(outputs, states[i], sequence_length)
            final_states.append(final_state)
        if sequence_length is not None and not self.proj_size:
            outputs = outputs * _step_mask(sequence_length, inputs.shape[0 if self.time_major else 1],
                                           self.time_major, outputs.dtype)
        return outputs, _concat_states(final_states, self.num_directions == 2, self.state_components)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.time_major is not False:
            s += f", time_major={self.time_major}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        return s


class SimpleRNN(RNNBase):
    """Stacked Elman RNN: h_t = activation(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), activation tanh or relu."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, direction: str = "forward",
                 time_major: bool = False, dropout: float = 0.0, activation: str = "tanh", weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: str | None = None):
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if activation not in modes:
            raise ValueError(f"Unknown activation '{activation}'")
        super().__init__(modes[activation], input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, 0)
        self.activation = activation


class LSTM(RNNBase):
    """Stacked LSTM (gates i, f, g, o); states are (h, c); proj_size > 0 projects h to proj_size."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, direction: str = "forward",
                 time_major: bool = False, dropout: float = 0.0, weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None, proj_size: int = 0,
                 name: str | None = None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, proj_size)


class GRU(RNNBase):
    """Stacked GRU (gates r, z, c, the reset gate applied after the hidden matmul)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, direction: str = "forward",
                 time_major: bool = False, dropout: float = 0.0, weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: str | None = None):
        super().__init__("GRU", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, 0)
