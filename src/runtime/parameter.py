"""Parameters: persistable tensors that require grad and carry optimiser settings."""
from __future__ import annotations

from typing import Any

from .tensor import Tensor

__all__ = ["Parameter", "is_parameter"]


class Parameter(Tensor):
    """A trainable tensor (Paddle's EagerParamBase): stop_gradient=False, persistable=True.

    The optimiser reads `optimize_attr['learning_rate']` (a per-parameter factor), `regularizer`
    (overrides the optimiser's weight decay) and `need_clip`; `do_model_average` and
    `is_distributed` are carried for model code that sets or reads them."""

    __slots__ = ("optimize_attr", "regularizer", "need_clip", "is_distributed", "do_model_average")

    def __init__(self, data: Any, dtype: Any = None, name: str | None = None, trainable: bool = True,
                 optimize_attr: dict | None = None, regularizer: Any = None, need_clip: bool = True,
                 do_model_average: bool | None = None, is_distributed: bool = False):
        super().__init__(data, dtype=dtype, stop_gradient=not trainable, name=name)
        self.persistable = True
        self.optimize_attr = {"learning_rate": 1.0} if optimize_attr is None else dict(optimize_attr)
        self.regularizer = regularizer
        self.need_clip = need_clip
        self.is_distributed = is_distributed
        self.do_model_average = do_model_average

    @classmethod
    def _from_array(cls, arr, name: str | None = None, trainable: bool = True) -> "Parameter":
        """Wrap an existing array without copying (initialisers create the array)."""
        p = object.__new__(cls)
        p._init(arr, not trainable)
        p._name = name
        p.persistable = True
        p.optimize_attr = {"learning_rate": 1.0}
        p.regularizer = None
        p.need_clip = True
        p.is_distributed = False
        p.do_model_average = None
        return p

    @property
    def trainable(self) -> bool:
        """`not stop_gradient`: freezing a parameter (`p.trainable = False`) stops its gradient."""
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        if not isinstance(value, bool):  # Paddle's check: 0/1 are refused, not coerced
            raise ValueError(f"Parameter.trainable: the value must be a bool, got {type(value).__name__}")
        self.stop_gradient = not value

    @property
    def block(self) -> Any:
        """The global block of the default main program: where Paddle's dygraph parameters say they
        live (model code reads `param.block` to create variables next to it)."""
        from .static.framework import default_main_program  # static sits above tensors and parameters
        return default_main_program().global_block()

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


def is_parameter(value: Any) -> bool:
    """A Parameter, or a static-graph parameter Variable (both are a layer's parameters)."""
    return isinstance(value, Parameter) or getattr(value, "is_parameter", False) is True
