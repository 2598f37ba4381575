"""The normalised instruction model: one vocabulary of opcodes for CPython 3.11, 3.12 and 3.13.

`decode` turns a code object into a `NormalisedCode`; the opcode executor simulates its
`instructions`; `encode` turns one back into a code object for the running interpreter. The
table in docs/sot-internals.md ("Bytecode normalisation") lists what each version emits for
every normalised opname.
"""
from __future__ import annotations

import dis
from dataclasses import dataclass, field, replace
from types import CodeType
from typing import Any

# Operator vocabularies: the index is the opcode argument, stable from 3.11 to 3.13.
BINARY_OPERATORS: tuple[str, ...] = (
    "+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^",
    "+=", "&=", "//=", "<<=", "@=", "*=", "%=", "|=", "**=", ">>=", "-=", "/=", "^=",
)
COMPARE_OPERATORS: tuple[str, ...] = ("<", "<=", "==", "!=", ">", ">=")
INTRINSICS_1: tuple[str, ...] = (
    "INTRINSIC_1_INVALID", "INTRINSIC_PRINT", "INTRINSIC_IMPORT_STAR",
    "INTRINSIC_STOPITERATION_ERROR", "INTRINSIC_ASYNC_GEN_WRAP", "INTRINSIC_UNARY_POSITIVE",
    "INTRINSIC_LIST_TO_TUPLE", "INTRINSIC_TYPEVAR", "INTRINSIC_PARAMSPEC",
    "INTRINSIC_TYPEVARTUPLE", "INTRINSIC_SUBSCRIPT_GENERIC", "INTRINSIC_TYPEALIAS",
    "INTRINSIC_SET_TYPEPARAM_DEFAULT",
)
INTRINSICS_2: tuple[str, ...] = (
    "INTRINSIC_2_INVALID", "INTRINSIC_PREP_RERAISE_STAR", "INTRINSIC_TYPEVAR_WITH_BOUND",
    "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS", "INTRINSIC_SET_FUNCTION_TYPE_PARAMS",
    "INTRINSIC_SET_TYPEPARAM_DEFAULT",
)
CONVERSIONS: tuple[str | None, ...] = (None, "str", "repr", "ascii")
MAKE_FUNCTION_FLAGS: tuple[str, ...] = ("defaults", "kwdefaults", "annotations", "closure")

CONDITIONAL_JUMPS: frozenset[str] = frozenset(
    {"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
JUMPS: frozenset[str] = CONDITIONAL_JUMPS | {"JUMP", "FOR_ITER", "SEND"}

# Every opname a decoded instruction can carry; an opcode handler table covers exactly these.
OPNAMES: frozenset[str] = JUMPS | {
    # loads, stores, deletes
    "LOAD_CONST", "LOAD_FAST", "LOAD_FAST_AND_CLEAR", "STORE_FAST", "DELETE_FAST",
    "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "MAKE_CELL", "COPY_FREE_VARS",
    "LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME",
    "LOAD_LOCALS", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS",
    "LOAD_ATTR", "LOAD_SUPER_ATTR", "STORE_ATTR", "DELETE_ATTR",
    "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS", "SETUP_ANNOTATIONS",
    "IMPORT_NAME", "IMPORT_FROM",
    # stack
    "NOP", "POP_TOP", "PUSH_NULL", "COPY", "SWAP",
    # operators
    "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "TO_BOOL", "BINARY_OP", "COMPARE_OP",
    "IS_OP", "CONTAINS_OP", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR",
    "BINARY_SLICE", "STORE_SLICE", "CALL_INTRINSIC_1", "CALL_INTRINSIC_2",
    # containers and strings
    "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
    "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND",
    "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "UNPACK_SEQUENCE", "UNPACK_EX",
    "CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC",
    # calls and functions
    "CALL", "CALL_FUNCTION_EX", "MAKE_FUNCTION", "RETURN_VALUE",
    # iteration, exceptions, with, pattern matching
    "GET_ITER", "GET_LEN", "RAISE_VARARGS", "RERAISE", "PUSH_EXC_INFO", "POP_EXCEPT",
    "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "BEFORE_WITH", "WITH_EXCEPT_START",
    "MATCH_CLASS", "MATCH_KEYS", "MATCH_MAPPING", "MATCH_SEQUENCE",
    # frames, generators, coroutines (passed through with CPython's semantics)
    "RESUME", "RETURN_GENERATOR", "YIELD_VALUE", "END_SEND", "CLEANUP_THROW",
    "GET_YIELD_FROM_ITER", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "END_ASYNC_FOR",
    "BEFORE_ASYNC_WITH",
}


class DecodeError(ValueError):
    """A code object uses bytecode outside the normalised model (reported as a fallback reason)."""


class EncodeError(ValueError):
    """A normalised instruction has no encoding on the running interpreter."""


@dataclass(eq=False)
class Instruction:
    """One normalised instruction; identity matters, because jumps and exception entries point at instructions."""

    opname: str
    # The integer operand of ops whose operand is a number (counts, flags, operator indices,
    # CALL's argument count); None where the operand is a name, a constant or a jump target.
    arg: int | None = None
    # The resolved operand: a name, a constant, an operator symbol, an intrinsic's name,
    # a conversion's name; equals `arg` for plain counts.
    argval: Any = None
    # The instruction a jump goes to (FOR_ITER: where it goes once the iterator is exhausted).
    target: Instruction | None = None
    lineno: int | None = None
    starts_line: bool = False
    positions: dis.Positions | None = None
    offset: int | None = None  # offset in the decoded code object; None when synthesised
    kwnames: tuple[str, ...] = ()  # CALL: names of the trailing keyword arguments
    push_null: bool = False  # LOAD_GLOBAL: also pushes a NULL call slot
    is_method: bool = False  # LOAD_ATTR / LOAD_SUPER_ATTR: pushes [callable, self or NULL]
    two_arg_super: bool = False  # LOAD_SUPER_ATTR: source said super(cls, obj), not super()
    checked: bool = True  # LOAD_FAST: may find the local unbound (LOAD_FAST_CHECK on 3.12+)
    no_interrupt: bool = False  # JUMP: must not check for signals (3.x JUMP_BACKWARD_NO_INTERRUPT)

    def __repr__(self) -> str:
        return f"<Instruction {self.describe()}>"

    def describe(self) -> str:
        """One readable line: opname, operand and normalised flags (listings add the jump target)."""
        parts = [self.opname]
        if self.opname == "LOAD_CONST":
            parts.append(_short(self.argval))
        elif self.argval is not None and self.target is None:
            parts.append(str(self.argval))
        parts += [name for name in ("push_null", "is_method", "two_arg_super", "no_interrupt")
                  if getattr(self, name)]
        if self.kwnames:
            parts.append(f"kwnames={self.kwnames}")
        return " ".join(parts)


@dataclass(eq=False)
class ExceptionEntry:
    """A protected range [start, end] (inclusive) whose exceptions unwind to `depth` and go to `target`."""

    start: Instruction
    end: Instruction
    target: Instruction
    depth: int
    lasti: bool  # push the offset of the raising instruction before the exception


@dataclass(frozen=True)
class CodeMeta:
    """What a code object carries besides its instructions; `encode` keeps all of it."""

    name: str
    qualname: str
    filename: str
    firstlineno: int
    argcount: int
    posonlyargcount: int
    kwonlyargcount: int
    flags: int
    varnames: tuple[str, ...]
    cellvars: tuple[str, ...]
    freevars: tuple[str, ...]
    docstring: str | None  # co_consts[0] when it is a str (what functions use as __doc__)

    @classmethod
    def from_code(cls, code: CodeType) -> CodeMeta:
        """The metadata of `code`."""
        first = code.co_consts[0] if code.co_consts else None
        return cls(code.co_name, code.co_qualname, code.co_filename, code.co_firstlineno,
                   code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                   code.co_flags, code.co_varnames, code.co_cellvars, code.co_freevars,
                   first if isinstance(first, str) else None)

    def replace(self, **changes: Any) -> CodeMeta:
        """A copy with some fields changed (codegen renames resume functions this way)."""
        return replace(self, **changes)


@dataclass(eq=False)
class NormalisedCode:
    """A decoded code object: instructions, exception table (by instruction) and metadata."""

    instructions: tuple[Instruction, ...]
    exception_table: tuple[ExceptionEntry, ...]
    meta: CodeMeta
    _index: dict[int, int] = field(default_factory=dict, init=False, repr=False)

    def index(self, instr: Instruction) -> int:
        """Position of `instr` in `instructions` (jump targets become program counters)."""
        if not self._index:
            self._index.update((id(ins), n) for n, ins in enumerate(self.instructions))
        return self._index[id(instr)]

    def handler(self, instr: Instruction) -> ExceptionEntry | None:
        """The exception entry protecting `instr`, if any."""
        n = self.index(instr)
        for entry in self.exception_table:
            if self.index(entry.start) <= n <= self.index(entry.end):
                return entry
        return None

    def opnames(self) -> set[str]:
        """The set of opnames used."""
        return {ins.opname for ins in self.instructions}

    def listing(self) -> str:
        """A readable disassembly of the normalised instructions and exception table."""
        targets = {id(i.target) for i in self.instructions if i.target is not None}
        targets |= {id(e.target) for e in self.exception_table}
        lines = []
        for n, ins in enumerate(self.instructions):
            line = f"{ins.lineno:>5}" if ins.starts_line and ins.lineno is not None else "     "
            mark = ">>" if id(ins) in targets else "  "
            jump = f" (to #{self.index(ins.target)})" if ins.target is not None else ""
            lines.append(f"{line} {mark} #{n:<4} {ins.describe()}{jump}")
        for e in self.exception_table:
            lines.append(f"  except #{self.index(e.start)}..#{self.index(e.end)} -> "
                         f"#{self.index(e.target)} depth {e.depth}{' lasti' if e.lasti else ''}")
        return "\n".join(lines)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
