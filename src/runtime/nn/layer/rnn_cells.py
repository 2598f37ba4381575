"""Recurrent cells: one time step of an RNN (SimpleRNNCell, LSTMCell, GRUCell) and their base.

Each cell is written with the public ops (matmul, split, sigmoid, tanh), so autograd and static
capture need nothing of their own. Parameter names, shapes, the default initialisation
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), the gate order (LSTM: i, f, g, o; GRU: r, z, c with
the reset gate applied after the hidden matmul) and the order of the arithmetic are Paddle's.
"""
from __future__ import annotations

import math
from typing import Any

from ... import dtypes as _dt
from ...ops import activation as _act
from ...ops import creation as _creation
from ...ops import linalg as _linalg
from ...ops import math as _math
from ...ops import shape as _shape
from ...parameter import Parameter
from ...tensor import Tensor, as_tensor
from .. import initializer as _init
from .layers import Layer

__all__ = ["RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell"]


def _map_structure(fn: Any, *structs: Any) -> Any:
    """fn over the leaves of equally nested tuples/lists, keeping the nesting (Paddle's map_structure)."""
    if isinstance(structs[0], (tuple, list)):
        return type(structs[0])(_map_structure(fn, *items) for items in zip(*structs))
    return fn(*structs)


def _flatten(struct: Any) -> list:
    if isinstance(struct, (tuple, list)):
        return [leaf for item in struct for leaf in _flatten(item)]
    return [struct]


def _is_shape(s: Any) -> bool:
    """A shape is the finest leaf of a state-shape structure: a list/tuple of ints."""
    return isinstance(s, (tuple, list)) and all(isinstance(d, int) for d in s)


def _map_shapes(fn: Any, shapes: Any) -> Any:
    if _is_shape(shapes):
        return fn(shapes)
    return type(shapes)(_map_shapes(fn, s) for s in shapes)


class RNNCellBase(Layer):
    """A cell maps (inputs, states) to (outputs, new states); it knows its state shapes for zero states."""

    def get_initial_states(self, batch_ref: Tensor, shape: Any = None, dtype: Any = None, init_value: float = 0.0,
                           batch_dim_idx: int = 0) -> Any:
        """States filled with `init_value`, shaped [batch] + each shape of `shape` (default `state_shape`).

        The batch size is batch_ref.shape[batch_dim_idx]; a leading -1 of a shape stands for it. The dtype
        is `dtype`, else `state_dtype`, else the default float dtype (as Paddle does).
        """
        ref = _flatten(batch_ref)[0]
        batch = ref.shape[batch_dim_idx]
        shapes = self.state_shape if shape is None else shape
        if dtype is None:
            dtype = self._declared_state_dtype()
        dtypes = _flatten(dtype)

        def make(s: Any, d: Any) -> Tensor:
            dims = list(s[1:]) if s and s[0] == -1 else list(s)
            # the states start where the batch lives, whatever the default device
            return _creation.create_on(ref, "full", shape=(batch, *dims), fill_value=init_value, dtype=d)

        if len(dtypes) == 1:
            return _map_shapes(lambda s: make(s, dtypes[0]), shapes)
        leaves = iter(dtypes)
        return _map_shapes(lambda s: make(s, next(leaves)), shapes)

    _declares_state_dtype = False  # set per subclass by __init_subclass__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._declares_state_dtype = any("state_dtype" in vars(k) for k in cls.__mro__[:cls.__mro__.index(RNNCellBase)])

    def _declared_state_dtype(self) -> Any:
        """`state_dtype` if the cell's class declares one that answers, else the default float dtype. The
        base's raising property is not called: code that raises and catches inside a compiled forward makes
        that forward run eagerly."""
        if not self._declares_state_dtype:
            return _dt.get_default_dtype()
        try:
            return self.state_dtype
        except NotImplementedError:
            return _dt.get_default_dtype()

    @property
    def state_shape(self) -> Any:
        raise NotImplementedError("Please add implementation for `state_shape` in the used cell.")

    @property
    def state_dtype(self) -> Any:
        raise NotImplementedError("Please add implementation for `state_dtype` in the used cell.")

    def _make_weights(self, gates: int, input_size: int, hidden_size: int, weight_ih_attr: Any,
                      weight_hh_attr: Any, bias_ih_attr: Any, bias_hh_attr: Any, hh_width: int | None = None) -> None:
        """weight_ih [gates*H, input_size], weight_hh [gates*H, hh_width], bias_ih and bias_hh [gates*H].

        An attr of False still makes the parameter, as Paddle does: a frozen constant (weights 1, biases 0).
        """
        self._check_hidden_size(hidden_size)
        std = 1.0 / math.sqrt(hidden_size)
        rows = gates * hidden_size
        self.weight_ih = self._cell_parameter((rows, input_size), weight_ih_attr, False, std)
        self.weight_hh = self._cell_parameter((rows, hh_width or hidden_size), weight_hh_attr, False, std)
        self.bias_ih = self._cell_parameter((rows,), bias_ih_attr, True, std)
        self.bias_hh = self._cell_parameter((rows,), bias_hh_attr, True, std)
        self.input_size = input_size
        self.hidden_size = hidden_size

    def _check_hidden_size(self, hidden_size: Any) -> None:
        if isinstance(hidden_size, bool) or not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"hidden_size of {type(self).__name__} must be greater than 0, "
                             f"but now equals to {hidden_size}")

    def _cell_parameter(self, shape: tuple, attr: Any, is_bias: bool, std: float) -> Parameter:
        if attr is False:
            param = self.create_parameter(shape, None, is_bias=is_bias,
                                          default_initializer=_init.Constant(0.0 if is_bias else 1.0))
            param.stop_gradient = True
            return param
        return self.create_parameter(shape, attr, is_bias=is_bias, default_initializer=_init.Uniform(-std, std))

    def _check_step(self, inputs: Any, states: Any, state_widths: tuple[int, ...]) -> None:
        """inputs [batch, input_size] and each state [batch, width], else ValueError naming the argument."""
        name = type(self).__name__
        inputs = as_tensor(inputs, "inputs", name)
        if inputs.ndim != 2 or inputs.shape[-1] != self.input_size:
            raise ValueError(f"{name}: argument 'inputs' must have shape [batch_size, {self.input_size}], "
                             f"got {inputs.shape}")
        for state, width in zip(states, state_widths):
            state = as_tensor(state, "states", name)
            if list(state.shape) != [inputs.shape[0], width]:
                raise ValueError(f"{name}: argument 'states' must have shape [{inputs.shape[0]}, {width}] "
                                 f"([batch_size, hidden_size]), got {state.shape}")

    def _affine(self, x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
        return _linalg.matmul(x, weight, transpose_y=True) + bias


class SimpleRNNCell(RNNCellBase):
    """h = act(x W_ih^T + b_ih + h_prev W_hh^T + b_hh), act tanh or relu."""

    def __init__(self, input_size: int, hidden_size: int, activation: str = "tanh", weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: str | None = None):
        super().__init__()
        self._make_weights(1, input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
        if activation not in ("tanh", "relu"):
            raise ValueError(f"activation for SimpleRNNCell should be tanh or relu, but get {activation}")
        self.activation = activation
        self._activation_fn = _math.tanh if activation == "tanh" else _act.relu

    def forward(self, inputs: Tensor, states: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        self._check_step(inputs, (states,), (self.hidden_size,))
        i2h = self._affine(inputs, self.weight_ih, self.bias_ih)
        h2h = self._affine(states, self.weight_hh, self.bias_hh)
        h = self._activation_fn(i2h + h2h)
        return h, h

    @property
    def state_shape(self) -> tuple[int]:
        return (self.hidden_size,)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + (f", activation={self.activation}"
                                                           if self.activation != "tanh" else "")


class LSTMCell(RNNCellBase):
    """Gates i, f, g, o from one affine map; c = f*c_prev + i*tanh(g), h = o*tanh(c) (times weight_ho if
    proj_size > 0, making h of width proj_size)."""

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr: Any = None, weight_hh_attr: Any = None,
                 bias_ih_attr: Any = None, bias_hh_attr: Any = None, proj_size: int = 0, name: str | None = None):
        super().__init__()
        self._check_hidden_size(hidden_size)
        if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(f"proj_size of LSTMCell must be a non-negative int, but now equals to {proj_size}")
        if proj_size >= hidden_size:
            raise ValueError("proj_size must be smaller than hidden_size")
        self._make_weights(4, input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
                           hh_width=proj_size or hidden_size)
        self.proj_size = proj_size
        if proj_size > 0:
            std = 1.0 / math.sqrt(hidden_size)
            self.weight_ho = self.create_parameter((hidden_size, proj_size), weight_hh_attr,
                                                   default_initializer=_init.Uniform(-std, std))

    def forward(self, inputs: Tensor, states: Any = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        if not isinstance(states, (tuple, list)) or len(states) != 2:
            raise ValueError("LSTMCell: argument 'states' must be a pair (h, c) of tensors")
        pre_hidden, pre_cell = states
        self._check_step(inputs, states, (self.proj_size or self.hidden_size, self.hidden_size))
        gates = self._affine(inputs, self.weight_ih, self.bias_ih)
        gates = gates + _linalg.matmul(pre_hidden, self.weight_hh, transpose_y=True)
        gates = gates + self.bias_hh
        gate_i, gate_f, gate_g, gate_o = _shape.split(gates, 4, axis=-1)
        i = _math.sigmoid(gate_i)
        f = _math.sigmoid(gate_f)
        o = _math.sigmoid(gate_o)
        c = f * pre_cell + i * _math.tanh(gate_g)
        h = o * _math.tanh(c)
        if self.proj_size > 0:
            h = _linalg.matmul(h, self.weight_ho)
        return h, (h, c)

    @property
    def state_shape(self) -> tuple[tuple[int], tuple[int]]:
        """((width of h,), (width of c,)): h is proj_size wide when projecting."""
        return ((self.proj_size or self.hidden_size,), (self.hidden_size,))

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class GRUCell(RNNCellBase):
    """r, z from x and h; c = tanh(x_c + r * (h W_hc^T + b_hc)) (reset after the matmul);
    h = (h_prev - c) * z + c, i.e. z*h_prev + (1-z)*c."""

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr: Any = None, weight_hh_attr: Any = None,
                 bias_ih_attr: Any = None, bias_hh_attr: Any = None, name: str | None = None):
        super().__init__()
        self._make_weights(3, input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)

    def forward(self, inputs: Tensor, states: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        self._check_step(inputs, (states,), (self.hidden_size,))
        x_r, x_z, x_c = _shape.split(self._affine(inputs, self.weight_ih, self.bias_ih), 3, axis=1)
        h_r, h_z, h_c = _shape.split(self._affine(states, self.weight_hh, self.bias_hh), 3, axis=1)
        r = _math.sigmoid(x_r + h_r)
        z = _math.sigmoid(x_z + h_z)
        c = _math.tanh(x_c + r * h_c)
        h = (states - c) * z + c
        return h, h

    @property
    def state_shape(self) -> tuple[int]:
        return (self.hidden_size,)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"
