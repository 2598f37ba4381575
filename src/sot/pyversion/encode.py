"""encode(normalised, template) -> code object for the running CPython, built with the `bytecode` library.

Each normalised instruction expands to what the running version spells (CALL -> PRECALL+CALL
on 3.11, KW_NAMES on 3.11/3.12, CALL_KW on 3.13; LOAD_ATTR(is_method) -> LOAD_METHOD on 3.11;
a conditional jump -> its FORWARD/BACKWARD form on 3.11, TO_BOOL + POP_JUMP_IF_* on 3.13, ...)
and a few adjacent ones fuse back into what CPython's compiler emits (RETURN_CONST,
LOAD_FAST_LOAD_FAST, a COMPARE_OP with 3.13's bool-cast bit). The `bytecode` library then lays
out jumps, inline caches, the exception table, the line table and the stack size.
"""
from __future__ import annotations

import dis
from types import CodeType
from typing import Any, Callable

from bytecode import (BinaryOp, Bytecode, CellVar, Compare, FreeVar, Instr, Label, TryBegin,
                      TryEnd)
from bytecode.instr import UNSET, InstrLocation, Intrinsic1Op, Intrinsic2Op, FormatValue

from .instruction import (CodeMeta, EncodeError, ExceptionEntry, Instruction,
                          NormalisedCode)
from .versions import PY311, PY313

_HAS_ARG = set(dis.hasarg) if hasattr(dis, "hasarg") else set(range(dis.HAVE_ARGUMENT, 256))
_TRUTH_CONSUMERS = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "UNARY_NOT"})
# Ops that leave an exact bool on top, so 3.13 needs no TO_BOOL before a jump on it.
_BOOL_PRODUCERS = frozenset({"IS_OP", "CONTAINS_OP", "UNARY_NOT", "TO_BOOL", "CHECK_EXC_MATCH",
                             "MATCH_MAPPING", "MATCH_SEQUENCE"})
_INVERSE = {"TRUE": "FALSE", "FALSE": "TRUE", "NONE": "NOT_NONE", "NOT_NONE": "NONE"}
_OLD_INTRINSICS = {"INTRINSIC_PRINT": "PRINT_EXPR", "INTRINSIC_IMPORT_STAR": "IMPORT_STAR",
                   "INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
                   "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE",
                   "INTRINSIC_ASYNC_GEN_WRAP": "ASYNC_GEN_WRAP",
                   "INTRINSIC_PREP_RERAISE_STAR": "PREP_RERAISE_STAR"}
_SUPERINSTRUCTIONS = {("LOAD_FAST", "LOAD_FAST"), ("STORE_FAST", "LOAD_FAST"), ("STORE_FAST", "STORE_FAST")}
_SET_FUNCTION_ATTRIBUTE_ORDER = (8, 4, 2, 1)  # closure, annotations, kwdefaults, defaults


def encode(normalised: NormalisedCode, template: CodeType | None = None) -> CodeType:
    """A code object running `normalised` on this interpreter; metadata from `template` when given."""
    meta = CodeMeta.from_code(template) if template is not None else normalised.meta
    return _Encoder(normalised, meta).run()


Expand = Callable[["_Encoder", int, Instruction], int]
_EXPANDERS: dict[str, Expand] = {}


def _expand(*opnames: str) -> Callable[[Expand], Expand]:
    def register(fn: Expand) -> Expand:
        _EXPANDERS.update(dict.fromkeys(opnames, fn))
        return fn
    return register


class _Encoder:
    """One encoding: walks the normalised instructions and emits `bytecode` items."""

    def __init__(self, normalised: NormalisedCode, meta: CodeMeta) -> None:
        self.ins = normalised.instructions
        self.meta = meta
        self.pos = {id(ins): n for n, ins in enumerate(self.ins)}
        targets = [ins.target for ins in self.ins if ins.target is not None]
        targets += [e.target for e in normalised.exception_table]
        self.labels = {id(t): Label() for t in targets}
        self.loop_exits = {id(ins.target): Label() for ins in self.ins
                           if ins.opname == "FOR_ITER" and not PY311}
        self.starts: dict[int, list[ExceptionEntry]] = {}
        self.ends: dict[int, list[ExceptionEntry]] = {}
        for entry in normalised.exception_table:
            self.starts.setdefault(id(entry.start), []).append(entry)
            self.ends.setdefault(id(entry.end), []).append(entry)
        self.try_begins: dict[int, TryBegin] = {}
        self.items: list[Any] = []
        self.location: InstrLocation | None = None
        self.varnames = {name: n for n, name in enumerate(meta.varnames)}

    def run(self) -> CodeType:
        """Emit every instruction with its labels and exception ranges, then assemble."""
        n = 0
        while n < len(self.ins):
            ins = self.ins[n]
            if id(ins) in self.labels:
                self.items.append(self.labels[id(ins)])
            for entry in self.starts.get(id(ins), ()):
                self.try_begins[id(entry)] = TryBegin(self.labels[id(entry.target)], entry.lasti,
                                                      entry.depth)
                self.items.append(self.try_begins[id(entry)])
            self.location = _location(ins)
            last = n + _EXPANDERS.get(ins.opname, _default)(self, n, ins) - 1
            if last + 1 < len(self.ins) and id(self.ins[last + 1]) in self.loop_exits:
                self._loop_exit(last + 1)  # inside the ranges protecting the loop's last instruction
            for entry in self.ends.get(id(self.ins[last]), ()):
                self.items.append(TryEnd(self.try_begins[id(entry)]))
            n = last + 1
        return self._assemble()

    def _assemble(self) -> CodeType:
        """The `bytecode` library lays out the code object; metadata comes from `meta`."""
        meta = self.meta
        bc = Bytecode(self.items)
        bc.argcount, bc.posonlyargcount = meta.argcount, meta.posonlyargcount
        bc.kwonlyargcount, bc.flags = meta.kwonlyargcount, meta.flags
        bc.first_lineno, bc.filename = meta.firstlineno, meta.filename
        bc.name, bc.qualname, bc.docstring = meta.name, meta.qualname, meta.docstring
        bc.cellvars, bc.freevars = list(meta.cellvars), list(meta.freevars)
        bc.argnames = list(meta.varnames)  # pins co_varnames to the original order
        # The entries' depths are kept: the library's own guess is wrong for nested handlers.
        return bc.to_code(compute_exception_stack_depths=False)

    # --- emitting

    def emit(self, opname: str, arg: Any = UNSET) -> None:
        """Append one instruction of the running version."""
        if opname not in dis.opmap:
            raise EncodeError(f"{opname} does not exist on this Python")
        self.items.append(Instr(opname, arg, location=self.location))

    def label(self, target: Instruction) -> Label:
        """The label placed before `target`'s expansion."""
        return self.labels[id(target)]

    def landing(self, n: int) -> bool:
        """Whether control can arrive at instruction n other than by falling through."""
        return id(self.ins[n]) in self.labels or id(self.ins[n]) in self.loop_exits

    def can_fuse(self, n: int, count: int) -> bool:
        """Whether instructions n..n+count-1 may become one: nothing jumps or a range begins or ends inside."""
        if n + count > len(self.ins):
            return False
        inner = range(n + 1, n + count)
        return (all(not self.landing(k) and id(self.ins[k]) not in self.starts for k in inner)
                and all(id(self.ins[k]) not in self.ends for k in range(n, n + count - 1)))

    def next_is(self, n: int, *opnames: str) -> bool:
        """Whether instruction n+1 has one of `opnames` and may fuse with instruction n."""
        return self.can_fuse(n, 2) and self.ins[n + 1].opname in opnames

    def bool_on_top(self, n: int) -> bool:
        """Whether instruction n can only be reached with an exact bool on top (3.13 TO_BOOL rule)."""
        if n == 0 or self.landing(n):
            return False
        prev = self.ins[n - 1]
        return prev.opname in _BOOL_PRODUCERS or (
            prev.opname == "COMPARE_OP" and self.next_is(n - 1, *_TRUTH_CONSUMERS))

    def backward(self, n: int, target: Instruction) -> bool:
        """Whether a jump at n to `target` goes backward (3.11 spells direction in the opname)."""
        return self.pos[id(target)] <= n

    def local(self, name: str) -> str | CellVar | FreeVar:
        """A fast-locals slot by name: a plain local, or the slot holding a cell / free variable."""
        if name in self.varnames or (name not in self.meta.cellvars and name not in self.meta.freevars):
            return name
        return self.cell(name)

    def cell(self, name: str) -> CellVar | FreeVar:
        """The cell or free variable called `name`."""
        return CellVar(name) if name in self.meta.cellvars else FreeVar(name)

    def _loop_exit(self, n: int) -> None:
        # 3.12/3.13: an exhausted FOR_ITER jumps to its target plus END_FOR (and 3.13's POP_TOP),
        # so these sit right before the normalised target, reached by no other path.
        prev = self.ins[n - 1] if n else None
        if prev is not None and prev.opname not in ("JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
            self.emit("JUMP_FORWARD", self.label(self.ins[n]))
        self.items.append(self.loop_exits[id(self.ins[n])])
        self.emit("END_FOR")
        if PY313:
            self.emit("POP_TOP")


def _location(ins: Instruction) -> InstrLocation | None:
    p = ins.positions
    if p is None:
        return None if ins.lineno is None else InstrLocation(ins.lineno, None, None, None)
    try:
        return InstrLocation(p.lineno, p.end_lineno, p.col_offset, p.end_col_offset)
    except ValueError:
        return InstrLocation(p.lineno, None, None, None)


def _default(e: _Encoder, n: int, ins: Instruction) -> int:
    opcode = dis.opmap.get(ins.opname)
    if opcode is None:
        raise EncodeError(f"{ins.opname} does not exist on this Python")
    if ins.target is not None:
        arg: Any = e.label(ins.target)
    elif opcode in dis.hasconst or opcode in dis.hasname:
        arg = ins.argval
    elif opcode in dis.haslocal:
        arg = e.local(ins.argval)
    elif opcode in dis.hasfree:
        arg = e.cell(ins.argval)
    elif opcode in _HAS_ARG:
        arg = ins.arg
    else:
        arg = UNSET
    e.emit(ins.opname, arg)
    return 1


@_expand("CALL")
def _call(e: _Encoder, n: int, ins: Instruction) -> int:
    kwnames = tuple(ins.kwnames)
    if PY313:
        if kwnames:
            e.emit("LOAD_CONST", kwnames)
        e.emit("CALL_KW" if kwnames else "CALL", ins.arg)
        return 1
    if kwnames:
        e.emit("KW_NAMES", kwnames)
    if PY311:
        e.emit("PRECALL", ins.arg)
    e.emit("CALL", ins.arg)
    return 1


@_expand("LOAD_ATTR")
def _load_attr(e: _Encoder, n: int, ins: Instruction) -> int:
    if PY311:
        e.emit("LOAD_METHOD" if ins.is_method else "LOAD_ATTR", ins.argval)
    else:
        e.emit("LOAD_ATTR", (ins.is_method, ins.argval))
    return 1


@_expand("LOAD_GLOBAL")
def _load_global(e: _Encoder, n: int, ins: Instruction) -> int:
    e.emit("LOAD_GLOBAL", (ins.push_null, ins.argval))
    return 1


@_expand("LOAD_SUPER_ATTR")
def _load_super_attr(e: _Encoder, n: int, ins: Instruction) -> int:
    if PY311:
        raise EncodeError("LOAD_SUPER_ATTR does not exist on Python 3.11")
    e.emit("LOAD_SUPER_ATTR", (ins.is_method, ins.two_arg_super, ins.argval))
    return 1


@_expand("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
def _conditional_jump(e: _Encoder, n: int, ins: Instruction) -> int:
    condition = ins.opname.removeprefix("POP_JUMP_IF_")
    backward = e.backward(n, ins.target)
    if PY311:
        e.emit(f"POP_JUMP_{'BACKWARD' if backward else 'FORWARD'}_IF_{condition}", e.label(ins.target))
        return 1
    if PY313 and condition in ("TRUE", "FALSE") and not e.bool_on_top(n):
        e.emit("TO_BOOL")
    if not backward:
        e.emit(ins.opname, e.label(ins.target))
        return 1
    skip = Label()  # 3.12+ conditional jumps only go forward
    e.emit(f"POP_JUMP_IF_{_INVERSE[condition]}", skip)
    e.emit("JUMP_BACKWARD", e.label(ins.target))
    e.items.append(skip)
    return 1


@_expand("JUMP")
def _jump(e: _Encoder, n: int, ins: Instruction) -> int:
    if not e.backward(n, ins.target):
        e.emit("JUMP_FORWARD", e.label(ins.target))
    else:
        e.emit("JUMP_BACKWARD_NO_INTERRUPT" if ins.no_interrupt else "JUMP_BACKWARD",
               e.label(ins.target))
    return 1


@_expand("FOR_ITER")
def _for_iter(e: _Encoder, n: int, ins: Instruction) -> int:
    if e.backward(n, ins.target):
        raise EncodeError("FOR_ITER must exit forward")
    e.emit("FOR_ITER", e.label(ins.target) if PY311 else e.loop_exits[id(ins.target)])
    return 1


@_expand("COMPARE_OP")
def _compare_op(e: _Encoder, n: int, ins: Instruction) -> int:
    cast = PY313 and e.next_is(n, *_TRUTH_CONSUMERS)
    e.emit("COMPARE_OP", Compare(ins.arg + (16 if cast else 0)))
    return 1


@_expand("TO_BOOL")
def _to_bool(e: _Encoder, n: int, ins: Instruction) -> int:
    if PY313:
        e.emit("TO_BOOL")
    else:
        e.emit("UNARY_NOT")
        e.emit("UNARY_NOT")
    return 1


@_expand("UNARY_NOT")
def _unary_not(e: _Encoder, n: int, ins: Instruction) -> int:
    if PY313 and not e.bool_on_top(n):
        e.emit("TO_BOOL")
    e.emit("UNARY_NOT")
    return 1


@_expand("BINARY_OP")
def _binary_op(e: _Encoder, n: int, ins: Instruction) -> int:
    e.emit("BINARY_OP", BinaryOp(ins.arg))
    return 1


@_expand("LOAD_CONST")
def _load_const(e: _Encoder, n: int, ins: Instruction) -> int:
    if not PY311 and e.next_is(n, "RETURN_VALUE") and e.ins[n + 1].positions == ins.positions:
        e.emit("RETURN_CONST", ins.argval)
        return 2
    e.emit("LOAD_CONST", ins.argval)
    return 1


def _fusable_local(e: _Encoder, ins: Instruction) -> bool:
    """Whether a 3.13 superinstruction may name this local (index below 16, plain slot)."""
    if ins.opname == "LOAD_FAST" and ins.checked:
        return False
    index = e.varnames.get(ins.argval)
    return index is not None and index < 16 and isinstance(e.local(ins.argval), str)


def _superinstruction(e: _Encoder, n: int, ins: Instruction) -> int:
    """Emit a 3.13 LOAD_FAST_LOAD_FAST-style pair for instructions n, n+1 where the compiler would."""
    nxt = e.ins[n + 1] if n + 1 < len(e.ins) else None
    if (not PY313 or nxt is None or (ins.opname, nxt.opname) not in _SUPERINSTRUCTIONS
            or not e.can_fuse(n, 2) or not (_fusable_local(e, ins) and _fusable_local(e, nxt))
            or ins.positions != nxt.positions):
        return 0
    e.emit(f"{ins.opname}_{nxt.opname}", (ins.argval, nxt.argval))
    return 2


@_expand("LOAD_FAST")
def _load_fast(e: _Encoder, n: int, ins: Instruction) -> int:
    fused = _superinstruction(e, n, ins)
    if fused:
        return fused
    e.emit("LOAD_FAST_CHECK" if ins.checked and not PY311 else "LOAD_FAST", e.local(ins.argval))
    return 1


@_expand("STORE_FAST")
def _store_fast(e: _Encoder, n: int, ins: Instruction) -> int:
    return _superinstruction(e, n, ins) or _default(e, n, ins)


@_expand("LOAD_CLOSURE")
def _load_closure(e: _Encoder, n: int, ins: Instruction) -> int:
    e.emit("LOAD_FAST" if PY313 else "LOAD_CLOSURE", e.cell(ins.argval))  # 3.13 reads the cell slot
    return 1


@_expand("CONVERT_VALUE")
def _convert_value(e: _Encoder, n: int, ins: Instruction) -> int:
    if PY313:
        e.emit("CONVERT_VALUE", FormatValue(ins.arg))
        return 1
    # Before 3.13 a conversion only exists inside FORMAT_VALUE; alone it formats with "" as well.
    e.emit("FORMAT_VALUE", ins.arg)
    return 2 if e.next_is(n, "FORMAT_SIMPLE") else 1


@_expand("FORMAT_SIMPLE")
def _format_simple(e: _Encoder, n: int, ins: Instruction) -> int:
    if PY313:
        e.emit("FORMAT_SIMPLE")
    else:
        e.emit("FORMAT_VALUE", 0)
    return 1


@_expand("FORMAT_WITH_SPEC")
def _format_with_spec(e: _Encoder, n: int, ins: Instruction) -> int:
    if not PY313:
        e.emit("FORMAT_VALUE", ins.arg | 4)
        return 1
    if ins.arg:  # 3.12 converted after evaluating the spec; keep that order
        e.emit("SWAP", 2)
        e.emit("CONVERT_VALUE", FormatValue(ins.arg))
        e.emit("SWAP", 2)
    e.emit("FORMAT_WITH_SPEC")
    return 1


@_expand("MAKE_FUNCTION")
def _make_function(e: _Encoder, n: int, ins: Instruction) -> int:
    if not PY313:
        e.emit("MAKE_FUNCTION", ins.arg)
        return 1
    e.emit("MAKE_FUNCTION")
    for flag in _SET_FUNCTION_ATTRIBUTE_ORDER:
        if ins.arg & flag:
            e.emit("SET_FUNCTION_ATTRIBUTE", flag)
    return 1


@_expand("CALL_INTRINSIC_1", "CALL_INTRINSIC_2")
def _intrinsic(e: _Encoder, n: int, ins: Instruction) -> int:
    if not PY311:
        kind = Intrinsic1Op if ins.opname == "CALL_INTRINSIC_1" else Intrinsic2Op
        e.emit(ins.opname, kind(ins.arg))
        return 1
    if ins.argval not in _OLD_INTRINSICS:
        raise EncodeError(f"{ins.argval} has no Python 3.11 opcode")
    e.emit(_OLD_INTRINSICS[ins.argval])
    return 1


@_expand("BINARY_SLICE", "STORE_SLICE")
def _slice(e: _Encoder, n: int, ins: Instruction) -> int:
    if not PY311:
        e.emit(ins.opname)
        return 1
    e.emit("BUILD_SLICE", 2)
    e.emit("BINARY_SUBSCR" if ins.opname == "BINARY_SLICE" else "STORE_SUBSCR")
    return 1


@_expand("LOAD_LOCALS")
def _load_locals(e: _Encoder, n: int, ins: Instruction) -> int:
    if not PY311:
        e.emit("LOAD_LOCALS")
        return 1
    if not e.next_is(n, "LOAD_FROM_DICT_OR_DEREF"):
        raise EncodeError("LOAD_LOCALS does not exist on Python 3.11")
    e.emit("LOAD_CLASSDEREF", e.cell(e.ins[n + 1].argval))
    return 2

