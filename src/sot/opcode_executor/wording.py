"""How a reason names a simulated value: in the user's terms, never by its Variable.

Break and fallback details are read by users in reports; a Variable's repr (`TensorVariable(var_3)`)
names the simulator's internals. `shown(var)` says what the value is as the user's code knows it: a
tensor, a list, the qualified name of a function or class (`numpy.ndarray.mean`), a short constant;
`construct(opname)` names the construct an opcode without a handler comes from (a class statement).
"""
from __future__ import annotations

import reprlib
import types
from typing import Any

from .variables import (ITERATOR_TYPES, BoundMethodVariable, ConstantVariable, ContainerMethodVariable, DimVariable,
                        FunctionVariable, LibraryContextVariable, NumberVariable, ObjectVariable, TensorMethodVariable,
                        TensorVariable, Variable, python_type)

__all__ = ["shown", "qualified", "construct", "kind_of_callee"]

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40


def qualified(value: Any) -> str:
    """`module.qualname` of a function, method or class (`numpy.ndarray.mean`); its type's for others."""
    if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and not isinstance(value.__self__,
                                                                                         types.ModuleType):
        owner = value.__self__ if isinstance(value.__self__, type) else type(value.__self__)
        return f"{qualified(owner)}.{value.__name__}"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name is None or not isinstance(name, str):
        return f"{_a(qualified(type(value)))} object"
    module = getattr(value, "__module__", None) or getattr(getattr(value, "__objclass__", None), "__module__", None)
    return name if module in (None, "builtins") else f"{module}.{name}"


def shown(var: Variable) -> str:
    """What `var` stands for, in the user's terms (for break and fallback details)."""
    if isinstance(var, TensorVariable):
        return "a tensor"
    if isinstance(var, DimVariable):
        return "a size known only at run time"
    if isinstance(var, NumberVariable):
        return f"a {type(var.number).__name__} that varies between calls"
    if isinstance(var, ConstantVariable):
        return _SHORT.repr(var.value)
    if isinstance(var, FunctionVariable):
        return var.code.co_qualname if var.value is None else qualified(var.value)
    if isinstance(var, ObjectVariable):
        named = isinstance(var.value, types.ModuleType) or callable(var.value) and isinstance(
            getattr(var.value, "__qualname__", None), str)
        return qualified(var.value) if named else f"{_a(qualified(type(var.value)))} object"
    if isinstance(var, BoundMethodVariable):
        return f"the method {shown(var.function)} of {shown(var.receiver)}"
    if isinstance(var, ContainerMethodVariable):
        return f"{var.kind.__name__}.{var.name}"
    if isinstance(var, TensorMethodVariable):
        return f"Tensor.{var.name}"
    if isinstance(var, ITERATOR_TYPES):
        return "an iterator"
    if isinstance(var, LibraryContextVariable):  # (only the translation holds it: it is never made for real)
        return f"the context manager {var.name}(...) made in the function"
    kind = python_type(var)
    return _a(kind.__name__) if kind is not None else "a value made in the function"


def _a(noun: str) -> str:
    """`noun` with its indefinite article."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


# opcodes without a handler, by the construct of the user's code that compiles to them
_CONSTRUCTS = {
    "LOAD_BUILD_CLASS": "a class statement",
    "GET_AWAITABLE": "await", "SEND": "await or yield from", "GET_YIELD_FROM_ITER": "yield from",
    "GET_AITER": "async for", "GET_ANEXT": "async for", "END_ASYNC_FOR": "async for",
    "BEFORE_ASYNC_WITH": "async with", "CHECK_EG_MATCH": "except*", "PREP_RERAISE_STAR": "except*",
    "SETUP_ANNOTATIONS": "an annotation in a class body", "IMPORT_STAR": "from ... import *",
    "LOAD_NAME": "a name of a class body", "STORE_NAME": "a name of a class body",
    "DELETE_NAME": "a name of a class body", "LOAD_LOCALS": "a class body",
    "WITH_EXCEPT_START": "a with block left by an exception raised where the translation did not simulate it",
}


def construct(opname: str) -> str:
    """The construct of the user's code an opcode the executor cannot simulate comes from."""
    return _CONSTRUCTS.get(opname, "a construct")


def kind_of_callee(var: Variable) -> str:
    """What kind of callable sot cannot trace `var` is, as a parenthesis for a reason ('' when nothing
    more is to say): NumPy works on values, a C function has no bytecode to simulate."""
    value = getattr(var, "value", None)
    if qualified(value).split(".")[0] == "numpy":
        return " (NumPy on values)"
    if isinstance(value, (types.BuiltinFunctionType, types.MethodWrapperType, types.MethodDescriptorType,
                          types.WrapperDescriptorType)):
        return " (a C function)"
    return ""
