"""The in-place protocol shared by every in-place op (`x += y`, `x.add_(y)`, `x[i] = v`,
`x.reshape_(...)`): the leaf check, the alias the op runs on, and the version bump.

It sits just above dispatch so that the op families below the operator table (math, shape,
indexing, activation) can offer in-place variants without importing each other.
"""
from __future__ import annotations

from typing import Any

from .. import structure
from ..tensor import Tensor, as_tensor, tensor_method
from .grad_mode import is_grad_enabled

__all__ = ["alias", "inplace", "inplace_api", "inplace_view"]


def alias(x: Tensor) -> Tensor:
    """A second tensor over x's array and autograd edge, with its own version counter: a node
    that records the alias is not flagged by x's next in-place write."""
    t = Tensor._wrap(x._data)
    t._stop_gradient, t._node, t._oidx = x._stop_gradient, x._node, x._oidx
    return t


def _check_writable(x: Tensor, api: str) -> None:
    if is_grad_enabled() and x._node is None and not x.stop_gradient:
        raise ValueError(f"{api}: a leaf tensor that requires grad (stop_gradient=False) cannot be "
                         "modified in place; wrap it in paddle.no_grad() or use the out-of-place op")


def _take_over(x: Tensor, result: Tensor) -> None:
    """x now stands for `result`'s autograd edge, one version later."""
    x._node, x._oidx = result._node, result._oidx
    if result._node is not None:
        x.stop_gradient = False
    x._version += 1


def inplace(self: Tensor, fn, api: str, *args: Any, **kwargs: Any) -> Tensor:
    """Run `fn(self, *args)` and make `self` hold the result (an in-place op).

    The op sees an alias of `self` (same data and autograd edge, its own version), so the
    node that produced the new value does not see its own input as modified.
    """
    if self._data is None:  # a static Variable: `x += y` records a new var, as in Paddle's static mode
        return fn(self, *args, **kwargs)
    _check_writable(self, api)
    result = fn(alias(self), *args, **kwargs)
    if result._data.shape != self._data.shape:
        raise ValueError(f"{api}: the in-place result has shape {result.shape}, which differs from the "
                         f"tensor's shape {self.shape} (broadcasting may not grow an in-place target)")
    data = result._data if result._data.dtype == self._data.dtype else result._data.astype(self._data.dtype)
    if self._node is None and result._node is None:
        self._data[...] = data
    else:
        self._data = data
    _take_over(self, result)
    return self


def inplace_view(x: Tensor, fn, api: str, *args: Any) -> Tensor:
    """Make `x` itself hold `fn(x, *args)` (a shape-changing in-place op such as reshape_)."""
    x = as_tensor(x, "x", api)
    _check_writable(x, api)
    result = fn(alias(x), *args)  # the op's node keeps the alias: x's new version does not flag it
    x._data = result._data
    _take_over(x, result)
    if x.persistable:  # a parameter's shape is part of its Layer's structure (runtime.structure)
        structure.bump()
    return x


def inplace_api(fn, api: str):
    """The Tensor method and function `api` (`scatter_`): `fn` applied to x in place."""
    def method(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(as_tensor(x, "x", api), fn, api, *args, **kwargs)
    method.__name__ = method.__qualname__ = api
    method.__doc__ = f"In-place `{fn.__name__}`: x itself takes the result."
    return tensor_method(method)
