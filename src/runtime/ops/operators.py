"""Tensor operators (`+`, `<`, `&`, `+=`...) and in-place method variants (`add_`...): one table
binds the public elementwise functions to Tensor; the in-place protocol they use is in inplace.py."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, tensor_method
from . import math as m
from .inplace import inplace
from .linalg import addmm, baddbmm
from .math import (abs, add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cast,  # noqa: A004
                   clip, divide, equal, floor_divide, floor_mod, fmax, fmin, greater_equal,
                   greater_than, isclose, isfinite, isinf, isnan, lerp, less_equal, less_than, logical_and,
                   logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, neg, not_equal,
                   pow, remainder, scale, subtract, where)

__all__: list[str] = []


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    return method


def _method_or_notimpl(fn):
    def method(self, other):
        if not isinstance(other, (Tensor, int, float, complex, bool, np.generic)):
            return NotImplemented
        return fn(self, other)
    return method


def _inplace_method(fn, api: str):
    def method(self, other):
        return inplace(self, fn, api, other)
    method.__name__ = api
    return method


_OPERATORS = {
    "add": add, "sub": subtract, "mul": multiply, "truediv": divide, "floordiv": floor_divide,
    "mod": remainder, "pow": pow, "and": bitwise_and, "or": bitwise_or, "xor": bitwise_xor,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, f"__{_name}__", _method_or_notimpl(_fn))
    setattr(Tensor, f"__r{_name}__", _method_or_notimpl(_reflected(_fn)))
    setattr(Tensor, f"__i{_name}__", _inplace_method(_fn, f"__i{_name}__"))
for _name, _fn in {"eq": equal, "ne": not_equal, "lt": less_than, "le": less_equal,
                   "gt": greater_than, "ge": greater_equal}.items():
    setattr(Tensor, f"__{_name}__", _method_or_notimpl(_fn))
Tensor.__neg__ = lambda self: neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: abs(self)
Tensor.__invert__ = lambda self: logical_not(self) if self._data.dtype.kind == "b" else bitwise_not(self)

for _fn in (add, subtract, multiply, divide, floor_divide, remainder, mod, floor_mod, pow, maximum,
            minimum, fmax, fmin, *(m._unary_apis.values()), isnan, isinf, isfinite, logical_and,
            logical_or, logical_xor, logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not,
            equal, not_equal, less_than, less_equal, greater_than, greater_equal, isclose,
            where, clip, scale, lerp):
    tensor_method(_fn)
def _static_inplace(self: Tensor, fn, api: str, *args: Any, **kwargs: Any) -> Tensor:
    """`x.add_(y)` on a static Variable: the op writes into x's own var, as Paddle's static mode
    records an in-place API (a new var would leave `x` unchanged: nothing rebinds the name)."""
    if not self.stop_gradient:
        raise NotImplementedError(f"{api}: an in-place update of a static variable that requires grad "
                                  f"('{self.name}'); use the out-of-place op")
    block = self.block.program.current_block()   # where fn records (maybe a sub-block of x's)
    n_ops, names = len(block.ops), set(block.vars)
    out = fn(self, *args, **kwargs)
    if out.shape != self.shape or out.dtype != self.dtype:  # take back what fn recorded
        del block.ops[n_ops:]
        for name in set(block.vars) - names:
            del block.vars[name]
        block.program._changed()
        raise ValueError(f"{api}: the in-place result has shape {out.shape} and dtype {out.dtype}, which differ "
                         f"from the variable's {self.shape} and {self.dtype}")
    producer = block.ops[-1]
    producer.outputs = [self.name if name == out.name else name for name in producer.outputs]
    self.const = out.const  # the value known at build time, if any, is now the op's
    del block.vars[out.name]
    block.program._changed()
    return self


def _inplace_api(fn, api: str):
    def method(self, *args, **kwargs):
        if self._data is None:
            return _static_inplace(self, fn, api, *args, **kwargs)
        return inplace(self, fn, api, *args, **kwargs)
    method.__name__ = api
    return method


for _name in ("add", "subtract", "multiply", "divide", "clip", "scale", "exp", "sqrt", "tanh", "sigmoid",
              "abs", "neg", "floor", "ceil", "round", "pow", "remainder", "square", "reciprocal", "log"):
    setattr(Tensor, _name + "_", _inplace_api(getattr(m, _name), _name + "_"))
for _fn in (addmm, baddbmm):
    setattr(Tensor, _fn.__name__ + "_", _inplace_api(_fn, _fn.__name__ + "_"))
Tensor.astype = lambda self, dtype: cast(self, dtype)
