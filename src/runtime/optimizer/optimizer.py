"""The Optimizer base: parameter groups, learning rates, regularisation, clipping, state.

A subclass names its update op (from `runtime.ops.optimizer_ops`), its hyperparameters and
its accumulators, and maps one parameter to the op's inputs. `step()` then works in two
phases. First it prepares every update — gradient clipping and regularisation (out of
place), the learning rate of each parameter, accumulators — and runs the op's meta check on
every parameter (memoised per shape/dtype/attributes). Only when all of that succeeded does it
run the kernels, which update parameters and accumulators in place. So a step that fails on
any parameter (a gradient of the wrong shape or dtype, a non-finite learning rate, a bad
loaded state) leaves every parameter and accumulator exactly as it was. The kernels allocate
nothing (a per-thread scratch buffer); only an interrupt or an out-of-memory error raised
inside a kernel could still leave an update half done.

Kernels are called directly on the arrays, skipping eager dispatch: an optimizer step is not
recorded by autograd, and the per-op dispatch overhead would be paid for every parameter. For
elementwise rules, small parameters sharing their scalars are updated together, one kernel call
per batch (`multi_tensor`, which also lays accumulators out flat); the staging copies are made
before the first kernel runs, so the all-or-nothing guarantee holds.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from ..autograd import no_grad
from ..mode import in_dynamic_mode
from ..nn.clip import ClipGradBase
from ..ops import optimizer_ops
from ..ops.registry import OpDef
from ..place import CPUPlace, array_module, is_device_array, module_of, move, place_of_array
from ..regularizer import L2Decay, WeightDecayRegularizer
from ..tensor import Tensor
from . import multi_tensor
from .lr import LRScheduler

__all__ = ["Optimizer"]

# Hyperparameter kinds: (test, words for the error); "bool" options are flags, not numbers
_CHECKS: dict[str, tuple[Callable[[float], bool], str]] = {
    "unit": (lambda v: 0.0 <= v < 1.0, "in [0, 1)"),
    "closed_unit": (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"),
    "nonneg": (lambda v: v >= 0.0, ">= 0"),
}


_F32 = np.dtype(np.float32)


def _float_arg(api: str, arg: str, value: Any) -> float:
    """A hyperparameter as a Python float (numbers and one-element Tensors accepted)."""
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(f"{api}: '{arg}' must be a number or a one-element Tensor, got shape {value.shape}")
        return float(value.item())
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{api}: '{arg}' must be a number, got {type(value).__name__}")
    return float(value)


def _as_regularizer(api: str, weight_decay: Any) -> WeightDecayRegularizer | None:
    """Paddle's rule: a number means L2Decay(number); a regularizer is used as is."""
    if weight_decay is None or isinstance(weight_decay, WeightDecayRegularizer):
        return weight_decay
    return L2Decay(_float_arg(api, "weight_decay", weight_decay))


def _on_place(value: Any, place: Any):
    """A loaded state value (host data or a device array) as an array on `place`."""
    return move(value if is_device_array(value) else np.asarray(value), place)


def _check_clip(api: str, grad_clip: Any) -> None:
    if grad_clip is not None and not isinstance(grad_clip, ClipGradBase):
        raise TypeError(f"{api}: 'grad_clip' should be an instance of ClipGradBase's derived class "
                        f"(ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue), got {type(grad_clip).__name__}")


class _Group:
    """Parameters updated with the same options; `explicit` when the user gave a param-group dict."""

    __slots__ = ("params", "options", "explicit")

    def __init__(self, params: list, options: dict, explicit: bool):
        self.params = params
        self.options = options
        self.explicit = explicit


class Optimizer:
    """Base of all optimizers (Paddle 2.x `paddle.optimizer.Optimizer`)."""

    _op: OpDef
    # per-group hyperparameters: name -> check kind in _CHECKS
    _hyper_checks: dict[str, str] = {}
    # accumulators: (Paddle's name, None for zeros like the param or a hyperparameter to fill [1] with)
    _accumulator_specs: tuple[tuple[str, str | None], ...] = ()
    # the update of an element depends only on that element and on scalars, so the update of many
    # small parameters may run as one (see `multi_tensor`)
    _elementwise: bool = True

    def __init__(self, learning_rate: float | LRScheduler, parameters: Iterable | None = None,
                 weight_decay: float | WeightDecayRegularizer | None = None, grad_clip: Any = None,
                 name: str | None = None):
        api = type(self).__name__
        if not isinstance(learning_rate, LRScheduler):
            if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
                raise TypeError(f"{api}: learning rate should be float or LRScheduler, got "
                                f"{type(learning_rate).__name__} here")
            learning_rate = float(learning_rate)
        _check_clip(api, grad_clip)
        self._learning_rate = learning_rate
        self._grad_clip = grad_clip
        self._name = name
        self.regularization = self._regularization_of(weight_decay)
        self._default_dict = {"weight_decay": weight_decay, "grad_clip": grad_clip,
                              **{k: getattr(self, "_" + k) for k in self._hyper_checks}}
        # accumulators by name, then by id(param); _owners keeps those params alive so ids stay unique
        self._accumulators: dict[str, dict[int, Tensor]] = {n: {} for n, _ in self._accumulator_specs}
        self._owners: dict[int, Tensor] = {}
        self._flat_slots: multi_tensor.Slots = {}
        self._accumulators_holder: dict[str, Any] = {}
        self._static_lr_var: str | None = None  # the lr var of the last static minimize
        self._parameter_list, self._param_groups, self._groups = self._build_groups(parameters)

    # ----------------------------------------------------------- construction
    def _regularization_of(self, weight_decay: Any) -> Any:
        """The optimizer-wide regularizer (AdamW overrides: its weight_decay is a decay coefficient)."""
        return _as_regularizer(type(self).__name__, weight_decay)

    def _check_hyper(self, options: dict) -> None:
        api = type(self).__name__
        for k, kind in self._hyper_checks.items():
            value = options[k]
            if kind == "bool":
                options[k] = bool(value)
                continue
            ok, what = _CHECKS[kind]
            v = _float_arg(api, k, value)
            if not ok(v) or math.isnan(v):
                raise ValueError(f"{api}: invalid value of {k} ({value}), expected {k} {what}")
            options[k] = v

    def _build_groups(self, parameters: Iterable | None):
        api = type(self).__name__
        if parameters is None:
            return None, [], []
        if isinstance(parameters, (Tensor, dict)) or not hasattr(parameters, "__iter__"):
            raise TypeError(f"{api}: `parameters` argument given to the optimizer should be an iterable of "
                            f"Tensors or of param-group dicts, but got {type(parameters).__name__}")
        plist = list(parameters)
        seen: set[int] = set()

        def take(params: list, where: str) -> list:
            for p in params:
                if not isinstance(p, Tensor):
                    raise TypeError(f"{api}: {where} must hold Tensors (Parameters), got {type(p).__name__}")
                if id(p) in seen:
                    raise ValueError(f"{api}: some parameters appear in more than one parameter group "
                                     f"(parameter '{p.name}')")
                seen.add(id(p))
            return params

        if plist and isinstance(plist[0], dict):
            groups, param_groups = [], []
            for i, g in enumerate(plist):
                if not isinstance(g, dict) or "params" not in g:
                    raise TypeError(f"{api}: parameters[{i}] must be a dict with a 'params' entry, got "
                                    f"{type(g).__name__}")
                params = g["params"]
                if isinstance(params, Tensor):
                    params = [params]
                elif isinstance(params, set):
                    raise TypeError(f"{api}: optimizer parameters should be in ordered collections, but "
                                    "received set, please use list instead")
                options = {**self._default_dict, **{k: v for k, v in g.items() if k != "params"}}
                options.setdefault("learning_rate", 1.0)
                options["learning_rate"] = _float_arg(api, "learning_rate", options["learning_rate"])
                self._check_hyper(options)
                self._regularization_of(options["weight_decay"])
                _check_clip(api, options["grad_clip"])
                group = {**options, "params": take(list(params), f"parameters[{i}]['params']")}
                param_groups.append(group)
                groups.append(_Group(group["params"], options, True))
            return plist, param_groups, groups
        take(plist, "parameters")
        options = dict(self._default_dict)
        self._check_hyper(options)
        return plist, plist, [_Group(plist, options, False)]

    # ----------------------------------------------------------- learning rate
    def get_lr(self) -> float:
        """The current global learning rate (a scheduler's current value)."""
        lr = self._learning_rate
        return float(lr()) if isinstance(lr, LRScheduler) else lr

    def set_lr(self, value: float) -> None:
        """Set a float learning rate (not allowed when the optimizer holds a scheduler)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"The type of 'value' in optimizer.set_lr must be float, but received "
                            f"{type(value).__name__}")
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError("optimizer's learning rate can't be LRScheduler when invoke this API, because "
                               "this will lead to conflict")
        self._learning_rate = float(value)
        if self._static_lr_var is not None:
            from .static_mode import set_lr_var  # noqa: PLC0415 - static_mode needs static and executor, layers above us
            set_lr_var(self._static_lr_var, self._learning_rate)

    def set_lr_scheduler(self, scheduler: LRScheduler) -> None:
        """Drive the learning rate by `scheduler` from now on."""
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"The type of 'scheduler' in optimizer.set_lr_scheduler must be LRScheduler, but "
                            f"received {type(scheduler).__name__}")
        self._learning_rate = scheduler

    # ----------------------------------------------------------- gradients
    def _all_params(self) -> list:
        return [p for g in self._groups for p in g.params]

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Clear the gradient of every trainable parameter (zeroed by default, as Paddle)."""
        for p in self._all_params():
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def _require_params(self, api: str) -> None:
        if self._parameter_list is None:
            raise AttributeError(f"{type(self).__name__}.{api}: parameters argument given to the Optimizer "
                                 "should not be None in dynamic mode")

    @no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient (atomically: all or nothing)."""
        if not in_dynamic_mode():
            raise RuntimeError(f"{type(self).__name__}.step is for dynamic mode; in static mode call "
                               "minimize(loss) while building the program, then run it with an Executor")
        self._require_params("step")
        plan = []
        for group in self._groups:
            pairs = []
            for p in group.params:
                if p.stop_gradient:
                    continue
                g = p.grad
                if g is not None:
                    pairs.append((p, g))
            if pairs:
                plan.append((group, pairs))
        self._apply(plan)

    def minimize(self, loss: Tensor, startup_program: Any = None, parameters: Iterable | None = None,
                 no_grad_set: Any = None):
        """Update the parameters from `loss`'s gradients; returns (None, params_grads) in dynamic mode.

        As in Paddle, gradients come from a `loss.backward()` already run; when `loss`'s graph has
        not been back-propagated yet, `minimize` runs `loss.backward()` itself first. In static
        mode it appends the backward, clip, regularisation and update ops to `loss`'s program
        and returns (optimize_ops, params_grads) (see `static_mode`).
        """
        if not in_dynamic_mode():
            from .static_mode import minimize_static  # noqa: PLC0415 - static_mode needs static and executor, layers above us
            return minimize_static(self, loss, startup_program, parameters, no_grad_set)
        if not isinstance(loss, Tensor):
            raise TypeError(f"{type(self).__name__}.minimize: 'loss' must be a Tensor, got {type(loss).__name__}")
        node = loss._node
        if node is not None and not node.released:
            loss.backward()
        skip = set()
        for item in no_grad_set or ():
            skip.add(item if isinstance(item, str) else id(item))
        if parameters is None:
            self._require_params("minimize")
            chosen = {id(p) for p in self._all_params()}
            groups = self._groups
        else:
            params = list({id(p): p for p in parameters}.values())
            chosen = {id(p) for p in params}
            options = dict(self._default_dict)
            self._check_hyper(options)
            groups = [_Group(params, options, False)]
        params_grads, plan = [], []
        with no_grad():
            for group in groups:
                pairs = []
                for p in group.params:
                    if p.stop_gradient or id(p) not in chosen or id(p) in skip or p.name in skip:
                        continue
                    g = p.grad
                    if g is not None:
                        pairs.append((p, g))
                if pairs:
                    params_grads.extend(pairs)
                    plan.append((group, pairs))
            self._apply(plan)
        return None, params_grads

    # ----------------------------------------------------------- the update
    def _regularizer_for(self, param: Tensor, group: _Group) -> WeightDecayRegularizer | None:
        """Paddle's precedence: a group's weight_decay, else the parameter's own, else the optimizer's."""
        if group.explicit:
            return _as_regularizer(type(self).__name__, group.options["weight_decay"])
        reg = getattr(param, "regularizer", None)
        return reg if reg is not None else self.regularization

    def _lr_scale(self, param: Tensor, group: _Group) -> float:
        if group.explicit:
            return group.options["learning_rate"]
        attr = getattr(param, "optimize_attr", None)
        return 1.0 if attr is None else float(attr.get("learning_rate", 1.0))

    def _apply(self, plan: list) -> None:
        """Prepare and check every update, then run them all (see the module docstring)."""
        api = type(self).__name__
        op = self._op
        base_lr = self.get_lr()
        lr_arrays: dict[float, np.ndarray] = {}
        plan = [(group, pairs if group.options.get("grad_clip") is None else group.options["grad_clip"](pairs))
                for group, pairs in plan]
        new_accs, new_slots = self._create_accumulators(plan)
        updates = []
        for group, pairs in plan:
            for p, g in pairs:
                if g is None:
                    continue
                lr = base_lr * self._lr_scale(p, group)
                if not math.isfinite(lr):
                    raise ValueError(f"{api}.step: the learning rate of parameter '{p.name}' is {lr} "
                                     f"(global {base_lr} x parameter scale {self._lr_scale(p, group)}); "
                                     "expected a finite number")
                lr_arr = lr_arrays.get(lr)
                if lr_arr is None:
                    lr_arr = lr_arrays[lr] = np.array([lr])
                parr = p._data
                accs = tuple(self._accumulator(name, p, new_accs) for name, _ in self._accumulator_specs)
                arrays, attrs = self._op_inputs(p, g._data, lr_arr, accs, group)
                optimizer_ops.check(op, arrays, attrs)
                reg = self._regularizer_for(p, group)
                if reg is not None:
                    arrays = (arrays[0], reg._regularized(module_of(parr), parr, arrays[1]), *arrays[2:])
                updates.append((p, arrays, attrs))
        self._flat_slots.update(new_slots)  # every update checked: the new accumulators will be kept
        single, batches = (multi_tensor.plan(updates, self._per_element(), self._flat_slots)
                           if self._elementwise else (updates, ()))
        kernel = op.kernel
        for p, arrays, attrs in single:
            kernel(module_of(arrays[0]), *arrays, **attrs)
            p._version += 1
        for batch in batches:
            batch.run(kernel)
        for (name, pid), t in new_accs.items():
            self._accumulators[name][pid] = t
        for p, _, _ in updates:
            self._owners[id(p)] = p

    def _op_inputs(self, param: Tensor, grad, lr, accs: tuple, group: _Group) -> tuple[tuple, dict]:
        """The update op's input arrays and attributes for one parameter."""
        raise NotImplementedError

    def _per_element(self) -> tuple[bool, ...]:
        """Which update inputs (param, grad, learning_rate, accumulators...) hold one value per element
        of the parameter (the rest are one-element scalars)."""
        probe = (2, 2)
        options = dict.fromkeys((fill for _, fill in self._accumulator_specs if fill is not None), 0.0)
        return (True, True, False, *(self._accumulator_layout(fill, probe, _F32, options)[0] == probe
                                     for _, fill in self._accumulator_specs))

    # ----------------------------------------------------------- accumulators and state
    def _accumulator(self, name: str, param: Tensor, new_accs: dict):
        """The array of accumulator `name` of `param` (one created by this step's `_create_accumulators`
        until the step succeeds)."""
        t = self._accumulators[name].get(id(param))
        return (new_accs[(name, id(param))] if t is None else t)._data

    def _create_accumulators(self, plan: list) -> tuple[dict[tuple[str, int], Tensor], multi_tensor.Slots]:
        """({(name, id(param)): accumulator}, their flat slots) for the parameters of `plan` updated
        for the first time, created (or loaded from a set state) and not yet recorded. NumPy ones
        are views of one flat buffer per accumulator and dtype, small parameters first, so a
        multi-tensor batch's state is one contiguous slice (see `multi_tensor`)."""
        owners = self._owners  # a parameter updated before has all its accumulators
        todo = [(p, group) for group, pairs in plan for p, g in pairs if g is not None and id(p) not in owners]
        new_accs: dict[tuple[str, int], Tensor] = {}
        slots: multi_tensor.Slots = {}
        if not todo:
            return new_accs, slots
        todo.sort(key=lambda e: e[0]._data.size > multi_tensor.SMALL)  # stable: plan order within each part
        for name, fill in self._accumulator_specs:
            keys, requests = [], []
            for p, group in todo:
                key = (name, id(p))
                shape, dtype, value = self._accumulator_init(name, fill, p, group.options)
                if type(p._data) is np.ndarray:
                    keys.append(key)
                    requests.append((f"{p.name}_{name}_0", shape, dtype, value))
                else:
                    new_accs[key] = self._new_accumulator(name, p, shape, dtype, value, on_host=self._scalar_state(fill))
            for key, t in zip(keys, multi_tensor.allocate(requests, slots)):
                new_accs[key] = t
        return new_accs, slots

    def _accumulator_layout(self, fill: str | None, shape: tuple, dtype: np.dtype,
                            options: dict) -> tuple[tuple, np.dtype, float]:
        """(shape, dtype, initial value) of an accumulator of a parameter of `shape` and `dtype`:
        zeros like the parameter, or a [1] power filled with hyperparameter `fill` (float32 for
        float16 parameters). Eager and static optimizers both create accumulators from this."""
        if fill is None:
            return tuple(shape), dtype, 0.0
        return (1,), (np.dtype(np.float32) if dtype == np.float16 else dtype), options[fill]

    def _scalar_state(self, fill: str | None) -> bool:
        """Whether an accumulator with this fill is a [1] scalar (a beta power, see `_accumulator_layout`)."""
        return fill is not None

    def _accumulator_init(self, name: str, fill: str | None, param: Tensor, options: dict) -> tuple:
        """(shape, dtype, initial value) of accumulator `name` of `param`: the loaded state when one
        was set for it, else the layout's fill."""
        parr = param._data
        shape, dtype, value = self._accumulator_layout(fill, parr.shape, parr.dtype, options)
        key = f"{param.name}_{name}_0"
        loaded = self._accumulators_holder.get(key)
        if loaded is not None:
            value = move(loaded._data, param.place) if isinstance(loaded, Tensor) else loaded
            if tuple(np.shape(value)) != tuple(shape):
                raise ValueError(f"{type(self).__name__}: the loaded state '{key}' has shape "
                                 f"{list(np.shape(value))}, expected {list(shape)}")
        return shape, dtype, value

    def _new_accumulator(self, name: str, param: Tensor, shape: tuple, dtype, value, on_host: bool) -> Tensor:
        """An accumulator of a parameter on a device (NumPy ones are allocated flat instead): on the device,
        but a [1] power (`on_host`) on the host, as Paddle places them: the kernels read it as a Python
        number, which from device memory would wait for the device at every step."""
        place = CPUPlace() if on_host else param.place
        if isinstance(value, float):
            arr = array_module(place).full(shape, value, dtype)
        else:  # a loaded state, copied onto its place
            arr = _on_place(value, place).astype(dtype)
        t = Tensor._wrap(arr)
        t.name = f"{param.name}_{name}_0"
        t.persistable = True
        return t

    def _get_accumulator(self, name: str, param: Tensor) -> Tensor:
        """Accumulator `name` (e.g. 'moment1') of `param`; KeyError before its first update."""
        try:
            return self._accumulators[name][id(param)]
        except KeyError:
            raise KeyError(f"{type(self).__name__}: no accumulator {name!r} for parameter '{param.name}' "
                           "(accumulators are created at the first step)") from None

    def state_dict(self) -> dict:
        """Accumulators by Paddle's names ("{param.name}_moment1_0", ...) and the scheduler's state."""
        state: dict[str, Any] = dict(self._accumulators_holder)
        owners: dict[str, int] = {}
        for per_param in self._accumulators.values():
            for pid, t in per_param.items():
                if owners.setdefault(t.name, pid) != pid:
                    raise ValueError(f"{type(self).__name__}.state_dict: two parameters share the name behind "
                                     f"'{t.name}'; give parameters unique names to save optimizer state")
                state[t.name] = t
        if isinstance(self._learning_rate, LRScheduler):
            state["LR_Scheduler"] = self._learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        """Load what `state_dict()` returned (accumulators not created yet are loaded at first use)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"{type(self).__name__}.set_state_dict: expected a dict, got {type(state_dict).__name__}")
        writes = []
        for per_param in self._accumulators.values():
            for t in per_param.values():
                if t.name not in state_dict:
                    continue
                v = state_dict[t.name]
                v = v._data if isinstance(v, Tensor) else v
                if tuple(np.shape(v)) != t._data.shape:
                    raise ValueError(f"{type(self).__name__}.set_state_dict: '{t.name}' has shape "
                                     f"{list(np.shape(v))}, expected {list(t._data.shape)}")
                writes.append((t, v))
        if isinstance(self._learning_rate, LRScheduler) and "LR_Scheduler" in state_dict:
            self._learning_rate.set_state_dict(state_dict["LR_Scheduler"])
        for t, v in writes:
            t._data[...] = _on_place(v, place_of_array(t._data)).astype(t._data.dtype, copy=False)
        self._accumulators_holder = {k: v for k, v in state_dict.items() if k != "LR_Scheduler"}

    set_dict = set_state_dict

    def __repr__(self) -> str:
        return f"{type(self).__name__}(learning_rate={self._learning_rate!r})"
