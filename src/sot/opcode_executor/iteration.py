"""Iteration: iterators, FOR_ITER and unpacking, on items known at translation time.

An iterator Variable advances one step of the simulated (or real, for a lazy one) iterator per
`next`; a loop over known items is unrolled, up to SOT_MAX_UNROLL iterations for the translated
frame's own loops (past that, the loop runs for real: see `sot.opcode_executor.loops`). An object of
the user's is iterated, indexed and searched through its own dunders, inlined (`protocol`).
"""
from __future__ import annotations

import enum

from sot import config
from sot.dynamic.shapes import specialise
from sot.pyversion import Instruction

from .dispatch import FrameRaises, handles
from .loops import past_unroll_limit
from .variables import (ITERATOR_TYPES, BoundMethodVariable, ConstantVariable, DictVariable, DictViewVariable,
                        FunctionVariable, InstanceVariable, IteratorVariable, LazyIteratorVariable, ListVariable,
                        ObjectVariable, SetVariable, TensorVariable, TupleVariable, Variable, known_value)
from .wording import shown

__all__ = ["IterationMixin"]


class IterationMixin:
    """GET_ITER, FOR_ITER, UNPACK_SEQUENCE, UNPACK_EX and iterating a Variable (part of OpcodeExecutor)."""

    @handles("GET_ITER")
    def _get_iter(self, ins: Instruction) -> None:
        self.stack.append(self.iterator_of(self.stack.pop()))

    def iterator_of(self, var: Variable) -> Variable:
        """iter(var): an iterator is its own (consuming one consumes the other), anything else an
        iterator over its items."""
        return var if isinstance(var, ITERATOR_TYPES) else IteratorVariable(self.elements(var))

    def next_of(self, iterator: Variable) -> Variable | None:
        """The next item of an iterator Variable, None when exhausted: one step of the real iterator."""
        self.touch(iterator)
        return iterator.next(self)

    @handles("FOR_ITER")
    def _for_iter(self, ins: Instruction) -> None:
        if not isinstance(self.stack[-1], ITERATOR_TYPES):
            self.unsupported(f"iterates over {shown(self.stack[-1])}, whose length is known only at run time",
                             "SOT-B002")
        iterator = self.stack[-1]
        if self.parent is None and past_unroll_limit(iterator):
            self.unsupported(f"loops {len(iterator.items)} times, more than SOT_MAX_UNROLL={config.max_unroll()}: "
                             "the loop runs for real", "SOT-C003")
        item = self.next_of(iterator)
        if item is None:
            self.stack.pop()
            self.jump_to = ins.target
        else:
            self.stack.append(item)

    def elements(self, var: Variable) -> list[Variable]:
        """The items iterating `var` yields, known at translation time."""
        if isinstance(var, IteratorVariable):
            self.touch(var)
            items = var.items[var.position:]
            var.position = len(var.items)
            return list(items)
        if isinstance(var, LazyIteratorVariable):
            return list(iter(lambda: self.next_of(var), None))
        if isinstance(var, DictViewVariable):
            return var.current()
        if isinstance(var, TupleVariable):
            return list(var.items)
        if isinstance(var, (DictVariable, SetVariable)):
            return [known_value(k) for k in var.items]
        if isinstance(var, ConstantVariable) and isinstance(var.value, (tuple, range, str, frozenset)):
            return [ConstantVariable(v) for v in var.value]
        if isinstance(var, ObjectVariable) and isinstance(var.value, enum.EnumMeta):  # its members (the class is
            return [known_value(m) for m in var.value]  # pinned by identity, and an enum's members are fixed)
        if isinstance(var, InstanceVariable):  # a LayerList, a user container: its __iter__, inlined
            return self.elements(self.protocol(var, "__iter__"))
        if isinstance(var, TensorVariable):
            return self._rows(var)
        self.unsupported(f"iterates over {shown(var)}, which sot cannot translate yet")

    def _rows(self, tensor: TensorVariable) -> list[Variable]:
        """A tensor's items as eager's `Tensor.__iter__` gives them, `t[0]`, `t[1]`, ...: unrolled over a
        first dim known at translation time (a dynamic one is kept static, as `len()` keeps it)."""
        shape = tensor.meta.shape
        if shape and shape[0] < 0:
            specialise(tensor, self.inputs, (0,), f"iteration at {self.where()}", self.where())
        if not shape or shape[0] < 0:  # (a 0-D tensor: eager code raises its TypeError at the break)
            self.unsupported("iterates over a tensor whose length is known only at run time", "SOT-B002")
        return [self._record_method("__getitem__", tensor, [ConstantVariable(i)], {}) for i in range(shape[0])]

    def protocol(self, obj: InstanceVariable, dunder: str, *args: Variable) -> Variable:
        """`obj.<dunder>(*args)` resolved on obj's type and inlined (iteration, len, indexing, `in`)."""
        method = self.load_attr(obj, dunder)
        if not isinstance(method, (BoundMethodVariable, FunctionVariable)):
            self.unsupported(f"calls {type(obj.value).__name__}.{dunder}, which is not Python code sot can trace")
        return self.call(method, list(args), {})

    @handles("UNPACK_SEQUENCE")
    def _unpack_sequence(self, ins: Instruction) -> None:
        items = self.elements(self.stack.pop())
        if len(items) != ins.arg:
            raise FrameRaises(ins.opname, self.where(),
                              f"raises ValueError: {len(items)} values to unpack into {ins.arg}")
        self.stack.extend(reversed(items))

    @handles("UNPACK_EX")
    def _unpack_ex(self, ins: Instruction) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        items = self.elements(self.stack.pop())
        if len(items) < before + after:
            raise FrameRaises(ins.opname, self.where(),
                              f"raises ValueError: not enough values to unpack (got {len(items)})")
        middle = ListVariable(items[before:len(items) - after])
        self.stack.extend(reversed([*items[:before], middle, *items[len(items) - after:]]))
