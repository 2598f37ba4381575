"""SGD, Momentum, Adam, AdamW, RMSProp, Adagrad, Adamax and Lamb: each names its update op, hyperparameters and
accumulators (Paddle's names) and maps one parameter to the op's inputs."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ..ops import optimizer_ops
from .lr import LRScheduler
from .optimizer import Optimizer, _float_arg

__all__ = ["SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad", "Adamax", "Lamb"]

_NO_ATTRS: dict = {}


def _unsupported(api: str, arg: str, value: Any, default: Any) -> None:
    if value != default:
        raise NotImplementedError(f"{api}: '{arg}'={value!r} is not supported (only {default!r})")


class SGD(Optimizer):
    """param -= lr * grad."""

    _op = optimizer_ops.SGD

    def __init__(self, learning_rate: float | LRScheduler = 0.001, parameters: Iterable | None = None,
                 weight_decay: Any = None, grad_clip: Any = None, multi_precision: bool = False,
                 name: str | None = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _op_inputs(self, param, grad, lr, accs, group):
        return (param._data, grad, lr), _NO_ATTRS


class Momentum(Optimizer):
    """velocity = momentum * velocity + grad; param -= lr * velocity (or Nesterov's form)."""

    _op = optimizer_ops.MOMENTUM
    _hyper_checks = {"momentum": "nonneg", "use_nesterov": "bool"}
    _accumulator_specs = (("velocity", None),)

    def __init__(self, learning_rate: float | LRScheduler = 0.001, momentum: float = 0.9,
                 parameters: Iterable | None = None, use_nesterov: bool = False, weight_decay: Any = None,
                 grad_clip: Any = None, multi_precision: bool = False, rescale_grad: float = 1.0,
                 use_multi_tensor: bool = False, name: str | None = None):
        if momentum is None:
            raise ValueError("Momentum: momentum is not set")
        _unsupported("Momentum", "rescale_grad", rescale_grad, 1.0)
        self._momentum = momentum
        self._use_nesterov = use_nesterov
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _op_inputs(self, param, grad, lr, accs, group):
        o = group.options
        return (param._data, grad, lr, *accs), {"mu": o["momentum"], "use_nesterov": o["use_nesterov"]}


class Adam(Optimizer):
    """Adam with Paddle's bias correction folded into the step size."""

    _op = optimizer_ops.ADAM
    _hyper_checks = {"beta1": "unit", "beta2": "unit", "epsilon": "nonneg"}
    _accumulator_specs = (("moment1", None), ("moment2", None),
                          ("beta1_pow_acc", "beta1"), ("beta2_pow_acc", "beta2"))

    def __init__(self, learning_rate: float | LRScheduler = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-08, parameters: Iterable | None = None, weight_decay: Any = None,
                 grad_clip: Any = None, lazy_mode: bool = False, multi_precision: bool = False,
                 use_multi_tensor: bool = False, name: str | None = None):
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._lazy_mode = lazy_mode  # dense gradients only: lazy mode updates every row anyway
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _op_inputs(self, param, grad, lr, accs, group):
        o = group.options
        return (param._data, grad, lr, *accs), {"beta1": o["beta1"], "beta2": o["beta2"], "epsilon": o["epsilon"]}


class AdamW(Adam):
    """Adam with decoupled weight decay: param *= 1 - lr * lr_ratio(param) * weight_decay first."""

    _op = optimizer_ops.ADAMW
    _hyper_checks = {**Adam._hyper_checks, "weight_decay": "nonneg"}

    def __init__(self, learning_rate: float | LRScheduler = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-08, parameters: Iterable | None = None, weight_decay: float = 0.01,
                 lr_ratio: Callable | None = None, apply_decay_param_fun: Callable | None = None,
                 grad_clip: Any = None, lazy_mode: bool = False, multi_precision: bool = False,
                 name: str | None = None):
        for arg, fn in (("lr_ratio", lr_ratio), ("apply_decay_param_fun", apply_decay_param_fun)):
            if fn is not None and not callable(fn):
                raise TypeError(f"AdamW: '{arg}' must be a function or None, got {type(fn).__name__}")
        self._weight_decay = weight_decay
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip, lazy_mode,
                         multi_precision, name=name)

    def _regularization_of(self, weight_decay: Any) -> None:
        return None  # the decay is decoupled: it never enters the gradient

    def _regularizer_for(self, param, group) -> None:
        return None

    def _op_inputs(self, param, grad, lr, accs, group):
        arrays, attrs = super()._op_inputs(param, grad, lr, accs, group)
        fun = self._apply_decay_param_fun
        ratio = 1.0 if self._lr_ratio is None else _float_arg("AdamW", "lr_ratio(param)", self._lr_ratio(param))
        return arrays, {**attrs, "coeff": group.options["weight_decay"], "lr_ratio": ratio,
                        "with_decay": True if fun is None else bool(fun(param.name))}


class RMSProp(Optimizer):
    """Root-mean-square propagation, optionally centered and with momentum (Paddle's formulas)."""

    _op = optimizer_ops.RMSPROP
    _hyper_checks = {"rho": "closed_unit", "epsilon": "nonneg", "momentum": "nonneg", "centered": "bool"}
    _accumulator_specs = (("momentum", None), ("mean_square", None), ("mean_grad", None))

    def __init__(self, learning_rate: float | LRScheduler, rho: float = 0.95, epsilon: float = 1e-06,
                 momentum: float = 0.0, centered: bool = False, parameters: Iterable | None = None,
                 weight_decay: Any = None, grad_clip: Any = None, name: str | None = None):
        if learning_rate is None:
            raise ValueError("RMSProp: learning_rate is not set")
        self._rho, self._epsilon, self._momentum, self._centered = rho, epsilon, momentum, centered
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _op_inputs(self, param, grad, lr, accs, group):
        o = group.options
        return (param._data, grad, lr, *accs), {"epsilon": o["epsilon"], "decay": o["rho"],
                                                 "momentum": o["momentum"], "centered": o["centered"]}


class Adagrad(Optimizer):
    """moment += grad^2; param -= lr * grad / (sqrt(moment) + epsilon); moment starts at
    `initial_accumulator_value` (Paddle's accumulator name: `<param>_moment_0`)."""

    _op = optimizer_ops.ADAGRAD
    _hyper_checks = {"epsilon": "nonneg", "initial_accumulator_value": "nonneg"}
    _accumulator_specs = (("moment", "initial_accumulator_value"),)

    def __init__(self, learning_rate: float | LRScheduler, epsilon: float = 1.0e-6,
                 parameters: Iterable | None = None, weight_decay: Any = None, grad_clip: Any = None,
                 name: str | None = None, initial_accumulator_value: float = 0.0):
        if learning_rate is None:
            raise ValueError("Adagrad: learning_rate is not set")
        self._epsilon, self._initial_accumulator_value = epsilon, initial_accumulator_value
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _accumulator_layout(self, fill, shape, dtype, options):
        """The moment is shaped like the parameter, filled with initial_accumulator_value."""
        return tuple(shape), dtype, options[fill]

    def _scalar_state(self, fill):
        """The filled moment is shaped like the parameter, not a scalar."""
        return False

    def _op_inputs(self, param, grad, lr, accs, group):
        return (param._data, grad, lr, *accs), {"epsilon": group.options["epsilon"]}


class Adamax(Optimizer):
    """Adam with the infinity norm: u = max(beta2 * u + epsilon, |grad|);
    param -= lr / (1 - beta1^t) * moment / u."""

    _op = optimizer_ops.ADAMAX
    _hyper_checks = Adam._hyper_checks
    _accumulator_specs = (("moment", None), ("inf_norm", None), ("beta1_pow_acc", "beta1"))

    def __init__(self, learning_rate: float | LRScheduler = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, parameters: Iterable | None = None, weight_decay: Any = None,
                 grad_clip: Any = None, name: str | None = None):
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _op_inputs(self, param, grad, lr, accs, group):
        o = group.options
        return (param._data, grad, lr, *accs), {"beta1": o["beta1"], "beta2": o["beta2"], "epsilon": o["epsilon"]}


class Lamb(Optimizer):
    """Layer-wise adaptive moments: the Adam direction plus lamb_weight_decay * param, scaled by the
    trust ratio ||param|| / ||direction||. `exclude_from_weight_decay_fn(param)` True drops the
    decay for that parameter; `multi_precision` is accepted (updates run in the parameter's dtype)."""

    _op = optimizer_ops.LAMB
    _hyper_checks = {**Adam._hyper_checks, "lamb_weight_decay": "nonneg"}
    _accumulator_specs = Adam._accumulator_specs
    _elementwise = False  # the trust ratio takes norms over the whole parameter

    def __init__(self, learning_rate: float | LRScheduler = 0.001, lamb_weight_decay: float = 0.01,
                 beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-6,
                 parameters: Iterable | None = None, grad_clip: Any = None,
                 exclude_from_weight_decay_fn: Callable | None = None, multi_precision: bool = False,
                 always_adapt: bool = False, name: str | None = None):
        if exclude_from_weight_decay_fn is not None and not callable(exclude_from_weight_decay_fn):
            raise TypeError("Lamb: 'exclude_from_weight_decay_fn' must be a function or None, got "
                            f"{type(exclude_from_weight_decay_fn).__name__}")
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._lamb_weight_decay = lamb_weight_decay
        self._exclude_from_weight_decay_fn = exclude_from_weight_decay_fn
        self._always_adapt = bool(always_adapt)
        super().__init__(learning_rate, parameters, None, grad_clip, name)

    def _op_inputs(self, param, grad, lr, accs, group):
        o = group.options
        exclude = o.get("exclude_from_weight_decay_fn", self._exclude_from_weight_decay_fn)
        decay = 0.0 if exclude is not None and exclude(param) else o["lamb_weight_decay"]
        return (param._data, grad, lr, *accs), {"weight_decay": decay, "beta1": o["beta1"], "beta2": o["beta2"],
                                                 "epsilon": o["epsilon"], "always_adapt": self._always_adapt}
