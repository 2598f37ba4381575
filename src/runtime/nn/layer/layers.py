"""`paddle.nn.Layer`: the base of every layer, and parameter creation (`paddle.create_parameter`).

A Layer keeps its Parameters, sublayers and buffers in three ordered dicts, routed there by
`__setattr__`, so `named_parameters()` / `state_dict()` give Paddle's structured names
("fc1.weight", "bn._mean"). Parameters get Paddle's unique names ("linear_0.w_0").
"""
from __future__ import annotations

import copy
import inspect
import itertools
import re
import warnings
import weakref
from collections import OrderedDict
from typing import Any, Callable, Iterator

import numpy as np

from ... import dtypes as _dt
from ... import mode as _mode
from ... import structure
from ...parameter import Parameter, is_parameter
from ...place import array_module, to_place
from ...structure import TrackedDict
from ...tensor import Tensor
from .. import functional as F
from .. import initializer as _init
from ..param_attr import ParamAttr

__all__ = ["Layer", "create_parameter"]

_REQUIRED = inspect.Parameter.empty

_first_cap_re = re.compile("(.)([A-Z][a-z]+)")
_all_cap_re = re.compile("([a-z])([A-Z])")
_name_counters: dict[str, itertools.count] = {}


def _unique_name(key: str) -> str:
    """`key_N` with N counting per key from 0, as Paddle's unique_name.generate."""
    counter = _name_counters.get(key)
    if counter is None:
        counter = _name_counters[key] = itertools.count()
    return f"{key}_{next(counter)}"


def _convert_camel_to_snake(name: str) -> str:
    return _all_cap_re.sub(r"\1_\2", _first_cap_re.sub(r"\1_\2", name)).lower()


def _create_parameter(scope: str, shape: Any, attr: Any, dtype: Any, is_bias: bool,
                      default_initializer: Any) -> Parameter | None:
    """Build one parameter of `shape` as Paddle's LayerHelper does; None when attr is False."""
    attr = copy.deepcopy(ParamAttr._to_attr(attr))
    if attr is False:
        return None
    if not isinstance(attr, ParamAttr):
        raise TypeError(f"create_parameter: argument 'attr' must describe one parameter, got {type(attr).__name__}")
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"create_parameter: argument 'shape' must be a list or tuple of ints, got {type(shape).__name__}")
    for i, d in enumerate(shape):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"create_parameter: every dimension of argument 'shape' must be a positive int, "
                             f"got {d!r} at index {i} of {list(shape)}")
    shape = tuple(int(d) for d in shape)
    np_dtype = _dt.default_float() if dtype is None else _dt.to_np_dtype(dtype)
    init = _init._global_initializer(is_bias) or default_initializer
    if attr.initializer is None and init is None:
        if np_dtype.kind != "f":
            raise TypeError(f"create_parameter: a parameter of dtype {np_dtype.name} needs an initializer "
                            "(the default ones are for floating dtypes)")
        init = _init.Constant(0.0) if is_bias else _init.XavierUniform()
    attr._set_default_initializer(init)
    name = attr.name if attr.name is not None else _unique_name(f"{scope}.{'b' if is_bias else 'w'}")
    if _mode.hooks.static:  # a persistable var in the main program, its initialiser in startup
        return _mode.hooks.create_parameter(name, shape, np_dtype, attr.initializer, attr.trainable,
                                            {"learning_rate": attr.learning_rate}, attr.regularizer,
                                            attr.need_clip)
    values = attr.initializer._generate(shape, np_dtype)
    param = Parameter._from_array(values._data, name=name, trainable=attr.trainable)
    param.optimize_attr = {"learning_rate": attr.learning_rate}
    param.regularizer = attr.regularizer
    param.need_clip = attr.need_clip
    param.do_model_average = attr.do_model_average
    return param


def create_parameter(shape: Any, dtype: Any, name: str | None = None, attr: Any = None, is_bias: bool = False,
                     default_initializer: Any = None) -> Parameter:
    """A free-standing parameter (`paddle.create_parameter`): Xavier weights / zero biases by default."""
    if attr is None and name is not None:
        attr = ParamAttr(name=name)
    param = _create_parameter(_unique_name("create_parameter"), shape, attr, dtype, is_bias, default_initializer)
    if param is None:
        raise ValueError("create_parameter: argument 'attr' must not be False")
    return param


class HookRemoveHelper:
    """Returned by `register_forward_*_hook`; `.remove()` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks: "OrderedDict[int, Callable]"):
        self._hooks_ref = weakref.ref(hooks)
        self._hook_id = next(HookRemoveHelper._next_id)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self._hook_id, None)


def _addindent(text: str, indent: int) -> str:
    lines = text.split("\n")
    return lines[0] if len(lines) == 1 else lines[0] + "\n" + "\n".join(" " * indent + ln for ln in lines[1:])


def _name_checks(layer: "Layer", name: Any, store: str, what: str) -> None:
    """Paddle's checks on a name given to add_parameter / register_buffer."""
    if store not in layer.__dict__:
        raise RuntimeError("super().__init__() should be called first in the __init__ of a Layer subclass")
    if not isinstance(name, str):
        raise TypeError(f"The name of {what} should be a string, but received {type(name).__name__}.")
    if "." in name:
        raise KeyError(f"The name of {what} can not contain `.`, because when you access the newly added "
                       f"{what} in the form of `self.**.**`, it will cause AttributeError.")
    if name == "":
        raise KeyError(f"The name of {what} can not be empty.")
    if hasattr(layer, name) and name not in layer.__dict__[store]:
        raise KeyError(f"The {what} '{name}' already exists.")


class Layer:
    """Base class of layers: owns parameters, sublayers and buffers; `__call__` runs hooks and `forward`."""

    training: bool

    def __init__(self, name_scope: str | None = None, dtype: Any = "float32"):
        self.training = True
        if name_scope is None:
            name_scope = _convert_camel_to_snake(type(self).__name__)
        self._full_name = _unique_name(name_scope)
        self._dtype = dtype
        self._buffers: OrderedDict[str, Tensor | None] = TrackedDict()
        self._non_persistable_buffer_names_set: set[str] = set()
        self._sub_layers: OrderedDict[str, Layer | None] = TrackedDict()
        self._forward_pre_hooks: OrderedDict[int, Callable] = TrackedDict()
        self._forward_post_hooks: OrderedDict[int, Callable] = TrackedDict()
        self._state_dict_hooks: OrderedDict[int, Callable] = TrackedDict()
        self._parameters: OrderedDict[str, Parameter | None] = TrackedDict()  # last: it switches on the routing

    # ----- calling
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """The computation of this layer; subclasses override it."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self._forward_pre_hooks and not self._forward_post_hooks:
            return self.forward(*inputs, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        outputs = self.forward(*inputs, **kwargs)
        for hook in list(self._forward_post_hooks.values()):
            result = hook(self, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    def register_forward_pre_hook(self, hook: Callable) -> HookRemoveHelper:
        """`hook(layer, inputs)` runs before forward; a returned value replaces the inputs."""
        return self._add_hook(self._forward_pre_hooks, hook, "register_forward_pre_hook")

    def register_forward_post_hook(self, hook: Callable) -> HookRemoveHelper:
        """`hook(layer, inputs, outputs)` runs after forward; a returned value replaces the outputs."""
        return self._add_hook(self._forward_post_hooks, hook, "register_forward_post_hook")

    def register_state_dict_hook(self, hook: Callable) -> HookRemoveHelper:
        """`hook(state_dict)` runs on the dict `state_dict()` builds; a returned dict replaces it."""
        return self._add_hook(self._state_dict_hooks, hook, "register_state_dict_hook")

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook: Callable, api: str) -> HookRemoveHelper:
        if not callable(hook):
            raise TypeError(f"{api}: hook must be callable, got {type(hook).__name__}")
        helper = HookRemoveHelper(hooks)
        hooks[helper._hook_id] = hook
        return helper

    # ----- attribute routing
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        params = d.get("_parameters")
        if params is not None:
            if name in params:
                return params[name]
            layers = d["_sub_layers"]
            if name in layers:
                return layers[name]
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            self._set_attribute(name, value)
        finally:
            structure.bump()  # any attribute may be something a compiled forward relied on

    def _set_attribute(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if params is None or isinstance(getattr(type(self), name, None), property):
            if params is None and isinstance(value, (Tensor, Layer)):
                raise ValueError(f"cannot assign {type(value).__name__} '{name}': super().__init__() should be "
                                 "called first in the __init__ of a Layer subclass")
            object.__setattr__(self, name, value)
            return
        layers, buffers = d["_sub_layers"], d["_buffers"]
        if is_parameter(value):
            _discard(name, d, buffers, layers)
            self._non_persistable_buffer_names_set.discard(name)
            params[name] = value
        elif isinstance(value, Layer):
            _discard(name, d, params, buffers)
            layers[name] = value
        elif name in params:
            _clear_slot(params, name, value, "parameter", "Parameter")
        elif name in layers:
            _clear_slot(layers, name, value, "sublayer", "Layer")
        elif isinstance(value, Tensor):
            # a plain tensor attribute is a buffer, not persistable unless register_buffer said so
            d.pop(name, None)
            if name not in buffers:
                self._non_persistable_buffer_names_set.add(name)
            buffers[name] = value
        elif name in buffers:
            _clear_slot(buffers, name, value, "buffer", "Tensor")
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        try:
            self._delete_attribute(name)
        finally:
            structure.bump()

    def _delete_attribute(self, name: str) -> None:
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del d["_parameters"][name]
        elif name in d.get("_sub_layers", ()):
            del d["_sub_layers"][name]
        elif name in d.get("_buffers", ()):
            del d["_buffers"][name]
            self._non_persistable_buffer_names_set.discard(name)
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(type(self))) | set(self.__dict__) | set(self._parameters)
                      | set(self._sub_layers) | set(self._buffers))

    # ----- registration
    def add_sublayer(self, name: str, sublayer: "Layer | None") -> "Layer | None":
        """Register `sublayer` under `name` (reachable as `self.<name>`)."""
        if sublayer is not None and not isinstance(sublayer, Layer):
            raise TypeError(f"add_sublayer: sublayer must be a Layer or None, got {type(sublayer).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"add_sublayer: name must be a str, got {type(name).__name__}")
        self._sub_layers[name] = sublayer
        return sublayer

    def add_parameter(self, name: str, parameter: Parameter | None) -> Parameter | None:
        """Register `parameter` under `name` (reachable as `self.<name>`)."""
        _name_checks(self, name, "_parameters", "parameter")
        if parameter is not None and not is_parameter(parameter):
            raise TypeError(f"The parameter to be added should be a Parameter, but received "
                            f"{type(parameter).__name__}.")
        self._parameters[name] = parameter
        return parameter

    def register_buffer(self, name: str, tensor: Tensor | None, persistable: bool = True) -> None:
        """Register a non-trainable tensor (saved in state_dict when persistable)."""
        _name_checks(self, name, "_buffers", "buffer")
        if tensor is not None and (not isinstance(tensor, Tensor) or is_parameter(tensor)):
            raise TypeError(f"The registered buffer should be a Tensor (not a Parameter), but received "
                            f"{type(tensor).__name__}.")
        self._buffers[name] = tensor
        if persistable:
            self._non_persistable_buffer_names_set.discard(name)
        else:
            self._non_persistable_buffer_names_set.add(name)

    def create_parameter(self, shape: Any, attr: Any = None, dtype: Any = None, is_bias: bool = False,
                         default_initializer: Any = None) -> Parameter | None:
        """A new parameter named after this layer ("<layer>_N.w_M"); None when attr is False."""
        if isinstance(attr, str) and attr == "":
            attr = None
        return _create_parameter(self._full_name, shape, attr, dtype, is_bias, default_initializer)

    # ----- traversal
    def named_sublayers(self, prefix: str = "", include_self: bool = False,
                        layers_set: set | None = None) -> Iterator[tuple[str, "Layer"]]:
        """(structured name, layer) for every sublayer, each once, depth first."""
        if layers_set is None:
            layers_set = set()
        if include_self and self not in layers_set:
            layers_set.add(self)
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            yield from layer.named_sublayers(prefix + ("." if prefix else "") + key, True, layers_set)

    def sublayers(self, include_self: bool = False) -> list["Layer"]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self) -> Iterator[tuple[str, "Layer"]]:
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and layer not in seen:
                seen.add(layer)
                yield name, layer

    def children(self) -> Iterator["Layer"]:
        for _, layer in self.named_children():
            yield layer

    def _named_members(self, store: str, prefix: str, include_sublayers: bool) -> Iterator[tuple[str, Tensor]]:
        seen = set()
        layers = self.named_sublayers(prefix, include_self=True) if include_sublayers else [(prefix, self)]
        for layer_prefix, layer in layers:
            for key, value in getattr(layer, store).items():
                if value is None or value in seen:
                    continue
                seen.add(value)
                yield layer_prefix + ("." if layer_prefix else "") + key, value

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(structured name, parameter) pairs, each parameter once, in registration order."""
        return self._named_members("_parameters", prefix, include_sublayers)

    def parameters(self, include_sublayers: bool = True) -> list[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, include_sublayers)

    def buffers(self, include_sublayers: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn: Callable[["Layer"], Any]) -> "Layer":
        """Call fn on every sublayer (children first) and then on self."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    # ----- modes and gradients
    def train(self) -> "Layer":
        """Training mode for this layer and all its sublayers (Dropout drops, BatchNorm updates stats)."""
        for layer in self.sublayers(include_self=True):
            layer.training = True
        return self

    def eval(self) -> "Layer":
        """Evaluation mode for this layer and all its sublayers."""
        for layer in self.sublayers(include_self=True):
            layer.training = False
        return self

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        """Zero (or drop) the gradients of all trainable parameters."""
        for p in self.parameters():
            if p.trainable:
                p.clear_gradient(set_to_zero)

    def full_name(self) -> str:
        """The unique name of this layer ("linear_0"), prefix of its parameters' names."""
        return self._full_name

    # ----- state dict
    def _state_dict_impl(self, destination: dict | None, include_sublayers: bool, prefix: str,
                         include_non_persistable_buffer: bool, use_hook: bool) -> dict:
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and (include_non_persistable_buffer
                                    or name not in self._non_persistable_buffer_names_set):
                destination[prefix + name] = buf
        if include_sublayers:
            for layer_name, layer in self._sub_layers.items():
                if layer is not None:
                    layer._state_dict_impl(destination, True, prefix + layer_name + ".",
                                           include_non_persistable_buffer, use_hook)
        if use_hook:
            for hook in self._state_dict_hooks.values():
                result = hook(destination)
                if result is not None:
                    destination = result
        return destination

    def state_dict(self, destination: dict | None = None, include_sublayers: bool = True,
                   structured_name_prefix: str = "", use_hook: bool = True) -> dict:
        """Parameters and persistable buffers by structured name ("fc1.weight", "bn._mean")."""
        return self._state_dict_impl(destination, include_sublayers, structured_name_prefix, False, use_hook)

    def to_static_state_dict(self, destination: dict | None = None, include_sublayers: bool = True,
                             structured_name_prefix: str = "", use_hook: bool = True) -> dict:
        """As state_dict, with the non-persistable buffers too."""
        return self._state_dict_impl(destination, include_sublayers, structured_name_prefix, True, use_hook)

    def set_state_dict(self, state_dict: dict, use_structured_name: bool = True) -> tuple[list[str], list[str]]:
        """Load values into parameters and buffers; returns (missing_keys, unexpected_keys).

        Every value is checked first (a wrong shape raises ValueError naming the key), so nothing
        is written unless all present entries fit. Missing keys are reported and left untouched.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"set_state_dict: state_dict must be a dict, got {type(state_dict).__name__}")
        missing, matched, used = [], [], set()
        for key, target in self._state_dict_impl(None, True, "", False, False).items():
            key_name = key if use_structured_name else target.name
            if key_name not in state_dict:
                missing.append(key_name)
                continue
            value = state_dict[key_name]
            if not isinstance(value, Tensor):
                try:
                    value = np.asarray(value)
                except Exception:
                    value = None
                if value is None or value.dtype.kind not in "biufc":
                    raise TypeError(f"set_state_dict: the value of '{key_name}' must be a Tensor or a numeric "
                                    f"array, got {type(state_dict[key_name]).__name__}")
            if list(value.shape) != target.shape:
                raise ValueError(f"set_state_dict: '{key_name}' receives a shape {list(value.shape)}, "
                                 f"but the expected shape is {target.shape}")
            matched.append((target, value))
            used.add(key_name)
        unexpected = [k for k in state_dict if k not in used]
        if missing:
            warnings.warn(f"set_state_dict: skip loading for {', '.join(missing)}: not found in the provided dict",
                          stacklevel=2)
        for target, value in matched:
            target.set_value(value)
        return missing, unexpected

    set_dict = set_state_dict
    load_dict = set_state_dict

    # ----- dtype / device
    def to(self, device: Any = None, dtype: Any = None, blocking: bool | None = None) -> "Layer":
        """Move / cast parameters and buffers in place (the same Parameter objects keep their identity)."""
        return self._to_impl(device, dtype, blocking, include_sublayers=True, floating_only=True)

    def _to_impl(self, device: Any, dtype: Any, blocking: bool | None, include_sublayers: bool,
                 floating_only: bool) -> "Layer":
        if device is None and dtype is None:
            return self
        if blocking is not None and not isinstance(blocking, bool):
            raise TypeError(f"to: argument 'blocking' must be a bool or None, got {type(blocking).__name__}")
        place = None if device is None else to_place(device)
        np_dtype = None if dtype is None else _dt.to_np_dtype(dtype)
        xp = None if place is None else array_module(place)
        layers = self.sublayers(include_self=True) if include_sublayers else [self]
        for layer in layers:
            for t in itertools.chain(layer._parameters.values(), layer._buffers.values()):
                if t is None or (floating_only and t._data.dtype.kind != "f"):
                    continue
                _convert_(t, np_dtype, place, xp)
                if t._grad is not None:
                    _convert_(t._grad, np_dtype, place, xp)
            if np_dtype is not None:
                layer._dtype = _dt.from_np_dtype(np_dtype).name
        return self

    def float(self, excluded_layers: Any = None) -> "Layer":
        """Cast floating parameters and buffers to float32 (except in the excluded layer types)."""
        return self._cast_floating("float32", excluded_layers)

    def float16(self, excluded_layers: Any = None) -> "Layer":
        """Cast floating parameters and buffers to float16 (except in the excluded layer types;
        by default the legacy nn.BatchNorm, as Paddle)."""
        if excluded_layers is None:
            from .norm import BatchNorm  # noqa: PLC0415 - norm builds on this module
            excluded_layers = [BatchNorm]
        return self._cast_floating("float16", excluded_layers)

    def _cast_floating(self, dtype: str, excluded_layers: Any) -> "Layer":
        if excluded_layers is None:
            excluded = ()
        elif isinstance(excluded_layers, type):
            excluded = (excluded_layers,)
        elif isinstance(excluded_layers, (list, tuple)):
            excluded = tuple(excluded_layers)
        else:
            raise TypeError(f"excluded_layers should be a Layer type or a list of them, "
                            f"but got {type(excluded_layers).__name__}.")
        for layer in self.sublayers(include_self=True):
            if type(layer) not in excluded:
                layer._to_impl(None, dtype, None, include_sublayers=False, floating_only=True)
        return self

    # ----- printing
    def extra_repr(self) -> str:
        """The layer's own settings, shown inside its repr; subclasses override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        sub_lines = [f"({name}): {_addindent(repr(layer), 2)}" for name, layer in self._sub_layers.items()]
        text = type(self).__name__ + "("
        if len(extra_lines) > 1:
            text += "\n  " + "\n  ".join(extra_lines) + "\n"
        elif extra_lines:
            text += extra_lines[0]
        if sub_lines:
            text += "\n  " + "\n  ".join(sub_lines) + "\n"
        return text + ")"


def _discard(name: str, *stores: dict) -> None:
    for store in stores:
        store.pop(name, None)


def _clear_slot(store: dict, name: str, value: Any, kind: str, type_name: str) -> None:
    """`layer.<name> = value` for a name already in `store` with a value of the wrong type: only None is allowed."""
    if value is not None:
        raise TypeError(f"assignment to {kind} '{name}' should be of type {type_name} or None, "
                        f"but got '{type(value).__name__}'")
    store[name] = None


def _convert_(t: Tensor, np_dtype: np.dtype | None, place: Any, xp: Any) -> None:
    """Cast / move `t`'s array, keeping the Tensor object (so every holder sees the change)."""
    arr = t._data
    if place is not None and place != t.place:
        arr = xp.asarray(arr) if place.kind == "gpu" else arr.get()
    if np_dtype is not None and arr.dtype != np_dtype:
        arr = arr.astype(np_dtype)
    if arr is not t._data:
        t._replace_data(arr)


def _functional_layer(cls_name: str, fn_name: str, settings: list[tuple[str, Any]], doc: str) -> type:
    """A Layer class whose forward(x) is `F.<fn_name>(x, **settings)`.

    `settings` lists the constructor's arguments in Paddle's order with their defaults
    (`_REQUIRED` for none); each is kept as `self._<name>` and passed to the functional by
    keyword. A trailing `name` argument is accepted, as in Paddle, and not passed on.
    """
    P = inspect.Parameter
    sig = inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD)]
                            + [P(n, P.POSITIONAL_OR_KEYWORD, default=d) for n, d in settings]
                            + [P("name", P.POSITIONAL_OR_KEYWORD, default=None)])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{cls_name}: {e}") from None
        bound.apply_defaults()
        Layer.__init__(self)
        values = dict(bound.arguments)
        del values["self"]
        self._name = values.pop("name")
        for key, value in values.items():
            object.__setattr__(self, "_" + key, value)
        self._settings = TrackedDict(values)  # read by compiled forwards: changes must move the structure epoch

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, fn_name)(x, **self._settings)

    def extra_repr(self) -> str:
        parts = [f"{k}={v}" for k, v in self._settings.items()]
        if self._name:
            parts.append(f"name={self._name}")
        return ", ".join(parts)

    __init__.__signature__ = sig
    return type(cls_name, (Layer,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                     "__doc__": doc, "__module__": "runtime.nn"})
