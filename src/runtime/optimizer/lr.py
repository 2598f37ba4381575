"""`paddle.optimizer.lr`: learning-rate schedulers.

A scheduler holds `last_epoch` and `last_lr`; `step()` advances the epoch and recomputes the
rate with `get_lr()` (or the closed form when an explicit epoch is given); calling the
scheduler returns the current rate. Optimizers accept a scheduler as `learning_rate` and read
it at every step; the user calls `scheduler.step()`, as in Paddle.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Sequence

__all__ = ["LRScheduler", "NoamDecay", "PiecewiseDecay", "NaturalExpDecay", "InverseTimeDecay",
           "PolynomialDecay", "LinearWarmup", "ExponentialDecay", "MultiStepDecay", "StepDecay",
           "LambdaDecay", "MultiplicativeDecay", "ReduceOnPlateau", "CosineAnnealingDecay", "OneCycleLR",
           "CyclicLR", "LinearLR", "CosineAnnealingWarmRestarts"]


def _number(api: str, arg: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{api}: '{arg}' must be a float or an int, got {type(value).__name__}")
    return float(value)


def _positive_int(api: str, arg: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{api}: '{arg}' must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{api}: '{arg}' must be a positive int, got {value}")
    return value


def _decay_factor(api: str, gamma: Any) -> float:
    gamma = _number(api, "gamma", gamma)
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"{api}: 'gamma' must be in (0.0, 1.0) (new_lr = origin_lr * gamma), got {gamma}")
    return gamma


def _plain(value: Any) -> Any:
    """A one-element Tensor / array (as loaded from a file) as a Python number."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (int, float)) else value


class LRScheduler:
    """Base of the schedulers: subclasses define `get_lr()` from `base_lr` and `last_epoch`."""

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose: bool = False):
        lr = _number(type(self).__name__, "learning_rate", learning_rate)
        if lr < 0 or math.isnan(lr):
            raise ValueError(f"{type(self).__name__}: invalid learning rate {learning_rate}")
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int):
            raise TypeError(f"{type(self).__name__}: 'last_epoch' must be an int, got {type(last_epoch).__name__}")
        self.base_lr = lr
        self.last_lr = lr
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var_name = None
        self.step()

    def __call__(self) -> float:
        """The current learning rate."""
        return self.last_lr

    @property
    def last_lr(self) -> float:
        return self._last_lr

    @last_lr.setter
    def last_lr(self, value: float) -> None:
        """Set the rate; for a scheduler driving a static program, also its lr var in the global scope."""
        self._last_lr = value
        if getattr(self, "_var_name", None) is not None:
            from .static_mode import set_lr_var  # noqa: PLC0415 - static_mode needs static and executor, layers above us
            set_lr_var(self._var_name, value)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`) and update `last_lr`."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            if isinstance(epoch, bool) or not isinstance(epoch, int):
                raise TypeError(f"{type(self).__name__}.step: 'epoch' must be an int or None, got "
                                f"{type(epoch).__name__}")
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed() if closed is not None else self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def get_lr(self) -> float:
        """The learning rate at `last_epoch`; every scheduler defines it."""
        raise NotImplementedError

    def state_keys(self) -> None:
        """Names of the attributes `state_dict` saves."""
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict:
        """The scheduler's state as plain Python numbers."""
        self.state_keys()
        return {k: _plain(getattr(self, k)) for k in self.keys if hasattr(self, k)}

    def set_state_dict(self, state_dict: dict) -> None:
        """Restore what `state_dict()` returned."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"{type(self).__name__}.set_state_dict: expected a dict, got {type(state_dict).__name__}")
        self.state_keys()
        missing = [k for k in self.keys if k not in state_dict]
        if missing:
            raise RuntimeError(f"{type(self).__name__}.set_state_dict: can't find {missing} in state_dict; "
                               "please check whether it was saved from the same kind of scheduler")
        for k in self.keys:
            setattr(self, k, _plain(state_dict[k]))
        if len(state_dict) > len(self.keys):
            warnings.warn("There are some unused values in state_dict. Maybe the optimizer have different "
                          "'LearningRateDecay' when invoking state_dict and set_dict", stacklevel=2)

    set_dict = set_state_dict

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, last_lr={self.last_lr})"


class NoamDecay(LRScheduler):
    """lr * d_model^-0.5 * min(epoch^-0.5, epoch * warmup_steps^-1.5) (Transformer schedule)."""

    def __init__(self, d_model: float, warmup_steps: int, learning_rate: float = 1.0, last_epoch: int = -1,
                 verbose: bool = False):
        if _number("NoamDecay", "d_model", d_model) <= 0:
            raise ValueError(f"NoamDecay: 'd_model' must be greater than 0, got {d_model}")
        self.d_model = d_model
        self.warmup_steps = _positive_int("NoamDecay", "warmup_steps", warmup_steps)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        a = 1.0 if self.last_epoch == 0 else self.last_epoch ** -0.5
        b = self.warmup_steps ** -1.5 * self.last_epoch
        return self.base_lr * self.d_model ** -0.5 * min(a, b)


class PiecewiseDecay(LRScheduler):
    """values[i] while epoch < boundaries[i]; values[-1] after the last boundary."""

    def __init__(self, boundaries: Sequence[int], values: Sequence[float], last_epoch: int = -1,
                 verbose: bool = False):
        if not isinstance(boundaries, (list, tuple)) or not isinstance(values, (list, tuple)):
            raise TypeError("PiecewiseDecay: 'boundaries' and 'values' must be lists or tuples")
        if len(values) - len(boundaries) != 1:
            raise ValueError(f"PiecewiseDecay: len(values) must be len(boundaries) + 1, got {len(values)} "
                             f"values and {len(boundaries)} boundaries")
        self.boundaries = list(boundaries)
        self.values = [_number("PiecewiseDecay", "values", v) for v in values]
        super().__init__(last_epoch=last_epoch, verbose=verbose)

    def get_lr(self) -> float:
        for boundary, value in zip(self.boundaries, self.values):
            if self.last_epoch < boundary:
                return value
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """lr * exp(-gamma * epoch)."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False):
        self.gamma = _number("NaturalExpDecay", "gamma", gamma)
        if self.gamma <= 0:
            raise ValueError(f"NaturalExpDecay: 'gamma' must be greater than 0.0, got {gamma}")
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * math.exp(-self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """lr / (1 + gamma * epoch)."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False):
        self.gamma = _number("InverseTimeDecay", "gamma", gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """(lr - end_lr) * (1 - epoch/decay_steps)^power + end_lr, optionally cycling."""

    def __init__(self, learning_rate: float, decay_steps: int, end_lr: float = 0.0001, power: float = 1.0,
                 cycle: bool = False, last_epoch: int = -1, verbose: bool = False):
        self.decay_steps = _positive_int("PolynomialDecay", "decay_steps", decay_steps)
        self.end_lr = _number("PolynomialDecay", "end_lr", end_lr)
        self.power = _number("PolynomialDecay", "power", power)
        if self.power <= 0:
            raise ValueError(f"PolynomialDecay: 'power' must be greater than 0.0, got {power}")
        self.cycle = bool(cycle)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        epoch, steps = self.last_epoch, self.decay_steps
        if self.cycle:
            steps = self.decay_steps * max(1, math.ceil(epoch / self.decay_steps))
        else:
            epoch = min(epoch, steps)
        return (self.base_lr - self.end_lr) * (1 - epoch / steps) ** self.power + self.end_lr


class LinearWarmup(LRScheduler):
    """start_lr -> end_lr linearly over warmup_steps, then `learning_rate` (a number or a scheduler)."""

    def __init__(self, learning_rate: float | LRScheduler, warmup_steps: int, start_lr: float, end_lr: float,
                 last_epoch: int = -1, verbose: bool = False):
        if not isinstance(learning_rate, LRScheduler):
            _number("LinearWarmup", "learning_rate", learning_rate)
        self.learning_rate = learning_rate
        self.warmup_steps = _positive_int("LinearWarmup", "warmup_steps", warmup_steps)
        self.start_lr = _number("LinearWarmup", "start_lr", start_lr)
        self.end_lr = _number("LinearWarmup", "end_lr", end_lr)
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self) -> dict:
        state = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            state["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        inner = None
        if isinstance(self.learning_rate, LRScheduler):
            if "LinearWarmup_LR" not in state_dict:
                raise RuntimeError("LinearWarmup.set_state_dict: can't find ['LinearWarmup_LR'] in state_dict")
            state_dict = dict(state_dict)
            inner = state_dict.pop("LinearWarmup_LR")
        super().set_state_dict(state_dict)
        if inner is not None:
            self.learning_rate.set_state_dict(inner)

    set_dict = set_state_dict

    def get_lr(self) -> float:
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * self.last_epoch / self.warmup_steps + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)


class ExponentialDecay(LRScheduler):
    """lr * gamma^epoch."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False):
        self.gamma = _decay_factor("ExponentialDecay", gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** self.last_epoch


class MultiStepDecay(LRScheduler):
    """lr * gamma^(number of milestones <= epoch)."""

    def __init__(self, learning_rate: float, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False):
        if not isinstance(milestones, (list, tuple)):
            raise TypeError(f"MultiStepDecay: 'milestones' must be a list or tuple, got {type(milestones).__name__}")
        if any(b <= a for a, b in zip(milestones, milestones[1:])):
            raise ValueError(f"MultiStepDecay: 'milestones' must be increasing, got {list(milestones)}")
        self.milestones = list(milestones)
        self.gamma = _decay_factor("MultiStepDecay", gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        passed = sum(1 for m in self.milestones if self.last_epoch >= m)
        return self.base_lr * self.gamma ** passed


class StepDecay(LRScheduler):
    """lr * gamma^(epoch // step_size)."""

    def __init__(self, learning_rate: float, step_size: int, gamma: float = 0.1, last_epoch: int = -1,
                 verbose: bool = False):
        self.step_size = _positive_int("StepDecay", "step_size", step_size)
        self.gamma = _decay_factor("StepDecay", gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class LambdaDecay(LRScheduler):
    """lr * lr_lambda(epoch)."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float], last_epoch: int = -1,
                 verbose: bool = False):
        if not callable(lr_lambda):
            raise TypeError(f"LambdaDecay: 'lr_lambda' must be a function, got {type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """lr * prod of lr_lambda(1..epoch). As in Paddle, get_lr is that closed form, not last_lr times the
    next factor: a get_lr() between steps reads the current rate and does not compound it."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float], last_epoch: int = -1,
                 verbose: bool = False):
        if not callable(lr_lambda):
            raise TypeError(f"MultiplicativeDecay: 'lr_lambda' must be a function, got {type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        lr = self.base_lr
        for epoch in range(1, self.last_epoch + 1):
            lr *= self.lr_lambda(epoch)
        return lr


class CosineAnnealingDecay(LRScheduler):
    """eta_min + (lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed recursively as Paddle."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0, last_epoch: int = -1,  # noqa: N803
                 verbose: bool = False):
        self.T_max = _positive_int("CosineAnnealingDecay", "T_max", T_max)
        self.eta_min = _number("CosineAnnealingDecay", "eta_min", eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        e, t = self.last_epoch, self.T_max
        if e == 0:
            return self.base_lr
        if (e - 1 - t) % (2 * t) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / t)) / 2
        return ((1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
                * (self.last_lr - self.eta_min) + self.eta_min)

    def _get_closed_form_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class ReduceOnPlateau(LRScheduler):
    """Multiply the rate by `factor` when a metric stops improving for `patience` epochs."""

    def __init__(self, learning_rate: float, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr: float = 0,
                 epsilon: float = 1e-8, verbose: bool = False):
        mode, threshold_mode = str(mode).lower(), str(threshold_mode).lower()
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceOnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceOnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        if _number("ReduceOnPlateau", "factor", factor) >= 1.0:
            raise ValueError(f"ReduceOnPlateau: new_lr = origin_lr * factor and factor must be < 1.0, got {factor}")
        lr = _number("ReduceOnPlateau", "learning_rate", learning_rate)
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor, self.patience, self.threshold = float(factor), patience, threshold
        self.cooldown, self.min_lr, self.epsilon = cooldown, min_lr, epsilon
        self.cooldown_counter = 0
        self.best = None
        self.num_bad_epochs = 0
        self.base_lr = self.last_lr = lr
        self.last_epoch = 0
        self.verbose = verbose
        self._var_name = None

    def state_keys(self) -> None:
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        """Record this epoch's metric (a number or a one-element Tensor) and maybe reduce the rate."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if hasattr(metrics, "item") and not isinstance(metrics, (int, float)):
            if getattr(metrics, "size", 1) != 1:
                raise ValueError("ReduceOnPlateau.step: 'metrics' must hold exactly one element, got "
                                 f"shape {list(metrics.shape)}")
            metrics = metrics.item()
        elif isinstance(metrics, bool) or not isinstance(metrics, (int, float)):
            raise TypeError(f"ReduceOnPlateau.step: 'metrics' must be a number or a one-element Tensor, "
                            f"got {type(metrics).__name__}")
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(metrics, self.best):
            self.best = metrics
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(f"Epoch {self.last_epoch}: ReduceOnPlateau set learning rate to {self.last_lr}.")

    def _is_better(self, current: float, best: float) -> bool:
        margin = best * self.threshold if self.threshold_mode == "rel" else self.threshold
        return current < best - margin if self.mode == "min" else current > best + margin


def _nonneg(api: str, arg: str, value: Any) -> float:
    value = _number(api, arg, value)
    if value < 0:
        raise ValueError(f"{api}: '{arg}' must be >= 0, got {value}")
    return value


def _cos_anneal(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _linear_anneal(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up from max/divide_factor to max, then anneal to end_learning_rate
    (three_phase: back to the initial rate first). Stepping past `total_steps` is a ValueError."""

    def __init__(self, max_learning_rate: float, total_steps: int, divide_factor: float = 25.0,
                 end_learning_rate: float = 0.0001, phase_pct: float = 0.3, anneal_strategy: str = "cos",
                 three_phase: bool = False, last_epoch: int = -1, verbose: bool = False):
        api = "OneCycleLR"
        top = _nonneg(api, "max_learning_rate", max_learning_rate)
        end = _nonneg(api, "end_learning_rate", end_learning_rate)
        self.total_steps = _positive_int(api, "total_steps", total_steps)
        if not isinstance(phase_pct, float):
            raise TypeError(f"{api}: 'phase_pct' must be a float, got {type(phase_pct).__name__}")
        if not 0.0 <= phase_pct <= 1.0:
            raise ValueError(f"{api}: 'phase_pct' must be between 0 and 1, got {phase_pct}")
        start = top / _number(api, "divide_factor", divide_factor)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{api}: 'anneal_strategy' must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_func = _cos_anneal if anneal_strategy == "cos" else _linear_anneal
        up_end = phase_pct * total_steps - 1
        last = total_steps - 1.0
        if three_phase:
            if phase_pct >= 0.5:
                raise ValueError(f"{api}: with three_phase=True 'phase_pct' must be less than 0.5, got {phase_pct}")
            # (last step of the phase, its length, start rate, end rate); the final phase also covers later steps
            down_end = 2 * phase_pct * total_steps - 2
            self._phases = ((up_end, up_end, start, top), (down_end, down_end - up_end, top, start),
                            (last, last - down_end, start, end))
        else:
            self._phases = ((up_end, up_end, start, top), (last, last - up_end, top, end))
        super().__init__(start, last_epoch, verbose)

    def get_lr(self) -> float:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times, but the number of total steps is "
                             f"{self.total_steps}")
        begin = 0.0
        for end_step, size, lo, hi in self._phases:
            if step <= end_step or end_step == self._phases[-1][0]:
                return self.anneal_func(lo, hi, (step - begin) / size)
            begin = end_step
        raise AssertionError("unreachable: the last phase takes every step")


class CyclicLR(LRScheduler):
    """Triangular cycles between base and max rate; the amplitude scaled per cycle or iteration
    ('triangular': 1, 'triangular2': halved each cycle, 'exp_range': exp_gamma**iteration, or scale_fn)."""

    def __init__(self, base_learning_rate: float, max_learning_rate: float, step_size_up: int,
                 step_size_down: int | None = None, mode: str = "triangular", exp_gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 last_epoch: int = -1, verbose: bool = False):
        api = "CyclicLR"
        self.max_lr = _nonneg(api, "max_learning_rate", max_learning_rate)
        up = _positive_int(api, "step_size_up", step_size_up)
        down = up if step_size_down is None else _positive_int(api, "step_size_down", step_size_down)
        if not isinstance(exp_gamma, float):
            raise TypeError(f"{api}: 'exp_gamma' must be a float, got {type(exp_gamma).__name__}")
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"{api}: 'mode' must be 'triangular', 'triangular2' or 'exp_range' when no "
                             f"'scale_fn' is given, got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{api}: 'scale_mode' must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.cycle_size = float(up + down)
        self.step_up_pct = up / self.cycle_size
        self.amplitude = self.max_lr - _number(api, "base_learning_rate", base_learning_rate)
        self.mode, self.gamma = mode, exp_gamma
        if scale_fn is not None:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        elif mode == "triangular":
            self.scale_fn, self.scale_mode = (lambda c: 1.0), "cycle"
        elif mode == "triangular2":
            self.scale_fn, self.scale_mode = (lambda c: 1 / (2.0 ** (c - 1))), "cycle"
        else:
            self.scale_fn, self.scale_mode = (lambda i: self.gamma ** i), "iterations"
        super().__init__(base_learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        iterations = self.last_epoch
        cycle = 1 + iterations // self.cycle_size
        pct = 1.0 + iterations / self.cycle_size - cycle
        if pct <= self.step_up_pct:
            height = pct / self.step_up_pct
        else:
            height = (1 - pct) / (1 - self.step_up_pct)
        x = cycle if self.scale_mode == "cycle" else iterations
        return self.base_lr + self.amplitude * height * self.scale_fn(x)


class LinearLR(LRScheduler):
    """lr * factor, the factor going linearly from start_factor to end_factor over total_steps, then held."""

    def __init__(self, learning_rate: float, total_steps: int, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, last_epoch: int = -1, verbose: bool = False):
        api = "LinearLR"
        self.start_factor = _number(api, "start_factor", start_factor)
        self.end_factor = _number(api, "end_factor", end_factor)
        if not 0.0 < self.start_factor <= 1.0:
            raise ValueError(f"{api}: 'start_factor' must be in (0, 1], got {start_factor}")
        if not 0.0 <= self.end_factor <= 1.0:
            raise ValueError(f"{api}: 'end_factor' must be in [0, 1], got {end_factor}")
        self.total_steps = _positive_int(api, "total_steps", total_steps)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        done = min(max(self.last_epoch, 0), self.total_steps) / self.total_steps
        return self.base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from lr to eta_min over T_i epochs, restarting with T_i *= T_mult (SGDR).

    The position in the cycle (T_cur, T_i) is derived from `last_epoch` with integer arithmetic,
    so a scheduler restored from `state_dict` (which holds only the epoch and the rate, as
    Paddle's) continues on the same schedule."""

    def __init__(self, learning_rate: float, T_0: int, T_mult: int = 1, eta_min: float = 0,  # noqa: N803
                 last_epoch: int = -1, verbose: bool = False):
        api = "CosineAnnealingWarmRestarts"
        self.T_0 = _positive_int(api, "T_0", T_0)
        if isinstance(T_mult, bool) or not isinstance(T_mult, int):
            raise TypeError(f"{api}: 'T_mult' must be an int, got {type(T_mult).__name__}")
        if T_mult < 1:
            raise ValueError(f"{api}: 'T_mult' must be an int >= 1, got {T_mult}")
        self.T_mult = T_mult
        self.eta_min = _number(api, "eta_min", eta_min)
        self.T_i, self.T_cur = self.T_0, last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch` >= 0)."""
        if epoch is not None and not isinstance(epoch, bool) and isinstance(epoch, int) and epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts.step: expected a non-negative epoch, got {epoch}")
        super().step(epoch)

    def get_lr(self) -> float:
        self.T_cur, self.T_i = self._cycle_at(max(self.last_epoch, 0))
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    _get_closed_form_lr = get_lr

    def _cycle_at(self, epoch: int) -> tuple[int, int]:
        """(epochs into the current cycle, the cycle's length) at `epoch`."""
        if self.T_mult == 1:
            return epoch % self.T_0, self.T_0
        t_cur, t_i = epoch, self.T_0
        while t_cur >= t_i:
            t_cur -= t_i
            t_i *= self.T_mult
        return t_cur, t_i
