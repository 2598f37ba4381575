"""The op registry: every op is described here ONCE.

An `OpDef` holds the op's name, attribute schema (name -> default), a meta function
(output shapes/dtypes from input shapes/dtypes, raising the error eager code raises,
never touching values), a kernel over an array module `xp` (NumPy or CuPy), a gradient
rule written with the public ops (so it is itself differentiable and can be replayed in
static mode), flags, and sample inputs the registry tests use. Eager dispatch, autograd,
the static graph and the executor all read this table.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

__all__ = ["TensorSpec", "Sample", "OpDef", "defop", "get_op", "all_ops", "normal_sampler", "uniform_sampler"]


class TensorSpec(NamedTuple):
    """Shape and dtype of a tensor, all a meta function may look at (-1 = unknown dim)."""

    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass
class Sample:
    """Sample inputs for registry tests: arrays (or None) and attributes.

    `grad_inputs` lists the input positions whose gradient is checked against finite
    differences (default: every floating input).
    """

    inputs: tuple[Any, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    grad_inputs: tuple[int, ...] | None = None


def normal_sampler(rng: np.random.Generator) -> Callable[..., np.ndarray]:
    """f(*shape): standard-normal float64 sample inputs drawn from rng."""
    return lambda *shape: rng.normal(size=shape)


def uniform_sampler(rng: np.random.Generator, low: float = -1.0, high: float = 1.0) -> Callable[..., np.ndarray]:
    """f(*shape): float64 sample inputs uniform in [low, high), drawn from rng."""
    return lambda *shape: rng.uniform(low, high, size=shape)


@dataclass(eq=False)
class OpDef:
    """One operator. Call it with tensors and attributes to run it in the current mode."""

    name: str
    kernel: Callable[..., Any]
    meta: Callable[..., Any]
    grad: Callable[..., tuple] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] = ("x",)
    random: bool = False
    inplace: bool = False
    dynamic_shape: bool = False
    side_effect: bool = False
    save_outputs: bool = False
    nondiff_outputs: tuple[int, ...] = ()
    samples: Callable[[], list[Sample]] | None = None
    meta_cache: dict = field(default_factory=dict, repr=False)

    @property
    def variadic(self) -> bool:
        """True when the op takes any number of tensor inputs (concat, stack, einsum...)."""
        return bool(self.inputs) and self.inputs[0].startswith("*")

    def input_name(self, i: int) -> str:
        """The argument name of input `i`, for error messages."""
        if self.variadic:
            return f"{self.inputs[0][1:]}[{i}]"
        return self.inputs[i] if i < len(self.inputs) else f"input[{i}]"

    def __call__(self, *inputs, **attrs):
        return _apply(self, inputs, attrs)


_REGISTRY: dict[str, OpDef] = {}
_apply: Callable = None  # set by runtime.ops.dispatch (it imports Tensor, which imports us)


def _check_signature(op: OpDef) -> None:
    """Kernel and meta must accept exactly the schema's attributes, so nothing drifts."""
    for role, fn in (("kernel", op.kernel), ("meta", op.meta)):
        params = inspect.signature(fn).parameters.values()
        kw = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
        if kw != set(op.attrs):
            raise TypeError(f"op {op.name!r}: {role} keyword-only attributes {sorted(kw)} "
                            f"differ from the schema {sorted(op.attrs)}")


def defop(name: str, **fields: Any) -> OpDef:
    """Create and register an op; a name may be registered only once."""
    if name in _REGISTRY:
        raise ValueError(f"op {name!r} is already registered")
    op = OpDef(name=name, **fields)
    _check_signature(op)
    _REGISTRY[name] = op
    return op


def get_op(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} is registered") from None


def all_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)
