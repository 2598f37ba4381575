"""Operators: binary, unary, in-place, comparison, identity, membership and truth, on Variables.

On tensors an operator is recorded as the Tensor dunder eager code calls (call_method); on Python
values it is folded at translation time, the guards pinning the operands; a dynamic number meeting
another number stays dynamic (`ComputedTracker`: the generated code computes it again). An in-place
update of a tensor is simulated only where no alias could miss it (see `update_in_place`).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from runtime import Tensor
from sot.guards.source import expression
from sot.pyversion import Instruction
from sot.pyversion.instruction import BINARY_OPERATORS as _BINARY_OPERATORS

from .aliasing import held_outside, shares_memory
from .dims import size_arithmetic
from .size_forms import record_forms
from .dispatch import FrameRaises, InPlaceUpdate, handles
from .trackers import ComputedTracker, ConstTracker, ExpressionTracker
from .variables import (BoundMethodVariable, ConstantVariable, DictVariable, DimVariable, FunctionVariable,
                        InstanceVariable, ListVariable, NewObjectVariable, NumberVariable, NumpyScalarVariable,
                        ObjectVariable, SetVariable, TensorVariable, TupleVariable, Variable, is_enum_member,
                        known_value, plain_sequence)
from .wording import shown

__all__ = ["OperatorMixin"]

# BINARY_OP operator -> (Python function for folding, Tensor dunder, reflected dunder)
_BINARY: dict[str, tuple[Callable, str, str]] = {
    "+": (operator.add, "__add__", "__radd__"),
    "-": (operator.sub, "__sub__", "__rsub__"),
    "*": (operator.mul, "__mul__", "__rmul__"),
    "/": (operator.truediv, "__truediv__", "__rtruediv__"),
    "//": (operator.floordiv, "__floordiv__", "__rfloordiv__"),
    "%": (operator.mod, "__mod__", "__rmod__"),
    "**": (operator.pow, "__pow__", "__rpow__"),
    "@": (operator.matmul, "__matmul__", "__rmatmul__"),
    "&": (operator.and_, "__and__", "__rand__"),
    "|": (operator.or_, "__or__", "__ror__"),
    "^": (operator.xor, "__xor__", "__rxor__"),
    "<<": (operator.lshift, "__lshift__", "__rlshift__"),
    ">>": (operator.rshift, "__rshift__", "__rrshift__"),
}
# an operator's in-place form, for the set operators (`s |= t` changes s)
_IN_PLACE: dict[Callable, Callable] = {operator.or_: operator.ior, operator.and_: operator.iand,
                                       operator.sub: operator.isub, operator.xor: operator.ixor}
# unary opname -> (Python function for folding, Tensor dunder)
_UNARY: dict[str, tuple[Callable, str]] = {
    "UNARY_NEGATIVE": (operator.neg, "__neg__"), "UNARY_INVERT": (operator.invert, "__invert__"),
    "INTRINSIC_UNARY_POSITIVE": (operator.pos, "__pos__"),
}
# COMPARE_OP operator -> (Python function for folding, Tensor dunder)
_COMPARE: dict[str, tuple[Callable, str]] = {
    "<": (operator.lt, "__lt__"), "<=": (operator.le, "__le__"), "==": (operator.eq, "__eq__"),
    "!=": (operator.ne, "__ne__"), ">": (operator.gt, "__gt__"), ">=": (operator.ge, "__ge__"),
}
# operators on Python numbers a dynamic number goes through (those that cannot raise on ints and floats)
_NUMBER_ARITHMETIC = frozenset({"+", "-", "*"})
# ... and those that raise only for a zero divisor: by a divisor known at translation time (`i % 3`)
_NUMBER_DIVISION = frozenset({"%", "//"})
# COMPARE_OP operator -> the one Python tries on the right operand when the left's gives NotImplemented
_SWAPPED = {"<": ">", "<=": ">=", "==": "==", "!=": "!=", ">": "<", ">=": "<="}


def _is_number(var: Variable) -> bool:
    """A Python bool, int or float (a dynamic number included), whose comparison with a tensor is the tensor's."""
    return isinstance(var, NumberVariable) or (isinstance(var, ConstantVariable) and not isinstance(
        var, NumpyScalarVariable) and type(var.value) in (bool, int, float))


def _may_overflow(left: Variable, right: Variable) -> bool:
    """Whether Python's `+`, `-` or `*` on these numbers (one dynamic) could raise: an int meeting a float
    is converted to float, which raises OverflowError beyond the float range (a dynamic int may be any size)."""
    numbers = [v.number if isinstance(v, NumberVariable) else v.value for v in (left, right)]
    if any(isinstance(n, np.generic) for n in numbers):  # NumPy's own overflow rules (and np.seterr): kept static
        return True
    if not any(type(n) is float for n in numbers):
        return False
    for var, n in zip((left, right), numbers):
        if type(n) is int:
            if isinstance(var, NumberVariable):
                return True
            try:
                float(n)
            except OverflowError:
                return True
    return False



def _is_tuple(var: Variable) -> bool:
    """A tuple Variable (a namedtuple's included), not a list's."""
    return isinstance(var, TupleVariable) and not isinstance(var, ListVariable)


def _items_of(var: ConstantVariable) -> Variable:
    """A constant tuple as a TupleVariable of its items (to add it to a tuple of Variables); else itself."""
    return TupleVariable([ConstantVariable(v) for v in var.value]) if type(var.value) is tuple else var


def _repeated(sequence: Variable, count: Variable) -> Variable | None:
    """`sequence * count` for a tuple or list of Variables and a constant int: the same items repeated
    (one object several times, as in eager code); None for anything else."""
    if not isinstance(sequence, TupleVariable) or not isinstance(count, ConstantVariable) or \
            type(count.value) not in (int, bool):
        return None
    return plain_sequence(sequence, list(sequence.items) * count.value)


class OperatorMixin:
    """BINARY_OP, UNARY_*, COMPARE_OP, IS_OP, CONTAINS_OP, TO_BOOL, UNARY_NOT (part of OpcodeExecutor)."""

    @handles("BINARY_OP")
    def _binary_op(self, ins: Instruction) -> None:
        in_place = ins.argval.endswith("=") and ins.argval not in _COMPARE
        op = ins.argval[:-1] if in_place else ins.argval
        right = self.stack.pop()
        self.stack.append(self.binary(op, self.stack.pop(), right, in_place))

    def binary(self, op: str, left: Variable, right: Variable, in_place: bool = False) -> Variable:
        """`left op right` (`op=` when in_place): a recorded tensor operator, a folded constant, or a
        container built from Variables."""
        if op not in _BINARY:
            self.unsupported(f"uses the operator {op!r}, which sot cannot translate yet")
        fold, dunder, reflected = _BINARY[op]
        if op == "+" and _is_tuple(left) != _is_tuple(right) and isinstance(left if _is_tuple(right) else right,
                                                                            ConstantVariable):
            left, right = (_items_of(v) if isinstance(v, ConstantVariable) else v for v in (left, right))
        if isinstance(left, TupleVariable) and isinstance(right, TupleVariable) and op == "+" and (
                isinstance(left, ListVariable) == isinstance(right, ListVariable)):
            if isinstance(left, ListVariable) and in_place:
                self.container_method("extend", left, right)  # list += list extends it in place
                return left
            return plain_sequence(left, [*left.items, *right.items])
        if isinstance(left, SetVariable) and isinstance(right, SetVariable):
            return self._set_operator(fold, left, right, in_place)
        if op == "*" and not (in_place and isinstance(left, ListVariable)):  # (`lst *= n` changes lst: below)
            repeated = _repeated(left, right) or _repeated(right, left)
            if repeated is not None:
                return repeated
        if in_place and not isinstance(left, (ConstantVariable, TensorVariable)) and not (
                isinstance(left, TupleVariable) and not isinstance(left, ListVariable)):
            self.unsupported(f"updates {shown(left)} in place with {op}=", "SOT-S001")  # mutates the object
        if isinstance(left, TensorVariable):
            if in_place and hasattr(Tensor, f"__i{dunder[2:]}"):
                return self._tensor_in_place(left, dunder, right)
            return self._operator(dunder, left, right)  # (`t @= w` without __imatmul__: Python's `t = t @ w`)
        if isinstance(right, TensorVariable) and isinstance(left, ConstantVariable):
            return self._operator(reflected, right, left)
        if isinstance(right, TensorVariable):
            self.unsupported(f"computes {shown(left)} {op} {shown(right)}, which sot cannot translate yet")
        size = size_arithmetic(self, op, left, right) if isinstance(left, DimVariable) or isinstance(
            right, DimVariable) else None  # (None: folded below, which reads the size's value and specialises)
        if size is not None:
            return size
        dynamic = isinstance(left, NumberVariable) or isinstance(right, NumberVariable)
        if dynamic and _is_number(left) and _is_number(right) and not _may_overflow(left, right) and (
                op in _NUMBER_ARITHMETIC or (op in _NUMBER_DIVISION and not isinstance(right, NumberVariable)
                                             and right.value != 0)):
            return self._computed_number([left, right], fold, "BINARY_OP", _BINARY_OPERATORS.index(op), op)
        result = fold(self.python_value(left), self.python_value(right))
        return self.from_result(result) if isinstance(result, (tuple, list)) else known_value(result)

    def _set_operator(self, fold: Callable, left: SetVariable, right: SetVariable, in_place: bool) -> Variable:
        """`a | b`, `a - b`, ... on sets (`a |= b` changes a, as eager's does), on their real values."""
        try:
            if not in_place:
                return SetVariable(fold(left.items, right.items))
            self.write_into(left)
            result = _IN_PLACE[fold](left.items, right.items)
        except TypeError as e:
            raise FrameRaises("BINARY_OP", self.where(), f"raises TypeError: {e}") from None
        return left if result is left.items else SetVariable(result)  # (a frozenset's |= makes a new one)

    def _operator(self, dunder: str, tensor: TensorVariable, other: Variable | None = None) -> Variable:
        """A Tensor operator: recorded as call_method; its result is a new tensor nothing aliases."""
        if other is None:
            args = []
        elif isinstance(other, TensorVariable):
            args = [other.symbol]
        elif isinstance(other, NumberVariable):  # its value is fed at run time, as the 0-D tensor eager makes
            args = [self.number_input(other, tensor.meta.dtype)]
        else:
            args = [self.as_arg(other)]
        with self.recording():
            result = self.from_result(self.builder.call_method(dunder, tensor.symbol, args))
        record_forms(self, None, dunder, [tensor] if other is None else [tensor, other], {}, result)
        return result

    def _computed_number(self, operands: list[Variable], fold: Callable, opname: str, arg: int | None = None,
                         argval: Any = None) -> NumberVariable:
        """An operator on Python numbers, one of them dynamic: a dynamic number the generated code computes
        again on every call with the same Python operator (`ComputedTracker`), eager's value by construction."""
        number = fold(*(v.number if isinstance(v, NumberVariable) else v.value for v in operands))
        trackers = [v.tracker if isinstance(v, NumberVariable) else ConstTracker(v.value) for v in operands]
        sources = tuple(dict.fromkeys(s for v in operands if isinstance(v, NumberVariable) for s in v.sources))
        return NumberVariable(number, ComputedTracker(trackers, opname, arg, argval), sources)

    def _tensor_in_place(self, tensor: TensorVariable, dunder: str, other: Variable) -> TensorVariable:
        """`t op= x` on a tensor: see `update_in_place`."""
        return self.update_in_place(tensor, lambda: self._operator(dunder, tensor, other))

    def update_in_place(self, tensor: TensorVariable, compute: Callable[[], Variable]) -> TensorVariable:
        """An in-place update (`t += x`, `t.add_(x)`, `t[0] = x`) of a tensor made in this frame that nothing
        else can see (see `why_not_renamed`): the out-of-place result `compute()`, cast to the tensor's
        dtype, becomes the value every reference to the Variable sees, as eager's in-place update does. An
        input no op of the frame has read yet (so no view of it in the graph can miss the update) that
        takes no part in autograd is updated the same way, and the final value is written into the
        caller's tensor after the graph ran (a replayed side effect, into its own buffer: views outside
        see it)."""
        writes_back = self.writes_back(tensor)
        if not writes_back:
            why = self.why_not_renamed(tensor)
            if why is None:
                self.outer_grad_mode()  # which tensors require grad (the checks below) may follow the caller's mode
                why = self._saved_for_backward(tensor)
            if why is not None:
                raise InPlaceUpdate(self.current.opname, self.where(), f"updates a tensor in place, {why}")
        result = compute()
        tensor.passed = not writes_back  # the update itself reads the input: not a view of it
        if writes_back and not result.meta.stop_gradient:
            raise InPlaceUpdate(self.current.opname, self.where(),
                                "updates an input tensor in place with a value that requires grad")
        meta = tensor.meta
        if not isinstance(result, TensorVariable) or result.meta.shape != meta.shape:
            self.unsupported("updates a tensor in place with a value of another shape")  # eager raises: let it
        if not writes_back and result.meta.stop_gradient and not meta.stop_gradient:
            raise InPlaceUpdate(self.current.opname, self.where(), "updates a tensor in place, which "
                                "requires grad, by a value that does not (under no_grad): eager leaves it a "
                                "tensor that requires grad with no history")
        if result.meta.dtype != meta.dtype:
            result = self.from_result(self.builder.call_method("astype", result.symbol, [str(meta.dtype)]))
        self.touch(tensor)
        if writes_back:
            self.translation.effects.write_back(tensor, TensorVariable(result.symbol))
            self.record_write()
        tensor.symbol = result.symbol
        return tensor

    def set_stop_gradient(self, tensor: TensorVariable, value: Variable) -> None:
        """`t.stop_gradient = flag` on a tensor the frame made. Eager code reads the flag when an op is
        recorded (the op's edges are fixed then), so True is captured as a rename to `t.detach()`: ops
        recorded before keep the old symbol, later ones read one without history. False after such a rename
        gives the old symbol back (eager kept the tensor's history). Any other change (on an input, or
        making a computed tensor a leaf that requires grad) cannot be captured (SOT-S001)."""
        if not isinstance(value, ConstantVariable) or type(value.value) is not bool:
            self.unsupported(f"sets the stop_gradient of a tensor to {shown(value)}", "SOT-S001")
        why = self.why_not_renamed(tensor)
        if why is not None:
            self.unsupported(f"sets the stop_gradient of a tensor, {why}", "SOT-S001")
        if self.stop_gradient_of(tensor) == value.value:
            return  # (eager's write changes nothing either)
        if value.value:
            old = tensor.symbol
            tensor.detached = (self.detach_in_place(tensor).symbol, old)
        elif tensor.detached is not None and tensor.detached[0] is tensor.symbol:
            self.touch(tensor)
            tensor.symbol = tensor.detached[1]
        else:
            self.unsupported("sets stop_gradient = False, which makes a tensor a leaf that requires grad",
                             "SOT-S001")

    def detach_in_place(self, tensor: TensorVariable) -> TensorVariable:
        """`t.detach_()` (or `t.stop_gradient = True`) on a tensor nothing but its Variable sees: the
        Variable stands for `t.detach()` from now on."""
        why = self.why_not_renamed(tensor)
        if why is not None:
            raise InPlaceUpdate(self.current.opname, self.where(), f"detaches a tensor in place, {why}")
        old = tensor.symbol
        with self.recording():
            new = self.builder.call_method("detach", old)
        # the detached symbol shares the old one's memory, but the old one is left to ops recorded before:
        # nothing will update it in place, so neither needs to stay unrenamable
        self.builder.unrenamable.pop(old, None)
        self.builder.unrenamable.pop(new, None)
        self.touch(tensor)
        tensor.symbol = new
        return tensor

    def why_not_renamed(self, tensor: TensorVariable) -> str | None:
        """Why an in-place update (or a `stop_gradient` write) of `tensor` cannot be captured by giving its
        Variable a new symbol; None when nothing but the Variable sees the tensor: the frame made it (not
        an input, a parameter or a buffer), no view shares its memory (see sot.ir.renaming) and nothing
        outside the frame holds it (see aliasing.held_outside)."""
        if tensor.bound:
            return "a parameter or buffer: the Layer holds it"
        if tensor.tracker.source is not None or any(tensor.symbol is v.symbol for v in self.inputs):
            return "which may be aliased outside the function or by a view"
        why = self.builder.unrenamable.get(tensor.symbol)
        if why is None:
            why = held_outside(tensor, self.translation.effects, [c for _, c in self.translation.cells.values()])
        return None if why is None else f"which another reference would miss: {why}"

    def _saved_for_backward(self, tensor: TensorVariable) -> str | None:
        """Why eager's backward could fail after an in-place update of `tensor` (None: it cannot): an op
        that records a gradient read its current value, and eager's backward refuses a tensor an op saved
        that was written in place since (its version counter)."""
        for st in self.builder.readers.get(tensor.symbol, []):
            if any(not out.meta.stop_gradient for out in st.output_symbols()):
                return "whose value an op that records a gradient read before: eager's backward checks it was not " \
                       "changed since"
        return None

    def writes_back(self, tensor: TensorVariable) -> bool:
        """Whether an in-place update of `tensor` can be captured and written back into the caller's
        tensor: an input (reloaded by the generated code) no op has read yet, that requires no grad."""
        return (not tensor.bound and tensor.tracker.reloadable and not tensor.passed and tensor.meta.stop_gradient
                and any(tensor is v for v in self.inputs) and not any(
                    isinstance(v, TensorVariable) and v is not tensor and isinstance(v.value, Tensor) and
                    shares_memory(v.value, tensor.value) for v in self.tracked))  # another view would miss it

    @handles("UNARY_NEGATIVE", "UNARY_INVERT")
    def _unary(self, ins: Instruction) -> None:
        self.stack.append(self.unary(ins.opname, self.stack.pop()))

    def unary(self, kind: str, value: Variable) -> Variable:
        """`-value`, `~value` or `+value` (`kind`: UNARY_NEGATIVE, UNARY_INVERT, INTRINSIC_UNARY_POSITIVE)."""
        fold, dunder = _UNARY[kind]
        if isinstance(value, NumberVariable) and kind == "UNARY_NEGATIVE":
            return self._computed_number([value], fold, kind)
        if isinstance(value, ConstantVariable) or is_enum_member(value):  # (`~flag`)
            return known_value(fold(self.python_value(value)))
        if isinstance(value, TensorVariable):
            return self._operator(dunder, value)
        self.unsupported(f"takes the {kind} of {shown(value)}, which sot cannot translate yet")

    @handles("CALL_INTRINSIC_1")
    def _call_intrinsic_1(self, ins: Instruction) -> None:
        if ins.argval == "INTRINSIC_LIST_TO_TUPLE":
            self.stack.append(TupleVariable(self.elements(self.stack.pop())))
        elif ins.argval in _UNARY:
            self.stack.append(self.unary(ins.argval, self.stack.pop()))
        else:
            self.unsupported("uses a construct sot cannot translate yet")

    # ------------------------------------------------------------ comparisons and truth
    def truth(self, var: Variable) -> bool:
        """The truth of a value known at translation time; a tensor's truth needs a graph break."""
        if isinstance(var, ConstantVariable):
            return bool(var.value)
        if isinstance(var, (TupleVariable, DictVariable, SetVariable)):
            return bool(var.items)
        if isinstance(var, InstanceVariable):
            kind = type(var.value)
            if getattr(kind, "__bool__", None) is None and getattr(kind, "__len__", None) is None:
                return True  # an object without __bool__/__len__ is true; its type guard pins that
            self.unsupported(f"tests the truth of {shown(var)}, which runs its own __bool__ or __len__", "SOT-B003")
        if isinstance(var, (ObjectVariable, FunctionVariable, BoundMethodVariable)):
            return True if not isinstance(var, ObjectVariable) else bool(var.value)
        if isinstance(var, TensorVariable):
            self.unsupported("decides on a tensor's value", "SOT-B001")
        self.unsupported(f"decides on {shown(var)}, known only at run time")

    @handles("UNARY_NOT")
    def _unary_not(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(not self.truth(self.stack.pop())))

    @handles("TO_BOOL")
    def _to_bool(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(self.truth(self.stack.pop())))

    @handles("COMPARE_OP")
    def _compare_op(self, ins: Instruction) -> None:
        right = self.stack.pop()
        self.stack.append(self.compare(ins.argval, self.stack.pop(), right))

    def compare(self, op: str, left: Variable, right: Variable) -> Variable:
        """`left op right` for a comparison operator: a recorded tensor comparison, or folded."""
        fold, dunder = _COMPARE[op]
        if isinstance(left, TensorVariable):
            return self._operator(dunder, left, right)
        if isinstance(right, TensorVariable) and _is_number(left):  # a number's comparison gives way to the tensor's
            return self._operator(_COMPARE[_SWAPPED[op]][1], right, left)
        if isinstance(right, TensorVariable):
            self.unsupported(f"compares {shown(left)} {op} {shown(right)}, which sot cannot decide")
        return ConstantVariable(fold(self.python_value(left), self.python_value(right)))

    @handles("IS_OP", "CONTAINS_OP")
    def _identity_or_membership(self, ins: Instruction) -> None:
        right = self.stack.pop()
        left = self.stack.pop()
        if ins.opname == "IS_OP":
            if isinstance(left, ConstantVariable) and isinstance(right, ConstantVariable):
                result = left.value is right.value
            elif isinstance(left, ConstantVariable) or isinstance(right, ConstantVariable):
                result = False  # a constant is never the same object as a tensor, container or module
            elif left is right:
                result = True
            elif isinstance(left, NewObjectVariable) or isinstance(right, NewObjectVariable):
                result = False  # an object the frame made is no other object (it has one Variable)
            elif (isinstance(left, ObjectVariable) and isinstance(right, ObjectVariable)
                  and not isinstance(left, InstanceVariable) and not isinstance(right, InstanceVariable)):
                result = left.value is right.value  # both pinned by identity guards
            elif isinstance(left, ObjectVariable) and isinstance(right, ObjectVariable) and \
                    left.tracker.source is not None and right.tracker.source is not None:
                result = left.value is right.value  # (a sentinel default `x is _MISSING`): guarded as it is
                self.wrap(result, ExpressionTracker(expression(f"{left.tracker.source} is {right.tracker.source}")))
            else:
                self.unsupported(f"tests {shown(left)} is {shown(right)}, an identity sot cannot pin on the next call")
        else:
            if isinstance(right, InstanceVariable) and type(right.value) is dict and is_enum_member(left):
                result = self.member_in(right, left)  # a dict from outside keyed by enum members
            elif isinstance(right, InstanceVariable):
                result = self.truth(self.protocol(right, "__contains__", left))
            elif isinstance(right, DictVariable) and not isinstance(left, TensorVariable):
                result = self.python_value(left) in right.items
            elif isinstance(left, ConstantVariable) or is_enum_member(left):
                result = self.python_value(left) in self.python_value(right)
            else:
                self.unsupported(f"tests {shown(left)} in {shown(right)}, which sot cannot decide")
        self.stack.append(ConstantVariable(result != bool(ins.arg)))
