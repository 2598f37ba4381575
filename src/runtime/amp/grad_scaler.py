"""paddle.amp.GradScaler (and its base AmpScaler): dynamic loss scaling with Paddle 3.3.1's state machine.

A scaler is enabled only where Paddle enables one, on a GPU place. On the CPU it warns when built and
passes everything through, as Paddle's CPU build does: scale() returns the loss itself, step() and
minimize() are the optimizer's, an inf gradient reaches the parameters.

Enabled, a step unscales every gradient of the optimizer's parameters (grad * (1 / scale), computed in
float32 for float16 gradients) and checks the scaled gradients for inf/nan on the device in the same
pass; a single host read of the combined flag decides whether the optimizer steps at all (a skipped
step changes no parameter and no accumulator). update() then moves the scale: times decr_ratio after
`decr_every_n_nan_or_inf` steps with inf/nan, times incr_ratio after `incr_every_n_steps` finite
steps in a row (each kind of step resets the other's count).
"""
from __future__ import annotations

import enum
import warnings
from collections import defaultdict
from typing import Any

import numpy as np

from ..autograd import no_grad
from ..ops.math import cast, isfinite, logical_not, multiply, reciprocal
from ..ops.reduction import all as all_of
from ..ops.shape import reshape, stack
from ..tensor import Tensor, to_tensor
from .state import amp_place, amp_place_ok, amp_state

__all__ = ["AmpScaler", "GradScaler", "OptimizerState"]


class OptimizerState(enum.Enum):
    """Where one optimizer is in the current step: unscale_() and step() each happen once per update()."""

    INIT = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_optimizer_state() -> dict:
    return {"state": OptimizerState.INIT}


def _params_of(optimizer: Any) -> list:
    """The optimizer's parameters, from its param groups when it has dicts of them."""
    groups = getattr(optimizer, "_param_groups", None)
    if groups and isinstance(groups[0], dict):
        return [p for group in groups for p in group["params"]]
    return list(optimizer._parameter_list or ())


def _scale_tensor(value: float) -> Tensor:
    """The loss scale as Paddle keeps it: a float32 tensor of shape [1] on the current place."""
    return to_tensor(np.array([value], dtype=np.float32))


class AmpScaler:
    """Loss scaling for mixed-precision training (module docstring); GradScaler adds step/update/unscale_."""

    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 15, incr_ratio: float = 2.0,
                 decr_ratio: float = 0.5, incr_every_n_steps: int = 1000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True) -> None:
        if enable and not amp_place_ok():
            warnings.warn(f"AmpScaler can only be enabled on CUDAPlace, XPUPlace and CustomPlace, current place is "
                          f"{amp_place()!r}, so it makes no effect.", UserWarning,
                          stacklevel=3 if isinstance(self, GradScaler) else 2)  # the user's line
            enable = False
        self._enable = enable
        self._use_dynamic_loss_scaling = False
        self._init_loss_scaling = 1.0
        self._scale = None
        self._incr_ratio, self._decr_ratio = incr_ratio, decr_ratio
        self._incr_every_n_steps, self._decr_every_n_nan_or_inf = incr_every_n_steps, decr_every_n_nan_or_inf
        if not enable:
            return
        if not incr_ratio > 1.0:
            raise AssertionError("The incr_ratio must be > 1.0.")
        if not decr_ratio < 1.0:
            raise AssertionError("The decr_ratio must be < 1.0.")
        self._init_loss_scaling = init_loss_scaling
        self._incr_count = 0
        self._decr_count = 0
        self._use_dynamic_loss_scaling = use_dynamic_loss_scaling
        self._found_inf = to_tensor(np.array([False]))
        self._scale = _scale_tensor(init_loss_scaling)
        self._cache_found_inf = None
        self._optimizer_states = defaultdict(_refresh_optimizer_state)

    # ----------------------------------------------------------- one training step
    def scale(self, var: Tensor) -> Tensor:
        """`var` times the loss scale (shape [1], as Paddle), or `var` itself when the scaler is disabled.

        As Paddle, a dynamic scaler used when the last auto_cast asked for a dtype other than float16 (or
        before any auto_cast) disables itself with a warning: loss scaling is for float16."""
        if not isinstance(var, Tensor):
            raise TypeError(f"The type of 'var' in AmpScaler.scale() must be Tensor, but received "
                            f"{type(var).__name__}.")
        if self._enable and amp_state.amp_dtype != "float16" and self._use_dynamic_loss_scaling:
            self._enable = False
            self._use_dynamic_loss_scaling = False
            self._init_loss_scaling = 1.0
            warnings.warn(f"It is not recommended to use dynamic loss scaling for {amp_state.amp_dtype}, so "
                          "GradScaler is disable by default.", UserWarning, stacklevel=2)
        if not self._enable:
            return var
        return var * self._scale

    def minimize(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """optimizer.minimize(*args, **kwargs) unless a gradient is inf/nan, then the scale update."""
        if not self._enable:
            return optimizer.minimize(*args, **kwargs)
        if self._optimizer_states[id(optimizer)]["state"] is OptimizerState.INIT:
            self._unscale(optimizer)
        result = (None, None)
        if bool(self._found_inf):
            self._cache_found_inf = True
        else:
            result = optimizer.minimize(*args, **kwargs)
            self._cache_found_inf = False
        if self._use_dynamic_loss_scaling:
            self._update()
        self._optimizer_states = defaultdict(_refresh_optimizer_state)
        return result

    @no_grad()
    def _unscale(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale and note whether any scaled one was inf/nan."""
        if not self._enable:
            return
        optimizer_state = self._optimizer_states[id(optimizer)]
        if optimizer_state["state"] is OptimizerState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["state"] is OptimizerState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = reshape(reciprocal(self._scale), [])
        finite = []
        for p in _params_of(optimizer):
            g = p.grad
            if g is None:
                continue
            finite.append(all_of(isfinite(g)))
            if g.dtype.name == "float16":
                p.grad = cast(multiply(cast(g, "float32"), inverse), "float16")
            else:
                p.grad = multiply(g, inverse if inverse.dtype == g.dtype else cast(inverse, g.dtype))
        self._found_inf = logical_not(all_of(stack(finite))) if finite else to_tensor(np.array([False]))
        optimizer_state["state"] = OptimizerState.UNSCALED

    def _update(self) -> None:
        """Move the scale after a step (module docstring), printing a decrease as Paddle does."""
        if not self._enable:
            return
        if self._cache_found_inf:
            self._incr_count = 0
            self._decr_count += 1
            if self._decr_count == self._decr_every_n_nan_or_inf:
                current = float(self._scale.numpy()[0])
                print(f"Found inf or nan, current scale is: {current}, decrease to: {current}*"
                      f"{float(self._decr_ratio)}")
                self._scale = self._scale * self._decr_ratio
                self._decr_count = 0
        else:
            self._decr_count = 0
            self._incr_count += 1
            if self._incr_count == self._incr_every_n_steps:
                self._scale = self._scale * self._incr_ratio
                self._incr_count = 0

    # ----------------------------------------------------------- settings
    def is_enable(self) -> bool:
        """Whether the scaler scales (False on a CPU place, as Paddle's CPU build)."""
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        """Whether the scale moves with inf/nan steps (False for a fixed scale, and when disabled)."""
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        """The initial scale (1.0 when disabled, as Paddle)."""
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling: float) -> None:
        """Set the initial scale and restart the current scale from it."""
        self._init_loss_scaling = new_init_loss_scaling
        self._scale = _scale_tensor(new_init_loss_scaling)

    def get_incr_ratio(self) -> float:
        """The factor the scale grows by after incr_every_n_steps finite steps."""
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio: float) -> None:
        """Set the growth factor (> 1, an AssertionError otherwise, as Paddle's assert)."""
        if not new_incr_ratio > 1.0:
            raise AssertionError("The new_incr_ratio must be > 1.0.")
        self._incr_ratio = new_incr_ratio

    def get_decr_ratio(self) -> float:
        """The factor the scale shrinks by after decr_every_n_nan_or_inf inf/nan steps."""
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio: float) -> None:
        """Set the shrink factor (< 1, an AssertionError otherwise, as Paddle's assert)."""
        if not new_decr_ratio < 1.0:
            raise AssertionError("The new_decr_ratio must be < 1.0.")
        self._decr_ratio = new_decr_ratio

    def get_incr_every_n_steps(self) -> int:
        """How many finite steps in a row grow the scale."""
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps: int) -> None:
        """Set how many finite steps in a row grow the scale."""
        self._incr_every_n_steps = new_incr_every_n_steps

    def get_decr_every_n_nan_or_inf(self) -> int:
        """How many inf/nan steps (since the last finite one) shrink the scale."""
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf: int) -> None:
        """Set how many inf/nan steps shrink the scale."""
        self._decr_every_n_nan_or_inf = new_decr_every_n_nan_or_inf

    # ----------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """The scale (a NumPy array of shape [1]), ratios, step counts and mode; {} when disabled."""
        if not self._enable:
            return {}
        return {"scale": self._scale.numpy(), "incr_ratio": self._incr_ratio, "decr_ratio": self._decr_ratio,
                "incr_every_n_steps": self._incr_every_n_steps,
                "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf, "incr_count": self._incr_count,
                "decr_count": self._decr_count, "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state_dict(); ignored when disabled, an error for the {} of a disabled scaler."""
        if not self._enable:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The input state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_loss_scaling = state_dict["scale"][0]
        self._scale = _scale_tensor(self._init_loss_scaling)
        self._incr_ratio = state_dict["incr_ratio"]
        self._decr_ratio = state_dict["decr_ratio"]
        self._incr_every_n_steps = state_dict["incr_every_n_steps"]
        self._decr_every_n_nan_or_inf = state_dict["decr_every_n_nan_or_inf"]
        self._incr_count = state_dict["incr_count"]
        self._decr_count = state_dict["decr_count"]
        self._use_dynamic_loss_scaling = state_dict["use_dynamic_loss_scaling"]


class GradScaler(AmpScaler):
    """AmpScaler with Paddle's GradScaler defaults (scale 2**16, grow every 2000 steps) and the split
    step(): `scaler.scale(loss).backward(); scaler.step(opt); scaler.update()`."""

    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 16, incr_ratio: float = 2.0,
                 decr_ratio: float = 0.5, incr_every_n_steps: int = 2000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True) -> None:
        super().__init__(enable, init_loss_scaling, incr_ratio, decr_ratio, incr_every_n_steps,
                         decr_every_n_nan_or_inf, use_dynamic_loss_scaling)

    def step(self, optimizer: Any) -> None:
        """optimizer.step() unless a gradient is inf/nan (gradients are unscaled first, if unscale_ was not
        called); once per update()."""
        if not self._enable:
            return optimizer.step()
        optimizer_state = self._optimizer_states[id(optimizer)]
        if optimizer_state["state"] is OptimizerState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["state"] is OptimizerState.INIT:
            self._unscale(optimizer)
        if bool(self._found_inf):
            self._cache_found_inf = True
        else:
            optimizer.step()
            self._cache_found_inf = False
        optimizer_state["state"] = OptimizerState.STEPPED
        if not self._use_dynamic_loss_scaling:
            self._optimizer_states = defaultdict(_refresh_optimizer_state)
        return None

    def update(self) -> None:
        """Move the scale after this step's step() calls (a fixed scale stays)."""
        if not self._enable:
            return
        if self._use_dynamic_loss_scaling:
            self._update()
            self._optimizer_states = defaultdict(_refresh_optimizer_state)

    def unscale_(self, optimizer: Any) -> None:
        """Unscale the optimizer's gradients now (e.g. before clipping them); step() will not again."""
        return self._unscale(optimizer)
