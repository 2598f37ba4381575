"""Building containers and strings, and reading and writing their items.

BUILD_* make frame-owned Variables (a write into one is simulated only); a write into a list or
dict from outside the frame is written back after the graph (`write_into`). Indexing a tensor is a
recorded `__getitem__`, a store into it an out-of-place `static.setitem` (see `update_in_place`);
indexing a container known at translation time is folded. f-strings are folded on constants.
"""
from __future__ import annotations

import collections
import enum
from typing import Any, Callable

import numpy as np

from runtime import static
from sot.guards.source import expression
from sot.pyversion import Instruction

from .containers import call_container_method, set_of
from .dims import DimSliceVariable, check_slices, slice_by_sizes
from .dispatch import FrameRaises, handles
from .trackers import ExpressionTracker
from .variables import (ConstantVariable, DictVariable, DimVariable, InstanceVariable, ListVariable, ObjectVariable,
                        SetVariable, TensorVariable, TupleVariable, Variable, is_enum_member, is_none,
                        known_value, plain_sequence)
from .wording import shown

__all__ = ["BuildMixin"]

# FORMAT conversions (CONVERT_VALUE's argval)
_CONVERSIONS: dict[Any, Callable[[Any], str]] = {"str": str, "repr": repr, "ascii": ascii}


class BuildMixin:
    """BUILD_*, subscripts, LIST_/SET_/MAP_/DICT_ updates and string formatting (part of OpcodeExecutor)."""

    @handles("BUILD_TUPLE", "BUILD_LIST")
    def _build_sequence(self, ins: Instruction) -> None:
        self.stack.append((ListVariable if ins.opname == "BUILD_LIST" else TupleVariable)(self.pop(ins.arg)))

    @handles("BUILD_SET")
    def _build_set(self, ins: Instruction) -> None:
        self.stack.append(SetVariable(set_of(self, self.pop(ins.arg))))

    @handles("SET_ADD", "SET_UPDATE")
    def _set_add_update(self, ins: Instruction) -> None:
        value = self.stack.pop()
        self.container_method("add" if ins.opname == "SET_ADD" else "update", self.stack[-ins.arg], value)

    @handles("BUILD_MAP", "BUILD_CONST_KEY_MAP")
    def _build_map(self, ins: Instruction) -> None:
        if ins.opname == "BUILD_CONST_KEY_MAP":
            keys = self.python_value(self.stack.pop())
            values = self.pop(ins.arg)
        else:
            flat = self.pop(2 * ins.arg)
            keys = [self.python_value(k) for k in flat[::2]]
            values = flat[1::2]
        self.stack.append(DictVariable(dict(zip(keys, values))))

    @handles("MAP_ADD")
    def _map_add(self, ins: Instruction) -> None:
        key, value = self.pop(2)
        target = self.stack[-ins.arg]
        self.write_into(target)  # a dict passed to a resume function is the caller's: written back
        target.items[self.python_value(key)] = value

    @handles("DICT_UPDATE", "DICT_MERGE")
    def _dict_update(self, ins: Instruction) -> None:
        other = self.stack.pop()
        target = self.stack[-ins.arg]
        if not isinstance(other, DictVariable):
            self.unsupported(f"unpacks **{shown(other)}, which sot cannot translate yet")
        if ins.opname == "DICT_MERGE" and set(other.items) & set(target.items):
            raise FrameRaises(ins.opname, self.where(), "raises TypeError: a keyword argument given twice")
        self.write_into(target)
        target.items.update(other.items)

    @handles("BUILD_SLICE")
    def _build_slice(self, ins: Instruction) -> None:
        self.stack.append(self._slice(*self.pop(ins.arg)))

    def _slice(self, *parts: Variable) -> Variable:
        """A slice of constants, or one bounded by sizes known at run time (see dims.slice_by_sizes)."""
        if any(isinstance(p, DimVariable) for p in parts):
            return DimSliceVariable(*parts, *[ConstantVariable(None)] * (3 - len(parts)))
        return ConstantVariable(slice(*(self.python_value(v) for v in parts)))

    @handles("BINARY_SUBSCR", "BINARY_SLICE")
    def _subscript(self, ins: Instruction) -> None:
        index = self._slice(*self.pop(2)) if ins.opname == "BINARY_SLICE" else self.stack.pop()
        self.stack.append(self.subscript(self.stack.pop(), index))

    def subscript(self, base: Variable, index_var: Variable) -> Variable:
        """`base[index_var]` (BINARY_SUBSCR, or `operator.getitem`)."""
        opname = self.current.opname
        if isinstance(base, TensorVariable) and (isinstance(index_var, DimSliceVariable) or (
                type(index_var) is TupleVariable and any(isinstance(i, DimSliceVariable) for i in index_var.items))):
            sliced = slice_by_sizes(self, base, index_var)
            if sliced is not None:
                return sliced
        index = index_var if isinstance(index_var, TensorVariable) else self.python_value(index_var)
        if isinstance(base, TensorVariable):
            self._check_tensor_index(index)
            check_slices(self, base, index)
        if isinstance(base, InstanceVariable) and type(base.value) is dict and is_enum_member(index_var):
            return self.keyed_by_member(base, index_var)
        if isinstance(base, InstanceVariable):
            return self.protocol(base, "__getitem__", index if isinstance(index, Variable) else ConstantVariable(index))
        if isinstance(base, TensorVariable):
            return self._record_method("__getitem__", base, [
                index if isinstance(index, TensorVariable) else ConstantVariable(index)], {})
        if isinstance(base, TupleVariable) and isinstance(index, slice):
            return plain_sequence(base, base.items[index])
        if isinstance(base, (TupleVariable, DictVariable)) and not isinstance(index, Variable):
            try:
                return base.items[index]
            except (IndexError, KeyError) as e:
                if isinstance(base, DictVariable) and base.kind is collections.defaultdict and \
                        base.factory is not None and not is_none(base.factory):
                    return self._default_item(base, index)
                if hasattr(getattr(base, "kind", dict), "__missing__"):  # a subclass's __missing__ runs eagerly
                    raise FrameRaises(opname, self.where(), f"raises {type(e).__name__}: {e}") from None
                raise FrameRaises.of(opname, self.where(), e) from None
        if isinstance(base, ConstantVariable) and not isinstance(index, Variable):
            return ConstantVariable(base.value[index])
        if isinstance(base, ObjectVariable) and isinstance(base.value, enum.EnumMeta) and type(index) is str:
            try:  # `Mode["A"]`: a member by name (the class is pinned by identity, its members fixed)
                return known_value(base.value[index])
            except KeyError as e:
                raise FrameRaises.of(opname, self.where(), e) from None
        self.unsupported(f"indexes {shown(base)} by {shown(index)}, which sot cannot translate yet")

    def keyed_by_member(self, table: InstanceVariable, member: ObjectVariable, default: Variable | None = None
                        ) -> Variable:
        """`table[member]` (with a `default`: `table.get(member, default)`) of a dict from outside the frame keyed
        by enum members (a guard's item source names constant keys only): the item is read now and guarded as
        the very lookup eager code makes, `<table's source>[<member's source>]`."""
        self._findable_again(table, member)
        if default is not None and not self.member_in(table, member):
            return default
        try:
            value = table.value[member.value]
        except KeyError as e:
            raise FrameRaises.of(self.current.opname, self.where(), e) from None
        return self.wrap(value, ExpressionTracker(expression(f"{table.tracker.source}[{member.tracker.source}]")))

    def member_in(self, table: InstanceVariable, member: ObjectVariable) -> bool:
        """`member in table` for such a dict, guarded as that very expression."""
        self._findable_again(table, member)
        present = member.value in table.value
        self.wrap(present, ExpressionTracker(expression(f"{member.tracker.source} in {table.tracker.source}")))
        return present

    def _findable_again(self, table: InstanceVariable, member: ObjectVariable) -> None:
        """A lookup of `member` in `table` is guarded only where both are read from the frame."""
        if table.tracker.source is None or member.tracker.source is None:
            self.unsupported(f"looks an enum member up in {shown(table)}, which sot cannot find again on the next "
                             "call")

    def _default_item(self, d: DictVariable, key: Any) -> Variable:
        """`d[key]` of a defaultdict without it: `d.default_factory()` stored under it, as `__missing__` does."""
        value = self.call(d.factory, [], {})
        self.write_into(d)
        d.items[key] = value
        return value

    def _check_tensor_index(self, index: Any) -> None:
        """Indexing a tensor by a tensor, a list or an array (advanced indexing) is not recorded: a bool
        mask gives a shape known only at run time, and the static replay has no gather by an index tensor."""
        items = index if type(index) is tuple else (index,)
        for item in items:
            if isinstance(item, TensorVariable) and item.meta.dtype == "bool":
                self.unsupported("indexes by a boolean mask: the result's shape depends on tensor values", "SOT-B005")
            if isinstance(item, (TensorVariable, list, np.ndarray)):
                self.unsupported(f"indexes by a {type(item).__name__} (advanced indexing), which sot cannot "
                                 "translate yet")

    @handles("STORE_SUBSCR")
    def _store_subscr(self, ins: Instruction) -> None:
        index, base, value = self.stack.pop(), self.stack.pop(), self.stack.pop()
        key = self.python_value(index)
        if isinstance(base, TensorVariable):  # `t[k] = v` in place: recorded as `t = static.setitem(t, k, v)`
            setitem = ObjectVariable(static.setitem)
            self.update_in_place(base, lambda: self.call(setitem, [base, ConstantVariable(key), value], {}))
            return
        if not isinstance(base, (ListVariable, DictVariable)):
            self.unsupported(f"assigns an item of {shown(base)}, a change sot cannot replay", "SOT-S001")
        if isinstance(base, ListVariable):
            if not isinstance(key, int) or not -len(base.items) <= key < len(base.items):
                self.unsupported(f"assigns a list item at {key!r}, which eager code rejects")
        self.write_into(base)
        base.items[key] = value

    @handles("DELETE_SUBSCR")
    def _delete_subscr(self, ins: Instruction) -> None:
        index, base = self.stack.pop(), self.stack.pop()
        if not isinstance(base, (ListVariable, DictVariable)):
            self.unsupported(f"deletes an item of {shown(base)} from outside the function, a change sot cannot "
                             "replay", "SOT-S001")
        key = self.python_value(index)
        try:
            base.items[key]
        except (IndexError, KeyError, TypeError) as e:
            raise FrameRaises(ins.opname, self.where(), f"raises {type(e).__name__}: {e}") from None
        self.write_into(base)
        del base.items[key]

    @handles("STORE_SLICE")
    def _store_slice(self, ins: Instruction) -> None:
        start, end = (self.python_value(v) for v in self.pop(2))
        base, value = self.stack.pop(), self.stack.pop()
        if not isinstance(base, ListVariable):
            self.unsupported(f"assigns a slice of {shown(base)} from outside the function, a change sot cannot replay",
                             "SOT-S001")
        items = self.elements(value)  # (before the write: `xs[1:] = xs` assigns the items it had)
        self.write_into(base)
        base.items[start:end] = items

    def write_into(self, container: Variable) -> None:
        """A mutation of `container`: one from outside the frame is written back after the graph."""
        if container.tracker.source is not None:
            # (a defaultdict is refilled by dict's own clear and update, as a dict is; other subclasses may
            # redefine them)
            if not self.reloadable(container) or isinstance(container, SetVariable) or (
                    isinstance(container, DictVariable) and container.kind not in (dict, collections.defaultdict)):
                self.unsupported(f"changes {shown(container)} from outside the function", "SOT-S001")
            self.record_write()
            self.translation.effects.refill(container)
        self.touch(container)

    def container_method(self, name: str, container: Variable, *args: Variable, **kwargs: Variable) -> Variable:
        """`container.name(*args, **kwargs)` on a list, tuple, dict or set Variable (see `containers`)."""
        return call_container_method(self, name, container, list(args), kwargs)

    @handles("LIST_APPEND", "LIST_EXTEND")
    def _list_append_extend(self, ins: Instruction) -> None:
        value = self.stack.pop()
        self.container_method("append" if ins.opname == "LIST_APPEND" else "extend", self.stack[-ins.arg], value)

    # ------------------------------------------------------------ strings
    @handles("CONVERT_VALUE")
    def _convert_value(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(_CONVERSIONS[ins.argval](self.python_value(self.stack.pop()))))

    @handles("FORMAT_SIMPLE")
    def _format_simple(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable(format(self.python_value(self.stack.pop()))))

    @handles("FORMAT_WITH_SPEC")
    def _format_with_spec(self, ins: Instruction) -> None:
        spec = self.python_value(self.stack.pop())
        value = self.python_value(self.stack.pop())
        if ins.argval:
            value = _CONVERSIONS[ins.argval](value)
        self.stack.append(ConstantVariable(format(value, spec)))

    @handles("BUILD_STRING")
    def _build_string(self, ins: Instruction) -> None:
        self.stack.append(ConstantVariable("".join(self.python_value(v) for v in self.pop(ins.arg))))
