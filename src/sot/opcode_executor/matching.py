"""`match` statements: the MATCH_* opcodes and GET_LEN, decided at translation time.

Whether a subject is a mapping or a sequence is a property of its type (the `Py_TPFLAGS_MAPPING` /
`Py_TPFLAGS_SEQUENCE` flags CPython tests), which the subject's guard pins; a class pattern is an
`isinstance` plus attribute reads, simulated as the executor reads attributes (guarded), so each
case the translation takes is the one eager code takes for every call the cache serves.
"""
from __future__ import annotations

from typing import Any

from sot.pyversion import Instruction

from .dispatch import handles
from .variables import (ConstantVariable, DictVariable, InstanceVariable, ObjectVariable, SetVariable, TupleVariable,
                        Variable, python_type)
from .wording import shown

__all__ = ["MatchMixin"]

_TPFLAGS_SEQUENCE = 1 << 5
_TPFLAGS_MAPPING = 1 << 6
# the builtin classes whose one positional sub-pattern matches the subject itself (`case int(n):`)
_SELF_MATCHING = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


class MatchMixin:
    """MATCH_MAPPING, MATCH_SEQUENCE, MATCH_KEYS, MATCH_CLASS and GET_LEN (part of OpcodeExecutor)."""

    def _subject_type(self, subject: Variable) -> type:
        kind = python_type(subject)
        if kind is None:
            self.unsupported(f"matches {shown(subject)}, whose type sot does not know")
        return kind

    @handles("MATCH_MAPPING", "MATCH_SEQUENCE")
    def _match_kind(self, ins: Instruction) -> None:
        flag = _TPFLAGS_MAPPING if ins.opname == "MATCH_MAPPING" else _TPFLAGS_SEQUENCE
        self.stack.append(ConstantVariable(bool(self._subject_type(self.stack[-1]).__flags__ & flag)))

    @handles("GET_LEN")
    def _get_len(self, ins: Instruction) -> None:
        subject = self.stack[-1]
        if isinstance(subject, (TupleVariable, DictVariable, SetVariable)):
            self.stack.append(ConstantVariable(len(subject.items)))
        else:
            self.stack.append(ConstantVariable(len(self.python_value(subject))))

    @handles("MATCH_KEYS")
    def _match_keys(self, ins: Instruction) -> None:
        keys, subject = self.python_value(self.stack[-1]), self.stack[-2]
        if not isinstance(subject, DictVariable):
            self.unsupported(f"matches a mapping pattern on {shown(subject)}, which sot cannot translate yet")
        found = [subject.items[k] for k in keys if k in subject.items]
        self.stack.append(TupleVariable(found) if len(found) == len(keys) else ConstantVariable(None))

    @handles("MATCH_CLASS")
    def _match_class(self, ins: Instruction) -> None:
        subject, cls, names = self.pop(3)
        if not (isinstance(cls, ObjectVariable) and isinstance(cls.value, type)):
            self.unsupported(f"matches a class pattern with {shown(cls)}, which sot cannot translate yet")
        if not issubclass(self._subject_type(subject), cls.value) or isinstance(subject, InstanceVariable) and \
                not isinstance(subject.value, cls.value):  # (an instance's __class__ may differ from its type)
            self.stack.append(ConstantVariable(None))
            return
        attributes: list[Any] = list(self.python_value(names))
        positional: list[Variable] = []
        if ins.arg:
            match_args = getattr(cls.value, "__match_args__", None)
            if match_args is None and cls.value in _SELF_MATCHING and ins.arg == 1:
                positional = [subject]
            elif not isinstance(match_args, tuple) or len(match_args) < ins.arg:
                self.unsupported(f"matches more positional sub-patterns than {cls.value.__name__}() accepts "
                                 "(eager code raises)")
            else:
                attributes = [*match_args[:ins.arg], *attributes]
        values = positional
        for name in attributes:
            if not self.has_attr(subject, name):
                self.stack.append(ConstantVariable(None))
                return
            values.append(self.load_attr(subject, name))
        self.stack.append(TupleVariable(values))
